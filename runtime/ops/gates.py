"""glu, the thresholding activations (hardshrink, softshrink, threshold) and the
leaky gates with a learned or random slope (prelu's _prelu_kernel,
rrelu_with_noise), with their backward helpers.

Each kernel is one standard formula for other backends' arrays and a few
numpy passes for ndarrays (a mask computed once, the selection taken on bit
patterns: np.where is several times slower on masks that change often); the
helpers run on ndarrays, on Tensors (a double backward, through the recorded
ops) and on other backends' arrays alike.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime import backend, dispatch
from yamlgrad.runtime.errors import scalar_type_name
from yamlgrad.runtime.ops.activations import _portable, sigmoid
from yamlgrad.runtime.ops.common import _dim, _select, _zero_outside
from yamlgrad.runtime.ops.namespace import array_namespace
from yamlgrad.runtime.ops.random_draws import draw_rng

KERNELS = (
    "glu_kernel",
    "hardshrink_kernel",
    "softshrink_kernel",
    "threshold_kernel",
    "prelu_kernel",
    "rrelu_with_noise_kernel",
)
BACKWARD_HELPERS = (
    "glu_backward",
    "shrink_backward",
    "prelu_kernel_backward",
    "rrelu_with_noise_backward",
)
COMPOSITE_HELPERS = ("prelu_by_shape",)


def _kernel_namespace(x: Any) -> tuple[Any, Any]:
    """(namespace, x): another backend's array as it is, anything else as an
    ndarray with numpy."""
    if type(x) is not np.ndarray and backend.is_foreign(x):
        return backend.namespace_of(x), x
    return np, np.asarray(x)


def _halves(x: Any, d: int) -> tuple[Any, Any]:
    """x's first and second halves along dim d, as views (standard slicing)."""
    half = x.shape[d] // 2
    before = (slice(None),) * d
    return x[before + (slice(0, half), ...)], x[before + (slice(half, None), ...)]


def glu_kernel(x: Any, dim: int) -> Any:
    """The first half along `dim` gated by the sigmoid of the second."""
    _, x = _kernel_namespace(x)
    if x.ndim == 0:
        raise RuntimeError(
            "glu does not support scalars because halving size must be even"
        )
    d = _dim(dim, x.ndim, "glu")
    if x.shape[d] % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {d} is size {x.shape[d]}"
        )
    a, b = _halves(x, d)
    return a * sigmoid(b)


def glu_backward(grad: Any, self: Any, dim: int) -> Any:
    """(grad * sigmoid(b), grad * a * sigmoid(b) * (1 - sigmoid(b))), joined."""
    xp = array_namespace(grad, self)
    d = dim % self.ndim
    a, b = _halves(self, d)
    gate = xp.sigmoid(b)
    first = grad * gate
    return xp.concat([first, first * a * (1 - gate)], axis=d)


def _check_lambd(x: Any, lambd: float) -> None:
    if lambd < 0:
        single = str(x.dtype).endswith("float32")
        top = "3.40282e+38" if single else "1.79769e+308"
        kind = "Float" if single else "Double"
        raise RuntimeError(
            f"lambda must be in range [0, {top}] for input dtype {kind}, but found "
            f"{lambd:g}"
        )


def hardshrink_kernel(x: Any, lambd: float) -> Any:
    """x outside [-lambd, lambd], 0 inside (nan stays nan, as in PyTorch)."""
    xp, x = _kernel_namespace(x)
    if xp is np:
        return _zero_outside(x, _outside(x, lambd))
    return xp.where((x >= -lambd) & (x <= lambd), xp.zeros_like(x), x)


def softshrink_kernel(x: Any, lambd: float) -> Any:
    """x moved towards 0 by lambd, 0 inside [-lambd, lambd]: x - clip(x, -lambd,
    lambd), two passes and no mask (exactly x - lambd, x + lambd or 0)."""
    xp, x = _kernel_namespace(x)
    _check_lambd(x, lambd)
    if xp is np:
        out = np.clip(x, -lambd, lambd, out=np.empty_like(x))
        return np.subtract(x, out, out=out)
    inside = xp.where(x < -lambd, x + lambd, xp.zeros_like(x))
    return xp.where(x > lambd, x - lambd, inside)


def _outside(x: np.ndarray, lambd: float) -> np.ndarray:
    """Where x is not in [-lambd, lambd], nan included (hardshrink keeps a nan),
    in three passes over bools."""
    inside = np.asarray(np.greater_equal(x, -lambd))  # an array for a 0-d x too
    inside &= np.less_equal(x, lambd)
    return np.logical_not(inside, out=inside)


def shrink_backward(grad: Any, self: Any, lambd: float) -> Any:
    """hardshrink's and softshrink's: the gradient outside [-lambd, lambd]
    (0 at a nan input, as PyTorch's vectorised kernel gives)."""
    if _portable(grad, self):
        xp = array_namespace(grad, self)
        return xp.where((self < -lambd) | (self > lambd), grad, 0.0)
    x = np.asarray(self)
    outside = np.less(x, -lambd)
    outside |= np.greater(x, lambd)
    return _zero_outside(grad, outside)


