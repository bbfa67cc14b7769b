"""Shapes and views: view/reshape/alias strides, transpose, slice, select, split,
flatten/unflatten, movedim, repeat, roll, padding, and their backward helpers.

Named `shapes`, not `shape`: generated code calls kernels through their module's
name, and `shape` is an argument name (`reshape(Tensor self, SymInt[] shape)`)
that would hide it inside that wrapper.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.ops.namespace import (
    array_namespace,
    register_numpy_kernels,
    static,
    reshaped,
)
from yamlgrad.runtime.ops.common import (
    _dense,
    _dim,
    _dim_list,
    _distinct,
    _wrap_dim,
    _zeros,
)
from yamlgrad.runtime.ops.elementwise import where
from yamlgrad.runtime.ops.writes import along as _along
from yamlgrad.runtime.ops.writes import padded, placed
from yamlgrad.runtime.wrappers.kernel_errors import cat_operands

KERNELS = (
    "c_order",
    "cat_kernel",
    "copy_of_view",
    "expand_shape",
    "view_kernel",
    "reshape_kernel",
    "alias_kernel",
    "reshape_alias_kernel",
    "clone_kernel",
    "laid_out",
    "transpose_kernel",
    "transpose_2d",
    "slice_kernel",
    "slice_backward_kernel",
    "select_kernel",
    "select_backward_kernel",
    "split_kernel",
    "split_with_sizes_kernel",
    "unbind_kernel",
    "flatten_shape",
    "flatten_keeps",
    "unflatten_shape",
    "movedim_dims",
    "squeeze_dims",
    "roll",
    "repeat",
    "tile_repeats",
    "interleave_sizes",
    "constant_pad_nd",
    "narrow_start",
    "checked_repeats",
    "repeat_interleave_kernel",
    "flip_kernel",
    "chunk_size",
    "interleave_dim",
)
BACKWARD_HELPERS = (
    "expand",
    "reshape",
    "transpose",
    "permute_backwards",
    "slice_of",
    "slice_backward",
    "select_of",
    "select_backward",
    "cat_tensors_backward",
    "stack_tensors_backward",
    "split_backward",
    "unbind_backward",
    "flip",
    "squeeze_dim",
    "unsqueeze_to",
    "roll_backward",
    "repeat_backward",
    "constant_pad_nd_backward",
)


def c_order(result: Any) -> Any:
    """A kernel's result (or each of a tuple's) laid out row-major: PyTorch's
    reductions, scans, softmaxes, concatenations, scatters and norms write a
    fresh contiguous tensor whatever the input's layout, where numpy's keep the
    input's order. It decides whether a later `view` works (and whether
    `reshape` records ViewBackward0 or UnsafeViewBackward0)."""
    if type(result) is tuple:
        return tuple(c_order(r) for r in result)
    if type(result) is np.ndarray and not result.flags.c_contiguous:
        return np.array(result, order="C")
    return result


@static
def expand_shape(shape: tuple[int, ...], size: tuple[int, ...]) -> tuple[int, ...]:
    """`expand`'s target: -1 keeps the input's size; new leading dims are allowed."""
    lead = len(size) - len(shape)
    if lead < 0:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(size)}) must be greater or "
            f"equal to the number of dimensions in the tensor ({len(shape)})"
        )
    out = []
    for i, s in enumerate(size):
        if s == -1:
            if i < lead:
                raise RuntimeError(
                    "expand: -1 is not allowed in a leading, non-existing dimension"
                )
            s = shape[i - lead]
        out.append(s)
    return tuple(out)


def infer_size(size: tuple[int, ...], numel: int) -> tuple[int, ...]:
    """PyTorch's infer_size: `size` with its one -1 resolved for `numel` elements,
    checked dim by dim in order."""
    known, inferred = 1, None
    for i, s in enumerate(size):
        if s == -1:
            if inferred is not None:
                raise RuntimeError("only one dimension can be inferred")
            inferred = i
        elif s >= 0:
            known *= s
        else:
            raise RuntimeError(
                f"invalid shape dimension {s} at index {i} of shape {list(size)}"
            )
    if numel == known or (inferred is not None and known > 0 and numel % known == 0):
        if inferred is None:
            return tuple(size)
        if known == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {list(size)} because "
                "the unspecified dimension size -1 can be any value and is ambiguous"
            )
        return tuple(size[:inferred]) + (numel // known,) + tuple(size[inferred + 1 :])
    raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")


def view_shape(array: Any, size: tuple[int, ...]) -> tuple[int, ...]:
    """`view`/`reshape`'s target, with PyTorch's message for a size that cannot fit."""
    infer_size(tuple(size), math.prod(np.shape(array)))
    return size


ERR_VIEW_STRIDES = (
    "view size is not compatible with input tensor's size and stride (at least one "
    "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
)


def viewable(x: Any, size: tuple[int, ...]) -> bool:
    """Whether `x` can be seen as `size` without a copy (PyTorch's computeStride).
    Another backend's array has no strides to check: view_kernel reshapes it."""
    if type(x) is not np.ndarray and backend.is_foreign(x):
        view_shape(x, size)
        return True
    try:
        np.reshape(np.asarray(x), view_shape(x, size), copy=False)
    except ValueError:
        return False
    return True


def view_kernel(x: Any, size: tuple[int, ...]) -> Any:
    """`view`: the same memory as `size`, or PyTorch's error when the strides
    cannot express it."""
    shape = view_shape(x, size)
    if type(x) is not np.ndarray and not isinstance(x, np.generic):
        return reshaped(x, shape)  # no strides to check
    try:
        return np.reshape(np.asarray(x), shape, copy=False)
    except ValueError:
        raise RuntimeError(ERR_VIEW_STRIDES) from None


def reshape_kernel(x: Any, size: tuple[int, ...]) -> Any:
    """`x` as `size` in any layout: a view where the strides allow, else a copy
    (view_copy's forward, which takes what view refuses)."""
    shape = view_shape(x, size)
    if type(x) is not np.ndarray and not isinstance(x, np.generic):
        return reshaped(x, shape)
    return np.reshape(np.asarray(x), shape)


def alias_kernel(x: Any) -> Any:
    """`alias`: a new array over the same memory (another backend's array,
    which cannot be written, is its own alias)."""
    if type(x) is not np.ndarray and backend.is_foreign(x):
        return x
    return np.asarray(x).view()


def reshape_alias_kernel(x: Any, size: tuple[int, ...], stride: tuple[int, ...]) -> Any:
    """`_reshape_alias`: `x` seen as `size` with the given element strides. Only
    the strides of a view are accepted (what reshape passes): any others would
    address memory numpy cannot check."""
    out = view_kernel(x, size)
    if out.size > 1 and tuple(s * out.itemsize for s in stride) != out.strides:
        have = [s // out.itemsize for s in out.strides]
        raise RuntimeError(
            f"_reshape_alias: strides {list(stride)} are not those of a view of the "
            f"input as {list(size)} ({have})"
        )
    return out


def element_strides(x: Any, size: tuple[int, ...]) -> tuple[int, ...]:
    """The strides, in elements, of `x` seen as `size` without a copy."""
    out = np.reshape(np.asarray(x), view_shape(x, size), copy=False)
    return tuple(s // out.itemsize for s in out.strides)


def clone_kernel(x: Any, memory_format: Any) -> Any:
    """`clone`: a copy in `memory_format`; preserve_format (None, the default)
    keeps the strides of a tensor whose elements fill its memory once."""
    if type(x) is not np.ndarray and backend.is_foreign(x):
        return backend.namespace_of(x).asarray(x, copy=True)
    preserve = memory_format is None or memory_format.name == "preserve_format"
    if preserve and _dense(x):
        return np.array(x, copy=True, order="K")
    if preserve:  # an expanded or strided view: row-major, as PyTorch's
        return np.array(x, copy=True, order="C")
    return laid_out(np.asarray(x), memory_format, copy=True)


def laid_out(x: Any, memory_format: Any, copy: bool = False) -> Any:
    """`x` with the strides `memory_format` asks for: row-major, or the
    channels (dim 1) innermost for channels_last/_3d (PyTorch's error for
    another rank); preserve_format and None leave an array as it is. A copy
    only where the layout changes, unless `copy`."""
    name = "preserve_format" if memory_format is None else memory_format.name
    if type(x) is not np.ndarray or name == "preserve_format":
        return np.array(x, copy=True) if copy and type(x) is np.ndarray else x
    rank = memory_format.rank
    if rank is None:
        return np.array(x, order="C", copy=True if copy else None)
    if x.ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {name} format")
    moved = np.moveaxis(x, 1, -1)
    if copy or not moved.flags.c_contiguous:
        moved = np.array(moved, order="C", copy=True)
    return np.moveaxis(moved, -1, 1)


def transpose_kernel(x: Any, dim0: int, dim1: int) -> Any:
    """`transpose`: a view with two dims swapped; a 0-d tensor takes 0 and -1
    and is returned as a view of itself."""
    ndim = np.ndim(x)
    d0, d1 = _dim(dim0, ndim, "transpose"), _dim(dim1, ndim, "transpose")
    if type(x) is not np.ndarray and not isinstance(x, np.generic):
        return _swapped(x, d0, d1)
    if ndim == 0:
        return np.asarray(x).view()
    return np.swapaxes(x, d0, d1)


def _swapped(x: Any, d0: int, d1: int) -> Any:
    """Another backend's array with two dims swapped (permute_dims)."""
    axes = list(range(x.ndim))
    axes[d0], axes[d1] = d1, d0
    return backend.namespace_of(x).permute_dims(x, tuple(axes))


def transpose_2d(x: Any) -> Any:
    """`t()`: transpose a matrix; a vector or a 0-d tensor is returned as it is."""
    if np.ndim(x) > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but self is {np.ndim(x)}D"
        )
    if type(x) is not np.ndarray and not isinstance(x, np.generic):
        return _swapped(x, 0, x.ndim - 1) if x.ndim == 2 else x
    return np.transpose(x)


def slice_kernel(
    x: Any, dim: int, start: int | None, end: int | None, step: int
) -> Any:
    """`x[..., start:end:step, ...]` along `dim`: a view, as PyTorch's slice."""
    dim = _slice_dim(np.ndim(x), dim, step)
    if type(x) is not np.ndarray:  # the standard leaves bounds past the end open
        start, end, step = slice(start, end, step).indices(np.shape(x)[dim])
    return x[_along(dim, slice(start, end, step))]


def _slice_dim(ndim: int, dim: int, step: int) -> int:
    """aten::slice's checks, in its order: a 0-d tensor, the dim, the step."""
    if ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    dim = _dim(dim, ndim, "slice")
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return dim


def slice_backward_kernel(
    grad: Any,
    sizes: tuple[int, ...],
    dim: int,
    start: int | None,
    end: int | None,
    step: int,
) -> Any:
    """Zeros of the input's shape with `grad` written into the slice."""
    dim = _slice_dim(len(sizes), dim, step)
    if type(grad) is not np.ndarray and backend.is_foreign(grad):
        start, _, step = slice(start, end, step).indices(sizes[dim])
        return placed(grad, tuple(sizes), dim, start, step)
    out = np.zeros(sizes, dtype=np.result_type(grad))
    out[_along(dim, slice(start, end, step))] = grad
    return out


def select_kernel(x: Any, dim: int, index: int) -> Any:
    """`x` at `index` along `dim` (a view with that dim removed)."""
    dim = _dim(dim, np.ndim(x), "select")
    size = np.shape(x)[dim]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size "
            f"{list(np.shape(x))} at dimension {dim}"
        )
    return x[_along(dim, index)]


def select_backward_kernel(
    grad: Any, sizes: tuple[int, ...], dim: int, index: int
) -> Any:
    dim = _dim(dim, len(sizes), "select")
    if type(grad) is not np.ndarray and backend.is_foreign(grad):
        xp = backend.namespace_of(grad)
        piece = xp.expand_dims(grad, axis=dim)
        return placed(piece, tuple(sizes), dim, index % sizes[dim], 1)
    out = np.zeros(sizes, dtype=np.result_type(grad))
    out[_along(dim, index)] = grad
    return out


def copy_of_view(view: Any) -> Any:
    """A view op's result as arrays of their own, row-major (the forward of the
    `_copy` twins: view_copy, permute_copy, unbind_copy, ...)."""
    if isinstance(view, (list, tuple)):
        return [copy_of_view(v) for v in view]
    if type(view) is np.ndarray:
        return np.array(view, order="C", copy=True)
    return backend.copy(view)


def split_kernel(x: Any, split_size: int, dim: int) -> list[Any]:
    """Views of `split_size` along `dim`; the last one may be smaller."""
    if np.ndim(x) == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if split_size < 0:
        raise RuntimeError(
            f"split expects split_size be non-negative, but got split_size={split_size}"
        )
    dim = _dim(dim, np.ndim(x), "split")
    size = np.shape(x)[dim]
    if split_size == 0 and size != 0:
        raise RuntimeError(
            "split_size can only be 0 if dimension size is 0, but got dimension size "
            f"of {size}"
        )
    bounds = [*range(0, max(size, 1), max(split_size, 1)), None]  # None: the end
    return [x[_along(dim, slice(a, b))] for a, b in zip(bounds, bounds[1:])]


def split_with_sizes_kernel(
    x: Any, split_sizes: tuple[int, ...], dim: int
) -> list[Any]:
    """Views of the given sizes along `dim`, which must add up to its size."""
    if np.ndim(x) == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    wrapped = _dim(dim, np.ndim(x), "split_with_sizes")
    size = np.shape(x)[wrapped]
    pieces, start = [], 0
    for length in split_sizes:
        if length < 0:
            raise RuntimeError(
                "split_with_sizes expects split_sizes have only non-negative entries, "
                f"but got split_sizes={list(split_sizes)}"
            )
        pieces.append(x[_along(wrapped, slice(start, start + length))])
        start += length
    if start != size:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {size} (input "
            f"tensor's size at dimension {dim}), but got split_sizes="
            f"{list(split_sizes)}"
        )
    return pieces


def unbind_kernel(x: Any, dim: int) -> list[Any]:
    dim = _dim(dim, np.ndim(x), "unbind")
    return [x[_along(dim, i)] for i in range(np.shape(x)[dim])]


def flatten_shape(
    shape: tuple[int, ...], start_dim: int, end_dim: int
) -> tuple[int, ...]:
    """The shape `flatten(start_dim, end_dim)` views to (a 0-d tensor becomes (1,))."""
    start = _dim(start_dim, len(shape), "flatten")
    end = _dim(end_dim, len(shape), "flatten")
    if start > end:
        raise RuntimeError(
            "flatten() has invalid args: start_dim cannot come after end_dim"
        )
    if not shape:
        return (1,)
    return (
        tuple(shape[:start])
        + (math.prod(shape[start : end + 1]),)
        + tuple(shape[end + 1 :])
    )


def flatten_keeps(shape: tuple[int, ...], start_dim: int, end_dim: int) -> bool:
    """Whether `flatten` returns its input itself (one dim flattened, not 0-d)."""
    flatten_shape(shape, start_dim, end_dim)  # PyTorch's checks
    return bool(shape) and start_dim % len(shape) == end_dim % len(shape)


def unflatten_shape(
    shape: tuple[int, ...], dim: int, sizes: tuple[int, ...]
) -> tuple[int, ...]:
    """The shape `unflatten(dim, sizes)` views to (one -1 in `sizes` is inferred).
    PyTorch rewords infer_size's "is invalid" error and wraps any other."""
    dim = _dim(dim, len(shape), "unflatten")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    sizes = tuple(sizes)
    try:
        if not shape:  # sym_size(0) of a 0-d tensor
            raise IndexError(
                f"Dimension specified as {dim} but tensor has no dimensions"
            )
        inferred = infer_size(sizes, shape[dim])
    except (RuntimeError, IndexError) as error:
        if "is invalid for input of size" in str(error):
            raise RuntimeError(
                f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                f"size of dim {dim} ({shape[dim]}) in the input tensor"
            ) from None
        raise RuntimeError(f"unflatten got an unexpected error:\n{error}") from None
    return tuple(shape[:dim]) + inferred + tuple(shape[dim + 1 :])


def movedim_dims(
    ndim: int, source: int | tuple[int, ...], destination: int | tuple[int, ...]
) -> tuple[int, ...]:
    """The permutation `movedim(source, destination)` applies."""
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            "movedim: Invalid source or destination dims: source "
            f"({list(src)} dims) should contain the same number of dims as "
            f"destination ({list(dst)} dims)"
        )
    src = tuple(_dim(d, ndim, "movedim") for d in src)
    dst = tuple(_dim(d, ndim, "movedim") for d in dst)
    for name, dims, given in (
        ("source", src, source),
        ("destination", dst, destination),
    ):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    if ndim == 0:
        return ()
    order = [d for d in range(ndim) if d not in src]
    perm = [-1] * max(ndim, 0)
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(order)
    return tuple(p if p != -1 else next(rest) for p in perm)


