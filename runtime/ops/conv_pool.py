"""Convolution and pooling: the convolution kernel (any rank, transposed,
grouped) with PyTorch's argument checks, max/avg/adaptive-avg pooling, and their
backward helpers.

The backward of a convolution is itself a convolution (of the gradient with the
weight, transposed; of the input with the gradient), so on Tensors the helpers
call `ops.convolution` and a double backward runs through recorded convolutions.
Average pooling is a product with two pooling matrices, so its backward is the
product with their transposes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.ops.namespace import array_namespace, register_numpy_kernels
from yamlgrad.runtime.errors import scalar_type_name as _st
from yamlgrad.runtime.errors import type_meta_name as _tm
from yamlgrad.runtime.ops.common import (
    _as_tensor,
    _constant,
    _raw,
    _size_at,
    _sizes,
    _zeros,
)
from yamlgrad.runtime.ops.elementwise import where
from yamlgrad.runtime.ops.shapes import reshape, slice_of, transpose

KERNELS = (
    "convolution_kernel",
    "conv_tbc_kernel",
    "max_pool2d_with_indices_kernel",
    "avg_pool2d_kernel",
    "adaptive_avg_pool2d_kernel",
)
BACKWARD_HELPERS = (
    "conv_tbc_backward_input",
    "conv_tbc_backward_weight",
    "conv_tbc_backward_bias",
    "convolution_backward_input",
    "convolution_backward_weight",
    "convolution_backward_bias",
    "max_pool2d_with_indices_backward",
    "avg_pool2d_backward",
    "adaptive_avg_pool2d_backward",
)


def expand_param(value: tuple[int, ...], n: int) -> tuple[int, ...]:
    """An `int[]` argument spelled out for `n` spatial dims: `(2,)` is `(2, 2)`.
    (A lone int is already a tuple: the wrapper's int_list_arg expands it.)"""
    return tuple(value) * n if len(value) == 1 else tuple(value)


def _check_convolution(
    input: Any,
    weight: Any,
    bias: Any,
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    transposed: bool,
    output_padding: tuple[int, ...],
    groups: int,
) -> None:
    """PyTorch's checks of at::convolution's arguments, with its messages."""
    if input.ndim != weight.ndim:
        raise RuntimeError(
            f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional "
            f"weight {_sizes(weight.shape)}, but got {input.ndim}-dimensional input "
            f"of size {_sizes(input.shape)} instead"
        )
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at "
            f"dimension 0, but got weight of size [{_sizes(weight.shape)}] instead"
        )
    channels = weight.shape[0] if transposed else weight.shape[1] * groups
    if input.shape[1] != channels:
        given = "transposed=1" if transposed else f"groups={groups}"
        raise RuntimeError(
            f"Given {given}, weight of size {_sizes(weight.shape)}, expected "
            f"input{_sizes(input.shape)} to have {channels} channels, but got "
            f"{input.shape[1]} channels instead"
        )
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias is not None and (np.ndim(bias) != 1 or np.shape(bias)[0] != out_channels):
        raise RuntimeError(
            f"Given weight of size {_sizes(weight.shape)}, expected bias to be "
            f"1-dimensional with {out_channels} elements, but got bias of size "
            f"{_sizes(np.shape(bias))} instead"
        )
    kernel = weight.shape[2:]
    if transposed:
        if any(o >= s and o >= d for o, s, d in zip(output_padding, stride, dilation)):
            names = ("height", "width") if len(kernel) == 2 else ("",) * len(kernel)
            parts = [
                " ".join(f"{what}_{n}: {v}" for n, v in zip(names, values))
                for what, values in (
                    ("output_padding", output_padding),
                    ("stride", stride),
                    ("dilation", dilation),
                )
            ]
            raise RuntimeError(
                "output padding must be smaller than either stride or dilation, but "
                "got " + " ".join(parts)
            )
        return
    padded = [n + 2 * p for n, p in zip(input.shape[2:], padding)]
    effective = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    if any(n < k for n, k in zip(padded, effective)):
        raise RuntimeError(
            "Calculated padded input size per channel: ("
            + " x ".join(str(n) for n in padded)
            + "). Kernel size: ("
            + " x ".join(str(k) for k in effective)
            + "). Kernel size can't be greater than actual input size"
        )


