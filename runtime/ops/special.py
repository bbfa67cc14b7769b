"""Special functions: scipy.special's kernels for erfinv, lgamma, digamma,
polygamma, the modified Bessel functions, erfcx, ndtri, log_ndtr, entr, xlog1py
and sinc, and the backward helpers of their formulas; and torch.special's Bessel
and Airy functions, which PyTorch does not differentiate (kernels only).

scipy is imported on the first call (`_special`), so `import yamlgrad` does not
load it. Its ufuncs have float32 loops, so a float32 input stays float32;
polygamma, which scipy computes in float64, is cast back. The helpers a formula
calls (`digamma(self)`, `special_i1(self)`, ...) run on ndarrays through these
kernels and on Tensors as the recorded ops, so every formula has a double
backward.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.errors import derivative_not_implemented
from yamlgrad.runtime.ops import special_kernels
from yamlgrad.runtime.ops.common import _special, _xlog
from yamlgrad.runtime.ops.complex_numbers import conj
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.ops.namespace import (
    TENSOR_NAMESPACE,
    array_namespace,
    register_numpy_kernels,
)

KERNELS = (
    "erfinv",
    "lgamma",
    "digamma",
    "polygamma",
    "i0",
    "special_i0e",
    "special_i1",
    "special_i1e",
    "special_erfcx",
    "special_ndtri",
    "special_log_ndtr",
    "special_entr",
    "special_xlog1py",
    "sinc",
    "igamma",
    "igammac",
    "special_zeta",
    "special_airy_ai",
    "special_bessel_j0",
    "special_bessel_j1",
    "special_bessel_y0",
    "special_bessel_y1",
    "special_modified_bessel_i0",
    "special_modified_bessel_i1",
    "special_modified_bessel_k0",
    "special_modified_bessel_k1",
    "special_scaled_modified_bessel_k0",
    "special_scaled_modified_bessel_k1",
    "special_spherical_bessel_j0",
)
BACKWARD_HELPERS = (
    "not_implemented",
    "erfinv",
    "lgamma",
    "special_zeta",
    "digamma",
    "polygamma",
    "special_i0e",
    "special_i1",
    "special_i1e",
    "special_xlog1py",
    "i1_backward",
    "i1e_backward",
    "sinc_backward",
)


def _unary(name: str, scipy_name: str, doc: str, function: Any = None) -> Any:
    def kernel(x: Any) -> Any:
        if isinstance(x, Tensor):
            return getattr(TENSOR_NAMESPACE, name)(x)
        if getattr(x, "dtype", np.dtype(float)).kind in "biu":
            x = x.astype(np.float64)  # an integer input (igamma's self): in float
        return backend.blockwise(function or _special_fn(scipy_name), x)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = f"{doc} (scipy.special.{scipy_name}); the recorded op on a Tensor."
    return kernel


def _special_fn(name: str) -> Any:
    return getattr(_special(), name)


# The inverse error function: float32 arrays take special_kernels' form.
erfinv = _unary(
    "erfinv", "erfinv", "The inverse error function", special_kernels.erfinv
)
lgamma = _unary("lgamma", "gammaln", "log |Gamma(x)|")
digamma = _unary("digamma", "psi", "d/dx log Gamma(x)")
i0 = _unary("i0", "i0", "The modified Bessel function I0")
special_i0e = _unary("special_i0e", "i0e", "exp(-|x|) * I0(x)")
special_i1 = _unary("special_i1", "i1", "The modified Bessel function I1")
special_i1e = _unary("special_i1e", "i1e", "exp(-|x|) * I1(x)")
special_erfcx = _unary("special_erfcx", "erfcx", "exp(x**2) * erfc(x)")
special_ndtri = _unary("special_ndtri", "ndtri", "The inverse of the normal CDF")
special_log_ndtr = _unary("special_log_ndtr", "log_ndtr", "log of the normal CDF")


def special_entr(x: Any) -> Any:
    """-x * log(x), 0 at 0, -inf below (scipy.special.entr); the same selections
    in the standard's names on other backends."""
    xp = backend.namespace_of(x)
    if xp is np:
        return _special().entr(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = -x * xp.log(x)
    return xp.where(x < 0, -math.inf, xp.where(x == 0, 0.0, inside))


def polygamma(n: int, x: Any) -> Any:
    """The n-th derivative of digamma (scipy.special.polygamma), in x's dtype;
    PyTorch's error for a negative n."""
    if isinstance(x, Tensor):
        return TENSOR_NAMESPACE.polygamma(n, x)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return backend.blockwise(_polygamma, n, x)


def _polygamma(n: int, x: Any) -> Any:
    value = _special().polygamma(n, x)
    dtype = np.asarray(x).dtype
    return value.astype(dtype, copy=False) if dtype.kind == "f" else value


def special_xlog1py(x: Any, y: Any) -> Any:
    """x * log1p(y), 0 where x is 0 (unless y is nan); the recorded op on Tensors."""
    if isinstance(x, Tensor) or isinstance(y, Tensor):
        return TENSOR_NAMESPACE.special_xlog1py(x, y)
    xp = backend.namespace_of(x, y)
    if xp is not np:
        return _xlog(xp, x, y, xp.log1p)
    return _special().xlog1py(x, y)


def _binary(name: str, scipy_name: str, doc: str) -> Any:
    def kernel(x: Any, y: Any) -> Any:
        if isinstance(x, Tensor) or isinstance(y, Tensor):
            return getattr(TENSOR_NAMESPACE, name)(x, y)
        return backend.blockwise(_special_fn(scipy_name), x, y)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = f"{doc} (scipy.special.{scipy_name}); the recorded op on Tensors."
    return kernel


igamma = _binary("igamma", "gammainc", "The regularized lower incomplete gamma P(a, x)")
igammac = _binary(
    "igammac", "gammaincc", "The regularized upper incomplete gamma Q(a, x)"
)
special_zeta = _binary("special_zeta", "zeta", "The Hurwitz zeta function")


def not_implemented(name: str) -> Any:
    """PyTorch's placeholder formula: a gradient nobody has derived raises when
    backward needs it (igamma's, with respect to its first argument)."""
    raise NotImplementedError(derivative_not_implemented(name))


def sinc(x: Any) -> Any:
    """sin(pi x) / (pi x), 1 at 0 (numpy's sinc), in x's float dtype."""
    xp = backend.namespace_of(x)
    if xp is np:
        return np.sinc(x)
    pi_x = x * math.pi
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.where(x == 0, 1.0, xp.sin(pi_x) / pi_x)


def _no_gradient(name: str, scipy_name: str, doc: str) -> Any:
    def kernel(x: Any) -> Any:
        return backend.blockwise(_special_fn(scipy_name), x)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = f"{doc} (scipy.special.{scipy_name})."
    return kernel


special_bessel_j0 = _no_gradient("special_bessel_j0", "j0", "The Bessel function J0")
special_bessel_j1 = _no_gradient("special_bessel_j1", "j1", "The Bessel function J1")
special_bessel_y0 = _no_gradient("special_bessel_y0", "y0", "The Bessel function Y0")
special_bessel_y1 = _no_gradient("special_bessel_y1", "y1", "The Bessel function Y1")
special_modified_bessel_i0 = _no_gradient("special_modified_bessel_i0", "i0", "I0")
special_modified_bessel_i1 = _no_gradient("special_modified_bessel_i1", "i1", "I1")
special_modified_bessel_k0 = _no_gradient("special_modified_bessel_k0", "k0", "K0")
special_modified_bessel_k1 = _no_gradient("special_modified_bessel_k1", "k1", "K1")
special_scaled_modified_bessel_k0 = _no_gradient(
    "special_scaled_modified_bessel_k0", "k0e", "exp(x) * K0(x)"
)
special_scaled_modified_bessel_k1 = _no_gradient(
    "special_scaled_modified_bessel_k1", "k1e", "exp(x) * K1(x)"
)


def special_airy_ai(x: Any) -> Any:
    """The Airy function Ai (the first of scipy.special.airy's four values)."""
    return backend.blockwise(_airy_ai, x)


def _airy_ai(x: Any) -> Any:
    return _special().airy(x)[0]


# The Taylor coefficients of sin(x) / x in x**2, highest first (PyTorch's).
_SPHERICAL_J0_SERIES = (1 / 6227020800, -1 / 39916800, 1 / 362880, -1 / 5040)
_SPHERICAL_J0_SERIES += (1 / 120, -1 / 6)


def special_spherical_bessel_j0(x: Any) -> Any:
    """sin(x) / x, by its Taylor series below |x| = 0.5 (as PyTorch's kernel), 0
    at +-inf; in x's dtype."""
    xp = backend.namespace_of(x)
    with np.errstate(all="ignore"):
        x2 = x * x
        series = _SPHERICAL_J0_SERIES[0]
        for coefficient in _SPHERICAL_J0_SERIES[1:]:
            series = coefficient + x2 * series
        out = xp.where(xp.abs(x) < 0.5, 1 + x2 * series, xp.sin(x) / x)
    return xp.where(xp.isinf(x), 0.0, out)


def _eps(x: Any) -> float:
    dtype = np.dtype((x._data if isinstance(x, Tensor) else x).dtype)
    return float(np.finfo(dtype if dtype.kind == "f" else np.float64).eps)


def i1_backward(grad: Any, self: Any, result: Any) -> Any:
    """d I1/dx = I0(x) - I1(x) / x, 0.5 at 0 (where the quotient is 0/0)."""
    xp = array_namespace(grad, self)
    eps = _eps(self)
    not_tiny = abs(self) > eps
    safe = xp.where(not_tiny, self, eps)
    return grad * xp.where(not_tiny, i0(safe) - result / safe, 0.5)


def i1e_backward(grad: Any, self: Any, result: Any) -> Any:
    """d I1e/dx = I0e(x) - I1e(x) * (sign(x) + 1 / x), 0.5 at 0."""
    xp = array_namespace(grad, self)
    eps = _eps(self)
    not_tiny = abs(self) > eps
    safe = xp.where(not_tiny, self, eps)
    derivative = special_i0e(safe) - result * (xp.sign(safe) + 1 / safe)
    return grad * xp.where(not_tiny, derivative, 0.5)


def sinc_backward(grad: Any, self: Any) -> Any:
    """grad * conj(d sinc/dx), d sinc/dx = (pi x cos(pi x) - sin(pi x)) / (pi
    x**2), 0 at 0."""
    xp = array_namespace(grad, self)
    self_pi = self * math.pi
    self_squared_pi = self * self * math.pi
    with np.errstate(divide="ignore", invalid="ignore"):
        derivative = (self_pi * xp.cos(self_pi) - xp.sin(self_pi)) / self_squared_pi
        out = grad * conj(derivative)
    return xp.where(self_squared_pi == 0, 0, out)


register_numpy_kernels(
    erfinv=erfinv,
    lgamma=lgamma,
    digamma=digamma,
    polygamma=polygamma,
    i0=i0,
    special_i0e=special_i0e,
    special_i1=special_i1,
    special_i1e=special_i1e,
    special_xlog1py=special_xlog1py,
)


# The per-op benchmark's floors (benchmarks/ops.py): forward and backward in
# plain scipy.special, whose loops are not vectorised: numpy's reach.


def _erfinv_floor(grad: Any, self: Any) -> Any:
    y = _special().erfinv(self)
    return y, 0.886226925452758 * np.exp(y * y) * grad


def _digamma_floor(grad: Any, self: Any) -> Any:
    return _special().psi(self), _special().polygamma(1, self) * grad


def _polygamma_floor(grad: Any, n: int, self: Any) -> Any:
    return _special().polygamma(n, self), _special().polygamma(n + 1, self) * grad


def _i0_floor(grad: Any, self: Any) -> Any:
    return _special().i0(self), _special().i1(self) * grad


def _i0e_floor(grad: Any, self: Any) -> Any:
    y = _special().i0e(self)
    return y, (_special().i1e(self) - np.sign(self) * y) * grad


def _i1_floor(grad: Any, self: Any) -> Any:
    y = _special().i1(self)
    return y, (_special().i0(self) - y / self) * grad


def _i1e_floor(grad: Any, self: Any) -> Any:
    y = _special().i1e(self)
    return y, (_special().i0e(self) - y * (np.sign(self) + 1 / self)) * grad


def _ndtr_floor(grad: Any, self: Any) -> Any:
    return _special().ndtr(self), np.exp(-0.5 * self * self) * 0.3989422804014327 * grad


def _sinc_floor(grad: Any, self: Any) -> Any:
    pi_x = self * math.pi
    derivative = (pi_x * np.cos(pi_x) - np.sin(pi_x)) / (pi_x * self)
    return np.sinc(self), derivative * grad


FLOORS = {
    "erfinv": _erfinv_floor,
    "special_erfinv": _erfinv_floor,
    "digamma": _digamma_floor,
    "special_digamma": _digamma_floor,
    "special_psi": _digamma_floor,
    "polygamma": _polygamma_floor,
    "special_polygamma": _polygamma_floor,
    "i0": _i0_floor,
    "special_i0": _i0_floor,
    "special_i0e": _i0e_floor,
    "special_i1": _i1_floor,
    "special_i1e": _i1e_floor,
    "special_ndtr": _ndtr_floor,
    "sinc": _sinc_floor,
    "special_sinc": _sinc_floor,
}
