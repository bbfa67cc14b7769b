"""Resampling: reflection and replication padding, upsampling (nearest, linear,
bilinear, bicubic, trilinear), pixel and channel shuffles, im2col/col2im and
Tensor.unfold, with their backward helpers.

Padding and upsampling are separable linear maps: along each spatial axis the
output is `A @ x` for a matrix `A` (one-hot rows for padding and nearest
neighbours, interpolation weights otherwise). The kernels compute with gathers
and weights; the backward is the product with each `A.T`, which on Tensors is a
recorded matmul, so a double backward runs through it again.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime.ops.common import _constant, _raw, _sizes
from yamlgrad.runtime.ops.namespace import array_namespace, register_numpy_kernels

KERNELS = (
    "reflection_pad_kernel",
    "replication_pad_kernel",
    "upsample_kernel",
    "pixel_shuffle_kernel",
    "pixel_unshuffle_kernel",
    "channel_shuffle_kernel",
    "im2col_kernel",
    "col2im_kernel",
    "unfold_kernel",
    "unfold_backward_kernel",
)
BACKWARD_HELPERS = (
    "pad_backward",
    "upsample_backward",
    "pixel_shuffle",
    "pixel_unshuffle",
    "channel_shuffle",
    "channel_groups",
    "im2col",
    "col2im",
    "unfold",
    "unfold_backward",
)


# -- separable linear maps -----------------------------------------------------------


def _apply_along(x: Any, matrix: np.ndarray, axis: int) -> Any:
    """`matrix @ x` along `axis` (negative): an ndarray or a recorded matmul."""
    xp = array_namespace(x)
    a = _constant(np.ascontiguousarray(matrix.T, dtype=_raw(x).dtype), x)
    if axis == -1:
        return xp.matmul(x, a)
    moved = xp.transpose(x, axis, -1)
    return xp.transpose(xp.matmul(moved, a), axis, -1)


def _separable_adjoint(grad: Any, matrices: list[np.ndarray]) -> Any:
    """The adjoint of applying `matrices[i]` along axis `i - len(matrices)`."""
    n = len(matrices)
    for i, matrix in enumerate(matrices):
        grad = _apply_along(grad, matrix.T, i - n)
    return grad


def _one_hot(index: np.ndarray, size: int) -> np.ndarray:
    matrix = np.zeros((index.size, size))
    matrix[np.arange(index.size), index] = 1.0
    return matrix


# -- reflection and replication padding ----------------------------------------------


def _pad_pairs(padding: tuple[int, ...], nd: int) -> list[tuple[int, int]]:
    """(before, after) per padded axis, first axis first (padding lists the
    last axis first, as F.pad does)."""
    if len(padding) != 2 * nd:
        raise RuntimeError(
            f"padding size is expected to be {2 * nd}, but got: {len(padding)}"
        )
    return [(padding[2 * i], padding[2 * i + 1]) for i in reversed(range(nd))]


def _check_pad_input(x: Any, nd: int) -> None:
    shape = np.shape(x)
    if len(shape) not in (nd + 1, nd + 2) or 0 in shape[1:]:
        raise RuntimeError(
            f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with possibly 0 "
            "batch size and other non-zero dimensions for input, but got: "
            f"{_sizes(shape)}"
        )


def _check_output(shape: tuple[int, ...], pairs: list[tuple[int, int]]) -> None:
    names = "DHW"[3 - len(pairs) :]
    sizes = shape[len(shape) - len(pairs) :]
    out = [s + b + a for s, (b, a) in zip(sizes, pairs)]
    if min(out) < 1:
        given = ", ".join(f"{n}: {s}" for n, s in zip(names, sizes))
        calculated = ", ".join(f"{n}: {s}" for n, s in zip(names, out))
        raise RuntimeError(
            f"input ({given}) is too small. Calculated output {calculated}"
        )


def _pad_index(size: int, before: int, after: int, mode: str) -> np.ndarray:
    """For each output position along an axis, the input position it reads."""
    source = np.arange(-before, size + after)
    if mode == "replicate":
        return np.clip(source, 0, size - 1)
    source = np.abs(source)
    return (size - 1) - np.abs((size - 1) - source)


def _pad_indices(
    shape: tuple[int, ...], padding: tuple[int, ...], nd: int, mode: str
) -> list[np.ndarray]:
    pairs = _pad_pairs(padding, nd)
    sizes = shape[len(shape) - nd :]
    if mode == "reflect":
        for k, ((before, after), size) in enumerate(zip(pairs, sizes)):
            if before >= size or after >= size:
                argument = 4 + 2 * (nd - 1 - k)
                raise RuntimeError(
                    f"Argument #{argument}: Padding size should be less than the "
                    "corresponding input dimension, but got: padding "
                    f"({before}, {after}) at dimension {len(shape) - nd + k} of "
                    f"input {_sizes(shape)}"
                )
    _check_output(shape, pairs)
    return [_pad_index(s, b, a, mode) for s, (b, a) in zip(sizes, pairs)]


def _pad_kernel(x: Any, padding: tuple[int, ...], nd: int, mode: str) -> np.ndarray:
    x = np.asarray(x)
    _check_pad_input(x, nd)
    for axis, index in zip(range(x.ndim - nd, x.ndim), _pad_indices(x.shape, padding, nd, mode)):
        x = np.take(x, index, axis=axis)
    return np.ascontiguousarray(x)


def reflection_pad_kernel(x: Any, padding: tuple[int, ...], nd: int) -> np.ndarray:
    """reflection_pad{nd}d: the border mirrored, without repeating the edge."""
    return _pad_kernel(x, padding, nd, "reflect")


def replication_pad_kernel(x: Any, padding: tuple[int, ...], nd: int) -> np.ndarray:
    """replication_pad{nd}d: the edge value repeated."""
    return _pad_kernel(x, padding, nd, "replicate")


def pad_backward(
    grad: Any, sizes: tuple[int, ...], padding: tuple[int, ...], mode: str
) -> Any:
    """Each padded position's gradient added back to the position it copied."""
    nd = len(padding) // 2
    indices = _pad_indices(tuple(sizes), padding, nd, mode)
    shape = sizes[len(sizes) - nd :]
    return _separable_adjoint(grad, [_one_hot(i, s) for i, s in zip(indices, shape)])
