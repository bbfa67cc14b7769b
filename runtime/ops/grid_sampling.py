"""Sampling grids: affine_grid_generator (F.affine_grid), and its backward.

An affine grid is a fixed base grid (each output position's normalised
coordinates x, y[, z] and a 1, as PyTorch's make_base_grid) times each batch
element's transposed theta, so the op is linear in theta and its backward is the
product with the base grid's transpose (a constant): on Tensors a recorded matmul.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from yamlgrad.runtime.ops.common import _constant, _raw, _sizes, _zeros
from yamlgrad.runtime import backend
from yamlgrad.runtime.ops.namespace import array_namespace
from yamlgrad.runtime.ops.writes import array_like, foreign

KERNELS = ("affine_grid_generator_kernel", "grid_sampler_kernel")
BACKWARD_HELPERS = (
    "affine_grid_generator_backward",
    "grid_sampler_backward_input",
    "grid_sampler_backward_grid",
)


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
    numpy = not foreign(theta)
    theta = np.asarray(theta) if numpy else theta
    spatial = _spatial(tuple(size))
    dims = len(spatial)
    if theta.ndim != 3 or theta.shape[1:] != (dims, dims + 1):
        raise RuntimeError(
            f"Expected a batch of {dims}D affine matrices of shape "
            f"Nx{dims}x{dims + 1} for size {_sizes(size)}. Got {_sizes(theta.shape)}."
        )
    if not numpy:
        xp = backend.namespace_of(theta)
        base = _base_like(spatial, align_corners, theta)
        grid = xp.matmul(base, xp.permute_dims(theta, (0, 2, 1)))
        return xp.reshape(grid, (size[0],) + spatial + (dims,))
    base = _base_grid(spatial, align_corners, theta.dtype)
    grid = np.matmul(base, theta.transpose(0, 2, 1))  # [N, positions, dims]
    return np.ascontiguousarray(grid.reshape((size[0],) + spatial + (dims,)))


def _base_like(spatial: tuple[int, ...], align_corners: bool, like: Any) -> Any:
    """The base grid on another backend, in the dtype of `like`."""
    xp = backend.namespace_of(like)
    base = _base_grid(spatial, align_corners, np.float64)
    return xp.astype(array_like(base, like), like.dtype)


def affine_grid_generator_backward(
    grad: Any, size: tuple[int, ...], align_corners: bool
) -> Any:
    """theta's gradient: (base.T @ grad) transposed, per batch element."""
    spatial = _spatial(tuple(size))
    dims = len(spatial)
    xp = array_namespace(grad)
    flat = xp.reshape(grad, (size[0], math.prod(spatial), dims))
    if foreign(grad):
        left = xp.permute_dims(_base_like(spatial, align_corners, grad), (1, 0))
    else:
        base = _base_grid(spatial, align_corners, _raw(grad).dtype)
        left = _constant(np.ascontiguousarray(base.T), grad)
    product = xp.matmul(left, flat)
    return xp.permute_dims(product, (0, 2, 1))


# -- grid_sampler_2d / grid_sampler_3d ---------------------------------------------
# Modes as at::grid_sampler's integers: interpolation 0 bilinear, 1 nearest,
# 2 bicubic; padding 0 zeros, 1 border, 2 reflection.
#
# Each output point reads the input at a few taps (2**dims corners, the nearest
# pixel, or 4x4 for bicubic) with weights that are polynomials in the fractional
# part t of its source coordinate s. s is a piecewise linear function of the
# grid (unnormalise, then clip or reflect), so it is passed to the weights as
# s0 + m (g - g0): its value s0 and slope m are constants computed from the data,
# and on Tensors the expression carries the grid's gradient (second derivative
# 0, as PyTorch's). The taps' positions and in-bounds masks are constants. So one
# helper gathers the taps and weights for the forward and both gradients, on
# ndarrays and (for a double backward) on Tensors.

_CUBIC_A = -0.75


