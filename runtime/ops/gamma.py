"""The multivariate log-gamma and the regularized incomplete gamma functions:
mvlgamma, igamma, igammac (scipy.special's gammaln, digamma, gammainc,
gammaincc), and their backward helpers.

PyTorch differentiates igamma and igammac in their second argument only: the
first one's formula is `not_implemented`, and so it is here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime.ops.common import _special
from yamlgrad.runtime.ops.elementwise import exp, log
from yamlgrad.runtime.ops.special import digamma, lgamma

KERNELS = ("mvlgamma_kernel", "igamma_kernel", "igammac_kernel")
BACKWARD_HELPERS = ("mvlgamma_backward", "igamma_other_backward")


def _check_mvlgamma(p: int) -> None:
    # PyTorch 2.13 no longer checks x > (p - 1) / 2: log |Gamma| is taken as is.
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


def _float(x: Any) -> np.ndarray:
    x = np.asarray(x)
    return x if x.dtype.kind == "f" else x.astype(np.float32)


def mvlgamma_kernel(x: Any, p: int) -> Any:
    """log of the multivariate gamma function of dimension p:
    p (p - 1) / 4 log(pi) + sum over i < p of lgamma(x - i / 2)."""
    x = _float(x)
    _check_mvlgamma(p)
    total = np.full(x.shape, p * (p - 1) / 4 * math.log(math.pi), dtype=x.dtype)
    for i in range(p):
        total += _special().gammaln(x - i / 2).astype(x.dtype, copy=False)
    return total


def mvlgamma_backward(grad: Any, self: Any, p: int) -> Any:
    """grad * sum over i < p of digamma(self - i / 2)."""
    total = None
    for i in range(p):
        term = digamma(self - i / 2)
        total = term if total is None else total + term
    return grad * total


def _incomplete(name: str, a: Any, x: Any) -> Any:
    a, x = np.asarray(a), np.asarray(x)
    dtype = np.result_type(a, x)
    if dtype.kind != "f":
        dtype = np.dtype(np.float32)
    return getattr(_special(), name)(a, x).astype(dtype, copy=False)


def igamma_kernel(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function P(a, x)."""
    return _incomplete("gammainc", a, x)


def igammac_kernel(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _incomplete("gammaincc", a, x)


def igamma_other_backward(grad: Any, self: Any, other: Any) -> Any:
    """d P(a, x) / dx = exp((a - 1) log x - x - lgamma(a))."""
    return grad * exp((self - 1) * log(other) - other - lgamma(self))

