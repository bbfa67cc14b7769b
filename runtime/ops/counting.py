"""Results made of counts, memberships, signs and divisors, which carry no
gradient: bincount, histogram, isin, gcd, lcm, signbit, isposinf, isneginf and
heaviside.

Each refuses the dtypes PyTorch's CPU kernels refuse, with their texts
("gcd_cpu" not implemented for 'Float'), and computes in the dtype PyTorch's
returns: bincount's counts are int64 and its weighted sums the weights' float
dtype (double for integer weights); heaviside and gcd keep their operands' dtype.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime.backend import dtype_kind, namespace_of
from yamlgrad.runtime.errors import scalar_type_name as _st

KERNELS = (
    "isposinf_kernel",
    "isneginf_kernel",
    "signbit_kernel",
    "heaviside_kernel",
    "gcd_kernel",
    "lcm_kernel",
    "isin_kernel",
    "bincount_kernel",
    "histogram_kernel",
)
BACKWARD_HELPERS = ()


def _floating(x: Any) -> bool:
    return dtype_kind(x.dtype) == "f"


def _never(xp: Any, x: Any) -> Any:
    return xp.zeros(x.shape, dtype=xp.bool)


def isposinf_kernel(x: Any) -> Any:
    """Whether each element is +inf (never, for integers and bools)."""
    xp = namespace_of(x)
    x = xp.asarray(x)
    return xp.logical_and(xp.isinf(x), x > 0) if _floating(x) else _never(xp, x)


def isneginf_kernel(x: Any) -> Any:
    """Whether each element is -inf (never, for integers and bools)."""
    xp = namespace_of(x)
    x = xp.asarray(x)
    return xp.logical_and(xp.isinf(x), x < 0) if _floating(x) else _never(xp, x)


def signbit_kernel(x: Any) -> Any:
    """Whether each element's sign bit is set (-0.0 included)."""
    xp = namespace_of(x)
    x = xp.asarray(x)
    if _floating(x):
        return xp.signbit(x)
    return x < 0 if dtype_kind(x.dtype) == "i" else _never(xp, x)


def heaviside_kernel(x: Any, values: Any) -> Any:
    """0 where x < 0, `values` where x == 0, 1 where x > 0 (and 0 at NaN, as
    PyTorch compares), in the operands' one dtype."""
    xp = namespace_of(x, values)
    x, values = xp.asarray(x), xp.asarray(values)
    if x.dtype != values.dtype:
        raise RuntimeError(
            "heaviside is not yet implemented for tensors with different dtypes."
        )
    return xp.where(x == 0, values, xp.astype(x > 0, x.dtype))


def _integral(name: str, x: np.ndarray) -> None:
    """PyTorch's error for gcd/lcm of the (promoted) operands' dtype."""
    if x.dtype.kind not in "iu":
        raise NotImplementedError(
            f"\"{name}_cpu\" not implemented for '{_st(x.dtype)}'"
        )


def gcd_kernel(x: Any, other: Any) -> np.ndarray:
    """The greatest common divisor of each pair (non-negative; gcd(0, 0) is 0)."""
    x, other = np.asarray(x), np.asarray(other)
    _integral("gcd", x)
    return np.gcd(x, other)


def lcm_kernel(x: Any, other: Any) -> np.ndarray:
    """The least common multiple of each pair (non-negative; 0 with a 0)."""
    x, other = np.asarray(x), np.asarray(other)
    _integral("lcm", x)
    return np.lcm(x, other)


def isin_kernel(
    elements: Any, test_elements: Any, assume_unique: bool, invert: bool
) -> np.ndarray:
    """Whether each element is among `test_elements` (or not, with `invert`)."""
    elements, test_elements = np.asarray(elements), np.asarray(test_elements)
    found = np.isin(elements, test_elements, assume_unique=assume_unique, invert=invert)
    return np.asarray(found, dtype=bool)


def bincount_kernel(x: Any, weights: Any, minlength: int) -> np.ndarray:
    """How often each value 0..max occurs in the 1-d non-negative `x` (at least
    `minlength` bins), or the sum of its `weights`."""
    x = np.asarray(x)
    if x.dtype.kind not in "iub":
        raise NotImplementedError(
            f"\"bincount_cpu\" not implemented for '{_st(x.dtype)}'"
        )
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return np.bincount(x, minlength=minlength).astype(np.int64, copy=False)
    weights = np.asarray(weights)
    if weights.ndim != 1 or weights.shape[0] != x.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    dtype = weights.dtype if _floating(weights) else np.dtype(np.float64)
    return np.bincount(x, weights, minlength=minlength).astype(dtype, copy=False)


def histogram_kernel(
    x: Any, bins: Any, weight: Any, density: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The counts (or the weights' sums) of `x` between the edges `bins` (the
    last bin closed), and the edges; with `density`, normalised to integrate
    to 1. Both in `x`'s float dtype."""
    x = np.asarray(x)
    if not _floating(x):
        raise NotImplementedError(
            f"\"histogramdd\" not implemented for '{_st(x.dtype)}'"
        )
    edges = np.asarray(bins, dtype=x.dtype)
    weights = None if weight is None else np.asarray(weight).ravel()
    hist, _ = np.histogram(x.ravel(), edges, weights=weights, density=density)
    return hist.astype(x.dtype), edges.copy()