def _unnormalize(coord: np.ndarray, size: int, align_corners: bool) -> tuple[Any, Any]:
    """(source coordinate, its slope in the grid coordinate)."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1), (size - 1) / 2
    return ((coord + 1) * size - 1) / 2, size / 2


def _reflect(coord: np.ndarray, twice_low: int, twice_high: int) -> tuple[Any, Any]:
    """PyTorch's reflect_coordinates_set_grad: the coordinate folded into
    [low, high] and its slope (+-1)."""
    if twice_low == twice_high:
        return np.zeros_like(coord), np.zeros_like(coord)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    shifted = coord - low
    sign = np.where(shifted < 0, -1.0, 1.0)
    shifted = np.abs(shifted)
    extra = np.fmod(shifted, span)
    even = np.floor(shifted / span) % 2 == 0
    folded = np.where(even, extra + low, span - extra + low)
    return folded.astype(coord.dtype), np.where(even, sign, -sign)


def _pad_coordinates(
    coord: np.ndarray, size: int, padding_mode: int, align_corners: bool
) -> tuple[Any, Any]:
    """PyTorch's compute_coordinates (with its slope): border clips, reflection
    folds then clips, zeros leaves the coordinate as it is."""
    slope = np.ones_like(coord)
    if padding_mode == 2:
        twice = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        coord, slope = _reflect(coord, *twice)
    if padding_mode in (1, 2):
        inside = (coord > 0) & (coord < size - 1)
        slope = np.where(inside, slope, 0.0)
        coord = np.minimum(size - 1, np.maximum(coord, 0)).astype(coord.dtype)
    return coord, slope


def _cubic_weights(t: Any) -> list[Any]:
    """PyTorch's get_cubic_upsample_coefficients (A = -0.75) at fraction t."""
    a = _CUBIC_A

    def near(x: Any) -> Any:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Any) -> Any:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _cubic_slopes(t: Any) -> list[Any]:
    """d/dt of `_cubic_weights`."""
    a = _CUBIC_A

    def near(x: Any) -> Any:  # d/dx of ((a + 2) x - (a + 3)) x x + 1
        return (3 * (a + 2) * x - 2 * (a + 3)) * x

    def far(x: Any) -> Any:  # d/dx of ((a x - 5 a) x + 8 a) x - 4 a
        return (3 * a * x - 10 * a) * x + 8 * a

    return [far(t + 1), near(t), -near(1 - t), -far(2 - t)]


class _Axis(NamedTuple):
    """One spatial axis of a sampling: the fraction t = s - base (its value),
    ds/dg, and each tap's position (clipped into the axis) and in-bounds mask."""

    fraction: np.ndarray
    slope: np.ndarray
    positions: list[np.ndarray]
    valid: list[np.ndarray]
    kind: int  # the interpolation mode


def _axis(
    coord: np.ndarray,
    size: int,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,
) -> _Axis:
    source, scale = _unnormalize(coord, size, align_corners)
    if interpolation_mode == 2:  # bicubic: the taps are padded, not the point
        base = np.floor(source)
        slope = np.full_like(source, scale)
        taps = [
            _pad_coordinates(base + o, size, padding_mode, align_corners)[0]
            for o in (-1, 0, 1, 2)
        ]
    else:
        source, slope = _pad_coordinates(source, size, padding_mode, align_corners)
        slope = slope * scale
        base = np.rint(source) if interpolation_mode == 1 else np.floor(source)
        taps = [base] if interpolation_mode == 1 else [base, base + 1]
    valid = [(p >= 0) & (p <= size - 1) for p in taps]
    positions = [np.clip(np.nan_to_num(p), 0, size - 1).astype(np.int64) for p in taps]
    return _Axis(source - base, slope, positions, valid, interpolation_mode)


def _tap_weights(axis: _Axis, t: Any) -> tuple[list[Any], list[Any]]:
    """Each tap's weight along the axis and its derivative in t."""
    if axis.kind == 2:
        return _cubic_weights(t), _cubic_slopes(t)
    if axis.kind == 1:
        return [1.0], [0.0]
    return [1 - t, t], [-1.0, 1.0]


