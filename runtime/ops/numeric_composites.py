"""Numerical composites, as PyTorch composes them from other ops: trapezoid and
cumulative_trapezoid, diff, cov and corrcoef, quantile and nanquantile, nanmean,
float_power.

Each helper runs the ops of PyTorch's own decomposition in its order, so the
nodes match (trapezoid by a Python `dx` ends in MulBackward1, by sample points
in DivBackward1; cov in SqueezeBackward0 over DivBackward0 over MmBackward0;
quantile in the in-place SqueezeBackward4 over LerpBackward1), and the helpers
need no backward of their own. A double `dx` multiplies by the Scalar overloads
(mul.Scalar, div.Scalar), as C++'s `tensor * double` does. Checks come before
any op with PyTorch's texts.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from yamlgrad.runtime import dispatch
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.backend import dtype_kind
from yamlgrad.runtime.errors import scalar_type_name
from yamlgrad.runtime.ops.common import _dim
from yamlgrad.runtime.wrappers.variable_type_utils import int_list_arg

COMPOSITE_HELPERS = (
    "trapezoid_over_x",
    "trapezoid_over_dx",
    "cumulative_trapezoid_over_x",
    "cumulative_trapezoid_over_dx",
    "diff_via_narrow",
    "cov_via_mm",
    "corrcoef_via_cov",
    "quantile_via_sort",
    "nanmean_via_nansum",
    "as_double",
    "double_base",
    "positive_of",
    "unchanged",
    "sum_to_size_via_sum",
)


def _kind(t: Any) -> str:
    return dtype_kind(t._data.dtype) if isinstance(t, Tensor) else ""


def _no_bool(op: str, *tensors: Any) -> None:
    if any(_kind(t) == "b" for t in tensors):
        what = "`x` or `y`" if len(tensors) > 1 else "`y`"
        raise RuntimeError(
            f"{op}: received a bool input for {what}, but bool is not supported"
        )


def _real_dx(op: str, dx: Any) -> float:
    if isinstance(dx, (bool, complex)):
        raise RuntimeError(f"{op}: Currently, we only support dx as a real number.")
    return float(dx)


def _sample_spacing(y: Tensor, x: Tensor, dim: int, op: str) -> Any:
    """x_right - x_left along `dim`, a vector `x` viewed along y's `dim` first
    and a shorter one padded with leading ones (ViewBackward0)."""
    ops = dispatch.ops
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(
                f"{op}: There must be one `x` value for each sample point"
            )
        sizes = [1] * y.ndim
        sizes[dim] = x.shape[0]
        x = ops.view(x, sizes)
    elif x.ndim < y.ndim and op == "trapezoid":
        x = ops.view(x, [1] * (y.ndim - x.ndim) + list(x.shape))
    return ops.sub(
        ops.slice_Tensor(x, dim, 1, None, 1), ops.slice_Tensor(x, dim, 0, -1, 1)
    )


def _pair_sums(y: Tensor, dim: int) -> Any:
    ops = dispatch.ops
    return ops.add(
        ops.slice_Tensor(y, dim, 0, -1, 1), ops.slice_Tensor(y, dim, 1, None, 1)
    )


def _zeros_except(y: Tensor, dim: int) -> Any:
    sizes = tuple(n for i, n in enumerate(y.shape) if i != dim)
    return Tensor._make(np.zeros(sizes, dtype=y._data.dtype))


def trapezoid_over_x(y: Tensor, x: Tensor, dim: int) -> Any:
    """The trapezoid rule over sample points `x`: sum(dx * (y_i + y_i+1)) / 2."""
    d = _dim(dim, y.ndim, "trapezoid")
    if y.shape[d] == 0:
        return _zeros_except(y, d)
    _no_bool("trapezoid", y, x)
    ops = dispatch.ops
    dx = _sample_spacing(y, x, d, "trapezoid")
    return ops.div_Scalar(ops.sum(ops.mul(dx, _pair_sums(y, d)), [d]), 2.0)


def trapezoid_over_dx(y: Tensor, dx: Any, dim: int) -> Any:
    """The trapezoid rule at constant spacing: (sum(y) - (y_0 + y_n) / 2) * dx."""
    d = _dim(dim, y.ndim, "trapezoid")
    if y.shape[d] == 0:
        return _zeros_except(y, d)
    _no_bool("trapezoid", y)
    step = _real_dx("trapezoid", dx)
    ops = dispatch.ops
    ends = ops.add(ops.select(y, d, 0), ops.select(y, d, -1))
    inner = ops.sub(ops.sum(y, [d]), ops.mul_Scalar(ends, 0.5))
    return ops.mul_Scalar(inner, step)


def cumulative_trapezoid_over_x(y: Tensor, x: Tensor, dim: int) -> Any:
    """The running trapezoid rule over sample points `x`."""
    _no_bool("cumulative_trapezoid", y, x)
    d = _dim(dim, y.ndim, "cumulative_trapezoid")
    ops = dispatch.ops
    dx = _sample_spacing(y, x, d, "cumulative_trapezoid")
    return ops.div_Scalar(ops.cumsum(ops.mul(dx, _pair_sums(y, d)), d), 2.0)


def cumulative_trapezoid_over_dx(y: Tensor, dx: Any, dim: int) -> Any:
    """The running trapezoid rule at constant spacing: cumsum(dx/2 * (y_i + y_i+1))."""
    _no_bool("cumulative_trapezoid", y)
    step = _real_dx("cumulative_trapezoid", dx)
    d = _dim(dim, y.ndim, "cumulative_trapezoid")
    ops = dispatch.ops
    return ops.cumsum(ops.mul_Scalar(_pair_sums(y, d), step / 2.0), d)


def _check_diff_operand(self: Tensor, other: Tensor | None, dim: int) -> None:
    if other is None:
        return
    if other.ndim != self.ndim:
        raise RuntimeError(
            "diff expects prepend or append to be the same dimension as input"
        )
    wrapped = _dim(dim, self.ndim, "diff")
    for i in range(other.ndim):
        if i != wrapped and other.shape[i] != self.shape[i]:
            raise RuntimeError(
                "diff expects the shape of tensor to prepend or append to match that "
                "of input except along the differencing dimension; "
                f"input.size({i}) = {self.shape[i]}, but got tensor.size({i}) = "
                f"{other.shape[i]}"
            )


def diff_via_narrow(
    self: Tensor, n: int, dim: int, prepend: Tensor | None, append: Tensor | None
) -> Any:
    """The n-th forward difference along `dim` (`prepend`/`append` joined first):
    narrow(1, len) - narrow(0, len), n times (logical_xor for bool); n = 0 is a
    copy (CopyBackwards)."""
    if self.ndim < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    _check_diff_operand(self, prepend, dim)
    _check_diff_operand(self, append, dim)
    ops = dispatch.ops
    d = _dim(dim, self.ndim, "diff")
    if n == 0:
        return Tensor._make(np.zeros_like(self._data)).copy_(self)
    if prepend is not None or append is not None:
        parts = [t for t in (prepend, self, append) if t is not None]
        self = ops.cat(parts, d)
    result = self
    length = self.shape[d] - 1
    for _ in range(min(n, self.shape[d])):
        later = ops.narrow(result, d, 1, length)
        earlier = ops.narrow(result, d, 0, length)
        if _kind(self) == "b":
            result = ops.logical_xor(later, earlier)
        else:
            result = ops.sub(later, earlier)
        length -= 1
    return result


def _min_is_negative(w: Tensor) -> bool:
    return bool(w.numel()) and bool((w._data < 0).any())


def cov_via_mm(
    self: Tensor, correction: int, fweights: Tensor | None, aweights: Tensor | None
) -> Any:
    """The covariance of the rows (variables) over the columns (observations),
    weighted by `fweights` * `aweights`, as at::cov."""
    ops = dispatch.ops
    if self.ndim > 2:
        raise RuntimeError(
            "cov(): expected input to have two or fewer dimensions but got an input "
            f"with {self.ndim} dimensions"
        )
    if _kind(self) == "b":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = ops.view(self, [1, -1]) if self.ndim < 2 else self
    observations = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights
        if w.ndim > 1:
            raise RuntimeError(
                "cov(): expected fweights to have one or fewer dimensions but got "
                f"fweights with {w.ndim} dimensions"
            )
        if _kind(w) not in "iu":
            raise RuntimeError(
                "cov(): expected fweights to have integral dtype but got fweights "
                f"with {scalar_type_name(w._data.dtype)} dtype"
            )
        if w.numel() != observations:
            raise RuntimeError(
                "cov(): expected fweights to have the same numel as there are "
                "observations in the input but got "
                f"{w.numel()} != {observations}"
            )
        if _min_is_negative(w):
            raise RuntimeError("cov(): fweights cannot be negative")
    if aweights is not None:
        aw = aweights
        if aw.ndim > 1:
            raise RuntimeError(
                "cov(): expected aweights to have one or fewer dimensions but got "
                f"aweights with {aw.ndim} dimensions"
            )
        if _kind(aw) != "f":
            raise RuntimeError(
                "cov(): expected aweights to have floating point dtype but got "
                f"aweights with {scalar_type_name(aw._data.dtype)} dtype"
            )
        if aw.numel() != observations:
            raise RuntimeError(
                "cov(): expected aweights to have the same numel as there are "
                "observations in the input but got "
                f"{aw.numel()} != {observations}"
            )
        if _min_is_negative(aw):
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aw if w is None else ops.mul(w, aw)
    if w is None:
        w_sum = Tensor._make(np.asarray(observations, dtype=np.int64))
    else:
        w_sum = ops.sum(w)
        if not w_sum._data:
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = ops.div(ops.sum(x if w is None else ops.mul(x, w), [1]), w_sum)
    if w is not None and aweights is not None and correction != 0:
        scaled = ops.div(ops.sum(ops.mul(w, aweights)), w_sum)
        norm_factor = ops.sub(w_sum, ops.mul(scaled, correction))
    else:
        norm_factor = ops.sub(w_sum, correction)
    if norm_factor._data <= 0:
        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less "
            "than the number of observations.",
            UserWarning,
            stacklevel=4,
        )
        norm_factor = Tensor._make(np.zeros_like(norm_factor._data))
    x = ops.sub(x, ops.unsqueeze(avg, 1))
    c = ops.mm(x, ops.t(x if w is None else ops.mul(x, w)))
    return ops.squeeze(ops.true_divide(c, norm_factor))


def corrcoef_via_cov(self: Tensor) -> Any:
    """Pearson's correlation coefficients: cov scaled by the standard deviations
    on both sides, clipped to [-1, 1]."""
    ops = dispatch.ops
    c = cov_via_mm(self, 1, None, None)
    if c.ndim == 0:
        return ops.div(c, c)
    stddev = ops.sqrt(ops.diagonal(c))
    c = ops.div(c, ops.view(stddev, [-1, 1]))
    c = ops.div(c, ops.view(stddev, [1, -1]))
    return ops.clamp(c, -1, 1)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _checked_quantiles(self: Tensor, q: Any, interpolation: str) -> Tensor:
    """`q` as a tensor of `self`'s dtype, after at::quantile's checks and errors."""
    if not isinstance(q, Tensor):
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
        q = Tensor._make(np.asarray(q, dtype=self._data.dtype))
    if self.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if self._data.dtype not in (np.float32, np.float64):
        raise RuntimeError(
            "quantile() input tensor must be either float or double dtype"
        )
    if q._data.dtype != self._data.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            "quantile() interpolation must be one of linear, lower, higher, midpoint "
            f"or nearest. Got {interpolation}"
        )
    if not ((q._data >= 0) & (q._data <= 1)).all():
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    return q


def quantile_via_sort(
    self: Tensor,
    q: Any,
    dim: int | None,
    keepdim: bool,
    interpolation: str,
    ignore_nan: bool,
) -> Any:
    """The `q`-th quantiles along `dim` (of all values for None): the sorted
    values gathered at the ranks q * (n - 1) and interpolated, as at::quantile
    (nanquantile ranks among the values that are not NaN)."""
    ops = dispatch.ops
    q = _checked_quantiles(self, q, interpolation)
    # The output's shape: q's length, then the reduced shape.
    if dim is not None and self.ndim > 0:
        wrapped = _dim(dim, self.ndim, "quantile")
        out_shape = list(self.shape)
        if keepdim:
            out_shape[wrapped] = 1
        else:
            del out_shape[wrapped]
    else:
        wrapped = 0
        out_shape = [1] * self.ndim if keepdim else []
    if dim is None:
        sorted_ = ops.sort(ops.flatten(self))[0]
    elif self.ndim == 0 or wrapped == self.ndim - 1:
        sorted_ = ops.sort(self)[0]
    else:
        sorted_ = ops.sort(ops.transpose(ops.unsqueeze(self, -1), wrapped, -1))[0]
    # (*reduced, n): one row of sorted values per output element.
    in_shape = [*out_shape, sorted_.shape[-1] if sorted_.ndim else 1]
    sorted_ = ops.view(sorted_, in_shape)
    if ignore_nan:
        count = ops.sum(ops.logical_not(ops.isnan(sorted_)), [-1], True)
        ranks = ops.mul(q, ops.sub(count, 1))
        ranks = ops.masked_fill(ranks, ops.lt(ranks, 0), 0)
    else:
        last = sorted_.shape[-1] - 1
        scaled, has_nan = broadcast_two(
            ops.mul_Scalar(q, last), ops.any(ops.isnan(sorted_), -1, True)
        )
        ranks = ops.masked_fill(scaled, has_nan, last)
    if interpolation == "lower":
        ranks = ops.floor_(ranks)
    elif interpolation == "higher":
        ranks = ops.ceil_(ranks)
    elif interpolation == "nearest":
        ranks = ops.round_(ranks)
    below = ops._to_copy(ranks, dtype=np.dtype(np.int64))
    values = ops.gather(sorted_, -1, below)
    if interpolation in ("linear", "midpoint"):
        if interpolation == "midpoint":
            weights = Tensor._make(np.full_like(ranks._data, 0.5))
        else:
            weights = ops.sub(ranks, below)
        above = ops._to_copy(ops.ceil_(ranks), dtype=np.dtype(np.int64))
        values = ops.lerp_(values, ops.gather(sorted_, -1, above), weights)
    if q.ndim == 0:
        return ops.squeeze_(values, -1)
    # TODO: PyTorch moves the quantiles first in place (unsqueeze_, transpose_:
    # UnsqueezeBackward1, TransposeBackward1), which have no entries here yet.
    return ops.squeeze_(ops.transpose(ops.unsqueeze(values, 0), 0, -1), -1)


def broadcast_two(a: Tensor, b: Tensor) -> tuple[Any, Any]:
    from yamlgrad.runtime.ops.stacking import broadcast_each

    first, second = broadcast_each([a, b])
    return first, second


def nanmean_via_nansum(self: Tensor, dim: Any, keepdim: bool, dtype: Any) -> Any:
    """The mean of the values that are not NaN: nansum / their count."""
    if _kind(self) != "f":
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but "
            f"got {scalar_type_name(self._data.dtype)}"
        )
    ops = dispatch.ops
    count = ops.sum(ops.logical_not(ops.isnan(self)), dim, keepdim)
    return ops.div(ops.nansum(self, dim, keepdim, dtype=dtype), count)


def as_double(value: Any) -> Any:
    """`value.to(torch.double)`: a Python number as a float, a float64 tensor as
    it is, any other tensor a recorded copy (ToCopyBackward0)."""
    if not isinstance(value, Tensor):
        if isinstance(value, complex):
            raise RuntimeError("float_power: complex exponents are not supported")
        return float(value)
    if value._data.dtype == np.float64:
        return value
    return dispatch.ops._to_copy(value, dtype=np.dtype(np.float64))


def double_base(self: Tensor) -> Tensor:
    """float_power_'s `self`, which must be double already (the result is)."""
    if self._data.dtype != np.float64:
        raise RuntimeError(
            "the base given to float_power_ has dtype "
            f"{scalar_type_name(self._data.dtype)} but the operation's result "
            "requires dtype Double"
        )
    return self


