"""Writes into arrays that cannot be written: the arrays of other backends than
numpy (array_api_strict's, Dask's) are immutable, so where a numpy kernel
writes into zeros or into a copy, the portable path builds the result from
standard calls (concatenation, `where` over a mask of broadcast comparisons).
One helper per kind of write, for every family.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.ops.common import _dim


def along(dim: int, index: Any) -> tuple[Any, ...]:
    """The key of `index` along `dim` (the trailing Ellipsis: the standard
    indexes every dim, or says it does not)."""
    return (slice(None),) * dim + (index, Ellipsis)


def placed(piece: Any, sizes: tuple[int, ...], dim: int, start: int, step: int) -> Any:
    """Zeros of `sizes` holding `piece` at start, start + step, ... along `dim`,
    built by concatenation: the arrays of other backends cannot be written."""
    xp = backend.namespace_of(piece)
    count, shape = piece.shape[dim], tuple(piece.shape)
    if step > 1 and count:
        gap = xp.zeros(
            shape[: dim + 1] + (step - 1,) + shape[dim + 1 :], dtype=piece.dtype
        )
        spread = xp.concat([xp.expand_dims(piece, axis=dim + 1), gap], axis=dim + 1)
        spread = xp.reshape(spread, shape[:dim] + (count * step,) + shape[dim + 1 :])
        piece = spread[along(dim, slice(0, (count - 1) * step + 1))]
    after = sizes[dim] - start - piece.shape[dim]
    parts = [
        xp.zeros(sizes[:dim] + (n,) + sizes[dim + 1 :], dtype=piece.dtype)
        for n in (start, after)
    ]
    return xp.concat([parts[0], piece, parts[1]], axis=dim)


def padded(x: Any, widths: list[tuple[int, int]], value: Any) -> Any:
    """np.pad with a constant, by concatenation (another backend's array)."""
    xp = backend.namespace_of(x)
    for axis, (before, after) in enumerate(widths):
        if before or after:
            shape = tuple(x.shape)
            sides = [
                xp.full(shape[:axis] + (n,) + shape[axis + 1 :], value, dtype=x.dtype)
                for n in (before, after)
            ]
            x = xp.concat([sides[0], x, sides[1]], axis=axis)
    return x


def foreign(*values: Any) -> bool:
    """Whether any of `values` is another backend's array than numpy's."""
    for value in values:  # a loop, not any(): the numpy path's cost is the call
        if type(value) is not np.ndarray and backend.is_foreign(value):
            return True
    return False


def array_like(value: Any, like: Any) -> Any:
    """An index or a mask (an ndarray, a number) on the backend of `like`."""
    if foreign(value):
        return value
    return backend.namespace_of(like).asarray(np.asarray(value))


def checked_bounds(index: Any, low: int, high: int) -> Any:
    """The first value of `index` outside [low, high), or None: read from the
    values, so never for a lazy array (its bounds are not checked)."""
    if backend.is_lazy(index):
        return None
    values = backend.to_numpy(index) if foreign(index) else np.asarray(index)
    bad = values[(values < low) | (values >= high)]
    return int(bad.reshape(-1)[0]) if bad.size else None


def one_hot(index: Any, size: int) -> Any:
    """`index[..., None] == arange(size)`: where each index points, as a mask."""
    xp = backend.namespace_of(index)
    return xp.expand_dims(index, axis=-1) == xp.arange(size, dtype=index.dtype)


def _dim_mask(hit: Any, ndim: int, dim: int) -> Any:
    """A mask over one dim's positions, shaped to broadcast along `dim`."""
    shape = [1] * ndim
    shape[dim] = hit.shape[0]
    return backend.namespace_of(hit).reshape(hit, tuple(shape))


def index_added(x: Any, dim: int, index: Any, source: Any, write: bool) -> Any:
    """x with source's slices along `dim` added at the 1-d `index` (repeats add
    up), or written there (`write`): a product with the index's one-hot matrix."""
    xp = backend.namespace_of(x, source)
    size = x.shape[dim]
    index = xp.reshape(array_like(index, x), (-1,))
    hits = one_hot(xp.where(index < 0, index + size, index), size)  # (K, S)
    moved = xp.moveaxis(source, dim, -1)
    summed = xp.moveaxis(xp.matmul(moved, xp.astype(hits, source.dtype)), -1, dim)
    if not write:
        return x + summed
    return xp.where(_dim_mask(xp.any(hits, axis=0), x.ndim, dim), summed, x)


def index_filled(x: Any, dim: int, index: Any, value: Any) -> Any:
    """x with `value` at every position `index` names along `dim`."""
    xp = backend.namespace_of(x)
    size = x.shape[dim]
    index = xp.reshape(array_like(index, x), (-1,))
    hit = xp.any(one_hot(xp.where(index < 0, index + size, index), size), axis=0)
    fill = xp.asarray(value, dtype=x.dtype)
    return xp.where(_dim_mask(hit, x.ndim, dim), fill, x)


def _cropped(x: Any, dim: int, shape: tuple[int, ...]) -> Any:
    """x's leading part of `shape` in every dim but `dim`."""
    key = tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(shape))
    return x[key + (Ellipsis,)]


