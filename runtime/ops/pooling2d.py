"""2-d pooling: max pooling with indices, average and adaptive average
pooling, with PyTorch's checks, and their backward helpers.

Max pooling returns each window's argmax as its flat position `h * W + w` in the
input plane; the gradient goes back there. Average pooling is a product with two
pooling matrices (windows.avg_pool_matrix), so its backward is the product with
their transposes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.ops.common import (
    _as_tensor,
    _constant,
    _raw,
    _size_at,
    _sizes,
    _zeros,
)
from yamlgrad.runtime.ops.namespace import array_namespace
from yamlgrad.runtime.ops.reductions import _numpy_dtype
from yamlgrad.runtime.ops.windows import (
    _lowest,
    _plane_positions,
    avg_pool_matrix,
    expand_param,
    first_zeros,
    pool_output_size,
    window_argmax,
)

KERNELS = (
    "max_pool2d_with_indices_kernel",
    "max_pool2d_with_indices_backward_kernel",
    "avg_pool2d_kernel",
    "adaptive_avg_pool2d_kernel",
)
BACKWARD_HELPERS = (
    "max_pool2d_with_indices_backward",
    "max_pool_double_backward",
    "avg_pool2d_backward",
    "adaptive_avg_pool2d_backward",
)


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
    values, arg = window_argmax(views)
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
    first_zeros(values, indices, x, 2)
    return values, indices


def _max_pool2d_with_indices_backward(
    grad: np.ndarray, indices: np.ndarray, sizes: tuple[int, ...]
) -> np.ndarray:
    """Each window's gradient added at its argmax (windows may share one), by
    np.bincount (sums in float64, so exact where no two windows share one)."""
    where = _plane_positions(indices, sizes)
    grad = np.asarray(grad)
    size = math.prod(sizes)
    if grad.dtype.kind == "c":
        total = np.zeros(size, dtype=grad.dtype)
        np.add.at(total, where, np.ravel(grad))
        return total.reshape(sizes)
    total = np.bincount(where, weights=np.ravel(grad), minlength=size)
    return total.astype(grad.dtype, copy=False).reshape(sizes)


def max_pool2d_with_indices_backward_kernel(
    grad_output: Any, self: Any, indices: Any
) -> np.ndarray:
    """The op max_pool2d_with_indices_backward: `grad_output` added at the argmax
    positions `indices` in a zero tensor shaped like `self`."""
    if np.shape(grad_output) != np.shape(indices):
        raise RuntimeError(
            "Expected a tensor of size "
            f"{list(np.shape(indices))} for grad_output, but got "
            f"{list(np.shape(grad_output))}"
        )
    return _max_pool2d_with_indices_backward(
        grad_output, np.asarray(indices), np.shape(self)
    )


def max_pool_double_backward(grad: Any, indices: Any) -> Any:
    """max_pool2d_with_indices_backward's gradient for its `grad_output`: the
    incoming gradient read back at each window's argmax (a gather over each
    flattened plane; recorded on a Tensor)."""
    index = np.asarray(_raw(indices))
    planes = index.shape[:-2]
    flat_index = np.reshape(index, (*planes, -1))
    if not isinstance(grad, Tensor):
        flat = np.reshape(grad, (*np.shape(grad)[:-2], -1))
        return np.take_along_axis(flat, flat_index, -1).reshape(index.shape)
    flat = ops.reshape(grad, (*tuple(grad.shape)[:-2], -1))
    return ops.reshape(ops.gather(flat, -1, _as_tensor(flat_index)), index.shape)


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
    a_h, a_w = avg_pool2d_matrices(
        x,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
        _numpy_dtype(x),
    )
    return _pooled(x, a_h, a_w)


def _pooled(x: Any, a_h: np.ndarray, a_w: np.ndarray) -> Any:
    """`A_h @ x @ A_w.T`; on another backend, with the pooling matrices (numpy
    constants) moved onto it."""
    if type(x) is np.ndarray:
        return np.ascontiguousarray(a_h @ x @ a_w.T)
    return _constant(a_h, x) @ x @ _constant(np.ascontiguousarray(a_w.T), x)


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
    a_h, a_w = adaptive_avg_pool2d_matrices(x, output_size, _numpy_dtype(x))
    return _pooled(x, a_h, a_w)


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
        _numpy_dtype(_raw(grad)),
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
        np.broadcast_to(0.0, sizes), grad.shape[-2:], _numpy_dtype(_raw(grad))
    )
    return _pool_backward(grad, a_h, a_w)
