"""The losses and distances PyTorch composes from other ops in ATen (Loss.cpp,
Distance.cpp, Normalization.cpp): cosine_embedding_loss, hinge_embedding_loss,
margin_ranking_loss, triplet_margin_loss (over pairwise distances), poisson_nll_loss,
rms_norm and instance_norm.

Each body calls the recorded ops in ATen's order, so the nodes are PyTorch's
(a mean-reduced hinge_embedding_loss records MeanBackward0 over AddBackward0 over
WhereBackward0 ...) and nothing here needs a backward of its own. ATen's in-place
steps on fresh temporaries (`clamp_min_`, `sqrt_`) are their functional ops here:
the same node, without a version bump on a tensor nobody else holds.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime import dispatch
from yamlgrad.runtime.autograd.grad_mode import no_grad
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.errors import argument_type

COMPOSITE_HELPERS = (
    "cosine_embedding_loss_via_ops",
    "hinge_embedding_loss_via_ops",
    "margin_ranking_loss_via_ops",
    "triplet_margin_loss_via_ops",
    "poisson_nll_loss_via_ops",
    "rms_norm_via_ops",
    "instance_norm_via_ops",
)

_EPSILON = 1e-12  # cosine_embedding_loss's guard against a zero norm, as ATen's


def _sizes(shape: Any) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _zeros_like(t: Tensor) -> Tensor:
    """at::zeros_like: a constant, not recorded."""
    return Tensor._make(np.zeros_like(t._data))


def _reduce(loss: Any, reduction: int) -> Any:
    """ATen's apply_loss_reduction: 1 mean (MeanBackward0), 2 sum, else none."""
    if reduction == 1:
        return dispatch.ops.mean(loss)
    if reduction == 2:
        return dispatch.ops.sum(loss)
    return loss


def cosine_embedding_loss_via_ops(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float, reduction: int
) -> Any:
    """1 - cos(x1, x2) where target is 1, max(0, cos - margin) where it is -1."""
    ops = dispatch.ops
    targ_dim = target.ndim
    if targ_dim not in (0, 1):
        raise RuntimeError(
            "0D or 1D target tensor expected, multi-target not supported"
        )
    if targ_dim == 1 and not (input1.ndim == 2 and input2.ndim == 2):
        raise RuntimeError(
            "1D target tensor expects 2D input tensors, but found inputs with sizes "
            f"{_sizes(input1.shape)} and {_sizes(input2.shape)}."
        )
    if targ_dim == 0 and not (input1.ndim == 1 and input2.ndim == 1):
        raise RuntimeError(
            "0D target tensor expects 1D input tensors, but found inputs with sizes "
            f"{_sizes(input1.shape)} and {_sizes(input2.shape)}."
        )
    prod_sum = ops.sum(ops.mul(input1, input2), [targ_dim])
    mag_square1 = ops.add(ops.sum(ops.mul(input1, input1), [targ_dim]), _EPSILON)
    mag_square2 = ops.add(ops.sum(ops.mul(input2, input2), [targ_dim]), _EPSILON)
    denom = ops.sqrt(ops.mul(mag_square1, mag_square2))
    cos = ops.div(prod_sum, denom)
    zeros = _zeros_like(cos)
    pos = ops.rsub(cos, 1)
    neg = ops.clamp_min(ops.sub(cos, margin), 0)
    output_pos = ops.where(ops.eq(target, 1), pos, zeros)
    output_neg = ops.where(ops.eq(target, -1), neg, zeros)
    return _reduce(ops.add(output_pos, output_neg), reduction)


def hinge_embedding_loss_via_ops(
    self: Tensor, target: Tensor, margin: float, reduction: int
) -> Any:
    """x where target is 1, max(0, margin - x) where it is -1 (both where neither)."""
    ops = dispatch.ops
    zeros = _zeros_like(self)
    margin_clamp = ops.clamp_min(ops.rsub(self, margin), 0)
    output_margin = ops.where(ops.ne(target, 1), margin_clamp, zeros)
    output_self = ops.where(ops.ne(target, -1), self, zeros)
    return _reduce(ops.add(output_margin, output_self), reduction)


def margin_ranking_loss_via_ops(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float, reduction: int
) -> Any:
    """max(0, -target * (x1 - x2) + margin)."""
    ops = dispatch.ops
    scaled = ops.mul(ops.neg(target), ops.sub(input1, input2))
    return _reduce(ops.clamp_min(ops.add(scaled, margin), 0), reduction)


def _pairwise_distance(
    x1: Tensor, x2: Tensor, p: float, eps: float, keepdim: bool
) -> Any:
    """||x1 - x2 + eps||_p over the last dim of the wider operand."""
    ops = dispatch.ops
    innermost = max(x1.ndim, x2.ndim) - 1
    shifted = ops.add(ops.sub(x1, x2), eps)
    return ops.norm_ScalarOpt_dim(shifted, p, [innermost], keepdim)


