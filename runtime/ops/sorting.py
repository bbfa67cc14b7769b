"""Sorting and selection: sort, argsort, topk, kthvalue, median, nanmedian, mode,
unique and unique_consecutive (PyTorch's kernels, over numpy).

Every kernel here orders values with one stable sort (`sort_along`), as
PyTorch's CPU sort is: ties keep their input order, ascending or descending
alike, and NaN counts as larger than any number (last ascending, first
descending; among NaNs, input order). A descending sort is the ascending
stable sort of the reversed input, reversed back, so equal values are not
reversed. topk, kthvalue and the medians then read positions of that order, so
where PyTorch leaves the index of a tie to its partial sorts, these give the
index the stable order gives (found by a partial sort where one suffices).

The differentiable ones select values from their input; their gradient goes back
to the selected positions (`value_selecting_reduction_backward`, in
reductions.py, PyTorch's helper of that name).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.errors import scalar_type_name
from yamlgrad.runtime.ops.common import _dim
from yamlgrad.runtime.ops.namespace import take_along_axis
from yamlgrad.runtime.ops.reductions import _foreign_namespace, _no_identity

KERNELS = (
    "sort_along",
    "topk_along",
    "kthvalue_along",
    "median_all",
    "median_along",
    "mode_along",
    "unique_sorted",
    "unique_dim_sorted",
    "unique_consecutive_along",
    "searchsorted_kernel",
    "bucketize_kernel",
)
BACKWARD_HELPERS: tuple[str, ...] = ()
COMPOSITE_HELPERS: tuple[str, ...] = ()


def _argsort(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable order along `axis` (NaN largest); descending keeps ties in order."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    reversed_order = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return x.shape[axis] - 1 - np.flip(reversed_order, axis)


def _portable_order(xp: Any, x: Any, dim: int, descending: bool) -> Any:
    """The stable order along `dim` in the standard's names (NaN largest, ties
    in input order either way, as `_argsort`). On Dask, array-api-compat's
    argsort makes `dim` one chunk (a rechunk, lazy) and sorts block by block."""
    order = xp.argsort(x, axis=dim, descending=descending, stable=True)
    return xp.astype(order, xp.int64)


def _scalar_selection(xp: Any, x: Any) -> tuple[Any, Any] | None:
    """A selection's (values, indices) of a 0-d input: itself and index 0."""
    if x.ndim:
        return None
    if xp is None:
        return x.copy(), np.zeros((), dtype=np.int64)
    return x, xp.zeros((), dtype=xp.int64)


def sort_along(x: Any, dim: int, descending: bool) -> tuple[Any, Any]:
    """(values, indices) of `x` sorted along `dim`, stably (sort, sort.stable),
    laid out as PyTorch's: like a permuted (dense) input, else row-major."""
    xp = _foreign_namespace(x)
    x = np.asarray(x) if xp is None else x
    dim = _dim(dim, x.ndim, "sort")
    scalar = _scalar_selection(xp, x)
    if scalar is not None:
        return scalar
    if xp is not None:
        order = _portable_order(xp, x, dim, descending)
        return take_along_axis(x, order, dim), order
    order = _argsort(x, dim, descending)
    values = np.empty_like(x)  # order="K": a transposed input's strides
    indices = np.empty_like(x, dtype=np.int64)
    values[...] = np.take_along_axis(x, order, dim)
    indices[...] = order
    return values, indices


def topk_along(
    x: Any, k: int, dim: int, largest: bool, sorted: bool
) -> tuple[Any, Any]:
    """The `k` largest (or smallest) entries along `dim` and their indices, in
    order (also for sorted=False, which leaves the order to the kernel)."""
    xp = _foreign_namespace(x)
    x = np.asarray(x) if xp is None else x
    dim = _dim(dim, x.ndim, "topk")
    size = x.shape[dim] if x.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    scalar = _scalar_selection(xp, x)
    if scalar is not None:
        return scalar
    if xp is not None:  # the first k of the stable order
        first = (slice(None),) * dim + (slice(0, k), ...)
        indices = _portable_order(xp, x, dim, largest)[first]
        return take_along_axis(x, indices, dim), indices
    ranked = _top_few(np.moveaxis(x, dim, -1), k, largest) if k < size else None
    if ranked is not None:
        indices = np.moveaxis(ranked, -1, dim)
    elif 0 < k < size // 2:  # a partial sort, then a sort of the k chosen
        moved = np.moveaxis(x, dim, -1)
        chosen = _top_k(moved, k, largest)
        order = _argsort(np.take_along_axis(moved, chosen, -1), -1, largest)
        indices = np.moveaxis(np.take_along_axis(chosen, order, -1), -1, dim)
    else:
        indices = np.take(_argsort(x, dim, largest), np.arange(k), axis=dim)
    return np.take_along_axis(x, indices, dim), indices.astype(np.int64)


