"""The multivariate log-gamma function mvlgamma (a sum of scipy.special's
gammaln) and its backward helper (a sum of digammas, recorded on Tensors)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.ops.common import _special
from yamlgrad.runtime.ops.special import digamma

KERNELS = ("mvlgamma_kernel",)
BACKWARD_HELPERS = ("mvlgamma_backward",)


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
    _check_mvlgamma(p)
    dtype = x.dtype if x.dtype.kind == "f" else np.float32
    return backend.blockwise(_mvlgamma, x, p, dtype=dtype)


def _mvlgamma(x: Any, p: int) -> Any:
    x = _float(x)
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
