"""Reducing scatters and indexed writes: index_put, scatter_reduce, index_reduce,
masked_scatter, and their backward helpers.

Each kernel copies `self` and writes into the copy with numpy's unbuffered
`ufunc.at` (repeated positions combine). The backward helpers are PyTorch's
scatter_reduce_backward and friends, written once against `array_namespace`, so
that a double backward records them. index_reduce is scatter_reduce with its
1-d index spread over `source` (the same positions, the same formulas).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime import backend

from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.errors import scalar_type_name as _st
from yamlgrad.runtime.ops.common import _data, _dim, _zeros
from yamlgrad.runtime.ops.indexing import (
    _as_1d,
    _gather,
    _index_key,
    _scatter_setup,
    _src_part,
    masked_select,
)
from yamlgrad.runtime.ops.namespace import (
    array_namespace,
    constant_tensor,
    register_numpy_kernels,
)
from yamlgrad.runtime.ops.reductions import _foreign_namespace, _numpy_dtype
from yamlgrad.runtime.ops.shapes import reshape

KERNELS = (
    "index_put_kernel",
    "scatter_reduce_kernel",
    "index_reduce_kernel",
    "masked_scatter_kernel",
    "unsafe_masked_index",
    "unsafe_masked_index_put_accumulate",
)
BACKWARD_HELPERS = (
    "index_put",
    "index_of",
    "scatter_reduce_backward",
    "index_reduce_backward",
    "masked_scatter_backward",
    "unsafe_masked_index",
    "unsafe_masked_index_put_accumulate",
)

_REDUCES = ("sum", "prod", "mean", "amax", "amin")
_AT = {"sum": np.add, "mean": np.add, "prod": np.multiply}


# -- index_put: x[indices] = values (or +=) -----------------------------------------


def index_put_kernel(x: Any, indices: list[Any], values: Any, accumulate: bool) -> Any:
    """A copy of `x` with `values` written (or, with `accumulate`, added: repeated
    positions add up) at `x[indices]`."""
    x = np.asarray(x)
    values = np.asarray(values)
    if values.dtype != x.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_st(x.dtype)} for the destination and {_st(values.dtype)} for the "
            "source."
        )
    if len(indices) > max(x.ndim, 1):
        raise IndexError(
            f"too many indices for tensor of dimension {x.ndim} (got {len(indices)})"
        )
    out = np.array(x, copy=True)
    key = _index_key(indices)
    if accumulate:
        np.add.at(out, key, np.broadcast_to(values, out[key].shape))
    else:
        out[key] = values
    return out


def index_put(grad: Any, indices: list[Any], values: Any, accumulate: bool) -> Any:
    """`grad.index_put(indices, values, accumulate)` (IndexPutBackward0 on a Tensor)."""
    if isinstance(grad, Tensor) or isinstance(values, Tensor):
        tensors = [None if i is None else constant_tensor(i) for i in indices]
        return ops.index_put(
            constant_tensor(grad), tensors, constant_tensor(values), accumulate
        )
    return index_put_kernel(grad, indices, values, accumulate)


def index_of(grad: Any, indices: list[Any]) -> Any:
    """`grad[indices]` (index.Tensor, IndexBackward0 on a Tensor)."""
    if isinstance(grad, Tensor):
        tensors = [None if i is None else constant_tensor(i) for i in indices]
        return ops.index_Tensor(grad, tensors)
    return np.array(np.asarray(grad)[_index_key(indices)], copy=True)


# -- _unsafe_masked_index: x[indices] where a mask is set ------------------------------
#
# These are the ops PyTorch's decompositions emit for padded gathers: where the
# mask is off an index may point outside `x`, so indices are clamped into range
# first and the masked-off entries never read (or write) what they point at.
# Each function takes ndarrays (the kernel) or Tensors (the recorded op), so the
# two ops' formulas, each the other op, differentiate again.


def _in_range(sizes: tuple[int, ...], indices: list[Any]) -> list[Any]:
    """Each index tensor clamped into its dim's range [-size, size - 1]."""
    clamped = []
    for size, index in zip(sizes, indices):
        if index is None:
            clamped.append(None)
            continue
        index = np.asarray(_data(index))
        clamped.append(np.clip(index, -size, max(size - 1, 0)))
    return clamped


def _tensors(indices: list[Any]) -> list[Any]:
    return [None if i is None else constant_tensor(_data(i)) for i in indices]


