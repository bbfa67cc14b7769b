"""Normalization: layer, batch and group norm kernels and backward helpers.

The backward helpers recompute the statistics from `input` with recorded ops on
Tensors, so the standard deviation's dependence on the input is recorded and a
double backward is exact.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.ops.namespace import array_namespace, constant_tensor
from yamlgrad.runtime.errors import scalar_type_name as _st
from yamlgrad.runtime.ops.common import _raw, _sizes
from yamlgrad.runtime.ops.elementwise import rsqrt
from yamlgrad.runtime.ops.reductions import _sum_keepdim, mean_reduce, var
from yamlgrad.runtime.ops.shapes import c_order, expand, reshape
from yamlgrad.runtime.wrappers.kernel_errors import KernelValueError

KERNELS = (
    "native_layer_norm_kernel",
    "native_batch_norm_kernel",
    "batch_norm_with_update_kernel",
    "native_group_norm_kernel",
)
BACKWARD_HELPERS = (
    "native_layer_norm_backward",
    "native_batch_norm_backward",
    "native_group_norm_backward",
)


def _kernel_input(input: Any) -> tuple[Any, Any]:
    """(namespace, x): another backend's array as it is, anything else as an
    ndarray with numpy."""
    xp = backend.namespace_of(input)
    return xp, (np.asarray(input) if xp is np else input)


def native_layer_norm_kernel(
    input: Any,
    normalized_shape: tuple[int, ...],
    weight: Any,
    bias: Any,
    eps: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(output, mean, rstd) over the trailing `normalized_shape` dims; mean and rstd
    keep those dims as size 1, as PyTorch's."""
    xp, x = _kernel_input(input)
    _check_norm_dtypes(x, (weight, bias))
    if not normalized_shape:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing "
            "at least one element, but got normalized_shape = []"
        )
    for name, value in (("weight", weight), ("bias", bias)):
        if value is not None and tuple(np.shape(value)) != tuple(normalized_shape):
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got "
                f"{name} of shape {_sizes(np.shape(value))} and normalized_shape = "
                f"{_sizes(normalized_shape)}"
            )
    axis = x.ndim - len(normalized_shape)
    if axis < 0 or tuple(x.shape[axis:]) != tuple(normalized_shape):
        raise RuntimeError(
            f"Given normalized_shape={_sizes(normalized_shape)}, expected input with "
            f"shape [*, {', '.join(str(s) for s in normalized_shape)}], but got "
            f"input of size{_sizes(x.shape)}"
        )
    dims = tuple(range(axis, x.ndim))
    mean = mean_reduce(x, axis=dims, keepdims=True)
    centered = x - mean
    rstd = 1.0 / xp.sqrt(
        mean_reduce(centered * centered, axis=dims, keepdims=True) + eps
    )
    out = centered  # the kernel's own array: scaled in place
    out *= rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return _in_dtype(xp, x.dtype, out, mean, rstd)


def _in_dtype(xp: Any, dtype: Any, *arrays: Any) -> tuple[Any, ...]:
    """Each array (a fresh one of the kernel's) in `dtype`, the input's."""
    return tuple(xp.astype(a, dtype, copy=False) for a in arrays)


