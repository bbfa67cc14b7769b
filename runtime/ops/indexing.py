"""Indexing: gather/scatter, index_select/index_add, advanced indexing, masked
fill/select, embedding, and their backward helpers.

`gather`, `index_select`, `masked_fill` are both kernels and backward helpers:
one function takes ndarrays (the numpy kernel) or Tensors (the recorded op), so
a forward and a double backward run the same code.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime.autograd.input_metadata import sum_to
from yamlgrad.runtime.ops.namespace import array_namespace, register_numpy_kernels
from yamlgrad.runtime.errors import scalar_type_name as _st
from yamlgrad.runtime.ops.common import (
    _constant,
    _data,
    _dim,
    _raw,
    _size_at,
    _sizes,
    _wrap_dim,
    _zeros,
)
from yamlgrad.runtime.ops.linalg import diagonal_of, diagonal_view
from yamlgrad.runtime.ops.shapes import reshape, select_kernel, slice_kernel
from yamlgrad.runtime.ops import writes
from yamlgrad.runtime.ops.writes import foreign
from yamlgrad.runtime import backend

KERNELS = (
    "select_scatter_kernel",
    "slice_scatter_kernel",
    "diagonal_scatter_kernel",
    "rot90_kernel",
    "take_kernel",
    "index_fill_kernel",
    "index_copy_kernel",
    "put_kernel",
    "index_add",
    "index_select",
    "gather",
    "scatter",
    "scatter_add",
    "masked_fill",
    "masked_select",
    "index_tensor",
    "embedding_kernel",
)
BACKWARD_HELPERS = (
    "select_scatter",
    "slice_scatter",
    "diagonal_scatter",
    "rot90",
    "take_backward",
    "index_fill",
    "put",
    "take_flat",
    "gather",
    "index_select",
    "gather_backward",
    "scatter_fill",
    "masked_fill",
    "masked_fill_backward",
    "index_backward",
    "index_select_backward",
    "masked_select_backward",
    "embedding_backward",
)


_TYPE_WORDS = {
    "float64": "Double",
    "float32": "Float",
    "float16": "Half",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
}


def index_add(x: Any, dim: int, index: Any, source: Any, alpha: Any) -> Any:
    """A copy of `x` with `alpha * source` added at `index` along `dim` (repeated
    indices add up), with PyTorch's checks and messages."""
    if type(x) is not np.ndarray and foreign(x):
        return writes.added(x, dim, index, source * alpha, False, "index_add")
    out = np.array(x, copy=True)
    index = np.asarray(index)
    source = np.asarray(source)
    # index_func_meta_impl's order: the dim, the index, the dtypes, the sizes
    axis = _dim(dim, max(out.ndim, 1), "index_add")
    if index.ndim > 1:
        raise IndexError(
            "index_add_(): Index is supposed to be a vector, but got dim: "
            f"{index.ndim} with type: {_st(index.dtype)} and size: "
            f"{_sizes(index.shape)}"
        )
    if index.dtype.kind not in "iu":
        word = _TYPE_WORDS.get(index.dtype.name, index.dtype.name)
        raise RuntimeError(
            f"index_add_(): Expected dtype int32/int64 for index but got: {word}"
        )
    if source.dtype != out.dtype:
        raise RuntimeError(
            f"index_add_(): self ({_TYPE_WORDS.get(out.dtype.name, out.dtype.name)}) "
            f"and source ({_TYPE_WORDS.get(source.dtype.name, source.dtype.name)}) "
            "must have the same scalar type"
        )
    if not (axis == 0 or axis < source.ndim):
        raise RuntimeError(
            f"index_add_(): Indexing dim {axis} is out of bounds of the source tensor "
            f"with dim {source.ndim}"
        )
    if index.size != (source.shape[axis] if source.ndim else 1):
        if not source.ndim:  # the message reads source.size(dim) of a 0-d source
            raise IndexError(
                f"Dimension specified as {axis} but tensor has no dimensions"
            )
        raise RuntimeError(
            f"index_add_(): Number of indices ({index.size}) should be equal to "
            f"source.size(dim): ({source.shape[axis]}), for dim: {axis}"
        )
    self_sizes, source_sizes = list(out.shape), list(source.shape)
    if out.ndim and source.ndim:
        del self_sizes[axis], source_sizes[axis]
    if self_sizes != source_sizes:
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the "
            f"specified dimension. Got self.shape = {list(out.shape)} source.shape = "
            f"{list(source.shape)}"
        )
    if out.ndim == 0:  # and source too: one index, which must be 0
        if int(index.reshape(())) != 0:
            raise IndexError("index out of range in self")
        return out + alpha * source
    src = source
    size = out.shape[axis]
    if out.ndim > 1 and out.size == 0:  # nothing to add to: PyTorch checks no index
        return out
    bad = index[(index < 0) | (index >= size)].reshape(-1)
    if bad.size:
        # PyTorch's CPU kernel scatters (a RuntimeError naming the index) along
        # the first or last dim of a matrix or more when alpha is 1 and the
        # index int64, and loops over the indices otherwise (an IndexError).
        scatters = alpha == 1 and index.dtype == np.int64
        if out.ndim > 1 and scatters and axis in (0, out.ndim - 1):
            raise RuntimeError(
                f"index {int(bad[0])} is out of bounds for dimension {axis} with "
                f"size {size}"
            )
        raise IndexError("index out of range in self")
    moved = np.moveaxis(out, axis, 0)
    np.add.at(
        moved,
        index.reshape(-1),
        np.moveaxis(src * alpha, axis, 0).astype(out.dtype, copy=False),
    )
    return out


