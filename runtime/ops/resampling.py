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

from yamlgrad.runtime import backend
from yamlgrad.runtime.ops.common import _constant, _dim, _raw, _size_at, _sizes
from yamlgrad.runtime.ops.namespace import array_namespace, register_numpy_kernels
from yamlgrad.runtime.ops.writes import array_like, foreign

KERNELS = (
    "reflection_pad_kernel",
    "replication_pad_kernel",
    "upsample_nearest_kernel",
    "upsample_nearest_exact_kernel",
    "upsample_linear_kernel",
    "upsample_bicubic_kernel",
    "pixel_shuffle_kernel",
    "pixel_unshuffle_kernel",
    "channel_shuffle_kernel",
    "im2col_kernel",
    "col2im_kernel",
    "unfold_kernel",
    "unfold_backward_kernel",
)
BACKWARD_HELPERS = (
    "reflection_pad_backward",
    "replication_pad_backward",
    "upsample_nearest_backward",
    "upsample_nearest_exact_backward",
    "upsample_linear_backward",
    "upsample_bicubic_backward",
    "pixel_shuffle",
    "pixel_unshuffle",
    "channel_shuffle_backward",
    "im2col",
    "col2im",
    "unfold",
    "unfold_backward",
)


# -- separable linear maps -----------------------------------------------------------


def _apply_along(x: Any, matrix: np.ndarray, axis: int) -> Any:
    """`matrix @ x` along `axis` (negative): an ndarray or a recorded matmul."""
    xp = array_namespace(x)
    if foreign(x):
        a = xp.astype(array_like(np.ascontiguousarray(matrix.T), x), x.dtype)
    else:
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


_NUMPY_PAD_MODES = {"reflect": "reflect", "replicate": "edge"}


def _pad_kernel(x: Any, padding: tuple[int, ...], nd: int, mode: str) -> np.ndarray:
    numpy = not foreign(x)
    x = np.asarray(x) if numpy else x
    _check_pad_input(x, nd)
    indices = _pad_indices(tuple(x.shape), padding, nd, mode)
    if numpy and min(padding) >= 0:  # np.pad copies x once, fills the borders
        widths = [(0, 0)] * (x.ndim - nd) + _pad_pairs(padding, nd)
        # (np.pad keeps a transposed input's layout; the op's result is C-ordered.)
        return np.ascontiguousarray(np.pad(x, widths, mode=_NUMPY_PAD_MODES[mode]))
    xp = backend.namespace_of(x)
    for axis, index in zip(range(x.ndim - nd, x.ndim), indices):
        x = xp.take(x, array_like(index, x), axis=axis)
    return np.ascontiguousarray(x) if numpy else x


def reflection_pad_kernel(x: Any, padding: tuple[int, ...], nd: int) -> np.ndarray:
    """reflection_pad{nd}d: the border mirrored, without repeating the edge."""
    return _pad_kernel(x, padding, nd, "reflect")


def replication_pad_kernel(x: Any, padding: tuple[int, ...], nd: int) -> np.ndarray:
    """replication_pad{nd}d: the edge value repeated."""
    return _pad_kernel(x, padding, nd, "replicate")


def _pad_backward(
    grad: Any, sizes: tuple[int, ...], padding: tuple[int, ...], mode: str
) -> Any:
    """Each padded position's gradient added back to the position it copied."""
    nd = len(padding) // 2
    indices = _pad_indices(tuple(sizes), padding, nd, mode)
    shape = sizes[len(sizes) - nd :]
    if isinstance(grad, np.ndarray) and min(padding) >= 0:
        return _take_adjoint(grad, indices, _pad_pairs(padding, nd))
    return _separable_adjoint(grad, [_one_hot(i, s) for i, s in zip(indices, shape)])


