"""Copies and assemblies: narrow_copy, unsafe_split, block_diag, and the
integer-valued nonzero and one_hot, with their backward helpers.

unsafe_split returns pieces that share nothing with the input (PyTorch's
unsafe_split skips view tracking; here the pieces are copies, so no write can
go unseen).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.ops.common import _dim
from yamlgrad.runtime.ops.writes import foreign
from yamlgrad.runtime.ops.shapes import (
    narrow_start,
    reshape,
    slice_backward,
    slice_of,
    split_kernel,
    split_with_sizes_kernel,
)

KERNELS = (
    "narrow_copy_kernel",
    "unsafe_split_kernel",
    "unsafe_split_with_sizes_kernel",
    "block_diag_kernel",
    "nonzero_kernel",
    "one_hot_kernel",
)
BACKWARD_HELPERS = ("narrow_copy_backward", "block_diag_backward")


def narrow_copy_kernel(x: Any, dim: int, start: int, length: int) -> Any:
    """A copy of `length` entries along `dim` from `start` (narrow, copied; the
    part itself for another backend's array, which cannot be written)."""
    numpy = not foreign(x)
    if numpy:
        x = np.asarray(x)
    begin = narrow_start(tuple(x.shape), dim, start, length)
    axis = _dim(dim, x.ndim, "narrow")
    key = (slice(None),) * axis + (slice(begin, begin + length), Ellipsis)
    return np.array(x[key], order="C", copy=True) if numpy else x[key]


def narrow_copy_backward(
    grad: Any, sizes: tuple[int, ...], dim: int, start: int, length: int
) -> Any:
    """Zeros of the input's shape with `grad` in the narrowed part."""
    begin = narrow_start(tuple(sizes), dim, start, length)
    return slice_backward(grad, tuple(sizes), dim, begin, begin + length, 1)


def unsafe_split_kernel(x: Any, split_size: int, dim: int) -> list[Any]:
    """split's pieces, cut from one copy of `x` with its strides: the strides
    are PyTorch's (its pieces are views), yet no piece aliases the input."""
    return _guard_overlap(split_kernel(_strided_copy(x), split_size, dim))


def unsafe_split_with_sizes_kernel(
    x: Any, split_sizes: tuple[int, ...], dim: int
) -> list[Any]:
    return _guard_overlap(split_with_sizes_kernel(_strided_copy(x), split_sizes, dim))


def _strided_copy(x: Any) -> Any:
    """A copy of `x` laid out with x's own strides, gaps included (a slice with
    a step keeps them, so a piece that is not contiguous in PyTorch is not here
    either); another backend's array as it is, since it cannot be written."""
    if foreign(x):
        return x
    x = np.asarray(x)
    strides = x.strides
    if x.size == 0 or any(s < 0 or s % x.itemsize for s in strides):
        return np.array(x, copy=True)
    span = 1 + sum((n - 1) * (s // x.itemsize) for n, s in zip(x.shape, strides))
    out = np.lib.stride_tricks.as_strided(
        np.empty(span, dtype=x.dtype), x.shape, strides
    )
    out[...] = x
    return out


def _guard_overlap(pieces: list[Any]) -> list[Any]:
    """Pieces whose elements share memory (a 0 stride along a dim of two or more,
    as an expanded input's) made read-only: an in-place write into one fails as
    PyTorch's does, where a piece of one row along that dim takes it."""
    for piece in pieces:
        if type(piece) is np.ndarray and any(
            s == 0 and n > 1 for s, n in zip(piece.strides, piece.shape)
        ):
            piece.flags.writeable = False
    return pieces


def _as_block(x: Any) -> Any:
    """A 0-d or 1-d tensor as the 2-d block block_diag places."""
    if x.ndim == 2:
        return x
    shape = (1, 1) if x.ndim == 0 else (1, x.shape[0])
    return backend.namespace_of(x).reshape(x, shape)


def block_diag_kernel(tensors: list[Any]) -> Any:
    """The tensors (0-d, 1-d or 2-d) placed along the diagonal of one matrix."""
    blocks = []
    for i, t in enumerate(tensors):
        if type(t) is not np.ndarray and not foreign(t):
            t = np.asarray(t)
        if t.ndim > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                f"Input {i} has {t.ndim} dimensions"
            )
        blocks.append(_as_block(t))
    if blocks and type(blocks[0]) is not np.ndarray:
        return _block_diag_of(blocks)
    dtype = np.result_type(*blocks) if blocks else np.float32
    rows = sum(b.shape[0] for b in blocks)
    cols = sum(b.shape[1] for b in blocks)
    out = np.zeros((rows, cols), dtype=dtype)
    r = c = 0
    for b in blocks:
        out[r : r + b.shape[0], c : c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def _block_diag_of(blocks: list[Any]) -> Any:
    """block_diag by concatenation: each block between zeros, as one row of
    blocks, then the rows one above the other."""
    xp = backend.namespace_of(*blocks)
    dtype = xp.result_type(*blocks)
    widths = [b.shape[1] for b in blocks]
    rows, c = [], 0
    for b, width in zip(blocks, widths):
        sides = [
            xp.zeros((b.shape[0], n), dtype=dtype) for n in (c, sum(widths) - c - width)
        ]
        rows.append(xp.concat([sides[0], xp.astype(b, dtype), sides[1]], axis=1))
        c += width
    return xp.concat(rows, axis=0)


def block_diag_backward(grad: Any, sizes: list[tuple[int, ...]]) -> list[Any]:
    """Each input's block of the gradient, in its own shape."""
    pieces = []
    r = c = 0
    for size in sizes:
        rows, cols = _as_block(np.empty(tuple(size), dtype=np.int8)).shape
        block = slice_of(slice_of(grad, 0, r, r + rows, 1), 1, c, c + cols, 1)
        pieces.append(reshape(block, tuple(size)))
        r, c = r + rows, c + cols
    return pieces


def nonzero_kernel(x: Any) -> Any:
    """The index of each nonzero entry, one row per entry (int64, row-major)."""
    x = np.asarray(x)
    if x.ndim == 0:
        return np.zeros((int(x != 0), 0), dtype=np.int64)
    return np.ascontiguousarray(np.argwhere(x).astype(np.int64, copy=False))


def one_hot_kernel(x: Any, num_classes: int) -> Any:
    """An int64 tensor with a trailing dim of `num_classes`: 1 at each index."""
    if foreign(x):
        return _one_hot_of(x, num_classes)
    x = np.asarray(x)
    if x.dtype != np.int64:
        raise RuntimeError(
            "one_hot is only applicable to index tensor of type LongTensor."
        )
    if x.size and x.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if x.size == 0:
            raise RuntimeError(
                "Can not infer total number of classes from empty tensor."
            )
        num_classes = int(x.max()) + 1
    elif x.size and x.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = np.zeros(x.shape + (num_classes,), dtype=np.int64)
    np.put_along_axis(out, x[..., None], 1, axis=-1)
    return out


def _one_hot_of(x: Any, num_classes: int) -> Any:
    """one_hot of another backend's array: a comparison with every class. The
    checks of the values are skipped on a lazy array; the number of classes
    is then required, as the result's shape would depend on the values."""
    xp = backend.namespace_of(x)
    if x.dtype != xp.int64:
        raise RuntimeError(
            "one_hot is only applicable to index tensor of type LongTensor."
        )
    lazy, size = backend.is_lazy(x), math.prod(x.shape)
    if not lazy and size and bool(xp.any(x < 0)):
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if lazy:
            raise NotImplementedError(
                "one_hot: num_classes=-1 takes the number of classes from the "
                "largest value, so the result's shape depends on the data, which "
                f"a lazy {backend.device_name(x)} array does not hold until it is "
                "computed: give num_classes (or call .numpy() on the input first)"
            )
        if not size:
            raise RuntimeError(
                "Can not infer total number of classes from empty tensor."
            )
        num_classes = int(xp.max(x)) + 1
    elif not lazy and size and bool(xp.any(x >= num_classes)):
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = xp.arange(num_classes, dtype=x.dtype)
    return xp.astype(xp.expand_dims(x, axis=-1) == classes, xp.int64)