def _index_select(x: Any, dim: int, index: Any) -> Any:
    """The entries at `index` (a 0-d or 1-d integer tensor) along `dim`."""
    if type(x) is not np.ndarray and foreign(x):
        return writes.taken(x, dim, index)
    index = np.asarray(index)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if np.ndim(x) == 0:
        if index.size != 1:
            raise IndexError(
                "index_select(): Index to scalar can have only 1 value, got "
                f"{index.size} value(s)"
            )
        return np.array(x, copy=True)
    if index.dtype.kind not in "iu":
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    axis = _dim(dim, np.ndim(x), "index_select")
    size = np.shape(x)[axis]
    if size == 0 and index.size:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    bad = index[(index < 0) | (index >= size)].reshape(-1)
    if bad.size:
        # PyTorch's CPU kernel has two paths, each with its own error: rows of
        # a non-empty tensor (dim 0), and the general one.
        if axis == 0 and np.size(x):
            raise IndexError("index out of range in self")
        raise RuntimeError(
            f"INDICES element is out of DATA bounds, id={int(bad[0])} axis_dim={size}"
        )
    return np.take(x, index.reshape(-1), axis=axis)


def _scatter_positions(index: Any, dim: int) -> tuple[Any, ...]:
    """For gather and scatter: the position in the indexed tensor of each entry of
    `index` (its own coordinates, with `index` itself along `dim`)."""
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


def _as_1d(x: Any) -> Any:
    """A 0-d array as a view of shape (1,); others as they are."""
    x = np.asarray(x)
    return x.reshape(1) if x.ndim == 0 else x


def _index_arg(index: Any, op: str) -> Any:
    index = _as_1d(index)
    if index.size and index.dtype not in (np.int32, np.int64):  # as PyTorch checks
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    return index


def _src_part(src: Any, index: Any) -> Any:
    """The leading part of `src` that `index` covers (a number is used as is)."""
    if not np.ndim(src):
        return src
    return _as_1d(src)[tuple(slice(0, n) for n in index.shape)]


def _nonempty(shape: tuple[int, ...]) -> tuple[int, ...]:
    """PyTorch's ensure_nonempty_dim/size: a 0-d tensor counts as shape (1,)."""
    return shape if shape else (1,)


def _check_index_bounds(index: Any, dim: int, size: int) -> None:
    """Every index along `dim` in [0, size), else PyTorch's error for the first."""
    bad = (index < 0) | (index >= size)
    if np.any(bad):
        value = int(index[bad].flat[0])
        raise RuntimeError(
            f"index {value} is out of bounds for dimension {dim} with size {size}"
        )