def unchanged(self: Tensor) -> Tensor:
    """A real tensor as it is: it has no conjugate or negative bit to resolve
    (resolve_conj, resolve_neg). Anything else is a TypeError, which the
    wrapper reports with PyTorch's text for the argument."""
    if not isinstance(self, Tensor):
        raise TypeError(type(self).__name__)
    return self


def positive_of(self: Tensor) -> Any:
    """`+x`: x itself; a bool tensor is refused, as by PyTorch."""
    if dtype_kind(unchanged(self)._data.dtype) == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def sum_to_size_via_sum(self: Tensor, size: tuple[int, ...]) -> Any:
    """`self` summed to `size`, a shape it expands from: over its leading dims and
    where `size` has 1 (SumBackward1, then a view when dims were dropped; an
    empty `size` sums everything, SumBackward0), as at::sum_to."""
    size = int_list_arg(size, "sum_to_size", "size", 2)
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    expandable = lead >= 0 and all(n == m or n == 1 for n, m in zip(size, shape[lead:]))
    if not expandable:
        raise RuntimeError(
            f"size {{{', '.join(map(str, size))}}} is not expandable to size "
            f"{{{', '.join(map(str, shape))}}}."
        )
    ops = dispatch.ops
    if not size:
        return ops.sum(self)
    dims = [*range(lead)] + [
        lead + i for i, n in enumerate(size) if n == 1 and shape[lead + i] != 1
    ]
    result = ops.sum(self, dims, True) if dims else self
    return ops.view(result, list(size)) if lead > 0 else result