def _take_adjoint(
    grad: np.ndarray, indices: list[np.ndarray], pairs: list[tuple[int, int]]
) -> np.ndarray:
    """The adjoint of `np.take(x, index, axis)` along the last axes, for a
    padding's indices (the identity between the borders): the middle of the
    first axis copied, then axis by axis each border added, in place, where it
    was read, and the middle kept (a view)."""
    total = grad
    first = grad.ndim - len(indices)
    for axis, (index, (before, after)) in enumerate(zip(indices, pairs), first):
        current = total
        size = current.shape[axis] - before - after
        middle = [slice(None)] * grad.ndim
        middle[axis] = slice(before, before + size)
        total = current[tuple(middle)]
        if current is grad:
            total = total.copy()
        into, read = np.moveaxis(total, axis, 0), np.moveaxis(current, axis, 0)
        for border in (slice(0, before), slice(before + size, None)):
            where = index[border]
            if np.unique(where).size == where.size:
                into[where] += read[border]
                continue
            for position in np.unique(where):  # replication: one edge, summed
                into[position] += read[border][where == position].sum(axis=0)
    return np.ascontiguousarray(total)


def reflection_pad_backward(
    grad: Any, sizes: tuple[int, ...], padding: tuple[int, ...]
) -> Any:
    return _pad_backward(grad, sizes, padding, "reflect")


def replication_pad_backward(
    grad: Any, sizes: tuple[int, ...], padding: tuple[int, ...]
) -> Any:
    return _pad_backward(grad, sizes, padding, "replicate")


# -- upsampling ----------------------------------------------------------------------
# Each output position along an axis reads a few input positions ("taps"), each
# with a weight: one tap of weight 1 for nearest, two for linear, four for cubic
# (indices clamped at the border), with PyTorch's source-index arithmetic.

_CUBIC_A = -0.75


def _linear_scale(
    size: int, out: int, align_corners: bool, scale: float | None
) -> float:
    if align_corners:
        return (size - 1) / (out - 1) if out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else size / out


def _source_index(
    scale: float, out: int, align_corners: bool, cubic: bool
) -> np.ndarray:
    dst = np.arange(out, dtype=np.float64)
    if align_corners:
        return scale * dst
    source = scale * (dst + 0.5) - 0.5
    return source if cubic else np.maximum(source, 0.0)


def _nearest_taps(size: int, out: int, scale: float | None) -> list[tuple[Any, Any]]:
    dst = np.arange(out)
    if out == size:
        return [(dst, None)]
    if out == 2 * size:
        return [(dst >> 1, None)]
    # PyTorch computes the nearest source in float32.
    step = np.float32(1.0 / scale if scale is not None and scale > 0 else size / out)
    index = np.floor(dst.astype(np.float32) * step).astype(np.int64)
    return [(np.minimum(index, size - 1), None)]


def _nearest_exact_taps(
    size: int, out: int, scale: float | None
) -> list[tuple[Any, Any]]:
    """nearest-exact: the source pixel whose centre is nearest, floor((dst +
    0.5) * size / out), in float32 as PyTorch computes it."""
    step = np.float32(1.0 / scale if scale is not None and scale > 0 else size / out)
    centre = (np.arange(out).astype(np.float32) + np.float32(0.5)) * step
    return [(np.minimum(np.floor(centre).astype(np.int64), size - 1), None)]


def _linear_taps(
    size: int, out: int, align_corners: bool, scale: float | None
) -> list[tuple[Any, Any]]:
    source = _source_index(
        _linear_scale(size, out, align_corners, scale), out, align_corners, False
    )
    low = np.minimum(np.floor(source).astype(np.int64), size - 1)
    weight = np.clip(source - low, 0.0, 1.0)
    high = low + (low < size - 1)
    return [(low, 1.0 - weight), (high, weight)]


def _cubic_weights(t: np.ndarray) -> list[np.ndarray]:
    """Keys' cubic convolution (a = -0.75) at distances 1 + t, t, 1 - t, 2 - t."""
    a = _CUBIC_A

    def near(x: np.ndarray) -> np.ndarray:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _cubic_taps(
    size: int, out: int, align_corners: bool, scale: float | None
) -> list[tuple[Any, Any]]:
    source = _source_index(
        _linear_scale(size, out, align_corners, scale), out, align_corners, True
    )
    start = np.floor(source).astype(np.int64)
    weights = _cubic_weights(source - start)
    return [(np.clip(start - 1 + k, 0, size - 1), weights[k]) for k in range(4)]