def _check_gather(x: Any, dim: int, index: Any) -> None:
    """gather_shape_check, then the bounds of every index (nothing to check for
    an empty index)."""
    if np.size(index) == 0:
        return
    shape, ishape = _nonempty(np.shape(x)), _nonempty(np.shape(index))
    if len(shape) != len(ishape):
        raise RuntimeError(
            "Index tensor must have the same number of dimensions as input tensor"
        )
    for d in range(len(shape)):
        if d != dim and ishape[d] > shape[d]:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index "
                f"{_sizes(np.shape(index))} to be no larger than self "
                f"{_sizes(np.shape(x))} apart from dimension {dim}"
            )
    _check_index_bounds(index, dim, shape[dim])


def _check_scatter(x: Any, dim: int, index: Any, src: Any) -> None:
    """scatter_shape_check (src only when it is a tensor), then the bounds."""
    if np.size(index) == 0:
        return
    shape, ishape = _nonempty(np.shape(x)), _nonempty(np.shape(index))
    if len(shape) != len(ishape):
        raise RuntimeError(
            "Index tensor must have the same number of dimensions as self tensor"
        )
    wrong = any(d != dim and ishape[d] > shape[d] for d in range(len(shape)))
    tensor_src = type(src) is np.ndarray
    if tensor_src:
        if not wrong:
            # ensure_nonempty_size(src, d): src.size(d), or 1 for a 0-d src
            wrong = any(
                ishape[d] > (_size_at(src, d) if np.ndim(src) else 1)
                for d in range(len(shape))
            )
        if len(_nonempty(np.shape(src))) != len(ishape):
            raise RuntimeError(
                "Index tensor must have the same number of dimensions as src tensor"
            )
    if wrong:
        extra = f" and to be no larger size than src {_sizes(np.shape(src))}"
        raise RuntimeError(
            f"Expected index {_sizes(np.shape(index))} to be no larger than self "
            f"{_sizes(np.shape(x))} apart from dimension {dim}"
            + (extra if tensor_src else "")
        )
    _check_index_bounds(index, dim, shape[dim])


def _gather(x: Any, dim: int, index: Any) -> Any:
    """out[i][j] = x[index[i][j]][j] for dim 0 (index may be smaller than x)."""
    if type(x) is not np.ndarray and foreign(x):
        return writes.per_entry(x, dim, index, None, "gather")
    x = np.asarray(x)
    shape = np.shape(index)
    index = _index_arg(index, "gather")
    dim = _dim(dim, x.ndim, "gather")
    _check_gather(x, dim, np.reshape(index, shape))
    if index.size == 0:
        return np.zeros(shape, dtype=x.dtype)
    positions = _scatter_positions(index, dim)
    return np.reshape(_as_1d(x)[positions], shape)


def _scatter_setup(x: Any, dim: int, index: Any, src: Any, op: str) -> tuple:
    """Checks of scatter and scatter_add; (a copy of x, the index, the positions)."""
    if type(src) is np.ndarray and src.dtype != np.result_type(x):
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    out = np.array(x, copy=True)
    raw = np.asarray(index)
    index = _index_arg(index, op)
    dim = _dim(dim, out.ndim, op)
    _check_scatter(out, dim, raw, src)
    return out, index, _scatter_positions(index, dim) if index.size else None


def scatter(x: Any, dim: int, index: Any, src: Any) -> Any:
    """A copy of `x` with `src` (a tensor or a number) written at `index` along `dim`."""
    if type(x) is not np.ndarray and foreign(x):
        return writes.per_entry(x, dim, index, src, "scatter")
    out, index, positions = _scatter_setup(x, dim, index, src, "scatter")
    if index.size:  # an empty index writes nothing, whatever src is
        _as_1d(out)[positions] = _src_part(src, index)
    return out


def scatter_add(x: Any, dim: int, index: Any, src: Any) -> Any:
    """A copy of `x` with `src` added at `index` along `dim` (duplicates add up)."""
    if type(x) is not np.ndarray and foreign(x):
        return writes.per_entry(x, dim, index, src, "scatter_add")
    out, index, positions = _scatter_setup(x, dim, index, src, "scatter_add")
    if index.size:
        np.add.at(_as_1d(out), positions, _src_part(src, index))
    return out


