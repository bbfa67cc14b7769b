"""The padding, upsampling, shuffling and sliding-block layers of `yg.nn`, with
PyTorch's constructors and reprs, each forward one call into `yg.nn.functional`.

>>> ReflectionPad2d((1, 1, 2, 0))
ReflectionPad2d((1, 1, 2, 0))
>>> Upsample(scale_factor=2.0, mode="bilinear")
Upsample(scale_factor=2.0, mode='bilinear')
"""

from __future__ import annotations

from typing import Any

from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.nn import functional as F
from yamlgrad.runtime.nn.module import Module

__all__ = [
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "Upsample",
    "UpsamplingNearest2d",
    "UpsamplingBilinear2d",
    "PixelShuffle",
    "PixelUnshuffle",
    "ChannelShuffle",
    "Fold",
    "Unfold",
]


def _padding(padding: Any, dims: int) -> tuple[int, ...]:
    """An int pads every side; else one (left, right) pair per dim, last first."""
    if isinstance(padding, int):
        return (padding,) * (2 * dims)
    return tuple(int(p) for p in padding)


class _PadNd(Module):
    mode = ""
    dims = 0

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _padding(padding, self.dims)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pads the last dim with its reflection (the edge itself not repeated)."""

    mode, dims = "reflect", 1


class ReflectionPad2d(_PadNd):
    mode, dims = "reflect", 2


class ReflectionPad3d(_PadNd):
    mode, dims = "reflect", 3


class ReplicationPad1d(_PadNd):
    """Pads the last dim by repeating its edge value."""

    mode, dims = "replicate", 1


class ReplicationPad2d(_PadNd):
    mode, dims = "replicate", 2


class ReplicationPad3d(_PadNd):
    mode, dims = "replicate", 3


class Upsample(Module):
    """F.interpolate with fixed arguments."""

    def __init__(
        self,
        size: Any = None,
        scale_factor: Any = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        self.scale_factor = (
            tuple(float(f) for f in scale_factor)
            if isinstance(scale_factor, (list, tuple))
            else float(scale_factor) if scale_factor is not None else None
        )
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(
            input, self.size, self.scale_factor, self.mode, self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )  # fmt: skip

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleaves the channels of `groups` groups."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class Fold(Module):
    """Sums columns of sliding blocks back into an image (F.fold)."""

    def __init__(
        self,
        output_size: Any,
        kernel_size: Any,
        dilation: Any = 1,
        padding: Any = 0,
        stride: Any = 1,
    ) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding,
            self.stride,
        )  # fmt: skip

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )


class Unfold(Module):
    """Every sliding block of an image as a column (F.unfold)."""

    def __init__(
        self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(
            input, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )
