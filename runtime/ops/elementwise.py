"""Element-wise ops: their forward kernels (erf, clamp, lerp, xlogy, divide, ...)
and the backward helpers of element-wise formulas (pow, clamp, logit, masks).

The mask helpers (isnan, logical_and, ...) return
constants: a piecewise-constant factor has no derivative, so on Tensors they are
built from the data with no history, as PyTorch's bool results are.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.autograd import input_metadata
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.ops.namespace import array_namespace, register_numpy_kernels
from yamlgrad.runtime.errors import type_meta_name as _tm
from yamlgrad.runtime.ops import special_kernels
from yamlgrad.runtime.ops.complex_numbers import conj, real_part
from yamlgrad.runtime.ops.common import (
    _any_tensor,
    _constant_like,
    _raw,
    _select,
    _special,
    _xlog,
)

KERNELS = (
    "fill_kernel",
    "frexp_kernel",
    "cast",
    "erf",
    "erfc",
    "sin_kernel",
    "cos_kernel",
    "logit",
    "clamp",
    "lerp",
    "xlogy",
    "divide",
    "remainder_kernel",
    "fmod_kernel",
    "fmax_kernel",
    "fmin_kernel",
    "nan_to_num_kernel",
    "exp2_kernel",
    "round_decimals",
    "logaddexp_kernel",
    "logaddexp2_kernel",
    "isfinite",
    "logical_not",
    "logical_xor",
    "logical_and",
    "logical_or",
)
BACKWARD_HELPERS = (
    "to_dtype",  # the autograd core's, and the standard's astype off numpy
    "cos",
    "sin",
    "exp",
    "log",
    "sinh",
    "cosh",
    "rsqrt",
    "sign",
    "zeros_like",
    "where",
    "maybe_multiply",
    "pow_backward",
    "pow_backward_self",
    "pow_backward_exponent",
    "isnan",
    "isfinite",
    "logical_and",
    "logical_or",
    "xlogy",
    "div_floor",
    "div_trunc",
    "clamp_backward",
    "clamp_backward_min",
    "clamp_backward_max",
    "copysign_tensor_self_backward",
    "logit_backward",
    "frexp_backward",
)


def cast(x: Any, dtype: np.dtype | None) -> Any:
    """A copy of `x` as `dtype` (a copy even when the dtype is unchanged)."""
    xp = backend.namespace_of(x)
    if xp is np:
        return np.array(x, dtype=dtype, copy=True)
    if dtype is None:
        return xp.asarray(x, copy=True)
    return xp.astype(x, backend.dtype_in(xp, dtype), copy=True)


def to_dtype(x: Any, dtype: Any) -> Any:
    """x as `dtype`, copied only when its dtype differs (recorded on a Tensor):
    the autograd core's to_dtype, and the standard's astype on other backends."""
    if backend.is_foreign(x):
        xp = backend.namespace_of(x)
        return xp.astype(x, backend.dtype_in(xp, dtype), copy=False)
    return input_metadata.to_dtype(x, dtype)


def erf(x: Any) -> Any:
    """The error function, element-wise, in x's float dtype: scipy.special.erf,
    or for float32 arrays the faster form of special_kernels (as accurate)."""
    return backend.blockwise(special_kernels.erf, x)


def erfc(x: Any) -> Any:
    """1 - erf(x), without the cancellation for large x (scipy.special.erfc)."""
    return backend.blockwise(_special().erfc, x)


def logit(x: Any, eps: float | None) -> Any:
    """log(z / (1 - z)), z = x clamped to [eps, 1 - eps] (unclamped when eps is None
    or negative, as in PyTorch). logit(1) is inf and logit(x > 1) nan, silently."""
    xp = backend.namespace_of(x)
    z = x if eps is None or eps < 0 else xp.clip(x, eps, 1 - eps)
    if xp is not np or np.ndim(z) == 0 or np.asarray(z).dtype.kind != "f":
        return xp.log(z / (1 - z))
    out = np.subtract(1, z, out=np.empty_like(z))  # three passes in one array
    np.divide(z, out, out=out)
    return np.log(out, out=out)


def clamp(x: Any, low: Any, high: Any) -> Any:
    """torch.clamp: min(max(x, low), high), skipping a bound that is None.

    With low > high every element becomes high, as in PyTorch.
    """
    if low is None and high is None:
        raise RuntimeError(
            "torch.clamp: At least one of 'min' or 'max' must not be None"
        )
    xp = backend.namespace_of(x, low, high)
    out = x
    if low is not None:
        out = xp.maximum(out, low)
    if high is not None:
        out = xp.minimum(out, high)
    return out


def lerp(start: Any, end: Any, weight: Any) -> Any:
    """start + weight * (end - start), in PyTorch's two forms: from `start` for
    |weight| < 0.5 and from `end` otherwise, so that weight 1 gives exactly end.
    No promotion: `end` and a tensor `weight` must have `start`'s dtype (a 0-d
    weight binds as a Scalar, as in PyTorch)."""
    xp = backend.namespace_of(start, end, weight)
    dtype = start.dtype
    for name, value in (("end", end), ("weight", weight)):
        if not isinstance(value, (int, float)) and value.dtype != dtype:
            if name == "weight" and value.ndim == 0:
                weight = xp.astype(value, dtype)
                continue
            raise RuntimeError(
                f"expected dtype {_tm(dtype)} for `{name}` but got dtype "
                f"{_tm(value.dtype)}"
            )
    diff = end - start
    if isinstance(weight, (int, float)):  # a Scalar weight keeps start's dtype
        return start + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)
    small = xp.abs(weight) < 0.5
    if xp is not np or np.ndim(diff) == 0:
        return xp.where(small, start + weight * diff, end - diff * (1 - weight))
    # On numpy: each branch in one buffer of its own, selected by bit patterns.
    low = weight * diff
    low += start
    high = np.subtract(1, weight, out=np.empty_like(low))
    high *= diff
    np.subtract(end, high, out=high)
    return _select(small, low, high)


def _xlogy(x: Any, y: Any) -> Any:
    """x * log(y), with 0 where x is 0 (even where log(y) is -inf) unless y is
    nan, as torch.xlogy: scipy.special.xlogy, in the operands' float dtype."""
    xp = backend.namespace_of(x, y)
    if xp is not np:
        return _xlog(xp, x, y, xp.log)
    dtype = np.result_type(x, y, 0.0)
    return _special().xlogy(np.asarray(x, dtype=dtype), np.asarray(y, dtype=dtype))