def gathered(x: Any, dim: int, index: Any) -> Any:
    """gather: out[..., k, ...] = x[..., index[..., k, ...], ...] along `dim`."""
    xp = backend.namespace_of(x)
    index = array_like(index, x)
    x = _cropped(x, dim, tuple(index.shape))
    hits = one_hot(xp.moveaxis(index, dim, -1), x.shape[dim])  # (..., K, S)
    values = xp.expand_dims(xp.moveaxis(x, dim, -1), axis=-2)  # (..., 1, S)
    out = xp.sum(xp.where(hits, values, xp.zeros_like(values)), axis=-1)
    return xp.moveaxis(out, -1, dim)


def scattered(x: Any, dim: int, index: Any, src: Any, add: bool) -> Any:
    """scatter (or scatter_add, `add`): src's entries written (added) into x at
    `index` along `dim`; src is an array or a number. Where an index repeats,
    scatter writes the sum of its entries (PyTorch leaves which one unsaid)."""
    xp = backend.namespace_of(x)
    index = array_like(index, x)
    shape = tuple(index.shape)
    hits = one_hot(xp.moveaxis(index, dim, -1), x.shape[dim])  # (..., K, S)
    widths = [(0, n - m) for n, m in zip(x.shape, shape)]
    widths[dim] = (0, 0)
    hit = padded(xp.moveaxis(xp.any(hits, axis=-2), -1, dim), widths, False)
    if not foreign(src):
        return xp.where(hit, xp.asarray(src, dtype=x.dtype), x)
    src = _cropped(src, dim, shape)
    values = xp.expand_dims(xp.moveaxis(src, dim, -1), axis=-1)  # (..., K, 1)
    summed = xp.sum(xp.where(hits, values, xp.zeros_like(values)), axis=-2)
    summed = padded(xp.moveaxis(summed, -1, dim), widths, 0)
    return x + summed if add else xp.where(hit, summed, x)


def view_scattered(x: Any, piece: Any, dim: int, start: int, step: int) -> Any:
    """x with `piece` at start, start + step, ... along `dim` (slice_scatter,
    select_scatter)."""
    xp = backend.namespace_of(x, piece)
    sizes = tuple(x.shape)
    mask = placed(xp.ones(tuple(piece.shape), dtype=xp.bool), sizes, dim, start, step)
    return xp.where(mask, placed(piece, sizes, dim, start, step), x)


def diagonal_scattered(x: Any, src: Any, offset: int, dim1: int, dim2: int) -> Any:
    """x with `src` on its diagonal `offset` of dims `dim1`, `dim2` (src's last
    dim runs along it, as np.diagonal's does): in the plane of the two dims,
    where column - row is the offset, row i takes src's entry i - (first row)."""
    xp = backend.namespace_of(x, src)
    length = src.shape[-1]
    plane = xp.moveaxis(x, (dim1, dim2), (-2, -1))
    if length == 0:
        return x
    rows, cols = plane.shape[-2], plane.shape[-1]
    row = xp.reshape(xp.arange(rows, dtype=xp.int64), (rows, 1))
    on = xp.arange(cols, dtype=xp.int64) - row == offset
    entry = xp.clip(row[:, 0] - max(0, -offset), 0, length - 1)
    values = xp.expand_dims(xp.take(src, entry, axis=-1), axis=-1)
    out = xp.where(on, values, plane)
    return xp.moveaxis(out, (-2, -1), (dim1, dim2))


# -- the indexing kernels' paths for other backends (bounds checked unless lazy)


