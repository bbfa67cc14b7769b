"""Sampling grids: affine_grid_generator (F.affine_grid), and its backward.

An affine grid is a fixed base grid (each output position's normalised
coordinates x, y[, z] and a 1, as PyTorch's make_base_grid) times each batch
element's transposed theta, so the op is linear in theta and its backward is the
product with the base grid's transpose (a constant): on Tensors a recorded matmul.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime.ops.common import _constant, _raw, _sizes
from yamlgrad.runtime.ops.namespace import array_namespace

KERNELS = ("affine_grid_generator_kernel",)
BACKWARD_HELPERS = ("affine_grid_generator_backward",)


def _linspace_from_neg_one(steps: int, align_corners: bool, dtype: Any) -> np.ndarray:
    """Positions -1 .. 1 of `steps` pixel centres (or corners with
    align_corners), 0 for a single step."""
    if steps <= 1:
        return np.zeros(max(steps, 1), dtype=dtype)
    points = np.linspace(-1, 1, steps, dtype=dtype)
    if not align_corners:
        points = points * (steps - 1) / steps
    return points.astype(dtype, copy=False)


def _base_grid(spatial: tuple[int, ...], align_corners: bool, dtype: Any) -> np.ndarray:
    """[prod(spatial), len(spatial) + 1]: each position's (x, y[, z], 1), x along
    the last dim."""
    axes = [_linspace_from_neg_one(n, align_corners, dtype) for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")  # one array per dim, D/H/W order
    columns = [m.reshape(-1) for m in reversed(mesh)]  # x (W) first
    columns.append(np.ones(math.prod(spatial), dtype=dtype))
    return np.stack(columns, axis=1)


def _spatial(size: tuple[int, ...]) -> tuple[int, ...]:
    if len(size) not in (4, 5):
        raise RuntimeError(
            "AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs."
        )
    return tuple(size[2:])


def affine_grid_generator_kernel(
    theta: Any, size: tuple[int, ...], align_corners: bool
) -> np.ndarray:
    """[N, H, W, 2] (or [N, D, H, W, 3]): the base grid mapped by each theta."""
    theta = np.asarray(theta)
    spatial = _spatial(tuple(size))
    dims = len(spatial)
    if theta.ndim != 3 or theta.shape[1:] != (dims, dims + 1):
        raise RuntimeError(
            f"Expected a batch of {dims}D affine matrices of shape "
            f"Nx{dims}x{dims + 1} for size {_sizes(size)}. Got {_sizes(theta.shape)}."
        )
    base = _base_grid(spatial, align_corners, theta.dtype)
    grid = np.matmul(base, theta.transpose(0, 2, 1))  # [N, positions, dims]
    return np.ascontiguousarray(grid.reshape((size[0],) + spatial + (dims,)))


def affine_grid_generator_backward(
    grad: Any, size: tuple[int, ...], align_corners: bool
) -> Any:
    """theta's gradient: (base.T @ grad) transposed, per batch element."""
    spatial = _spatial(tuple(size))
    dims = len(spatial)
    base = _base_grid(spatial, align_corners, _raw(grad).dtype)
    xp = array_namespace(grad)
    flat = xp.reshape(grad, (size[0], math.prod(spatial), dims))
    product = xp.matmul(_constant(np.ascontiguousarray(base.T), grad), flat)
    return xp.permute_dims(product, (0, 2, 1))