# -- torch.gradient ---------------------------------------------------------------
# Not a derivatives.yaml composite: its `spacing` is a number, a list of numbers
# or a list of tensors, which no one schema spells; runtime/functional.py's
# `gradient` calls this.


def _gradient_checks(
    self: Tensor, spacing_size: int | None, dims: list[int] | None, edge_order: int
) -> None:
    if self._data.dtype == np.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if spacing_size is not None and dims is None and spacing_size != self.ndim:
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list "
            f"of length equal to 'self.dim() = {self.ndim}', since dim argument was "
            f"not given, but got a list of length {spacing_size}"
        )
    if spacing_size is not None and dims is not None and spacing_size != len(dims):
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar or it's "
            "spacing and dim arguments to have the same length, but got a spacing "
            f"argument of length {spacing_size} and a dim argument of length "
            f"{len(dims)}."
        )
    if edge_order not in (1, 2):
        raise RuntimeError(
            "torch.gradient only supports edge_order=1 and edge_order=2."
        )
    wrapped = [_dim(d, self.ndim, "gradient") for d in (dims or range(self.ndim))]
    for d in wrapped:
        if wrapped.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        if self.shape[d] < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least "
                "edge_order+1"
            )


def _with_ends(center: Any, prepend: Any, append: Any, dim: int) -> Any:
    return dispatch.ops.cat([prepend, center, append], dim)


