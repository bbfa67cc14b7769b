"""PyTorch's process-wide settings that a numpy backend has no use for, kept so
that programs which set them run and read back what they set.

`set_num_threads` records the number (numpy's BLAS threads are fixed when it
loads); `use_deterministic_algorithms` records its flags, and every yamlgrad
kernel is deterministic anyway.
"""

from __future__ import annotations

import os
import warnings

__all__ = [
    "set_num_threads",
    "get_num_threads",
    "set_num_interop_threads",
    "get_num_interop_threads",
    "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled",
    "set_float32_matmul_precision",
    "get_float32_matmul_precision",
]

_state: dict[str, object] = {
    "threads": os.cpu_count() or 1,
    "interop": os.cpu_count() or 1,
    "deterministic": False,
    "warn_only": False,
    "matmul_precision": "highest",
}


def set_num_threads(int: int) -> None:  # noqa: A002 - PyTorch's argument name
    if int <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _state["threads"] = int


def get_num_threads() -> int:
    return _state["threads"]  # type: ignore[return-value]


def set_num_interop_threads(int: int) -> None:  # noqa: A002
    if int <= 0:
        raise RuntimeError("Expected positive number of threads")
    _state["interop"] = int


def get_num_interop_threads() -> int:
    return _state["interop"]  # type: ignore[return-value]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    _state["deterministic"] = bool(mode)
    _state["warn_only"] = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]  # type: ignore[return-value]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]  # type: ignore[return-value]


def set_float32_matmul_precision(precision: str) -> None:
    if precision not in ("highest", "high", "medium"):
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
            "setFloat32MatmulPrecision call has no effect.",
            stacklevel=2,
        )
        return
    _state["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    return _state["matmul_precision"]  # type: ignore[return-value]
