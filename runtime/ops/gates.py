"""glu and the thresholding activations (hardshrink, softshrink, threshold),
with their backward helpers.

Each kernel is one standard formula for every backend (numpy's arrays
included: a selection is what these ops are); the helpers run on ndarrays, on
Tensors (a double backward, through the recorded ops) and on other backends'
arrays alike, through `array_namespace`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.ops.activations import _portable, sigmoid
from yamlgrad.runtime.ops.common import _dim, _zero_outside
from yamlgrad.runtime.ops.namespace import array_namespace

KERNELS = (
    "glu_kernel",
    "hardshrink_kernel",
    "softshrink_kernel",
    "threshold_kernel",
)
BACKWARD_HELPERS = (
    "glu_backward",
    "shrink_backward",
)


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
    """x outside [-lambd, lambd], 0 inside."""
    xp, x = _kernel_namespace(x)
    return xp.where((x >= -lambd) & (x <= lambd), xp.zeros_like(x), x)


def softshrink_kernel(x: Any, lambd: float) -> Any:
    """x moved towards 0 by lambd, 0 inside [-lambd, lambd]."""
    xp, x = _kernel_namespace(x)
    _check_lambd(x, lambd)
    inside = xp.where(x < -lambd, x + lambd, xp.zeros_like(x))
    return xp.where(x > lambd, x - lambd, inside)


def shrink_backward(grad: Any, self: Any, lambd: float) -> Any:
    """hardshrink's and softshrink's: the gradient outside [-lambd, lambd]."""
    if _portable(grad, self):
        xp = array_namespace(grad, self)
        return xp.where((self < -lambd) | (self > lambd), grad, 0.0)
    x = np.asarray(self)
    return _zero_outside(grad, (x < -lambd) | (x > lambd))


def threshold_kernel(x: Any, threshold: float, value: float) -> Any:
    """`value` (in x's dtype) where x <= threshold, else x."""
    xp, x = _kernel_namespace(x)
    return xp.where(x <= threshold, xp.full_like(x, value), x)