def _grid_axes(
    sizes: tuple[int, ...],
    grid: Any,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,
) -> list[tuple[_Axis, Any]]:
    """Per spatial axis of the input (D, H, W order): its _Axis and its fraction
    t as an expression of the grid (x is the grid's component 0, the last axis)."""
    dims = len(sizes)
    data = _raw(grid)
    batch = data.shape[0]
    axes = []
    for a, size in enumerate(sizes):
        component = dims - 1 - a
        coord = data[..., component].reshape(batch, -1)
        axis = _axis(coord, size, interpolation_mode, padding_mode, align_corners)
        t = axis.fraction
        if not isinstance(grid, np.ndarray):  # carry the grid's gradient
            xp = array_namespace(grid)
            g = xp.reshape(grid[..., component], (batch, -1))
            moved = (g - _constant(coord, grid)) * _constant(axis.slope, grid)
            t = _constant(t, grid) + moved
        axes.append((axis, t))
    return axes


def _taps(
    sizes: tuple[int, ...], axes: list[tuple[_Axis, Any]]
) -> Iterator[tuple[np.ndarray, np.ndarray, Any, list[Any]]]:
    """Every tap of the sampling: (flat position [N, Q], in-bounds mask [N, Q],
    weight, the weight's derivative along each axis's fraction)."""
    strides = [math.prod(sizes[a + 1 :]) for a in range(len(sizes))]
    per_axis = [_tap_weights(axis, t) for axis, t in axes]
    counts = [len(axis.positions) for axis, _ in axes]
    for combo in np.ndindex(*counts):
        flat = sum(axes[a][0].positions[i] * strides[a] for a, i in enumerate(combo))
        valid = np.logical_and.reduce(
            [axes[a][0].valid[i] for a, i in enumerate(combo)]
        )
        weights = [per_axis[a][0][i] for a, i in enumerate(combo)]
        slopes = [per_axis[a][1][i] for a, i in enumerate(combo)]
        weight = math.prod(weights[1:], start=weights[0])
        partials = []
        for a in range(len(combo)):
            others = [w for b, w in enumerate(weights) if b != a]
            partials.append(math.prod(others, start=slopes[a]))
        yield flat, valid, weight, partials


def _check_grid_sampler(input: Any, grid: Any, interpolation_mode: int) -> int:
    """PyTorch's grid_sampler checks; the number of spatial dims."""
    dims = np.ndim(grid) - 2
    in_shape, grid_shape = tuple(np.shape(input)), tuple(np.shape(grid))
    if np.ndim(input) != dims + 2 or dims not in (2, 3):
        raise RuntimeError(
            "grid_sampler(): expected 4D or 5D input and grid with same number of "
            f"dimensions, but got input with sizes {_sizes(in_shape)} and grid with "
            f"sizes {_sizes(grid_shape)}"
        )
    if in_shape[0] != grid_shape[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but "
            f"got input with sizes {_sizes(in_shape)} and grid with sizes "
            f"{_sizes(grid_shape)}"
        )
    if grid_shape[-1] != dims:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {dims} in last dimension, "
            f"but got grid with sizes {_sizes(grid_shape)}"
        )
    if interpolation_mode == 2 and dims != 2:
        raise RuntimeError(
            "grid_sampler(): bicubic interpolation only supports 4D input"
        )
    return dims


def _gather(flat_input: Any, flat: np.ndarray, channels: int) -> Any:
    """flat_input [N, C, P] read at positions [N, Q], for every channel (on an
    ndarray, one np.take per batch element)."""
    if isinstance(flat_input, np.ndarray):
        shape = flat.shape[:1] + (channels,) + flat.shape[1:]
        out = np.empty(shape, dtype=flat_input.dtype)
        for n in range(shape[0]):
            # positions are in range: "clip" spares take's buffered out=
            np.take(flat_input[n], flat[n], axis=1, out=out[n], mode="clip")
        return out
    index = np.broadcast_to(
        flat[:, None, :], flat.shape[:1] + (channels,) + flat.shape[1:]
    )
    return array_namespace(flat_input).gather(
        flat_input, 2, np.ascontiguousarray(index)
    )