def added(x: Any, dim: int, index: Any, source: Any, write: bool, op: str) -> Any:
    """index_add/index_copy of another backend's arrays (bounds checked unless
    lazy; a 0-d x as a vector)."""
    xp = backend.namespace_of(x, source)
    axis = _dim(dim, max(x.ndim, 1), op)
    flat, flat_source = xp.reshape(x, (-1,)), xp.reshape(source, (-1,))
    size = x.shape[axis] if x.ndim else 1
    bad = checked_bounds(index, 0 if op == "index_copy" else -size, size)
    if bad is not None:
        raise IndexError(
            f"{op}(): index {bad} is out of bounds for dimension {axis} with size {size}"
        )
    if not x.ndim:
        out = index_added(flat, 0, index, flat_source, write)
        return xp.reshape(out, ())
    return index_added(x, axis, index, source, write)


def taken(x: Any, dim: int, index: Any) -> Any:
    """index_select of another backend's array: xp.take."""
    xp = backend.namespace_of(x)
    axis = _dim(dim, max(x.ndim, 1), "index_select")
    size = x.shape[axis] if x.ndim else 1
    index = xp.reshape(array_like(index, x), (-1,))
    if checked_bounds(index, 0, size) is not None:
        raise IndexError("index out of range in self")
    if not x.ndim:
        return xp.reshape(xp.take(xp.reshape(x, (1,)), index, axis=0), ())
    return xp.take(x, index, axis=axis)


def per_entry(x: Any, dim: int, index: Any, src: Any, op: str) -> Any:
    """gather, scatter, scatter_add of another backend's arrays (a 0-d x and
    index as vectors; bounds checked unless lazy)."""
    xp = backend.namespace_of(x)
    axis = _dim(dim, max(x.ndim, 1), op)
    size = x.shape[axis] if x.ndim else 1
    index = array_like(index, x)
    bad = checked_bounds(index, 0, size)
    if bad is not None:
        raise RuntimeError(
            f"index {bad} is out of bounds for dimension {axis} with size {size}"
        )
    if not math.prod(index.shape):
        return xp.zeros(index.shape, dtype=x.dtype) if src is None else x
    shape, lone = tuple(x.shape), not x.ndim
    if lone:
        x, index = xp.reshape(x, (1,)), xp.reshape(index, (1,))
        src = xp.reshape(src, (1,)) if foreign(src) else src
    if src is None:
        out = gathered(x, axis, index)
    else:
        out = scattered(x, axis, index, src, op == "scatter_add")
    return xp.reshape(out, shape if src is not None else ()) if lone else out


def filled(x: Any, dim: int, index: Any, value: Any) -> Any:
    """index_fill of another backend's array (bounds checked unless lazy)."""
    xp = backend.namespace_of(x)
    axis = _dim(dim, max(x.ndim, 1), "index_fill")
    index = array_like(index, x)
    if index.dtype != xp.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    size = x.shape[axis] if x.ndim else 1
    bad = checked_bounds(index, -size, size)
    if bad is not None:
        raise IndexError(
            f"index {bad} is out of bounds for dimension {axis} with size {size}"
        )
    if not x.ndim:
        filled = index_filled(xp.reshape(x, (1,)), 0, index, value)
        return xp.reshape(filled, ())
    return index_filled(x, axis, index, value)


def embedding_grad(
    grad: Any,
    indices: Any,
    weight_sizes: tuple[int, ...],
    padding_idx: int,
    scale_grad_by_freq: bool,
) -> Any:
    """embedding's backward for indices of another backend: each row's gradient
    added into the row it read (none into `padding_idx`), scaled by one over
    the row's count for `scale_grad_by_freq` (counted with a one-hot sum)."""
    xp = backend.namespace_of(grad)
    flat = xp.reshape(indices, (-1,))
    keep = xp.astype(flat != padding_idx, grad.dtype)
    if scale_grad_by_freq:
        counts = xp.sum(xp.astype(one_hot(flat, weight_sizes[0]), grad.dtype), axis=0)
        keep = keep / xp.take(counts, flat, axis=0)
    rows = xp.reshape(grad, (flat.shape[0], -1)) * xp.expand_dims(keep, axis=-1)
    zeros = xp.zeros(tuple(weight_sizes), dtype=grad.dtype)
    return index_added(zeros, 0, flat, rows, False)
