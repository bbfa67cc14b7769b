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

from yamlgrad.runtime import backend
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.errors import scalar_type_name
from yamlgrad.runtime.ops.namespace import array_namespace, register_numpy_kernels
from yamlgrad.runtime.ops.common import (
    _SAME_WIDTH,
    _dim,
    _select,
    _zero_outside,
)
from yamlgrad.runtime.ops.complex_numbers import conj
from yamlgrad.runtime.ops.elementwise import exp
from yamlgrad.runtime.ops.special_kernels import erf as special_erf, erf_into
from yamlgrad.runtime.ops.reductions import _dims, _single_axis, _sum_keepdim

KERNELS = (
    "log_sigmoid_forward_kernel",
    "sigmoid",
    "relu",
    "silu_kernel",
    "softmax",
    "softmax_backward_data_kernel",
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
)
BACKWARD_HELPERS = (
    "threshold_backward",
    "sigmoid_backward",
    "tanh_backward",
    "softmax_backward_data",
    "softmax_double_backward",
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
)


def _scratch(x: Any, order: str = "K") -> Any:
    """A fresh array of x's shape, layout (or `order`) and floating or complex
    dtype for a kernel's passes (0-d too: numpy's ufuncs return a scalar)."""
    return np.empty_like(x, dtype=_float_type(x), order=order)


def _float_type(x: Any) -> np.dtype:
    dtype = np.asarray(x).dtype
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def _foreign(x: Any) -> Any:
    """x's namespace when x is another backend's array (Dask, CuPy,
    array_api_strict), which a kernel's standard formula serves; None for
    numpy's arrays and numbers, which take its numpy passes."""
    if type(x) is np.ndarray or not backend.is_foreign(x):
        return None
    return backend.namespace_of(x)


def _portable(*values: Any) -> bool:
    """A Tensor among the values (a double backward, whose ops are recorded) or
    another backend's array: the helper's standard formula, through
    array_namespace, rather than its numpy passes."""
    return any(isinstance(v, Tensor) or backend.is_foreign(v) for v in values)


def _sigmoid_into(x: Any, out: Any) -> Any:
    """1 / (1 + exp(-x)) in `out`: exact in the limits (exp overflows to inf and
    the result is 0; it underflows to 0 and the result is 1), four passes and no
    temporary."""
    return _sigmoid_of_negated(np.negative(x, out=out), out)


def _sigmoid_of_negated(negated: Any, out: Any) -> Any:
    """1 / (1 + exp(negated)) in `out` (which may be `negated`): sigmoid of
    -negated, in three passes."""
    np.exp(negated, out=out)
    out += 1
    return np.reciprocal(out, out=out)


def sigmoid(x: Any) -> Any:
    """1 / (1 + exp(-x)), in x's float dtype."""
    xp = _foreign(x)
    if xp is not None:
        return 1 / (1 + xp.exp(-x))
    return _sigmoid_into(x, _scratch(x))


def relu(x: Any) -> Any:
    if type(x) is np.ndarray:
        return np.maximum(x, 0)
    xp = backend.namespace_of(x)
    return xp.maximum(x, xp.zeros_like(x))


def silu_kernel(x: Any) -> Any:
    """x / (1 + exp(-x)), PyTorch's formula: four passes."""
    xp = _foreign(x)
    if xp is not None:
        return x / (1 + xp.exp(-x))
    out = np.negative(x, out=_scratch(x))
    np.exp(out, out=out)
    out += 1
    return np.divide(x, out, out=out)


def softmax(x: Any, dim: int) -> Any:
    """exp(x) / sum(exp(x)) along `dim`, shifted by the max."""
    axis = _single_axis(x, dim)
    if type(x) is not np.ndarray and backend.is_foreign(x):
        xp = backend.namespace_of(x)
        shifted = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
        return shifted / xp.sum(shifted, axis=axis, keepdims=True)
    if np.size(x) == 0:
        return np.array(x, copy=True)
    shifted = np.subtract(x, np.amax(x, axis=axis, keepdims=True), out=_scratch(x))
    np.exp(shifted, out=shifted)
    shifted /= np.sum(shifted, axis=axis, keepdims=True)
    return shifted