def _masked_fill(x: Any, mask: Any, value: Any) -> Any:
    """`x` with `value` where `mask` is True, in x's dtype (mask broadcasts to x)."""
    if type(x) is not np.ndarray and foreign(x):
        xp = backend.namespace_of(x, mask, value)
        mask = writes.array_like(mask, x)
        if mask.dtype != xp.bool:
            raise RuntimeError(
                "masked_fill_ only supports boolean masks, but got mask with dtype "
                f"{mask.dtype}"
            )
        fill = xp.astype(value, x.dtype) if foreign(value) else value
        return xp.where(mask, xp.asarray(fill, dtype=x.dtype), x)
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{mask.dtype}"
        )
    x = np.asarray(x)
    out = np.where(mask, np.asarray(value).astype(x.dtype), x)
    return out.astype(x.dtype, copy=False)


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape the given shapes broadcast to."""
    return tuple(np.broadcast_shapes(*shapes))


def masked_select(x: Any, mask: Any) -> Any:
    """The entries of `x` where `mask` is True, as a 1-d tensor (both broadcast)."""
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise RuntimeError(
            f"masked_select: expected BoolTensor for mask, but got {mask.dtype}"
        )
    shape = broadcast_shape(np.shape(x), mask.shape)
    return np.broadcast_to(x, shape)[np.broadcast_to(mask, shape)]


def _index_key(indices: list[Any]) -> tuple[Any, ...]:
    """index.Tensor's indices as a numpy key: None is a full slice."""
    key = []
    for i in indices:
        if i is None:
            key.append(slice(None))
            continue
        i = np.asarray(i)
        if i.dtype.kind not in "biu":
            raise IndexError(
                "tensors used as indices must be long, int, byte or bool tensors"
            )
        key.append(i)
    return tuple(key)


def index_tensor(x: Any, indices: list[Any]) -> Any:
    """`x[indices]` for index.Tensor: integer and bool tensors, None for `:`."""
    x = np.asarray(x)
    if len(indices) > max(x.ndim, 1) and not all(
        np.asarray(i).dtype == np.bool_ for i in indices if i is not None
    ):
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    return np.array(x[_index_key(indices)], copy=True)


def embedding_renorm_(
    weight: np.ndarray, indices: Any, max_norm: float, norm_type: float
) -> None:
    """Scale, in place, each row of `weight` that `indices` names whose
    `norm_type`-norm exceeds `max_norm` down to that norm (PyTorch's
    embedding_renorm_, which `embedding(..., max_norm=)` runs before the lookup,
    outside autograd)."""
    rows = np.unique(np.asarray(indices).reshape(-1))
    norms = np.linalg.norm(weight[rows], ord=norm_type, axis=1)
    scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    weight[rows] = weight[rows] * scale[:, None].astype(weight.dtype)


def embedding_kernel(weight: Any, indices: Any) -> np.ndarray:
    """Rows of `weight`, one per index (IndexError as PyTorch's index_select)."""
    if type(weight) is not np.ndarray and foreign(weight):
        xp = backend.namespace_of(weight)
        indices = writes.array_like(indices, weight)
        rows = writes.taken(weight, 0, indices)
        return xp.reshape(rows, tuple(indices.shape) + tuple(weight.shape[1:]))
    indices = np.asarray(indices)
    if indices.dtype.kind not in "iu":
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following "
            "scalar types: Long, Int; but got torch."
            f"{'FloatTensor' if indices.dtype == np.float32 else 'DoubleTensor'} instead "
            "(while checking arguments for embedding)"
        )
    n = np.shape(weight)[0]
    if n == 0 and indices.size:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if indices.size and (indices.min() < -n or indices.max() >= n or indices.min() < 0):
        raise IndexError("index out of range in self")
    return np.take(weight, indices, axis=0)


def gather(x: Any, dim: int, index: Any) -> Any:
    """`x.gather(dim, index)` (recorded as GatherBackward0 on a Tensor)."""
    return array_namespace(x).gather(x, dim, _data(index))


def index_select(x: Any, dim: int, index: Any) -> Any:
    """`x.index_select(dim, index)` (recorded as IndexSelectBackward0 on a Tensor)."""
    return array_namespace(x).index_select(x, dim, _data(index))


def gather_backward(grad: Any, sizes: tuple[int, ...], dim: int, index: Any) -> Any:
    """Zeros of `sizes` with `grad` added at `index` along `dim`: scatter_add."""
    zeros = _zeros(tuple(sizes), grad)
    return array_namespace(grad).scatter_add(zeros, dim, _data(index), grad)


def scatter_fill(x: Any, dim: int, index: Any, value: float) -> Any:
    """`x.scatter(dim, index, value)`: x with `value` at the scattered positions."""
    return array_namespace(x).scatter_value(x, dim, _data(index), value)


def masked_fill(x: Any, mask: Any, value: float) -> Any:
    """`x.masked_fill(mask, value)`."""
    return array_namespace(x).masked_fill_Scalar(x, _data(mask), value)


def masked_fill_backward(grad: Any, mask: Any) -> Any:
    """The gradient of masked_fill's Tensor value: the sum of grad under the mask."""
    xp = array_namespace(grad)
    return xp.sum(xp.where(_data(mask), grad, 0.0))


def _positions(sizes: tuple[int, ...], key: tuple[Any, ...]) -> np.ndarray:
    """The flat positions, in a tensor of `sizes`, of the entries `key` selects."""
    return np.arange(math.prod(sizes), dtype=np.int64).reshape(sizes)[key]


def _put_at(grad: Any, sizes: tuple[int, ...], positions: np.ndarray) -> Any:
    """Zeros of `sizes` with `grad` added at the flat `positions` (repeats add up),
    recorded as a scatter_add on a Tensor so that it can be differentiated again."""
    flat_grad = reshape(grad, (-1,))
    zeros = _zeros((math.prod(sizes),), grad)
    xp = array_namespace(grad)
    summed = xp.scatter_add(zeros, 0, positions.reshape(-1), flat_grad)
    return reshape(summed, sizes)


def index_backward(grad: Any, sizes: tuple[int, ...], indices: list[Any]) -> Any:
    """index.Tensor's backward: zeros of `sizes` with `grad` put at the indexed
    positions, accumulating where an index repeats (index_put with accumulate)."""
    sizes = tuple(sizes)
    key = tuple(slice(None) if i is None else np.asarray(_data(i)) for i in indices)
    return _put_at(grad, sizes, _positions(sizes, key))


def index_select_backward(
    grad: Any, sizes: tuple[int, ...], dim: int, index: Any
) -> Any:
    """Zeros of `sizes` with `grad` added at `index` along `dim` (index_add)."""
    sizes = tuple(sizes)
    if not sizes:
        return sum_to(grad, ())
    dim = _wrap_dim(dim, len(sizes))
    if foreign(_raw(grad)):
        xp = array_namespace(grad)
        return xp.index_add(_zeros(sizes, grad), dim, _data(index), grad, 1)
    key = (slice(None),) * dim + (np.asarray(_data(index)).reshape(-1),)
    return _put_at(grad, sizes, _positions(sizes, key))


def masked_select_backward(grad: Any, self: Any, mask: Any) -> Any:
    """Zeros of the broadcast shape with `grad` where the mask is True (the engine
    then sums a broadcast input's gradient back to its shape)."""
    mask = np.asarray(_data(mask))
    shape = broadcast_shape(tuple(np.shape(_data(self))), mask.shape)
    positions = np.flatnonzero(np.broadcast_to(mask, shape))
    return _put_at(grad, shape, positions)


def embedding_backward(
    grad: Any,
    indices: Any,
    weight_sizes: tuple[int, ...],
    padding_idx: int,
    scale_grad_by_freq: bool,
) -> Any:
    """Each output row's gradient added into the row it read (none into
    `padding_idx`): an index_add of the masked rows. The mask (and the frequency
    scale) is a constant in the gradient's dtype, so the rows keep theirs."""
    if foreign(_raw(indices)):
        return writes.embedding_grad(
            grad, indices, weight_sizes, padding_idx, scale_grad_by_freq
        )
    flat = np.reshape(_raw(indices), -1)
    num_weights = weight_sizes[0]
    dtype = _raw(grad).dtype
    keep = (flat != padding_idx).astype(dtype)
    if scale_grad_by_freq:
        counts = np.bincount(flat, minlength=num_weights)[flat]
        keep = (keep / counts).astype(dtype)
    xp = array_namespace(grad)
    rows = xp.reshape(grad, (flat.size, -1)) * _constant(keep[:, None], grad)
    zeros = _zeros((num_weights, weight_sizes[1]), grad)
    return xp.index_add(zeros, 0, flat, rows, 1)


# -- the scatters of views: self with src written into one of its views ------------


def _scatter_into(x: Any, src: Any, view: Any) -> np.ndarray:
    """A copy of `x` with `src` written into `view(copy)`, whose shape it must have."""
    out = np.array(x, copy=True)
    target = view(out)
    _check_piece(src, target)
    target[...] = src
    return out


def _check_piece(src: Any, target: Any) -> None:
    if tuple(np.shape(src)) != tuple(target.shape):
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{_sizes(np.shape(src))}, slice size = {_sizes(target.shape)}"
        )


def select_scatter_kernel(x: Any, src: Any, dim: int, index: int) -> np.ndarray:
    if type(x) is not np.ndarray and foreign(x):
        axis = _dim(dim, x.ndim, "select")
        _check_piece(src, select_kernel(x, dim, index))
        piece = backend.namespace_of(src).expand_dims(src, axis=axis)
        return writes.view_scattered(x, piece, axis, index % x.shape[axis], 1)
    return _scatter_into(x, src, lambda out: select_kernel(out, dim, index))


def slice_scatter_kernel(
    x: Any, src: Any, dim: int, start: int | None, end: int | None, step: int
) -> np.ndarray:
    if type(x) is not np.ndarray and foreign(x):
        _check_piece(src, slice_kernel(x, dim, start, end, step))
        axis = _dim(dim, x.ndim, "slice")
        start, _, step = slice(start, end, step).indices(x.shape[axis])
        return writes.view_scattered(x, src, axis, start, step)
    return _scatter_into(x, src, lambda out: slice_kernel(out, dim, start, end, step))


def diagonal_scatter_kernel(
    x: Any, src: Any, offset: int, dim1: int, dim2: int
) -> np.ndarray:
    if type(x) is not np.ndarray and foreign(x):
        _check_piece(src, diagonal_of(x, offset, dim1, dim2))
        d1, d2 = _dim(dim1, x.ndim, "diagonal"), _dim(dim2, x.ndim, "diagonal")
        return writes.diagonal_scattered(x, src, offset, d1, d2)
    return _scatter_into(x, src, lambda out: diagonal_view(out, offset, dim1, dim2))


def select_scatter(x: Any, src: Any, dim: int, index: int) -> Any:
    return array_namespace(x, src).select_scatter(x, src, dim, index)


def slice_scatter(
    x: Any, src: Any, dim: int, start: int | None, end: int | None, step: int
) -> Any:
    return array_namespace(x, src).slice_scatter(x, src, dim, start, end, step)


def diagonal_scatter(x: Any, src: Any, offset: int, dim1: int, dim2: int) -> Any:
    return array_namespace(x, src).diagonal_scatter(x, src, offset, dim1, dim2)


def rot90_kernel(x: Any, k: int, dims: tuple[int, ...]) -> np.ndarray:
    """x turned k quarter turns from dims[0] towards dims[1]."""
    x = x if foreign(x) else np.asarray(x)
    if len(dims) != 2:
        raise RuntimeError(
            f"expected total rotation dims == 2, but got dims = {len(dims)}"
        )
    if x.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {x.ndim}")
    first, second = (_dim(d, x.ndim, "rot90") for d in dims)
    if first == second:
        raise RuntimeError(
            "expected rotation dims to be different, but got dim0 = "
            f"{first} and dim1 = {second}"
        )
    k %= 4
    if type(x) is not np.ndarray and foreign(x):
        return _turned(x, k, first, second)
    # PyTorch's: a flipped copy in the input's layout (as flip's), turned by a
    # transposed view (its strides).
    if k == 0:
        return x.copy()
    if k == 2:
        return np.flip(x, (first, second)).copy(order="K")
    flipped = np.flip(x, second if k == 1 else first).copy(order="K")
    return np.swapaxes(flipped, first, second)


