"""Margin losses: soft_margin_loss, multi_margin_loss and multilabel_margin_loss,
the kernels with PyTorch's checks and their backward helpers.

The gradients are PyTorch's: a hinge contributes where its margin is violated
(a constant mask), so a double backward is recorded through the same helpers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.ops.activations import _nn_softplus
from yamlgrad.runtime.ops.common import _constant_like, _raw, _sizes
from yamlgrad.runtime.ops.elementwise import exp
from yamlgrad.runtime.ops.losses import apply_loss_reduction
from yamlgrad.runtime.ops.namespace import array_namespace

KERNELS = (
    "soft_margin_loss_kernel",
    "multi_margin_loss_kernel",
    "multilabel_margin_loss_kernel",
)
BACKWARD_HELPERS = (
    "soft_margin_loss_backward",
    "multi_margin_loss_backward",
    "multilabel_margin_loss_backward",
)


# -- soft_margin_loss: log(1 + exp(-y x)) ------------------------------------------


def soft_margin_loss_kernel(x: Any, target: Any, reduction: int) -> Any:
    """log(1 + exp(-target * x)), reduced."""
    xp = backend.namespace_of(x, target)
    if xp is np:
        x, target = np.asarray(x), np.asarray(target)
    loss = xp.astype(_nn_softplus(-target * x), x.dtype, copy=False)
    return apply_loss_reduction(loss, reduction)


def _raw_namespace(*values: Any) -> Any:
    """The namespace of the raw arrays behind values (Tensors or arrays): where
    a helper computes its constants (masks, one-hot rows)."""
    return backend.namespace_of(*(_raw(v) for v in values if v is not None))


def _checks_values(*arrays: Any) -> bool:
    """Whether a check that reads values runs: not on a lazy array, whose values
    are not computed until the user asks."""
    return not any(backend.is_lazy(a) for a in arrays)


def soft_margin_loss_backward(grad: Any, self: Any, target: Any, reduction: int) -> Any:
    """-target * exp(-target x) / (1 + exp(-target x)), scaled by the reduction."""
    norm = 1.0 / math.prod(self.shape) if reduction == 1 else 1.0
    z = exp(-target * self)
    return -(target * z) / (1.0 + z) * norm * grad


# -- multi_margin_loss: sum over i != y of max(0, margin - x_y + x_i)^p / C ----------


def _margin_shapes(x: Any, target: Any, weight: Any) -> tuple[int, int]:
    """(N, C) after PyTorch's multi_margin_loss_shape_check."""
    target = _raw(target)
    weight = None if weight is None else _raw(weight)
    ndim = np.ndim(x)
    shape = np.shape(x)
    if ndim == 0:
        n, c = 1, 1
    else:
        n, c = (1, shape[0]) if ndim == 1 else shape[:2]
    if not (
        (ndim == 2 and shape[1] != 0) or (ndim == 1 and shape[0] != 0) or ndim == 0
    ):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, "
            f"but got: {_sizes(shape)}"
        )
    if np.ndim(target) > 1 or math.prod(np.shape(target)) != n:
        raise RuntimeError(
            f"inconsistent target size, expected {n} but got {_sizes(np.shape(target))}"
        )
    if weight is not None and (np.ndim(weight) > 1 or math.prod(np.shape(weight)) != c):
        raise RuntimeError(
            f"inconsistent weight size, expected {c} but got "
            f"{_sizes(np.shape(weight))}"
        )
    return n, c


def _picked(xp: Any, rows: Any, labels: Any, hot: Any) -> Any:
    """Each row's value at its label, as a column: numpy's fancy index, or the
    one-hot rows' sum on a backend without one (and on Tensors, recorded)."""
    if type(rows) is np.ndarray:
        return rows[np.arange(rows.shape[0]), labels][:, None]
    return xp.sum(xp.where(hot, rows, 0.0), axis=1, keepdims=True)


def multi_margin_loss_kernel(
    x: Any, target: Any, p: float, margin: float, weight: Any, reduction: int
) -> Any:
    """The multi-class hinge loss of each row (PyTorch's MultiMarginLoss)."""
    if p not in (1, 2):
        raise RuntimeError("only p == 1 and p == 2 supported")
    xp = backend.namespace_of(x, target)
    if xp is np:
        x, target = np.asarray(x), np.asarray(target)
    n, c = _margin_shapes(x, target, weight)
    rows = xp.reshape(x, (n, c))
    labels = xp.reshape(target, (n,))
    if _checks_values(labels) and bool(xp.any((labels < 0) | (labels >= c))):
        raise IndexError("target out of range")
    hot = None if xp is np else labels[:, None] == xp.arange(c)
    z = margin - _picked(xp, rows, labels, hot) + rows
    hinge = xp.where(z > 0, z, 0.0) ** p
    if weight is not None:
        hinge = hinge * xp.take(weight, labels)[:, None]
    if xp is np:
        hinge[np.arange(n), labels] = 0  # its own array: no selection pass
    else:
        hinge = xp.where(hot, 0.0, hinge)
    loss = xp.astype(xp.sum(hinge, axis=1) / c, x.dtype)
    if reduction == 0:
        # PyTorch: one loss per row when the target has a dim, else a 0-d loss
        return xp.reshape(loss, (n,) if np.ndim(target) > 0 else ())
    return apply_loss_reduction(loss, reduction)


