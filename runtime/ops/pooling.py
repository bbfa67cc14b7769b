"""Pooling beyond 2-d windows: 3-d max, average and adaptive average pooling,
adaptive max pooling
(2-d and 3-d), max unpooling and fractional max pooling, and their backward
helpers.

Every max pooling returns, beside the values, each window's argmax as its flat
position in the input's last `dims` dims (`(d * H + h) * W + w`), as PyTorch does;
the gradient goes back there (`max_pool_backward`, a scatter-add whose own
backward is a gather), and max unpooling writes there (its backward gathers).
Windows are scanned in row-major order with PyTorch's rule `val > max ||
isnan(val)`: the first of equal values, the last NaN. Average pooling is
separable, one matrix per axis (windows.avg_pool_matrix), so its backward is
the product with their transposes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime.ops.common import _constant, _raw, _sizes, _zeros
from yamlgrad.runtime.ops.windows import (
    _lowest,
    avg_pool_matrix,
    expand_param,
    first_zeros,
    pool_output_size,
    window_argmax,
)
from yamlgrad.runtime.ops.namespace import array_namespace
from yamlgrad.runtime.ops.pooling2d import adaptive_avg_pool_matrix
from yamlgrad.runtime.ops.reductions import _numpy_dtype

KERNELS = (
    "max_pool3d_with_indices_kernel",
    "avg_pool3d_kernel",
    "adaptive_avg_pool3d_kernel",
    "adaptive_max_pool_kernel",
    "max_unpool_kernel",
    "fractional_max_pool_kernel",
)
BACKWARD_HELPERS = (
    "max_pool_backward",
    "max_unpool_backward",
    "avg_pool3d_backward",
    "adaptive_avg_pool3d_backward",
)


def _strides_of(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major element strides of `sizes`."""
    return tuple(math.prod(sizes[i + 1 :]) for i in range(len(sizes)))


def _check_pool_params(
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
) -> None:
    """pooling_output_shape's checks, axis by axis."""
    for k, s, p, d in zip(kernel, stride, padding, dilation):
        if k <= 0 or s <= 0 or d <= 0:
            raise RuntimeError(
                "kernel size, stride and dilation should be greater than zero, but "
                f"got kernel_size: {k} stride: {s} dilation: {d}"
            )
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > math.trunc((d * (k - 1) + 1) / 2):
            raise RuntimeError(
                "pad should be at most half of effective kernel size, but got "
                f"pad={p}, kernel_size={k} and dilation={d}"
            )


def _pool3d_output(
    x: np.ndarray,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    ceil_mode: bool,
) -> tuple[int, ...]:
    if x.ndim not in (4, 5) or 0 in x.shape[-4:]:
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    _check_pool_params(kernel, stride, padding, dilation)
    sizes = x.shape[-3:]
    out = tuple(
        pool_output_size(n, k, s, p, d, ceil_mode)
        for n, k, s, p, d in zip(sizes, kernel, stride, padding, dilation)
    )
    if min(out) < 1:
        given = "x".join(str(n) for n in x.shape[-4:])
        got = "x".join(str(n) for n in (x.shape[-4],) + out)
        raise RuntimeError(
            f"Given input size: ({given}). Calculated output size: ({got}). "
            "Output size is too small"
        )
    return out


def _pool3d_arguments(
    kernel_size: tuple[int, ...], stride: tuple[int, ...], *rest: tuple[int, ...]
) -> tuple[tuple[int, ...], ...]:
    kernel = expand_param(kernel_size, 3)
    stride = expand_param(stride, 3) if len(stride) else kernel
    return (kernel, stride) + tuple(expand_param(r, 3) for r in rest)