def unsafe_masked_index(x: Any, mask: Any, indices: list[Any], fill: Any) -> Any:
    """`where(mask, x[indices], fill)`, reading only in-range positions."""
    if isinstance(x, Tensor):
        return ops._unsafe_masked_index(
            x, constant_tensor(mask), _tensors(indices), fill
        )
    x = np.asarray(x)
    picked = x[_index_key(_in_range(x.shape, indices))]
    fill = np.asarray(fill).astype(x.dtype)
    return np.where(np.asarray(mask), picked, fill).astype(x.dtype, copy=False)


def unsafe_masked_index_put_accumulate(
    x: Any, mask: Any, indices: list[Any], values: Any
) -> Any:
    """A copy of `x` with `values` added at `x[indices]` where `mask` is set."""
    if isinstance(x, Tensor) or isinstance(values, Tensor):
        return ops._unsafe_masked_index_put_accumulate(
            constant_tensor(x),
            constant_tensor(mask),
            _tensors(indices),
            constant_tensor(values),
        )
    x = np.asarray(x)
    values = np.asarray(values)
    kept = np.where(np.asarray(mask), values, np.zeros((), values.dtype))
    return index_put_kernel(x, _in_range(x.shape, indices), kept, True)


# -- scatter_reduce and index_reduce --------------------------------------------------


def _identity(reduce: str, dtype: np.dtype) -> Any:
    """The value a position starts from when `self` is left out of its reduction."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    low = reduce == "amax"
    if dtype.kind == "f":
        return -np.inf if low else np.inf
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    if info is None:  # bool
        return not low
    return info.min if low else info.max


def _check_reduce(reduce: str, op: str, allowed: tuple[str, ...]) -> None:
    if reduce not in allowed:
        names = ", ".join(allowed)
        raise RuntimeError(f"{op}(): reduce argument must be either {names}.")


def scatter_reduce_kernel(
    x: Any, dim: int, index: Any, src: Any, reduce: str, include_self: bool
) -> Any:
    """A copy of `x` where each position `index` reaches along `dim` holds the
    `reduce` of the `src` entries sent there (and of its own value, with
    `include_self`); positions nothing reaches keep theirs."""
    _check_reduce(reduce, "scatter_reduce", _REDUCES)
    src = np.asarray(src)
    out, index, positions = _scatter_setup(x, dim, index, src, "scatter_reduce")
    if not index.size:
        return out
    flat = _as_1d(out)
    part = _src_part(src, index)
    if not include_self:
        flat[positions] = _identity(reduce, out.dtype)
    if reduce == "amax":
        np.maximum.at(flat, positions, part)
    elif reduce == "amin":
        np.minimum.at(flat, positions, part)
    else:
        _AT[reduce].at(flat, positions, part)
    if reduce == "mean":
        counts = np.full(flat.shape, 1 if include_self else 0, dtype=np.int64)
        np.add.at(counts, positions, 1)
        counts = np.maximum(counts, 1)
        if out.dtype.kind == "f":
            flat[...] = flat / counts
        else:
            flat[...] = np.floor_divide(flat, counts)
    return out


def _spread_index(index: Any, dim: int, shape: tuple[int, ...]) -> np.ndarray:
    """index_reduce's 1-d `index` along `dim`, as scatter_reduce's index of `shape`."""
    index = np.asarray(_data(index)).reshape(-1)
    if not shape:
        return index.reshape(())
    view = [1] * len(shape)
    view[dim] = index.size
    full = list(shape)
    full[dim] = index.size
    return np.broadcast_to(index.reshape(view), tuple(full)).copy()


def index_reduce_kernel(
    x: Any, dim: int, index: Any, source: Any, reduce: str, include_self: bool
) -> Any:
    """`x` with `source`'s slices along `dim` reduced into the slices `index`
    names (prod, mean, amax or amin), as scatter_reduce over the spread index."""
    _check_reduce(reduce, "index_reduce", ("prod", "mean", "amax", "amin"))
    index = np.asarray(index)
    if index.ndim > 1:
        raise IndexError(
            "index_reduce_(): Index is supposed to be a vector, but got dim: "
            f"{index.ndim} with type: {_st(index.dtype)} and size: "
            f"[{', '.join(str(s) for s in index.shape)}]"
        )
    source = np.asarray(source)
    axis = _dim(dim, max(np.ndim(x), 1), "index_reduce")
    if source.ndim and index.size != source.shape[axis]:
        raise RuntimeError(
            "index_reduce_(): Number of indices "
            f"({index.size}) should be equal to source.size(dim) "
            f"({source.shape[axis]})"
        )
    spread = _spread_index(index, axis, source.shape)
    return scatter_reduce_kernel(x, axis, spread, source, reduce, include_self)


def _scatter_reduce(
    x: Any, dim: int, index: Any, src: Any, reduce: str, include_self: bool
) -> Any:
    """`x.scatter_reduce(...)` in the mode of its operands."""
    if isinstance(x, Tensor) or isinstance(src, Tensor):
        return ops.scatter_reduce_two(
            constant_tensor(x),
            dim,
            constant_tensor(index),
            constant_tensor(src),
            reduce,
            include_self=include_self,
        )
    return scatter_reduce_kernel(x, dim, index, src, reduce, include_self)


def _as_dtype(mask: np.ndarray, like: Any) -> Any:
    """A bool mask as 0/1 in `like`'s dtype and mode (a constant)."""
    array = mask.astype(_data(like).dtype)
    return Tensor._make(array) if isinstance(like, Tensor) else array


