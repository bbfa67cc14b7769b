"""`yg.nn.functional`'s 3-d, adaptive-max, unpooling, fractional and power-average
pooling, and
F.affine_grid and F.grid_sample, with PyTorch's argument handling, each reaching one entry of
derivatives.yaml (so the node is PyTorch's: MaxPool3DWithIndicesBackward0,
AvgPool3DBackward0, AdaptiveMaxPool2DBackward0, MaxUnpool2DBackward0,
FractionalMaxPool2DBackward0, AffineGridGeneratorBackward0,
GridSampler2DBackward0, ...).

>>> max_pool3d(yg.randn(1, 1, 4, 4, 4), 2).shape
yamlgrad.Size([1, 1, 2, 2, 2])
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from yamlgrad.generated import VariableType
from yamlgrad.runtime import factories
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.nn import functional as F
from yamlgrad.runtime.nn.ntuple import fractional, ntuple, pooling, stride_arg

__all__ = [
    "max_pool3d",
    "avg_pool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "fractional_max_pool2d",
    "fractional_max_pool3d",
    "lp_pool1d",
    "lp_pool2d",
    "affine_grid",
    "grid_sample",
]

_ALIGN_CORNERS_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to "
    "align_corners=False since 1.3.0. Please specify align_corners=True if the old "
    "behavior is desired. See the documentation of grid_sample for details."
)


_MAX_POOL3D = pooling("max_pool3d", "three")
_AVG_POOL3D = pooling("avg_pool3d", "three", either=False)


def max_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """The largest value of each 3-d window (stride defaults to the kernel
    size); with `return_indices`, also its flat position in the input volume."""
    errors = _MAX_POOL3D
    kernel = ntuple(kernel_size, 3, "kernel_size", errors)
    stride = stride_arg(stride, 3, errors)
    values, indices = VariableType.max_pool3d_with_indices(
        input,
        kernel,
        stride,
        ntuple(padding, 3, "padding", errors),
        ntuple(dilation, 3, "dilation", errors),
        ceil_mode,
    )
    return (values, indices) if return_indices else values


def avg_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """The mean of each 3-d window (stride defaults to the kernel size)."""
    errors = _AVG_POOL3D
    kernel = ntuple(kernel_size, 3, "kernel_size", errors)
    stride = stride_arg(stride, 3, errors)
    return VariableType.avg_pool3d(
        input,
        kernel,
        stride,
        ntuple(padding, 3, "padding", errors),
        ceil_mode,
        count_include_pad,
        divisor_override,
    )


def _output_size(output_size: Any, input: Tensor, dims: int) -> tuple[int, ...]:
    """PyTorch's `_list_with_default`: an int for every dim, None keeps the input's."""
    if isinstance(output_size, (int, np.integer)) or output_size is None:
        output_size = (output_size,) * dims
    sizes = tuple(input.shape[-dims:])
    return tuple(n if s is None else int(s) for n, s in zip(sizes, output_size))


def _pool1d_input(name: str, input: Tensor, output_size: Any) -> int:
    """at::adaptive_{avg,max}_pool1d's checks: a 2-d or 3-d input, one size."""
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for "
            f"argument #1 'self' (while checking arguments for {name})"
        )
    sizes = output_size if isinstance(output_size, (list, tuple)) else (output_size,)
    if len(sizes) != 1:
        raise RuntimeError(
            f"{name}() argument 'output_size' should contain one int (got "
            f"{len(sizes)})"
        )
    return int(sizes[0])


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling of an (N, C, L) input to length `output_size`: PyTorch's
    adaptive_avg_pool2d of the input unsqueezed at -2 (UnsqueezeBackward0,
    AdaptiveAvgPool2DBackward0, or MeanBackward1 for a length of 1,
    SqueezeBackward1).

    >>> adaptive_avg_pool1d(yg.arange(6.0).reshape(1, 1, 6), 3)
    tensor([[[0.5000, 2.5000, 4.5000]]])
    """
    size = _pool1d_input("adaptive_avg_pool1d", input, output_size)
    out = F.adaptive_avg_pool2d(VariableType.unsqueeze(input, -2), (1, size))
    return VariableType.squeeze(out, -2)


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a given 3-d output size (None keeps that input size);
    a 1x1x1 output is a mean over the last three dims (MeanBackward1), as in
    PyTorch, else AdaptiveAvgPool3DBackward0."""
    size = _output_size(output_size, input, 3)
    if size == (1, 1, 1):
        return VariableType.mean(input, (-1, -2, -3), True)
    return VariableType._adaptive_avg_pool3d(input, size)


