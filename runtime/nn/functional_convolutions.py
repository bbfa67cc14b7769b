"""`yg.nn.functional`'s convolutions (re-exported there): conv1d/2d/3d and
conv_transpose1d/2d/3d, with PyTorch's argument handling (unbatched inputs,
"same"/"valid" padding, per-dim sizes), each reaching the convolution entry
(ConvolutionBackward0), as at::conv{1,2,3}d and at::conv_transpose{1,2,3}d do.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.generated import VariableType
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.nn.functional_losses import _sizes
from yamlgrad.runtime.nn.ntuple import CONVOLUTION, ntuple
from yamlgrad.runtime.ops.convolutions import check_weight_and_groups, same_padding
from yamlgrad.runtime.wrappers.variable_type_utils import int_list_arg

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
]


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
    constant_pad_nd, as PyTorch's _convolution_mode), each path with PyTorch's
    checks in its order."""
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input "
            f"to {name}, but got input of size: {_sizes(input.shape)}"
        )
    batched = input.ndim == spatial + 2
    if not batched:
        input = VariableType.unsqueeze(input, 0)
    dims = weight.ndim - 2  # at::_convolution checks the lengths against the weight
    if isinstance(padding, str):
        if padding == "same":
            stride, dilation = (
                ntuple(v, spatial, as_given=True) for v in (stride, dilation)
            )
            pad_nd, padding = same_padding(
                input.shape, weight.shape, stride, dilation, groups
            )
            if pad_nd is not None:
                input = VariableType.constant_pad_nd(input, pad_nd, 0)
        elif padding == "valid":
            padding = 0
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    check_weight_and_groups(weight.ndim, groups)

    def per_dim(value: Any, name: str) -> tuple[int, ...]:
        return ntuple(ntuple(value, spatial, as_given=True), dims, name, CONVOLUTION)

    stride = per_dim(stride, "stride")
    padding = per_dim(padding, "padding")
    dilation = per_dim(dilation, "dilation")
    out = VariableType.convolution(
        input, weight, bias, stride, padding, dilation, False, (0,) * dims, groups
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


def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """3-d cross-correlation of `input` [N, C_in, D, H, W] with `weight`
    [C_out, C_in / groups, kD, kH, kW]; records ConvolutionBackward0.

    >>> conv3d(yg.randn(1, 2, 4, 4, 4), yg.randn(3, 2, 2, 2, 2)).shape
    yamlgrad.Size([1, 3, 3, 3, 3])
    """
    return _conv_nd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose_nd(
    name: str,
    spatial: int,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    output_padding: Any,
    groups: int,
    dilation: Any,
) -> Tensor:
    """conv_transpose{1,2,3}d as at::conv_transpose{1,2,3}d: the arguments parsed
    as `int[spatial]`, an unbatched input given a batch dim of 1 (squeezed off
    after), then at::convolution with transposed=True."""
    sizes = {"stride": stride, "padding": padding, "output_padding": output_padding}
    sizes["dilation"] = dilation
    for position, (arg, value) in zip((4, 5, 6, 8), sizes.items()):
        parsed = _int_list(value, arg, position, name, spatial)
        sizes[arg] = ntuple(parsed, spatial, arg, CONVOLUTION)
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input "
            f"to {name}, but got input of size: {_sizes(input.shape)}"
        )
    batched = input.ndim == spatial + 2
    if not batched:
        input = VariableType.unsqueeze(input, 0)
    stride, padding, output_padding, dilation = sizes.values()
    out = VariableType.convolution(
        input, weight, bias, stride, padding, dilation, True, output_padding, groups
    )
    return out if batched else VariableType.squeeze(out, 0)


def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """The transpose (adjoint) of conv1d, `weight` [C_in, C_out / groups, k];
    records ConvolutionBackward0.

    >>> conv_transpose1d(yg.randn(1, 4, 3), yg.randn(4, 2, 3), stride=2).shape
    yamlgrad.Size([1, 2, 7])
    """
    return _conv_transpose_nd(
        "conv_transpose1d",
        1,
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )


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
    return _conv_transpose_nd(
        "conv_transpose2d",
        2,
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )


def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """The transpose (adjoint) of conv3d, `weight` [C_in, C_out / groups, kD, kH,
    kW]; records ConvolutionBackward0."""
    return _conv_transpose_nd(
        "conv_transpose3d",
        3,
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )


def _int_list(
    value: Any, arg: str, position: int, name: str, size: int
) -> tuple[int, ...]:
    """A conv_transpose's `int[size]` argument, parsed with PyTorch's texts."""
    for i, v in enumerate(value if isinstance(value, (list, tuple)) else ()):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError(
                f"{name}(): argument '{arg}' (position {position}) must be "
                f"tuple of ints, but found element of type {type(v).__name__} at pos {i}"
            )
    return int_list_arg(value, name, arg, position, size)
