"""`torch.types`: the type aliases PyTorch programs annotate with."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO, Union

from yamlgrad.runtime.autograd.node import Node
from yamlgrad.runtime.autograd.tensor import Size, Tensor
from yamlgrad.runtime.devices import device as _device
from yamlgrad.runtime.dtypes import dtype as _dtype
from yamlgrad.runtime.dtypes import layout as _layout

__all__ = [
    "Number",
    "Device",
    "FileLike",
    "Storage",
    "IntLikeType",
    "FloatLikeType",
    "BoolLikeType",
    "Size",
    "Tensor",
]

_int = int
_float = float
_bool = bool
_complex = complex
_str = str
_bytes = bytes
_size = Union[Size, list[int], tuple[int, ...]]
_symsize = _size
_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Tensor, Sequence[Union[Tensor, None]]]
_TensorOrTensorsOrGradEdge = Union[_TensorOrTensors, Node]
_Number = Union[int, float, bool]
Number = _Number
IntLikeType = int
FloatLikeType = float
BoolLikeType = bool
Device = Union[_device, str, int, None]
FileLike = Union[str, os.PathLike, IO[bytes]]
Storage = Tensor  # yamlgrad's tensors hold their data; there is no storage type
_ = (_dtype, _layout)  # re-exported: `from torch.types import _dtype`