# Up to this k, k passes of argmax over the last axis (one pass over memory each,
# vectorised) beat numpy's partial sort (argpartition: several passes and an index
# array), as PyTorch's topk does for a small k.
FEW = 8


def _top_few(moved: np.ndarray, k: int, largest: bool) -> np.ndarray | None:
    """The indices of the first `k` entries of the stable order along the last
    axis, in that order, by `k` passes of argmax (argmin) over a copy in which each
    chosen entry is replaced by the extreme no entry passes; None (the caller
    sorts) for a larger k, a non-float input, or a pass that picks that extreme
    (it could pick a chosen entry again) or, smallest first, a NaN (which argmin
    takes for the least)."""
    if not 0 < k <= FEW or moved.dtype.kind != "f" or moved.shape[-1] == 0:
        return None
    extreme = -np.inf if largest else np.inf
    arg = np.argmax if largest else np.argmin
    work = moved.copy()
    ranked = np.empty(moved.shape[:-1] + (k,), dtype=np.intp)
    for i in range(k):
        index = arg(work, axis=-1)[..., None]
        picked = np.take_along_axis(work, index, -1)
        if np.any(picked == extreme) or (not largest and np.isnan(picked).any()):
            return None
        ranked[..., i : i + 1] = index
        np.put_along_axis(work, index, extreme, -1)
    return ranked