def _gradient_uniform(self: Tensor, step: float, d: int, edge_order: int) -> Any:
    """Differences at a constant spacing `step` along dim `d`."""
    ops = dispatch.ops

    def part(start: int | None, end: int | None) -> Any:
        return ops.slice_Tensor(self, d, start, end, 1)

    center = ops.div_Scalar(ops.sub(part(2, None), part(0, -2)), step)
    if edge_order == 1:
        prepend = ops.div_Scalar(ops.sub(part(1, 2), part(0, 1)), step)
        append = ops.div_Scalar(ops.sub(part(-1, None), part(-2, -1)), step)
    else:
        first = ops.add(ops.mul_Scalar(part(0, 1), -1.5), ops.mul_Scalar(part(1, 2), 2))
        prepend = ops.div_Scalar(ops.sub(first, ops.mul_Scalar(part(2, 3), 0.5)), step)
        last = ops.sub(
            ops.mul_Scalar(part(-3, -2), 0.5), ops.mul_Scalar(part(-2, -1), 2)
        )
        append = ops.div_Scalar(
            ops.add(last, ops.mul_Scalar(part(-1, None), 1.5)), step
        )
    return _with_ends(ops.div_Scalar(center, 2), prepend, append, d)


def _gradient_coordinates(
    self: Tensor, coordinates: Tensor, d: int, edge_order: int
) -> Any:
    """Differences at the sample coordinates `coordinates` along dim `d`
    (second-order accurate inside, as numpy.gradient)."""
    if coordinates.ndim != 1:
        raise RuntimeError(
            "torch.gradient expected each element of spacing to have one dimension, "
            f"but got an element with {coordinates.ndim} dimensions!"
        )
    ops = dispatch.ops
    shape = [1] * self.ndim
    shape[d] = -1
    dx = diff_via_narrow(coordinates, 1, 0, None, None)
    dx1 = ops.slice_Tensor(dx, 0, 0, -1, 1)
    dx2 = ops.slice_Tensor(dx, 0, 1, None, 1)
    a = ops.reshape(ops.div(ops.neg(dx2), ops.mul(dx1, ops.add(dx1, dx2))), shape)
    b = ops.reshape(ops.div(ops.sub(dx2, dx1), ops.mul(dx1, dx2)), shape)
    c = ops.reshape(ops.div(dx1, ops.mul(dx2, ops.add(dx1, dx2))), shape)

    def part(start: int | None, end: int | None) -> Any:
        return ops.slice_Tensor(self, d, start, end, 1)

    def weighted(*terms: tuple[Any, Any]) -> Any:
        total = ops.mul(terms[0][0], terms[0][1])
        for w, x in terms[1:]:
            total = ops.add(total, ops.mul(w, x))
        return total

    center = weighted((a, part(0, -2)), (b, part(1, -1)), (c, part(2, None)))
    h0, h1 = ops.select(dx, 0, 0), ops.select(dx, 0, 1)
    hl, hm = ops.select(dx, 0, -1), ops.select(dx, 0, -2)
    if edge_order == 1:
        prepend = ops.div(ops.sub(part(1, 2), part(0, 1)), h0)
        append = ops.div(ops.sub(part(-1, None), part(-2, -1)), hl)
    else:
        s01 = ops.add(h0, h1)
        a0 = ops.neg(ops.div(ops.add(ops.mul_Scalar(h0, 2.0), h1), ops.mul(h0, s01)))
        b0 = ops.div(s01, ops.mul(h0, h1))
        c0 = ops.div(ops.neg(h0), ops.mul(h1, s01))
        prepend = weighted((a0, part(0, 1)), (b0, part(1, 2)), (c0, part(2, 3)))
        slm = ops.add(hl, hm)
        a1 = ops.div(hl, ops.mul(hm, slm))
        b1 = ops.neg(ops.div(slm, ops.mul(hl, hm)))
        c1 = ops.div(ops.add(ops.mul_Scalar(hl, 2), hm), ops.mul(hl, slm))
        append = weighted((a1, part(-3, -2)), (b1, part(-2, -1)), (c1, part(-1, None)))
    return _with_ends(center, prepend, append, d)


