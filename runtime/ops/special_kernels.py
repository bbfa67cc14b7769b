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

* sin and cos, float64: numpy's float64 sin and cos call the scalar libm
  routine here, several times torch's vectorised kernel. The form reduces |x|
  by the nearest multiple n of pi/2 (pi/2 in three parts, the first two of 33
  bits, so that n times each is exact for n < 2**20 and the reduced argument
  is kept as a head and its rounding error), evaluates both sin and cos of the
  reduced argument by their Taylor series (to the terms after which the rest
  is below 1e-19 on [-pi/4, pi/4], the cos with the rounding of 1 - t/2 carried
  separately), and picks one by the quadrant n mod 4 with bit operations (a
  masked numpy write is ten times a plain pass). It runs in blocks that stay in
  cache, on arrays where a strided sample has a quarter or more of |x| >= 2.4
  (below that the C library's kernel needs no reduction and is as fast). About 0.82 ulp. Where the reduction would not be exact (n >= 2**19,
  infinities) or the result is within 1e-11 of a zero away from 0 (where the
  three parts of pi/2 leave too few bits), numpy's kernel gives the element.

* erfinv, float32: erfinv(x) = x * P(w), w = -log(1 - x**2), P one polynomial
  of degree 12 for w < 5 (|x| below about 0.9966) and another, in sqrt(w), from
  there to w = 16.7 (past the float32 below 1), each a Chebyshev least-squares
  fit of erfinv(x) / x weighted to its relative error (about 5e-10 at most),
  evaluated in float64 and rounded once. The tail's polynomial runs only in the
  blocks that hold such an element. At +-1, w is inf and so is P: +-inf.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.ops.common import _special

