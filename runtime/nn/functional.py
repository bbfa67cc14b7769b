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
from yamlgrad.runtime import backend, factories
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.nn.ntuple import (
    AVG_POOL1D,
    IM2COL,
    MAX_POOL1D,
    ntuple,
    pooling,
    stride_arg,
)
from yamlgrad.runtime.ops.indexing import embedding_renorm_
from yamlgrad.runtime.nn.functional_convolutions import *  # noqa: F403
from yamlgrad.runtime.nn.functional_convolutions import __all__ as _convolutions
from yamlgrad.runtime.nn.functional_pooling import *  # noqa: F403
from yamlgrad.runtime.nn.functional_pooling import __all__ as _pooling
from yamlgrad.runtime.wrappers.randomness import different_batch

__all__ = [
    "pad",
    "interpolate",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",
    "pixel_shuffle",
    "pixel_unshuffle",
    "channel_shuffle",
    "native_channel_shuffle",
    "unfold",
    "fold",
    *_convolutions,
    "max_pool1d",
    "max_pool2d",
    "max_pool2d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool2d",
    *_pooling,
    "linear",
    "bilinear",
    "layer_norm",
    "batch_norm",
    "group_norm",
    "embedding",
    "dropout",
    "one_hot",
    "relu",
    "relu6",
    "hardtanh",
    "gelu",
    "silu",
    "mish",
    "softplus",
    "elu",
    "selu",
    "selu_",
    "celu",
    "celu_",
    "leaky_relu",
    "hardswish",
    "hardsigmoid",
    "logsigmoid",
    "softsign",
    "glu",
    "hardshrink",
    "softshrink",
    "threshold",
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
    "ctc_loss",
    "cross_entropy",
    "linear_cross_entropy",
    "kl_div",
    "normalize",
    "cosine_similarity",
    "pairwise_distance",
    "pdist",
    "soft_margin_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "scaled_dot_product_attention",
    "multi_head_attention_forward",
]

pad = VariableType.pad
pdist = VariableType.pdist  # torch.nn.functional.pdist is torch.pdist
pixel_shuffle = VariableType.pixel_shuffle
pixel_unshuffle = VariableType.pixel_unshuffle
channel_shuffle = VariableType.channel_shuffle
# native_channel_shuffle is channel_shuffle's kernel; here the two are one op.
native_channel_shuffle = channel_shuffle


# -- resampling ----------------------------------------------------------------------

# F.interpolate's modes: the upsample op of each rank.
_UPSAMPLE = {
    "nearest": {
        1: "upsample_nearest1d",
        2: "upsample_nearest2d",
        3: "upsample_nearest3d",
    },
    "nearest-exact": {
        1: "_upsample_nearest_exact1d",
        2: "_upsample_nearest_exact2d",
        3: "_upsample_nearest_exact3d",
    },
    "linear": {1: "upsample_linear1d"},
    "bilinear": {2: "upsample_bilinear2d"},
    "bicubic": {2: "upsample_bicubic2d"},
    "trilinear": {3: "upsample_trilinear3d"},
}


def _interpolate_size(
    input: Tensor, dim: int, size: Any, scale_factor: Any
) -> tuple[tuple[int, ...], tuple[float, ...] | None]:
    """The output size, and the scale factors the op is told (None when the size
    was given), as F.interpolate computes them."""
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = tuple(size) if isinstance(size, (list, tuple)) else (size,) * dim
        if len(sizes) != dim:
            raise ValueError(
                "Input and output must have the same number of spatial dimensions, "
                f"but got input with spatial dimensions of {list(input.shape[2:])} "
                f"and output size of {list(sizes)}. Please provide input tensor in "
                "(N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                "format."
            )
        return tuple(int(s) for s in sizes), None
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        scales = tuple(float(f) for f in scale_factor)
        if len(scales) != dim:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial "
                f"dimensions, but got input with spatial dimensions of "
                f"{list(input.shape[2:])} and scale_factor of shape "
                f"{list(scale_factor)}. Please provide input tensor in (N, C, d1, d2, "
                "...,dK) format and scale_factor in (s1, s2, ...,sK) format."
            )
    else:
        scales = (float(scale_factor),) * dim
    sizes = tuple(math.floor(float(n) * f) for n, f in zip(input.shape[2:], scales))
    return sizes, scales