def _prod_backward(
    grad: Any,
    self: Any,
    dim: int,
    index: Any,
    src: Any,
    include_self: bool,
    result: Any,
) -> tuple[Any, Any]:
    """The exclusive products, exact where an entry (of self or src) is 0."""
    xp = array_namespace(grad, self, src)
    self_data, src_data = _data(self), _data(src)
    masked_self = (
        xp.where(self_data == 0, 1.0, self) if np.any(self_data == 0) else self
    )
    masked_self_result = _scatter_reduce(
        masked_self, dim, index, src, "prod", include_self
    )
    grad_self = grad * masked_self_result / masked_self
    src_zero = src_data == 0
    zeros = np.zeros(self_data.shape, dtype=self_data.dtype)
    counts = scatter_reduce_kernel(
        zeros, dim, index, src_zero.astype(zeros.dtype), "sum", True
    )
    src_num_zeros = _gather(counts, dim, index)
    src_single_zero = src_zero & (src_num_zeros.reshape(src_zero.shape) == 1)
    masked_src = xp.where(src_single_zero, 1.0, src)
    masked_src_result = _scatter_reduce(
        self, dim, index, masked_src, "prod", include_self
    )
    with_zero = xp.gather(grad * masked_src_result, dim, index)
    without = xp.gather(grad * result, dim, index) / xp.where(src_zero, 1.0, src)
    return grad_self, xp.where(src_single_zero, with_zero, without)


def scatter_reduce_backward(
    grad: Any,
    self: Any,
    dim: int,
    index: Any,
    src: Any,
    reduce: str,
    include_self: bool,
    result: Any,
) -> tuple[Any, Any]:
    """(self's gradient, src's): PyTorch's scatter_reduce_backward. A mean divides
    by each position's count; amax and amin share the gradient evenly among the
    entries equal to the result."""
    xp = array_namespace(grad, self, src)
    index = _data(index)
    if reduce == "sum":
        grad_self, grad_src = grad, xp.gather(grad, dim, index)
    elif reduce == "prod":
        grad_self, grad_src = _prod_backward(
            grad, self, dim, index, src, include_self, result
        )
    elif reduce == "mean":
        base = np.full(np.shape(_data(grad)), 1 if include_self else 0)
        counts = scatter_reduce_kernel(
            base.astype(_data(grad).dtype),
            dim,
            index,
            np.ones(np.shape(_data(src)), dtype=_data(grad).dtype),
            "sum",
            True,
        )
        counts = np.where(counts == 0, 1, counts).astype(counts.dtype)
        grad_self = grad / _as_dtype(counts, grad)
        src_counts = _gather(counts, dim, index)
        grad_src = xp.gather(grad, dim, index) / _as_dtype(src_counts, grad)
    else:
        result_data = _data(result)
        value = _gather(result_data, dim, index)
        self_is = _data(self) == result_data
        src_is = _src_part(_data(src), np.asarray(index)) == value.reshape(
            np.shape(index)
        )
        ones = self_is.astype(result_data.dtype)
        count = scatter_reduce_kernel(
            ones, dim, index, src_is.astype(ones.dtype), "sum", True
        )
        distributed = grad / _as_dtype(count, grad)
        grad_self = distributed * _as_dtype(self_is, grad)
        grad_src = xp.gather(distributed, dim, index) * _as_dtype(src_is, grad)
    if not include_self:
        grad_self = xp.scatter_value(grad_self, dim, index, 0)
    return grad_self, grad_src


def index_reduce_backward(
    grad: Any,
    self: Any,
    dim: int,
    index: Any,
    source: Any,
    reduce: str,
    include_self: bool,
    result: Any,
) -> tuple[Any, Any]:
    """index_reduce's gradients: scatter_reduce's over the spread index."""
    shape = np.shape(_data(source))
    axis = _dim(dim, max(len(shape), 1), "index_reduce") if shape else 0
    spread = _spread_index(index, axis, shape)
    return scatter_reduce_backward(
        grad, self, axis, spread, source, reduce, include_self, result
    )