def divide(a: Any, b: Any, rounding_mode: str | None) -> Any:
    """`div` with PyTorch's rounding modes: None (true division), "trunc" (toward
    zero) or "floor" (toward -inf, as Python's `//`)."""
    xp = backend.namespace_of(a, b)
    if rounding_mode is None:
        return xp.divide(a, b)
    if rounding_mode == "trunc":
        if xp is not np:
            return _trunc_divide(xp, a, b)
        dtype = np.result_type(a, b)
        quotient = np.trunc(np.true_divide(a, b))
        return quotient if dtype.kind == "f" else quotient.astype(dtype)
    if rounding_mode == "floor":
        return xp.floor_divide(a, b)
    raise RuntimeError(
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
        f"found '{rounding_mode}'"
    )


def _trunc_divide(xp: Any, a: Any, b: Any) -> Any:
    """a / b rounded toward zero in the standard's names: trunc of the quotient
    for floats; for integers the floor quotient, plus one where the division is
    inexact and the signs differ."""
    quotient = xp.floor_divide(a, b)
    if xp.isdtype(quotient.dtype, "real floating"):
        return xp.trunc(xp.divide(a, b))
    inexact = (xp.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return quotient + xp.astype(inexact, quotient.dtype)


def remainder_kernel(a: Any, b: Any) -> Any:
    """a - b * floor(a / b), with b's sign, as PyTorch's: fmod(a, b), plus b where
    that is nonzero and its sign differs from b's (np.remainder's float loop does
    the same element by element, several times slower); the standard's
    remainder (the same definition) on other backends."""
    xp = backend.namespace_of(a, b)
    if xp is not np:
        return xp.remainder(a, b)
    if np.result_type(a, b).kind != "f":
        return np.remainder(a, b)
    mod = np.asarray(np.fmod(a, b))  # a 0-d result too, for the passes' out=
    fix = np.empty_like(mod, dtype=np.bool_)  # in mod's layout, as the result
    if np.ndim(b) == 0:
        (np.greater if b < 0 else np.less)(mod, 0, out=fix)
    else:
        np.less(mod, 0, out=fix)
        np.not_equal(fix, np.less(b, 0), out=fix)
        fix &= mod != 0
    return _select(fix, np.add(mod, b), mod)


def fmod_kernel(a: Any, b: Any) -> Any:
    """a - b * trunc(a / b), with a's sign (C's fmod): numpy's fmod; on other
    backends |a| mod |b| (exact, as fmod is) given a's sign."""
    xp = backend.namespace_of(a, b)
    if xp is np:
        return np.fmod(a, b)
    magnitude = xp.remainder(xp.abs(a), abs(b))
    if xp.isdtype(magnitude.dtype, "real floating"):
        return xp.copysign(magnitude, a)
    return xp.where(a < 0, -magnitude, magnitude)


def fmax_kernel(a: Any, b: Any) -> Any:
    """max(a, b), ignoring a nan operand (nan only where both are): numpy's fmax."""
    return _ignoring_nan(a, b, np.fmax, "maximum")


def fmin_kernel(a: Any, b: Any) -> Any:
    """min(a, b), ignoring a nan operand (nan only where both are): numpy's fmin."""
    return _ignoring_nan(a, b, np.fmin, "minimum")


def _ignoring_nan(a: Any, b: Any, np_fn: Any, name: str) -> Any:
    xp = backend.namespace_of(a, b)
    if xp is np:
        return np_fn(a, b)
    extreme = getattr(xp, name)(a, b)
    return xp.where(xp.isnan(a), b, xp.where(xp.isnan(b), a, extreme))


def nan_to_num_kernel(
    x: Any, nan: float | None, posinf: float | None, neginf: float | None
) -> Any:
    """x with nan, +inf and -inf replaced (by 0 and the dtype's largest and
    lowest finite values unless given): numpy's nan_to_num, or three selections."""
    xp = backend.namespace_of(x)
    nan = 0.0 if nan is None else nan
    if xp is np:
        return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)
    if not xp.isdtype(x.dtype, "real floating"):
        return xp.asarray(x, copy=True)
    info = xp.finfo(x.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    x = xp.where(x == math.inf, posinf, xp.where(x == -math.inf, neginf, x))
    return xp.where(xp.isnan(x), nan, x)


def exp2_kernel(x: Any) -> Any:
    """2 ** x: numpy's exp2; a power of 2.0 on backends whose standard lacks exp2."""
    xp = backend.namespace_of(x)
    return np.exp2(x) if xp is np else 2.0**x


def round_decimals(x: Any, decimals: int) -> Any:
    """x rounded half to even at `decimals` decimal places (left of the point for
    a negative count): numpy's round, or its scaling by 10**|decimals| around
    the standard's round."""
    xp = backend.namespace_of(x)
    if xp is np:
        return np.round(x, decimals)
    if decimals == 0 or not xp.isdtype(x.dtype, "real floating"):
        return xp.round(x)
    scale = 10.0 ** abs(decimals)
    return xp.round(x * scale) / scale if decimals > 0 else xp.round(x / scale) * scale


def logaddexp_kernel(a: Any, b: Any) -> Any:
    """log(exp(a) + exp(b)) as max(a, b) + log1p(exp(-|a - b|)), PyTorch's
    formula; a + b where a - b is nan (both inf of one sign, or a nan)."""
    return _logaddexp(a, b, False)


def logaddexp2_kernel(a: Any, b: Any) -> Any:
    """log2(2**a + 2**b) as max(a, b) + log1p(2**-|a - b|) / log(2)."""
    return _logaddexp(a, b, True)


def _logaddexp(a: Any, b: Any, base2: bool) -> Any:
    """Five vectorised passes where numpy's logaddexp loops element by element;
    the same formula in the standard's names on other backends."""
    scale = 1 / math.log(2) if base2 else 1.0
    xp = backend.namespace_of(a, b)
    if xp is not np:
        d = -xp.abs(a - b)
        term = xp.log1p(2.0 ** d if base2 else xp.exp(d))
        out = xp.maximum(a, b) + (term * scale if base2 else term)
        return xp.where(xp.isnan(d), a + b, out)
    power = np.exp2 if base2 else np.exp
    out = np.asarray(np.maximum(a, b))
    d = np.asarray(np.subtract(a, b))
    undefined = np.isnan(d)
    np.abs(d, out=d)
    np.negative(d, out=d)
    power(d, out=d)
    np.log1p(d, out=d)
    if scale != 1:
        d *= scale
    out += d
    if undefined.any():  # a masked ufunc call is slow: only when needed
        np.copyto(out, np.add(a, b), where=undefined)
    return out


def _unary(np_fn: Any, name: str, kernel: Any = None) -> Any:
    def helper(x: Any) -> Any:
        if isinstance(x, (int, float)):
            # numpy's IEEE results, not math's exceptions: log(0.0) is -inf (the
            # gradient of 0.0 ** y), log(-2.0) nan, exp(800.0) inf, as in PyTorch.
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                return float(np_fn(x))
        if kernel is not None and type(x) is np.ndarray:
            return kernel(x)
        return getattr(array_namespace(x), name)(x)

    helper.__name__ = helper.__qualname__ = name
    helper.__doc__ = f"`{name}` of an ndarray, a Python number, or a Tensor (recorded)."
    return helper


# sin and cos of an ndarray through the op's forward kernel (its fast form).
sin_kernel = special_kernels.sin_kernel
cos_kernel = special_kernels.cos_kernel
cos = _unary(np.cos, "cos", cos_kernel)


sin = _unary(np.sin, "sin", sin_kernel)


exp = _unary(np.exp, "exp")


log = _unary(np.log, "log")


sinh = _unary(np.sinh, "sinh")


cosh = _unary(np.cosh, "cosh")


def _rsqrt(x: Any) -> Any:
    xp = backend.namespace_of(x)
    return xp.reciprocal(xp.sqrt(x))


rsqrt = _unary(_rsqrt, "rsqrt")


def sign(x: Any) -> Any:
    return array_namespace(x).sign(x)


def zeros_like(x: Any) -> Any:
    """Zeros of x's shape and dtype; never part of a graph."""
    raw = _raw(x)
    if type(raw) is not np.ndarray and not isinstance(raw, (np.generic, int, float)):
        return _constant_like(x, backend.namespace_of(raw).zeros_like(raw))
    return _constant_like(x, np.zeros_like(raw))


def where(condition: Any, x: Any, y: Any) -> Any:
    return array_namespace(condition, x, y).where(condition, x, y)


def maybe_multiply(grad: Any, alpha: Any) -> Any:
    """`grad * alpha`, skipped when alpha is 1."""
    return grad if alpha == 1 else grad * alpha


def pow_backward(grad: Any, self: Any, exponent: float) -> Any:
    """grad * conj(d(self ** exponent)), the derivative exponent * self **
    (exponent - 1); zero for exponent 0."""
    if exponent == 0:
        return zeros_like(self)
    return grad * conj(exponent * self ** (exponent - 1))


def pow_backward_self(grad: Any, self: Any, exponent: Any) -> Any:
    """grad * conj(d(self ** exponent)/d(self)) for a tensor exponent; zero where
    it is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        value = grad * conj(exponent * self ** (exponent - 1))
    return where(exponent == 0, zeros_like(value), value)


def pow_backward_exponent(grad: Any, self: Any, exponent: Any, result: Any) -> Any:
    """grad * conj(d(self ** exponent)/d(exponent)), the derivative result *
    log(self); 0 where self is 0 and the exponent's real part is >= 0 (the limit
    PyTorch takes)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        value = grad * conj(result * log(self))
    if isinstance(self, (int, float)):
        if self != 0:
            return value
        return where(real_part(exponent) >= 0, zeros_like(value), value)
    mask = where(self == 0, real_part(exponent) >= 0, False)
    return where(mask, zeros_like(value), value)