def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resample the spatial dims of an (N, C, ...) input to `size`, or by
    `scale_factor`: nearest, linear, bilinear, bicubic or trilinear, each the
    upsample op of its rank (UpsampleBilinear2DBackward0 & co., as in PyTorch),
    or area, adaptive average pooling.

    >>> interpolate(yg.randn(1, 2, 3, 4), scale_factor=2, mode="bilinear").shape
    yamlgrad.Size([1, 2, 6, 8])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif mode not in _UPSAMPLE:
        raise NotImplementedError(
            f"interpolate: mode {mode!r} is not supported (nearest, nearest-exact, "
            "area, linear, bilinear, bicubic, trilinear)"
        )
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
            "and requires a 4-D tensor as input"
        )
    dim = input.ndim - 2
    if mode == "area":
        return _interpolate_area(input, dim, size, scale_factor)
    op = _UPSAMPLE[mode].get(dim)
    if op is None:
        wanted = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}.get(mode)
        if wanted is not None and dim in (1, 2, 3):
            raise NotImplementedError(
                f"Got {input.ndim}D input, but {mode} mode needs {wanted}D input"
            )
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
            f"{input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | "
            f"trilinear | area | nearest-exact (got {mode})"
        )
    output_size, scales = _interpolate_size(input, dim, size, scale_factor)
    if recompute_scale_factor or scales is None:
        scales = (None,) * dim
    upsample_op = getattr(VariableType, f"_{op}_aa" if antialias else op)
    if mode in ("nearest", "nearest-exact"):
        return upsample_op(input, output_size, *scales)
    return upsample_op(input, output_size, bool(align_corners), *scales)


def _interpolate_area(input: Tensor, dim: int, size: Any, scale_factor: Any) -> Tensor:
    """Mode 'area': each output element the mean of its window, which is
    adaptive average pooling to the output size."""
    pools = {1: adaptive_avg_pool1d, 2: adaptive_avg_pool2d, 3: adaptive_avg_pool3d}
    if dim not in pools:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
            f"{input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | "
            "trilinear | area | nearest-exact (got area)"
        )
    output_size, _ = _interpolate_size(input, dim, size, scale_factor)
    return pools[dim](input, output_size)


