"""The 3-d, adaptive-max, unpooling and fractional pooling layers of `yg.nn`,
with PyTorch's constructors, each forward one call into `yg.nn.functional`.

>>> MaxUnpool2d(2)
MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))
"""

from __future__ import annotations

from typing import Any

from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.nn import functional as F
from yamlgrad.runtime.nn.ntuple import ntuple
from yamlgrad.runtime.nn.layers import _MaxPoolNd
from yamlgrad.runtime.nn.module import Module

__all__ = [
    "MaxPool3d",
    "AvgPool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
    "LPPool1d",
    "LPPool2d",
]


class MaxPool3d(_MaxPoolNd):
    """The maximum over sliding windows of [N, C, D, H, W] inputs."""

    _pool = staticmethod(F.max_pool3d)


class AvgPool3d(Module):
    """The mean over sliding windows of [N, C, D, H, W] inputs."""

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, "
            f"padding={self.padding}"
        )

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool3d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad, self.divisor_override,
        )  # fmt: skip


class _AdaptiveMaxPoolNd(Module):
    _pool = staticmethod(F.adaptive_max_pool2d)

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Tensor) -> Any:
        return type(self)._pool(input, self.output_size, self.return_indices)


class _AdaptiveAvgPoolNd(Module):
    _pool = staticmethod(F.adaptive_avg_pool1d)

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._pool(input, self.output_size)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling of [N, C, L] inputs to a given output length."""

    _pool = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average pooling of [N, C, D, H, W] inputs to a given output size."""

    _pool = staticmethod(F.adaptive_avg_pool3d)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of [N, C, L] inputs to a given output length."""

    _pool = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling of [N, C, H, W] inputs to a given output size."""

    _pool = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling of [N, C, D, H, W] inputs to a given output size."""

    _pool = staticmethod(F.adaptive_max_pool3d)


class _MaxUnpoolNd(Module):
    _dims = 2
    _unpool = staticmethod(F.max_unpool2d)

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        dims = type(self)._dims
        self.kernel_size = ntuple(kernel_size, dims, as_given=True)
        self.stride = ntuple(
            stride if stride is not None else kernel_size, dims, as_given=True
        )
        self.padding = ntuple(padding, dims, as_given=True)

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, "
            f"padding={self.padding}"
        )

    def forward(
        self, input: Tensor, indices: Tensor, output_size: Any = None
    ) -> Tensor:
        return type(self)._unpool(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )


class MaxUnpool1d(_MaxUnpoolNd):
    """The inverse of MaxPool1d."""

    _dims = 1
    _unpool = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """The inverse of MaxPool2d: values back at their indices, zeros elsewhere."""

    _dims = 2
    _unpool = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """The inverse of MaxPool3d."""

    _dims = 3
    _unpool = staticmethod(F.max_unpool3d)


class _FractionalMaxPoolNd(Module):
    _pool = staticmethod(F.fractional_max_pool2d)

    def __init__(
        self,
        kernel_size: Any,
        output_size: Any = None,
        output_ratio: Any = None,
        return_indices: bool = False,
        _random_samples: Tensor | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.output_size = output_size
        self.output_ratio = output_ratio
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        if output_size is None and output_ratio is None:
            name = type(self).__name__
            raise ValueError(
                f"{name} requires specifying either an output size, or a pooling "
                "ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError(
                "only one of output_size and output_ratio may be specified"
            )

    def forward(self, input: Tensor) -> Any:
        return type(self)._pool(
            input, self.kernel_size, self.output_size, self.output_ratio,
            self.return_indices, _random_samples=self._random_samples,
        )  # fmt: skip


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling of [N, C, H, W] inputs (F.fractional_max_pool2d)."""

    _pool = staticmethod(F.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling of [N, C, D, H, W] inputs."""

    _pool = staticmethod(F.fractional_max_pool3d)


class _LPPoolNd(Module):
    def __init__(
        self,
        norm_type: float,
        kernel_size: Any,
        stride: Any = None,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, ceil_mode={self.ceil_mode}"
        )

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._pool(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )


class LPPool1d(_LPPoolNd):
    """Power-average pooling of [N, C, L] inputs (F.lp_pool1d)."""

    _pool = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """Power-average pooling of [N, C, H, W] inputs (F.lp_pool2d)."""

    _pool = staticmethod(F.lp_pool2d)