def native_batch_norm_kernel(
    input: Any,
    weight: Any,
    bias: Any,
    running_mean: Any,
    running_var: Any,
    training: bool,
    momentum: float,
    eps: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(output, save_mean, save_invstd). Training normalises by the batch's
    statistics over every dim but the channels (dim 1) and updates the running ones
    in place: `(1 - momentum) * running + momentum * batch`, with the unbiased
    variance. Evaluation uses the running ones and saves nothing (shape [0])."""
    xp, x = _kernel_input(input)
    if (running_mean is None) != (running_var is None):
        raise KernelValueError(
            "running_mean and running_var must either both be None or neither be None"
        )
    _check_norm_dtypes(x, (weight, bias, running_mean, running_var))
    channels = x.shape[1] if x.ndim > 1 else 1
    for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
        if stat is not None and math.prod(np.shape(stat)) != channels:
            raise RuntimeError(
                f"{name} should contain {channels} elements not "
                f"{math.prod(np.shape(stat))}"
            )
    dims = (0,) + tuple(range(2, x.ndim))
    shape = (1, channels) + (1,) * (x.ndim - 2)
    if training:
        mean, centered, var = _batch_statistics(xp, x, dims, shape)
        invstd = 1.0 / xp.sqrt(var + eps)
        count = math.prod(x.shape) // channels
        if running_mean is not None:
            _update_running(running_mean, mean, momentum)
            _update_running(running_var, var * count / max(count - 1, 1), momentum)
        save_mean, save_invstd = mean, invstd
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError(
                "running_mean and running_var must be defined in evaluation mode"
            )
        mean = running_mean if xp is not np else np.asarray(running_mean)
        centered = x - xp.reshape(mean, shape)
        invstd = 1.0 / xp.sqrt(running_var + eps)
        save_mean = save_invstd = xp.zeros((0,), dtype=x.dtype)
    out = centered  # the kernel's own array: scaled in place
    if weight is not None and _same_float(x, weight):
        out *= xp.reshape(invstd * weight, shape)  # one pass for both factors
    else:
        out *= xp.reshape(invstd, shape)
        if weight is not None:
            out = out * xp.reshape(weight, shape)
    if bias is not None and _same_float(x, bias):
        out += xp.reshape(bias, shape)
    elif bias is not None:
        out = out + xp.reshape(bias, shape)
    return _in_dtype(xp, x.dtype, out, save_mean, save_invstd)


def batch_norm_with_update_kernel(
    input: Any,
    weight: Any,
    bias: Any,
    running_mean: Any,
    running_var: Any,
    momentum: float,
    eps: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """_batch_norm_with_update: native_batch_norm in training (the running
    statistics updated in place), and the CPU kernel's empty reserve space."""
    out = native_batch_norm_kernel(
        input, weight, bias, running_mean, running_var, True, momentum, eps
    )
    xp = array_namespace(out[0])
    reserve = xp.zeros((0,), dtype=xp.uint8)
    return (*(c_order(part) for part in out), reserve)


def _same_float(x: Any, param: Any) -> bool:
    """An ndarray parameter of x's float dtype, which x's own arrays take in place."""
    return (
        type(x) is np.ndarray and type(param) is np.ndarray and param.dtype == x.dtype
    )


def _batch_statistics(
    xp: Any, x: Any, dims: tuple[int, ...], shape: tuple[int, ...]
) -> tuple[Any, Any, Any]:
    """(mean, x - mean, biased variance) over every dim but the channels; on a
    float ndarray the variance is one fused pass (`_channel_sums`) rather than a
    square and a reduction."""
    if xp is np and x.ndim > 1 and x.size and x.dtype.kind == "f":
        count = x.size // x.shape[1]
        mean = _channel_sums(x) / count
        centered = x - mean.reshape(shape)
        return mean, centered, _channel_sums(centered, centered) / count
    mean = mean_reduce(x, axis=dims)
    centered = x - xp.reshape(mean, shape)
    return mean, centered, mean_reduce(centered * centered, axis=dims)


def _channel_sums(a: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """The sum of a (or of a * b, in one pass: einsum's sum of products) over
    every dim but dim 1."""
    a3 = a.reshape(a.shape[0], a.shape[1], -1)
    if b is None:
        return np.add.reduce(a3, axis=(0, 2))
    return np.einsum("nch,nch->c", a3, b.reshape(a3.shape))


def _update_running(running: Any, batch: Any, momentum: float) -> None:
    """running = (1 - momentum) * running + momentum * batch, written into the
    running statistic (the module's buffer): in place on an ndarray, by item
    assignment on another backend (which rebinds a Dask array's graph)."""
    if type(running) is np.ndarray:
        running *= 1 - momentum
        running += momentum * batch
    else:
        running[...] = (1 - momentum) * running + momentum * batch


def _check_norm_dtypes(x: Any, params: tuple[Any, ...]) -> None:
    """The CPU norms' dtype rules: parameters whose first one has another dtype
    than the input are a "mixed" call, allowed only as float32 parameters of a
    float16 input; otherwise every parameter must have the input's dtype."""
    defined = [_dtype(p) for p in params if p is not None]
    if not defined:
        return
    if defined[0] != x.dtype:
        if any(d != np.float32 for d in defined):
            raise RuntimeError(
                "mixed dtype (CPU): expect parameter to have scalar type of Float"
            )
        if x.dtype != np.float16:
            raise RuntimeError(
                "mixed dtype (CPU): all inputs must share same datatype."
            )
        return
    for d in defined:
        if d != x.dtype:
            raise RuntimeError(
                f"expected scalar type {_st(x.dtype)} but found {_st(d)}"
            )


def _dtype(x: Any) -> Any:
    return x.dtype if hasattr(x, "dtype") else np.result_type(x)


def _check_group_norm(
    x: Any, weight: Any, bias: Any, n: int, c: int, hxw: int, group: int
) -> None:
    """PyTorch's check_group_norm_inputs, then its kernel's size check."""
    shape = _sizes(x.shape)
    if group <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {group}")
    if c % group:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but "
            f"got input of shape {shape} and num_groups={group}"
        )
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (np.ndim(p) != 1 or np.shape(p)[0] != c):
            shown = weight if weight is not None else p  # PyTorch prints weight's
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of "
                f"channels in input, but got {name} of shape "
                f"{_sizes(np.shape(shown))} and input of shape {shape}"
            )
    if math.prod(x.shape) != n * c * hxw:
        raise RuntimeError(
            "Expected X.numel() == N * C * HxW to be true, but got false.  (Could "
            "this error message be improved?  If so, please report an enhancement "
            "request to PyTorch.)"
        )