def log_softmax(x: Any, dim: int) -> Any:
    axis = _single_axis(x, dim)
    if type(x) is not np.ndarray and backend.is_foreign(x):
        xp = backend.namespace_of(x)
        shifted = x - xp.max(x, axis=axis, keepdims=True)
        return shifted - xp.log(xp.sum(xp.exp(shifted), axis=axis, keepdims=True))
    if np.size(x) == 0:
        return np.array(x, copy=True)
    shifted = np.subtract(x, np.amax(x, axis=axis, keepdims=True), out=_scratch(x))
    shifted -= np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    return shifted


def cpu_softmax_input(x: Any, dim: int, half_to_float: bool) -> Any:
    """`_softmax`/`_log_softmax`'s input, after the dim's range check, refusing
    half_to_float as PyTorch's CPU kernels do."""
    _dim(dim, np.ndim(x), "softmax")
    if half_to_float:
        raise RuntimeError(
            "softmax with half to float conversion is not supported on CPU"
        )
    return x


# gelu's constants: sqrt(2 / pi) and PyTorch's cubic coefficient (tanh form), and
# 1 / sqrt(2), 1 / sqrt(2 * pi) (exact form).
_GELU_K = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715
_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def gelu_kernel(x: Any, approximate: str) -> Any:
    """x * Phi(x), Phi the standard normal CDF; "tanh" is PyTorch's approximation
    0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3))), computed as
    x * sigmoid(2 * inner) (the same function: 0.5 * (1 + tanh(z)) is
    sigmoid(2z)), which takes two passes fewer."""
    out = _scratch(x)
    if approximate == "tanh":
        np.multiply(x, x, out=out)
        out *= -2 * _GELU_K * _GELU_C
        out -= 2 * _GELU_K
        out *= x  # -2 * inner
        np.exp(out, out=out)
        out += 1
        return np.divide(x, out, out=out)
    if approximate != "none":
        raise RuntimeError("approximate argument must be either none or tanh.")
    np.multiply(x, _SQRT_HALF, out=out)
    erf_into(out, out)
    out += 1
    out *= 0.5  # before x: x * 2 overflows near the largest float
    out *= x
    return out


def softplus_kernel(x: Any, beta: float, threshold: float) -> Any:
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold;
    computed as max(s, 0) + log1p(exp(-|s|)), s = beta * x, which never
    overflows."""
    xp = _foreign(x)
    if xp is not None:
        scaled = x * beta
        return xp.where(scaled > threshold, x, _nn_softplus(scaled) / beta)
    out = _scratch(x)
    scaled = np.multiply(x, beta, out=out) if beta != 1 else x
    if beta > 0 and threshold >= 20 and np.ndim(x):
        # PyTorch's log1p(exp(s)) / beta below the threshold, x above: exp is
        # taken at min(s, threshold), and max(., x) picks x above it, with no
        # mask (log1p(exp(threshold)) exceeds the threshold by exp(-threshold),
        # under 3e-9 from 20 up).
        np.minimum(scaled, threshold, out=out)
        np.exp(out, out=out)
        np.log1p(out, out=out)
        if beta != 1:
            out /= beta
        return np.maximum(out, x, out=out)
    linear = scaled > threshold
    softplus = _softplus(scaled, out)
    if beta != 1:
        softplus /= beta
    return _select(linear, x, softplus)


def _softplus(s: Any, out: Any) -> Any:
    """log(1 + exp(s)) in `out` (which may be `s`): max(s, 0) + log1p(exp(-|s|))."""
    positive = np.maximum(s, 0)
    np.abs(s, out=out)
    np.negative(out, out=out)
    np.exp(out, out=out)
    np.log1p(out, out=out)
    out += positive
    return out


def mish_kernel(x: Any) -> Any:
    """x * tanh(softplus(x)), with tanh(log(1 + e)) = e (e + 2) / (e (e + 2) + 2),
    e = exp(x): one exp, no log (exp is clamped at x = 20, where tanh is 1 in
    both float types)."""
    xp = _foreign(x)
    if xp is not None:
        return x * xp.tanh(_nn_softplus(x))
    out = _mish_tanh_softplus(x, _scratch(x))
    return np.multiply(out, x, out=out)


def _mish_tanh_softplus(x: Any, out: Any) -> Any:
    np.minimum(x, 20, out=out)
    np.exp(out, out=out)
    product = np.add(out, 2, out=_scratch(out))
    product *= out  # e (e + 2)
    np.add(product, 2, out=out)
    return np.divide(product, out, out=out)


def elu_kernel(x: Any, alpha: float, scale: float, input_scale: float) -> Any:
    """scale * x for x > 0, else scale * alpha * (exp(input_scale * x) - 1),
    as the sum scale * max(x, 0) + scale * alpha * expm1(input_scale * min(x, 0))
    (one term is exactly 0 on each side): no mask."""
    xp = _foreign(x)
    if xp is not None:
        negative = xp.expm1(xp.clip(x, max=0) * input_scale) * (alpha * scale)
        return xp.clip(x, min=0) * scale + negative
    out = _scratch(x)
    np.minimum(x, 0, out=out)
    if input_scale != 1:
        out *= input_scale
    np.expm1(out, out=out)
    out *= alpha * scale
    positive = np.maximum(x, 0)
    if scale != 1:
        positive *= scale
    return np.add(out, positive, out=out)


def celu_kernel(x: Any, alpha: float) -> Any:
    """elu with scale 1 and input scale 1 / alpha; PyTorch refuses alpha 0."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return elu_kernel(x, alpha, 1.0, 1.0 / alpha)