def threshold_kernel(x: Any, threshold: float, value: float) -> Any:
    """`value` (in x's dtype) where x <= threshold, else x."""
    xp, x = _kernel_namespace(x)
    if xp is np:
        return _select(np.less_equal(x, threshold), np.asarray(value, x.dtype), x)
    return xp.where(x <= threshold, xp.full_like(x, value), x)


def prelu_kernel(x: Any, weight: Any) -> Any:
    """x where x > 0, else weight * x (weight broadcast over x, as prelu shapes it)."""
    xp, x = _kernel_namespace(x)
    return xp.where(x > 0, x, weight * x)


def prelu_by_shape(self: Any, weight: Any) -> Any:
    """at::prelu: PyTorch's checks, then the weight viewed as (1, C, 1, ...) to
    broadcast along dim 1 (ViewBackward0) and _prelu_kernel."""
    if self.dtype != weight.dtype:
        raise RuntimeError(
            f"prelu: Type promoting not supported. Got {_type_name(self)} and "
            f"{_type_name(weight)}"
        )
    numel = weight.numel()
    if numel != 1:
        if self.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channel_size = self.shape[1] if self.ndim > 1 else 1
        if channel_size != numel:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found "
                f"parameter numbers = {numel} and channel size = {channel_size}."
            )
    if weight.ndim > 1:
        raise RuntimeError(
            "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = "
            f"{weight.ndim}"
        )
    if self.ndim != weight.ndim:
        shape = [1] * self.ndim
        if self.ndim > 1:
            shape[1] = numel
        weight = dispatch.ops.reshape(weight, tuple(shape))
    return dispatch.ops._prelu_kernel(self, weight)


def _type_name(t: Any) -> str:
    return scalar_type_name(t._data.dtype)


def prelu_kernel_backward(
    grad: Any, self: Any, weight: Any, grad_input_mask: tuple[bool, ...]
) -> tuple[Any, Any]:
    """PyTorch's _prelu_kernel_backward: (grad where self > 0, else weight * grad;
    self * grad where self <= 0, else 0). The engine sums the weight's gradient
    down to its broadcast shape."""
    xp = array_namespace(grad, self, weight)
    positive = self > 0
    grad_self = xp.where(positive, grad, weight * grad) if grad_input_mask[0] else None
    grad_weight = xp.where(positive, 0.0, self * grad) if grad_input_mask[1] else None
    return grad_self, grad_weight


def rrelu_with_noise_kernel(
    x: Any, noise: Any, lower: float, upper: float, training: bool, generator: Any
) -> Any:
    """Training: each x <= 0 scaled by a slope drawn uniformly from [lower, upper],
    the slopes (1 where x > 0) written into `noise` in place, as PyTorch's CPU
    kernel; evaluation: leaky_relu with the mean slope (noise untouched)."""
    x = np.asarray(x)
    if not training:
        return np.where(x >= 0, x, x * np.asarray((lower + upper) / 2, x.dtype))
    if tuple(np.shape(noise)) != x.shape:
        raise RuntimeError(
            f"The size of tensor a ({np.size(noise)}) must match the size of tensor b "
            f"({x.size}) at non-singleton dimension 0"
        )
    slopes = draw_rng(generator).uniform(lower, upper, x.shape).astype(x.dtype)
    slopes = np.where(x <= 0, slopes, np.asarray(1, x.dtype))
    noise[...] = slopes
    return x * slopes


def rrelu_with_noise_backward(
    grad: Any,
    self: Any,
    noise: Any,
    lower: float,
    upper: float,
    training: bool,
    self_is_result: bool,
) -> Any:
    """grad * noise (the slopes drawn) in training with a slope range, else
    leaky_relu's gradient with the mean slope."""
    if training and upper - lower > 1e-6:
        return grad * noise
    xp = array_namespace(grad, self)
    return xp.where(self > 0, grad, grad * ((lower + upper) / 2))


# The per-op benchmark's floors (benchmarks/ops.py): forward and backward in the
# plainest fast numpy, the mask computed once and shared.


def _hardshrink_floor(grad: Any, self: Any, lambd: float = 0.5) -> Any:
    outside = np.abs(self) > lambd
    return self * outside, grad * outside


def _softshrink_floor(grad: Any, self: Any, lambd: float = 0.5) -> Any:
    return self - np.clip(self, -lambd, lambd), grad * (np.abs(self) > lambd)


def _threshold_floor(grad: Any, self: Any, threshold: float, value: float) -> Any:
    above = self > threshold
    return self * above + np.logical_not(above) * value, grad * above


FLOORS = {
    "hardshrink": _hardshrink_floor,
    "softshrink": _softshrink_floor,
    "threshold": _threshold_floor,
}