def _regroup(x: Any, shape: tuple[int, ...]) -> Any:
    """x reshaped to `shape` (of x's first dim); a lazy array through (N, everything else),
    a merge then a split, as Dask's reshape takes no reshape that moves elements
    across dims in one step."""
    if backend.is_lazy(_raw(x)):
        x = reshape(x, (shape[0], math.prod(shape[1:])))
    return reshape(x, shape)


def _grouped_shape(n: int, c: int, hxw: int, group: int) -> tuple[int, int, int]:
    """[N, group, elements per group], spelt out: an empty batch leaves no size
    from which a -1 could be inferred."""
    return (n, group, (c // group) * hxw)


def native_group_norm_kernel(
    input: Any,
    weight: Any,
    bias: Any,
    n: int,
    c: int,
    hxw: int,
    group: int,
    eps: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(output, mean, rstd): each sample's channels split into `group` groups,
    each normalised on its own; mean and rstd are [N, group]."""
    xp, x = _kernel_input(input)
    _check_norm_dtypes(x, (weight, bias))
    _check_group_norm(x, weight, bias, n, c, hxw, group)
    grouped = _regroup(x, _grouped_shape(n, c, hxw, group))
    mean = mean_reduce(grouped, axis=-1)
    centered = grouped - mean[..., None]
    rstd = 1.0 / xp.sqrt(mean_reduce(centered * centered, axis=-1) + eps)
    out = _regroup(centered * rstd[..., None], (n, c, hxw))
    if weight is not None:
        out = out * xp.reshape(weight, (1, c, 1))
    if bias is not None:
        out = out + xp.reshape(bias, (1, c, 1))
    return _in_dtype(xp, x.dtype, _regroup(out, x.shape), mean, rstd)


# Normalisation backward helpers recompute the statistics from `input` with the
# helpers above, so on Tensors (create_graph=True) the dependence of the mean and
# the standard deviation on the input is recorded and a double backward is exact.


def _sum_dims(x: Any, dims: tuple[int, ...]) -> Any:
    """Sum over `dims`, dropping them; () sums nothing."""
    if not dims:
        return x
    return array_namespace(x).sum(x, axis=dims)


def _normalize_backward(
    grad: Any, input: Any, dims: tuple[int, ...], eps: float, scale: Any
) -> tuple[Any, Any]:
    """(d input, x_hat) of `x_hat * scale` with `x_hat` = input standardised over
    `dims` (biased variance + eps); `scale` broadcasts against the input."""
    count = 1
    for d in dims:
        count *= input.shape[d]
    mean = _sum_keepdim(input, dims) / count
    centered = input - mean
    rstd = rsqrt(_sum_keepdim(centered * centered, dims) / count + eps)
    x_hat = centered * rstd
    g = grad if scale is None else grad * scale
    g_mean = _sum_keepdim(g, dims) / count
    gx_mean = _sum_keepdim(g * x_hat, dims) / count
    return rstd * (g - g_mean - x_hat * gx_mean), x_hat


def native_layer_norm_backward(
    grad: Any,
    input: Any,
    normalized_shape: tuple[int, ...],
    weight: Any,
    eps: float,
    grad_input_mask: tuple[bool, ...],
) -> tuple[Any, Any, Any]:
    axis = input.ndim - len(normalized_shape)
    dims = tuple(range(axis, input.ndim))
    grad_input, x_hat = _normalize_backward(grad, input, dims, eps, weight)
    batch = tuple(range(axis))
    grad_weight = _sum_dims(grad * x_hat, batch) if grad_input_mask[1] else None
    grad_bias = _sum_dims(grad, batch) if grad_input_mask[2] else None
    return (grad_input if grad_input_mask[0] else None), grad_weight, grad_bias


def native_batch_norm_backward(
    grad: Any,
    input: Any,
    weight: Any,
    running_mean: Any,
    running_var: Any,
    training: bool,
    eps: float,
    grad_input_mask: tuple[bool, ...],
) -> tuple[Any, Any, Any]:
    """Training: the batch statistics depend on the input (as layer norm over every
    dim but the channels). Evaluation: a fixed affine map of the input."""
    shape = (1, input.shape[1]) + (1,) * (input.ndim - 2)
    dims = (0,) + tuple(range(2, input.ndim))
    if training and _numpy_batch(grad, input, weight):
        return _batch_norm_backward_numpy(grad, input, weight, eps, grad_input_mask)
    scale = None if weight is None else reshape(weight, shape)
    if training:
        grad_input, x_hat = _normalize_backward(grad, input, dims, eps, scale)
    else:
        mean = reshape(_statistic(running_mean, grad), shape)
        invstd = rsqrt(reshape(_statistic(running_var, grad), shape) + eps)
        x_hat = (input - mean) * invstd
        grad_input = grad * invstd if scale is None else grad * (invstd * scale)
    grad_weight = _sum_dims(grad * x_hat, dims) if grad_input_mask[1] else None
    grad_bias = _sum_dims(grad, dims) if grad_input_mask[2] else None
    return (grad_input if grad_input_mask[0] else None), grad_weight, grad_bias


def _numpy_batch(grad: Any, input: Any, weight: Any) -> bool:
    """A first-order backward on float ndarrays of one dtype, not empty."""
    return (
        type(grad) is np.ndarray
        and type(input) is np.ndarray
        and input.ndim > 1
        and input.size > 0
        and input.dtype.kind == "f"
        and grad.dtype == input.dtype
        and grad.shape == input.shape
        and (weight is None or _same_float(input, weight))
    )


def _batch_norm_backward_numpy(
    grad: np.ndarray,
    input: np.ndarray,
    weight: np.ndarray | None,
    eps: float,
    grad_input_mask: tuple[bool, ...],
) -> tuple[Any, Any, Any]:
    """The training backward in a few passes: with c = x - mean, r = rstd, the
    per-channel sums s1 = sum(grad) and s2 = sum(grad * c) (one fused pass
    each) give grad_bias = s1, grad_weight = r * s2, and
    grad_input = w r (grad - s1 / n - c r^2 s2 / n), computed as
    grad * a + c * b + k with per-channel a, b, k."""
    channels = input.shape[1]
    shape = (1, channels) + (1,) * (input.ndim - 2)
    count = input.size // channels
    _, centered, var = _batch_statistics(np, input, (), shape)
    rstd = 1.0 / np.sqrt(var + eps)
    s1 = _channel_sums(grad)
    s2 = _channel_sums(grad, centered)
    grad_input = None
    if grad_input_mask[0]:
        a = rstd if weight is None else rstd * weight.reshape(-1)
        grad_input = grad * a.reshape(shape)
        centered *= (-a * rstd * rstd * s2 / count).reshape(shape)
        grad_input += centered
        grad_input += (-a * s1 / count).reshape(shape)
    grad_weight = s2 * rstd if grad_input_mask[1] else None
    grad_bias = s1 if grad_input_mask[2] else None
    return grad_input, grad_weight, grad_bias


def _statistic(running: Any, grad: Any) -> Any:
    """A running statistic as a constant next to `grad`: a Tensor outside any
    graph for a Tensor gradient, else the raw array (of any backend)."""
    raw = _raw(running)
    return constant_tensor(raw) if isinstance(grad, Tensor) else raw


def native_group_norm_backward(
    grads: list[Any],
    input: Any,
    weight: Any,
    n: int,
    c: int,
    hxw: int,
    group: int,
    eps: float,
    grad_input_mask: tuple[bool, ...],
) -> tuple[Any, Any, Any]:
    """All three outputs are differentiable, as in PyTorch: the gradients of mean
    and rstd ([N, group]) flow into the input too."""
    grad, grad_mean, grad_rstd = (list(grads) + [None, None, None])[:3]
    grouped = _grouped_shape(n, c, hxw, group)
    x = _regroup(input, grouped)
    count = x.shape[-1]
    grad_input = None
    x_hat = None
    if grad is not None:
        scale = None if weight is None else _regroup(weight, (1, c, 1))
        g = _regroup(grad, (n, c, hxw))
        g = g if scale is None else g * scale
        grad_input, x_hat = _normalize_backward(
            _regroup(g, grouped), x, (2,), eps, None
        )
    mean = _sum_keepdim(x, (2,)) / count
    centered = x - mean
    rstd = rsqrt(_sum_keepdim(centered * centered, (2,)) / count + eps)
    if grad_mean is not None:
        term = expand(_regroup(grad_mean, (n, group, 1)) / count, (n, group, count))
        grad_input = term if grad_input is None else grad_input + term
    if grad_rstd is not None:
        term = _regroup(grad_rstd, (n, group, 1)) * (-(rstd * rstd * rstd) / count)
        term = term * centered
        grad_input = term if grad_input is None else grad_input + term
    if grad_input is not None:
        grad_input = _regroup(grad_input, input.shape)
    grad_weight = grad_bias = None
    if grad is not None:
        g3 = _regroup(grad, (n, c, hxw))
        if grad_input_mask[1]:
            x_hat3 = _regroup(centered * rstd, (n, c, hxw))
            grad_weight = _sum_dims(g3 * x_hat3, (0, 2))
        if grad_input_mask[2]:
            grad_bias = _sum_dims(g3, (0, 2))
    return (grad_input if grad_input_mask[0] else None), grad_weight, grad_bias