def _turned(x: Any, k: int, first: int, second: int) -> Any:
    """rot90 of another backend's array: flips and a permutation."""
    xp = backend.namespace_of(x)
    if k == 0:
        return x
    if k == 2:
        return xp.flip(x, axis=(first, second))
    axes = list(range(x.ndim))
    axes[first], axes[second] = second, first
    flipped = xp.flip(x, axis=second if k == 1 else first)
    return xp.permute_dims(flipped, tuple(axes))


def rot90(x: Any, k: int, dims: tuple[int, ...]) -> Any:
    return array_namespace(x).rot90(x, k, dims)


def take_kernel(x: Any, index: Any) -> np.ndarray:
    """x.flatten()[index], in index's shape."""
    if type(x) is not np.ndarray and foreign(x):
        xp = backend.namespace_of(x)
        index = writes.array_like(index, x)
        size = math.prod(x.shape)
        bad = writes.checked_bounds(index, -size, size)
        if bad is not None:
            raise IndexError(
                f"out of range: tried to access index {bad} on a tensor of {size} "
                "elements."
            )
        flat = xp.reshape(index, (-1,))
        flat = xp.where(flat < 0, flat + size, flat)
        taken = xp.take(xp.reshape(x, (-1,)), flat, axis=0)
        return xp.reshape(taken, tuple(index.shape))
    x, index = np.asarray(x), np.asarray(index)
    size = x.size
    bad = (index >= size) | (index < -size)
    if np.any(bad):
        raise IndexError(
            f"out of range: tried to access index {int(index[bad].flat[0])} on a "
            f"tensor of {size} elements."
        )
    # a 1-d fancy index makes a new array; a 0-d one would give a numpy scalar
    return x.reshape(-1)[index.reshape(-1)].reshape(index.shape)


def take_backward(grad: Any, sizes: tuple[int, ...], index: Any) -> Any:
    """grad added back at the flat positions `index` took."""
    flat = _zeros((math.prod(sizes),), grad)
    xp = array_namespace(grad)
    if foreign(_data(index)):
        total = xp.index_add(flat, 0, _data(index), xp.reshape(grad, (-1,)), 1)
        return xp.reshape(total, tuple(sizes))
    where = np.asarray(_data(index)).reshape(-1) % max(math.prod(sizes), 1)
    total = xp.index_add(flat, 0, where, xp.reshape(grad, (-1,)), 1)
    return xp.reshape(total, tuple(sizes))


def _along_dim(ndim: int, axis: int, index: Any) -> tuple[Any, ...]:
    return (slice(None),) * axis + (index,)


def index_fill_kernel(x: Any, dim: int, index: Any, value: Any) -> np.ndarray:
    """A copy of x with `value` at every `index` along `dim` (negative wrap)."""
    if type(x) is not np.ndarray and foreign(x):
        return writes.filled(x, dim, index, value)
    out = np.array(x, copy=True)
    index = np.asarray(index)
    axis = _dim(dim, max(out.ndim, 1), "index_fill")
    if index.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if np.ndim(value):
        raise RuntimeError(
            "index_fill_ only supports a 0-dimensional value tensor, but got tensor "
            f"with {np.ndim(value)} dimension(s)."
        )
    size = out.shape[axis] if out.ndim else 1
    bad = (index >= size) | (index < -size)
    if np.any(bad):
        raise IndexError(
            f"index {int(index[bad].flat[0])} is out of bounds for dimension {axis} "
            f"with size {size}"
        )
    if out.ndim:
        out[_along_dim(out.ndim, axis, index.reshape(-1))] = value
    elif index.size:
        out[...] = value
    return out


