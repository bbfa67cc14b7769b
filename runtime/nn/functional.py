"""`yg.nn.functional`: `torch.nn.functional`'s names for yamlgrad's ops.

Every function here is a generated wrapper (generated/VariableType.py) or a small
composite of them, so each records the node PyTorch records: `pad(x, (1, 1))` is
constant padding and records ConstantPadNdBackward0, as in PyTorch.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from yamlgrad.generated import VariableType
from yamlgrad.runtime import factories
from yamlgrad.runtime.autograd.grad_mode import no_grad
from yamlgrad.runtime.autograd.tensor import Tensor

__all__ = [
    "pad",
    "conv1d",
    "conv2d",
    "conv_transpose2d",
    "max_pool1d",
    "max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool2d",
    "linear",
    "bilinear",
    "layer_norm",
    "batch_norm",
    "group_norm",
    "embedding",
    "dropout",
    "relu",
    "relu6",
    "hardtanh",
    "gelu",
    "silu",
    "mish",
    "softplus",
    "elu",
    "selu",
    "celu",
    "leaky_relu",
    "hardswish",
    "hardsigmoid",
    "logsigmoid",
    "sigmoid",
    "tanh",
    "softmax",
    "log_softmax",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "nll_loss",
    "cross_entropy",
    "kl_div",
    "normalize",
    "cosine_similarity",
    "pairwise_distance",
]

pad = VariableType.pad


# -- convolution and pooling ---------------------------------------------------------


def _tuple(value: Any, n: int, name: str = "") -> tuple[int, ...]:
    """An int or a sequence of n ints (PyTorch's `_pair`), as a tuple."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * n
    values = tuple(int(v) for v in value)
    if len(values) == 1:
        return values * n
    if len(values) != n:
        raise RuntimeError(
            f"expected {name or 'argument'} to be a single integer value or a list "
            f"of {n} values to match the convolution dimensions, but got "
            f"{name or 'argument'}={list(values)}"
        )
    return values


def _sizes(shape: Any) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _conv_nd(
    name: str,
    spatial: int,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> Tensor:
    """conv1d/conv2d as at::conv{1,2}d: an unbatched input gets a batch dim of 1
    (squeezed off after: SqueezeBackward1); padding may be "valid" or "same"
    (stride 1 only; an odd total padding pads the input's end first, with
    constant_pad_nd, as PyTorch's _convolution_mode)."""
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input "
            f"to {name}, but got input of size: {_sizes(input.shape)}"
        )
    batched = input.ndim == spatial + 2
    if not batched:
        input = VariableType.unsqueeze(input, 0)
    stride = _tuple(stride, spatial, "stride")
    dilation = _tuple(dilation, spatial, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * spatial
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError(
                    "padding='same' is not supported for strided convolutions"
                )
            total = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
            left = [t // 2 for t in total]
            if any(t - lo != lo for t, lo in zip(total, left)):
                pad_nd: list[int] = []
                for i in reversed(range(spatial)):  # F.pad's order: last dim first
                    pad_nd += [0, total[i] - 2 * left[i]]
                input = VariableType.constant_pad_nd(input, pad_nd, 0)
            padding = tuple(left)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _tuple(padding, spatial, "padding")
    out = VariableType.convolution(
        input, weight, bias, stride, padding, dilation, False, (0,) * spatial, groups
    )
    return out if batched else VariableType.squeeze(out, 0)


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """1-d cross-correlation of `input` [N, C_in, L] with `weight`
    [C_out, C_in / groups, k]; records ConvolutionBackward0.

    >>> conv1d(yg.randn(1, 2, 5), yg.randn(3, 2, 3), padding="same").shape
    yamlgrad.Size([1, 3, 5])
    """
    return _conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """2-d cross-correlation of `input` [N, C_in, H, W] with `weight`
    [C_out, C_in / groups, kH, kW]; records ConvolutionBackward0.

    >>> conv2d(yg.randn(1, 3, 8, 8), yg.randn(4, 3, 3, 3), stride=2).shape
    yamlgrad.Size([1, 4, 3, 3])
    """
    return _conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """The transpose (adjoint) of conv2d, `weight` [C_in, C_out / groups, kH, kW];
    records ConvolutionBackward0.

    >>> conv_transpose2d(yg.randn(1, 4, 3, 3), yg.randn(4, 2, 3, 3), stride=2).shape
    yamlgrad.Size([1, 2, 7, 7])
    """
    if input.ndim not in (3, 4):
        raise RuntimeError(
            "Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but "
            f"got input of size: {_sizes(input.shape)}"
        )
    batched = input.ndim == 4
    if not batched:
        input = VariableType.unsqueeze(input, 0)
    out = VariableType.convolution(
        input,
        weight,
        bias,
        _tuple(stride, 2, "stride"),
        _tuple(padding, 2, "padding"),
        _tuple(dilation, 2, "dilation"),
        True,
        _tuple(output_padding, 2, "output_padding"),
        groups,
    )
    return out if batched else VariableType.squeeze(out, 0)


def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """The largest value of each window (stride defaults to the kernel size);
    with `return_indices`, also its flat position in the input plane.
    Records MaxPool2DWithIndicesBackward0.

    >>> max_pool2d(yg.randn(1, 1, 4, 4), 2).shape
    yamlgrad.Size([1, 1, 2, 2])
    """
    stride = () if stride is None else _tuple(stride, 2, "stride")
    args = (_tuple(kernel_size, 2), stride, _tuple(padding, 2), _tuple(dilation, 2))
    if return_indices:
        return tuple(VariableType.max_pool2d_with_indices(input, *args, ceil_mode))
    return VariableType.max_pool2d(input, *args, ceil_mode)


def max_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """max_pool2d over a unit height, as PyTorch's max_pool1d: unsqueeze, pool,
    squeeze (SqueezeBackward1)."""
    if input.ndim not in (2, 3):
        raise RuntimeError(
            "max_pool1d() Expected 2D or 3D input tensor, but got "
            f"{_sizes(input.shape)}"
        )
    stride = () if stride is None else (1,) + _tuple(stride, 1)
    values, indices = VariableType.max_pool2d_with_indices(
        VariableType.unsqueeze(input, -2),
        (1,) + _tuple(kernel_size, 1),
        stride,
        (0,) + _tuple(padding, 1),
        (1,) + _tuple(dilation, 1),
        ceil_mode,
    )
    values = VariableType.squeeze(values, -2)
    if return_indices:
        return values, VariableType.squeeze(indices, -2)
    return values


def avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """The mean of each window (stride defaults to the kernel size); records
    AvgPool2DBackward0.

    >>> avg_pool2d(yg.ones(1, 1, 4, 4), 2).shape
    yamlgrad.Size([1, 1, 2, 2])
    """
    stride = () if stride is None else _tuple(stride, 2, "stride")
    return VariableType.avg_pool2d(
        input,
        _tuple(kernel_size, 2),
        stride,
        _tuple(padding, 2),
        ceil_mode,
        count_include_pad,
        divisor_override,
    )


def avg_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """avg_pool2d over a unit height, as PyTorch's avg_pool1d (SqueezeBackward1)."""
    if input.ndim not in (2, 3):
        raise RuntimeError(
            "avg_pool1d() Expected 2D or 3D input tensor, but got "
            f"{_sizes(input.shape)}"
        )
    stride = (1,) + (_tuple(kernel_size, 1) if stride is None else _tuple(stride, 1))
    out = VariableType.avg_pool2d(
        VariableType.unsqueeze(input, -2),
        (1,) + _tuple(kernel_size, 1),
        stride,
        (0,) + _tuple(padding, 1),
        ceil_mode,
        count_include_pad,
        None,
    )
    return VariableType.squeeze(out, -2)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a given output size (None keeps that input size). An
    output of 1x1 is a mean over the plane (MeanBackward1), as in PyTorch;
    otherwise AdaptiveAvgPool2DBackward0.

    >>> adaptive_avg_pool2d(yg.randn(1, 3, 7, 5), (2, 2)).shape
    yamlgrad.Size([1, 3, 2, 2])
    """
    if isinstance(output_size, (int, np.integer)) or output_size is None:
        output_size = (output_size, output_size)
    size = tuple(
        input.shape[-2 + i] if s is None else int(s) for i, s in enumerate(output_size)
    )
    if size == (1, 1):
        return VariableType.mean(input, (-1, -2), True)
    return VariableType._adaptive_avg_pool2d(input, size)


# -- linear, normalisation, embedding, dropout ---------------------------------------

linear = VariableType.linear
bilinear = VariableType.bilinear


def layer_norm(
    input: Tensor,
    normalized_shape: Any,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Standardise over the trailing `normalized_shape` dims, then scale and shift;
    records NativeLayerNormBackward0."""
    if isinstance(normalized_shape, (int, np.integer)):
        raise TypeError(
            "layer_norm(): argument 'normalized_shape' (position 2) must be tuple of "
            f"ints, not {type(normalized_shape).__name__}"
        )
    shape = tuple(int(s) for s in normalized_shape)
    return VariableType.native_layer_norm(input, shape, weight, bias, eps)[0]


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Standardise each channel (dim 1). In training, by the batch's statistics,
    updating `running_mean`/`running_var` in place with `momentum` (the unbiased
    variance); in evaluation, by the running ones. Records NativeBatchNormBackward0.
    """
    if training:
        count = input.shape[0]
        for size in input.shape[2:]:
            count *= size
        if count == 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, got input "
                f"size torch.Size({list(input.shape)})"
            )
    return VariableType.native_batch_norm(
        input, weight, bias, running_mean, running_var, training, momentum, eps
    )[0]


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Standardise each group of `num_groups` channel groups per sample; records
    NativeGroupNormBackward0."""
    if input.ndim < 2 or input.shape[1] % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but "
            f"got input of shape {_sizes(input.shape)} and num_groups={num_groups}"
        )
    n, c = input.shape[0], input.shape[1]
    hxw = 1
    for size in input.shape[2:]:
        hxw *= size
    return VariableType.native_group_norm(
        input, weight, bias, n, c, hxw, num_groups, eps
    )[0]


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of `weight` picked by the integer `input`; records EmbeddingBackward0.
    `padding_idx`'s row gets no gradient; `max_norm` first rescales, in place and
    without recording, each picked row whose norm exceeds it (as PyTorch's
    embedding_renorm_). The gradient is always dense (`sparse` is accepted for
    PyTorch's signature)."""
    num = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            if padding_idx < -num:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx += num
    else:
        padding_idx = -1
    if max_norm is not None:
        _embedding_renorm(weight, input, max_norm, norm_type)
    return VariableType.embedding(
        weight, input, padding_idx, scale_grad_by_freq, sparse
    )


def _embedding_renorm(
    weight: Tensor, input: Tensor, max_norm: float, norm_type: float
) -> None:
    rows = np.unique(np.asarray(input._data).reshape(-1))
    data = weight._data
    norms = np.linalg.norm(data[rows], ord=norm_type, axis=1)
    scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    data[rows] = data[rows] * scale[:, None].astype(data.dtype)
    weight.version_counter.bump()


def dropout(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero each element with probability `p` and scale the rest by 1 / (1 - p),
    with a mask drawn from yamlgrad's default generator; records MulBackward0 as
    PyTorch does on CPU. Identity (the input itself) when not training or p == 0.

    >>> dropout(yg.ones(4), p=0.0).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    dtype = input._data.dtype
    if p == 1.0:
        noise = np.zeros((), dtype=dtype)
    else:
        keep = factories._rng(None).random(input.shape) < 1.0 - p
        noise = (keep / (1.0 - p)).astype(dtype)
    mask = Tensor._make(noise)
    if inplace:
        return input.mul_(mask)
    return VariableType.mul(input, mask)


# -- activations and softmax ---------------------------------------------------------
# One YAML op each, so each records PyTorch's node; `inplace=True` calls the in-place
# op (relu_, leaky_relu_, ...), which records what PyTorch's in-place form records.


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0); ReluBackward0.

    >>> relu(yg.tensor([[-1.0, 0.5, 2.0]], requires_grad=True))
    tensor([[0.0000, 0.5000, 2.0000]], grad_fn=<ReluBackward0>)
    """
    return VariableType.relu_(input) if inplace else VariableType.relu(input)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6): hardtanh(x, 0, 6), so HardtanhBackward0 as in PyTorch."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """x clamped to [min_val, max_val]; HardtanhBackward0."""
    if inplace:
        return VariableType.hardtanh_(input, min_val, max_val)
    return VariableType.hardtanh(input, min_val, max_val)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x) ("none": the normal CDF by erf; "tanh": its tanh approximation)."""
    return VariableType.gelu(input, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x); SiluBackward0."""
    return VariableType.silu_(input) if inplace else VariableType.silu(input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x)); MishBackward0."""
    return VariableType.mish_(input) if inplace else VariableType.mish(input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta * x)) / beta, linear where beta * x > threshold."""
    return VariableType.softplus(input, beta, threshold)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, else alpha * (exp(x) - 1); EluBackward0 (EluBackward1 in place)."""
    if inplace:
        return VariableType.elu_(input, alpha)
    return VariableType.elu(input, alpha)


_SELU_ALPHA = 1.6732632423543772
_SELU_SCALE = 1.0507009873554805


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with the self-normalising constants; records
    EluBackward0 (EluBackward1 in place), as PyTorch's selu calls elu."""
    if inplace:
        return VariableType.elu_(input, _SELU_ALPHA, _SELU_SCALE)
    return VariableType.selu(input)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); CeluBackward0."""
    if inplace:
        return VariableType.celu_(input, alpha)
    return VariableType.celu(input, alpha)


def leaky_relu(
    input: Tensor, negative_slope: float = 0.01, inplace: bool = False
) -> Tensor:
    """x for x > 0, else negative_slope * x; LeakyReluBackward0.

    >>> leaky_relu(yg.tensor([[-1.0, 0.5, 2.0]], requires_grad=True), 0.1)
    tensor([[-0.1000,  0.5000,  2.0000]], grad_fn=<LeakyReluBackward0>)
    """
    if inplace:
        return VariableType.leaky_relu_(input, negative_slope)
    return VariableType.leaky_relu(input, negative_slope)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6; HardswishBackward0."""
    return VariableType.hardswish_(input) if inplace else VariableType.hardswish(input)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6; HardsigmoidBackward0."""
    if inplace:
        return VariableType.hardsigmoid_(input)
    return VariableType.hardsigmoid(input)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), computed as -softplus(-x); LogSigmoidBackward0."""
    return VariableType.log_sigmoid(input)


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-x)); SigmoidBackward0."""
    return VariableType.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """tanh(x); TanhBackward0."""
    return VariableType.tanh(input)


def _softmax_dim(name: str, ndim: int) -> int:
    """PyTorch's implicit dim (deprecated): 0 for 0-, 1- and 3-d inputs, else 1."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call "
        "to include dim=X as an argument.",
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim` (the input cast to `dtype` first, when
    given: ToCopyBackward0 then SoftmaxBackward0).

    >>> softmax(yg.tensor([[-1.0, 0.5, 2.0]]), dim=1).sum(1)
    tensor([1.])
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim)
    return VariableType.softmax(input, dim, dtype)


def log_softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """x - logsumexp(x) along `dim`; LogSoftmaxBackward0."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim)
    return VariableType.log_softmax(input, dim, dtype)


# -- distances and losses ------------------------------------------------------------
# Where PyTorch has a loss op (mse_loss, nll_loss, ...) it is a YAML entry; where it
# decomposes the loss (l1_loss, kl_div, cross_entropy, the distances) the same ops
# are called here in the same order, so the recorded nodes are PyTorch's.

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
    """torch.broadcast_tensors: an operand already of the common shape is kept."""
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
        if not np.issubdtype(target.numpy().dtype, np.floating):
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, "
                f"got {_SCALAR_TYPE_NAMES.get(str(target.numpy().dtype), 'Long')}"
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
    if log_target:
        pointwise = VariableType.mul(
            VariableType.exp(target), VariableType.sub(target, input)
        )
    else:
        pointwise = VariableType.sub(
            VariableType.xlogy(target, target), VariableType.mul(target, input)
        )
    reduced = _apply_reduction(pointwise, enum)
    if reduction == "batchmean" and input.ndim != 0:
        reduced = VariableType.div(reduced, input.shape[0])
    return reduced


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
