"""_embedding_bag: sums, means or maxima of bags of embedding rows, its kernel with
PyTorch's checks and its backward helpers.

The op returns PyTorch's four outputs (output, offset2bag, bag_size,
max_indices) with the CPU kernel's values, which the backward reads:

* offset2bag, each index's bag, is left empty for a float32 sum without
  padding_idx over rows of unit stride (the CPU's fast path); the helpers
  rebuild it when it is;
* bag_size counts each bag's indices other than padding_idx for a mean or a
  max, and is zeros for a sum; max_indices is bag_size again for a sum or a
  mean, and for a max the row each maximum came from, per column (0 for an
  empty bag);
* with include_last_offset, the last offset is dropped and the last bag runs
  to the end of the indices, as on the CPU.

The gradients are recorded ops on Tensors (index_select, index_add,
scatter_add), so a double backward works; the bag structure (which rows, which
bag, the counts) is a constant.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime.dtypes import promote_numpy
from yamlgrad.runtime.ops.common import _constant, _raw, _zeros
from yamlgrad.runtime.ops.namespace import array_namespace

KERNELS = ("embedding_bag_kernel",)
BACKWARD_HELPERS = (
    "embedding_bag_backward",
    "embedding_bag_per_sample_weights_backward",
)

_SUM, _MEAN, _MAX = 0, 1, 2


def _index_type_name(dtype: np.dtype) -> str:
    names = {
        np.float32: "FloatTensor",
        np.float64: "DoubleTensor",
        np.bool_: "BoolTensor",
    }
    return names.get(dtype.type, "Tensor")


def _check_index_tensor(name: str, values: np.ndarray) -> None:
    if values.dtype.kind not in "iu":
        raise RuntimeError(
            f"Expected tensor for argument #1 '{name}' to have one of the following "
            "scalar types: Long, Int; but got torch."
            f"{_index_type_name(values.dtype)} instead (while checking arguments for "
            "embedding_bag)"
        )


def _check_ranks(weight: np.ndarray, indices: np.ndarray, offsets: np.ndarray) -> None:
    """PyTorch's rank checks, before any other: 1-D or 2-D indices, 1-D offsets
    for 1-D indices, a 2-D weight."""
    if indices.ndim not in (1, 2):
        raise RuntimeError(
            "input has to be a 1D or 2D Tensor, but got Tensor of dimension "
            f"{indices.ndim}"
        )
    if indices.ndim == 1 and offsets.ndim != 1:
        raise RuntimeError(
            "offsets has to be a 1D Tensor, but got Tensor of dimension "
            f"{offsets.ndim}"
        )
    if weight.ndim != 2:
        raise RuntimeError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}"
        )


def _bag_starts(
    indices: np.ndarray, offsets: np.ndarray, include_last_offset: bool
) -> np.ndarray:
    """Each bag's first position in the indices, after PyTorch's checks."""
    _check_index_tensor("indices", indices)
    _check_index_tensor("offsets", offsets)
    starts = offsets.reshape(-1).astype(np.int64)
    if include_last_offset:
        if starts.size < 1:
            raise RuntimeError(
                "include_last_offset: number of offset should be at least 1"
            )
        starts = starts[:-1]
    if starts.size:
        if starts[0] != 0:
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                f"has to start from position 0. However, got {starts[0]}\n"
                "[ torch.LongTensor{} ]"
            )
        if starts[-1] > indices.size:
            raise RuntimeError(
                "offsets[-1] can not be greater than input's length "
                f"{indices.size} but got offsets[-1] of {starts[-1]}"
            )
        if np.any(np.diff(starts) < 0):
            raise RuntimeError(
                "Expected i < index_size to be true, but got false.  (Could this "
                "error message be improved?  If so, please report an enhancement "
                "request to PyTorch.)"
            )
    return starts


def _offset2bag(starts: np.ndarray, count: int) -> np.ndarray:
    """The bag of each of `count` indices (bags may be empty)."""
    return np.searchsorted(starts, np.arange(count), side="right") - 1


def embedding_bag_kernel(
    weight: Any,
    indices: Any,
    offsets: Any,
    scale_grad_by_freq: bool,
    mode: int,
    sparse: bool,
    per_sample_weights: Any,
    include_last_offset: bool,
    padding_idx: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(output, offset2bag, bag_size, max_indices) of the bags of rows."""
    weight, indices, offsets = map(np.asarray, (weight, indices, offsets))
    _check_ranks(weight, indices, offsets)
    # indices and offsets are read in their common type (an int32 pair gives
    # int32 bag outputs; a float one fails the indices' check)
    index_dtype = promote_numpy(indices.dtype, offsets.dtype)
    indices, offsets = indices.astype(index_dtype), offsets.astype(index_dtype)
    flat = indices.reshape(-1).astype(np.int64)
    starts = _bag_starts(indices, offsets, include_last_offset)
    if per_sample_weights is not None:
        if mode != _SUM:
            raise RuntimeError(
                "embedding_bag: per_sample_weights only supported with mode='sum'"
            )
        if np.size(per_sample_weights) != flat.size:
            raise RuntimeError(
                "Expected per_sample_weights.value().numel() == indices.numel() to be "
                "true, but got false.  (Could this error message be improved?  If so, "
                "please report an enhancement request to PyTorch.)"
            )
    num, dim = weight.shape
    if flat.size and (flat.min() < 0 or flat.max() >= num):
        raise RuntimeError(
            "Expected i < index_size to be true, but got false.  (Could this error "
            "message be improved?  If so, please report an enhancement request to "
            "PyTorch.)"
        )
    bags = starts.size
    bag_of = _offset2bag(starts, flat.size)
    keep = flat != padding_idx
    counts = np.bincount(bag_of[keep], minlength=bags).astype(np.int64)
    rows = weight[flat]
    if mode == _MAX:
        output = np.zeros((bags, dim), dtype=weight.dtype)
        max_indices = np.zeros((bags, dim), dtype=np.int64)
        for b in range(bags):  # one argmax per bag; the first of equal values
            members = np.flatnonzero((bag_of == b) & keep)
            if members.size:
                best = np.argmax(rows[members], axis=0)
                output[b] = rows[members][best, np.arange(dim)]
                max_indices[b] = flat[members][best]
        bag_size = counts
    else:
        if per_sample_weights is not None:
            rows = rows * np.asarray(per_sample_weights, dtype=weight.dtype)[:, None]
        output = np.zeros((bags, dim), dtype=weight.dtype)
        np.add.at(output, bag_of[keep], rows[keep])
        if mode == _MEAN:
            output = output / np.maximum(counts, 1)[:, None].astype(weight.dtype)
            bag_size = counts
        else:
            bag_size = np.zeros(bags, dtype=np.int64)
        max_indices = bag_size.copy()
    unit_stride = weight.shape[-1] <= 1 or weight.strides[-1] == weight.itemsize
    fast_sum = (
        mode == _SUM and padding_idx < 0 and weight.dtype == np.float32 and unit_stride
    )
    offset2bag = np.zeros(0, dtype=index_dtype) if fast_sum else bag_of
    bag_outputs = (a.astype(index_dtype) for a in (offset2bag, bag_size, max_indices))
    return (output.astype(weight.dtype), *bag_outputs)


