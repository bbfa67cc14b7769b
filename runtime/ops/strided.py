"""as_strided and as_strided_scatter: views and writes by explicit strides.

PyTorch's sizes, strides and storage offset count elements of the tensor's
storage. Here a tensor's storage is the memory of the numpy array its data
views (a view's base, when that is one dense block, else the data itself): a
view taken with `x[1:]` or `x.t()` starts at its own offset and keeps its own
strides in that memory, as in PyTorch, so `x.t().as_strided(...)` reads what it
reads there.

The backward helpers are PyTorch's as_strided_backward steps, written once for
ndarrays and Tensors: the gradient is added at the output's storage positions
into a zero storage, then read back at the input's positions, divided by the
count where the input itself reaches one position more than once.
as_strided_scatter assumes a row-major input, as PyTorch's autograd does (see
its as_strided_scatter_backward): the result is a row-major copy of `self` with
`src` written through the strided view.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime.ops.common import _data, _zeros
from yamlgrad.runtime.ops.namespace import array_namespace
from yamlgrad.runtime.ops.shapes import reshape

KERNELS = ("as_strided_kernel", "as_strided_scatter_kernel")
BACKWARD_HELPERS = (
    "as_strided_backward",
    "as_strided_scatter_backward",
    "as_strided_gather",
)


def _storage(x: np.ndarray) -> tuple[np.ndarray, int, tuple[int, ...]]:
    """The 1-d storage `x` lives in, and `x`'s offset and strides in it, in
    elements (a copy of its own, row-major, when its memory is not one block)."""
    base = x
    while isinstance(base.base, np.ndarray):
        base = base.base
    itemsize = x.itemsize
    for owner in (base, x):
        if owner is None or not owner.flags.c_contiguous:
            continue
        flat = owner.reshape(-1)
        start = owner.__array_interface__["data"][0]
        offset, rest = divmod(x.__array_interface__["data"][0] - start, itemsize)
        if rest == 0 and 0 <= offset <= flat.size:
            return flat, offset, tuple(s // itemsize for s in x.strides)
    flat = np.ascontiguousarray(x).reshape(-1)
    return flat, 0, tuple(_row_major_strides(x.shape))


def _row_major_strides(shape: tuple[int, ...]) -> list[int]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return strides[::-1]


def _positions(
    size: tuple[int, ...], stride: tuple[int, ...], offset: int
) -> np.ndarray:
    """The storage position of each element of a strided view."""
    positions = np.full(size, offset, dtype=np.int64)
    for dim, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[dim] = n
        positions = positions + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return positions


def _check_geometry(
    size: tuple[int, ...],
    stride: tuple[int, ...],
    offset: int,
    storage: int,
    itemsize: int,
) -> None:
    if len(size) != len(stride):
        raise RuntimeError(
            f"mismatch in length of strides and shape: {len(size)} vs {len(stride)}"
        )
    for s in stride:
        if s < 0:
            raise RuntimeError(
                f"as_strided: Negative strides are not supported at the moment, got "
                f"strides: {list(stride)}"
            )
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    needed = (
        0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    )
    if needed > storage:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
            f"{offset}, and itemsize {itemsize} requiring a storage size of "
            f"{needed * itemsize} are out of bounds for storage of size "
            f"{storage * itemsize}"
        )


def as_strided_kernel(
    x: Any, size: tuple[int, ...], stride: tuple[int, ...], storage_offset: int | None
) -> np.ndarray:
    """The view of `x`'s storage with the given sizes, strides and offset (x's
    own offset for None)."""
    flat, own, _ = _storage(np.asarray(x))
    offset = own if storage_offset is None else storage_offset
    size, stride = tuple(size), tuple(stride)
    _check_geometry(size, stride, offset, flat.size, flat.itemsize)
    # An ndarray over the storage itself (not stride_tricks' wrapper), so that
    # a view of the result still finds the storage as its base.
    return np.ndarray(
        size,
        dtype=flat.dtype,
        buffer=flat,
        offset=offset * flat.itemsize if flat.size else 0,
        strides=tuple(s * flat.itemsize for s in stride),
    )


def as_strided_backward(
    grad: Any,
    self: Any,
    size: tuple[int, ...],
    stride: tuple[int, ...],
    storage_offset: int | None,
) -> Any:
    """as_strided's backward: `grad` added at the output's storage positions,
    then read at the input's (divided by how often the input reads each one)."""
    data = np.asarray(_data(self))
    flat, in_offset, in_stride = _storage(data)
    shape, storage = tuple(data.shape), flat.size
    offset = in_offset if storage_offset is None else storage_offset
    out_positions = _positions(tuple(size), tuple(stride), offset).reshape(-1)
    in_positions = _positions(shape, in_stride, in_offset).reshape(-1)
    xp = array_namespace(grad)
    zeros = _zeros((storage,), grad)
    summed = xp.scatter_add(zeros, 0, out_positions, reshape(grad, (-1,)))
    result = xp.index_select(summed, 0, in_positions)
    counts = np.bincount(in_positions, minlength=storage)[in_positions]
    if (counts > 1).any():
        result = result / counts.astype(np.asarray(_data(grad)).dtype)
    return reshape(result, shape)


def as_strided_gather(
    grad: Any,
    size: tuple[int, ...],
    stride: tuple[int, ...],
    storage_offset: int | None,
) -> Any:
    """`grad.contiguous().as_strided(size, stride, storage_offset)`: the elements
    of the row-major `grad` at a strided view's positions."""
    positions = _positions(tuple(size), tuple(stride), storage_offset or 0)
    xp = array_namespace(grad)
    taken = xp.index_select(reshape(grad, (-1,)), 0, positions.reshape(-1))
    return reshape(taken, tuple(size))


def as_strided_scatter_kernel(
    self: Any,
    src: Any,
    size: tuple[int, ...],
    stride: tuple[int, ...],
    storage_offset: int | None,
) -> np.ndarray:
    """A row-major copy of `self` with `src` written through its strided view."""
    out = np.array(self, order="C", copy=True)
    view = as_strided_kernel(out, size, stride, storage_offset)
    src = np.asarray(src)
    if src.shape != view.shape:
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(view.shape)}"
        )
    view[...] = src
    return out


def as_strided_scatter_backward(
    grad: Any,
    size: tuple[int, ...],
    stride: tuple[int, ...],
    storage_offset: int | None,
) -> Any:
    """self's gradient in as_strided_scatter: `grad` with the written positions
    zeroed."""
    shape = tuple(np.shape(_data(grad)))
    positions = _positions(tuple(size), tuple(stride), storage_offset or 0)
    keep = np.ones(math.prod(shape), dtype=bool)
    keep[positions.reshape(-1)] = False
    xp = array_namespace(grad)
    return xp.where(keep.reshape(shape), grad, 0)