def upsample(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """The older name of interpolate."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(
    input: Tensor, size: Any = None, scale_factor: Any = None
) -> Tensor:
    """Deprecated: interpolate(..., mode="nearest")."""
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use "
        "`nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(
    input: Tensor, size: Any = None, scale_factor: Any = None
) -> Tensor:
    """Deprecated: interpolate(..., mode="bilinear", align_corners=True)."""
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use "
        "`nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def unfold(
    input: Tensor,
    kernel_size: Any,
    dilation: Any = 1,
    padding: Any = 0,
    stride: Any = 1,
) -> Tensor:
    """Every sliding block of an (N, C, H, W) input as a column: (N, C kh kw, L).
    Records Im2ColBackward0."""
    return VariableType.im2col(
        input,
        ntuple(kernel_size, 2, "kernel_size", IM2COL),
        ntuple(dilation, 2, "dilation", IM2COL),
        ntuple(padding, 2, "padding", IM2COL),
        ntuple(stride, 2, "stride", IM2COL),
    )


def fold(
    input: Tensor,
    output_size: Any,
    kernel_size: Any,
    dilation: Any = 1,
    padding: Any = 0,
    stride: Any = 1,
) -> Tensor:
    """The columns of unfold summed back into an (N, C, H, W) output (overlaps
    add). Records Col2ImBackward0."""
    return VariableType.col2im(
        input,
        ntuple(output_size, 2, "output_size", IM2COL),
        ntuple(kernel_size, 2, "kernel_size", IM2COL),
        ntuple(dilation, 2, "dilation", IM2COL),
        ntuple(padding, 2, "padding", IM2COL),
        ntuple(stride, 2, "stride", IM2COL),
    )


# -- convolution and pooling ---------------------------------------------------------


_MAX_POOL2D = pooling("max_pool2d", "two")
_AVG_POOL2D = pooling("avg_pool2d", "two")


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
    errors = _MAX_POOL2D
    kernel = ntuple(kernel_size, 2, "kernel_size", errors)
    stride = stride_arg(stride, 2, errors)
    args = (
        kernel,
        stride,
        ntuple(padding, 2, "padding", errors),
        ntuple(dilation, 2, "dilation", errors),
    )
    if return_indices:
        return tuple(VariableType.max_pool2d_with_indices(input, *args, ceil_mode))
    return VariableType.max_pool2d(input, *args, ceil_mode)


def max_pool2d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """max_pool2d's values and indices, whatever `return_indices` says (PyTorch's
    spelling keeps the argument)."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


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
    errors = MAX_POOL1D
    kernel = ntuple(kernel_size, 1, "kernel_size", errors)
    stride = () if stride is None else (1,) + ntuple(stride, 1, "stride", errors)
    values, indices = VariableType.max_pool2d_with_indices(
        VariableType.unsqueeze(input, -2),
        (1,) + kernel,
        stride,
        (0,) + ntuple(padding, 1, "padding", errors),
        (1,) + ntuple(dilation, 1, "dilation", errors),
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
    errors = _AVG_POOL2D
    kernel = ntuple(kernel_size, 2, "kernel_size", errors)
    stride = stride_arg(stride, 2, errors)
    return VariableType.avg_pool2d(
        input,
        kernel,
        stride,
        ntuple(padding, 2, "padding", errors),
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
    kernel = ntuple(kernel_size, 1, "kernel_size", AVG_POOL1D)
    stride = kernel if stride is None else ntuple(stride, 1, "stride", AVG_POOL1D)
    out = VariableType.avg_pool2d(
        VariableType.unsqueeze(input, -2),
        (1,) + kernel,
        (1,) + stride,
        (0,) + ntuple(padding, 1, "padding", AVG_POOL1D),
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
    if input.numel() == 0:
        # An empty input has no statistics to take nor running ones to update,
        # whatever its channel count: its output is a copy (still in the graph),
        # scaled and shifted by the first weight and bias.
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
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
    embedding_renorm_(weight._data, input._data, max_norm, norm_type)
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
    if different_batch() is not None:  # vmap(randomness="different"): a mask each
        draw = factories.rand(*input.shape, dtype=input.dtype)
        keep = VariableType._to_copy(VariableType.lt(draw, 1.0 - p), dtype=input.dtype)
        mask = VariableType.div(keep, 1.0 - p)
        return input.mul_(mask) if inplace else VariableType.mul(input, mask)
    dtype = input.dtype.np
    if p == 1.0:
        noise = np.zeros((), dtype=dtype)
    else:
        keep = factories._rng(None).random(input.shape) < 1.0 - p
        noise = (keep / (1.0 - p)).astype(dtype)
    if backend.is_foreign(input._data):  # the draw (numpy's) on input's backend
        noise = backend.like(noise, input._data)
    mask = Tensor._make(noise)
    if inplace:
        return input.mul_(mask)
    return VariableType.mul(input, mask)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 rows of zeros with a 1 at each index of `tensor` (an int64 tensor);
    `num_classes=-1` is its largest value plus one. Not differentiable.

    >>> one_hot(yg.tensor([0, 2]), 3)
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    return VariableType.one_hot(tensor, num_classes)


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


def selu_(input: Tensor) -> Tensor:
    """`selu(input, inplace=True)` (torch.selu_ is this function)."""
    return selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """`celu(input, alpha, inplace=True)` (torch.celu_ is this function)."""
    return celu(input, alpha, inplace=True)


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


glu = VariableType.glu
hardshrink = VariableType.hardshrink
softshrink = VariableType.softshrink


def threshold(
    input: Tensor, threshold: float, value: float, inplace: bool = False
) -> Tensor:
    """`value` where input <= threshold, else input (ThresholdBackward0, or
    ThresholdBackward1 in place)."""
    if inplace:
        return VariableType.threshold_(input, threshold, value)
    return VariableType.threshold(input, threshold, value)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), computed as -softplus(-x); LogSigmoidBackward0."""
    return VariableType.log_sigmoid(input)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|), PyTorch's composite of recorded ops (DivBackward0)."""
    return input / (input.abs() + 1)


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


# The losses and distances live in functional_losses.py; they are this module's
# public names all the same (`_legacy_reduction` is nn/loss.py's, `_sizes` shared).
from yamlgrad.runtime.nn.functional_losses import (  # noqa: E402
    _legacy_reduction,
    _sizes,
    mse_loss,
    l1_loss,
    smooth_l1_loss,
    huber_loss,
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    nll_loss,
    ctc_loss,
    cross_entropy,
    linear_cross_entropy,
    kl_div,
    normalize,
    cosine_similarity,
    pairwise_distance,
    soft_margin_loss,
    multi_margin_loss,
    multilabel_margin_loss,
)
from yamlgrad.runtime.nn.functional_metric_losses import *  # noqa: E402, F403
from yamlgrad.runtime.nn.functional_metric_losses import (  # noqa: E402
    __all__ as _metric_losses,
)

__all__ += _metric_losses
from yamlgrad.runtime.nn.functional_layers import *  # noqa: E402, F403
from yamlgrad.runtime.nn.functional_layers import __all__ as _layers  # noqa: E402
from yamlgrad.runtime.nn.functional_activations import *  # noqa: E402, F403
from yamlgrad.runtime.nn.functional_activations import (  # noqa: E402
    __all__ as _activations,
)

__all__ += _layers + _activations

# Attention lives in attention.py (also PyTorch's torch.nn.attention).
from yamlgrad.runtime.nn.attention import (  # noqa: E402
    multi_head_attention_forward,
    scaled_dot_product_attention,
)