def leaky_relu_kernel(x: Any, negative_slope: float) -> Any:
    """x where x > 0, else x * negative_slope: for a slope in [0, 1] that is
    max(x, slope * x), with no mask."""
    xp = _foreign(x)
    if xp is not None:
        return xp.where(x > 0, x, x * negative_slope)
    out = np.multiply(x, negative_slope)
    if 0 <= negative_slope <= 1 and np.ndim(out):
        return np.maximum(out, x, out=out)
    return _select(x > 0, x, out)


def hardtanh_kernel(x: Any, min_val: float, max_val: float) -> Any:
    """min(max(x, min_val), max_val) in one pass (max_val where the bounds cross)."""
    xp = _foreign(x)
    if xp is not None:
        return xp.clip(x, min=min_val, max=max_val)
    return np.clip(x, min_val, max_val)


def hardswish_kernel(x: Any) -> Any:
    """x * min(max(x + 3, 0), 6) / 6; nan at -inf (0 * -inf), without numpy's
    warning, as PyTorch gives it."""
    xp = _foreign(x)
    if xp is not None:
        return x * xp.clip(x + 3, min=0, max=6) / 6
    out = _hardsigmoid_into(x, _scratch(x))
    with np.errstate(invalid="ignore"):
        return np.multiply(out, x, out=out)


def _hardsigmoid_into(x: Any, out: Any) -> Any:
    np.add(x, 3, out=out)
    np.clip(out, 0, 6, out=out)  # one pass for max(., 0) then min(., 6)
    out /= 6
    return out


def hardsigmoid_kernel(x: Any) -> Any:
    """min(max(x + 3, 0), 6) / 6."""
    xp = _foreign(x)
    if xp is not None:
        return xp.clip(x + 3, min=0, max=6) / 6
    return _hardsigmoid_into(x, _scratch(x))


def log_sigmoid_forward_kernel(x: Any) -> tuple[Any, Any]:
    """(log_sigmoid(x), exp(-|x|)): the output and PyTorch's CPU buffer, the
    output computed from the buffer."""
    xp = _foreign(x)
    if xp is not None:
        buffer = xp.exp(-xp.abs(x))
        return xp.clip(x, max=0) - xp.log1p(buffer), buffer
    # PyTorch's CPU kernel lays both out row-major, whatever x's strides
    buffer = _scratch(x, "C")
    np.abs(x, out=buffer)
    np.negative(buffer, out=buffer)
    np.exp(buffer, out=buffer)
    return _log_sigmoid_from(x, buffer, _scratch(x, "C")), buffer


def log_sigmoid_kernel(x: Any) -> Any:
    """-log(1 + exp(-x)) = min(x, 0) - log1p(exp(-|x|))."""
    out = _scratch(x)
    np.abs(x, out=out)
    np.negative(out, out=out)
    np.exp(out, out=out)
    return _log_sigmoid_from(x, out, out)


def _log_sigmoid_from(x: Any, buffer: Any, out: Any) -> Any:
    """min(x, 0) - log1p(buffer) in `out` (which may be `buffer`)."""
    np.log1p(buffer, out=out)
    return np.subtract(np.minimum(x, 0), out, out=out)


