"""Statistics over a tensor: aminmax, var_mean and std_mean, running extremes
(cummax, cummin) and logcumsumexp, renorm, histc, and their backward helpers.

The kernels reuse the reductions' (var, mean, vector norms); the backward helpers
are PyTorch's formulas over the reductions' helpers, written once against
`array_namespace` so that a double backward records them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.errors import scalar_type_name as _st
from yamlgrad.runtime.ops.common import (
    _abs,
    _any_tensor,
    _constant,
    _data,
    _dim,
    _wrap_dim,
)
from yamlgrad.runtime.ops.elementwise import exp, where, zeros_like
from yamlgrad.runtime.ops.namespace import (
    array_namespace,
    register_numpy_kernels,
    scanned,
)
from yamlgrad.runtime.ops.reductions import (
    _foreign_namespace,
    _no_identity,
    _numpy_dtype,
    mean_backward,
    mean_reduce,
    reduce_dims,
    restore_reduced_dims,
    scale_grad_by_count,
    sum_reduce,
    std_backward,
    var,
    var_backward,
)
from yamlgrad.runtime.ops.vector_norms import (
    linalg_vector_norm_backward,
    vector_norm,
)
from yamlgrad.runtime.ops.shapes import c_order, flip

KERNELS = (
    "cummaxmin",
    "aminmax_kernel",
    "var_mean_kernel",
    "std_mean_kernel",
    "logcumsumexp_kernel",
    "renorm_kernel",
    "histc_kernel",
    "nansum_kernel",
)
BACKWARD_HELPERS = (
    "cummaxmin_backward",
    "aminmax_backward",
    "var_mean_backward",
    "std_mean_backward",
    "logcumsumexp_backward",
    "logcumsumexp_jvp",
    "renorm_backward",
)


# -- cummax, cummin ----------------------------------------------------------------


def cummaxmin(x: Any, dim: int, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """cummax (largest) or cummin: the running extreme along `dim` and where it
    was last reached; a NaN, once seen, stays, and each later NaN is the index."""
    xp = _foreign_namespace(x)
    if xp is not None:
        return _portable_cummaxmin(xp, x, dim, largest)
    x = np.asarray(x)
    if x.size == 0:  # PyTorch returns an empty input as it is, whatever `dim`
        return x.copy(), np.zeros(x.shape, dtype=np.int64)
    if x.ndim == 0:
        _dim(dim, 1, "cummax")
        return x.copy(), np.zeros((), dtype=np.int64)
    axis = _dim(dim, x.ndim, "cummax")
    nans = x.dtype.kind == "f" and bool(np.isnan(x).any())
    # Without a NaN, fmax/fmin give the same values, and accumulate faster.
    if nans or x.dtype.kind != "f":
        running = np.maximum if largest else np.minimum
    else:
        running = np.fmax if largest else np.fmin
    values = running.accumulate(x, axis=axis)
    reached = x == values
    if nans:
        reached |= np.isnan(x)
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    positions = np.arange(x.shape[axis]).reshape(shape)
    indices = np.maximum.accumulate(reached * positions, axis=axis)
    # Contiguous results, as PyTorch's, whatever the input's strides.
    return np.asarray(values, order="C"), np.asarray(indices, np.int64, order="C")


def _portable_cummaxmin(xp: Any, x: Any, dim: int, largest: bool) -> tuple[Any, Any]:
    """cummaxmin in the standard's names: a scan of (value, index) pairs in
    which the later pair wins when its value is at least (at most) the
    earlier's, or is NaN, and an earlier NaN wins over a number."""
    if x.ndim == 0 or math.prod(x.shape) == 0:
        if x.ndim == 0:
            _dim(dim, 1, "cummax")
        return x, xp.zeros(x.shape, dtype=xp.int64)
    axis = _dim(dim, x.ndim, "cummax")
    shape = (1,) * axis + (x.shape[axis],) + (1,) * (x.ndim - axis - 1)
    positions = xp.reshape(xp.arange(x.shape[axis], dtype=xp.int64), shape)
    floating = xp.isdtype(x.dtype, "real floating")

    def combine(earlier: tuple[Any, Any], later: tuple[Any, Any]) -> tuple[Any, Any]:
        (value, index), (next_value, next_index) = earlier, later
        wins = next_value >= value if largest else next_value <= value
        if floating:
            wins = wins | xp.isnan(next_value)
        return xp.where(wins, next_value, value), xp.where(wins, next_index, index)

    indices = xp.broadcast_to(positions, x.shape)
    return scanned((x, indices), axis, combine)


