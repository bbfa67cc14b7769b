"""Margin losses: soft_margin_loss, multi_margin_loss and multilabel_margin_loss,
the kernels with PyTorch's checks and their backward helpers.

The gradients are PyTorch's: a hinge contributes where its margin is violated
(a constant mask), so a double backward is recorded through the same helpers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime.ops.common import _constant, _data, _sizes
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
    x, target = np.asarray(x), np.asarray(target)
    loss = np.logaddexp(0, -target * x).astype(x.dtype, copy=False)
    return apply_loss_reduction(loss, reduction)


def soft_margin_loss_backward(grad: Any, self: Any, target: Any, reduction: int) -> Any:
    """-target * exp(-target x) / (1 + exp(-target x)), scaled by the reduction."""
    norm = 1.0 / math.prod(self.shape) if reduction == 1 else 1.0
    z = exp(-target * self)
    return -(target * z) / (1.0 + z) * norm * grad


# -- multi_margin_loss: sum over i != y of max(0, margin - x_y + x_i)^p / C ----------


def _margin_shapes(x: Any, target: Any, weight: Any) -> tuple[int, int]:
    """(N, C) after PyTorch's multi_margin_loss_shape_check."""
    target = _data(target)
    weight = None if weight is None else _data(weight)
    ndim = np.ndim(x)
    shape = np.shape(x)
    n, c = (1, shape[0]) if ndim <= 1 else shape[:2]
    if ndim == 0:
        n, c = 1, 1
    if not (
        (ndim == 2 and shape[1] != 0) or (ndim == 1 and shape[0] != 0) or ndim == 0
    ):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, "
            f"but got: {_sizes(shape)}"
        )
    if np.ndim(target) > 1 or np.size(target) != n:
        raise RuntimeError(
            f"inconsistent target size, expected {n} but got {_sizes(np.shape(target))}"
        )
    if weight is not None and (np.ndim(weight) > 1 or np.size(weight) != c):
        raise RuntimeError(
            f"inconsistent weight size, expected {c} but got "
            f"{_sizes(np.shape(weight))}"
        )
    return n, c


def multi_margin_loss_kernel(
    x: Any, target: Any, p: float, margin: float, weight: Any, reduction: int
) -> Any:
    """The multi-class hinge loss of each row (PyTorch's MultiMarginLoss)."""
    if p not in (1, 2):
        raise RuntimeError("only p == 1 and p == 2 supported")
    x = np.asarray(x)
    n, c = _margin_shapes(x, target, weight)
    rows = x.reshape(n, c)
    target = np.asarray(target).reshape(n)
    if np.any((target < 0) | (target >= c)):
        raise IndexError("target out of range")
    z = margin - rows[np.arange(n), target][:, None] + rows
    hinge = np.where(z > 0, z, 0) ** p
    if weight is not None:
        hinge = hinge * np.asarray(weight)[target][:, None]
    hinge[np.arange(n), target] = 0
    loss = (hinge.sum(axis=1) / c).astype(x.dtype)
    if reduction == 0:
        return loss.reshape(np.shape(target)) if x.ndim > 1 else loss.reshape(())
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
    x = _data(self)
    n, c = _margin_shapes(x, target, weight)
    xp = array_namespace(grad, self)
    rows = xp.reshape(self, (n, c))
    target = np.asarray(_data(target)).reshape(n)
    picked = xp.gather(rows, 1, target[:, None])
    z = margin - picked + rows
    active = _data(z) > 0
    active[np.arange(n), target] = False
    scale = np.ones(n, dtype=x.dtype) / c
    if weight is not None:
        scale = scale * np.asarray(_data(weight))[target]
    coefficient = xp.where(active, p * z ** (p - 1), 0.0) * _constant(
        scale[:, None].astype(x.dtype), rows
    )
    onehot = np.zeros((n, c), dtype=x.dtype)
    onehot[np.arange(n), target] = 1
    rows_grad = coefficient - _constant(onehot, rows) * xp.sum(
        coefficient, axis=1, keepdims=True
    )
    per_row = grad / n if reduction == 1 else grad
    per_row = xp.reshape(per_row, (n, 1)) if reduction == 0 else per_row
    return xp.reshape(rows_grad * per_row, tuple(x.shape))


# -- multilabel_margin_loss ------------------------------------------------------------


def _is_target(target: np.ndarray, c: int) -> np.ndarray:
    """1 for each class a row lists before its first -1, else 0."""
    listed = np.zeros(target.shape, dtype=bool)
    for row, labels in enumerate(target):
        for label in labels:
            if label < 0:
                break
            if label >= c:
                raise RuntimeError(f"target index out of range, got {label}")
            listed[row, label] = True
    return listed


def _multilabel_rows(x: Any, target: Any) -> tuple[int, int]:
    shape = np.shape(x)
    if len(shape) > 2 or (len(shape) == 2 and shape[1] == 0):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, "
            f"but got: {_sizes(shape)}"
        )
    n, c = (1, shape[0] if shape else 1) if len(shape) <= 1 else shape
    if np.shape(target) != (shape if shape else (1,)) and np.size(target) != n * c:
        raise RuntimeError(
            f"inconsistent target size: {_sizes(np.shape(target))} for input of "
            f"size: {_sizes(shape)}"
        )
    return n, c


def multilabel_margin_loss_kernel(x: Any, target: Any, reduction: int) -> Any:
    """(loss, is_target): sum over the listed classes j and the other classes i
    of max(0, 1 - (x_j - x_i)) / C per row."""
    x = np.asarray(x)
    n, c = _multilabel_rows(x, target)
    rows = x.reshape(n, c)
    listed = _is_target(np.asarray(target).reshape(n, c), c)
    z = 1 - rows[:, :, None] + rows[:, None, :]
    pairs = listed[:, :, None] & ~listed[:, None, :]
    loss = (np.where(pairs & (z > 0), z, 0).sum(axis=(1, 2)) / c).astype(x.dtype)
    is_target = listed.astype(x.dtype).reshape(np.shape(target))
    if reduction == 0:
        return loss.reshape(_shape_of_rows(x)), is_target
    return apply_loss_reduction(loss, reduction), is_target


def _shape_of_rows(x: Any) -> tuple[int, ...]:
    return tuple(np.shape(x)[:1]) if np.ndim(x) == 2 else ()


def multilabel_margin_loss_backward(
    grad: Any, self: Any, target: Any, reduction: int, is_target: Any
) -> Any:
    """-1/C per violated pair for the listed class j, +1/C for the other class i."""
    x = _data(self)
    n, c = _multilabel_rows(x, target)
    rows = x.reshape(n, c)
    listed = np.asarray(_data(is_target)).reshape(n, c) != 0
    z = 1 - rows[:, :, None] + rows[:, None, :]
    active = (listed[:, :, None] & ~listed[:, None, :] & (z > 0)).astype(x.dtype)
    coefficient = (active.sum(axis=1) - active.sum(axis=2)) / c
    xp = array_namespace(grad, self)
    per_row = grad / n if reduction == 1 else grad
    per_row = xp.reshape(per_row, (n, 1)) if reduction == 0 else per_row
    rows_grad = _constant(coefficient.astype(x.dtype), grad) * per_row
    return xp.reshape(rows_grad, tuple(x.shape))