def index_copy_kernel(x: Any, dim: int, index: Any, source: Any) -> np.ndarray:
    """A copy of x with source's slices along `dim` written at `index`."""
    if type(x) is not np.ndarray and foreign(x):
        return writes.added(x, dim, index, source, True, "index_copy")
    out = np.array(x, copy=True)
    index, source = np.asarray(index).reshape(-1), np.asarray(source)
    axis = _dim(dim, max(out.ndim, 1), "index_copy")
    if index.dtype != np.int64:
        raise IndexError(
            "index_copy_(): Expected a long tensor for index, but got "
            + _st(index.dtype)
        )
    if source.dtype != out.dtype:
        raise RuntimeError(
            "index_copy_(): self and source expected to have the same dtype, but "
            f"got (self) {_st(out.dtype)} and (source) {_st(source.dtype)}"
        )
    count = source.shape[axis] if source.ndim else 1
    if index.size != count:
        raise IndexError(
            f"index_copy_(): Number of indices ({index.size}) should be equal to "
            f"source.size(dim) ({count})"
        )
    size = out.shape[axis] if out.ndim else 1
    bad = (index >= size) | (index < 0)
    if np.any(bad):
        raise IndexError(
            f"index_copy_(): index {int(index[bad][0])} is out of bounds for "
            f"dimension {axis} with size {size}"
        )
    if out.ndim:
        out[_along_dim(out.ndim, axis, index)] = source
    else:
        out[...] = source
    return out


def put_kernel(x: Any, index: Any, source: Any, accumulate: bool) -> np.ndarray:
    """A copy of x with source written (or added) at the flat positions `index`."""
    if type(x) is not np.ndarray and foreign(x):
        xp = backend.namespace_of(x, source)
        flat, values = xp.reshape(x, (-1,)), xp.reshape(source, (-1,))
        out = writes.added(flat, 0, index, values, not accumulate, "put")
        return xp.reshape(out, tuple(x.shape))
    if np.result_type(x) != np.result_type(source):
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got "
            f"self.dtype = {_st(np.result_type(x))} and source.dtype = "
            f"{_st(np.result_type(source))}"
        )
    out = np.array(x, copy=True, order="C")  # flat positions are row-major
    index, source = np.asarray(index).reshape(-1), np.asarray(source).reshape(-1)
    if index.size != source.size:
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, "
            f"but got source.numel() = {source.size}, index.numel() = {index.size}"
        )
    size = out.size
    bad = (index >= size) | (index < -size)
    if np.any(bad):
        raise IndexError(
            f"out of range: tried to access index {int(index[bad][0])} on a tensor "
            f"of {size} elements."
        )
    flat = out.reshape(-1)
    if accumulate:
        np.add.at(flat, index, source)
    else:
        flat[index] = source
    return out


def index_fill(x: Any, dim: int, index: Any, value: float) -> Any:
    if foreign(x):  # the index stays on its backend (a lazy one is not read)
        return index_fill_kernel(x, dim, _data(index), value)
    index = _constant(_data(index), x)
    return array_namespace(x).index_fill_int_Scalar(x, dim, index, value)


def take_flat(x: Any, index: Any) -> Any:
    """`x.take(index)`: the flat positions `index` of x, in index's shape."""
    if foreign(x):
        return take_kernel(x, _data(index))
    return array_namespace(x).take(x, _constant(_data(index), x))


def put(x: Any, index: Any, source: Any, accumulate: bool) -> Any:
    if foreign(x, source):  # the index stays on its backend, as in index_fill
        return put_kernel(x, _data(index), source, accumulate)
    xp = array_namespace(x, source)
    return xp.put(x, _constant(_data(index), x), source, accumulate)


register_numpy_kernels(
    index_fill_int_Scalar=index_fill_kernel,
    put=put_kernel,
    select_scatter=select_scatter_kernel,
    slice_scatter=slice_scatter_kernel,
    diagonal_scatter=diagonal_scatter_kernel,
    rot90=rot90_kernel,
)


register_numpy_kernels(
    gather=_gather,
    index_select=_index_select,
    scatter_add=scatter_add,
    scatter_value=scatter,
    masked_fill_Scalar=_masked_fill,
    index_add=index_add,
)