def _taps(
    mode: str, size: int, out: int, align_corners: bool, scale: float | None
) -> list[tuple[Any, Any]]:
    if mode == "nearest":
        return _nearest_taps(size, out, scale)
    if mode == "nearest-exact":
        return _nearest_exact_taps(size, out, scale)
    if mode == "cubic":
        return _cubic_taps(size, out, align_corners, scale)
    return _linear_taps(size, out, align_corners, scale)


def _taps_matrix(taps: list[tuple[Any, Any]], size: int) -> np.ndarray:
    index = taps[0][0]
    matrix = np.zeros((index.size, size))
    rows = np.arange(index.size)
    for where, weight in taps:
        np.add.at(matrix, (rows, where), 1.0 if weight is None else weight)
    return matrix


def _check_upsample(
    sizes: tuple[int, ...], output_size: tuple[int, ...], nd: int
) -> None:
    """PyTorch's upsample_{1,2,3}d_common_check."""
    if len(output_size) != nd:
        raise RuntimeError(
            f"It is expected output_size equals to {nd}, but got size "
            f"{len(output_size)}"
        )
    if len(sizes) != nd + 2:
        raise RuntimeError(
            f"It is expected input_size equals to {nd + 2}, but got size {len(sizes)}"
        )
    names = "DHW"[3 - nd :]
    spatial = sizes[2:]
    if min(spatial) <= 0 or min(output_size) <= 0:
        given = ", ".join(f"{n}: {s}" for n, s in zip(names, spatial))
        wanted = ", ".join(f"{n}: {s}" for n, s in zip(names, output_size))
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input "
            f"({given}) output ({wanted})"
        )


def _upsample_taps(
    sizes: tuple[int, ...],
    output_size: tuple[int, ...],
    mode: str,
    align_corners: bool,
    scales: tuple[float | None, ...],
) -> list[list[tuple[Any, Any]]]:
    nd = len(scales)
    _check_upsample(tuple(sizes), tuple(output_size), nd)
    spatial = sizes[len(sizes) - nd :]
    return [
        _taps(mode, size, out, align_corners, scale)
        for size, out, scale in zip(spatial, output_size, scales)
    ]


def _upsample(
    x: Any,
    output_size: tuple[int, ...],
    mode: str,
    align_corners: bool,
    scales: tuple[float | None, ...],
) -> np.ndarray:
    """x resampled to `output_size` over its last len(scales) axes, axis by axis."""
    numpy = not foreign(x)
    x = np.asarray(x) if numpy else x
    nd = len(scales)
    if x.ndim != nd + 2 or 0 in x.shape[1:]:
        raise RuntimeError(
            f"Non-empty {nd + 2}D data tensor expected but got a tensor with sizes "
            f"{_sizes(x.shape)}"
        )
    per_axis = _upsample_taps(tuple(x.shape), output_size, mode, align_corners, scales)
    if not numpy:
        return _resampled(x, per_axis)
    for axis, taps in zip(range(2, x.ndim), per_axis):
        total = None
        for where, weight in taps:
            part = np.take(x, where, axis=axis)
            if weight is not None:
                shape = [1] * x.ndim
                shape[axis] = weight.size
                part = part * weight.astype(x.dtype).reshape(shape)
            total = part if total is None else total + part
        x = total
    return np.ascontiguousarray(x)


def _resampled(x: Any, per_axis: list[list[tuple[Any, Any]]]) -> Any:
    """_upsample for another backend's array: the same taps, through xp.take."""
    xp = backend.namespace_of(x)
    for axis, taps in zip(range(2, x.ndim), per_axis):
        parts = []
        for where, weight in taps:
            part = xp.take(x, array_like(where, x), axis=axis)
            if weight is not None:
                shape = [1] * x.ndim
                shape[axis] = weight.size
                weight = xp.reshape(array_like(weight, x), tuple(shape))
                part = part * xp.astype(weight, x.dtype)
            parts.append(part)
        x = sum(parts[1:], parts[0])
    return x