def threshold_backward_kernel(grad: Any, self: Any, threshold: float) -> Any:
    """0 where `self` is at most the threshold, else the gradient (which a nan
    `self` passes, as in PyTorch's kernel)."""
    if type(self) is not np.ndarray and not isinstance(self, np.generic):
        xp = backend.namespace_of(grad, self)
        return xp.where(self <= threshold, xp.zeros_like(grad), grad)
    drop = np.less_equal(self, threshold)
    out = drop if type(drop) is np.ndarray else None  # a 0-d self gives a scalar
    return _zero_outside(grad, np.logical_not(drop, out=out))


def threshold_backward(grad: Any, result: Any, threshold: float) -> Any:
    """relu's backward: the gradient where the output is above the threshold.

    On Tensors it is the recorded op (ThresholdBackwardBackward0), as PyTorch's:
    a second derivative through relu is zero, not disconnected."""
    return array_namespace(grad, result).threshold_backward(grad, result, threshold)


def softmax_backward_data(grad: Any, output: Any, dim: int) -> Any:
    """_softmax's backward: output * (grad - sum(grad * output, dim))."""
    dims = _dims(dim, output.ndim)
    return output * (grad - _sum_keepdim(grad * output, dims))


def softmax_backward_data_kernel(grad: Any, output: Any, dim: int) -> Any:
    """_softmax_backward_data: the gradient and the output of one dtype, which
    the result keeps (input_dtype only tells a half-precision input apart)."""
    if grad.dtype != output.dtype:
        raise RuntimeError(
            f"expected scalar type {scalar_type_name(grad.dtype)} but found "
            f"{scalar_type_name(output.dtype)}"
        )
    return softmax_backward_data(grad, output, dim)


def softmax_double_backward(grad: Any, grad_output: Any, dim: int, output: Any) -> Any:
    """_softmax_backward_data's gradient for `output`.

    With `y = o * (g - sum(g * o))` and cotangent `u`, varying `o` gives
    `u * (g - sum(g * o)) - g * sum(u * o)` (both sums over `dim`, kept)."""
    dims = _dims(dim, output.ndim)
    return grad * (grad_output - _sum_keepdim(grad_output * output, dims)) - (
        grad_output * _sum_keepdim(grad * output, dims)
    )


def log_softmax_backward_data(grad: Any, output: Any, dim: int) -> Any:
    """_log_softmax's backward: grad - exp(output) * sum(grad, dim)."""
    return grad - exp(output) * _sum_keepdim(grad, _dims(dim, output.ndim))


# The Tensor side of every helper below is built from recorded ops, so a double
# backward differentiates it again. Piecewise-constant factors (which branch of
# an activation applies) are constants: their derivative is zero, as in PyTorch.
# On ndarrays (a first-order backward) each helper computes the same derivative
# in as few passes as numpy allows, into arrays of its own, and multiplies the
# gradient in last (`_times`).


def _same_arrays(grad: Any, value: Any) -> bool:
    """Whether a gradient and the float value it goes with are ndarrays of one
    shape and dtype: then a helper's passes go straight into `out=` arrays of
    the value's layout (a compiled backward calls it between numpy calls of its
    own, where each further Python call of the helper's shows)."""
    return (
        type(grad) is np.ndarray
        and type(value) is np.ndarray
        and grad.shape == value.shape
        and grad.dtype == value.dtype
        and value.dtype.kind == "f"
    )


def _times(derivative: Any, grad: Any) -> Any:
    """derivative * grad, in place when `derivative` is an array of its own."""
    if type(derivative) is np.ndarray and derivative.shape == np.shape(grad):
        return np.multiply(derivative, grad, out=derivative)
    return derivative * grad


def _filled(value: float, like: Any) -> Any:
    """`value` as a read-only array of like's shape and dtype, without a pass."""
    return np.broadcast_to(np.asarray(value, dtype=like.dtype), like.shape)


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


def _nn_softplus(x: Any) -> Any:
    """log(1 + exp(x)) without overflow: log1p(exp(-|x|)) + relu(x)."""
    xp = array_namespace(x)
    return xp.log1p(xp.exp(-xp.abs(x))) + xp.relu(x)


def sigmoid_backward(grad: Any, result: Any) -> Any:
    """grad * conj((1 - result) * result), from sigmoid's output."""
    if _portable(grad, result):
        return grad * conj((1 - result) * result)
    derivative = np.subtract(1, result, out=_scratch(result))
    derivative *= result
    return _times(_conjugated(derivative), grad)