def cummaxmin_backward(grad: Any, self: Any, indices: Any, dim: int) -> Any:
    """Each output's gradient added at the input it came from."""
    if np.ndim(self) == 0:
        return grad
    if _any_tensor(grad) or _foreign_namespace(grad) is not None:
        return array_namespace(grad).scatter_add(zeros_like(grad), dim, indices, grad)
    return _scatter_add_into_zeros(grad, dim, np.asarray(indices))


def _scatter_add_into_zeros(grad: np.ndarray, dim: int, index: np.ndarray) -> Any:
    """scatter_add(zeros_like(grad), dim, index, grad) for an index of grad's
    shape: one np.add.at over flat positions into fresh zeros, without
    scatter_add's copy of its input and checks of an index made here."""
    axis = _wrap_dim(dim, grad.ndim)
    shape = [1] * grad.ndim
    shape[axis] = grad.shape[axis]
    positions = np.arange(grad.shape[axis]).reshape(shape)
    flat = index - positions  # how far each entry moves along `axis`
    flat *= math.prod(grad.shape[axis + 1 :])
    flat += np.arange(grad.size).reshape(grad.shape)
    total = np.zeros(grad.shape, dtype=grad.dtype)
    np.add.at(total.reshape(-1), flat.reshape(-1), grad.reshape(-1))
    return total


def _cummaxmin_floor(largest: bool) -> Any:
    """cummax/cummin forward + backward in the fewest numpy calls: numpy has no
    vectorised running extreme (ufunc.accumulate is a scalar loop), so this is
    the floor those ops are measured against (benchmarks/ops.py)."""

    def floor(grad: Any, self: Any, dim: int) -> tuple[Any, Any]:
        axis = dim % self.ndim
        values = (np.fmax if largest else np.fmin).accumulate(self, axis=axis)
        positions = np.arange(self.shape[axis]).reshape(
            (-1,) + (1,) * (self.ndim - axis - 1)
        )
        indices = np.maximum.accumulate((self == values) * positions, axis=axis)
        return values, _scatter_add_into_zeros(grad, axis, indices)

    return floor


FLOORS = {"cummax": _cummaxmin_floor(True), "cummin": _cummaxmin_floor(False)}


# -- aminmax ---------------------------------------------------------------------


def nansum_kernel(x: Any, axis: Any, keepdims: bool, dtype: Any) -> Any:
    """The sum with NaNs read as zero: numpy's nansum on ndarrays, else the
    namespace's sum over `where(isnan(x), 0, x)`."""
    xp = _foreign_namespace(x)
    if xp is None:
        return np.nansum(x, axis=axis, keepdims=keepdims, dtype=dtype)
    zero = xp.zeros_like(x)
    return sum_reduce(xp.where(xp.isnan(x), zero, x), axis, keepdims, dtype)


def aminmax_kernel(x: Any, dim: int | None, keepdim: bool) -> tuple[Any, Any]:
    """(amin, amax) over `dim`, or over every element for None."""
    xp = _foreign_namespace(x)
    x = np.asarray(x) if xp is None else x
    if dim is None:
        _no_identity("aminmax", x, None, False, False)
        if x.size == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the "
                "operation has no identity."
            )
        axis = None
    else:
        axis = _dim(dim, x.ndim, "aminmax") if x.ndim else None
        if x.ndim and x.shape[axis] == 0:
            raise IndexError(
                "aminmax(): Expected reduction dim " f"{dim} to have non-zero size."
            )
    xp = np if xp is None else xp
    low = xp.min(x, axis=axis, keepdims=keepdim)
    high = xp.max(x, axis=axis, keepdims=keepdim)
    if dim is None and keepdim:
        low, high = xp.reshape(low, (1,) * x.ndim), xp.reshape(high, (1,) * x.ndim)
    return c_order(xp.asarray(low)), c_order(xp.asarray(high))


def aminmax_backward(
    self: Any,
    dim: int | None,
    keepdim: bool,
    grad_min: Any,
    grad_max: Any,
    min: Any,
    max: Any,
) -> Any:
    """Each gradient shared evenly among the entries equal to its extreme."""
    dims = () if dim is None else (dim,)
    total = None
    for grad, value in ((grad_min, min), (grad_max, max)):
        part = scale_grad_by_count(
            restore_reduced_dims(grad, dims, keepdim),
            restore_reduced_dims(value, dims, keepdim) == self,
            dims,
        )
        total = part if total is None else total + part
    return total