def _mask(np_fn: Any, name: str) -> Any:
    def helper(*values: Any) -> Any:
        raws = [_raw(v) for v in values]
        if all(type(r) in backend.NUMPY or isinstance(r, np.generic) for r in raws):
            out = np_fn(*raws)
        else:
            out = _standard_mask(name, raws)
        return Tensor._make(out) if _any_tensor(*values) else out

    helper.__name__ = helper.__qualname__ = name
    helper.__doc__ = (
        f"`np.{np_fn.__name__}` as a bool mask; a Tensor one (no grad) if any input "
        "is a Tensor. Its derivative is zero, so nothing is recorded."
    )
    return helper


def _standard_mask(name: str, raws: list[Any]) -> Any:
    """A mask on another backend, where the standard takes only bool operands for
    the logical functions and only numbers for isnan and isfinite: an operand
    counts as true where it is nonzero, and a bool is finite and not nan."""
    xp = backend.array_namespace(*raws)
    if name.startswith("logical_"):
        return getattr(xp, name)(*(r if _is_bool(xp, r) else r != 0 for r in raws))
    (x,) = raws
    if _is_bool(xp, x):
        return xp.ones_like(x) if name == "isfinite" else xp.zeros_like(x)
    return getattr(xp, name)(x)


def _is_bool(xp: Any, value: Any) -> bool:
    return isinstance(value, bool) or getattr(value, "dtype", None) == xp.bool