def tanh_backward(grad: Any, result: Any) -> Any:
    """grad * conj(1 - result**2), from tanh's output."""
    if _same_arrays(grad, result):  # the common case, with no call of ours
        derivative = np.multiply(result, result, out=np.empty_like(result))
        np.subtract(1, derivative, out=derivative)
        return np.multiply(derivative, grad, out=derivative)
    if _portable(grad, result):
        return grad * conj(1 - result * result)
    derivative = np.multiply(result, result, out=_scratch(result))
    np.subtract(1, derivative, out=derivative)
    return _times(_conjugated(derivative), grad)


def _conjugated(derivative: Any) -> Any:
    """A complex derivative conjugated in place (the gradient is grad times the
    conjugate derivative, PyTorch's convention); a real one as it is."""
    if derivative.dtype.kind == "c":
        np.conjugate(derivative, out=derivative)
    return derivative


def gelu_backward(grad: Any, self: Any, approximate: str) -> Any:
    """d gelu/dx: Phi(x) + x * phi(x), or the derivative of the tanh form."""
    if _portable(grad, self):
        return _gelu_backward_recorded(grad, self, approximate)
    x = self
    if approximate == "tanh":
        # PyTorch's 0.5 (1 + t) + 0.5 x (1 - t^2) z', t = tanh(z), z = k(x + c x^3),
        # as (1 + t) (0.5 + x (1 - t) z' / 2): one tanh (cheaper than the exp,
        # add and reciprocal of a sigmoid) and fourteen passes.
        t = np.multiply(x, x, out=_scratch(x))
        half_inner_d = np.multiply(t, 1.5 * _GELU_K * _GELU_C, out=_scratch(x))
        half_inner_d += 0.5 * _GELU_K
        t *= _GELU_K * _GELU_C
        t += _GELU_K
        t *= x  # z
        np.tanh(t, out=t)
        derivative = np.subtract(1, t, out=_scratch(t))
        derivative *= x
        derivative *= half_inner_d
        derivative += 0.5
        t += 1
        derivative *= t
        return _times(derivative, grad)
    cdf = np.multiply(x, _SQRT_HALF, out=_scratch(x))
    erf_into(cdf, cdf)
    cdf += 1
    cdf *= 0.5
    derivative = np.multiply(x, x, out=_scratch(x))
    derivative *= -0.5
    np.exp(derivative, out=derivative)
    derivative *= _INV_SQRT_2PI
    derivative *= x
    derivative += cdf
    return _times(derivative, grad)


def _gelu_backward_recorded(grad: Any, self: Any, approximate: str) -> Any:
    if approximate == "tanh":
        t = _nn_tanh(_GELU_K * (self + _GELU_C * self * self * self))
        inner_d = _GELU_K * (1 + 3 * _GELU_C * self * self)
        return grad * (0.5 * (1 + t) + 0.5 * self * (1 - t * t) * inner_d)
    cdf = 0.5 * (1 + _nn_erf(self * _SQRT_HALF))
    pdf = exp(-0.5 * self * self) * _INV_SQRT_2PI
    return grad * (cdf + self * pdf)


def silu_backward(grad: Any, self: Any) -> Any:
    """d(x * sigmoid(x))/dx = s * (1 + x * (1 - s))."""
    if _portable(grad, self):
        s = _nn_sigmoid(self)
        return grad * (s * (1 + self * (1 - s)))
    s = sigmoid(self)
    derivative = np.subtract(1, s, out=_scratch(s))
    derivative *= self
    derivative += 1
    derivative *= s
    return _times(derivative, grad)


def mish_backward(grad: Any, self: Any) -> Any:
    """d(x * tanh(softplus(x)))/dx = t + x * sigmoid(x) * (1 - t**2)."""
    if _portable(grad, self):
        t = _nn_tanh(_nn_softplus(self))
        return grad * (t + self * _nn_sigmoid(self) * (1 - t * t))
    t = _mish_tanh_softplus(self, _scratch(self))
    derivative = np.multiply(t, t, out=_scratch(t))
    np.subtract(1, derivative, out=derivative)
    derivative *= self
    derivative *= sigmoid(self)
    derivative += t
    return _times(derivative, grad)


