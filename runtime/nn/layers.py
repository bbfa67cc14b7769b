"""The layers of `yg.nn`: PyTorch's constructors, parameter shapes, default
initialisation and reprs, each forward one call into `yg.nn.functional`.

>>> layer = Linear(3, 2)
>>> layer
Linear(in_features=3, out_features=2, bias=True)
>>> [tuple(p.shape) for p in layer.parameters()]
[(2, 3), (2,)]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime import dtypes
from yamlgrad.runtime.nn import functional as F
from yamlgrad.runtime.nn import init
from yamlgrad.runtime.nn.module import Module
from yamlgrad.runtime.nn.ntuple import ntuple
from yamlgrad.runtime.nn.parameter import Parameter
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.wrappers.interposition import tracing

__all__ = [
    "Identity",
    "Linear",
    "Bilinear",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "MaxPool1d",
    "MaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "AdaptiveAvgPool2d",
    "BatchNorm1d",
    "BatchNorm2d",
    "LayerNorm",
    "GroupNorm",
    "Embedding",
    "Dropout",
    "Flatten",
    "Unflatten",
]


def _empty_parameter(*shape: int, dtype: Any = None) -> Parameter:
    """An uninitialised parameter of the given shape (float32 unless `dtype`)."""
    np_dtype = dtypes.to_numpy(dtype) if dtype is not None else np.dtype(np.float32)
    return Parameter(Tensor(np.zeros(shape, dtype=np_dtype)))


def _uniform_bias(bias: Parameter | None, fan_in: int) -> None:
    """PyTorch's default bias: U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    if bias is not None:
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)


def _check_device(device: Any) -> None:
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"yamlgrad has no device {device!r}; only 'cpu'")


