"""Losses: mse, smooth L1, huber, binary cross entropy (with logits) and nll,
the kernels with PyTorch's argument checks and their backward helpers.

The loss reduction (`none`, `mean`, `sum`) is PyTorch's enum; a reduced loss's
gradient is broadcast back by `_nn_reduced_grad`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.ops.namespace import array_namespace
from yamlgrad.runtime.errors import scalar_type_name
from yamlgrad.runtime.errors import scalar_type_name as _st
from yamlgrad.runtime.ops.activations import (
    _nn_log1p,
    _nn_sigmoid,
    _nn_softplus,
)
from yamlgrad.runtime.ops.common import _constant_like, _raw, _sizes
from yamlgrad.runtime.ops.elementwise import log, sign
from yamlgrad.runtime.ops.reductions import mean_reduce, sum_reduce
from yamlgrad.runtime.ops.shapes import reshape
from yamlgrad.runtime.wrappers.kernel_errors import KernelValueError
from yamlgrad.runtime.wrappers.kernel_errors import broadcast_pair

KERNELS = (
    "mse_loss_kernel",
    "smooth_l1_loss_kernel",
    "huber_loss_kernel",
    "binary_cross_entropy_kernel",
    "binary_cross_entropy_with_logits_kernel",
    "nll_loss_kernel",
    "nll_loss2d_kernel",
)
BACKWARD_HELPERS = (
    "mse_loss_backward",
    "smooth_l1_loss_backward",
    "huber_loss_backward",
    "binary_cross_entropy_backward",
    "binary_cross_entropy_target_backward",
    "binary_cross_entropy_with_logits_backward",
    "binary_cross_entropy_with_logits_target_backward",
    "nll_loss_backward",
)


def _check_reduction(op: str, reduction: int) -> None:
    """mse_loss and smooth_l1_loss refuse a reduction outside PyTorch's enum
    (where PyTorch fails an internal assert); the other losses do not check."""
    if reduction not in (0, 1, 2):
        raise RuntimeError(
            f"{op}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction}"
        )


def apply_loss_reduction(loss: Any, reduction: int) -> Any:
    """PyTorch's apply_loss_reduction: 1 mean, 2 sum, anything else none."""
    if reduction not in (1, 2):
        return loss
    total = mean_reduce(loss) if reduction == 1 else sum_reduce(loss)
    if type(loss) is not np.ndarray:  # another backend's: a 0-d array already
        return backend.namespace_of(loss).astype(total, loss.dtype)
    return np.asarray(total, dtype=loss.dtype)


def mse_loss_kernel(x: Any, target: Any, reduction: int) -> Any:
    _check_reduction("mse_loss", reduction)
    diff = x - target
    return apply_loss_reduction(diff * diff, reduction)