# -- var_mean and std_mean -----------------------------------------------------------


def _mean(x: Any, dim: tuple[int, ...] | None, keepdim: bool) -> Any:
    return c_order(mean_reduce(x, axis=reduce_dims(dim, np.ndim(x)), keepdims=keepdim))


def var_mean_kernel(
    x: Any, dim: tuple[int, ...] | None, correction: float | None, keepdim: bool
) -> tuple[Any, Any]:
    """(var, mean) over `dim` in one call, as torch.var_mean."""
    return c_order(var(x, dim, correction, keepdim, "var_mean")), _mean(x, dim, keepdim)


def std_mean_kernel(
    x: Any, dim: tuple[int, ...] | None, correction: float | None, keepdim: bool
) -> tuple[Any, Any]:
    """(std, mean) over `dim` in one call, as torch.std_mean."""
    variance = var(x, dim, correction, keepdim, "std_mean")
    xp = _foreign_namespace(variance) or np
    return c_order(xp.sqrt(variance)), _mean(x, dim, keepdim)


def var_mean_backward(
    grad_var: Any,
    grad_mean: Any,
    self: Any,
    dim: tuple[int, ...] | None,
    correction: float | None,
    keepdim: bool,
) -> Any:
    """var_backward of the first gradient plus mean_backward of the second."""
    return var_backward(grad_var, self, dim, correction, keepdim) + mean_backward(
        grad_mean, tuple(self.shape), dim, keepdim
    )


def std_mean_backward(
    grad_std: Any,
    grad_mean: Any,
    self: Any,
    std: Any,
    dim: tuple[int, ...] | None,
    correction: float | None,
    keepdim: bool,
) -> Any:
    """std_backward of the first gradient plus mean_backward of the second."""
    return std_backward(std, grad_std, self, dim, correction, keepdim) + mean_backward(
        grad_mean, tuple(self.shape), dim, keepdim
    )


# -- logcumsumexp --------------------------------------------------------------------


def logcumsumexp_kernel(x: Any, dim: int) -> Any:
    """log(cumsum(exp(x))) along `dim`, without overflow (logaddexp's scan)."""
    xp = _foreign_namespace(x)
    if xp is not None:
        if not xp.isdtype(x.dtype, "real floating"):
            x = xp.astype(x, xp.float32)
        if x.ndim == 0:
            _dim(dim, 0, "logcumsumexp")
            return x
        axis = _dim(dim, x.ndim, "logcumsumexp")
        return scanned((x,), axis, lambda a, b: (xp.logaddexp(a[0], b[0]),))[0]
    x = np.asarray(x)
    if x.dtype.kind not in "fc":
        x = x.astype(np.float32)
    if x.ndim == 0:
        _dim(dim, 0, "logcumsumexp")
        return np.array(x, copy=True)
    axis = _dim(dim, x.ndim, "logcumsumexp")
    return c_order(np.logaddexp.accumulate(x, axis=axis))


def _logcumsumexp(x: Any, dim: int) -> Any:
    if isinstance(x, Tensor):
        return ops.logcumsumexp(x, dim)
    return logcumsumexp_kernel(x, dim)


def logcumsumexp_backward(grad: Any, self: Any, result: Any, dim: int) -> Any:
    """PyTorch's: sum over j >= i of grad_j exp(self_i - result_j), as two
    reversed logcumsumexps (of the positive and the negative part of grad) so
    that nothing overflows."""
    if np.ndim(_data(grad)) == 0 or math.prod(grad.shape) == 0:
        return grad
    lowest = float((_foreign_namespace(grad) or np).finfo(_data(grad).dtype).min)
    with np.errstate(divide="ignore"):
        log_abs = array_namespace(grad).log(_abs(grad))
    grad_data = _data(grad)
    parts = []
    for side in (grad_data > 0, grad_data < 0):
        log_part = where(_constant(side, grad), log_abs, lowest)
        with np.errstate(over="ignore"):  # lowest - result: -inf, whose exp is 0
            shifted = flip(log_part - result, (dim,))
            reversed_sum = flip(_logcumsumexp(shifted, dim), (dim,))
            parts.append(exp(reversed_sum + self))
    return parts[0] - parts[1]