def max_pool3d_with_indices_kernel(
    x: Any,
    kernel_size: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    ceil_mode: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices) of 3-d max pooling: one strided view per kernel offset
    (no copy of the windows), compared in order."""
    x = np.asarray(x)
    kernel, stride, padding, dilation = _pool3d_arguments(
        kernel_size, stride, padding, dilation
    )
    out = _pool3d_output(x, kernel, stride, padding, dilation, ceil_mode)
    sizes = x.shape[-3:]
    right = [
        max(0, (o - 1) * s + d * (k - 1) + 1 - p - n)
        for o, s, d, k, p, n in zip(out, stride, dilation, kernel, padding, sizes)
    ]
    widths = [(0, 0)] * (x.ndim - 3) + list(zip(padding, right))
    padded = np.pad(x, widths, constant_values=_lowest(x.dtype))
    strides = _strides_of(sizes)
    views, steps = [], []
    for offset in np.ndindex(*kernel):
        begin = [o * d for o, d in zip(offset, dilation)]
        window = tuple(
            slice(b, b + s * (o - 1) + 1, s) for b, s, o in zip(begin, stride, out)
        )
        views.append(padded[(Ellipsis,) + window])
        steps.append(sum(b * m for b, m in zip(begin, strides)))
    values, arg = window_argmax(views)
    corner = sum(
        np.reshape((np.arange(o) * s - p) * m, [-1 if i == a else 1 for i in range(3)])
        for a, (o, s, p, m) in enumerate(zip(out, stride, padding, strides))
    )
    indices = np.asarray(steps, dtype=np.int64).take(arg)
    indices += corner
    first_zeros(values, indices, x, 3)
    return values, indices


def max_pool_backward(
    grad: Any, indices: Any, sizes: tuple[int, ...], dims: int
) -> Any:
    """Each window's gradient added at its argmax, in an input of `sizes` whose
    last `dims` dims are pooled; on Tensors a scatter_add (its backward a gather)."""
    planes = math.prod(sizes[:-dims])
    plane = math.prod(sizes[-dims:])
    index = _raw(indices)
    index = np.reshape(index, (planes, math.prod(index.shape[-dims:])))
    xp = array_namespace(grad)
    flat = xp.reshape(grad, (planes, index.shape[1]))
    if not isinstance(flat, np.ndarray):
        total = xp.scatter_add(_zeros((planes, plane), grad), 1, index, flat)
        return xp.reshape(total, sizes)
    total = np.zeros(planes * plane, dtype=flat.dtype)
    rows = _flat_positions(index, plane).ravel()
    np.add.at(total, rows, flat.ravel())  # windows may share an argmax
    return total.reshape(sizes)


def _avg_pool3d_matrices(
    sizes: tuple[int, ...],
    kernel_size: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
    dtype: np.dtype,
) -> list[np.ndarray]:
    """(A_d, A_h, A_w) of avg_pool3d, after PyTorch's checks."""
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    kernel, stride, padding = _pool3d_arguments(kernel_size, stride, padding)
    _pool3d_output(
        np.broadcast_to(0.0, sizes), kernel, stride, padding, (1,) * 3, ceil_mode
    )
    matrices = [
        avg_pool_matrix(
            n, k, s, p, ceil_mode, count_include_pad, divisor_override, dtype
        )
        for n, k, s, p in zip(sizes[-3:], kernel, stride, padding)
    ]
    if divisor_override is not None:
        matrices[0] = matrices[0] / np.asarray(divisor_override, dtype=dtype)
    return matrices


def _separable3d(x: Any, matrices: list[np.ndarray]) -> Any:
    """x's last three dims multiplied by one matrix each: M_d, M_h, M_w."""
    xp = array_namespace(x)
    m_d, m_h, m_w = matrices
    m_d, m_h, m_w_t = (_constant(np.ascontiguousarray(m), x) for m in (m_d, m_h, m_w.T))
    y = xp.matmul(m_h, xp.matmul(x, m_w_t))
    lead = tuple(y.shape[:-3])
    depth, rows, cols = tuple(y.shape[-3:])
    y = xp.matmul(m_d, xp.reshape(y, lead + (depth, rows * cols)))
    return xp.reshape(y, lead + (matrices[0].shape[0], rows, cols))