def _upsample_backward(
    grad: Any,
    sizes: tuple[int, ...],
    output_size: tuple[int, ...],
    mode: str,
    align_corners: bool,
    scales: tuple[float | None, ...],
) -> Any:
    """The adjoint of upsample_kernel: each output's gradient spread back over
    the inputs it read, with the same weights."""
    per_axis = _upsample_taps(sizes, output_size, mode, align_corners, scales)
    spatial = sizes[len(sizes) - len(scales) :]
    matrices = [_taps_matrix(t, s) for t, s in zip(per_axis, spatial)]
    return _separable_adjoint(grad, matrices)


def upsample_nearest_kernel(
    x: Any, output_size: tuple[int, ...], scales: list[float | None]
) -> np.ndarray:
    return _upsample(x, output_size, "nearest", False, tuple(scales))


def upsample_nearest_exact_kernel(
    x: Any, output_size: tuple[int, ...], scales: list[float | None]
) -> np.ndarray:
    return _upsample(x, output_size, "nearest-exact", False, tuple(scales))


def upsample_linear_kernel(
    x: Any,
    output_size: tuple[int, ...],
    align_corners: bool,
    scales: list[float | None],
) -> np.ndarray:
    """Linear, bilinear or trilinear by the number of scales."""
    return _upsample(x, output_size, "linear", align_corners, tuple(scales))


def upsample_bicubic_kernel(
    x: Any,
    output_size: tuple[int, ...],
    align_corners: bool,
    scales: list[float | None],
) -> np.ndarray:
    return _upsample(x, output_size, "cubic", align_corners, tuple(scales))


def upsample_nearest_backward(
    grad: Any,
    sizes: tuple[int, ...],
    output_size: tuple[int, ...],
    scales: list[float | None],
) -> Any:
    return _upsample_backward(grad, sizes, output_size, "nearest", False, tuple(scales))


def upsample_nearest_exact_backward(
    grad: Any,
    sizes: tuple[int, ...],
    output_size: tuple[int, ...],
    scales: list[float | None],
) -> Any:
    return _upsample_backward(
        grad, sizes, output_size, "nearest-exact", False, tuple(scales)
    )


def upsample_linear_backward(
    grad: Any,
    sizes: tuple[int, ...],
    output_size: tuple[int, ...],
    align_corners: bool,
    scales: list[float | None],
) -> Any:
    mode = "linear"
    return _upsample_backward(
        grad, sizes, output_size, mode, align_corners, tuple(scales)
    )


def upsample_bicubic_backward(
    grad: Any,
    sizes: tuple[int, ...],
    output_size: tuple[int, ...],
    align_corners: bool,
    scales: list[float | None],
) -> Any:
    mode = "cubic"
    return _upsample_backward(
        grad, sizes, output_size, mode, align_corners, tuple(scales)
    )


# -- pixel and channel shuffles ------------------------------------------------------