isnan = _mask(np.isnan, "isnan")


isfinite = _mask(np.isfinite, "isfinite")


logical_not = _mask(np.logical_not, "logical_not")


logical_xor = _mask(np.logical_xor, "logical_xor")


logical_and = _mask(np.logical_and, "logical_and")


logical_or = _mask(np.logical_or, "logical_or")


def xlogy(x: Any, y: Any) -> Any:
    """x * log(y), 0 where x is 0: `xlogy` of ndarrays, or the recorded op."""
    return array_namespace(x, y).xlogy(x, y)


def div_floor(a: Any, b: Any) -> Any:
    """`a.div(b, rounding_mode="floor")`: recorded (DivBackward2) on Tensors."""
    return array_namespace(a, b).div(a, b, rounding_mode="floor")


def div_trunc(a: Any, b: Any) -> Any:
    """`a.div(b, rounding_mode="trunc")`: recorded (DivBackward2) on Tensors."""
    return array_namespace(a, b).div(a, b, rounding_mode="trunc")


def clamp_backward(grad: Any, self: Any, low: Any, high: Any) -> Any:
    """d clamp(self, low, high)/d self: grad where low <= self <= high, else 0.

    A bound that is None is no bound; at a bound the gradient passes (PyTorch's
    subgradient 1).
    """
    if low is not None and high is not None:
        return where(logical_and(self >= low, self <= high), grad, 0)
    if low is not None:
        return where(self >= low, grad, 0)
    if high is not None:
        return where(self <= high, grad, 0)
    return grad