def _top_k(moved: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """The indices, in input order, of the first `k` entries of the stable order
    along the last axis, found by a partial sort: every entry beyond the k-th
    entry's value, then as many entries equal to it as fit, the earliest first."""
    n = moved.shape[-1]
    value = np.partition(moved, n - k if largest else k - 1, axis=-1)
    value = value[..., n - k if largest else k - 1, None]
    equal = moved == value
    beyond = moved > value if largest else moved < value
    if moved.dtype.kind == "f":  # NaN is largest, and equal to NaN here
        nan_value, nans = np.isnan(value), np.isnan(moved)
        equal = np.where(nan_value, nans, equal)
        if largest:
            beyond = np.where(nan_value, False, beyond | nans)
        else:
            beyond = np.where(nan_value, ~nans, beyond)
    room = k - np.sum(beyond, -1, keepdims=True)
    take = beyond | (equal & (np.cumsum(equal, -1) <= room))
    return np.argsort(~take, axis=-1, kind="stable")[..., :k]


def _reduced(values: Any, indices: Any, dim: int, keepdim: bool) -> tuple[Any, Any]:
    """A selecting reduction's results: `dim` kept as size 1 when asked, and
    fresh contiguous arrays, as PyTorch's, whatever the input's strides."""
    if keepdim:
        values, indices = np.expand_dims(values, dim), np.expand_dims(indices, dim)
    return np.asarray(values, order="C"), np.asarray(indices, order="C")


def _select(x: np.ndarray, position: Any, dim: int, keepdim: bool) -> tuple[Any, Any]:
    """Entry number `position` (an int, or one per slice) of the stable ascending
    order along `dim`, and its index, without sorting it all: a partial sort
    finds the value (a full one when slices want different positions), and the
    index is that value's occurrence number `position - (entries below it)` in
    input order, which is where the stable order has it."""
    moved = np.moveaxis(x, dim, -1)
    position = np.broadcast_to(np.asarray(position), moved.shape[:-1])[..., None]
    first = int(position.flat[0]) if position.size else 0
    if np.all(position == first):
        ordered = np.partition(moved, first, axis=-1)
    else:
        ordered = np.sort(moved, axis=-1)
    value = np.take_along_axis(ordered, position, -1)
    equal, below = moved == value, np.sum(moved < value, -1, keepdims=True)
    if x.dtype.kind == "f":  # NaN is largest, and equal to NaN here
        nan_value, nans = np.isnan(value), np.isnan(moved)
        equal = np.where(nan_value, nans, equal)
        below = np.where(nan_value, np.sum(~nans, -1, keepdims=True), below)
    index = np.argmax(np.cumsum(equal, -1) > position - below, axis=-1)
    values, indices = value[..., 0], index.astype(np.int64)
    return _reduced(values, indices, dim, keepdim)


def kthvalue_along(x: Any, k: int, dim: int, keepdim: bool) -> tuple[Any, Any]:
    """The k-th smallest entry along `dim` (k counts from 1) and its index."""
    xp = _foreign_namespace(x)
    x = np.asarray(x) if xp is None else x
    dim = _dim(dim, x.ndim, "kthvalue")
    size = x.shape[dim] if x.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(
            f"kthvalue(): selected number k out of range for dimension {dim}"
        )
    scalar = _scalar_selection(xp, x)
    if scalar is not None:
        return scalar
    if xp is not None:
        return _portable_select(xp, x, k - 1, dim, keepdim)
    return _select(x, k - 1, dim, keepdim)


def _portable_select(
    xp: Any, x: Any, position: Any, dim: int, keepdim: bool
) -> tuple[Any, Any]:
    """`_select` in the standard's names: entry number `position` (an int, or
    an int64 array with `dim` of size 1) of the stable order along `dim`, read
    from the full order."""
    order = _portable_order(xp, x, dim, False)
    if isinstance(position, int):
        position = (slice(None),) * dim + (slice(position, position + 1), ...)
        index = order[position]
    else:
        index = take_along_axis(order, position, dim)
    values = take_along_axis(x, index, dim)
    if keepdim:
        return values, index
    return xp.squeeze(values, axis=dim), xp.squeeze(index, axis=dim)


def median_all(x: Any, ignore_nan: bool) -> Any:
    """The lower median of every entry (median(), nanmedian()): NaN if there is
    one (with ignore_nan, if there is nothing else)."""
    if type(x) is not np.ndarray and backend.is_foreign(x):
        return _portable_median(backend.namespace_of(x), x, ignore_nan)
    flat = np.asarray(x).reshape(-1)
    if flat.dtype.kind == "f":
        nans = np.isnan(flat)
        if nans.any():  # a NaN makes the median NaN, unless ignored
            if not ignore_nan:
                return flat[np.argmax(nans)].copy()
            flat = flat[~nans]
    if flat.size == 0:
        return np.array(np.nan, dtype=np.asarray(x).dtype)
    middle = (flat.size - 1) // 2  # a partial sort finds it, as PyTorch's
    return np.partition(flat, middle)[middle].copy()


def _portable_median(xp: Any, x: Any, ignore_nan: bool) -> Any:
    """median_all in the standard's names: the sorted entries (NaN last) read
    at the middle of all of them, or of the numbers among them with
    `ignore_nan` (a position taken lazily, by `take`)."""
    flat = xp.reshape(x, (-1,))
    nan = xp.asarray(float("nan"), dtype=x.dtype)
    if flat.shape[0] == 0:
        return nan
    ordered = xp.sort(flat)
    if not xp.isdtype(x.dtype, "real floating"):
        return ordered[(flat.shape[0] - 1) // 2]
    nans = xp.isnan(flat)
    if not ignore_nan:
        return xp.where(xp.any(nans), nan, ordered[(flat.shape[0] - 1) // 2])
    count = xp.sum(xp.astype(~nans, xp.int64))
    middle = xp.reshape(xp.maximum(count - 1, 0) // 2, (1,))
    return xp.take(ordered, middle)[0]


def median_along(x: Any, dim: int, keepdim: bool, ignore_nan: bool) -> tuple[Any, Any]:
    """The lower median along `dim` and its index (median.dim, nanmedian.dim).

    A slice with a NaN has median NaN at its first NaN; with `ignore_nan` the
    NaNs are left out, and a slice of only NaNs gives its first one."""
    xp = _foreign_namespace(x)
    x = np.asarray(x) if xp is None else x
    op = "nanmedian" if ignore_nan else "median"
    dim = _dim(dim, x.ndim, op)
    _no_identity(op, x, (dim,), True, True)
    scalar = _scalar_selection(xp, x)
    if scalar is not None:
        return scalar
    size = x.shape[dim]
    if xp is not None:
        nans = xp.zeros((), dtype=xp.int64)
        if xp.isdtype(x.dtype, "real floating"):
            nans = xp.sum(xp.astype(xp.isnan(x), xp.int64), axis=dim, keepdims=True)
        if ignore_nan:
            position = xp.maximum(size - nans - 1, 0) // 2
        else:
            position = xp.where(nans > 0, size - nans, (size - 1) // 2)
        kept = x.shape[:dim] + (1,) + x.shape[dim + 1 :]
        position = xp.broadcast_to(position, kept)
        return _portable_select(xp, x, position, dim, keepdim)
    nans = np.isnan(x).sum(axis=dim) if x.dtype.kind == "f" else np.zeros((), int)
    if ignore_nan:
        position = np.maximum(size - nans - 1, 0) // 2
    else:
        position = np.where(nans > 0, size - nans, (size - 1) // 2)
    return _select(x, position, dim, keepdim)


def mode_along(x: Any, dim: int, keepdim: bool) -> tuple[Any, Any]:
    """The most frequent value along `dim` (the smallest of equally frequent
    ones; NaNs count as equal) and the index of its last occurrence."""
    xp = _foreign_namespace(x)
    x = np.asarray(x) if xp is None else x
    dim = _dim(dim, x.ndim, "mode")
    _no_identity("mode", x, (dim,), True, True)
    scalar = _scalar_selection(xp, x)
    if scalar is not None:
        return scalar
    if xp is not None:
        return _portable_mode(xp, x, dim, keepdim)
    moved = np.moveaxis(x, dim, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    ordered = np.sort(rows, axis=-1)  # values only: faster than an argsort
    changes = ordered[:, 1:] != ordered[:, :-1]
    if rows.dtype.kind == "f":
        changes &= ~(np.isnan(ordered[:, 1:]) & np.isnan(ordered[:, :-1]))
    run = np.concatenate([np.zeros((len(rows), 1), int), np.cumsum(changes, 1)], 1)
    flat_run = run + np.arange(len(rows))[:, None] * rows.shape[-1]
    counts = np.bincount(flat_run.reshape(-1))[flat_run]
    first = np.argmax(counts, axis=-1)  # the first longest run: the smallest value
    mode = ordered[np.arange(len(rows)), first][:, None]
    equal = rows == mode
    if rows.dtype.kind == "f":
        equal |= np.isnan(rows) & np.isnan(mode)
    last = rows.shape[-1] - 1 - np.argmax(equal[:, ::-1], axis=-1)
    values = rows[np.arange(len(rows)), last]
    shape = moved.shape[:-1]
    values, indices = values.reshape(shape), last.reshape(shape).astype(np.int64)
    return _reduced(values, indices, dim, keepdim)


def _same(xp: Any, a: Any, b: Any) -> Any:
    """a == b, with NaN equal to NaN (mode counts NaNs as one value)."""
    equal = a == b
    if xp.isdtype(a.dtype, "real floating"):
        equal = equal | (xp.isnan(a) & xp.isnan(b))
    return equal


def _portable_mode(xp: Any, x: Any, dim: int, keepdim: bool) -> tuple[Any, Any]:
    """mode_along in the standard's names, which have no bincount: each sorted
    entry's count is the number of entries equal to it, from an n-by-n
    comparison per slice (n the length of `dim`); the first largest count is the
    smallest most frequent value, and its last occurrence in `x` is the index."""
    moved = xp.moveaxis(x, dim, -1)
    ordered = xp.sort(moved, axis=-1)
    pairs = _same(xp, xp.expand_dims(ordered, axis=-1), xp.expand_dims(moved, axis=-2))
    counts = xp.sum(xp.astype(pairs, xp.int64), axis=-1)
    first = xp.argmax(counts, axis=-1, keepdims=True)
    mode = take_along_axis(ordered, first, -1)
    hits = xp.astype(xp.flip(_same(xp, moved, mode), axis=-1), xp.int8)
    last = moved.shape[-1] - 1 - xp.argmax(hits, axis=-1, keepdims=True)
    index = xp.astype(last, xp.int64)
    values = take_along_axis(moved, index, -1)
    if keepdim:
        return xp.moveaxis(values, -1, dim), xp.moveaxis(index, -1, dim)
    return values[..., 0], index[..., 0]


_EMPTY_INDEX = np.zeros(0, dtype=np.int64)


def unique_sorted(
    x: Any, sorted: bool, return_inverse: bool, return_counts: bool
) -> tuple[Any, Any, Any]:
    """_unique2: the distinct values of `x`, sorted (also for sorted=False, which
    leaves the order to the kernel), and when asked the index of each entry's
    value among them (shaped as `x`) and how often each occurs. What was not
    asked for is an empty int64 tensor, as in PyTorch."""
    x = np.asarray(x)
    values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    return (
        values,
        inverse.reshape(x.shape).astype(np.int64) if return_inverse else _EMPTY_INDEX,
        counts.astype(np.int64) if return_counts else _EMPTY_INDEX,
    )


def _slices_first(values: np.ndarray, axis: int) -> np.ndarray:
    """values laid out as PyTorch's unique kernels along a dim leave them: the
    slices one after another in memory (a contiguous [dim, rest...] buffer),
    seen with `dim` back in its place."""
    return np.moveaxis(np.ascontiguousarray(np.moveaxis(values, axis, 0)), 0, axis)


def unique_dim_sorted(
    x: Any, dim: int, sorted: bool, return_inverse: bool, return_counts: bool
) -> tuple[Any, Any, Any]:
    """unique_dim: the distinct slices of `x` along `dim`, in lexicographic order,
    with the inverse and the counts (given whatever the flags say, as PyTorch's
    kernel gives them)."""
    x = np.asarray(x)
    dim = _dim(dim, x.ndim, "unique_dim")
    values, inverse, counts = np.unique(
        x, axis=dim, return_inverse=True, return_counts=True
    )
    return (
        _slices_first(values, dim),
        inverse.reshape(-1).astype(np.int64),
        counts.astype(np.int64),
    )


def unique_consecutive_along(
    x: Any, return_inverse: bool, return_counts: bool, dim: int | None
) -> tuple[Any, Any, Any]:
    """unique_consecutive: `x` (flattened when dim is None) with each run of equal
    values (or slices along `dim`) kept once; the inverse gives each entry's run.
    Along a dim, the inverse and counts come whatever the flags say (PyTorch's
    kernel does the same)."""
    x = np.asarray(x)
    if dim is None:
        flat = x.reshape(-1)
        changes = flat[1:] != flat[:-1]
        inverse_shape: tuple[int, ...] = x.shape
        axis = 0
    else:
        axis = _dim(dim, x.ndim, "unique_consecutive")
        flat = x
        moved = np.moveaxis(x, axis, 0).reshape(x.shape[axis], -1)
        changes = np.any(moved[1:] != moved[:-1], axis=1)
        inverse_shape = (x.shape[axis],)
        return_inverse = return_counts = True
    starts = np.concatenate([[True], changes]) if flat.shape[axis] else changes
    keep = np.flatnonzero(starts)
    inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(keep, flat.shape[axis]))
    values = np.take(flat, keep, axis=axis)
    return (
        values if dim is None else _slices_first(values, axis),
        (
            inverse.reshape(inverse_shape).astype(np.int64)
            if return_inverse
            else _EMPTY_INDEX
        ),
        counts.astype(np.int64) if return_counts else _EMPTY_INDEX,
    )


# -- searchsorted and bucketize ---------------------------------------------------


def searchsorted_kernel(
    sorted_sequence: Any,
    values: Any,
    out_int32: bool,
    right: bool,
    side: str | None,
    sorter: Any,
) -> np.ndarray:
    """Where each value would go in the sorted innermost dim of `sorted_sequence`
    (the first index whose entry is >= it, or > it with `right`), row by row
    when the sequence has leading dims, which the values' must match."""
    seq, vals = np.asarray(sorted_sequence), np.asarray(values)
    if seq.ndim == 0:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should have positive dimension, "
            "but got 0 dimension"
        )
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(
                f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
            )
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got "
                "side of left while right was True"
            )
        right = side == "right"
    if seq.ndim > 1 and (vals.ndim != seq.ndim or seq.shape[:-1] != vals.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the "
            "first N-1 dimensions of boundaries tensor and input value tensor must "
            f"match, but we got boundaries tensor {list(seq.shape)} and input value "
            f"tensor {list(vals.shape)}"
        )
    if sorter is not None:
        order = np.asarray(sorter)
        if order.dtype != np.int64:
            raise RuntimeError(
                "torch.searchsorted(): sorter must be a tensor of long dtype but got "
                f"dtype {scalar_type_name(order.dtype)}"
            )
        if order.shape != seq.shape:
            raise RuntimeError(
                "torch.searchsorted(): boundary and sorter must have the same size, "
                f"but got boundary tensor {list(seq.shape)}and got sorter tensor "
                f"{list(order.shape)}"
            )
        seq = np.take_along_axis(seq, order, axis=-1)
    where = "right" if right else "left"
    if seq.ndim == 1:
        found = np.searchsorted(seq, vals, side=where)
    else:
        rows = seq.reshape(-1, seq.shape[-1])
        columns = vals.reshape(rows.shape[0], -1)
        found = np.stack(
            [np.searchsorted(r, c, side=where) for r, c in zip(rows, columns)]
        ).reshape(vals.shape)
    return np.asarray(found, dtype=np.int32 if out_int32 else np.int64)


def bucketize_kernel(values: Any, boundaries: Any, out_int32: bool, right: bool) -> Any:
    """searchsorted of the values into 1-D `boundaries`."""
    if np.ndim(boundaries) != 1:
        raise RuntimeError(
            f"boundaries tensor must be 1 dimension, but got dim({np.ndim(boundaries)})"
        )
    return searchsorted_kernel(boundaries, values, out_int32, right, None, None)