def multi_margin_loss_backward(
    grad: Any,
    self: Any,
    target: Any,
    p: float,
    margin: float,
    weight: Any,
    reduction: int,
) -> Any:
    """p z^(p-1) w_y / C for each violated class i (z = margin - x_y + x_i), and
    minus their sum for the target class."""
    x = _raw(self)
    n, c = _margin_shapes(x, target, weight)
    xp, raw = array_namespace(grad, self), _raw_namespace(self, target)
    rows = xp.reshape(self, (n, c))
    labels = raw.reshape(_raw(target), (n,))
    hot = labels[:, None] == raw.arange(c)
    z = margin - _picked(xp, rows, labels, hot) + rows
    active = (_raw(z) > 0) & ~hot
    scale = raw.full((n,), 1 / c, dtype=x.dtype)
    if weight is not None:
        scale = scale * raw.take(_raw(weight), labels)
    coefficient = xp.where(active, p * z ** (p - 1), 0.0) * _constant_like(
        rows, scale[:, None]
    )
    onehot = _constant_like(rows, raw.astype(hot, x.dtype))
    rows_grad = coefficient - onehot * xp.sum(coefficient, axis=1, keepdims=True)
    per_row = grad / n if reduction == 1 else grad
    per_row = xp.reshape(per_row, (n, 1)) if reduction == 0 else per_row
    return xp.reshape(rows_grad * per_row, tuple(x.shape))


# -- multilabel_margin_loss ------------------------------------------------------------


def _target_counts(xp: Any, target: Any, c: int) -> Any:
    """How often each class is listed in its row before the first -1 (a label out
    of range there is refused, where the values are at hand). PyTorch's loop
    runs over the listed labels, so a label listed twice counts twice."""
    before = xp.cumulative_sum(xp.astype(target < 0, xp.int32), axis=1) == 0
    if _checks_values(target) and bool(xp.any(before & (target >= c))):
        labels = backend.to_numpy(target)[backend.to_numpy(before & (target >= c))]
        raise RuntimeError(f"target index out of range, got {labels[0]}")
    listed = (target[:, :, None] == xp.arange(c)) & before[:, :, None]
    return xp.sum(xp.astype(listed, xp.int64), axis=1)


def _hinge_pairs(xp: Any, counts: Any, dtype: Any) -> Any:
    """The weight of each (listed class j, other class i) pair: j's count."""
    other = counts == 0
    return xp.where(other[:, None, :], xp.astype(counts[:, :, None], dtype), 0.0)


def _multilabel_rows(x: Any, target: Any) -> tuple[int, int]:
    shape = np.shape(x)
    if len(shape) > 2 or (len(shape) == 2 and shape[1] == 0):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, "
            f"but got: {_sizes(shape)}"
        )
    n, c = (1, shape[0] if shape else 1) if len(shape) <= 1 else shape
    if (
        np.shape(target) != (shape if shape else (1,))
        and math.prod(np.shape(target)) != n * c
    ):
        raise RuntimeError(
            f"inconsistent target size: {_sizes(np.shape(target))} for input of "
            f"size: {_sizes(shape)}"
        )
    return n, c


def multilabel_margin_loss_kernel(x: Any, target: Any, reduction: int) -> Any:
    """(loss, is_target): sum over the listed classes j and the other classes i
    of max(0, 1 - (x_j - x_i)) / C per row."""
    xp = backend.namespace_of(x, target)
    if xp is np:
        x, target = np.asarray(x), np.asarray(target)
    n, c = _multilabel_rows(x, target)
    rows = xp.reshape(x, (n, c))
    counts = _target_counts(xp, xp.reshape(target, (n, c)), c)
    z = 1 - rows[:, :, None] + rows[:, None, :]
    pairs = _hinge_pairs(xp, counts, x.dtype)
    hinges = xp.sum(xp.where(z > 0, z * pairs, 0.0), axis=(1, 2))
    loss = xp.astype(hinges / c, x.dtype)
    is_target = xp.reshape(xp.astype(counts > 0, x.dtype), np.shape(target))
    if reduction == 0:
        return xp.reshape(loss, _shape_of_rows(x)), is_target
    return apply_loss_reduction(loss, reduction), is_target


def _shape_of_rows(x: Any) -> tuple[int, ...]:
    return tuple(np.shape(x)[:1]) if np.ndim(x) == 2 else ()


def multilabel_margin_loss_backward(
    grad: Any, self: Any, target: Any, reduction: int, is_target: Any
) -> Any:
    """-1/C per violated pair for the listed class j, +1/C for the other class i."""
    x = _raw(self)
    n, c = _multilabel_rows(x, target)
    raw = _raw_namespace(self, target)
    rows = raw.reshape(x, (n, c))
    counts = _target_counts(raw, raw.reshape(_raw(target), (n, c)), c)
    z = 1 - rows[:, :, None] + rows[:, None, :]
    active = raw.where(z > 0, _hinge_pairs(raw, counts, x.dtype), 0.0)
    coefficient = (raw.sum(active, axis=1) - raw.sum(active, axis=2)) / c
    xp = array_namespace(grad, self)
    per_row = grad / n if reduction == 1 else grad
    per_row = xp.reshape(per_row, (n, 1)) if reduction == 0 else per_row
    rows_grad = _constant_like(grad, raw.astype(coefficient, x.dtype)) * per_row
    return xp.reshape(rows_grad, tuple(x.shape))
