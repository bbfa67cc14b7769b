"""The losses and distances of `yg.nn.functional` (re-exported there).

Where PyTorch has a loss op (mse_loss, nll_loss, ...) it is a YAML entry; where it
decomposes the loss (l1_loss, kl_div, cross_entropy, the distances) the same ops
are called here in the same order, so the recorded nodes are PyTorch's. Kept apart
from runtime/nn/functional.py only for size: both are the public Python API over
the generated ops, with no kernel or backward code of their own.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from yamlgrad.generated import VariableType
from yamlgrad.runtime.autograd.grad_mode import no_grad
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.wrappers.variable_type_utils import result_type


def _sizes(shape: Any) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """The reduction string for the deprecated size_average/reduce arguments."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        reduction = "mean"
    else:
        reduction = "sum" if reduce else "none"
    warnings.warn(
        "size_average and reduce args will be deprecated, please use "
        f"reduction='{reduction}' instead.",
        stacklevel=3,
    )
    return reduction


def _reduction_enum(
    reduction: str, size_average: bool | None = None, reduce: bool | None = None
) -> int:
    """PyTorch's Reduction enum (0 none, 1 mean, 2 sum) for a reduction string."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
            "instead.",
            stacklevel=3,
        )
        return 1
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _warn_if_sizes_differ(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input "
            f"size ({input.size()}). This will likely lead to incorrect results due "
            "to broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def _broadcast_pair(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """torch.broadcast_tensors: an operand already of the common shape is kept;
    both in their promoted dtype (a float32 input and an integer target: float32)."""
    if a._data.dtype != b._data.dtype:
        common = result_type(a._data, b._data)
        a = a if a._data.dtype == common else VariableType._to_copy(a, dtype=common)
        b = b if b._data.dtype == common else VariableType._to_copy(b, dtype=common)
    shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    if tuple(a.shape) != shape:
        a = VariableType.expand(a, shape)
    if tuple(b.shape) != shape:
        b = VariableType.expand(b, shape)
    return a, b


def _weighted_reduction(loss: Tensor, weight: Tensor, reduction: str) -> Tensor:
    """mse_loss / l1_loss with `weight`: PyTorch weighs the unreduced loss and
    divides a mean by the total weight."""
    if reduction == "none":
        return loss
    if reduction == "sum":
        return VariableType.sum(loss)
    if reduction == "mean":
        return VariableType.sum(loss) / VariableType.sum(weight)
    raise ValueError(
        f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'."
    )


def _check_weight_size(weight: Tensor, input: Tensor) -> None:
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """(input - target) ** 2, reduced; MseLossBackward0 (a weighted loss is the
    composite PyTorch computes: pow, mul, sum, div).

    >>> mse_loss(yg.tensor([[-1.0, 0.5, 2.0]], requires_grad=True), yg.zeros(1, 3))
    tensor(1.7500, grad_fn=<MseLossBackward0>)
    """
    _warn_if_sizes_differ(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    input, target = _broadcast_pair(input, target)
    if weight is not None:
        _check_weight_size(weight, input)
        squared = VariableType.pow(VariableType.sub(input, target), 2)
        return _weighted_reduction(squared * weight, weight, reduction)
    return VariableType.mse_loss(input, target, _reduction_enum(reduction))


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """|input - target|, reduced: sub, abs, mean/sum as PyTorch's composite."""
    _warn_if_sizes_differ(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    input, target = _broadcast_pair(input, target)
    if weight is not None:
        _check_weight_size(weight, input)
        absolute = VariableType.abs(VariableType.sub(input, target))
        return _weighted_reduction(absolute * weight, weight, reduction)
    enum = _reduction_enum(reduction)
    loss = VariableType.abs(VariableType.sub(input, target))
    return _apply_reduction(loss, enum)


def _apply_reduction(loss: Tensor, enum: int) -> Tensor:
    """PyTorch's apply_loss_reduction: mean (MeanBackward0), sum (SumBackward0)."""
    if enum == 1:
        return VariableType.mean(loss)
    if enum == 2:
        return VariableType.sum(loss)
    return loss


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """0.5 d**2 / beta where |d| < beta, else |d| - 0.5 beta; SmoothL1LossBackward0
    (beta 0 is l1_loss, as in PyTorch)."""
    _warn_if_sizes_differ(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    input, target = _broadcast_pair(input, target)
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return VariableType.smooth_l1_loss(
        input, target, _reduction_enum(reduction), float(beta)
    )


def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """0.5 d**2 where |d| <= delta, else delta (|d| - 0.5 delta); HuberLossBackward0
    (with `weight`: the unreduced loss times weight, then reduced)."""
    _warn_if_sizes_differ(input, target)
    input, target = _broadcast_pair(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None:
        return VariableType.huber_loss(
            input, target, _reduction_enum(reduction), float(delta)
        )
    _check_weight_size(weight, input)
    loss = VariableType.huber_loss(input, target, 0, float(delta)) * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return VariableType.sum(loss)
    if reduction == "mean":
        return VariableType.mean(loss)
    raise ValueError(
        f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'."
    )


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """-w (t log x + (1 - t) log(1 - x)) for probabilities x; each log is clamped
    at -100 as in PyTorch. BinaryCrossEntropyBackward0.

    >>> binary_cross_entropy(yg.tensor([0.5]), yg.tensor([1.0]))
    tensor(0.6931)
    """
    enum = _reduction_enum(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input "
            f"size ({input.size()}) is deprecated. Please ensure they have the same "
            "size."
        )
    if weight is not None:
        shape = np.broadcast_shapes(tuple(target.shape), tuple(weight.shape))
        weight = VariableType.expand(weight, shape)
    return VariableType.binary_cross_entropy(input, target, weight, enum)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """binary_cross_entropy of sigmoid(input), computed stably from the logits;
    `pos_weight` weighs the positive term per class.
    BinaryCrossEntropyWithLogitsBackward0."""
    enum = _reduction_enum(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({target.size()}) must be the same as input size "
            f"({input.size()})"
        )
    return _ops().binary_cross_entropy_with_logits.default(
        input, target, weight, pos_weight, enum
    )


def _ops() -> Any:
    """yg.ops: every overload, including those without a public name."""
    from yamlgrad import ops

    return ops


def _class_dim(input: Tensor) -> int:
    return 0 if input.ndim == 1 else 1


def _check_nll_weight(weight: Tensor | None, n_classes: int) -> None:
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != n_classes):
        raise RuntimeError(
            f"weight tensor should be defined either for all {n_classes} classes or "
            f"no classes but got weight tensor of shape: {_sizes(weight.shape)}"
        )


def _nll_loss_nd(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
    ignore_index: int,
) -> Tensor:
    """PyTorch's nll_loss_nd: nll_loss for [C] and [N, C], nll_loss2d for
    [N, C, H, W], and any other [N, C, d1, ...] viewed as [N, C, 1, d1 * ...]."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1 and input.shape[0] != target.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target "
            f"batch_size ({target.shape[0]})."
        )
    _check_nll_weight(weight, input.shape[_class_dim(input)])
    if input.ndim <= 2:
        if target.ndim > 1:
            raise RuntimeError(
                "0D or 1D target tensor expected, multi-target not supported"
            )
        return VariableType.nll_loss(input, target, weight, reduction, ignore_index)
    if input.ndim == 4:
        # nll_loss2d_forward checks the target's rank; then its sizes (PyTorch's
        # message, unbalanced parenthesis included).
        if target.ndim == 3 and (
            tuple(target.shape) != (input.shape[0],) + tuple(input.shape[2:])
        ):
            raise RuntimeError(
                f"size mismatch (got input: {_sizes(input.shape)} , target: "
                f"{_sizes(target.shape)}"
            )
        return VariableType.nll_loss2d(input, target, weight, reduction, ignore_index)
    n, c = input.shape[0], input.shape[1]
    out_size = (n,) + tuple(input.shape[2:])
    if tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(
            f"Expected target size {_sizes(out_size)}, got {_sizes(target.shape)}"
        )
    input = VariableType.view(VariableType.contiguous(input), (n, c, 1, -1))
    target = VariableType.view(VariableType.contiguous(target), (n, 1, -1))
    out = VariableType.nll_loss2d(input, target, weight, reduction, ignore_index)
    return out if reduction != 0 else VariableType.view(out, out_size)


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """-w[t] * input[t] per position for log-probabilities `input` [C], [N, C] or
    [N, C, d1, ...] and class indices `target`; a mean divides by the total
    weight of the targets not ignored. NllLossBackward0 / NllLoss2DBackward0.

    >>> x = log_softmax(yg.tensor([[-1.0, 0.5, 2.0]], requires_grad=True), 1)
    >>> nll_loss(x, yg.tensor([2]))
    tensor(0.2413, grad_fn=<NllLossBackward0>)
    """
    enum = _reduction_enum(reduction, size_average, reduce)
    return _nll_loss_nd(input, target, weight, enum, ignore_index)


def _weight_along_classes(weight: Tensor, input: Tensor) -> Tensor:
    shape = [1] * input.ndim
    shape[_class_dim(input)] = weight.shape[0]
    return VariableType.view(weight, tuple(shape))


def _cross_entropy_probabilities(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
    label_smoothing: float,
) -> Tensor:
    """-sum(target * log_softmax(input)) over classes, reduced (a mean divides by
    the number of positions), as PyTorch's cross_entropy with probabilities."""
    class_dim = _class_dim(input)
    n_classes = input.shape[class_dim]
    log_p = VariableType.log_softmax(input, class_dim)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    product = VariableType.mul(log_p, target)
    if weight is not None:
        product = VariableType.mul(product, _weight_along_classes(weight, input))
    if reduction == 0:
        return VariableType.neg(VariableType.sum(product, [class_dim]))
    total = VariableType.neg(VariableType.sum(product))
    if reduction == 2:
        return total
    return _ops().div.Scalar(total, math.prod(input.shape) // n_classes)


def _cross_entropy_smoothed(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
    ignore_index: int,
    label_smoothing: float,
) -> Tensor:
    """(1 - eps) * nll_loss(log_softmax) + eps / C * (the loss against a uniform
    target), as PyTorch's cross_entropy with label smoothing."""
    class_dim = _class_dim(input)
    n_classes = input.shape[class_dim]
    log_p = VariableType.log_softmax(input, class_dim)
    nll = _nll_loss_nd(log_p, target, weight, reduction, ignore_index)
    ignored = np.asarray(target.numpy() == ignore_index)
    if weight is not None:
        weighted = VariableType.mul(log_p, _weight_along_classes(weight, input))
        smooth = VariableType.neg(VariableType.sum(weighted, [class_dim]))
    else:
        smooth = VariableType.neg(VariableType.sum(log_p, [class_dim]))
    smooth = VariableType.masked_fill_(smooth, Tensor._make(ignored), 0.0)
    if reduction == 1:
        if weight is not None:
            kept = target.numpy()[~ignored].reshape(-1)
            denominator = weight.detach().numpy()[kept].sum()
            denominator_t = Tensor._make(np.asarray(denominator, weight.numpy().dtype))
        else:
            denominator_t = Tensor._make(np.asarray((~ignored).sum()))
        smooth = VariableType.div(VariableType.sum(smooth), denominator_t)
    elif reduction == 2:
        smooth = VariableType.sum(smooth)
    return VariableType.add(
        _ops().mul.Scalar(nll, 1 - label_smoothing),
        _ops().mul.Scalar(smooth, label_smoothing / n_classes),
    )


# c10's ScalarType names, as PyTorch's messages print them.
_SCALAR_TYPE_NAMES = {
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
}


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """nll_loss of log_softmax(input) over the class dim (1, or 0 for a single
    sample), for class indices; or, when `target` has the input's shape, class
    probabilities. `label_smoothing` mixes in a uniform target.

    >>> x = yg.tensor([[-1.0, 0.5, 2.0]], requires_grad=True)
    >>> loss = cross_entropy(x, yg.tensor([2]))
    >>> loss.grad_fn.name(), loss.grad_fn.next_functions[0][0].name()
    ('NllLossBackward0', 'LogSoftmaxBackward0')
    """
    enum = _reduction_enum(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(
            f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
        )
    if tuple(input.shape) == tuple(target.shape):
        if not np.issubdtype(target._data.dtype, np.floating):
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, "
                f"got {_SCALAR_TYPE_NAMES.get(str(target._data.dtype), 'Long')}"
            )
        if ignore_index >= 0:
            raise RuntimeError(
                "ignore_index is not supported for floating point target"
            )
        return _cross_entropy_probabilities(
            input, target, weight, enum, label_smoothing
        )
    if label_smoothing > 0:
        return _cross_entropy_smoothed(
            input, target, weight, enum, ignore_index, label_smoothing
        )
    log_p = VariableType.log_softmax(input, _class_dim(input))
    return _nll_loss_nd(log_p, target, weight, enum, ignore_index)


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options: Any = None,
) -> Tensor:
    """cross_entropy of `linear(input, linear_weight, linear_bias)`.

    `linear_weight` is `(classes, *out_features, in_features)`: the logits are
    `(*batch, classes, *out_features)`, a K-dimensional loss. PyTorch's `options`
    choose a batch-chunked kernel that saves memory and gives the same loss;
    yamlgrad accepts them and computes the logits in one piece."""
    del options  # chunking changes memory use, not the value
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(
            f"expected input with dimensionality 1 or 2, got {input.dim()}"
        )
    if linear_weight.dim() < 2:
        raise RuntimeError(
            "expected linear_weight with dimensionality at least 2, got "
            f"{linear_weight.dim()}"
        )
    batch, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively"
        )
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (
        classes,
        *out_features,
    ):
        raise RuntimeError(
            f"expected linear_bias shape {(classes, *out_features)}, got "
            f"{tuple(linear_bias.shape)}"
        )
    if out_features and not batch:
        raise RuntimeError(
            "K-dimensional loss defined by linear_weight shape "
            f"{tuple(linear_weight.shape)} requires batched input, (N, {in_features}),"
            f" got unbatched input with shape {tuple(input.shape)}"
        )
    logits_shape = (*batch, classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError(
            "ignore_index cannot be specified when target contains probabilities"
        )
    rows = math.prod(out_features, start=classes)
    flat_weight = VariableType.reshape(linear_weight, (rows, in_features))
    if linear_bias is not None:
        linear_bias = VariableType.reshape(linear_bias, (rows,))
    logits = VariableType.linear(input, flat_weight, linear_bias)
    return cross_entropy(
        VariableType.reshape(logits, logits_shape),
        target,
        weight=weight,
        reduction=reduction,
        ignore_index=-100 if ignore_index is None else ignore_index,
        label_smoothing=label_smoothing,
    )


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """The pointwise KL divergence target * (log target - input) for
    log-probabilities `input` (`target` given as log-probabilities when
    `log_target`), reduced; "batchmean" divides the sum by the batch size. The
    ops are PyTorch's kl_div: xlogy, mul, sub (or exp, sub, mul), then mean/sum."""
    if size_average is not None or reduce is not None:
        enum = _reduction_enum("mean", size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and "
                "the support size.'batchmean' divides only by the batch size, and "
                "aligns with the KL div math definition.'mean' will be changed to "
                "behave the same as 'batchmean' in the next major release.",
                stacklevel=2,
            )
        enum = _reduction_enum("sum" if reduction == "batchmean" else reduction)
    reduced = kl_div_reduced(input, target, enum, log_target=log_target)
    if reduction == "batchmean" and input.ndim != 0:
        reduced = VariableType.div(reduced, input.shape[0])
    return reduced


def kl_div_reduced(
    input: Tensor, target: Tensor, reduction: int = 0, *, log_target: bool = False
) -> Tensor:
    """torch.kl_div: the pointwise divergence reduced by PyTorch's enum (0 none,
    the top-level binding's default; 1 mean over every element; 2 sum), without
    nn.functional's warning."""
    if log_target:
        pointwise = VariableType.mul(
            VariableType.exp(target), VariableType.sub(target, input)
        )
    else:
        pointwise = VariableType.sub(
            VariableType.xlogy(target, target), VariableType.mul(target, input)
        )
    return _apply_reduction(pointwise, reduction)


def normalize(
    input: Tensor,
    p: float = 2.0,
    dim: int = 1,
    eps: float = 1e-12,
    out: Tensor | None = None,
) -> Tensor:
    """input / max(||input||_p, eps) along `dim`, as PyTorch: vector norm
    (keepdim), clamp_min, expand_as, div.

    >>> normalize(yg.tensor([[3.0, 4.0]]))
    tensor([[0.6000, 0.8000]])
    """
    if out is not None:
        raise NotImplementedError("normalize(..., out=) is not supported")
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return VariableType.div(input, denom)


def cosine_similarity(
    x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8
) -> Tensor:
    """sum((x1 / ||x1||) * (x2 / ||x2||)) along `dim`, each norm clamped below at
    eps. As PyTorch: the norms are cloned and clamped in place without recording,
    so the gradient flows through the unclamped norms.

    >>> cosine_similarity(yg.tensor([[1.0, 0.0]]), yg.tensor([[1.0, 1.0]]))
    tensor([0.7071])
    """
    if tuple(x1.shape) != tuple(x2.shape):  # expand_outplace: both, or neither
        shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
        x1, x2 = VariableType.expand(x1, shape), VariableType.expand(x2, shape)
    n1 = VariableType.clone(VariableType.linalg_vector_norm(x1, 2, [dim], True))
    n2 = VariableType.clone(VariableType.linalg_vector_norm(x2, 2, [dim], True))
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    product = VariableType.mul(VariableType.div(x1, n1), VariableType.div(x2, n2))
    return VariableType.sum(product, [dim])


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """||x1 - x2 + eps||_p over the last dim, as PyTorch: sub, add (Scalar),
    norm (yamlgrad's norm records LinalgVectorNormBackward0 where PyTorch's
    at::norm records NormBackward1)."""
    innermost = max(x1.ndim, x2.ndim) - 1
    shifted = _ops().add.Scalar(VariableType.sub(x1, x2), eps)
    return _ops().norm.ScalarOpt_dim(shifted, p, [innermost], keepdim)


def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """log(1 + exp(-target * input)), reduced; SoftMarginLossBackward0.

    >>> soft_margin_loss(yg.tensor([0.0, 2.0]), yg.tensor([1.0, -1.0]))
    tensor(1.4100)
    """
    enum = _reduction_enum(reduction, size_average, reduce)
    return VariableType.soft_margin_loss(input, target, enum)


def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-class hinge loss: for each row, the sum over the other classes i
    of max(0, margin - x[y] + x[i]) ** p, over the number of classes.

    >>> multi_margin_loss(yg.tensor([[0.1, 0.2, 0.4]]), yg.tensor([2]))
    tensor(0.5000)
    """
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    enum = _reduction_enum(reduction, size_average, reduce)
    return VariableType.multi_margin_loss(input, target, p, margin, weight, enum)


def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-label hinge loss: `target` lists each row's classes (ended by
    -1); every listed class should beat every other by a margin of 1.

    >>> multilabel_margin_loss(yg.tensor([[0.1, 0.2, 0.4]]), yg.tensor([[2, -1, 0]]))
    tensor(0.5000)
    """
    enum = _reduction_enum(reduction, size_average, reduce)
    return VariableType.multilabel_margin_loss(input, target, enum)


def _lengths(lengths: Any, name: str) -> tuple[int, ...]:
    """input_lengths/target_lengths as ints: an int, a list, or a tensor of
    integers."""
    if isinstance(lengths, Tensor):
        if lengths.dtype.is_floating_point:
            raise RuntimeError(f"{name} must be integral")
        return tuple(int(n) for n in np.asarray(lengths.numpy()).reshape(-1))
    if isinstance(lengths, int):
        return (lengths,)
    return tuple(int(n) for n in lengths)


def ctc_loss_reduced(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: int = 1,
    zero_infinity: bool = False,
) -> Tensor:
    """torch.ctc_loss: F.ctc_loss with the reduction as PyTorch's enum (0 none,
    1 mean, 2 sum). CtcLossBackward0."""
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = VariableType.unsqueeze(log_probs, 1)
        targets = VariableType.unsqueeze(targets, 0)
    inputs_n = _lengths(input_lengths, "input_lengths")
    targets_n = _lengths(target_lengths, "target_lengths")
    loss = VariableType._ctc_loss(
        log_probs, targets, inputs_n, targets_n, blank, zero_infinity
    )[0]
    if zero_infinity:
        loss = VariableType.where(VariableType.eq(loss, math.inf), 0.0, loss)
    if reduction == 1:
        divisor = Tensor(
            np.array([max(n, 1) for n in targets_n], dtype=loss.detach().numpy().dtype)
        )
        return VariableType.mean(VariableType.div(loss, divisor))
    if reduction == 2:
        return VariableType.sum(loss)
    return VariableType.squeeze(loss, 0) if unbatched else loss


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """The connectionist temporal classification loss of log-probabilities
    `log_probs` [T, N, C] (or [T, C] unbatched) against `targets`, padded [N, S]
    or concatenated [sum(target_lengths)]; a mean divides each sample's loss by its
    target length, then averages. CtcLossBackward0.

    >>> lp = yg.randn(5, 1, 3).log_softmax(2)
    >>> ctc_loss(lp, yg.tensor([[1, 2]]), [5], [2]).shape
    ()
    """
    enum = _reduction_enum(reduction)
    return ctc_loss_reduced(
        log_probs, targets, input_lengths, target_lengths, blank, enum, zero_infinity
    )