def clamp_backward_min(grad: Any, self: Any, low: Any, high: Any) -> Any:
    """d clamp(self, low, high)/d low: grad where self < low, unless low > high
    (then the output is `high` and `low` has no gradient)."""
    if high is None:
        return where(self < low, grad, 0)
    return where(logical_and(self < low, low < high), grad, 0)


def clamp_backward_max(grad: Any, self: Any, low: Any, high: Any) -> Any:
    """d clamp(self, low, high)/d high: grad where self > high, and everywhere the
    bounds cross (low > high makes the output `high`)."""
    if low is None:
        return where(self > high, grad, 0)
    return where(logical_or(self > high, high < low), grad, 0)


def copysign_tensor_self_backward(grad: Any, self: Any, result: Any) -> Any:
    """d copysign(self, other)/d self: grad * result / self (the sign that was
    applied), 0 where self is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = result / self
    return grad * where(self == 0, 0, ratio)


def logit_backward(grad: Any, self: Any, eps: float | None) -> Any:
    """d logit(self, eps)/d self: grad / (self * (1 - self)) inside [eps, 1 - eps]
    and 0 outside; without eps, inside [0, 1] and nan outside. PyTorch's
    infinitely_differentiable_logit_backward, used in both modes."""
    low, high, outside = (0.0, 1.0, math.nan) if eps is None else (eps, 1 - eps, 0.0)
    if type(grad) is type(self) is np.ndarray and grad.shape == self.shape != ():
        # On ndarrays: the quotient in one array of its own, and the elements
        # outside the range (none, in the usual case) overwritten.
        value = np.subtract(1, self, out=np.empty(np.shape(self), np.result_type(grad)))
        value *= self
        np.divide(grad, value, out=value)
        if self.size and (self.min() < low or self.max() > high):  # no masks
            inside = np.greater_equal(self, low)
            inside &= self <= high
            value[~inside] = outside
        return value
    with np.errstate(divide="ignore", invalid="ignore"):
        value = grad / (self * (1 - self))
    return where(logical_and(self >= low, self <= high), value, outside)


register_numpy_kernels(rsqrt=_rsqrt, erf=erf, xlogy=_xlogy, div=divide)


def fill_kernel(x: Any, value: Any) -> Any:
    """fill.Tensor, fill_.Tensor: x's shape and dtype, every entry the 0-d
    `value`. numpy's full_like; the standard's full_like takes a Python number,
    so another backend's value is broadcast (a copy where arrays are mutable)."""
    if np.ndim(value) != 0:
        raise RuntimeError(
            "fill_ only supports 0-dimension value tensor but got tensor with "
            f"{np.ndim(value)} dimensions."
        )
    xp = backend.namespace_of(x, value)
    if xp is np:
        return np.full_like(x, value)
    filled = xp.broadcast_to(xp.astype(xp.asarray(value), x.dtype), x.shape)
    return filled if backend.is_lazy(filled) else xp.asarray(filled, copy=True)