def avg_pool3d_kernel(
    x: Any,
    kernel_size: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> np.ndarray:
    """The average of each 3-d window, as three matrix products."""
    matrices = _avg_pool3d_matrices(
        tuple(x.shape),
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
        _numpy_dtype(x),
    )
    out = _separable3d(x, matrices)
    return np.ascontiguousarray(out) if type(out) is np.ndarray else out


def avg_pool3d_backward(
    grad: Any,
    sizes: tuple[int, ...],
    kernel_size: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Any:
    """The adjoint of avg_pool3d: the products with the transposed matrices."""
    matrices = _avg_pool3d_matrices(
        tuple(sizes),
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
        _numpy_dtype(_raw(grad)),
    )
    return _separable3d(grad, [m.T for m in matrices])


def _adaptive_avg_pool3d_matrices(
    sizes: tuple[int, ...], output_size: tuple[int, ...], dtype: np.dtype, name: str
) -> list[np.ndarray]:
    """(A_d, A_h, A_w) of adaptive_avg_pool3d, after PyTorch's checks (`name`
    says which of the forward and the backward checks)."""
    if name == "adaptive_avg_pool3d" and len(sizes) not in (4, 5):
        raise RuntimeError(
            f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {_sizes(sizes)}"
        )
    for i in range(1, len(sizes)):  # the batch dim may be empty
        if sizes[i] == 0:
            what = "input" if name == "adaptive_avg_pool3d" else "grad_output"
            raise RuntimeError(
                f"{name}(): Expected {what} to have non-zero size for non-batch "
                f"dimensions, but {what} has sizes {_sizes(sizes)} with dimension "
                f"{i} being empty"
            )
    if len(output_size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    return [
        adaptive_avg_pool_matrix(n, o, dtype) for n, o in zip(sizes[-3:], output_size)
    ]


def adaptive_avg_pool3d_kernel(x: Any, output_size: tuple[int, ...]) -> np.ndarray:
    """The mean of each adaptive 3-d window, as three matrix products."""
    matrices = _adaptive_avg_pool3d_matrices(
        tuple(x.shape), tuple(output_size), _numpy_dtype(x), "adaptive_avg_pool3d"
    )
    out = _separable3d(x, matrices)
    return np.ascontiguousarray(out) if type(out) is np.ndarray else out


def adaptive_avg_pool3d_backward(grad: Any, sizes: tuple[int, ...]) -> Any:
    """The adjoint of adaptive_avg_pool3d: the transposed matrices' products."""
    matrices = _adaptive_avg_pool3d_matrices(
        tuple(sizes),
        tuple(grad.shape[-3:]),
        _numpy_dtype(_raw(grad)),
        "adaptive_avg_pool3d_backward",
    )
    return _separable3d(grad, [m.T for m in matrices])


def _window_indices(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, int]:
    """[..., out, K] positions of windows [start, end) along one axis, K the widest
    window; a narrower window repeats its last position (a repeat never wins a
    strict comparison, and a NaN repeated is the same element)."""
    width = int(np.max(ends - starts)) if starts.size else 1
    positions = starts[..., None] + np.arange(width)
    return np.minimum(positions, ends[..., None] - 1), width


def _max_over_windows(
    x: np.ndarray, per_axis: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices) of the max over windows of x's last len(per_axis) dims,
    given each axis's [P..., out, K] positions (P: leading dims they vary with,
    or none): the windows gathered as [..., out..., K...] by one fancy index,
    the max over them under PyTorch's rule, and its flat position in the pooled
    dims, read from the positions at the argmax."""
    dims = len(per_axis)
    lead = x.ndim - dims
    rank = lead + 2 * dims
    index = []
    for axis, positions in enumerate(per_axis):
        # [P..., out, K] -> broadcastable to [lead..., out_0, .., K_0, ..]
        extra = positions.ndim - 2
        shape = [1] * rank
        shape[lead - extra : lead] = positions.shape[:extra]
        shape[lead + axis] = positions.shape[-2]
        shape[lead + dims + axis] = positions.shape[-1]
        index.append(positions.reshape(shape))
    leading = tuple(
        np.arange(n).reshape([-1 if i == j else 1 for i in range(rank)])
        for j, n in enumerate(x.shape[:lead])
    )
    windows = x[leading + tuple(index)]
    offsets = windows.shape[lead + dims :]
    windows = windows.reshape(windows.shape[: lead + dims] + (math.prod(offsets),))
    views = [windows[..., j] for j in range(windows.shape[-1])]
    best, arg = window_argmax(views)
    indices = np.zeros(arg.shape, dtype=np.int64)
    strides = _strides_of(x.shape[-dims:])
    for axis, (positions, k) in enumerate(zip(index, np.unravel_index(arg, offsets))):
        at = k.reshape(k.shape + (1,) * dims)
        picked = np.take_along_axis(positions, at, axis=lead + dims + axis)
        indices += picked.reshape(picked.shape[: lead + dims]) * strides[axis]
    first_zeros(best, indices, x, dims)
    return best, indices


def adaptive_max_pool_kernel(
    x: Any, output_size: tuple[int, ...], dims: int
) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices) of adaptive max pooling over the last `dims` dims: window
    i of an axis of n inputs is [floor(i n / o), ceil((i + 1) n / o))."""
    x = np.asarray(x)
    name = f"adaptive_max_pool{dims}d"
    out = expand_param(output_size, dims)
    if x.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"{name}(): Expected {dims + 1}D or {dims + 2}D tensor, but got: "
            f"{_sizes(x.shape)}"
        )
    for i in range(x.ndim - dims, x.ndim):
        if x.shape[i] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {_sizes(x.shape)} with dimension "
                f"{i} being empty"
            )
    if len(out) != dims:
        raise RuntimeError(
            f"{name}(): internal error: output_size.size() must be {dims}"
        )
    bounds = []
    for n, o in zip(x.shape[-dims:], out):
        i = np.arange(o)
        bounds.append(((i * n) // o, -((-(i + 1) * n) // o)))
    widest = math.prod(int(np.max(end - start)) for start, end in bounds)
    if math.prod(out) <= widest:  # few large windows: one reduction per window
        return _max_by_window(x, bounds)
    per_axis = [_window_indices(start, end)[0] for start, end in bounds]
    return _max_over_windows(x, per_axis)


def _max_by_window(
    x: np.ndarray, bounds: list[tuple[np.ndarray, np.ndarray]]
) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices) of the max over each window [start, end) of the last
    len(bounds) dims, window by window: each window copied into one reused
    buffer, then an argmax over every plane at once (the first of equal values,
    NaN first too: where the max is NaN, the last NaN is PyTorch's)."""
    dims = len(bounds)
    lead = x.shape[:-dims]
    planes = x.reshape((-1,) + x.shape[-dims:])
    count = planes.shape[0]
    out = tuple(len(start) for start, _ in bounds)
    values = np.empty((count,) + out, dtype=x.dtype)
    indices = np.empty((count,) + out, dtype=np.int64)
    strides = _strides_of(x.shape[-dims:])
    widths = [end - start for start, end in bounds]
    buffer = np.empty(count * math.prod(int(np.max(w)) for w in widths), x.dtype)
    for cell in np.ndindex(*out):
        corner = [int(start[c]) for (start, _), c in zip(bounds, cell)]
        shape = [int(w[c]) for w, c in zip(widths, cell)]
        block = buffer[: count * math.prod(shape)].reshape([count] + shape)
        window = tuple(slice(b, b + n) for b, n in zip(corner, shape))
        np.copyto(block, planes[(slice(None),) + window])
        block = block.reshape(count, -1)
        arg = np.argmax(block, axis=1)
        best = block[np.arange(count), arg]
        nan = np.isnan(best) if x.dtype.kind == "f" else None
        if nan is not None and nan.any():
            last = block.shape[1] - 1 - np.argmax(np.isnan(block[nan, ::-1]), axis=1)
            arg[nan] = last
        values[(slice(None),) + cell] = best
        position = np.unravel_index(arg, shape)
        indices[(slice(None),) + cell] = sum(
            (p + b) * m for p, b, m in zip(position, corner, strides)
        )
    return values.reshape(lead + out), indices.reshape(lead + out)


def _fractional_starts(
    samples: np.ndarray, size: int, out: int, kernel: int
) -> np.ndarray:
    """PyTorch's generate_intervals: the window starts of one axis for each
    sample u, int((i + u) * alpha) - int(u * alpha) with alpha = (size - kernel)
    / (out - 1), the last window flush with the end."""
    starts = np.full(samples.shape + (out,), size - kernel, dtype=np.int64)
    if out > 1:
        alpha = samples.dtype.type((size - kernel) / (out - 1))
        i = np.arange(out - 1, dtype=samples.dtype)
        first = ((i + samples[..., None]) * alpha).astype(np.int64)
        starts[..., :-1] = first - (samples * alpha).astype(np.int64)[..., None]
    return starts


def fractional_max_pool_kernel(
    x: Any,
    kernel_size: tuple[int, ...],
    output_size: tuple[int, ...],
    random_samples: Any,
    dims: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices) of fractional max pooling over the last `dims` dims: the
    windows of each (batch, channel) plane start where its `random_samples` put
    them (PyTorch's order: width then height in 2-d; depth, height, width in 3-d)."""
    x, samples = np.asarray(x), np.asarray(random_samples)
    name = f"fractional_max_pool{dims}d"
    kernel = expand_param(kernel_size, dims)
    out = expand_param(output_size, dims)
    if x.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"{name}(): Expected {dims + 1}D or {dims + 2}D tensor, but got: "
            f"{_sizes(x.shape)}"
        )
    for n, o, k in zip(x.shape[-dims:], out, kernel):
        if o + k - 1 > n:
            raise RuntimeError(
                f"{name}(): pool size {k} too large relative to input size {n} "
                f"for output size {o}"
            )
    batched = x if x.ndim == dims + 2 else x[None]
    samples = samples.reshape(batched.shape[:2] + (dims,)).astype(x.dtype)
    per_axis = []
    for a, (n, o, k) in enumerate(zip(x.shape[-dims:], out, kernel)):
        sample = samples[..., 1 - a if dims == 2 else a]
        starts = _fractional_starts(sample, n, o, k)
        per_axis.append(_window_indices(starts, starts + k)[0])
    values, indices = _max_over_windows(batched, per_axis)
    if x.ndim == dims + 1:
        return values[0], indices[0]
    return values, indices


def max_unpool_kernel(
    self: Any, indices: Any, output_size: tuple[int, ...], dims: int
) -> np.ndarray:
    """Zeros of the output size with each value written at its index (a flat
    position in the last `dims` dims), as max_unpool2d/3d."""
    self, indices = np.asarray(self), np.asarray(indices)
    out = tuple(expand_param(output_size, dims))
    if indices.dtype != np.int64:
        raise RuntimeError("elements in indices should be type int64")
    if self.shape != indices.shape:
        raise RuntimeError(
            "Expected shape of indices to be same as that of the input tensor "
            f"({_sizes(self.shape)}) but got indices tensor with shape: "
            f"{_sizes(indices.shape)}"
        )
    lead = self.shape[:-dims]
    planes, plane = math.prod(lead), math.prod(out)
    per_plane = math.prod(self.shape[-dims:])  # spelt out: planes may be 0
    where = indices.reshape(planes, per_plane)
    invalid = (where < 0) | (where >= plane)
    if invalid.any():
        size = "x".join(str(n) for n in out)
        raise RuntimeError(
            f"Found an invalid max index: {int(where[invalid][0])} (output volumes "
            f"are of size {size}"
        )
    result = np.zeros(planes * plane, dtype=self.dtype)
    result[_flat_positions(where, plane)] = self.reshape(planes, per_plane)
    return result.reshape(lead + out)


def _flat_positions(where: np.ndarray, plane: int) -> np.ndarray:
    """Positions [planes, n] in each plane of `plane` elements as positions in
    all of them (one 1-d index: numpy's fast path)."""
    return where + (np.arange(where.shape[0]) * plane)[:, None]


def max_unpool_backward(grad: Any, indices: Any, dims: int) -> Any:
    """PyTorch's max_pool_double_backward: the gradient read at each index."""
    index = _raw(indices)
    lead = tuple(index.shape[:-dims])
    planes = math.prod(lead)
    xp = array_namespace(grad)
    flat = xp.reshape(grad, (planes, math.prod(grad.shape[-dims:])))
    where = np.reshape(index, (planes, math.prod(index.shape[-dims:])))
    if isinstance(flat, np.ndarray):
        picked = np.ravel(flat).take(_flat_positions(where, flat.shape[1]))
    else:
        picked = xp.gather(flat, 1, where)
    return xp.reshape(picked, tuple(index.shape))