def _conv_forward(
    x: np.ndarray,
    w: np.ndarray,
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    groups: int,
) -> np.ndarray:
    """Cross-correlation by strided windows (im2col as a view) and one tensordot
    per group: no loop over output positions."""
    spatial = w.ndim - 2
    axes = tuple(range(2, 2 + spatial))
    if any(padding):
        x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    effective = tuple(d * (k - 1) + 1 for k, d in zip(w.shape[2:], dilation))
    windows = np.lib.stride_tricks.sliding_window_view(x, effective, axis=axes)
    step = tuple(slice(None, None, s) for s in stride)
    step += tuple(slice(None, None, d) for d in dilation)
    windows = windows[(slice(None), slice(None)) + step]  # [N, C, out..., k...]
    in_per_group = w.shape[1]
    out_per_group = w.shape[0] // groups
    n, out_sizes = x.shape[0], tuple(windows.shape[2 : 2 + spatial])
    kernel_axes = tuple(range(2 + spatial, 2 + 2 * spatial))
    rows = in_per_group * math.prod(w.shape[2:])
    positions = math.prod(out_sizes)
    # im2col, copied row-major once, in the order whose innermost run is the
    # longer one: the output's last dim (a kernel smaller than the output, as
    # in a forward) or the kernel's (a weight's gradient, whose "kernel" is the
    # output gradient). Then one batched matmul per group.
    kernel_major = w.shape[-1] <= out_sizes[-1]
    if kernel_major:  # [N, C, k..., out...]: [O, C*k] @ [N, C*k, out]
        columns = np.ascontiguousarray(windows.transpose((0, 1) + kernel_axes + axes))
    else:  # [N, out..., C, k...]: [N, out, C*k] @ [C*k, O]
        columns = np.ascontiguousarray(
            windows.transpose((0,) + axes + (1,) + kernel_axes)
        )
    parts = []
    for g in range(groups):
        wg = w[g * out_per_group : (g + 1) * out_per_group]
        wg = wg.reshape((out_per_group, rows))
        if kernel_major:
            cols = columns[:, g * in_per_group : (g + 1) * in_per_group]
            product = np.matmul(wg, cols.reshape((n, rows, positions)))
        else:
            group = slice(g * in_per_group, (g + 1) * in_per_group)
            cols = columns[(slice(None),) * (1 + spatial) + (group,)]
            cols = cols.reshape((n, positions, rows))
            product = np.matmul(cols, wg.T).transpose(0, 2, 1)
        parts.append(product.reshape((n, out_per_group) + out_sizes))
    return parts[0] if groups == 1 else np.concatenate(parts, axis=1)


def _conv_transpose_forward(
    x: np.ndarray,
    w: np.ndarray,
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    output_padding: tuple[int, ...],
    groups: int,
) -> np.ndarray:
    """The adjoint of `_conv_forward`: each input position scatters its products
    with the kernel; a loop over kernel offsets adds them with strided slices."""
    spatial = w.ndim - 2
    sizes = x.shape[2:]
    kernel = w.shape[2:]
    out = tuple(
        (n - 1) * s - 2 * p + d * (k - 1) + op + 1
        for n, s, p, d, k, op in zip(
            sizes, stride, padding, dilation, kernel, output_padding
        )
    )
    full = tuple(
        max((n - 1) * s + d * (k - 1) + 1, p + o)
        for n, s, d, k, p, o in zip(sizes, stride, dilation, kernel, padding, out)
    )
    in_per_group = x.shape[1] // groups
    out_per_group = w.shape[1]
    dtype = np.result_type(x, w)
    y = np.zeros((x.shape[0], out_per_group * groups) + full, dtype=dtype)
    for g in range(groups):
        xg = x[:, g * in_per_group : (g + 1) * in_per_group]
        wg = w[g * in_per_group : (g + 1) * in_per_group]
        cols = np.tensordot(xg, wg, axes=((1,), (0,)))  # [N, in..., O, k...]
        target = y[:, g * out_per_group : (g + 1) * out_per_group]
        for offset in np.ndindex(*kernel):
            where = tuple(
                slice(o * d, o * d + s * (n - 1) + 1, s)
                for o, d, s, n in zip(offset, dilation, stride, sizes)
            )
            contribution = cols[(Ellipsis,) + offset]  # [N, in..., O]
            target[(slice(None), slice(None)) + where] += np.moveaxis(
                contribution, -1, 1
            )
    crop = tuple(slice(p, p + o) for p, o in zip(padding, out))
    return y[(slice(None), slice(None)) + crop]