class Identity(Module):
    """Returns its input; takes and ignores any arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """y = x W^T + b, with W [out_features, in_features]."""

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        _check_device(device)
        self.in_features = in_features
        self.out_features = out_features
        self.weight = _empty_parameter(out_features, in_features, dtype=dtype)
        if bias:
            self.bias = _empty_parameter(out_features, dtype=dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        _uniform_bias(self.bias, init._calculate_fan_in_and_fan_out(self.weight)[0])

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Bilinear(Module):
    """y = x1^T A x2 + b, with A [out_features, in1_features, in2_features]."""

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        _check_device(device)
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = _empty_parameter(
            out_features, in1_features, in2_features, dtype=dtype
        )
        if bias:
            self.bias = _empty_parameter(out_features, dtype=dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class _ConvNd(Module):
    """What Conv1d, Conv2d and ConvTranspose2d share: checks, shapes, init, repr."""

    _dims = 2
    _transposed = False

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any,
        padding: Any,
        dilation: Any,
        groups: int,
        bias: bool,
        padding_mode: str,
        output_padding: Any = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        _check_device(device)
        n = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            strings = {"same", "valid"}  # printed in PyTorch's (the set's) order
            if padding not in strings:
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {strings}"
                )
            if padding == "same" and any(
                s != 1 for s in ntuple(stride, n, as_given=True)
            ):
                raise ValueError(
                    "padding='same' is not supported for strided convolutions"
                )
        valid_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_modes:
            raise ValueError(
                f"padding_mode must be one of {valid_modes}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = ntuple(kernel_size, n, as_given=True)
        self.stride = ntuple(stride, n, as_given=True)
        self.padding = (
            padding if isinstance(padding, str) else ntuple(padding, n, as_given=True)
        )
        self.dilation = ntuple(dilation, n, as_given=True)
        # What F.pad pads first for another padding mode than zeros (PyTorch's name).
        self._reversed_padding_repeated_twice = _reversed_padding(
            self.padding, self.kernel_size, self.dilation
        )
        self.transposed = self._transposed
        self.output_padding = ntuple(output_padding, n, as_given=True)
        self.groups = groups
        self.padding_mode = padding_mode
        if self._transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = _empty_parameter(*shape, dtype=dtype)
        if bias:
            self.bias = _empty_parameter(out_channels, dtype=dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        fan_in = init._calculate_fan_in_and_fan_out(self.weight)[0]
        _uniform_bias(self.bias, fan_in)

    def extra_repr(self) -> str:
        n = self._dims
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}"
            f", stride={self.stride}"
        )
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    """Conv1d and Conv2d: one constructor, a forward through `_conv`."""

    _conv = staticmethod(F.conv2d)

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, dilation,
            groups, bias, padding_mode, device=device, dtype=dtype,
        )  # fmt: skip

    def forward(self, input: Tensor) -> Tensor:
        padding = self.padding
        if self.padding_mode != "zeros":
            pads = self._reversed_padding_repeated_twice
            input, padding = F.pad(input, pads, mode=self.padding_mode), 0
        return type(self)._conv(
            input, self.weight, self.bias, self.stride, padding, self.dilation,
            self.groups,
        )  # fmt: skip


def _reversed_padding(
    padding: Any, kernel_size: tuple, dilation: tuple
) -> list[int] | tuple[int, ...]:
    """F.pad's pads (last dim first, its start then its end) of a convolution's
    padding, as PyTorch's `_reversed_padding_repeated_twice`: "same" puts an odd
    element at the end, "valid" pads nothing."""
    if padding == "same":
        total = [d * (k - 1) for d, k in zip(dilation, kernel_size)]
        return [p for t in reversed(total) for p in (t // 2, t - t // 2)]
    if isinstance(padding, str):
        return [0, 0] * len(kernel_size)
    return tuple(p for p in reversed(padding) for _ in range(2))


class Conv1d(_Conv):
    """A 1-D convolution over [N, C_in, L] inputs."""

    _dims = 1
    _conv = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """A 2-D convolution over [N, C_in, H, W] inputs."""

    _dims = 2
    _conv = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """A 3-D convolution over [N, C_in, D, H, W] inputs."""

    _dims = 3
    _conv = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    """ConvTranspose1d/2d/3d: one constructor, a forward through `_conv`
    (weight [C_in, C_out / groups, k...])."""

    _transposed = True
    _conv = staticmethod(F.conv_transpose2d)

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {type(self).__name__}'
            )
        # As PyTorch's `_pair`: a string becomes its letters, which forward refuses.
        padding = ntuple(padding, self._dims, as_given=True)
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, dilation,
            groups, bias, padding_mode, output_padding, device, dtype,
        )  # fmt: skip

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._conv(
            input, self.weight, self.bias, self.stride, self.padding,
            self.output_padding, self.groups, self.dilation,
        )  # fmt: skip


class ConvTranspose1d(_ConvTransposeNd):
    """The transpose of Conv1d."""

    _dims = 1
    _conv = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """The transpose of Conv2d."""

    _dims = 2
    _conv = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """The transpose of Conv3d."""

    _dims = 3
    _conv = staticmethod(F.conv_transpose3d)


class _MaxPoolNd(Module):
    """MaxPool1d and MaxPool2d: one constructor, a forward through `_pool`."""

    _pool = staticmethod(F.max_pool2d)

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        dilation: Any = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, "
            f"padding={self.padding}, dilation={self.dilation}, "
            f"ceil_mode={self.ceil_mode}"
        )

    def forward(self, input: Tensor) -> Any:
        return type(self)._pool(
            input, self.kernel_size, self.stride, self.padding, self.dilation,
            ceil_mode=self.ceil_mode, return_indices=self.return_indices,
        )  # fmt: skip


class MaxPool1d(_MaxPoolNd):
    """The maximum over sliding windows of [N, C, L] inputs."""

    _pool = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """The maximum over sliding windows of [N, C, H, W] inputs."""

    _pool = staticmethod(F.max_pool2d)


class _AvgPoolNd(Module):
    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, "
            f"padding={self.padding}"
        )


class AvgPool1d(_AvgPoolNd):
    """The mean over sliding windows of [N, C, L] inputs."""

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__(
            ntuple(kernel_size, 1, as_given=True),
            ntuple(stride if stride is not None else kernel_size, 1, as_given=True),
            ntuple(padding, 1, as_given=True),
            ceil_mode,
            count_include_pad,
        )

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad,
        )  # fmt: skip


class AvgPool2d(_AvgPoolNd):
    """The mean over sliding windows of [N, C, H, W] inputs."""

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad, self.divisor_override,
        )  # fmt: skip


class AdaptiveAvgPool2d(Module):
    """Averages over windows chosen so the output has `output_size`."""

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


def _affine_parameters(
    module: Module, affine: bool, bias: bool, shape: tuple[int, ...], dtype: Any
) -> None:
    """A normalisation's scale `weight` and shift `bias` (None when not affine)."""
    module.register_parameter(
        "weight", _empty_parameter(*shape, dtype=dtype) if affine else None
    )
    module.register_parameter(
        "bias", _empty_parameter(*shape, dtype=dtype) if affine and bias else None
    )