def squeeze_dims(x: Any, dims: int | tuple[int, ...] | None) -> Any:
    """`squeeze`: drop the given dims (every dim for None) that have size 1."""
    shape = np.shape(x)
    if dims is None:
        return _reshaped(x, tuple(s for s in shape if s != 1))
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    wrapped = set(_dim_list(dims, len(shape), "squeeze"))
    return _reshaped(
        x, tuple(s for i, s in enumerate(shape) if not (i in wrapped and s == 1))
    )


def _reshaped(x: Any, shape: tuple[int, ...]) -> Any:
    """np.reshape, or the namespace's reshape for another backend's array."""
    if type(x) is not np.ndarray and backend.is_foreign(x):
        return reshaped(x, shape)
    return np.reshape(x, shape)


def roll(x: Any, shifts: tuple[int, ...], dims: tuple[int, ...]) -> Any:
    """`x` rolled by `shifts` along `dims`; with no dims, rolled as a flat tensor."""
    if not dims:
        if len(shifts) != 1:
            raise RuntimeError(
                f"`shifts` required to be of size 1 when `dims` is empty, got {len(shifts)}"
            )
        return _roll(x, shifts[0], None)
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    return _roll(x, tuple(shifts), tuple(_dim(d, np.ndim(x), "roll") for d in dims))