def frexp_kernel(x: Any) -> tuple[Any, Any]:
    """(mantissa, exponent) with x = mantissa * 2**exponent, |mantissa| in [0.5, 1)
    (exponent int32, as PyTorch's)."""
    x = np.asarray(x)
    if x.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = np.frexp(x)
    return mantissa, exponent.astype(np.int32)


def frexp_backward(grad: Any, exponent: Any) -> Any:
    """grad / 2**exponent (the exponent is piecewise constant)."""
    exponent = np.asarray(_raw(exponent))
    one = np.ones((), dtype=np.asarray(_raw(grad)).dtype)
    return grad * _constant_like(grad, np.ldexp(one, -exponent))


# The per-op benchmark's floors (benchmarks/ops.py): forward and backward of an
# entry in the plainest fast numpy/scipy, where numpy's own loops are the limit
# (scipy's erf, float64 sin and cos, fmod, floor_divide, nextafter, hypot) or
# fusion is (frac, logit, rsqrt: passes that PyTorch runs as one).


def _erf_floor(grad: Any, self: Any) -> Any:
    derivative = np.exp(-(self * self)) * (2 / math.sqrt(math.pi))
    return special_kernels.erf(self), derivative * grad


def _erfc_floor(grad: Any, self: Any) -> Any:
    derivative = np.exp(-(self * self)) * (-2 / math.sqrt(math.pi))
    return _special().erfc(self), derivative * grad


def _sin_floor(grad: Any, self: Any) -> Any:
    return np.sin(self), np.cos(self) * grad


def _cos_floor(grad: Any, self: Any) -> Any:
    return np.cos(self), -np.sin(self) * grad


def _fmod_floor(grad: Any, self: Any, other: Any) -> Any:
    return np.fmod(self, other), grad


def _fmod_tensor_floor(grad: Any, self: Any, other: Any) -> Any:
    return np.fmod(self, other), grad, -grad * np.trunc(self / other)


def _remainder_floor(grad: Any, self: Any, other: Any) -> Any:
    mod = np.fmod(self, other)
    return np.where((mod != 0) & ((mod < 0) != (other < 0)), mod + other, mod), grad


def _remainder_tensor_floor(grad: Any, self: Any, other: Any) -> Any:
    mod, _ = _remainder_floor(grad, self, other)
    return mod, grad, -grad * np.floor_divide(self, other)


def _div_mode_floor(grad: Any, self: Any, other: Any, rounding_mode: Any) -> Any:
    if rounding_mode == "floor":
        return np.floor_divide(self, other), np.zeros_like(grad)
    return np.trunc(self / other), np.zeros_like(grad)


def _nextafter_floor(grad: Any, self: Any, other: Any) -> Any:
    return np.nextafter(self, other), np.where(self != other, grad, 0)


def _hypot_floor(grad: Any, self: Any, other: Any) -> Any:
    h = np.hypot(self, other)
    return h, grad * self / h, grad * other / h


def _frac_floor(grad: Any, self: Any) -> Any:
    return self - np.trunc(self), grad


def _logit_floor(grad: Any, self: Any, eps: Any = None) -> Any:
    return np.log(self / (1 - self)), grad / (self * (1 - self))


def _rsqrt_floor(grad: Any, self: Any) -> Any:
    r = 1 / np.sqrt(self)
    return r, -0.5 * grad * r * r * r


FLOORS = {
    "div_Tensor_mode": _div_mode_floor,
    "div_Scalar_mode": _div_mode_floor,
    "nextafter": _nextafter_floor,
    "hypot": _hypot_floor,
    "frac": _frac_floor,
    "logit": _logit_floor,
    "special_logit": _logit_floor,
    "rsqrt": _rsqrt_floor,
    "erf": _erf_floor,
    "special_erf": _erf_floor,
    "erfc": _erfc_floor,
    "special_erfc": _erfc_floor,
    "sin": _sin_floor,
    "cos": _cos_floor,
    "fmod_Scalar": _fmod_floor,
    "remainder_Scalar": _remainder_floor,
    "fmod_Tensor": _fmod_tensor_floor,
    "remainder_Tensor": _remainder_tensor_floor,
}