def pixel_shuffle_kernel(x: Any, upscale_factor: int) -> np.ndarray:
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    x, r = x if foreign(x) else np.asarray(x), upscale_factor
    if x.ndim < 3:
        raise RuntimeError(
            "pixel_shuffle expects input to have at least 3 dimensions, but got input "
            f"with {x.ndim} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(
            f"pixel_shuffle expects a positive upscale_factor, but got {r}"
        )
    *batch, c, h, w = x.shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by "
            f"the square of upscale_factor, but input.size(-3)={c} is not divisible "
            f"by {r * r}"
        )
    n = len(batch)
    shape = (*batch, c // (r * r), r, r, h, w)
    axes = (*range(n + 1), n + 3, n + 1, n + 4, n + 2)
    return _permuted(x, shape, axes, (*batch, c // (r * r), h * r, w * r))


def _permuted(
    x: Any, shape: tuple[int, ...], axes: tuple[int, ...], out: tuple[int, ...]
) -> Any:
    """x seen as `shape`, its axes permuted, then seen as `out` (a copy)."""
    if type(x) is np.ndarray:
        return np.ascontiguousarray(x.reshape(shape).transpose(axes)).reshape(out)
    xp = backend.namespace_of(x)
    return xp.reshape(xp.permute_dims(xp.reshape(x, shape), axes), out)


def pixel_unshuffle_kernel(x: Any, downscale_factor: int) -> np.ndarray:
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    x, r = x if foreign(x) else np.asarray(x), downscale_factor
    if x.ndim < 3:
        raise RuntimeError(
            "pixel_unshuffle expects input to have at least 3 dimensions, but got "
            f"input with {x.ndim} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(
            f"pixel_unshuffle expects a positive downscale_factor, but got {r}"
        )
    *batch, c, h, w = x.shape
    for name, axis, size in (("height", -2, h), ("width", -1, w)):
        if size % r:
            raise RuntimeError(
                f"pixel_unshuffle expects {name} to be divisible by downscale_factor, "
                f"but input.size({axis})={size} is not divisible by {r}"
            )
    n = len(batch)
    shape = (*batch, c, h // r, r, w // r, r)
    axes = (*range(n + 1), n + 2, n + 4, n + 1, n + 3)
    return _permuted(x, shape, axes, (*batch, c * r * r, h // r, w // r))


def pixel_shuffle(x: Any, upscale_factor: int) -> Any:
    return array_namespace(x).pixel_shuffle(x, upscale_factor)


def pixel_unshuffle(x: Any, downscale_factor: int) -> Any:
    return array_namespace(x).pixel_unshuffle(x, downscale_factor)


def channel_shuffle_kernel(x: Any, groups: int) -> np.ndarray:
    """(N, g k, *) -> (N, k g, *): channel `i k + j` goes to `j g + i`."""
    x = x if foreign(x) else np.asarray(x)
    if x.ndim <= 2:
        raise RuntimeError(
            f"channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"{_sizes(x.shape)}"
        )
    if groups <= 0:
        raise RuntimeError(
            "Number of groups to divide channels in must be positive. Value of "
            f"groups:{groups}"
        )
    n, c = x.shape[:2]
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and "
            f"{groups} groups."
        )
    if type(x) is np.ndarray:
        y = x.reshape(n, groups, c // groups, *x.shape[2:]).swapaxes(1, 2)
        return np.ascontiguousarray(y).reshape(x.shape)
    shape = (n, groups, c // groups, *x.shape[2:])
    axes = (0, 2, 1, *range(3, x.ndim + 1))
    return _permuted(x, shape, axes, tuple(x.shape))


def channel_shuffle_backward(grad: Any, groups: int) -> Any:
    """The inverse shuffle: by the other factor of the channels."""
    return array_namespace(grad).channel_shuffle(grad, grad.shape[1] // groups)


# -- sliding blocks: im2col / col2im (F.unfold / F.fold) and Tensor.unfold ----------


def _check_blocks(
    kernel_size: tuple[int, ...],
    dilation: tuple[int, ...],
    padding: tuple[int, ...],
    stride: tuple[int, ...],
) -> None:
    checks = (
        ("kernel size should be greater than zero", "kernel", kernel_size, 1),
        ("dilation should be greater than zero", "dilation", dilation, 1),
        ("padding should be non-negative", "pad", padding, 0),
        ("stride should be greater than zero", "stride", stride, 1),
    )
    for text, name, (height, width), least in checks:
        if height < least or width < least:
            raise RuntimeError(
                f"{text}, but got {name}_height: {height} {name}_width: {width}"
            )


def _blocks(
    size: tuple[int, int],
    kernel_size: tuple[int, ...],
    dilation: tuple[int, ...],
    padding: tuple[int, ...],
    stride: tuple[int, ...],
) -> tuple[int, int]:
    """How many sliding blocks fit along height and width."""
    _check_blocks(kernel_size, dilation, padding, stride)
    out = tuple(
        (s + 2 * p - d * (k - 1) - 1) // st + 1
        for s, k, d, p, st in zip(size, kernel_size, dilation, padding, stride)
    )
    if min(out) < 1:
        raise RuntimeError(
            f"Given input with spatial size ({size[0]}, {size[1]}), "
            f"kernel_size=({kernel_size[0]}, {kernel_size[1]}), "
            f"dilation=({dilation[0]}, {dilation[1]}), "
            f"padding=({padding[0]}, {padding[1]}), calculated shape of the array "
            f"of sliding blocks as ({out[0]}, {out[1]}), but its components must be "
            "at least one."
        )
    return out[0], out[1]


def _block_slices(
    ki: int,
    kj: int,
    out: tuple[int, int],
    dilation: tuple[int, ...],
    stride: tuple[int, ...],
) -> tuple[slice, slice]:
    top, left = ki * dilation[0], kj * dilation[1]
    return (
        slice(top, top + stride[0] * (out[0] - 1) + 1, stride[0]),
        slice(left, left + stride[1] * (out[1] - 1) + 1, stride[1]),
    )


def im2col_kernel(
    x: Any,
    kernel_size: tuple[int, ...],
    dilation: tuple[int, ...],
    padding: tuple[int, ...],
    stride: tuple[int, ...],
) -> np.ndarray:
    """(N, C, H, W) -> (N, C kh kw, L): every sliding block as a column."""
    x = np.asarray(x)
    # Sizes 1 and 2 are read before the rank (size 2 only when size 1 is not 0),
    # so a 1-D or 2-D input fails reading them, with PyTorch's IndexError.
    nonempty = _size_at(x, 1) != 0 and _size_at(x, 2) != 0
    if not nonempty or x.ndim not in (3, 4) or 0 in x.shape[-3:]:
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
            f"other non-zero dimensions for input, but got: {_sizes(x.shape)}"
        )
    out = _blocks(x.shape[-2:], kernel_size, dilation, padding, stride)
    pad = [(0, 0)] * (x.ndim - 2) + [(padding[0], padding[0]), (padding[1], padding[1])]
    padded = np.pad(x, pad)
    kh, kw = kernel_size
    columns = np.empty(x.shape[:-2] + (kh, kw) + out, dtype=x.dtype)
    for ki in range(kh):
        for kj in range(kw):
            rows, cols = _block_slices(ki, kj, out, dilation, stride)
            columns[..., ki, kj, :, :] = padded[..., rows, cols]
    c = x.shape[-3]
    return columns.reshape(x.shape[:-3] + (c * kh * kw, out[0] * out[1]))


def col2im_kernel(
    x: Any,
    output_size: tuple[int, ...],
    kernel_size: tuple[int, ...],
    dilation: tuple[int, ...],
    padding: tuple[int, ...],
    stride: tuple[int, ...],
) -> np.ndarray:
    """(N, C kh kw, L) -> (N, C, H, W): the columns summed back into place."""
    x = np.asarray(x)
    if x.ndim not in (2, 3) or 0 in x.shape[-2:]:
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
            f"size and non-zero dimensions for input, but got: {_sizes(x.shape)}"
        )
    kh, kw = kernel_size
    _check_blocks(kernel_size, dilation, padding, stride)
    if x.shape[-2] % (kh * kw):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={x.shape[-2]} and "
            f"kernel_size=({kh}, {kw})."
        )
    out = _blocks(tuple(output_size), kernel_size, dilation, padding, stride)
    if out[0] * out[1] != x.shape[-1]:
        raise RuntimeError(
            f"Given output_size=({output_size[0]}, {output_size[1]}), "
            f"kernel_size=({kh}, {kw}), dilation=({dilation[0]}, {dilation[1]}), "
            f"padding=({padding[0]}, {padding[1]}), stride=({stride[0]}, "
            f"{stride[1]}), expected size of input's dimension 2 to match the "
            f"calculated number of sliding blocks {out[0]} * {out[1]} = "
            f"{out[0] * out[1]}, but got input.size(2)={x.shape[-1]}."
        )
    c = x.shape[-2] // (kh * kw)
    columns = x.reshape(x.shape[:-2] + (c, kh, kw) + out)
    h, w = output_size
    padded = np.zeros(
        x.shape[:-2] + (c, h + 2 * padding[0], w + 2 * padding[1]), dtype=x.dtype
    )
    for ki in range(kh):
        for kj in range(kw):
            rows, cols = _block_slices(ki, kj, out, dilation, stride)
            padded[..., rows, cols] += columns[..., ki, kj, :, :]
    return np.ascontiguousarray(
        padded[..., padding[0] : padding[0] + h, padding[1] : padding[1] + w]
    )


def im2col(
    x: Any,
    kernel_size: tuple[int, ...],
    dilation: tuple[int, ...],
    padding: tuple[int, ...],
    stride: tuple[int, ...],
) -> Any:
    return array_namespace(x).im2col(x, kernel_size, dilation, padding, stride)


def col2im(
    x: Any,
    output_size: tuple[int, ...],
    kernel_size: tuple[int, ...],
    dilation: tuple[int, ...],
    padding: tuple[int, ...],
    stride: tuple[int, ...],
) -> Any:
    xp = array_namespace(x)
    return xp.col2im(x, output_size, kernel_size, dilation, padding, stride)


def unfold_kernel(x: Any, dimension: int, size: int, step: int) -> Any:
    """Tensor.unfold: a view with every window of `size` along `dimension` (every
    `step`-th) in a new last dim."""
    x = np.asarray(x)
    if x.ndim == 0:
        if size > 1:
            raise RuntimeError(
                f"maximum size for tensor at dimension 0 is 1 but size is {size}"
            )
        return np.expand_dims(x, 0)
    axis = _dim(dimension, x.ndim, "unfold")
    if size > x.shape[axis]:
        raise RuntimeError(
            f"maximum size for tensor at dimension {axis} is {x.shape[axis]} but "
            f"size is {size}"
        )
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    windows = np.lib.stride_tricks.sliding_window_view(
        x, size, axis=axis, writeable=x.flags.writeable
    )
    index = [slice(None)] * x.ndim
    index[axis] = slice(None, None, step)
    return windows[tuple(index)]


def unfold_backward_kernel(
    grad: Any, sizes: tuple[int, ...], dimension: int, size: int, step: int
) -> np.ndarray:
    """Each window's gradient added back to the positions it covers."""
    grad = np.asarray(grad)
    total = np.zeros(tuple(sizes), dtype=grad.dtype)
    if not sizes:
        return np.ascontiguousarray(grad.reshape(()))
    axis = _dim(dimension, len(sizes), "unfold")
    windows = np.lib.stride_tricks.sliding_window_view(
        total, size, axis=axis, writeable=True
    )
    index = [slice(None)] * len(sizes)
    count = grad.shape[axis]
    if step >= size:
        index[axis] = slice(None, None, step)
        windows[tuple(index)][...] += grad  # windows do not overlap
        return total
    if size < count:  # overlapping windows: one offset in the windows at a time
        for j in range(size):
            index[axis] = slice(j, j + step * (count - 1) + 1, step)
            total[tuple(index)] += grad[..., j]
        return total
    for k in range(count):  # or one window at a time, whichever are fewer
        index[axis] = k * step
        windows[tuple(index)] += np.take(grad, k, axis=axis)
    return total


def unfold(x: Any, dimension: int, size: int, step: int) -> Any:
    return array_namespace(x).unfold(x, dimension, size, step)


def unfold_backward(
    grad: Any, sizes: tuple[int, ...], dimension: int, size: int, step: int
) -> Any:
    return array_namespace(grad).unfold_backward(grad, sizes, dimension, size, step)


register_numpy_kernels(
    pixel_shuffle=pixel_shuffle_kernel,
    pixel_unshuffle=pixel_unshuffle_kernel,
    channel_shuffle=channel_shuffle_kernel,
    im2col=im2col_kernel,
    col2im=col2im_kernel,
    unfold=unfold_kernel,
    unfold_backward=unfold_backward_kernel,
)