def softplus_backward(grad: Any, self: Any, beta: float, threshold: float) -> Any:
    """sigmoid(beta * x), and 1 where the forward returned x itself."""
    if _portable(grad, self):
        scaled = self * beta
        xp = array_namespace(grad, scaled)
        return xp.where(scaled > threshold, grad, grad * xp.sigmoid(scaled))
    derivative = _scratch(self)
    scaled = np.multiply(self, beta, out=derivative) if beta != 1 else self
    # 1 where linear: sigmoid is exactly 1 there in float32 from a threshold of
    # 17 (exp(-17) is below half an ulp of 1); otherwise a mask, when any
    # element is above the threshold (one reduction, no mask in the usual case).
    exact = derivative.dtype == np.float32 and beta > 0 and threshold >= 17
    unmasked = exact or not scaled.size or not np.max(scaled) > threshold
    linear = None if unmasked else scaled > threshold
    _sigmoid_into(scaled, derivative)
    if linear is not None:
        np.maximum(derivative, linear, out=derivative)  # as 0 <= s <= 1
    return _times(derivative, grad)


def elu_backward(
    grad: Any, self: Any, alpha: float, scale: float, input_scale: float
) -> Any:
    """scale for x > 0, else scale * alpha * input_scale * exp(input_scale * x)
    (nan at a nan input, as PyTorch's vectorised kernel gives)."""
    negative_scale = alpha * scale * input_scale
    if _portable(grad, self):
        xp = array_namespace(grad, self)
        positive = self > 0
        # The exponent is taken at 0 on the positive side, where it is unused
        # (an overflow there would give 0 * inf in a double backward).
        slope = xp.exp(xp.where(positive, 0.0, self) * input_scale) * negative_scale
        return xp.where(positive, grad * scale, grad * slope)
    # exp's side is exactly negative_scale where x > 0 (exp(0) is 1): adding
    # (x > 0) * (scale - negative_scale) gives scale there, without a selection.
    derivative = _scratch(self)
    np.minimum(self, 0, out=derivative)
    if input_scale != 1:
        derivative *= input_scale
    np.exp(derivative, out=derivative)
    derivative *= negative_scale
    if scale != negative_scale:
        derivative += _positive(self, derivative.dtype, scale - negative_scale)
    return _times(derivative, grad)


def elu_backward_result(
    grad: Any, result: Any, alpha: float, scale: float, input_scale: float
) -> Any:
    """elu's derivative from its output (the in-place forms): scale where the
    output is positive, else input_scale * (result + alpha * scale)."""
    if _portable(grad, result):
        xp = array_namespace(grad, result)
        slope = (result + alpha * scale) * input_scale
        return xp.where(result > 0, grad * scale, grad * slope)
    negative = np.add(result, alpha * scale, out=_scratch(result))
    if input_scale != 1:
        negative *= input_scale
    return _times(_select(result > 0, _filled(scale, negative), negative), grad)


def leaky_relu_backward(grad: Any, self: Any, negative_slope: float) -> Any:
    """1 where `self` (or, for leaky_relu_, the result) is positive, else the slope."""
    if _portable(grad, self):
        xp = array_namespace(grad, self)
        return xp.where(self > 0, grad, grad * negative_slope)
    if 0 <= negative_slope <= 1:
        # max(1, slope) is 1 and max(0, slope) the slope: no selection.
        dtype = np.result_type(grad)
        derivative = np.empty(np.shape(self), dtype)
        np.maximum(_above_zero(self), dtype.type(negative_slope), out=derivative)
        return _times(derivative, grad)
    return _select(self > 0, grad, np.multiply(grad, negative_slope))


def _above_zero(x: Any) -> Any:
    """1 where x > 0, else 0, as bytes: the comparison into bools, viewed as
    uint8, which a float pass then reads at the speed of its own dtype (a
    comparison into floats, or a product with bools, casts at nearly twice the
    cost)."""
    return np.asarray(np.greater(x, 0)).view(np.uint8)


def _positive(x: Any, dtype: np.dtype, value: float) -> Any:
    """`value` (in `dtype`) where x > 0, else 0."""
    out = np.empty(np.shape(x), dtype)
    return np.multiply(_above_zero(x), dtype.type(value), out=out)


def hardtanh_backward(grad: Any, self: Any, min_val: float, max_val: float) -> Any:
    """The gradient strictly inside (min_val, max_val), zero outside (and at a
    nan input, as PyTorch's vectorised kernel gives)."""
    if _portable(grad, self):
        xp = array_namespace(grad, self)
        return xp.where((self > min_val) & (self < max_val), grad, 0.0)
    inside = np.greater(self, min_val)
    inside &= np.less(self, max_val)
    return _zero_outside(grad, inside)