def _roll(x: Any, shift: Any, axis: tuple[int, ...] | None) -> Any:
    if type(x) is not np.ndarray and backend.is_foreign(x):
        return backend.namespace_of(x).roll(x, shift=shift, axis=axis)
    return np.roll(x, shift, axis)


def repeat(x: Any, repeats: tuple[int, ...]) -> Any:
    """`x` tiled `repeats` times per dim (leading new dims when there are more)."""
    if len(repeats) < np.ndim(x):
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of "
            "dimensions of tensor"
        )
    if type(x) is not np.ndarray and backend.is_foreign(x):
        return backend.namespace_of(x).tile(x, tuple(repeats))
    return np.tile(x, repeats)


def tile_repeats(ndim: int, dims: tuple[int, ...]) -> tuple[int, ...]:
    """`tile`'s dims as `repeat` takes them: padded with leading 1s to ndim."""
    dims = tuple(dims)
    return (1,) * (ndim - len(dims)) + dims


def interleave_sizes(
    shape: tuple[int, ...], repeats: int, dim: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """repeat_interleave by an int along `dim` (wrapped): the shape after
    unsqueeze(dim + 1) and expand, and the result's shape."""
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    dim = _dim(dim, len(shape), "repeat_interleave")
    shape = tuple(shape)
    expanded = shape[: dim + 1] + (repeats,) + shape[dim + 1 :]
    return expanded, shape[:dim] + (shape[dim] * repeats,) + shape[dim + 1 :]


def constant_pad_nd(x: Any, pad: tuple[int, ...], value: Any) -> Any:
    """`x` padded with `value` (last dim first, a (before, after) pair per dim);
    negative pads crop."""
    foreign = type(x) is not np.ndarray and backend.is_foreign(x)
    if not foreign:
        x = np.asarray(x)
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise RuntimeError(
            "Length of pad must be even but instead it equals " f"{len(pad)}"
            if len(pad) % 2
            else "Length of pad should be no more than twice the number of dimensions "
            f"of the input. Pad length is {len(pad)} while the input has {x.ndim} "
            "dimensions."
        )
    pairs = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        pairs[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    _check_pad_sizes(x.shape, pairs)
    crop = tuple(
        slice(max(-before, 0), size - max(-after, 0))
        for (before, after), size in zip(pairs, x.shape)
    )
    widths = [(max(before, 0), max(after, 0)) for before, after in pairs]
    if foreign:
        return padded(x[crop], widths, value)
    return np.pad(x[crop], widths, constant_values=np.asarray(value).astype(x.dtype))


def _check_pad_sizes(shape: tuple[int, ...], pairs: list[tuple[int, int]]) -> None:
    """PyTorch crops negative pads with narrow, whose checks come first."""
    for dim, ((before, after), size) in enumerate(zip(pairs, shape)):
        if before < 0:
            narrow_start(
                shape[:dim] + (size,) + shape[dim + 1 :], dim, -before, size + before
            )
            size += before
        if after < 0 and size + after < 0:
            raise RuntimeError("narrow(): length must be non-negative.")


def narrow_start(shape: tuple[int, ...], dim: int, start: int, length: int) -> int:
    """`narrow`'s start, wrapped once when negative, with PyTorch's checks."""
    if not shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    size = shape[_dim(dim, len(shape), "narrow")]
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but "
            f"got {start})"
        )
    start = start + size if start < 0 else start
    if start > size - length:
        raise RuntimeError(
            f"start ({start}) + length ({length}) exceeds dimension size ({size})."
        )
    return start


def checked_repeats(repeats: Any, shape: tuple[int, ...], dim: int | None) -> Any:
    """repeat_interleave's `repeats`, after PyTorch's checks against the input."""
    counts = repeats._data if hasattr(repeats, "_data") else np.asarray(repeats)
    if counts.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    count = math.prod(counts.shape)
    xp = backend.namespace_of(counts)
    if count and not backend.is_lazy(counts) and bool(xp.min(counts) < 0):
        raise RuntimeError("repeats can not be negative")
    if dim is None:
        size, where = math.prod(shape), 0
    else:
        size, where = shape[_dim(dim, len(shape), "repeat_interleave")], dim
    if counts.ndim == 1 and count != 1 and count != size:
        raise RuntimeError(
            "repeats must have the same size as input along dim, but got "
            f"repeats.size(0) = {count} and input.size({where}) = {size}"
        )
    if count == 1 and (counts.ndim == 0 or size != 1):
        # One count for every element (0-d, or [n]): expand it (no copy).
        return repeats.reshape((1,)).expand((size,))
    return repeats


def repeat_interleave_kernel(repeats: Any, output_size: int | None) -> Any:
    """repeat_interleave.Tensor: each i in range(len(repeats)), repeats[i] times.
    Its length is the sum of the repeats: on a lazy array, which does not hold
    them until computed, `output_size` gives it, and each output position
    finds its i among the running totals (a search, no value read)."""
    xp = backend.namespace_of(repeats)
    if not backend.is_lazy(repeats):
        return xp.repeat(xp.arange(repeats.shape[0]), repeats)
    if output_size is None:
        raise NotImplementedError(
            "repeat_interleave: the result's length is the sum of repeats, which "
            f"a lazy {backend.device_name(repeats)} array does not hold until it "
            "is computed: give output_size (or call .numpy() on repeats first)"
        )
    ends = xp.cumulative_sum(repeats)
    positions = xp.arange(output_size, dtype=ends.dtype)
    return xp.searchsorted(ends, positions, side="right")


def flip_kernel(x: Any, dims: tuple[int, ...]) -> Any:
    """`flip`: reversed along `dims` (wrapped, distinct; a 0-d tensor takes 0)."""
    ndim = np.ndim(x)
    wrapped = tuple(_dim(d, ndim, "flip") for d in dims)
    _distinct(wrapped)
    if type(x) is not np.ndarray and backend.is_foreign(x):
        return _flip_view(x, wrapped)
    if ndim == 0:
        return np.array(x, copy=True)
    return np.flip(x, wrapped).copy(order="K")  # the input's layout, as PyTorch


def chunk_size(shape: tuple[int, ...], chunks: int, dim: int) -> int:
    """`chunk`'s split size, ceil(size / chunks), with PyTorch's checks."""
    if not shape:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(
            f"chunk expects `chunks` to be greater than 0, got: {chunks}"
        )
    size = shape[_dim(dim, len(shape), "chunk")]
    return -(-size // chunks)


def interleave_dim(dim: int, ndim: int) -> int:
    """repeat_interleave's dim, wrapped."""
    return _dim(dim, ndim, "repeat_interleave")


def expand(x: Any, shape: tuple[int, ...]) -> Any:
    return array_namespace(x).expand(x, shape)


def broadcast_view(x: Any, shape: tuple[int, ...]) -> Any:
    """np.broadcast_to(x, shape) for a row-major ndarray, without its argument
    handling (a third of its cost for small arrays): a read-only view of `x`
    whose broadcast dims have stride 0. Anything else, or a shape `x` does not
    broadcast to, goes to np.broadcast_to (and its error). A numpy scalar (a
    0-d gradient's arithmetic gives one) is viewed as its 0-d array."""
    if type(x) is not np.ndarray:
        if not isinstance(x, np.generic):
            return backend.namespace_of(x).broadcast_to(x, shape)
        x = np.asarray(x)
    if not x.flags.c_contiguous:
        return np.broadcast_to(x, shape)
    lead = len(shape) - x.ndim
    if lead < 0:
        return np.broadcast_to(x, shape)
    strides = [0] * lead
    for size, want, stride in zip(x.shape, shape[lead:], x.strides):
        if size == want:
            strides.append(stride)
        elif size == 1:
            strides.append(0)
        else:
            return np.broadcast_to(x, shape)
    if lead and min(shape[:lead]) < 0:
        return np.broadcast_to(x, shape)
    view = np.ndarray(shape, x.dtype, x, 0, strides)
    view.flags.writeable = False
    return view


def reshape(x: Any, shape: tuple[int, ...]) -> Any:
    return array_namespace(x).reshape(x, shape)


def transpose(x: Any, dim0: int, dim1: int) -> Any:
    return array_namespace(x).transpose(x, dim0, dim1)


def permute_backwards(grad: Any, dims: tuple[int, ...]) -> Any:
    """Undo `permute(dims)` by permuting with the inverse permutation."""
    ndim = len(dims)
    inverse = [0] * ndim
    for i, d in enumerate(dims):
        inverse[d % ndim] = i
    return array_namespace(grad).permute_dims(grad, inverse)


def slice_of(x: Any, dim: int, start: int | None, end: int | None, step: int) -> Any:
    """`x` sliced along `dim` (recorded as SliceBackward0 on a Tensor)."""
    return array_namespace(x).slice_Tensor(x, dim, start, end, step)


def slice_backward(
    grad: Any,
    sizes: tuple[int, ...],
    dim: int,
    start: int | None,
    end: int | None,
    step: int,
) -> Any:
    """Zeros of the input's shape with `grad` in the slice (an op of its own, so
    that it can be differentiated again)."""
    xp = array_namespace(grad)
    return xp.slice_backward(grad, sizes, dim, start, end, step)


def select_of(x: Any, dim: int, index: int) -> Any:
    return array_namespace(x).select(x, dim, index)


def select_backward(grad: Any, sizes: tuple[int, ...], dim: int, index: int) -> Any:
    return array_namespace(grad).select_backward(grad, sizes, dim, index)


def cat_kernel(tensors: list[Any], dim: int) -> Any:
    """The tensors joined along `dim`, row-major, in the dtype all of them
    promote to (a skipped 1-D empty one still counts in the dtype)."""
    joined = cat_operands(tensors)
    xp = array_namespace(*tensors)
    result = c_order(xp.concat(joined, axis=dim))
    dtype = result.dtype if len(joined) == len(tensors) else xp.result_type(*tensors)
    return result if result.dtype == dtype else xp.astype(result, dtype)


def cat_tensors_backward(
    grad: Any, sizes: list[tuple[int, ...]], dim: int
) -> list[Any]:
    """Split the gradient of `cat` back into one piece per input (pieces of one
    size along dim 0 of an ndarray: views from one reshape, not a slice each)."""
    dim = _wrap_dim(dim, len(grad.shape))
    if (
        type(grad) is np.ndarray
        and dim == 0
        and sizes
        and len(sizes[0]) == grad.ndim
        and sizes.count(sizes[0]) == len(sizes)
    ):
        return list(grad.reshape((len(sizes), *sizes[0])))
    pieces, start = [], 0
    for size in sizes:
        if tuple(size) == (0,) and grad.ndim != 1:
            pieces.append(_zeros((0,), grad))  # a 1-D empty input cat skipped
            continue
        length = size[dim] if len(size) > dim else 0
        pieces.append(slice_of(grad, dim, start, start + length, 1))
        start += length
    return pieces


def stack_tensors_backward(
    grad: Any, dim: int, sizes: list[tuple[int, ...]]
) -> list[Any]:
    """Unbind the gradient of `stack` into one piece per input (along dim 0 of
    an ndarray: views by plain indexing, not a checked select each)."""
    dim = _wrap_dim(dim, len(grad.shape))
    if type(grad) is np.ndarray and dim == 0:
        return [grad[i, ...] for i in range(len(sizes))]
    return [select_of(grad, dim, i) for i in range(len(sizes))]


def split_backward(
    grads: list[Any],
    split_size: int | tuple[int, ...],
    dim: int,
    sizes: tuple[int, ...],
) -> Any:
    """Join the pieces' gradients back along `dim` (split's, and
    split_with_sizes' with its list of sizes)."""
    dim = _wrap_dim(dim, len(sizes))
    return array_namespace(grads[0]).concat(grads, axis=dim)


def unbind_backward(grads: list[Any], dim: int) -> Any:
    """Stack the slices' gradients back along `dim`."""
    return array_namespace(grads[0]).stack(grads, axis=dim)


def flip(x: Any, dims: tuple[int, ...]) -> Any:
    return array_namespace(x).flip(x, dims)


def _flip_view(x: Any, dims: tuple[int, ...]) -> Any:
    """flip's backward on an ndarray: a view, where the forward kernel copies (the
    gradient is not handed to the user as flip's result is); another backend's
    array flipped by its namespace."""
    if not np.ndim(x) or not dims:
        return x
    if type(x) is not np.ndarray and backend.is_foreign(x):
        return backend.namespace_of(x).flip(x, axis=tuple(dims))
    return np.flip(x, tuple(dims))


def squeeze_dim(x: Any, dim: int) -> Any:
    """`x.squeeze(dim)`: unsqueeze's backward."""
    return array_namespace(x).squeeze_dim(x, dim)


def unsqueeze_to(grad: Any, sizes: tuple[int, ...]) -> Any:
    """Undo a squeeze: put back the size-1 dims of `sizes`."""
    return reshape(grad, tuple(sizes))


def roll_backward(grad: Any, shifts: tuple[int, ...], dims: tuple[int, ...]) -> Any:
    """Roll back by the negated shifts."""
    return array_namespace(grad).roll(grad, tuple(-s for s in shifts), dims)


def repeat_backward(grad: Any, repeats: tuple[int, ...], sizes: tuple[int, ...]) -> Any:
    """Sum the tiles: view grad as (r0, s0, r1, s1, ...) and sum over the r's."""
    repeats = tuple(repeats)
    padded = (1,) * (len(repeats) - len(sizes)) + tuple(sizes)
    split = tuple(n for pair in zip(repeats, padded) for n in pair)
    tiles = tuple(range(0, 2 * len(repeats), 2))
    xp = array_namespace(grad)
    x = xp.reshape(grad, split)
    if tiles:
        x = xp.sum(x, axis=tiles)
    return xp.reshape(x, tuple(sizes))


def constant_pad_nd_backward(grad: Any, pad: tuple[int, ...]) -> Any:
    """Crop the padding off again: constant_pad_nd with the negated pads."""
    back = tuple(-p for p in pad)
    return array_namespace(grad).constant_pad_nd(grad, back, 0)


register_numpy_kernels(
    expand=broadcast_view,
    transpose=transpose_kernel,
    slice_Tensor=slice_kernel,
    slice_backward=slice_backward_kernel,
    select=select_kernel,
    select_backward=select_backward_kernel,
    flip=_flip_view,
    squeeze_dim=squeeze_dims,
    roll=roll,
    constant_pad_nd=constant_pad_nd,
)