def adaptive_max_pool1d(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> Any:
    """Max pooling of an (N, C, L) input to length `output_size`: PyTorch's
    adaptive_max_pool2d of the input unsqueezed at -2."""
    size = _pool1d_input("adaptive_max_pool1d", input, output_size)
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(
                "adaptive_max_pool1d(): Expected input to have non-zero size for "
                f"non-batch dimensions, but input has sizes {list(input.shape)} with "
                f"dimension {i} being empty"
            )
    values, indices = VariableType.adaptive_max_pool2d(
        VariableType.unsqueeze(input, -2), (1, size)
    )
    values, indices = (VariableType.squeeze(t, -2) for t in (values, indices))
    return (values, indices) if return_indices else values


def adaptive_max_pool2d(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> Any:
    """Max pooling to a given output size (None keeps that input size)."""
    size = _output_size(output_size, input, 2)
    values, indices = VariableType.adaptive_max_pool2d(input, size)
    return (values, indices) if return_indices else values


def adaptive_max_pool3d(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> Any:
    """Max pooling to a given 3-d output size (None keeps that input size)."""
    size = _output_size(output_size, input, 3)
    values, indices = VariableType.adaptive_max_pool3d(input, size)
    return (values, indices) if return_indices else values


def _unpool_output_size(
    input: Tensor,
    kernel_size: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    output_size: Any,
) -> tuple[int, ...]:
    """The pooled input's size: the default, or `output_size` (with or without
    its batch and channel dims) if it is within a stride of it."""
    dims = len(kernel_size)
    sizes = tuple(input.shape[-dims:])
    default = [
        (n - 1) * s + k - 2 * p
        for n, s, k, p in zip(sizes, stride, kernel_size, padding)
    ]
    if output_size is None:
        return tuple(default)
    output_size = list(output_size)
    if len(output_size) == dims + 2:
        output_size = output_size[2:]
    if len(output_size) != dims:
        raise ValueError(
            f"output_size should be a sequence containing {dims} or {dims + 2} "
            f"elements, but it has a length of '{len(output_size)}'"
        )
    for d in range(dims):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(
                f'invalid output_size "{output_size}" (dim {d} must be between '
                f"{low} and {high})"
            )
    return tuple(int(n) for n in output_size)


def max_unpool1d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """The inverse of max_pool1d, as PyTorch's: max_unpool2d of the input and
    indices unsqueezed at -1 (MaxUnpool2DBackward0), squeezed back."""
    kernel = ntuple(kernel_size, 1)
    stride = kernel if stride is None else ntuple(stride, 1)
    padding = ntuple(padding, 1)
    size = _unpool_output_size(input, kernel, stride, padding, output_size)
    out = VariableType.max_unpool2d(
        VariableType.unsqueeze(input, -1),
        VariableType.unsqueeze(indices, -1),
        size + (1,),
    )
    return VariableType.squeeze(out, -1)


def max_unpool2d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """The inverse of max_pool2d: each value written back at its index, zeros
    elsewhere."""
    kernel = ntuple(kernel_size, 2)
    stride = kernel if stride is None else ntuple(stride, 2)
    padding = ntuple(padding, 2)
    size = _unpool_output_size(input, kernel, stride, padding, output_size)
    return VariableType.max_unpool2d(input, indices, size)


def max_unpool3d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """The inverse of max_pool3d: each value written back at its index."""
    kernel = ntuple(kernel_size, 3)
    stride = kernel if stride is None else ntuple(stride, 3)
    padding = ntuple(padding, 3)
    size = _unpool_output_size(input, kernel, stride, padding, output_size)
    return VariableType.max_unpool3d(input, indices, size, stride, padding)


def _ratios(output_ratio: Any, dims: int) -> tuple[float, ...]:
    if isinstance(output_ratio, (int, float)):
        return (float(output_ratio),) * dims
    ratios = tuple(float(r) for r in output_ratio)
    return ratios * dims if len(ratios) == 1 else ratios


def _fractional(
    dims: int,
    input: Tensor,
    kernel_size: Any,
    output_size: Any,
    output_ratio: Any,
    return_indices: bool,
    _random_samples: Tensor | None,
) -> Any:
    name = f"fractional_max_pool{dims}d"
    if output_size is None and output_ratio is None:
        raise ValueError(
            f"{name} requires specifying either an output_size or an output_ratio"
        )
    if output_size is None:
        ratios = _ratios(output_ratio, dims)
        sizes = input.shape[-dims:]
        output_size = tuple(int(n * r) for n, r in zip(sizes, ratios))
    if _random_samples is None:
        batch = 1 if input.ndim == dims + 1 else input.shape[0]
        channels = input.shape[-dims - 1]
        _random_samples = factories.rand(batch, channels, dims, dtype=input.dtype)
    op = getattr(VariableType, name)
    error = fractional(name, "three " if dims == 3 else "")
    kernel = ntuple(kernel_size, dims, "kernel_size", error)
    output_size = ntuple(output_size, dims, "output_size", error)
    values, indices = op(input, kernel, output_size, _random_samples)
    return (values, indices) if return_indices else values


def fractional_max_pool2d(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> Any:
    """Max pooling over pseudo-random windows (Graham, 2014); `_random_samples`
    ([N, C, 2] in [0, 1)) places them, drawn with yg.rand when not given."""
    return _fractional(
        2, input, kernel_size, output_size, output_ratio, return_indices,
        _random_samples,
    )  # fmt: skip


def fractional_max_pool3d(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> Any:
    """fractional_max_pool2d over three dims (`_random_samples`: [N, C, 3])."""
    return _fractional(
        3, input, kernel_size, output_size, output_ratio, return_indices,
        _random_samples,
    )  # fmt: skip


def _lp_pool(
    dims: int,
    input: Tensor,
    norm_type: float,
    kernel_size: Any,
    stride: Any,
    ceil_mode: bool,
) -> Tensor:
    """PyTorch's lp_pool1d/2d: the p-th root of the windows' sums of x**p (the
    average pool times the window's size; a negative sum's root is taken of 0),
    and for p = +-inf the max (or -max of -) of |x|."""
    max_pool = F.max_pool1d if dims == 1 else F.max_pool2d
    avg_pool = F.avg_pool1d if dims == 1 else F.avg_pool2d
    if norm_type == math.inf:
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    powered = input.pow(norm_type)
    if stride is None:
        out = avg_pool(powered, kernel_size, padding=0, ceil_mode=ceil_mode)
    else:
        out = avg_pool(powered, kernel_size, stride, 0, ceil_mode)
    size = math.prod(ntuple(kernel_size, dims, as_given=True))
    return (out.sign() * F.relu(out.abs())).mul(size).pow(1.0 / norm_type)


def lp_pool1d(
    input: Tensor,
    norm_type: float,
    kernel_size: int,
    stride: Any = None,
    ceil_mode: bool = False,
) -> Tensor:
    """Power-average pooling of [N, C, L] inputs: (sum over each window of
    x**p) ** (1 / p).

    >>> lp_pool1d(yg.ones(1, 1, 4), 2, 2)
    tensor([[[1.4142, 1.4142]]])
    """
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(
    input: Tensor,
    norm_type: float,
    kernel_size: Any,
    stride: Any = None,
    ceil_mode: bool = False,
) -> Tensor:
    """Power-average pooling of [N, C, H, W] inputs: (sum over each window of
    x**p) ** (1 / p)."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """The sampling grid of a batch of affine matrices theta ([N, 2, 3] for a
    size [N, C, H, W], [N, 3, 4] for [N, C, D, H, W]): [N, H, W, 2] (or
    [N, D, H, W, 3]) normalised coordinates, as F.grid_sample reads them."""
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(
            f"Expected theta to have floating point type, but got {theta.dtype}"
        )
    size = [int(n) for n in size]
    shapes = {4: (2, 3, "2D"), 5: (3, 4, "3D")}
    if len(size) not in shapes:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine "
            f"transforms, respectively. Got size {size}."
        )
    rows, cols, kind = shapes[len(size)]
    if theta.ndim != 3 or tuple(theta.shape[-2:]) != (rows, cols):
        raise ValueError(
            f"Expected a batch of {kind} affine matrices of shape Nx{rows}x{cols} "
            f"for size {size}. Got {theta.shape}."
        )
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size "
            "grids when align_corners=True. This is not an intended use case of "
            "affine_grid. See the documentation of affine_grid for details.",
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return VariableType.affine_grid_generator(theta, size, align_corners)


_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """The input ([N, C, H, W] or [N, C, D, H, W]) read at the grid's normalised
    points ([N, H', W', 2] or [N, D', H', W', 3], x first), interpolated by
    `mode` and padded by `padding_mode` outside [-1, 1]."""
    if mode not in _MODES:
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' "
            f"or 'bicubic', but got: '{mode}'"
        )
    if padding_mode not in _PADDING_MODES:
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
            f"'border', or 'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    op = (
        VariableType.grid_sampler_3d
        if input.ndim == 5
        else VariableType.grid_sampler_2d
    )
    return op(input, grid, _MODES[mode], _PADDING_MODES[padding_mode], align_corners)