def _reset_affine(module: Module) -> None:
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class _BatchNorm(Module):
    """Batch normalisation: batch statistics in training (updating the running
    ones), the running statistics in evaluation."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        _check_device(device)
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, affine, bias, (num_features,), dtype)
        if track_running_stats:
            np_dtype = dtypes.to_numpy(dtype) if dtype is not None else np.float32
            self.register_buffer(
                "running_mean", Tensor(np.zeros(num_features, np_dtype))
            )
            self.register_buffer("running_var", Tensor(np.ones(num_features, np_dtype)))
            self.register_buffer("num_batches_tracked", Tensor(np.array(0, np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            tracked = self.num_batches_tracked
            if tracked is not None:
                tracked.add_(1)  # an op: yg.compile records it, and writes it back
                if self.momentum is None:
                    tracing.data_dependent("BatchNorm's momentum=None average")
                    factor = 1.0 / float(tracked)
        use_batch = self.training or (
            self.running_mean is None and self.running_var is None
        )
        keep_running = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if keep_running else None,
            self.running_var if keep_running else None,
            self.weight,
            self.bias,
            use_batch,
            factor,
            self.eps,
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of [N, C] or [N, C, L] inputs."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of [N, C, H, W] inputs."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class LayerNorm(Module):
    """Normalise over the trailing `normalized_shape` dimensions of each sample."""

    def __init__(
        self,
        normalized_shape: Any,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        _check_device(device)
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, elementwise_affine, bias, self.normalized_shape, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(
            input, self.normalized_shape, self.weight, self.bias, self.eps
        )

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, "
            f"bias={self.bias is not None}"
        )


class GroupNorm(Module):
    """Normalise each of `num_groups` groups of channels of each sample."""

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        _check_device(device)
        if num_channels % num_groups != 0:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups "
                f"({num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, affine, bias, (num_channels,), dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
            f"affine={self.affine}, bias={self.bias is not None}"
        )


class Embedding(Module):
    """A lookup table of `num_embeddings` vectors of size `embedding_dim`."""

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Tensor | None = None,
        _freeze: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        _check_device(device)
        if padding_idx is not None:
            if padding_idx > 0 and padding_idx >= num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            if padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
                padding_idx = num_embeddings + padding_idx
        if sparse:
            raise NotImplementedError(
                "yamlgrad has no sparse tensors; use Embedding(..., sparse=False)"
            )
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = _empty_parameter(num_embeddings, embedding_dim, dtype=dtype)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError(
                    "Shape of weight does not match num_embeddings and embedding_dim"
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight._data[self.padding_idx] = 0

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(
            input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
            self.scale_grad_by_freq, self.sparse,
        )  # fmt: skip

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        """An Embedding whose table is `embeddings` (frozen unless `freeze=False`)."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(
            rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq,
            sparse, _weight=embeddings, _freeze=freeze,
        )  # fmt: skip


class _DropoutNd(Module):
    """The dropouts' `p` and `inplace`, checked (runtime/nn/dropout.py has the
    channel-wise and alpha ones)."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(
                f"dropout probability has to be between 0 and 1, but got {p}"
            )
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zeroes each element with probability `p` in training (scaling the rest)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)


class Flatten(Module):
    """Flattens dimensions `start_dim`..`end_dim` into one."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expands dimension `dim` into `unflattened_size`."""

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