def convolution_kernel(
    input: Any,
    weight: Any,
    bias: Any,
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    transposed: bool,
    output_padding: tuple[int, ...],
    groups: int,
) -> np.ndarray:
    """at::convolution: N-d cross-correlation, or its transpose, with groups."""
    input, weight = np.asarray(input), np.asarray(weight)
    if bias is not None and np.result_type(bias) != input.dtype:
        raise RuntimeError(
            f"Input type ({_tm(input.dtype)}) and bias type "
            f"({_tm(np.result_type(bias))}) should be the same"
        )
    spatial = max(weight.ndim - 2, 1)
    stride = expand_param(stride, spatial)
    padding = expand_param(padding, spatial)
    dilation = expand_param(dilation, spatial)
    output_padding = expand_param(output_padding, spatial)
    _check_convolution(
        input,
        weight,
        bias,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
    )
    if weight.dtype != input.dtype:
        raise RuntimeError(
            f"expected scalar type {_st(input.dtype)} but found {_st(weight.dtype)}"
        )
    if transposed:
        result = _conv_transpose_forward(
            input, weight, stride, padding, dilation, output_padding, groups
        )
    else:
        result = _conv_forward(input, weight, stride, padding, dilation, groups)
    if bias is not None:
        result += np.reshape(bias, (-1,) + (1,) * spatial)  # a fresh array
    return np.ascontiguousarray(result, dtype=np.result_type(input, weight))


def conv_tbc_kernel(self: Any, weight: Any, bias: Any, pad: int) -> np.ndarray:
    """A 1-d convolution of a (time, batch, channel) input, padded by `pad` at
    both ends of the time axis, as PyTorch's kernel: the bias plus one matrix
    product per kernel offset (so an empty kernel or batch needs no case)."""
    self, weight, bias = np.asarray(self), np.asarray(weight), np.asarray(bias)
    if self.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError(
            "Weight tensor must have 3 dims: kernel_width, in_channels, out_channels."
        )
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if self.shape[2] != weight.shape[1]:
        raise RuntimeError(
            "Input dim 2 (input channels) is not == dim 1 in the weight tensor"
        )
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError(
            "Bias size must equal dim 2 in the weight tensor (output channels)."
        )
    length = self.shape[0] + 2 * pad - weight.shape[0] + 1
    shape = (length, self.shape[1], weight.shape[2])
    if length < 0:
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {length}: {_sizes(shape)}"
        )
    out = np.empty(shape, dtype=np.result_type(self, weight))
    out[...] = bias
    padded = np.pad(self, ((pad, pad), (0, 0), (0, 0)))
    for k in range(weight.shape[0]):
        out += padded[k : k + length] @ weight[k]
    return out


