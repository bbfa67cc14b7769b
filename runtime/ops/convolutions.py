"""Convolution: the convolution kernel (any rank, transposed, grouped) with
PyTorch's argument checks, conv_tbc, and their backward helpers.

The backward of a convolution is itself a convolution (of the gradient with the
weight, transposed; of the input with the gradient), so on Tensors the helpers
call `ops.convolution` and a double backward runs through recorded convolutions.
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import numpy as np

from yamlgrad.runtime.errors import scalar_type_name as _st
from yamlgrad.runtime.errors import type_meta_name as _tm
from yamlgrad.runtime import backend
from yamlgrad.runtime.ops.common import _sizes, _zeros
from yamlgrad.runtime.ops.namespace import array_namespace, register_numpy_kernels
from yamlgrad.runtime.ops.shapes import reshape, slice_of, transpose
from yamlgrad.runtime.ops.windows import expand_param

KERNELS = ("convolution_kernel", "slow_convolution_kernel", "conv_tbc_kernel")
BACKWARD_HELPERS = (
    "conv_tbc_backward_input",
    "conv_tbc_backward_weight",
    "conv_tbc_backward_bias",
    "convolution_backward_input",
    "convolution_backward_weight",
    "convolution_backward_bias",
)


def check_weight_and_groups(weight_ndim: int, groups: int) -> None:
    """What at::_convolution (and padding='same') checks first."""
    if weight_ndim <= 2:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")


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
    """PyTorch's checks of at::convolution's arguments, with its messages, in
    its order (a zero dilation is its CPU kernels' to refuse, last)."""
    check_weight_and_groups(weight.ndim, groups)
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d < 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if input.ndim != weight.ndim:
        raise RuntimeError(
            f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional "
            f"weight {_sizes(weight.shape)}, but got {input.ndim}-dimensional input "
            f"of size {_sizes(input.shape)} instead"
        )
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
        _check_zero_dilation(dilation, transposed)
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
    _check_zero_dilation(dilation, transposed)


def _check_zero_dilation(dilation: tuple[int, ...], transposed: bool) -> None:
    """PyTorch's CPU kernels' text for a zero dilation; a 1-d convolution runs
    as a 2-d one, of dilation (1, d)."""
    if all(d > 0 for d in dilation):
        return
    values = (1, *dilation) if len(dilation) == 1 else tuple(dilation)
    if transposed:
        names = ("depth", "height", "width")[-len(values) :]
        got = ", ".join(f"dilation_{n}: {v}" for n, v in zip(names, values))
    else:
        got = _sizes(values)
    raise RuntimeError(f"dilation should be greater than zero, but got {got}")


def same_padding(
    input_shape: tuple[int, ...],
    weight_shape: tuple[int, ...],
    stride: tuple[int, ...],
    dilation: tuple[int, ...],
    groups: int,
) -> tuple[list[int] | None, tuple[int, ...]]:
    """padding='same' as at::convolution_same, with its checks and texts in
    its order: the constant_pad_nd pads (F.pad's order, last dim first) an
    asymmetric padding needs first (None for a symmetric one), and the
    symmetric padding left to the convolution. `stride` and `dilation` are as
    given: one value, or one per spatial dim."""
    check_weight_and_groups(len(weight_shape), groups)
    k, dims = len(weight_shape), len(weight_shape) - 2
    if len(input_shape) != k:
        raise RuntimeError(
            f"Expected {k}-dimensional input for {k}-dimensional weight"
            f"{_sizes(weight_shape)}, but got {len(input_shape)}-dimensional input "
            f"of size {_sizes(input_shape)} instead"
        )
    for name, values in (("stride", stride), ("dilation", dilation)):
        if len(values) not in (dims, 1):
            raise RuntimeError(f"{name} cannot broadcast to {dims} dimensions")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    left, right = [], []
    for i, size in enumerate(weight_shape[2:]):
        total = dilation[i % len(dilation)] * (size - 1)
        half = abs(total) // 2 * (1 if total >= 0 else -1)  # C++'s division
        left.append(half)
        right.append(total - half)
    if left == right:
        return None, tuple(left)
    _warn_same_padding_copy()
    pad_nd = [0] * (2 * dims)
    for i in range(dims):
        delta, at = right[i] - left[i], 2 * (dims - 1 - i)
        pad_nd[at + 1 if delta > 0 else at] = delta  # (< 0 for a negative dilation)
    return pad_nd, tuple(left)


@functools.cache
def _warn_same_padding_copy() -> None:
    """PyTorch's warning, given once."""
    warnings.warn(
        "Using padding='same' with even kernel lengths and odd dilation may require "
        "a zero-padded copy of the input be created",
        UserWarning,
        stacklevel=5,  # the caller of F.conv1d or F.conv2d
    )


def _windows(
    x: np.ndarray,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
) -> np.ndarray:
    """[N, C, out..., k...]: each output position's window of the zero-padded
    input, a strided view (no copy)."""
    axes = tuple(range(2, 2 + len(kernel)))
    if any(padding):
        x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    effective = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    windows = np.lib.stride_tricks.sliding_window_view(x, effective, axis=axes)
    step = tuple(slice(None, None, s) for s in stride)
    step += tuple(slice(None, None, d) for d in dilation)
    return windows[(slice(None), slice(None)) + step]


def _im2col(windows: np.ndarray, extra_rows: int = 0) -> np.ndarray:
    """The windows [N, C, out..., k...] copied once, row-major, as the matrices
    [N, C*k + extra_rows, out] (kernel-major: the output's positions are the
    long, innermost run), the extra rows left unset for the caller."""
    spatial = (windows.ndim - 2) // 2
    n, channels = windows.shape[:2]
    out_sizes = windows.shape[2 : 2 + spatial]
    kernel = windows.shape[2 + spatial :]
    rows = channels * math.prod(kernel)
    columns = np.empty(
        (n, rows + extra_rows, math.prod(out_sizes)), dtype=windows.dtype
    )
    order = (0, 1) + tuple(range(2 + spatial, 2 + 2 * spatial))
    order += tuple(range(2, 2 + spatial))
    target = columns[:, :rows].reshape((n, channels) + kernel + out_sizes)
    np.copyto(target, windows.transpose(order))
    return columns


def _conv_forward(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray | None,
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    groups: int,
) -> np.ndarray:
    """Cross-correlation by strided windows (im2col) and one batched matmul per
    group: no loop over output positions. With one group, the bias is a last
    column of the weight's matrix against a row of ones (no pass of its own)."""
    spatial = w.ndim - 2
    windows = _windows(x, w.shape[2:], stride, padding, dilation)
    in_per_group = w.shape[1]
    out_per_group = w.shape[0] // groups
    n, out_sizes = x.shape[0], tuple(windows.shape[2 : 2 + spatial])
    rows = in_per_group * math.prod(w.shape[2:])
    # im2col in the order whose innermost run is the longer one: the output's
    # last dim (a kernel smaller than the output, as in a forward) or the
    # kernel's (a weight's gradient as a convolution, whose "kernel" is the
    # output gradient).
    if w.shape[-1] <= out_sizes[-1]:  # [O, C*k] @ [N, C*k, out]
        fold = bias is not None and groups == 1
        columns = _im2col(windows, 1 if fold else 0)
        if fold:
            columns[:, rows] = 1
            matrix = np.concatenate(
                (w.reshape((-1, rows)), np.reshape(bias, (-1, 1))), axis=1
            )
            return np.matmul(matrix, columns).reshape((n, -1) + out_sizes)
        parts = [
            np.matmul(
                w[g * out_per_group : (g + 1) * out_per_group].reshape((-1, rows)),
                columns[:, g * rows : (g + 1) * rows],
            )
            for g in range(groups)
        ]
    else:  # [N, out..., C, k...]: [N, out, C*k] @ [C*k, O]
        kernel_axes = tuple(range(2 + spatial, 2 + 2 * spatial))
        order = (0,) + tuple(range(2, 2 + spatial)) + (1,) + kernel_axes
        columns = np.ascontiguousarray(windows.transpose(order))
        columns = columns.reshape((n, -1, in_per_group * groups, rows // in_per_group))
        parts = [
            np.matmul(
                columns[:, :, g * in_per_group : (g + 1) * in_per_group].reshape(
                    (n, -1, rows)
                ),
                w[g * out_per_group : (g + 1) * out_per_group].reshape((-1, rows)).T,
            ).transpose(0, 2, 1)
            for g in range(groups)
        ]
    result = parts[0] if groups == 1 else np.concatenate(parts, axis=1)
    return _add_bias(result.reshape((n, w.shape[0]) + out_sizes), bias)


def _add_bias(result: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """`result` (an array of the convolution's own) plus the bias per channel."""
    if bias is not None:
        result += np.reshape(bias, (-1,) + (1,) * (result.ndim - 2))
    return result


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
        result = _add_bias(result, bias)
    else:
        result = _conv_forward(input, weight, bias, stride, padding, dilation, groups)
    return np.ascontiguousarray(result, dtype=np.result_type(input, weight))


def slow_convolution_kernel(
    input: Any,
    weight: Any,
    kernel_size: tuple[int, ...],
    bias: Any,
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    transposed: bool,
    output_padding: tuple[int, ...],
) -> np.ndarray:
    """A CPU backend of at::convolution called on its own (slow_conv_*): its
    kernel_size repeats the weight's sizes, and a kernel_size that does not is
    refused with PyTorch's text (its transposed kernels would read past the
    weight), then the convolution as at::convolution computes it."""
    sizes = list(np.shape(weight)[2:])
    if list(kernel_size) != sizes:
        raise RuntimeError(
            f"weight[2:] shape {sizes} must be equal to kernel_size {list(kernel_size)}"
        )
    return convolution_kernel(
        input, weight, bias, stride, padding, dilation, transposed, output_padding, 1
    )


def conv_tbc_kernel(self: Any, weight: Any, bias: Any, pad: int) -> np.ndarray:
    """A 1-d convolution of a (time, batch, channel) input, padded by `pad` at
    both ends of the time axis, as PyTorch's kernel: the bias plus one matrix
    product per kernel offset (so an empty kernel or batch needs no case)."""
    xp = backend.namespace_of(self, weight, bias)
    if xp is np:
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
    if xp is not np:  # the same sum, into no buffer
        out = xp.broadcast_to(xp.astype(bias, xp.result_type(self, weight)), shape)
        padded = _time_padded(self, pad, pad)
        for k in range(weight.shape[0]):
            out = out + padded[k : k + length, ...] @ weight[k, ...]
        return out
    out = np.empty(shape, dtype=np.result_type(self, weight))
    out[...] = bias
    padded = np.pad(self, ((pad, pad), (0, 0), (0, 0)))
    for k in range(weight.shape[0]):
        out += padded[k : k + length] @ weight[k]
    return out


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
    if type(input) is np.ndarray and type(grad) is np.ndarray:
        return _weight_grad_of_arrays(
            input, grad, kernel, stride, padding, dilation, groups
        )
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


def _weight_grad_of_arrays(
    input: np.ndarray,
    grad: np.ndarray,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    groups: int,
) -> np.ndarray:
    """`_conv_weight_grad` on ndarrays: the input's im2col [N, C*k, out], as the
    forward builds it, against the gradient [N, O, out], summed over the batch;
    one batched matmul per group."""
    n, out_channels = grad.shape[:2]
    in_per_group = input.shape[1] // groups
    out_per_group = out_channels // groups
    rows = in_per_group * math.prod(kernel)
    windows = _windows(input, kernel, stride, padding, dilation)
    # (a transposed convolution's output padding leaves windows no gradient reaches)
    reached = tuple(slice(0, size) for size in grad.shape[2:])
    columns = _im2col(windows[(slice(None), slice(None)) + reached])
    # (row-major: matmul runs BLAS only on such operands, not on a broadcast seed)
    g = np.ascontiguousarray(grad).reshape((n, out_channels, columns.shape[-1]))
    parts = [
        np.matmul(
            g[:, i * out_per_group : (i + 1) * out_per_group],
            columns[:, i * rows : (i + 1) * rows].transpose(0, 2, 1),
        ).sum(axis=0)
        for i in range(groups)
    ]
    total = parts[0] if groups == 1 else np.concatenate(parts, axis=0)
    return total.reshape((out_channels, in_per_group) + kernel)


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
        rows = grad[low + pad - k : high + pad - k, ...]
        part = xp.matmul(rows, xp.permute_dims(weight[k, ...], (1, 0)))
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
        rows = xp.reshape(padded[k : k + length, ...], (length * batch, channels))
        parts.append(xp.matmul(xp.permute_dims(rows, (1, 0)), flat_grad))
    return xp.stack(parts, axis=0)


def conv_tbc_backward_bias(grad: Any) -> Any:
    return array_namespace(grad).sum(grad, axis=(0, 1))  # over time and batch


register_numpy_kernels(convolution=convolution_kernel)