# The dtypes each function's form here serves: the dispatch below reads them,
# and so does the accuracy script, which checks each one against its bound.
_ERF_FAST = frozenset({np.dtype(np.float32)})
_TRIG_FAST = frozenset({np.dtype(np.float64)})
FAST_FORMS: dict[str, frozenset[np.dtype]] = {
    "erf": _ERF_FAST,
    "erfinv": _ERF_FAST,
    "sin": _TRIG_FAST,
    "cos": _TRIG_FAST,
}

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
    conversions, in blocks; nan stays nan, +-inf give +-1, -0.0 gives -0.0."""
    return _in_blocks(_erf_float32_block, x, out, 3)


def _polynomial_into(coefficients: tuple[float, ...], t: Any, acc: Any) -> Any:
    head, *rest = coefficients
    np.multiply(t, head, out=acc)
    for coefficient in rest[:-1]:
        acc += coefficient
        acc *= t
    acc += rest[-1]
    return acc


def _erf_float32_block(x: Any, out: Any, buffers: list[Any]) -> None:
    wide, square, acc = buffers
    np.clip(x, -_ERF_TANH_CLAMP, _ERF_TANH_CLAMP, out=wide)
    np.multiply(wide, wide, out=square)
    _polynomial_into(_ERF_TANH_P, square, acc)
    acc *= wide
    np.tanh(acc, out=acc)
    np.copyto(out, acc, casting="same_kind")


# Elements per block of a form's passes: its float64 buffers of this length stay
# in a core's 1 MiB cache, where a pass costs a fraction of one over memory.
_BLOCK = 16384


def _in_blocks(form: Any, x: np.ndarray, out: np.ndarray, floats: int) -> np.ndarray:
    """`form(x, out, buffers)` block by block over x and `out` when both are
    contiguous in one order (`buffers`: `floats` float64 arrays of a block's
    length, reused by every block), else once over the whole arrays."""
    same = x.flags.c_contiguous and out.flags.c_contiguous
    if not (same or x.flags.f_contiguous and out.flags.f_contiguous):
        form(x, out, [np.empty(x.shape) for _ in range(floats)])
        return out
    flat, flat_out = x.ravel(order="K"), out.ravel(order="K")
    size = flat.size
    buffers = [np.empty(min(size, _BLOCK)) for _ in range(floats)]
    for start in range(0, size, _BLOCK):
        stop = min(start + _BLOCK, size)
        if stop - start < len(buffers[0]):
            buffers = [b[: stop - start] for b in buffers]
        form(flat[start:stop], flat_out[start:stop], buffers)
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


# erfinv's polynomials in s, highest first: s = w / 2.5 - 1 for w in [0, 5], and
# s = (2 sqrt(w) - a - b) / (b - a) for sqrt(w) in [a, b] = [sqrt(5), sqrt(16.7)]
# (benchmarks/special_accuracy.py --refit erfinv re-derives them).
_ERFINV_SPLIT, _ERFINV_END = 5.0, 16.7
_ERFINV_CENTRAL = (
    -1.2288903648845281e-06,
    2.938813676280688e-06,
    7.834193144890421e-06,
    -4.1420087888236856e-05,
    2.1014584748917316e-05,
    0.0002921539254781375,
    -0.0008343218226572169,
    -0.000487883731785395,
    0.008525431605754684,
    -0.019573563101239283,
    -0.026108237682245433,
    0.6166006919348217,
    1.5014093511302617,
)
_ERFINV_TAIL = (
    4.125625588182369e-06,
    -2.5778402879258547e-06,
    -2.7215017011221075e-05,
    6.304194447917073e-05,
    -2.5288961826924983e-05,
    -0.00020554597624453807,
    0.0007364451576874822,
    -0.00152790768155426,
    0.0024634544021270117,
    -0.0037877645198887582,
    0.005563855904000715,
    0.9291432785033272,
    2.994779907489531,
)
_ROOT_LOW, _ROOT_HIGH = math.sqrt(_ERFINV_SPLIT), math.sqrt(_ERFINV_END)


def erfinv(x: Any) -> Any:
    """erfinv of an ndarray or number in its float dtype: the fast form for a
    float32 array, scipy.special.erfinv otherwise."""
    if type(x) is np.ndarray and x.dtype in _ERF_FAST and x.ndim:
        with np.errstate(divide="ignore", invalid="ignore"):
            return _in_blocks(_erfinv_float32_block, x, np.empty_like(x), 4)
    return _special().erfinv(x)


def _erfinv_float32_block(x: Any, out: Any, buffers: list[Any]) -> None:
    wide, w, s, acc = buffers
    np.copyto(wide, x)
    np.subtract(1, wide, out=w)  # exact, as 1 + x: x has 24 bits
    np.add(1, wide, out=s)
    w *= s
    np.log(w, out=w)
    np.negative(w, out=w)
    np.multiply(w, 2 / _ERFINV_SPLIT, out=s)
    s -= 1
    _polynomial_into(_ERFINV_CENTRAL, s, acc)
    tail = np.greater_equal(w, _ERFINV_SPLIT)
    if tail.any():
        np.sqrt(w, out=s)
        s *= 2 / (_ROOT_HIGH - _ROOT_LOW)
        s -= (_ROOT_HIGH + _ROOT_LOW) / (_ROOT_HIGH - _ROOT_LOW)
        np.copyto(acc, _polynomial_into(_ERFINV_TAIL, s, w), where=tail)
    acc *= wide
    np.copyto(out, acc, casting="same_kind")


# pi/2 = _HALF_PI[0] + _HALF_PI[1] + _HALF_PI[2] to about 119 bits; the first two
# parts have 33 significant bits each (the accuracy test re-derives all three).
_HALF_PI = (
    float.fromhex("0x1.921fb544p+0"),
    float.fromhex("0x1.0b4611a6p-34"),
    float.fromhex("0x1.3198a2e037073p-69"),
)
_TWO_OVER_PI = float.fromhex("0x1.45f306dc9c883p-1")
# sin(r) = r + r**3 * S(r**2), cos(r) = 1 - r**2 / 2 + r**4 * C(r**2): the Taylor
# coefficients, highest first (S through r**17, C through r**16).
_SIN_S = tuple((-1) ** (k + 1) / math.factorial(2 * k + 3) for k in range(7, -1, -1))
_COS_C = tuple((-1) ** k / math.factorial(2 * k + 4) for k in range(6, -1, -1))
# n * _HALF_PI[0] is exact while n < 2**20: the form serves n below this.
_TRIG_LIMIT_N = 2.0**19
# Results smaller than this at |x| > pi/4 (a near-multiple of pi) go to numpy's.
_TRIG_NEAR_ZERO = 1e-11
# The size below which numpy's kernel is faster than the form's passes.
_TRIG_MIN_SIZE = 16384
_TRIG_SAMPLE_STRIDE = 61
_SIGN_BIT = np.int64(-(2**63))


def _trig_block(quarter: int, x: Any, out: Any, buffers: list[Any]) -> None:
    """sin(x + quarter * pi / 2) of one float64 block into `out`."""
    a, n, r, tail, t, s, c, k, bits = buffers
    k, bits = k.view(np.int64), bits.view(np.int64)
    np.abs(x, out=a)
    np.multiply(a, _TWO_OVER_PI, out=n)
    np.rint(n, out=n)
    high, middle, low = _HALF_PI
    np.multiply(n, high, out=tail)
    np.subtract(a, tail, out=tail)  # exact: the two are within a factor of 2
    np.multiply(n, middle, out=t)  # exact
    # The reduced argument as a head r and a tail below an ulp of it: two
    # subtractions, each with its rounding error recovered exactly.
    np.subtract(tail, t, out=r)
    np.subtract(tail, r, out=tail)
    tail -= t
    np.multiply(n, low, out=t)
    np.subtract(r, t, out=a)
    np.subtract(r, a, out=r)
    r -= t
    tail += r
    r, a = a, r
    np.multiply(r, r, out=t)
    # sin(r + tail) = r + (r t S(t) + tail (1 - t / 2))
    _polynomial_into(_SIN_S, t, s)
    s *= t
    s *= r
    np.multiply(t, -0.5, out=c)
    c += 1
    c *= tail
    s += c
    s += r
    # cos(r + tail) = w + ((1 - w) - t / 2 + (t**2 C(t) - r tail)), w = 1 - t / 2
    _polynomial_into(_COS_C, t, c)
    c *= t
    c *= t
    np.multiply(r, tail, out=tail)
    c -= tail
    np.multiply(t, 0.5, out=t)
    np.subtract(1, t, out=r)
    np.subtract(1, r, out=a)
    a -= t
    c += a
    c += r
    # The quadrant q = n + quarter: cos where q is odd, negated where q & 2 (and,
    # for sin, where x is negative: sin is odd), as integer operations on the bits.
    np.copyto(k, n, casting="unsafe")
    if quarter:
        k += quarter
    s_bits, c_bits = s.view(np.int64), c.view(np.int64)
    np.bitwise_and(k, 1, out=bits)
    np.negative(bits, out=bits)  # all ones where q is odd
    np.bitwise_xor(s_bits, c_bits, out=c_bits)
    c_bits &= bits
    s_bits ^= c_bits
    np.bitwise_and(k, 2, out=bits)
    np.left_shift(bits, 62, out=bits)
    if not quarter:
        np.bitwise_and(x.view(np.int64), _SIGN_BIT, out=k)
        bits ^= k
    s_bits ^= bits
    np.copyto(out, s)
    # numpy's kernel for a result near 0 past the first multiple of pi / 2, and
    # past the limit (the infinities too).
    np.abs(s, out=t)
    elsewhere, flag = np.less(t, _TRIG_NEAR_ZERO), np.greater_equal(n, 1)
    elsewhere &= flag
    elsewhere |= np.greater_equal(n, _TRIG_LIMIT_N, out=flag)
    if elsewhere.any():
        elsewhere = np.flatnonzero(elsewhere)
        out[elsewhere] = (np.cos if quarter else np.sin)(x[elsewhere])


def _trig_float64(x: np.ndarray, quarter: int) -> np.ndarray:
    """sin (quarter 0) or cos (quarter 1) of a contiguous float64 array."""
    with np.errstate(invalid="ignore", over="ignore"):
        return _in_blocks(partial(_trig_block, quarter), x, np.empty_like(x), 9)


def _trig_fast(x: np.ndarray) -> bool:
    """Whether a large ndarray takes the form: float64, contiguous, and with a
    quarter or more of an evenly strided sample at |x| >= 2.4. numpy's kernel
    (the C library's) is as fast as the form below that magnitude, where it
    needs no reduction, and slower above."""
    if x.dtype not in _TRIG_FAST or not (x.flags.c_contiguous or x.flags.f_contiguous):
        return False
    sample = x.ravel(order="K")[::_TRIG_SAMPLE_STRIDE]
    return 4 * np.count_nonzero(np.abs(sample) >= 2.4) >= sample.size


def sin_kernel(x: Any) -> Any:
    """sin of an array of any backend: the fast form for a large contiguous
    float64 ndarray, numpy's (or the array's namespace's) sin otherwise."""
    if type(x) is np.ndarray:
        if x.size >= _TRIG_MIN_SIZE and _trig_fast(x):
            return _trig_float64(x, 0)
        return np.sin(x)
    return backend.namespace_of(x).sin(x)


def cos_kernel(x: Any) -> Any:
    """cos of an array of any backend, as sin_kernel."""
    if type(x) is np.ndarray:
        if x.size >= _TRIG_MIN_SIZE and _trig_fast(x):
            return _trig_float64(x, 1)
        return np.cos(x)
    return backend.namespace_of(x).cos(x)
