"""Fast forms of special functions, where they beat scipy.special's at no loss
of accuracy, and the dispatch that picks them.

scipy.special's float32 ufuncs convert each element to float64 and call the
scalar double routine, about 15-20 ns an element here; a vectorised numpy form
of a handful of passes is several times faster. A form is used only for the
dtypes where its measured error is within the bound `benchmarks/
special_accuracy.py` checks (PyTorch's own kernel's maximum error, or 1 ulp,
whichever is larger), over the whole float range, tails, subnormals, infinities
and nan included; that script writes the table (benchmarks/special_accuracy.md)
and re-derives the coefficients below. Everything else keeps scipy's kernel.

The forms:

* erf, float32: erf(x) = tanh(x * P(x**2)), P a degree-10 polynomial fitted to
  atanh(erf(x)) / x on [0, 4] (a weighted Chebyshev least-squares fit,
  weighted by how an error in P moves erf relative to its value), evaluated in
  float64 and rounded once to float32: at most 0.62 ulp. The tanh carries the
  saturation (erf rounds to 1 in float32 from about 3.9 on; the input is
  clamped at 4), so a polynomial of modest degree suffices, and any error in P is
  damped by tanh's slope where erf approaches 1. Evaluated in float32
  arithmetic the same form errs by 3.7 ulps, above the bound, hence float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime.ops.common import _special

# The dtypes each function's form here serves: the dispatch below reads them,
# and so does the accuracy script, which checks each one against its bound.
_ERF_FAST = frozenset({np.dtype(np.float32)})
FAST_FORMS: dict[str, frozenset[np.dtype]] = {"erf": _ERF_FAST}

# P's coefficients in powers of t = x**2, highest first (degree 10). The
# constant term is 2 / sqrt(pi) to eight digits (erf's slope at 0).
_ERF_TANH_P = (
    -1.3744026083809791e-11,
    8.235036254232971e-10,
    -2.066525712536922e-08,
    2.769296552813303e-07,
    -1.9697022064695617e-06,
    3.5530314918780044e-06,
    6.518867074324033e-05,
    -0.0005912367702485559,
    -0.00020850677351704015,
    0.10277244943915409,
    1.128379174577638,
)
# Where the fit ends: erf rounds to 1 in float32 well before 4, and so does
# the form there (at 3.92, erfc is within 1% of half an ulp of 1).
_ERF_TANH_CLAMP = 4.0


def erf_float32_into(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """erf of a float32 array into the float32 array `out` (which may be x):
    tanh(x * P(x**2)) in float64, rounded once. Sixteen float64 passes and two
    conversions; nan stays nan, +-inf give +-1, -0.0 gives -0.0."""
    wide = np.clip(x, -_ERF_TANH_CLAMP, _ERF_TANH_CLAMP, dtype=np.float64)
    square = np.multiply(wide, wide)
    head, *rest = _ERF_TANH_P
    acc = np.multiply(square, head)
    for coefficient in rest[:-1]:
        acc += coefficient
        acc *= square
    acc += rest[-1]
    acc *= wide
    np.tanh(acc, out=acc)
    np.copyto(out, acc, casting="same_kind")
    return out


def erf_into(x: Any, out: Any) -> Any:
    """erf(x) into `out` (an ndarray of x's shape and float dtype, possibly x):
    the fast form for float32, scipy.special.erf otherwise."""
    if out.dtype in _ERF_FAST and out.ndim:
        return erf_float32_into(x, out)
    return _special().erf(x, out=out)


def erf(x: Any) -> Any:
    """erf of an ndarray or number in its float dtype (scipy's result type):
    the fast form for a float32 array, scipy.special.erf otherwise."""
    if type(x) is np.ndarray and x.dtype in _ERF_FAST and x.ndim:
        return erf_float32_into(x, np.empty_like(x))
    return _special().erf(x)