def gradient_of(
    self: Tensor, spacing: Any, dim: Any, edge_order: int
) -> tuple[Any, ...]:
    """torch.gradient's overloads: `spacing` a number (or None), a sequence of
    numbers or of tensors; `dim` an int, a sequence of ints or None (all)."""
    one_dim = isinstance(dim, int)
    dims = None if dim is None else ([dim] if one_dim else list(dim))
    processed = dims if dims is not None else list(range(self.ndim))
    if spacing is None or isinstance(spacing, (int, float)):
        steps = [1.0 if spacing is None else spacing] * len(processed)
        size = None if spacing is None or (dims is None and not one_dim) else len(steps)
        if dims is None:
            size = None if spacing is None else self.ndim
        _gradient_checks(self, size, dims, edge_order)
        return tuple(
            _gradient_uniform(
                self, float(s), _dim(d, self.ndim, "gradient"), edge_order
            )
            for s, d in zip(steps, processed)
        )
    spacing = list(spacing)
    _gradient_checks(self, len(spacing), dims, edge_order)
    if all(isinstance(s, Tensor) for s in spacing):
        return tuple(
            _gradient_coordinates(self, s, _dim(d, self.ndim, "gradient"), edge_order)
            for s, d in zip(spacing, processed)
        )
    return tuple(
        _gradient_uniform(self, float(s), _dim(d, self.ndim, "gradient"), edge_order)
        for s, d in zip(spacing, processed)
    )
