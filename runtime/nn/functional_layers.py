"""`yg.nn.functional`'s bags of embeddings, instance, RMS and local response
normalisation, and the channel-wise and alpha dropouts (re-exported there).

Each does PyTorch's argument handling and reaches what PyTorch reaches:
embedding_bag the `_embedding_bag` entry (EmbeddingBagBackward0), instance_norm
and rms_norm their composite entries, local_response_norm PyTorch's Python
composite (pad, avg_pool, pow, div). The dropouts draw their masks from
yamlgrad's default generator (torch's streams are not reproduced) and apply
them as ATen's `_dropout_impl` does: a multiplication (MulBackward0), plus a
constant for the alpha dropouts (AddBackward0).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from yamlgrad.generated import VariableType
from yamlgrad.runtime import backend, dtypes, factories
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.nn import functional as F

__all__ = [
    "embedding_bag",
    "instance_norm",
    "rms_norm",
    "local_response_norm",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    "feature_alpha_dropout",
]

_MODES = {"sum": 0, "mean": 1, "max": 2}


def _bags(
    input: Tensor,
    offsets: Tensor | None,
    per_sample_weights: Tensor | None,
    include_last_offset: bool,
) -> tuple[Tensor, Tensor, Tensor | None, bool]:
    """A 2-d input as 1-d indices with an offset per row, or a 1-d one checked."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is "
                "a mini-batch of fixed length sequences. However, found offsets of "
                f"type {type(offsets)}"
            )
        offsets = factories.arange(0, input.numel(), input.shape[1], dtype=input.dtype)
        include_last_offset = False
        input = VariableType.reshape(input, (-1,))
        if per_sample_weights is not None:
            per_sample_weights = VariableType.reshape(per_sample_weights, (-1,))
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}"
        )
    return input, offsets, per_sample_weights, include_last_offset


