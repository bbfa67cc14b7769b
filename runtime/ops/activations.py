"""Activations and softmax: gelu, softplus, elu, hardtanh, log_sigmoid, ... and
their backward helpers.

The Tensor side of every helper is built from recorded ops, so a double backward
differentiates it again. Piecewise-constant factors (which branch an activation
applies) are constants: their derivative is zero, as in PyTorch.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime.ops.namespace import array_namespace, register_numpy_kernels
from yamlgrad.runtime.ops.common import _abs, _constant, _data, _dim, _zero_outside
from yamlgrad.runtime.ops.elementwise import erf, exp, where
from yamlgrad.runtime.ops.reductions import _dims, _single_axis, _sum_keepdim

KERNELS = (
    "sigmoid",
    "relu",
    "softmax",
    "log_softmax",
    "cpu_softmax_input",
    "gelu_kernel",
    "softplus_kernel",
    "mish_kernel",
    "elu_kernel",
    "celu_kernel",
    "leaky_relu_kernel",
    "hardtanh_kernel",
    "hardswish_kernel",
    "hardsigmoid_kernel",
    "log_sigmoid_kernel",
    "threshold_backward_kernel",
    "glu_kernel",
    "hardshrink_kernel",
    "softshrink_kernel",
    "threshold_kernel",
)
BACKWARD_HELPERS = (
    "threshold_backward",
    "softmax_backward_data",
    "log_softmax_backward_data",
    "gelu_backward",
    "silu_backward",
    "mish_backward",
    "softplus_backward",
    "elu_backward",
    "elu_backward_result",
    "leaky_relu_backward",
    "hardtanh_backward",
    "hardswish_backward",
    "hardsigmoid_backward",
    "log_sigmoid_backward",
    "glu_backward",
    "shrink_backward",
)


def sigmoid(x: Any) -> Any:
    """1 / (1 + exp(-x)), without overflow for large |x|."""
    return np.exp(-np.logaddexp(0, -x))


def relu(x: Any) -> Any:
    return np.maximum(x, 0)


def softmax(x: Any, dim: int) -> Any:
    """exp(x) / sum(exp(x)) along `dim`, shifted by the max."""
    axis = _single_axis(x, dim)
    if np.size(x) == 0:
        return np.array(x, copy=True)
    shifted = np.exp(x - np.amax(x, axis=axis, keepdims=True))
    return shifted / np.sum(shifted, axis=axis, keepdims=True)


def log_softmax(x: Any, dim: int) -> Any:
    axis = _single_axis(x, dim)
    if np.size(x) == 0:
        return np.array(x, copy=True)
    shifted = x - np.amax(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def cpu_softmax_input(x: Any, dim: int, half_to_float: bool) -> Any:
    """`_softmax`/`_log_softmax`'s input, after the dim's range check, refusing
    half_to_float as PyTorch's CPU kernels do."""
    _dim(dim, np.ndim(x), "softmax")
    if half_to_float:
        raise RuntimeError(
            "softmax with half to float conversion is not supported on CPU"
        )
    return x


def gelu_kernel(x: Any, approximate: str) -> Any:
    """x * Phi(x), Phi the standard normal CDF; "tanh" is PyTorch's approximation
    0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))."""
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + np.tanh(inner))
    if approximate != "none":
        raise RuntimeError("approximate argument must be either none or tanh.")
    return 0.5 * x * (1.0 + erf(x * math.sqrt(0.5)))


def softplus_kernel(x: Any, beta: float, threshold: float) -> Any:
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold."""
    scaled = x * beta
    return np.where(scaled > threshold, x, np.logaddexp(0, scaled) / beta)


def mish_kernel(x: Any) -> Any:
    return x * np.tanh(np.logaddexp(0, x))


def elu_kernel(x: Any, alpha: float, scale: float, input_scale: float) -> Any:
    """scale * x for x > 0, else scale * alpha * (exp(input_scale * x) - 1)."""
    negative = np.expm1(np.minimum(x, 0) * input_scale) * (alpha * scale)
    return np.where(x > 0, x * scale, negative)


def celu_kernel(x: Any, alpha: float) -> Any:
    """elu with scale 1 and input scale 1 / alpha; PyTorch refuses alpha 0."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return elu_kernel(x, alpha, 1.0, 1.0 / alpha)


def leaky_relu_kernel(x: Any, negative_slope: float) -> Any:
    return np.where(x > 0, x, x * negative_slope)


def hardtanh_kernel(x: Any, min_val: float, max_val: float) -> Any:
    return np.minimum(np.maximum(x, min_val), max_val)


def hardswish_kernel(x: Any) -> Any:
    return x * np.minimum(np.maximum(x + 3, 0), 6) / 6


def hardsigmoid_kernel(x: Any) -> Any:
    return np.minimum(np.maximum(x + 3, 0), 6) / 6


def log_sigmoid_kernel(x: Any) -> Any:
    return -np.logaddexp(0, -x)


def threshold_backward_kernel(grad: Any, self: Any, threshold: float) -> Any:
    """The gradient where `self` is above the threshold, else 0."""
    return _zero_outside(grad, np.asarray(self) > threshold)


def threshold_backward(grad: Any, result: Any, threshold: float) -> Any:
    """relu's backward: the gradient where the output is above the threshold.

    On Tensors it is the recorded op (ThresholdBackwardBackward0), as PyTorch's:
    a second derivative through relu is zero, not disconnected."""
    return array_namespace(grad, result).threshold_backward(grad, result, threshold)


def softmax_backward_data(grad: Any, output: Any, dim: int) -> Any:
    """_softmax's backward: output * (grad - sum(grad * output, dim))."""
    dims = _dims(dim, output.ndim)
    return output * (grad - _sum_keepdim(grad * output, dims))


def log_softmax_backward_data(grad: Any, output: Any, dim: int) -> Any:
    """_log_softmax's backward: grad - exp(output) * sum(grad, dim)."""
    return grad - exp(output) * _sum_keepdim(grad, _dims(dim, output.ndim))


# The Tensor side of every helper below is built from recorded ops, so a double
# backward differentiates it again. Piecewise-constant factors (which branch of
# an activation applies) are constants: their derivative is zero, as in PyTorch.


def _nn_tanh(x: Any) -> Any:
    return array_namespace(x).tanh(x)


def _nn_sigmoid(x: Any) -> Any:
    return array_namespace(x).sigmoid(x)


def _nn_erf(x: Any) -> Any:
    return array_namespace(x).erf(x)


def _nn_log1p(x: Any) -> Any:
    return array_namespace(x).log1p(x)


def _nn_relu(x: Any) -> Any:
    return array_namespace(x).relu(x)


def _nn_factor(condition: Any, like: Any) -> Any:
    """A 0/1 constant of `like`'s dtype where `condition` (computed from raw data)
    holds: it selects a branch and has no derivative."""
    dtype = _data(like).dtype
    return _constant(np.asarray(condition, dtype=dtype), like)


def _nn_softplus(x: Any) -> Any:
    """log(1 + exp(x)) without overflow: log1p(exp(-|x|)) + relu(x)."""
    return _nn_log1p(exp(-_abs(x))) + _nn_relu(x)


def gelu_backward(grad: Any, self: Any, approximate: str) -> Any:
    """d gelu/dx: Phi(x) + x * phi(x), or the derivative of the tanh form."""
    if approximate == "tanh":
        k = math.sqrt(2.0 / math.pi)
        c = 0.044715
        t = _nn_tanh(k * (self + c * self * self * self))
        inner_d = k * (1 + 3 * c * self * self)
        return grad * (0.5 * (1 + t) + 0.5 * self * (1 - t * t) * inner_d)
    cdf = 0.5 * (1 + _nn_erf(self * math.sqrt(0.5)))
    pdf = exp(-0.5 * self * self) * (1 / math.sqrt(2 * math.pi))
    return grad * (cdf + self * pdf)


def silu_backward(grad: Any, self: Any) -> Any:
    """d(x * sigmoid(x))/dx = s * (1 + x * (1 - s))."""
    s = _nn_sigmoid(self)
    return grad * (s * (1 + self * (1 - s)))


def mish_backward(grad: Any, self: Any) -> Any:
    """d(x * tanh(softplus(x)))/dx = t + x * sigmoid(x) * (1 - t**2)."""
    t = _nn_tanh(_nn_softplus(self))
    return grad * (t + self * _nn_sigmoid(self) * (1 - t * t))


def softplus_backward(grad: Any, self: Any, beta: float, threshold: float) -> Any:
    """sigmoid(beta * x), and 1 where the forward returned x itself."""
    linear = _nn_factor(_data(self) * beta > threshold, self)
    return grad * (linear + (1 - linear) * _nn_sigmoid(self * beta))


def elu_backward(
    grad: Any, self: Any, alpha: float, scale: float, input_scale: float
) -> Any:
    """scale for x > 0, else scale * alpha * input_scale * exp(input_scale * x)
    (the exponent is taken at 0 on the positive side, where it is unused)."""
    positive = _nn_factor(_data(self) > 0, self)
    negative = exp(self * (1 - positive) * input_scale) * (alpha * scale * input_scale)
    return grad * (positive * scale + (1 - positive) * negative)


def elu_backward_result(
    grad: Any, result: Any, alpha: float, scale: float, input_scale: float
) -> Any:
    """elu's derivative from its output (the in-place forms): scale where the
    output is positive, else input_scale * (result + alpha * scale)."""
    positive = _nn_factor(_data(result) > 0, result)
    negative = (result + alpha * scale) * input_scale
    return grad * (positive * scale + (1 - positive) * negative)


def leaky_relu_backward(grad: Any, self: Any, negative_slope: float) -> Any:
    """1 where `self` (or, for leaky_relu_, the result) is positive, else the
    slope."""
    slope = np.where(_data(self) > 0, 1.0, negative_slope)
    return grad * _nn_factor(slope, self)


def hardtanh_backward(grad: Any, self: Any, min_val: float, max_val: float) -> Any:
    """The gradient strictly inside (min_val, max_val), zero outside."""
    x = _data(self)
    return _zero_outside(grad, (x > min_val) & (x < max_val))


def hardswish_backward(grad: Any, self: Any) -> Any:
    """(2x + 3) / 6 on (-3, 3), 1 above, 0 below."""
    x = _data(self)
    middle = _zero_outside(grad, (x > -3) & (x < 3)) * (self / 3 + 0.5)
    return where(_nn_factor(x >= 3, self) > 0, grad, middle)


def hardsigmoid_backward(grad: Any, self: Any) -> Any:
    """1/6 on (-3, 3), 0 elsewhere; PyTorch's 1/6 is a float32 constant."""
    x = _data(self)
    return _zero_outside(grad, (x > -3) & (x < 3)) * _NN_ONE_SIXTH


_NN_ONE_SIXTH = float(np.float32(1.0) / np.float32(6.0))


def log_sigmoid_backward(grad: Any, self: Any) -> Any:
    """d(-softplus(-x))/dx = sigmoid(-x)."""
    return grad * _nn_sigmoid(-self)


register_numpy_kernels(
    sigmoid=sigmoid, relu=relu, threshold_backward=threshold_backward_kernel
)
def glu_kernel(x: Any, dim: int) -> Any:
    """The first half along `dim` gated by the sigmoid of the second."""
    x = np.asarray(x)
    if x.ndim == 0:
        raise RuntimeError(
            "glu does not support scalars because halving size must be even"
        )
    d = _dim(dim, x.ndim, "glu")
    if x.shape[d] % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {d} is size {x.shape[d]}"
        )
    a, b = np.split(x, 2, axis=d)
    return a * sigmoid(b)


def glu_backward(grad: Any, self: Any, dim: int) -> Any:
    """(grad * sigmoid(b), grad * a * sigmoid(b) * (1 - sigmoid(b))), joined."""
    xp = array_namespace(grad, self)
    d = dim % self.ndim
    half = self.shape[d] // 2
    a = xp.slice_Tensor(self, d, 0, half, 1)
    gate = xp.sigmoid(xp.slice_Tensor(self, d, half, 2 * half, 1))
    first = grad * gate
    return xp.concatenate([first, first * a * (1 - gate)], d)


def _check_lambd(x: Any, lambd: float) -> None:
    if lambd < 0:
        top = "3.40282e+38" if x.dtype == np.float32 else "1.79769e+308"
        kind = "Float" if x.dtype == np.float32 else "Double"
        raise RuntimeError(
            f"lambda must be in range [0, {top}] for input dtype {kind}, but found "
            f"{lambd:g}"
        )


def hardshrink_kernel(x: Any, lambd: float) -> Any:
    """x outside [-lambd, lambd], 0 inside."""
    x = np.asarray(x)
    return np.where((x >= -lambd) & (x <= lambd), 0, x).astype(x.dtype, copy=False)


def softshrink_kernel(x: Any, lambd: float) -> Any:
    """x moved towards 0 by lambd, 0 inside [-lambd, lambd]."""
    x = np.asarray(x)
    _check_lambd(x, lambd)
    out = np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, 0))
    return out.astype(x.dtype, copy=False)


def shrink_backward(grad: Any, self: Any, lambd: float) -> Any:
    """hardshrink's and softshrink's: the gradient outside [-lambd, lambd]."""
    x = _data(self)
    return _zero_outside(grad, (x < -lambd) | (x > lambd))


def threshold_kernel(x: Any, threshold: float, value: float) -> Any:
    """`value` where x <= threshold, else x."""
    x = np.asarray(x)
    return np.where(x <= threshold, np.asarray(value).astype(x.dtype), x)


register_numpy_kernels(sigmoid=sigmoid, relu=relu)
