"""Devices, as `torch.device`: yamlgrad's tensors live on the CPU.

A program written for PyTorch names its device (`device = "cuda" if
torch.cuda.is_available() else "cpu"`, `x.to(device)`, `torch.zeros(3,
device=device)`); here every such program takes its CPU branch, and runs.
A CUDA device may be named (`yg.device("cuda:0")`) but not used: a tensor made
on it, or moved to it, raises the error PyTorch raises where it was built
without CUDA. `torch.cuda`, `torch.backends.mps` and `torch.accelerator` answer
as they do on such a machine (no CUDA, no MPS, no accelerator).

The default device (`set_default_device`, or `with yg.device("cpu"):`) is
what factories use when given no `device=`.
"""

from __future__ import annotations

import operator
from types import SimpleNamespace
from typing import Any

__all__ = [
    "device",
    "set_default_device",
    "get_default_device",
    "cuda",
    "backends",
    "accelerator",
]

# PyTorch's device types, in the order its parser lists them.
DEVICE_TYPES = (
    "cpu",
    "cuda",
    "ipu",
    "xpu",
    "mkldnn",
    "opengl",
    "opencl",
    "ideep",
    "hip",
    "ve",
    "fpga",
    "maia",
    "xla",
    "lazy",
    "vulkan",
    "mps",
    "meta",
    "hpu",
    "mtia",
    "privateuseone",
)
ERR_NO_CUDA = "Torch not compiled with CUDA enabled"


class device:
    """Where a tensor lives: `device("cpu")`, `device("cuda:0")`, `device("cuda", 0)`.

    >>> yg.device("cpu")
    device(type='cpu')
    """

    __slots__ = ("type", "index", "_previous")

    def __init__(self, type: Any, index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index
        elif not isinstance(type, str):
            # An int names an accelerator by its index (PyTorch: cuda).
            type, index = "cuda", operator.index(type)
        elif ":" in type:
            if index is not None:
                raise RuntimeError(
                    f"type (string) must not include an index because index was "
                    f"passed explicitly: {type}"
                )
            type, _, text = type.partition(":")
            if not text.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{text}'")
            index = int(text)
        if type not in DEVICE_TYPES:
            raise RuntimeError(
                f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of "
                f"device string: {type}"
            )
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
        self.type = type
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, device):
            return NotImplemented
        return (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self) -> tuple[Any, ...]:
        return (device, (self.type, self.index))

    def __enter__(self) -> device:
        """`with yg.device("cpu"):` makes it the default device inside."""
        self._previous = _default[0]
        set_default_device(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _default[0] = self._previous


CPU = device("cpu")
_default: list[device] = [CPU]


def usable(value: Any) -> device:
    """The device a tensor may be made on or moved to: the CPU, or PyTorch's error."""
    if value is None:
        value = _default[0]
        if value is CPU:  # (every factory call without a device asks this)
            return CPU
    where = value if isinstance(value, device) else device(value)
    if where.type == "cuda":
        raise AssertionError(ERR_NO_CUDA)
    if where.type != "cpu":
        raise RuntimeError(
            f"Could not run on device type '{where.type}': yamlgrad's tensors live "
            "on the CPU"
        )
    return CPU


def set_default_device(value: Any) -> None:
    """The device factories use when given none (`None`: the CPU)."""
    _default[0] = CPU if value is None else device(value)


def get_default_device() -> device:
    return _default[0]


# -- torch.cuda, torch.backends.mps, torch.accelerator on a machine without them ----


def _cuda_unavailable(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError(ERR_NO_CUDA)


def _nothing(*args: Any, **kwargs: Any) -> None:
    """Seeding CUDA's generators without CUDA is silently nothing, as in PyTorch."""


cuda = SimpleNamespace(
    is_available=lambda: False,
    device_count=lambda: 0,
    is_initialized=lambda: False,
    manual_seed=_nothing,
    manual_seed_all=_nothing,
    seed=_nothing,
    seed_all=_nothing,
    current_device=_cuda_unavailable,
    synchronize=_cuda_unavailable,
    get_device_name=_cuda_unavailable,
    set_device=_cuda_unavailable,
    empty_cache=_nothing,
)
"""`torch.cuda` where there is no CUDA: `is_available()` is False."""

backends = SimpleNamespace(
    mps=SimpleNamespace(is_available=lambda: False, is_built=lambda: False),
    cuda=SimpleNamespace(
        is_built=lambda: False,
        matmul=SimpleNamespace(
            allow_tf32=False, allow_fp16_reduced_precision_reduction=True
        ),
    ),
    # Flags a program sets (`cudnn.deterministic = True`) and may read back.
    cudnn=SimpleNamespace(
        enabled=True,
        benchmark=False,
        deterministic=False,
        allow_tf32=True,
        is_available=lambda: False,
        version=lambda: None,
    ),
    mkldnn=SimpleNamespace(is_available=lambda: False, enabled=True),
    openmp=SimpleNamespace(is_available=lambda: False),
)
"""`torch.backends`: no CUDA, cuDNN or MPS (`is_available()` False), the flags
settable as in PyTorch."""

accelerator = SimpleNamespace(
    is_available=lambda: False,
    current_accelerator=lambda check_available=False: None,
    device_count=lambda: 0,
)
"""`torch.accelerator`: none, so `current_accelerator()` is None."""