def grid_sampler_kernel(
    input: Any,
    grid: Any,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,
) -> np.ndarray:
    """grid_sampler_2d/3d: the input read at the grid's points, [N, C, out...]."""
    input, grid = np.asarray(input), np.asarray(grid)
    _check_grid_sampler(input, grid, interpolation_mode)
    batch, channels, *sizes = input.shape
    flat_input = input.reshape(batch, channels, -1)
    axes = _grid_axes(
        tuple(sizes), grid, interpolation_mode, padding_mode, align_corners
    )
    out = np.zeros((batch, channels, math.prod(grid.shape[1:-1])), dtype=input.dtype)
    for flat, valid, weight, _ in _taps(tuple(sizes), axes):
        out += _gather(flat_input, flat, channels) * (weight * valid)[:, None, :]
    return out.reshape((batch, channels) + grid.shape[1:-1])


def grid_sampler_backward_input(
    grad: Any,
    input_sizes: tuple[int, ...],
    grid: Any,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,
) -> Any:
    """The input's gradient: each output's gradient added at its taps, weighted."""
    batch, channels, *sizes = input_sizes
    xp = array_namespace(grad, grid)
    axes = _grid_axes(
        tuple(sizes), grid, interpolation_mode, padding_mode, align_corners
    )
    flat_grad = xp.reshape(grad, (batch, channels, -1))
    if isinstance(grad, np.ndarray):
        return _scatter_taps(flat_grad, axes, tuple(input_sizes))
    total = _zeros((batch, channels, math.prod(sizes)), grad)
    for flat, valid, weight, _ in _taps(tuple(sizes), axes):
        index = np.broadcast_to(flat[:, None, :], (batch, channels, flat.shape[1]))
        masked = weight * _constant(valid.astype(_raw(grad).dtype), grad)
        contribution = flat_grad * xp.reshape(masked, (batch, 1, -1))
        total = xp.scatter_add(total, 2, np.ascontiguousarray(index), contribution)
    return xp.reshape(total, tuple(input_sizes))


def _scatter_taps(
    flat_grad: np.ndarray, axes: list[tuple[_Axis, Any]], input_sizes: tuple[int, ...]
) -> np.ndarray:
    """The input's gradient on ndarrays: each tap's weighted gradient added at
    its positions by np.add.at over one flat index per batch element."""
    batch, channels, *sizes = input_sizes
    plane = math.prod(sizes)
    total = np.zeros((batch, channels * plane), dtype=flat_grad.dtype)
    offsets = (np.arange(channels) * plane)[:, None]
    for flat, valid, weight, _ in _taps(tuple(sizes), axes):
        contribution = flat_grad * (weight * valid)[:, None, :]
        for n in range(batch):
            where = (offsets + flat[n]).ravel()  # 1-d: numpy's fast np.add.at
            np.add.at(total[n], where, contribution[n].ravel())
    return total.reshape(input_sizes)


def grid_sampler_backward_grid(
    grad: Any,
    input: Any,
    grid: Any,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,
) -> Any:
    """The grid's gradient: per component, the taps' values times the weights'
    derivatives and ds/dg, summed over channels (0 for nearest)."""
    batch, channels, *sizes = tuple(input.shape)
    xp = array_namespace(grad, input, grid)
    axes = _grid_axes(
        tuple(sizes), grid, interpolation_mode, padding_mode, align_corners
    )
    flat_grad = xp.reshape(grad, (batch, channels, -1))
    flat_input = xp.reshape(input, (batch, channels, -1))
    dims = len(sizes)
    parts: list[Any] = [0.0] * dims
    for flat, valid, _, partials in _taps(tuple(sizes), axes):
        values = _gather(flat_input, flat, channels) * flat_grad
        mask = _constant(valid.astype(_raw(grid).dtype), grid)
        summed = xp.sum(values, axis=1) * mask
        for a in range(dims):
            parts[a] = parts[a] + summed * partials[a]
    components = []
    for c in range(dims):  # grid component c is spatial axis dims - 1 - c
        a = dims - 1 - c
        slope = _constant(axes[a][0].slope, grid)
        components.append(parts[a] * slope)
    stacked = xp.stack(components, axis=-1)
    return xp.reshape(stacked, tuple(_raw(grid).shape))