_LOGCUMSUMEXP_JVP_EPS = 1e-13


def logcumsumexp_jvp(self_p: Any, self_t: Any, dim: int) -> Any:
    """sum over i <= j of exp(self_i) self_t_i / sum over i <= j of exp(self_i),
    with the largest entry along `dim` taken out of both (it cancels) and 1e-13
    added to the denominator, PyTorch's guard where every weight underflows
    (entries far below the largest: the tangent is then 0, not 0/0)."""
    if np.ndim(_data(self_p)) == 0:
        return self_t
    xp = array_namespace(self_p, self_t)
    data = _data(self_p)
    shift = (_foreign_namespace(data) or np).max(data, axis=dim, keepdims=True)
    weights = exp(self_p - _constant(shift, self_p))
    return xp.cumsum(weights * self_t, axis=dim) / (
        xp.cumsum(weights, axis=dim) + _LOGCUMSUMEXP_JVP_EPS
    )


# -- renorm --------------------------------------------------------------------------


def _other_dims(ndim: int, dim: int) -> tuple[int, ...]:
    axis = _dim(dim, ndim, "renorm")
    return tuple(d for d in range(ndim) if d != axis)


def _check_renorm(x: Any, p: float, dim: int, maxnorm: float) -> None:
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if x.ndim <= 1:
        raise RuntimeError(
            f"renorm: input needs at least 2 dimensions, got {x.ndim} dimensions"
        )


def renorm_kernel(x: Any, p: float, dim: int, maxnorm: float) -> Any:
    """Each slice along `dim` whose p-norm exceeds `maxnorm` scaled down to it."""
    xp = _foreign_namespace(x)
    x = np.asarray(x) if xp is None else x
    if not (xp or np).isdtype(x.dtype, ("real floating", "complex floating")):
        raise RuntimeError(
            f"renorm: expected a floating point or complex input, got {_st(_numpy_dtype(x))}"
        )
    _check_renorm(x, p, dim, maxnorm)
    norm = vector_norm(x, p, _other_dims(x.ndim, dim), True)
    if xp is not None:
        scale = maxnorm / (norm + 1e-7)
        return x * xp.astype(xp.where(norm > maxnorm, scale, 1.0), x.dtype)
    factor = np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).astype(x.dtype)
    return c_order(x * factor)


def renorm_backward(grad: Any, self: Any, p: float, dim: int, maxnorm: float) -> Any:
    """PyTorch's: where the slice was scaled, the scale's gradient too (through
    the norm's backward); elsewhere grad as it is."""
    dims = _other_dims(self.ndim, dim)
    if isinstance(self, Tensor):
        norm = ops.linalg_vector_norm(self, p, dims, True)
    else:
        norm = vector_norm(self, p, dims, True)
    xp = array_namespace(grad, self)
    summed = xp.sum(self * grad, axis=dims, keepdims=True)
    norm_grad = linalg_vector_norm_backward(summed, self, p, norm, dims, True)
    inverse = 1.0 / (norm + 1e-7)
    factor = inverse * maxnorm
    scaled = factor * grad - (factor * inverse) * norm_grad
    scaled_slices = _data(norm) > maxnorm
    if _foreign_namespace(scaled_slices) is None:
        scaled_slices = _constant(scaled_slices, grad)
    return where(scaled_slices, scaled, grad)


# -- histc ---------------------------------------------------------------------------


def histc_kernel(x: Any, bins: int, min: float, max: float) -> Any:
    """A histogram of `bins` equal bins over [min, max] (the data's range when
    both are 0); values outside it are left out."""
    x = np.asarray(x)
    if x.dtype.kind != "f":
        raise RuntimeError(f"\"histogram_cpu\" not implemented for '{_st(x.dtype)}'")
    if bins <= 0:
        raise RuntimeError(
            "torch.histc(): bins must be > 0, but got " f"{bins} for dim 0"
        )
    low, high = float(min), float(max)
    if low == high and x.size:
        low, high = float(x.min()), float(x.max())
    if low == high:
        low, high = low - 1, high + 1
    if low > high:
        raise RuntimeError(
            "torch.histc(): max must be larger than min, but got "
            f"min {low} max {high}"
        )
    counts, _ = np.histogram(x, bins=bins, range=(low, high))
    return counts.astype(x.dtype)


register_numpy_kernels(logcumsumexp=logcumsumexp_kernel)