def smooth_l1_loss_kernel(x: Any, target: Any, reduction: int, beta: float) -> Any:
    """0.5 * d**2 / beta where |d| < beta, else |d| - 0.5 * beta (an L1 loss at 0):
    huber's loss with delta = beta, divided by beta."""
    _check_reduction("smooth_l1_loss", reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    diff = _abs_diff(x, target)
    if type(diff) is np.ndarray and beta != 0:
        loss = _huber_into(diff, beta)
        if beta != 1:
            loss /= beta
        return apply_loss_reduction(loss, reduction)
    xp = backend.namespace_of(x, target)
    if beta == 0:
        return apply_loss_reduction(diff, reduction)
    loss = xp.where(diff < beta, 0.5 * diff * diff / beta, diff - 0.5 * beta)
    return apply_loss_reduction(loss, reduction)


def huber_loss_kernel(x: Any, target: Any, reduction: int, delta: float) -> Any:
    """0.5 * d**2 where |d| <= delta, else delta * (|d| - 0.5 * delta)."""
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    diff = _abs_diff(x, target)
    if type(diff) is np.ndarray:
        loss = _huber_into(diff, delta)
        return apply_loss_reduction(loss.astype(x.dtype, copy=False), reduction)
    xp = backend.namespace_of(x, target)
    loss = xp.where(diff <= delta, 0.5 * diff * diff, delta * (diff - 0.5 * delta))
    return apply_loss_reduction(xp.astype(loss, x.dtype, copy=False), reduction)


def _abs_diff(x: Any, target: Any) -> Any:
    """|x - target|: for float ndarrays (not 0-d) in an array of its own that
    `_huber_into` may overwrite, else in the arrays' namespace."""
    xp = backend.namespace_of(x, target)
    diff = x - target
    if xp is np and np.ndim(diff) and diff.dtype.kind == "f":
        return np.abs(diff, out=diff)
    return xp.abs(diff)


def _huber_into(diff: np.ndarray, delta: float) -> np.ndarray:
    """m * (d - m / 2), m = min(d, delta), in `diff` (|x - target|): 0.5 * d * d
    below delta and delta * (d - 0.5 * delta) from it, each rounded as the
    direct formula is (d - d / 2 and the halving are exact), with no mask."""
    half = np.minimum(diff, delta)
    half *= -0.5
    diff += half
    diff *= half
    diff *= -2
    return diff


def binary_cross_entropy_kernel(
    x: Any, target: Any, weight: Any, reduction: int
) -> Any:
    """-w * (t * log(x) + (1 - t) * log(1 - x)), each log clamped at -100."""
    xp = backend.namespace_of(x, target)
    if target.dtype != x.dtype:
        raise RuntimeError(
            f"Found dtype {_st(target.dtype)} but expected {_st(x.dtype)}"
        )
    if np.shape(target) != np.shape(x):
        # PyTorch's CPU kernel iterates over squeeze(input) and squeeze(target):
        # sizes that broadcast only through a size-1 dim that squeeze drops fail
        broadcast_pair(_squeezed(x), _squeezed(target))
    _check_probabilities(xp, x, target)
    with np.errstate(divide="ignore"):
        log_x = xp.clip(xp.log(x), min=-100)
        log_1mx = xp.clip(xp.log1p(-x), min=-100)
    loss = -(target * log_x + (1 - target) * log_1mx)
    if weight is not None:
        loss = loss * weight
    return apply_loss_reduction(xp.astype(loss, x.dtype, copy=False), reduction)


def _squeezed(x: Any) -> tuple[int, ...]:
    """x's shape without its size-1 dims (the shape of squeeze(x))."""
    return tuple(s for s in np.shape(x) if s != 1)


def _check_probabilities(xp: Any, x: Any, target: Any) -> None:
    """PyTorch's CPU kernel checks input then target element by element, so the
    first element out of [0, 1] (or nan) names which one is wrong. The check
    reads the values: a lazy backend skips it rather than compute them."""
    if backend.is_lazy(x) or backend.is_lazy(target):
        return
    if bool(xp.all((x >= 0) & (x <= 1))) and bool(
        xp.all((target >= 0) & (target <= 1))
    ):
        return
    x, target = backend.to_numpy(x), backend.to_numpy(target)
    inside_x = (x >= 0) & (x <= 1)
    inside_t = (target >= 0) & (target <= 1)
    inside_x, inside_t = np.broadcast_arrays(inside_x, inside_t)
    first = int(np.argmin((inside_x & inside_t).reshape(-1)))
    which = "input" if not inside_x.reshape(-1)[first] else "target"
    raise RuntimeError(f"all elements of {which} should be between 0 and 1")


def binary_cross_entropy_with_logits_kernel(
    x: Any, target: Any, weight: Any, pos_weight: Any, reduction: int
) -> Any:
    """(1 - t) * x + (1 + (pos_weight - 1) * t) * log(1 + exp(-x)), stably.
    PyTorch computes it in place into `log_sigmoid(x)` (with pos_weight) and
    into `1 - t`: their shapes must take the broadcast."""
    if pos_weight is not None:
        _in_place_shape(np.shape(x), np.shape(pos_weight), np.shape(target))
    _in_place_shape(np.shape(target), np.shape(x))
    if weight is not None:
        _in_place_shape(np.shape(target), np.shape(weight))
    xp = backend.namespace_of(x, target)
    softplus_neg = _nn_softplus(-x)
    if pos_weight is not None:
        loss = (1 - target) * x + ((pos_weight - 1) * target + 1) * softplus_neg
    else:
        loss = (1 - target) * x + softplus_neg
    if weight is not None:
        loss = loss * weight
    # PyTorch computes it in place into `1 - target`: the target's float dtype.
    floating = xp.isdtype(target.dtype, "real floating")
    dtype = target.dtype if floating else x.dtype
    return apply_loss_reduction(xp.astype(loss, dtype, copy=False), reduction)


def _in_place_shape(out: tuple[int, ...], *others: tuple[int, ...]) -> None:
    """An in-place op into a tensor of shape `out`: the broadcast must be `out`."""
    try:
        shape = np.broadcast_shapes(out, *others)
    except ValueError:
        return  # the out-of-place broadcast error comes from the kernel itself
    if tuple(shape) != tuple(out):
        raise RuntimeError(
            f"output with shape {_sizes(out)} doesn't match the broadcast shape "
            f"{_sizes(shape)}"
        )


def nll_loss_positions(
    x: Any, target: Any, weight: Any, ignore_index: int
) -> tuple[Any, Any, Any]:
    """For nll_loss over input [C], [N, C] or [N, C, d1, ...]: the input with the
    class dim last, the per-position class weights (0 where ignored) and the
    targets with ignored ones replaced by class 0. Checks targets like PyTorch
    (a lazy backend skips the check, which reads the values)."""
    xp = backend.namespace_of(x, target)
    n_classes = x.shape[0] if x.ndim == 1 else x.shape[1]
    moved = x if x.ndim == 1 else xp.moveaxis(x, 1, -1)
    target = np.asarray(target) if xp is np else target
    if x.ndim == 1:  # one target, given 0-d or as [t]
        target = xp.reshape(target, ())
    keep = target != ignore_index
    bad = keep & ((target < 0) | (target >= n_classes))
    if not backend.is_lazy(bad) and bool(xp.any(bad)):
        first = backend.to_numpy(target)[backend.to_numpy(bad)].flat[0]
        raise IndexError(f"Target {int(first)} is out of bounds.")
    safe = xp.where(keep, target, 0)
    w = xp.ones(n_classes, dtype=x.dtype) if weight is None else weight
    picked = xp.reshape(xp.take(w, xp.reshape(safe, (-1,))), safe.shape)
    return moved, xp.astype(xp.where(keep, picked, 0), x.dtype), safe


def _one_hot(xp: Any, index: Any, n: int) -> Any:
    """index[..., None] == arange(n): each position's class as a bool row (what
    take_along_axis and put_along_axis do, on backends without them)."""
    return index[..., None] == xp.arange(n)


def nll_loss_kernel(
    x: Any, target: Any, weight: Any, reduction: int, ignore_index: int
) -> tuple[Any, Any]:
    """nll_loss_forward: (-w[t] * x[..., t, ...] reduced, the total weight)."""
    if x.ndim not in (1, 2):
        raise RuntimeError("input tensor should be 1D or 2D")
    t = np.shape(target)
    if len(t) > 1:
        raise RuntimeError(
            "0D or 1D target tensor expected, multi-target not supported"
        )
    if x.ndim == 1 and len(t) == 1 and t[0] != 1:
        raise KernelValueError(
            f"For 1D input, 1D target must have size 1, but got target size: {t[0]}"
        )
    if x.ndim == 2 and not t:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if x.ndim == 2 and x.shape[0] != t[0]:
        raise RuntimeError(
            f"size mismatch (got input: {_sizes(x.shape)}, target: {_sizes(t)})"
        )
    n_classes = x.shape[-1]
    _check_nll_weight_dtype(x, weight)
    if weight is not None and (
        np.ndim(weight) != 1 or np.shape(weight)[0] != n_classes
    ):
        raise RuntimeError(
            f"weight tensor should be defined either for all {n_classes} classes or "
            f"no classes but got weight tensor of shape: {_sizes(np.shape(weight))}"
        )
    return _nll_loss(x, target, weight, reduction, ignore_index)


def nll_loss2d_kernel(
    x: Any, target: Any, weight: Any, reduction: int, ignore_index: int
) -> tuple[Any, Any]:
    """nll_loss2d_forward: nll_loss over [N, C, H, W] with targets [N, H, W]."""
    if np.ndim(target) != 3:
        raise RuntimeError(
            "only batches of spatial targets supported (3D tensors) but got targets "
            f"of dimension: {np.ndim(target)}"
        )
    if x.ndim != 4:
        raise RuntimeError(
            "only batches of spatial inputs supported (4D tensors), but got input "
            f"of dimension: {x.ndim}"
        )
    _check_nll_weight_dtype(x, weight)
    if weight is not None and math.prod(np.shape(weight)) != x.shape[1]:
        raise RuntimeError(
            "weight tensor should be defined either for all or no classes"
        )
    t = np.shape(target)
    if (x.shape[0], x.shape[2], x.shape[3]) != t:
        raise RuntimeError(
            f"size mismatch (got input: {_sizes(x.shape)} , target: {_sizes(t)}"
        )
    return _nll_loss(x, target, weight, reduction, ignore_index)


def _check_nll_weight_dtype(x: Any, weight: Any) -> None:
    if weight is not None and weight.dtype != x.dtype:
        raise RuntimeError(
            f"expected scalar type {_st(x.dtype)} but found {_st(weight.dtype)}"
        )


def _nll_loss(
    x: Any, target: Any, weight: Any, reduction: int, ignore_index: int
) -> tuple[Any, Any]:
    xp = backend.namespace_of(x, target)
    moved, w, safe = nll_loss_positions(x, target, weight, ignore_index)
    if xp is np:
        picked = np.take_along_axis(moved, safe[..., None], axis=-1)[..., 0]
    else:
        hot = _one_hot(xp, safe, moved.shape[-1])
        picked = xp.sum(xp.where(hot, moved, 0.0), axis=-1)
    losses = -w * picked
    total_weight = xp.astype(xp.sum(w), x.dtype)
    if reduction == 0 and x.ndim > 1:
        return xp.astype(losses, x.dtype, copy=False), xp.zeros((), dtype=x.dtype)
    if reduction == 0:  # one unbatched target: its loss, and its weight
        return xp.astype(losses, x.dtype), total_weight
    total = xp.sum(losses)
    if reduction == 1:
        with np.errstate(invalid="ignore"):  # 0 / 0: every target ignored, as nan
            total = total / total_weight
    return xp.astype(total, x.dtype), total_weight


def _nn_reduced_grad(grad: Any, reduction: int, numel: int) -> Any:
    """A loss's output gradient per element: itself for "none", spread evenly
    for "mean" (broadcasting does the expansion), as it is for "sum"."""
    return grad / numel if reduction == 1 else grad


def mse_loss_backward(grad: Any, self: Any, target: Any, reduction: int) -> Any:
    """2 * (x - target), scaled by the reduction."""
    g = _nn_reduced_grad(grad, reduction, math.prod(self.shape))
    return g * (2 * (self - target))


def smooth_l1_loss_backward(
    grad: Any, self: Any, target: Any, reduction: int, beta: float
) -> Any:
    """d / beta where |d| < beta, else sign(d): d / beta clipped to [-1, 1]."""
    g = _nn_reduced_grad(grad, reduction, math.prod(self.shape))
    diff = self - target
    if beta == 0:
        return g * sign(diff)
    if _clippable(g, diff):
        if beta != 1:
            diff /= beta
        return _clipped_times(diff, 1, g)
    xp = array_namespace(g, diff)
    return g * xp.where(xp.abs(diff) < beta, diff * (1 / beta), sign(diff))


def huber_loss_backward(
    grad: Any, self: Any, target: Any, reduction: int, delta: float
) -> Any:
    """d where |d| <= delta, else delta * sign(d): d clipped to [-delta, delta].
    PyTorch's backward kernel refuses a target of another dtype (its forward
    accepts one)."""
    want, found = _raw(self).dtype, _raw(target).dtype
    if found != want:
        raise RuntimeError(
            f"Found dtype {scalar_type_name(found)} but expected {scalar_type_name(want)}"
        )
    g = _nn_reduced_grad(grad, reduction, math.prod(self.shape))
    diff = self - target
    if _clippable(g, diff):
        return _clipped_times(diff, delta, g)
    xp = array_namespace(g, diff)
    return g * xp.where(xp.abs(diff) <= delta, diff, delta * sign(diff))


def _clippable(g: Any, diff: Any) -> bool:
    """A first-order backward on ndarrays: diff a float array of its own, which
    the gradient (a numpy scalar after a reduction) broadcasts to."""
    return (
        type(diff) is np.ndarray
        and diff.ndim > 0
        and diff.dtype.kind == "f"
        and isinstance(g, (np.ndarray, np.generic))
        and np.broadcast_shapes(np.shape(g), diff.shape) == diff.shape
    )


def _clipped_times(diff: np.ndarray, bound: float, g: np.ndarray) -> np.ndarray:
    """clip(diff, -bound, bound) * g, in `diff` (nan stays nan)."""
    np.clip(diff, -bound, bound, out=diff)
    return np.multiply(diff, g, out=diff)


def _nn_weighted(value: Any, weight: Any) -> Any:
    return value if weight is None else value * weight


def _nn_clamp_min(x: Any, low: float) -> Any:
    return array_namespace(x).maximum(x, low)


def binary_cross_entropy_backward(
    grad: Any, self: Any, target: Any, weight: Any, reduction: int
) -> Any:
    """w * (x - t) / max(x * (1 - x), 1e-12), PyTorch's clamp of the denominator."""
    g = _nn_reduced_grad(grad, reduction, math.prod(self.shape))
    denominator = _nn_clamp_min((1 - self) * self, 1e-12)
    return _nn_weighted(g * ((self - target) / denominator), weight)


def binary_cross_entropy_target_backward(
    grad: Any, self: Any, target: Any, weight: Any, reduction: int
) -> Any:
    """w * (log(1 - x) - log(x)), each log clamped at -100 as in the forward;
    "mean" divides by the target's element count, as PyTorch's."""
    g = _nn_reduced_grad(grad, reduction, math.prod(np.shape(target)))
    log_1mx = _nn_clamp_min(_nn_log1p(-self), -100)
    log_x = _nn_clamp_min(log(self), -100)
    return _nn_weighted(g * (log_1mx - log_x), weight)


def binary_cross_entropy_with_logits_backward(
    grad: Any, self: Any, target: Any, weight: Any, pos_weight: Any, reduction: int
) -> Any:
    """(1 - t) - l * sigmoid(-x), l = 1 + (pos_weight - 1) * t (sigmoid(x) - t
    without pos_weight)."""
    g = _nn_reduced_grad(grad, reduction, math.prod(self.shape))
    if pos_weight is None:
        d = _nn_sigmoid(self) - target
    else:
        log_weight = (pos_weight - 1) * target + 1
        d = (1 - target) - log_weight * _nn_sigmoid(-self)
    return _nn_weighted(g * d, weight)


def binary_cross_entropy_with_logits_target_backward(
    grad: Any, self: Any, target: Any, weight: Any, pos_weight: Any, reduction: int
) -> Any:
    """-x, plus (pos_weight - 1) * log(1 + exp(-x)) with pos_weight."""
    g = _nn_reduced_grad(grad, reduction, math.prod(self.shape))
    d = -self
    if pos_weight is not None:
        d = d + (pos_weight - 1) * _nn_softplus(-self)
    return _nn_weighted(g * d, weight)


def nll_loss_backward(
    grad: Any,
    self: Any,
    target: Any,
    weight: Any,
    reduction: int,
    ignore_index: int,
) -> Any:
    """-w[t] at each position's target class (zero where ignored), divided by the
    total weight for "mean": a constant times the output gradient, so the input
    gradient is linear in `grad` and does not depend on the input."""
    x = _raw(self)
    xp = backend.namespace_of(x)
    _, w, safe = nll_loss_positions(
        x, _raw(target), None if weight is None else _raw(weight), ignore_index
    )
    n_classes = x.shape[0] if x.ndim == 1 else x.shape[1]
    if xp is np:
        coefficient = np.zeros(safe.shape + (n_classes,), dtype=x.dtype)
        np.put_along_axis(coefficient, safe[..., None], -w[..., None], axis=-1)
    else:
        coefficient = xp.where(_one_hot(xp, safe, n_classes), -w[..., None], 0.0)
    if reduction == 1:  # every target ignored: a nan loss, but zero gradients
        total = xp.sum(w)
        with np.errstate(invalid="ignore", divide="ignore"):
            coefficient = xp.where(coefficient != 0, coefficient / total, 0.0)
    if x.ndim > 1:
        coefficient = xp.moveaxis(coefficient, -1, 1)
    coefficient = _constant_like(grad, coefficient)
    if reduction == 0 and x.ndim > 1:
        grad = reshape(grad, (x.shape[0], 1) + tuple(x.shape[2:]))
    return grad * coefficient


# The per-op benchmark's floors (benchmarks/ops.py): forward and backward in the
# plainest fast numpy; the target's gradient is the input's, negated.


def _reduced(loss: np.ndarray, reduction: int) -> Any:
    return loss.mean() if reduction == 1 else loss.sum() if reduction == 2 else loss


def _huber_floor(
    grad: Any, self: Any, target: Any, reduction: int = 1, delta: float = 1.0
) -> Any:
    diff = self - target
    size = np.abs(diff)
    inside = np.minimum(size, delta)
    loss = _reduced(inside * (size - 0.5 * inside), reduction)
    g = np.clip(diff, -delta, delta) * (grad / diff.size if reduction == 1 else grad)
    return loss, g, -g


def _smooth_l1_floor(
    grad: Any, self: Any, target: Any, reduction: int = 1, beta: float = 1.0
) -> Any:
    loss, g, _ = _huber_floor(grad / beta, self, target, reduction, beta)
    return loss / beta, g, -g


FLOORS = {"huber_loss": _huber_floor, "smooth_l1_loss": _smooth_l1_floor}