def hardswish_backward(grad: Any, self: Any) -> Any:
    """0 up to -3, (2x + 3) / 6 below 3, the gradient itself from 3 up; nan at a
    nan input, as PyTorch's vectorised kernel gives."""
    if _portable(grad, self) or not _same_array(grad, self):
        xp = array_namespace(grad, self)
        middle = xp.where(self >= 3, grad, grad * (self / 3 + 0.5))
        return xp.where(self <= -3, 0.0, middle)
    upper = np.greater_equal(self, 3)
    derivative = np.divide(self, 3, out=_scratch(self))
    derivative += 0.5
    _keep(derivative, np.logical_not(upper))
    derivative += upper  # exactly 1 from 3 up
    # Zero up to -3 after the product, as a selection: an inf gradient there
    # gives 0, not nan.
    lower = np.less_equal(self, -3, out=upper)
    return _keep(_times(derivative, grad), np.logical_not(lower, out=lower))


def _same_array(grad: Any, x: Any) -> bool:
    """grad and x ndarrays of one shape and float dtype, not 0-d: what the
    bit-pattern passes take."""
    return (
        type(grad) is np.ndarray
        and type(x) is np.ndarray
        and grad.shape == x.shape
        and grad.dtype == x.dtype
        and x.ndim > 0
    )


def hardsigmoid_backward(grad: Any, self: Any) -> Any:
    """1/6 on (-3, 3), 0 elsewhere; PyTorch's 1/6 is a float32 constant."""
    if _portable(grad, self) or not _same_array(grad, self):
        xp = array_namespace(grad, self)
        return xp.where((self > -3) & (self < 3), grad * _NN_ONE_SIXTH, 0.0)
    inside = np.greater(self, -3)
    inside &= self < 3
    return _keep(np.multiply(grad, _NN_ONE_SIXTH), inside)


def _bits(x: np.ndarray) -> np.ndarray:
    """x's bit patterns, as signed integers of its width (a view)."""
    return x.view(_SAME_WIDTH[x.dtype.itemsize])


def _keep(out: np.ndarray, keep: Any) -> np.ndarray:
    """`out` (an array of the caller's own) with +0.0 where `keep` is False, in
    place: its bit patterns times the mask, one pass and no temporary (an inf or
    nan outside becomes 0, as a selection gives)."""
    bits = _bits(out)
    np.multiply(bits, keep, out=bits)
    return out


_NN_ONE_SIXTH = float(np.float32(1.0) / np.float32(6.0))


def log_sigmoid_backward(grad: Any, self: Any) -> Any:
    """d(-softplus(-x))/dx = sigmoid(-x) = 1 / (1 + exp(x))."""
    if _portable(grad, self):
        return grad * _nn_sigmoid(-self)
    derivative = np.exp(self, out=_scratch(self))
    derivative += 1
    np.reciprocal(derivative, out=derivative)
    return _times(derivative, grad)


register_numpy_kernels(
    sigmoid=sigmoid, relu=relu, threshold_backward=threshold_backward_kernel
)


# The per-op benchmark's floors (benchmarks/ops.py): forward and backward in the
# plainest fast numpy, free to reuse the forward's values in the backward (which
# PyTorch's nodes, saving the input, do not): what numpy reaches without fusion.


def _sigmoid_floor(grad: Any, self: Any) -> Any:
    s = 1 / (1 + np.exp(-self))
    return s, (1 - s) * s * grad


def _silu_floor(grad: Any, self: Any) -> Any:
    e = np.exp(-self)
    e += 1
    out = self / e
    s = np.reciprocal(e, out=e)
    return out, (self * (1 - s) + 1) * s * grad


def _gelu_floor(grad: Any, self: Any, approximate: str = "none") -> Any:
    # The exception to reuse: the exact form's cost is erf (scipy's, about
    # 15 ns an element, in float64; special_kernels' form in float32), and
    # gelu's node saves only the input, as PyTorch's does, so its backward takes
    # erf again. The floor takes it twice too, which is what bounds the op.
    if approximate == "tanh":
        t = np.tanh(_GELU_K * (self + _GELU_C * self * self * self))
        inner_d = _GELU_K * (1 + 3 * _GELU_C * self * self)
        return (
            0.5 * self * (1 + t),
            (0.5 * (1 + t) + 0.5 * self * (1 - t * t) * inner_d) * grad,
        )
    erf = special_erf
    out = self * (0.5 * (1 + erf(self * _SQRT_HALF)))
    cdf = 0.5 * (1 + erf(self * _SQRT_HALF))
    pdf = np.exp(-0.5 * self * self) * _INV_SQRT_2PI
    return out, (cdf + self * pdf) * grad