def _bags_of(indices: Any, offsets: Any, offset2bag: Any, bags: int) -> np.ndarray:
    """offset2bag, rebuilt from the offsets when the fast path left it empty."""
    bag_of = np.asarray(_raw(offset2bag))
    flat = np.reshape(_raw(indices), -1)
    if bag_of.size == flat.size:
        return bag_of.astype(np.int64)
    starts = np.reshape(_raw(offsets), -1).astype(np.int64)[:bags]
    return _offset2bag(starts, flat.size)


def embedding_bag_backward(
    grad: Any,
    indices: Any,
    offsets: Any,
    offset2bag: Any,
    bag_size: Any,
    max_indices: Any,
    num_weights: int,
    scale_grad_by_freq: bool,
    mode: int,
    per_sample_weights: Any,
    padding_idx: int,
) -> Any:
    """The weight's gradient: each bag's gradient added into the rows it read
    (times the index's weight, over the bag's size for a mean, over the index's
    frequency with scale_grad_by_freq), or for a max into the row each maximum
    came from; nothing into padding_idx."""
    xp = array_namespace(grad, per_sample_weights)
    bags, dim = grad.shape[0], grad.shape[1]
    dtype = _raw(grad).dtype
    if mode == _MAX:
        nonempty = (np.asarray(_raw(bag_size)) > 0).astype(dtype)[:, None]
        index = np.asarray(_raw(max_indices))
        zeros = _zeros((num_weights, dim), grad)
        masked = grad * _constant(nonempty, grad)
        return xp.scatter_add(zeros, 0, index, masked)
    flat = np.reshape(_raw(indices), -1).astype(np.int64)
    bag_of = _bags_of(indices, offsets, offset2bag, bags)
    scale = (flat != padding_idx).astype(dtype)
    if scale_grad_by_freq:
        scale = scale / np.bincount(flat, minlength=num_weights)[flat]
    if mode == _MEAN:
        counts = np.asarray(_raw(bag_size))[bag_of]
        scale = scale / np.maximum(counts, 1)
    rows = xp.index_select(grad, 0, bag_of) * _constant(
        scale.astype(dtype)[:, None], grad
    )
    if per_sample_weights is not None:
        rows = rows * xp.reshape(per_sample_weights, (flat.size, 1))
    zeros = _zeros((num_weights, dim), grad)
    return xp.index_add(zeros, 0, flat, rows, 1)


def embedding_bag_per_sample_weights_backward(
    grad: Any,
    weight: Any,
    indices: Any,
    offsets: Any,
    offset2bag: Any,
    mode: int,
    padding_idx: int,
) -> Any:
    """d/dw_i of a weighted sum: the bag's gradient dotted with the row index i
    read (0 at padding_idx)."""
    if mode != _SUM:
        raise RuntimeError(
            "embedding_bag_backward: per_sample_weights only supported for "
            "mode='sum'"
        )
    xp = array_namespace(grad, weight)
    flat = np.reshape(_raw(indices), -1).astype(np.int64)
    bag_of = _bags_of(indices, offsets, offset2bag, grad.shape[0])
    keep = (flat != padding_idx).astype(_raw(grad).dtype)
    products = xp.index_select(grad, 0, bag_of) * xp.index_select(weight, 0, flat)
    return xp.sum(products, axis=1) * _constant(keep, grad)
