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
    "set_deterministic_debug_mode",
    "get_deterministic_debug_mode",
    "set_warn_always",
    "is_warn_always_enabled",
    "set_flush_denormal",
]

_state: dict[str, object] = {
    "threads": os.cpu_count() or 1,
    "interop": os.cpu_count() or 1,
    "deterministic": False,
    "warn_only": False,
    "matmul_precision": "highest",
    "warn_always": False,
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


# The debug modes by name, and the (deterministic, warn_only) flags of each.
_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}
_DEBUG_FLAGS = {0: (False, False), 1: (True, True), 2: (True, False)}


def set_deterministic_debug_mode(debug_mode: int | str) -> None:
    """use_deterministic_algorithms by number or name: 0 "default" (off), 1
    "warn" (warn_only), 2 "error"."""
    if isinstance(debug_mode, bool) or not isinstance(debug_mode, (int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, "
                f"`warn`, `error`, but got {debug_mode}"
            )
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode not in _DEBUG_FLAGS:
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
        )
    mode, warn_only = _DEBUG_FLAGS[debug_mode]
    use_deterministic_algorithms(mode, warn_only=warn_only)


def get_deterministic_debug_mode() -> int:
    """The debug mode use_deterministic_algorithms last set (0, 1 or 2)."""
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_warn_always(b: bool) -> None:
    """Recorded: yamlgrad's warnings go through Python's `warnings` filters."""
    _state["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    return _state["warn_always"]  # type: ignore[return-value]


def set_flush_denormal(mode: bool) -> bool:
    """False: numpy computes with denormal numbers and cannot flush them, and
    False is PyTorch's answer where flushing is not supported."""
    return False