def _softplus_floor(
    grad: Any, self: Any, beta: float = 1, threshold: float = 20
) -> Any:
    out = np.where(self > threshold, self, np.log1p(np.exp(self)))
    return out, grad / (1 + np.exp(-self))


def _elu_floor(
    grad: Any, self: Any, alpha: float = 1, scale: float = 1, input_scale: float = 1
) -> Any:
    # The negative side's slope, exp(input_scale * min(x, 0)) * alpha * scale *
    # input_scale, is exactly that constant on the positive side: a mask times
    # the difference to `scale` completes it, with no selection.
    e = np.minimum(self, 0)
    e *= input_scale
    np.expm1(e, out=e)
    out = np.maximum(self, 0)
    out *= scale
    out += e * (alpha * scale)
    negative_scale = alpha * scale * input_scale
    step = self.dtype.type(scale - negative_scale)  # a bool mask times a float: float64
    slope = np.add(e, 1, out=e)
    slope *= negative_scale
    slope += (self > 0) * step
    slope *= grad
    return out, slope


def _selu_floor(grad: Any, self: Any) -> Any:
    return _elu_floor(grad, self, 1.6732632423543772, 1.0507009873554805)


def _hardsigmoid_floor(grad: Any, self: Any) -> Any:
    out = np.clip(self + 3, 0, 6) / 6
    return out, grad * (np.abs(self) < 3) * _NN_ONE_SIXTH


def _hardswish_floor(grad: Any, self: Any) -> Any:
    out = self * (np.clip(self + 3, 0, 6) / 6)
    derivative = (self / 3 + 0.5) * (np.abs(self) < 3) + (self >= 3)
    return out, derivative * grad


def _tanh_floor(grad: Any, self: Any) -> Any:
    t = np.tanh(self)
    return t, (1 - t * t) * grad


def _relu_floor(grad: Any, self: Any) -> Any:
    return np.maximum(self, 0), grad * (self > 0)


def _leaky_relu_floor(grad: Any, self: Any, negative_slope: float = 0.01) -> Any:
    # For a slope in [0, 1]: max(x, slope * x), and a mask times (1 - slope).
    out = np.maximum(self, self * negative_slope)
    step = self.dtype.type(1 - negative_slope)  # not a Python float: float64
    return out, grad * ((self > 0) * step + negative_slope)


def _celu_floor(grad: Any, self: Any, alpha: float = 1.0) -> Any:
    return _elu_floor(grad, self, alpha, 1.0, 1.0 / alpha)


def _hardtanh_floor(
    grad: Any, self: Any, min_val: float = -1, max_val: float = 1
) -> Any:
    inside = (self > min_val) & (self < max_val)
    return np.clip(self, min_val, max_val), grad * inside


def _mish_floor(grad: Any, self: Any) -> Any:
    # tanh(log(1 + e)) = e (e + 2) / (e (e + 2) + 2) and sigmoid(x) = e / (1 + e),
    # e = exp(x) taken once (clamped at 20, where both are 1 in either type).
    e = np.exp(np.minimum(self, 20))
    n = e * (e + 2)
    t = n / (n + 2)
    s = e / (1 + e)
    return self * t, (t + self * s * (1 - t * t)) * grad


def _log_sigmoid_floor(grad: Any, self: Any) -> Any:
    e = np.exp(-np.abs(self))
    out = np.minimum(self, 0) - np.log1p(e)
    return out, grad / (1 + np.exp(self))


FLOORS = {
    "tanh": _tanh_floor,
    "sigmoid": _sigmoid_floor,
    "silu": _silu_floor,
    "gelu": _gelu_floor,
    "softplus": _softplus_floor,
    "elu": _elu_floor,
    "selu": _selu_floor,
    "hardsigmoid": _hardsigmoid_floor,
    "hardswish": _hardswish_floor,
    "relu": _relu_floor,
    "leaky_relu": _leaky_relu_floor,
    "celu": _celu_floor,
    "hardtanh": _hardtanh_floor,
    "mish": _mish_floor,
    "log_sigmoid_forward": _log_sigmoid_floor,
}