# -- masked_scatter --------------------------------------------------------------------


def masked_scatter_kernel(x: Any, mask: Any, source: Any) -> Any:
    """`x` (broadcast with `mask`) with `source`'s leading entries, in order,
    written where `mask` is True."""
    xp = _foreign_namespace(x)
    if xp is not None:
        return _portable_masked_scatter(xp, x, mask, source)
    mask = np.asarray(mask)
    source = np.asarray(source)
    if mask.dtype != np.bool_:
        raise RuntimeError(
            "masked_scatter_ only supports boolean masks, but got mask with dtype "
            f"{_st(mask.dtype)}"
        )
    x = np.asarray(x)
    if source.dtype != x.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got "
            f"{_st(x.dtype)} and {_st(source.dtype)}"
        )
    shape = tuple(np.broadcast_shapes(x.shape, mask.shape))
    out = np.array(np.broadcast_to(x, shape), copy=True)
    where = np.broadcast_to(mask, shape)
    count = int(np.count_nonzero(where))
    if count > source.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[where] = source.reshape(-1)[:count]
    return out


def _portable_masked_scatter(xp: Any, x: Any, mask: Any, source: Any) -> Any:
    """masked_scatter_kernel in the standard's names: each masked position
    takes the source entry its rank among the masked positions names (a
    running count, so nothing is read from the data; the count is checked
    against the source's size unless the arrays are lazy)."""
    if mask.dtype != xp.bool:
        raise RuntimeError(
            "masked_scatter_ only supports boolean masks, but got mask with dtype "
            f"{_st(_numpy_dtype(mask))}"
        )
    if source.dtype != x.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got "
            f"{_st(_numpy_dtype(x))} and {_st(_numpy_dtype(source))}"
        )
    shape = tuple(np.broadcast_shapes(tuple(x.shape), tuple(mask.shape)))
    where = xp.reshape(xp.broadcast_to(mask, shape), (-1,))
    rank = xp.cumulative_sum(xp.astype(where, xp.int64)) - 1
    size = math.prod(source.shape)
    lazy = backend.is_lazy(x) or backend.is_lazy(mask)
    if not lazy and math.prod(shape) and bool(rank[-1] >= size):
        raise RuntimeError("Number of elements of source < number of ones in mask")
    base = xp.broadcast_to(x, shape)
    if size == 0:
        return xp.asarray(base, copy=True) if not lazy else base
    flat = xp.reshape(source, (-1,))
    picked = xp.take(flat, xp.clip(rank, 0, size - 1), axis=0)
    return xp.where(xp.reshape(where, shape), xp.reshape(picked, shape), base)


def _portable_masked_scatter_backward(
    xp: Any, grad: Any, mask: Any, sizes: tuple[int, ...]
) -> Any:
    """masked_scatter_backward in the standard's names: the masked entries put
    first, in order, by a stable argsort of the mask, and those beyond the
    masked count set to zero, so the shape is the source's, not the data's."""
    flat = xp.reshape(grad, (-1,))
    where = xp.reshape(xp.broadcast_to(mask, tuple(grad.shape)), (-1,))
    order = xp.argsort(xp.astype(~where, xp.int8), stable=True)
    selected = xp.take(flat, order, axis=0)
    numel, total = math.prod(sizes), flat.shape[0]
    if numel <= total:
        selected = selected[:numel]
    else:
        selected = xp.concat([selected, xp.zeros(numel - total, dtype=flat.dtype)])
    count = xp.sum(xp.astype(where, xp.int64))
    kept = xp.arange(numel, dtype=xp.int64) < count
    return xp.reshape(xp.where(kept, selected, xp.zeros((), dtype=flat.dtype)), sizes)


def masked_scatter_backward(grad: Any, mask: Any, sizes: tuple[int, ...]) -> Any:
    """The entries of `grad` under the mask, in order, padded with zeros to the
    source's size and shaped as it."""
    foreign = _foreign_namespace(grad)
    if foreign is not None:
        return _portable_masked_scatter_backward(foreign, grad, _data(mask), sizes)
    xp = array_namespace(grad)
    if isinstance(grad, Tensor):
        selected = ops.masked_select(grad, constant_tensor(_data(mask)))
    else:
        selected = masked_select(grad, _data(mask))
    numel = int(np.prod(sizes, dtype=np.int64))
    missing = numel - int(np.shape(_data(selected))[0])
    if missing > 0:
        selected = xp.concatenate([selected, _zeros((missing,), grad)])
    return reshape(selected, tuple(sizes))


register_numpy_kernels(scatter_reduce=scatter_reduce_kernel)