def pool_output_size(
    size: int, kernel: int, stride: int, pad: int, dilation: int, ceil_mode: bool
) -> int:
    """pooling_output_shape: the last window must start inside the input or the
    left padding, also in ceil mode."""
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def pool2d_params(
    x: Any,
    kernel_size: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    ceil_mode: bool,
    avg: bool = False,
) -> tuple[tuple[int, ...], ...]:
    """(kernel, stride, padding, dilation, output size) of a 2-d pooling, each a
    pair, after PyTorch's checks (stride defaults to the kernel size). avg_pool2d
    reads the input's last three sizes first (an IndexError for fewer dims)
    where max_pool2d checks the rank."""
    kernel = expand_param(kernel_size, 2)
    stride = expand_param(stride, 2) if len(stride) else kernel
    padding = expand_param(padding, 2)
    dilation = expand_param(dilation, 2)
    if avg:
        for d in (-3, -2, -1):
            _size_at(x, d)
    elif np.ndim(x) not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    # pooling_output_shape's checks, height then width (C++ division truncates)
    for k, s, p, d in zip(kernel, stride, padding, dilation):
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > math.trunc((d * (k - 1) + 1) / 2):
            raise RuntimeError(
                "pad should be at most half of effective kernel size, but got "
                f"pad={p}, kernel_size={k} and dilation={d}"
            )
        if s == 0:
            raise RuntimeError("stride should not be zero")
    # pool2d_shape_check's
    for what, letter, (h, w) in (("kernel size", "k", kernel), ("stride", "d", stride)):
        if h <= 0 or w <= 0:
            raise RuntimeError(
                f"{what} should be greater than zero, but got {letter}H: {h} "
                f"{letter}W: {w}"
            )
    if min(dilation) <= 0:
        raise RuntimeError(
            "dilation should be greater than zero, but got dilationH: "
            f"{dilation[0]} dilationW: {dilation[1]}"
        )
    shape = np.shape(x)
    valid = shape[1] != 0 and shape[2] != 0
    if not (
        (len(shape) == 3 and shape[0] != 0 and valid)
        or (len(shape) == 4 and valid and shape[3] != 0)
    ):
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{_sizes(shape)}"
        )
    sizes = np.shape(x)[-2:]
    out = tuple(
        pool_output_size(n, k, s, p, d, ceil_mode)
        for n, k, s, p, d in zip(sizes, kernel, stride, padding, dilation)
    )
    if min(out) < 1:
        channels = np.shape(x)[-3]
        raise RuntimeError(
            f"Given input size: ({channels}x{sizes[0]}x{sizes[1]}). Calculated output "
            f"size: ({channels}x{out[0]}x{out[1]}). Output size is too small"
        )
    return kernel, stride, padding, dilation, out


