"""Antialiased resampling: `F.interpolate(..., antialias=True)` in bilinear and
bicubic modes (PyTorch's _upsample_bilinear2d_aa and _upsample_bicubic2d_aa),
with the backward helper beside the kernel.

Like the other upsamplings (runtime/ops/resampling.py) this is a separable
linear map: along H and along W the output is `A @ x`. When the output is
smaller than the input, each output reads every input its filter covers once
the filter is stretched by the scale (a triangle for bilinear, Keys' cubic with
a = -0.5 for bicubic), and each row of `A` is normalised to sum to 1; when it is
larger, the filter keeps its width and this is plain interpolation with
renormalised border weights. The backward is the product with each `A.T`, a
recorded matmul on Tensors, so a double backward runs through it again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime.ops.resampling import (
    _apply_along,
    _check_upsample,
    _linear_scale,
    _separable_adjoint,
)
from yamlgrad.runtime.ops.common import _sizes
from yamlgrad.runtime.ops.writes import foreign

KERNELS = ("upsample_bilinear_aa_kernel", "upsample_bicubic_aa_kernel")
BACKWARD_HELPERS = (
    "upsample_bilinear_aa_backward",
    "upsample_bicubic_aa_backward",
)

# Keys' cubic convolution as the antialiased bicubic filter weighs it.
_AA_CUBIC_A = -0.5


def _triangle(x: np.ndarray) -> np.ndarray:
    return np.maximum(1.0 - np.abs(x), 0.0)


def _keys_cubic(x: np.ndarray) -> np.ndarray:
    a, x = _AA_CUBIC_A, np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


# mode -> (the filter, its half width at scale 1)
_FILTERS = {"bilinear": (_triangle, 1.0), "bicubic": (_keys_cubic, 2.0)}


def _aa_matrix(
    size: int, out: int, align_corners: bool, scale: float | None, mode: str
) -> np.ndarray:
    """The (out, size) matrix of one axis: row i holds the normalised filter
    weights of the inputs within `support` of its centre s * (i + 0.5)."""
    weigh, half = _FILTERS[mode]
    s = _linear_scale(size, out, align_corners, scale)
    support = half * s if s >= 1.0 else half
    stretch = s if s >= 1.0 else 1.0
    centre = s * (np.arange(out, dtype=np.float64) + 0.5)
    first = np.maximum((centre - support + 0.5).astype(np.int64), 0)
    last = np.minimum((centre + support + 0.5).astype(np.int64), size)
    j = np.arange(size, dtype=np.float64)
    weights = weigh((j[None, :] - centre[:, None] + 0.5) / stretch)
    inside = (j[None, :] >= first[:, None]) & (j[None, :] < last[:, None])
    weights = np.where(inside, weights, 0.0)
    total = weights.sum(axis=1, keepdims=True)
    return weights / np.where(total == 0.0, 1.0, total)


def _aa_matrices(
    sizes: tuple[int, ...],
    output_size: tuple[int, ...],
    align_corners: bool,
    scales: list[float | None],
    mode: str,
) -> list[np.ndarray]:
    _check_upsample(tuple(sizes), tuple(output_size), 2)
    return [
        _aa_matrix(n, out, align_corners, scale, mode)
        for n, out, scale in zip(sizes[2:], output_size, scales)
    ]


def _upsample_aa(
    x: Any,
    output_size: tuple[int, ...],
    align_corners: bool,
    scales: list[float | None],
    mode: str,
) -> Any:
    """x (N, C, H, W) resampled to `output_size` with the antialiasing filter."""
    if x.ndim != 4 or 0 in x.shape[1:]:
        raise RuntimeError(
            "Non-empty 4D data tensor expected but got a tensor with sizes "
            f"{_sizes(x.shape)}"
        )
    matrices = _aa_matrices(tuple(x.shape), output_size, align_corners, scales, mode)
    for axis, matrix in zip((-2, -1), matrices):
        x = _apply_along(x, matrix, axis)
    return x if foreign(x) else np.ascontiguousarray(x)


def _upsample_aa_backward(
    grad: Any,
    sizes: tuple[int, ...],
    output_size: tuple[int, ...],
    align_corners: bool,
    scales: list[float | None],
    mode: str,
) -> Any:
    """The adjoint of _upsample_aa: each output's gradient spread back over
    the inputs its filter weighed, with the same weights."""
    matrices = _aa_matrices(tuple(sizes), output_size, align_corners, scales, mode)
    return _separable_adjoint(grad, matrices)


def upsample_bilinear_aa_kernel(
    x: Any,
    output_size: tuple[int, ...],
    align_corners: bool,
    scales: list[float | None],
) -> Any:
    return _upsample_aa(x, output_size, align_corners, scales, "bilinear")


def upsample_bicubic_aa_kernel(
    x: Any,
    output_size: tuple[int, ...],
    align_corners: bool,
    scales: list[float | None],
) -> Any:
    return _upsample_aa(x, output_size, align_corners, scales, "bicubic")


def upsample_bilinear_aa_backward(
    grad: Any,
    sizes: tuple[int, ...],
    output_size: tuple[int, ...],
    align_corners: bool,
    scales: list[float | None],
) -> Any:
    return _upsample_aa_backward(
        grad, sizes, output_size, align_corners, scales, "bilinear"
    )


def upsample_bicubic_aa_backward(
    grad: Any,
    sizes: tuple[int, ...],
    output_size: tuple[int, ...],
    align_corners: bool,
    scales: list[float | None],
) -> Any:
    return _upsample_aa_backward(
        grad, sizes, output_size, align_corners, scales, "bicubic"
    )

