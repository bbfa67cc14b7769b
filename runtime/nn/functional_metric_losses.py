"""The embedding, ranking and likelihood losses of `yg.nn.functional` (re-exported
there): cosine_embedding_loss, hinge_embedding_loss, margin_ranking_loss,
triplet_margin_loss, triplet_margin_with_distance_loss, poisson_nll_loss,
gaussian_nll_loss and multilabel_soft_margin_loss.

Where PyTorch's functional calls an aten op (torch.cosine_embedding_loss & co.),
this calls the same entry (a composite of derivatives.yaml, so the nodes are
those of the ops it calls); where PyTorch's functional computes the loss in
Python (gaussian_nll_loss, multilabel_soft_margin_loss, the triplet loss with a
distance function), the same ops are called here in the same order.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from yamlgrad.generated import VariableType
from yamlgrad.runtime import factories
from yamlgrad.runtime.autograd.grad_mode import no_grad
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.nn import functional as F
from yamlgrad.runtime.nn.functional_losses import (
    _legacy_reduction,
    _reduction_enum,
    pairwise_distance,
)

__all__ = [
    "cosine_embedding_loss",
    "hinge_embedding_loss",
    "margin_ranking_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    "poisson_nll_loss",
    "gaussian_nll_loss",
    "multilabel_soft_margin_loss",
]


def _check_reduction(reduction: str, message: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(message)


def _reduced(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return VariableType.mean(loss)
    if reduction == "sum":
        return VariableType.sum(loss)
    return loss


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is
    -1, the cosine taken over dim 1 (dim 0 of 1-d inputs with a 0-d target).

    >>> cosine_embedding_loss(yg.tensor([[1.0, 0.0]]), yg.tensor([[1.0, 1.0]]),
    ...                       yg.tensor([1]))
    tensor(0.2929)
    """
    enum = _reduction_enum(reduction, size_average, reduce)
    return VariableType.cosine_embedding_loss(input1, input2, target, margin, enum)


def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """x where target is 1, max(0, margin - x) where it is -1.

    >>> hinge_embedding_loss(yg.tensor([0.3, 2.0]), yg.tensor([-1.0, 1.0]))
    tensor(1.3500)
    """
    enum = _reduction_enum(reduction, size_average, reduce)
    return VariableType.hinge_embedding_loss(input, target, margin, enum)


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, -target * (x1 - x2) + margin): x1 should rank above x2 where target
    is 1, below where it is -1."""
    enum = _reduction_enum(reduction, size_average, reduce)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but "
            f"got sizes: input1: {input1.size()}, input2: {input2.size()}, target: "
            f"{target.size()} "
        )
    return VariableType.margin_ranking_loss(input1, input2, target, margin, enum)


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the
    pairwise p-distance (`swap`: d(anchor, negative) is replaced by
    d(positive, negative) where that is smaller)."""
    enum = _reduction_enum(reduction, size_average, reduce)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return VariableType.triplet_margin_loss(
        anchor, positive, negative, margin, p, eps, swap, enum
    )


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """triplet_margin_loss with any distance (pairwise_distance by default)."""
    _check_reduction(reduction, f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the "
            f"same number of dimensions, but got: anchor {a_dim}D, positive "
            f"{p_dim}D, and negative {n_dim}D inputs"
        )
    if distance_function is None:
        distance_function = pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_swap = distance_function(positive, negative)
        dist_neg = VariableType.minimum(dist_neg, dist_swap)
    loss = VariableType.clamp_min(margin + dist_pos - dist_neg, 0)
    return _reduced(loss, reduction)


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The negative log likelihood of a Poisson target: exp(x) - target * x for
    log-rates (`log_input`), else x - target * log(x + eps); `full` adds the
    Stirling approximation of log(target!)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    _check_reduction(reduction, reduction + " is not a valid value for reduction")
    enum = _reduction_enum(reduction)
    return VariableType.poisson_nll_loss(input, target, log_input, full, eps, enum)


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """(log(var) + (input - target)^2 / var) / 2, `var` clamped below at eps
    without recording the clamp (so its gradient is that of the unclamped
    variance, as in PyTorch); `full` adds log(2 pi) / 2. A `var` one dim short
    of the input, or differing in one dim of size 1, is broadcast."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * factories.ones_like(input)
    elif bool(VariableType.any(VariableType.lt(var, 0))):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = VariableType.unsqueeze(var, -1)
        elif not (
            input.ndim == var.ndim
            and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1
        ):
            raise ValueError("var is of incorrect size")
    _check_reduction(reduction, reduction + " is not valid")
    var = VariableType.clone(var)
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (VariableType.log(var) + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    return _reduced(loss, reduction)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The binary cross entropy of each class's logit, averaged over the classes
    (the last dim), then reduced over the samples."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    loss = -(target * F.logsigmoid(input) + (1 - target) * F.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = VariableType.sum(loss, [class_dim]) / input.shape[class_dim]
    _check_reduction(reduction, reduction + " is not valid")
    return _reduced(loss, reduction)