def _lowest(dtype: np.dtype) -> Any:
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def max_pool2d_with_indices_kernel(
    x: Any,
    kernel_size: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    ceil_mode: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices): the largest entry of each window (the first one on ties;
    a NaN wins, the last one of several) and its flat position `h * W + w` in the
    input plane, as PyTorch's CPU kernel."""
    x = np.asarray(x)
    kernel, stride, padding, dilation, out = pool2d_params(
        x, kernel_size, stride, padding, dilation, ceil_mode
    )
    sizes = x.shape[-2:]
    effective = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    right = [
        max(0, (o - 1) * s + e - p - n)
        for o, s, e, p, n in zip(out, stride, effective, padding, sizes)
    ]
    if any(padding) or any(right):
        widths = [(0, 0)] * (x.ndim - 2) + [(p, r) for p, r in zip(padding, right)]
        padded = np.pad(x, widths, constant_values=_lowest(x.dtype))
    else:
        padded = x
    # One strided view per kernel offset, each as large as the output: no copy
    # of the windows.
    views = []
    for offset in range(kernel[0] * kernel[1]):
        i, j = divmod(offset, kernel[1])
        r0, c0 = i * dilation[0], j * dilation[1]
        views.append(
            padded[
                ...,
                r0 : r0 + stride[0] * (out[0] - 1) + 1 : stride[0],
                c0 : c0 + stride[1] * (out[1] - 1) + 1 : stride[1],
            ]
        )
    nan = x.dtype.kind in "fc" and bool(np.isnan(x).any())
    if nan or not 1 < len(views) <= _CHOICES:
        values, arg = _window_max_in_order(views, nan)
    else:
        # The maximum, then the first offset that holds it (arg counts the
        # offsets before it, a running "not yet found" mask), then the value at
        # that offset: np.maximum may return either zero of a -0.0/0.0 tie.
        top = np.array(views[0], copy=True)
        for view in views[1:]:
            np.maximum(top, view, out=top)
        behind = views[0] != top
        arg = behind.astype(np.int64)
        for view in views[1:-1]:
            behind &= view != top
            arg += behind
        values = None
    # The flat position h * W + w in the input plane: the window's corner plus
    # the offset's step, one table entry per offset.
    step = np.array(
        [
            (o // kernel[1]) * dilation[0] * sizes[1] + (o % kernel[1]) * dilation[1]
            for o in range(len(views))
        ],
        dtype=np.int64,
    )
    corner = (np.arange(out[0])[:, None] * stride[0] - padding[0]) * sizes[1] + (
        np.arange(out[1])[None, :] * stride[1] - padding[1]
    )
    indices = step.take(arg)
    indices += corner
    if values is None:
        if padded is x:  # every index is in the plane: gather the values by it
            values = np.ravel(x).take(_plane_positions(indices, x.shape))
            values = values.reshape(indices.shape)
        else:
            values = np.choose(arg, views)
    return np.ascontiguousarray(values), indices


def _plane_positions(indices: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    """Flat positions in a row-major array of `sizes` of the in-plane indices
    `h * W + w` of a pooling (one plane per leading index)."""
    planes = math.prod(sizes[:-2])
    plane = sizes[-2] * sizes[-1]
    where = np.reshape(indices, (planes, math.prod(np.shape(indices)[-2:])))
    return (where + np.arange(0, planes * plane, plane)[:, None]).reshape(-1)


# The most arrays np.choose takes (a larger pooling window goes offset by offset).
_CHOICES = 32


def _window_max_in_order(views: list[Any], nan: bool) -> tuple[Any, Any]:
    """The maximum and its offset under PyTorch's rule `val > max || isnan(val)`,
    offset by offset: the first of equal values (so -0.0 before 0.0 stays), but
    the last NaN."""
    values = np.array(views[0], copy=True)
    arg = np.zeros(values.shape, dtype=np.int64)
    for offset, view in enumerate(views[1:], 1):
        better = view > values
        if nan:
            better |= np.isnan(view)
        np.copyto(values, view, where=better)
        np.copyto(arg, offset, where=better)
    return values, arg


def _max_pool2d_with_indices_backward(
    grad: np.ndarray, indices: np.ndarray, sizes: tuple[int, ...]
) -> np.ndarray:
    """Each window's gradient added at its argmax (windows may share one)."""
    where = _plane_positions(indices, sizes)
    grad = np.asarray(grad)
    size = math.prod(sizes)
    chosen = np.zeros(size, dtype=bool)
    chosen[where] = True
    if np.count_nonzero(chosen) == where.size:
        # No two windows chose one input (always so when windows do not
        # overlap): a scatter, nothing to sum.
        total = np.zeros(sizes, dtype=grad.dtype)
        total.reshape(-1)[where] = np.ravel(grad)
        return total
    total = np.bincount(where, weights=np.ravel(grad), minlength=size)
    return total.astype(grad.dtype, copy=False).reshape(sizes)


def avg_pool_matrix(
    size: int,
    kernel: int,
    stride: int,
    pad: int,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
    dtype: np.dtype,
) -> np.ndarray:
    """One axis of an average pooling as a matrix [out, size]: row i holds each
    input's weight in window i. A 2-d pooling is `A_h @ x @ A_w.T`, since PyTorch's
    divisor (window area, clipped to the padded or to the real input) is a product
    of one factor per axis."""
    out = pool_output_size(size, kernel, stride, pad, 1, ceil_mode)
    start = np.arange(out) * stride - pad
    end = np.minimum(start + kernel, size + pad)
    with_pad = end - start
    start, end = np.maximum(start, 0), np.minimum(end, size)
    positions = np.arange(size)
    inside = (positions >= start[:, None]) & (positions < end[:, None])
    if divisor_override is not None:
        return inside.astype(dtype)  # the whole divisor is applied on the other axis
    divisor = with_pad if count_include_pad else np.maximum(end - start, 1)
    return (inside / divisor[:, None]).astype(dtype)


def avg_pool2d_matrices(
    x: Any,
    kernel_size: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
    dtype: np.dtype,
) -> tuple[np.ndarray, np.ndarray]:
    """(A_h, A_w) of avg_pool2d, after PyTorch's checks."""
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    kernel, stride, padding, _, _ = pool2d_params(
        x, kernel_size, stride, padding, (1,), ceil_mode, avg=True
    )
    sizes = np.shape(x)[-2:]
    a_h, a_w = (
        avg_pool_matrix(
            n, k, s, p, ceil_mode, count_include_pad, divisor_override, dtype
        )
        for n, k, s, p in zip(sizes, kernel, stride, padding)
    )
    if divisor_override is not None:
        a_h = a_h / np.asarray(divisor_override, dtype=dtype)
    return a_h, a_w


def avg_pool2d_kernel(
    x: Any,
    kernel_size: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> np.ndarray:
    """Average of each window, as two matrix products (one per axis)."""
    x = np.asarray(x)
    a_h, a_w = avg_pool2d_matrices(
        x,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
        x.dtype,
    )
    return np.ascontiguousarray(a_h @ x @ a_w.T)


def adaptive_avg_pool_matrix(size: int, out: int, dtype: np.dtype) -> np.ndarray:
    """One axis of adaptive average pooling: window i is [floor(i*n/o), ceil((i+1)*n/o))."""
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    positions = np.arange(size)
    inside = (positions >= start[:, None]) & (positions < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def adaptive_avg_pool2d_matrices(
    x: Any, output_size: tuple[int, ...], dtype: np.dtype
) -> tuple[np.ndarray, np.ndarray]:
    """(A_h, A_w) of adaptive_avg_pool2d, after PyTorch's checks."""
    out = expand_param(output_size, 2)
    shape = np.shape(x)
    if len(shape) not in (3, 4):
        raise RuntimeError(
            f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {_sizes(shape)}"
        )
    for i in (len(shape) - 2, len(shape) - 1):  # the spatial dims; N and C may be 0
        if shape[i] == 0:
            raise RuntimeError(
                "adaptive_avg_pool2d(): Expected input to have non-zero size for "
                f"non-batch dimensions, but input has sizes {_sizes(shape)} with "
                f"dimension {i} being empty"
            )
    if len(out) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    sizes = np.shape(x)[-2:]
    a_h, a_w = (adaptive_avg_pool_matrix(n, o, dtype) for n, o in zip(sizes, out))
    return a_h, a_w


def adaptive_avg_pool2d_kernel(x: Any, output_size: tuple[int, ...]) -> np.ndarray:
    x = np.asarray(x)
    a_h, a_w = adaptive_avg_pool2d_matrices(x, output_size, x.dtype)
    return np.ascontiguousarray(a_h @ x @ a_w.T)


# The backward of a convolution is itself a convolution (of the gradient with the
# weight, transposed; of the input with the gradient), so on Tensors these helpers
# call `ops.convolution` and a double backward runs through recorded convolutions.


def _conv(
    x: Any,
    w: Any,
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    transposed: bool,
    output_padding: tuple[int, ...],
    groups: int,
) -> Any:
    args = (stride, padding, dilation, transposed, output_padding, groups)
    return array_namespace(x, w).convolution(x, w, None, *args)


def _permute(x: Any, dims: tuple[int, ...]) -> Any:
    return array_namespace(x).permute_dims(x, dims)


def _check_backward_output_padding(
    transposed: bool, output_padding: tuple[int, ...]
) -> None:
    """PyTorch's convolution_backward refuses an output padding on a plain
    convolution (whose forward ignored it)."""
    if not transposed and any(output_padding):
        raise RuntimeError(
            "output_padding is not supported for non-transposed convolutions; got: "
            + " ".join(str(p) for p in output_padding)
        )


def _conv_params(
    weight_sizes: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
) -> tuple[tuple[int, ...], ...]:
    spatial = len(weight_sizes) - 2
    return tuple(expand_param(p, spatial) for p in (stride, padding, dilation))


def _conv_weight_grad(
    input: Any,
    grad: Any,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    groups: int,
) -> Any:
    """d(conv(input, w))/dw contracted with `grad`: a convolution of the input,
    batch and channels swapped, with the gradient as its kernel (stride and
    dilation trade places), cut to the kernel's size."""
    n, channels = input.shape[0], input.shape[1]
    spatial = tuple(input.shape[2:])
    x = transpose(input, 0, 1)  # [C, N, ...]
    if groups > 1:
        per_group = channels // groups
        x = reshape(x, (groups, per_group, n) + spatial)
        x = _permute(x, (1, 0, 2) + tuple(range(3, 3 + len(spatial))))
        x = reshape(x, (per_group, groups * n) + spatial)
    g = transpose(grad, 0, 1)  # [O, N, ...]: a kernel with N channels per group
    zeros = (0,) * len(spatial)
    out = _conv(x, g, dilation, padding, stride, False, zeros, groups)
    out = transpose(out, 0, 1)
    for i, k in enumerate(kernel):
        if out.shape[2 + i] != k:
            out = slice_of(out, 2 + i, 0, k, 1)
    return out


def convolution_backward_input(
    grad: Any,
    input_sizes: tuple[int, ...],
    weight: Any,
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    transposed: bool,
    output_padding: tuple[int, ...],
    groups: int,
) -> Any:
    """The input's gradient: a transposed convolution of `grad` with the weight
    (the output padding restores the rows the forward's windows did not reach),
    or, for a transposed convolution, a plain one."""
    _check_backward_output_padding(transposed, output_padding)
    stride, padding, dilation = _conv_params(weight.shape, stride, padding, dilation)
    zeros = (0,) * len(stride)
    if transposed:
        out = _conv(grad, weight, stride, padding, dilation, False, zeros, groups)
        for i, n in enumerate(input_sizes[2:]):
            if out.shape[2 + i] != n:  # an output padding beyond the stride
                out = slice_of(out, 2 + i, 0, n, 1)
        return out
    output_padding = tuple(
        n - ((o - 1) * s - 2 * p + d * (k - 1) + 1)
        for n, o, s, p, d, k in zip(
            input_sizes[2:], grad.shape[2:], stride, padding, dilation, weight.shape[2:]
        )
    )
    return _conv(grad, weight, stride, padding, dilation, True, output_padding, groups)


def convolution_backward_weight(
    grad: Any,
    input: Any,
    weight_sizes: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    transposed: bool,
    output_padding: tuple[int, ...],
    groups: int,
) -> Any:
    """The weight's gradient; a transposed convolution's is the plain one with
    input and gradient exchanged."""
    _check_backward_output_padding(transposed, output_padding)
    stride, padding, dilation = _conv_params(weight_sizes, stride, padding, dilation)
    kernel = tuple(weight_sizes[2:])
    if transposed:
        return _conv_weight_grad(grad, input, kernel, stride, padding, dilation, groups)
    return _conv_weight_grad(input, grad, kernel, stride, padding, dilation, groups)


def convolution_backward_bias(
    grad: Any, transposed: bool, output_padding: tuple[int, ...]
) -> Any:
    """The sum over every dim but the channels."""
    _check_backward_output_padding(transposed, output_padding)
    dims = (0,) + tuple(range(2, grad.ndim))
    return array_namespace(grad).sum(grad, axis=dims)


def _time_padded(x: Any, before: int, after: int) -> Any:
    """x with zero rows added before and after along its first (time) axis."""
    if before == 0 and after == 0:
        return x
    rest = tuple(x.shape[1:])
    parts = [_zeros((before,) + rest, x), x, _zeros((after,) + rest, x)]
    return array_namespace(x).concatenate(parts, axis=0)


def conv_tbc_backward_input(
    grad: Any, self_sizes: tuple[int, ...], weight: Any, pad: int
) -> Any:
    """conv_tbc's input gradient: input row t gets grad[t + pad - k] @ w[k].T
    for every offset k that reaches it."""
    xp = array_namespace(grad, weight)
    time = self_sizes[0]
    length = grad.shape[0]
    total = _zeros(tuple(self_sizes), grad)
    for k in range(weight.shape[0]):
        low, high = max(0, k - pad), min(time, length + k - pad)
        if low >= high:
            continue
        rows = grad[low + pad - k : high + pad - k]
        part = xp.matmul(rows, xp.permute_dims(weight[k], (1, 0)))
        total = total + _time_padded(part, low, time - high)
    return total


def conv_tbc_backward_weight(
    grad: Any, self: Any, weight_sizes: tuple[int, ...], pad: int
) -> Any:
    """conv_tbc's weight gradient: w[k] gets the sum over time and batch of
    x[t + k - pad].T @ grad[t]."""
    kernel, channels, out_channels = weight_sizes
    if kernel == 0:
        return _zeros(tuple(weight_sizes), grad)
    xp = array_namespace(grad, self)
    length, batch = grad.shape[0], grad.shape[1]
    padded = _time_padded(self, pad, pad)
    flat_grad = xp.reshape(grad, (length * batch, out_channels))
    parts = []
    for k in range(kernel):
        rows = xp.reshape(padded[k : k + length], (length * batch, channels))
        parts.append(xp.matmul(xp.permute_dims(rows, (1, 0)), flat_grad))
    return xp.stack(parts, axis=0)


def conv_tbc_backward_bias(grad: Any) -> Any:
    return array_namespace(grad).sum(grad, axis=(0, 1))  # over time and batch


def max_pool2d_with_indices_backward(
    grad: Any, indices: Any, sizes: tuple[int, ...]
) -> Any:
    """Each window's gradient added at its argmax; on Tensors a scatter_add (whose
    own backward is a gather)."""
    if not isinstance(grad, Tensor):
        return _max_pool2d_with_indices_backward(grad, _raw(indices), sizes)
    planes = int(np.prod(sizes[:-2], dtype=np.int64))
    index = _as_tensor(np.reshape(_raw(indices), (planes, -1)))
    zeros = _zeros((planes, sizes[-2] * sizes[-1]), grad)
    total = ops.scatter_add(zeros, 1, index, ops.reshape(grad, (planes, -1)))
    return ops.reshape(total, sizes)


def _pool_backward(grad: Any, a_h: np.ndarray, a_w: np.ndarray) -> Any:
    """The adjoint of `A_h @ x @ A_w.T`: `A_h.T @ grad @ A_w` (the pooling
    matrices are constants)."""
    xp = array_namespace(grad)
    left = xp.matmul(_constant(np.ascontiguousarray(a_h.T), grad), grad)
    return xp.matmul(left, _constant(a_w, grad))


def avg_pool2d_backward(
    grad: Any,
    sizes: tuple[int, ...],
    kernel_size: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Any:
    a_h, a_w = avg_pool2d_matrices(
        np.broadcast_to(0.0, sizes),
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
        _raw(grad).dtype,
    )
    return _pool_backward(grad, a_h, a_w)


def adaptive_avg_pool2d_backward(grad: Any, sizes: tuple[int, ...]) -> Any:
    shape = tuple(grad.shape)
    for i in range(1, len(shape)):
        if shape[i] == 0:
            raise RuntimeError(
                "adaptive_avg_pool2d_backward(): Expected grad_output to have "
                "non-zero size for non-batch dimensions, but grad_output has sizes "
                f"{list(shape)} with dimension {i} being empty"
            )
    a_h, a_w = adaptive_avg_pool2d_matrices(
        np.broadcast_to(0.0, sizes), grad.shape[-2:], _raw(grad).dtype
    )
    return _pool_backward(grad, a_h, a_w)


register_numpy_kernels(convolution=convolution_kernel)