def triplet_margin_loss_via_ops(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float,
    p: float,
    eps: float,
    swap: bool,
    reduction: int,
) -> Any:
    """max(0, margin + d(a, p) - d(a, n)), d the pairwise distance (with `swap`,
    d(a, n) is min(d(a, n), d(p, n)))."""
    ops = dispatch.ops
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same "
            f"number of dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and "
            f"negative {n_dim}D inputs"
        )
    dist_pos = _pairwise_distance(anchor, positive, p, eps, False)
    dist_neg = _pairwise_distance(anchor, negative, p, eps, False)
    if swap:
        dist_swap = _pairwise_distance(positive, negative, p, eps, False)
        dist_neg = ops.minimum(dist_neg, dist_swap)
    output = ops.clamp_min(ops.sub(ops.add(dist_pos, margin), dist_neg), 0)
    return _reduce(output, reduction)


def poisson_nll_loss_via_ops(
    input: Tensor,
    target: Tensor,
    log_input: bool,
    full: bool,
    eps: float,
    reduction: int,
) -> Any:
    """exp(x) - t x (log_input) or x - t log(x + eps); `full` adds Stirling's term
    t log t - t + log(2 pi t) / 2 where t > 1."""
    for position, (name, flag) in enumerate((("log_input", log_input), ("full", full))):
        if not isinstance(flag, (bool, np.bool_)):  # as PyTorch's argument parser
            raise TypeError(
                argument_type("poisson_nll_loss", name, position + 3, "bool", flag)
            )
    ops = dispatch.ops
    if log_input:
        loss = ops.sub(ops.exp(input), ops.mul(target, input))
    else:
        loss = ops.sub(input, ops.mul(target, ops.log(ops.add(input, eps))))
    if full:
        stirling = ops.add(
            ops.sub(ops.mul(target, ops.log(target)), target),
            ops.mul(ops.log(ops.mul(target, 2 * math.pi)), 0.5),
        )
        loss = ops.add(loss, ops.masked_fill(stirling, ops.le(target, 1), 0))
    return _reduce(loss, reduction)


def rms_norm_via_ops(
    input: Tensor,
    normalized_shape: tuple[int, ...],
    weight: Tensor | None,
    eps: float | None,
) -> Any:
    """x * rsqrt(mean(x^2) + eps) over the trailing `normalized_shape` dims, times
    `weight`; eps defaults to the machine epsilon of the input's dtype."""
    ops = dispatch.ops
    if isinstance(normalized_shape, str):  # as PyTorch's argument parser
        raise TypeError(
            argument_type(
                "rms_norm", "normalized_shape", 2, "tuple of ints", normalized_shape
            )
        )
    shape = tuple(normalized_shape)
    if not shape:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing "
            "at least one element, but got normalized_shape = []"
        )
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(
            "Expected weight to be of same shape as normalized_shape, but got weight "
            f"of shape {_sizes(weight.shape)} and normalized_shape = {_sizes(shape)}"
        )
    if input.ndim == 0:
        raise ValueError("Input tensor must have at least 1 dimensions, but got 0")
    trailing = tuple(input.shape[input.ndim - len(shape) :])
    if len(shape) > input.ndim or trailing != shape:
        raise RuntimeError(
            "Given normalized_shape="
            + _sizes(shape)
            + ", expected input with shape [*"
            + ", ".join(str(s) for s in shape)
            + "], but got input of size"
            + _sizes(input.shape)
        )
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    dims = [-(i + 1) for i in range(len(shape))]
    mean_square = ops.mean(ops.pow(input, 2), dims, True)
    out = ops.mul(input, ops.rsqrt(ops.add(mean_square, eps)))
    if weight is not None:
        out = ops.mul(out, weight)
    # The result is laid out row-major and keeps the input's dtype, whatever the
    # input's strides and the weight's dtype (a float64 weight does not promote a
    # float32 input's result).
    out = ops.contiguous(out)
    if out._data.dtype != input._data.dtype:
        out = ops._to_copy(out, dtype=input._data.dtype)
    return out


def instance_norm_via_ops(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    use_input_stats: bool,
    momentum: float,
    eps: float,
) -> Any:
    """Batch norm of the input viewed as one batch of N * C channels (ATen's
    instance_norm): weight, bias and the running statistics repeated per sample,
    the running statistics averaged back over the batch after."""
    ops = dispatch.ops
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError(
            "Expected running_mean and running_var to be defined when "
            "use_input_stats is false"
        )
    n, c = input.shape[0], input.shape[1]
    shape = (1, n * c) + tuple(input.shape[2:])
    repeated = [
        None if t is None else ops.repeat(t, (n,))
        for t in (weight, bias, running_mean, running_var)
    ]
    weight_, bias_, mean_, var_ = repeated
    flat = ops.view(ops.contiguous(input), shape)
    out = ops.native_batch_norm(
        flat, weight_, bias_, mean_, var_, use_input_stats, momentum, eps
    )[0]
    for running, updated in ((running_mean, mean_), (running_var, var_)):
        if running is not None:  # the per-sample statistics, averaged back
            with no_grad():
                average = ops.mean(ops.view(updated, (n, c)), [0], False)
            running._data[...] = average._data
            running.version_counter.bump()
    return ops.view(out, tuple(input.shape))