def _padding_index(padding_idx: int | None, num: int) -> int:
    """at::embedding_bag's padding_idx: wrapped, or -1 for none."""
    if padding_idx is None:
        return -1
    if not -num <= padding_idx < num:
        raise RuntimeError(
            f"padding_idx must be within the number of embeddings, -{num} through "
            f"{num - 1}, but got {padding_idx}"
        )
    return padding_idx + num if padding_idx < 0 else padding_idx


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """The sum, mean or max of each bag of `weight`'s rows: a 2-d `input` is one
    bag per row; a 1-d one is cut into bags at `offsets`. `per_sample_weights`
    weighs each index (sum only); `padding_idx`'s rows are left out.

    >>> embedding_bag(yg.tensor([[0, 1]]), yg.eye(3), mode="sum")
    tensor([[1., 1., 0.]])
    """
    if weight.dtype == dtypes.int64 and input.is_floating_point():
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage "
            "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
            "`embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(
        per_sample_weights.shape
    ):
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
            f"not None, then it must have the same shape as the input ({input.shape})"
        )
    if weight.ndim != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}"
        )
    input, offsets, per_sample_weights, include_last_offset = _bags(
        input, offsets, per_sample_weights, include_last_offset
    )
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError(
            "max mode does not support scaling the gradient by the frequency"
        )
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        F._embedding_renorm(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is "
            f"only supported for mode='sum' (got mode='{mode}'). Please open a "
            "feature request on GitHub."
        )
    padding_idx = _padding_index(padding_idx, weight.shape[0])
    if offsets.dtype != input.dtype:  # PyTorch's promoteIndicesAndOffsets
        wider = dtypes.int64
        input, offsets = input.to(wider), offsets.to(wider)
    return VariableType._embedding_bag(
        weight,
        input,
        offsets,
        scale_grad_by_freq,
        _MODES[mode],
        sparse,
        per_sample_weights,
        include_last_offset,
        padding_idx,
    )[0]


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Standardise each channel of each sample over its spatial dims (batch norm
    of the input viewed as one batch of N * C channels: NativeBatchNormBackward0
    between two ViewBackward0, as in PyTorch)."""
    if use_input_stats:
        spatial = math.prod(input.shape[2:])
        if spatial == 1:
            raise ValueError(
                "Expected more than 1 spatial element when training, got input size "
                f"{list(input.shape)}"
            )
    return VariableType.instance_norm(
        input, weight, bias, running_mean, running_var, use_input_stats, momentum,
        eps, False,
    )  # fmt: skip


def rms_norm(
    input: Tensor,
    normalized_shape: Any,
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """x / sqrt(mean(x^2) + eps) over the trailing `normalized_shape` dims, times
    `weight` (eps defaults to the dtype's machine epsilon).

    >>> rms_norm(yg.tensor([[3.0, 4.0]]), (2,), eps=0.0)
    tensor([[0.8485, 1.1314]])
    """
    if isinstance(normalized_shape, (int, np.integer)):
        normalized_shape = (int(normalized_shape),)
    return VariableType.rms_norm(input, tuple(normalized_shape), weight, eps)


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels) ** beta,
    PyTorch's composite: the squares padded along the channels and averaged with
    avg_pool2d (3-d input) or avg_pool3d."""
    dim = input.ndim
    if dim < 3:
        raise ValueError(
            "Expected 3D or higher dimensionality                          input "
            f"(got {dim} dimensions)"
        )
    if input.numel() == 0:
        return input
    div = VariableType.mul(input, input)
    if dim == 3:
        div = VariableType.unsqueeze(div, 1)
        div = F.pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = VariableType.squeeze(F.avg_pool2d(div, (size, 1), stride=1), 1)
    else:
        sizes = tuple(input.shape)
        div = VariableType.view(div, (sizes[0], 1, sizes[1], sizes[2], -1))
        div = F.pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = VariableType.squeeze(F.avg_pool3d(div, (size, 1, 1), stride=1), 1)
        div = VariableType.view(div, sizes)
    div = VariableType.pow(VariableType.add(VariableType.mul(div, alpha), k), beta)
    return VariableType.div(input, div)


# -- dropout variants: ATen's _dropout_impl ------------------------------------------

_ALPHA = 1.7580993408473766  # SELU's alpha * scale, ATen's constant


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_impl(
    input: Tensor, p: float, train: bool, feature: bool, alpha: bool, inplace: bool
) -> Tensor:
    """ATen's _dropout_impl: a keep mask with probability 1 - p (one per channel
    of each sample for the feature forms), scaled by 1 / (1 - p); the alpha
    forms instead map dropped elements to SELU's saturation value and rescale
    so that mean and variance are kept."""
    if p == 0 or not train or input.numel() == 0:
        return input
    if feature and input.ndim < 2:
        raise RuntimeError(
            "Feature dropout requires at least 2 dimensions in the input"
        )
    dtype = input.dtype.np
    if p == 1:
        zeros = Tensor._make(np.zeros((), dtype=dtype))
        return input.mul_(zeros) if inplace else VariableType.mul(input, zeros)
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else input.shape
    keep = (factories._rng(None).random(shape) < 1.0 - p).astype(dtype)
    if alpha:
        a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        shift = ((keep - 1) * (_ALPHA * a) + _ALPHA * a * p).astype(dtype)
        noise = (keep * a).astype(dtype)
    else:
        noise = (keep / (1.0 - p)).astype(dtype)
    if backend.is_foreign(input._data):
        noise = backend.like(noise, input._data)
    out = (
        input.mul_(Tensor._make(noise))
        if inplace
        else VariableType.mul(input, Tensor._make(noise))
    )
    if not alpha:
        return out
    shift_t = Tensor._make(shift)
    return out.add_(shift_t) if inplace else VariableType.add(out, shift_t)


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of an (N, C, L) or (C, L) input with probability p."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with "
            "1 spatial dimension, a channel dimension, and an optional batch "
            "dimension (i.e. 2D or 3D inputs)."
        )
    batched = input.ndim == 3
    if not batched:
        input = VariableType.unsqueeze(input, 0)  # a view: in place writes input
    result = _dropout_impl(input, p, training, True, False, inplace)
    if not batched:
        result = VariableType.squeeze(result, 0)
    return result


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of an (N, C, H, W) input with probability p (a 3-d
    input is taken as (N, C, L), with PyTorch's warning)."""
    _check_p(p)
    dim = input.ndim
    if dim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {dim}-D input to dropout2d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that "
            "dropout2d exists to provide channel-wise dropout on inputs with 2 "
            "spatial dimensions, a channel dimension, and an optional batch "
            "dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if dim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that "
            "channel-wise 1D dropout behavior is desired - input is interpreted as "
            "shape (N, C, L), where C is the channel dim. This behavior will change "
            "in a future release to interpret the input as one without a batch "
            "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
            "dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _dropout_impl(input, p, training, True, False, inplace)


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of an (N, C, D, H, W) or (C, D, H, W) input with
    probability p."""
    _check_p(p)
    dim = input.ndim
    if dim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {dim}-D input to dropout3d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that "
            "dropout3d exists to provide channel-wise dropout on inputs with 3 "
            "spatial dimensions, a channel dimension, and an optional batch "
            "dimension (i.e. 4D or 5D inputs).",
            stacklevel=2,
        )
    batched = dim == 5
    if not batched:
        input = VariableType.unsqueeze(input, 0)  # a view: in place writes input
    result = _dropout_impl(input, p, training, True, False, inplace)
    if not batched:
        result = VariableType.squeeze(result, 0)
    return result


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Dropout for SELU networks: dropped elements take SELU's negative
    saturation value, and the result is rescaled to keep mean and variance."""
    _check_p(p)
    return _dropout_impl(input, p, training, False, True, inplace)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """alpha_dropout of whole channels."""
    _check_p(p)
    return _dropout_impl(input, p, training, True, True, inplace)
