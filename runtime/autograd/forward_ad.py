"""`yamlgrad.autograd.forward_ad`: dual tensors for forward-mode AD (PyTorch's API).

A dual tensor is a primal tensor with a tangent attached at a *dual level*. Every
generated op checks, once, whether one of its inputs carries a tangent
(`any_has_forward_grad`); when one does, it evaluates its forward formula from
derivatives.yaml on the tangents and attaches the result's tangent
(`set_fw_grad`). Without an active level that check is a single attribute read.

Decisions (PyTorch's unless said):

* One level at a time: entering a second one raises, as PyTorch's Python API does.
  The tangent lives on the tensor (`Tensor._fw_grad`); the level keeps weak
  references to every tensor given one, and clears them all when it exits, so a
  tangent never outlives its level.
* While a forward formula runs, forward AD is paused (`formula_mode`): the formula's
  own ops see plain primals, which is what PyTorch's `_fw_primal` views give its
  formulas. Grad mode is untouched, so a formula run on tensors that require grad is
  recorded, and a reverse-mode gradient of a tangent (forward-over-reverse) works.
* `make_dual` returns a new tensor on the primal's data (a view of it, recorded as
  one when the primal requires grad), so an in-place op on the dual changes the
  primal, and the primal itself gets no tangent.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, NamedTuple

from yamlgrad.runtime.backend import dtype_kind
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.errors import (
    ERR_ALREADY_DUAL,
    ERR_DUAL_LEVEL_NEGATIVE,
    ERR_EXIT_NOT_LAST_LEVEL,
    ERR_MAKE_DUAL_INVALID_LEVEL,
    ERR_NESTED_DUAL_LEVEL,
    ERR_NO_DUAL_LEVEL,
    ERR_UNPACK_DUAL_INVALID_LEVEL,
    forward_grad_size,
    not_floating,
)

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]


class _ForwardADState:
    """The active dual level (-1: none), whether ops propagate tangents now
    (`active`: a level exists and no forward formula is running), and weak
    references to the tensors that hold a tangent at this level."""

    __slots__ = ("level", "active", "holders", "lock")

    def __init__(self) -> None:
        self.level = -1
        self.active = False
        self.holders: list[weakref.ref] = []
        self.lock = threading.Lock()


STATE = _ForwardADState()


def enter_dual_level() -> int:
    """Open a new dual level and return its index (0: only one level at a time)."""
    with STATE.lock:
        if STATE.level >= 0:
            raise RuntimeError(ERR_NESTED_DUAL_LEVEL)
        STATE.level = 0
        STATE.active = True
        return STATE.level


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the current dual level: every tangent made in it is dropped."""
    with STATE.lock:
        if level is None:
            level = STATE.level
        if level < 0:
            raise RuntimeError(ERR_DUAL_LEVEL_NEGATIVE)
        if level != STATE.level:
            raise RuntimeError(ERR_EXIT_NOT_LAST_LEVEL)
        holders, STATE.holders = STATE.holders, []
        STATE.level = -1
        STATE.active = False
    for ref in holders:
        tensor = ref()
        if tensor is not None and "_fw_grad" in tensor.__dict__:
            del tensor._fw_grad


class dual_level:
    """Context manager (and decorator) for a dual level:

    >>> with dual_level():
    ...     x = make_dual(primal, tangent)
    ...     jvp = unpack_dual(f(x)).tangent
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: object) -> None:
        exit_dual_level()

    def __call__(self, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with dual_level():
                return fn(*args, **kwargs)

        wrapper.__name__ = getattr(fn, "__name__", "wrapper")
        wrapper.__doc__ = getattr(fn, "__doc__", None)
        return wrapper


class UnpackedDualTensor(NamedTuple):
    """What `unpack_dual` returns: the primal, and the tangent (None if none)."""

    primal: Tensor
    tangent: Tensor | None


def _check_floating(what: str, tensor: Tensor) -> None:
    if dtype_kind(tensor._data.dtype) not in "fc":
        raise ValueError(not_floating(what, str(tensor.dtype)))


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A tensor on `tensor`'s data whose tangent is `tangent`, at the current level.

    >>> with dual_level():
    ...     x = make_dual(yg.tensor([1.0, 2.0]), yg.tensor([1.0, 0.0]))
    ...     unpack_dual(x.exp()).tangent
    tensor([2.7183, 0.0000])
    """
    if level is None:
        level = STATE.level
    if level < 0:
        raise RuntimeError(ERR_NO_DUAL_LEVEL)
    if level != STATE.level:
        raise RuntimeError(ERR_MAKE_DUAL_INVALID_LEVEL)
    _check_floating("primal", tensor)
    _check_floating("tangent", tangent)
    if tensor._fw_grad is not None:
        raise RuntimeError(ERR_ALREADY_DUAL.format(level=level))
    if tangent.shape != tensor.shape:
        raise RuntimeError(forward_grad_size(tensor.shape, tangent.shape))
    # The dual is a view of the primal (ViewBackward0 when it requires grad).
    dual = tensor.view(tensor.shape)
    attach_tangent(dual, tangent)
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """The primal (a view of `tensor` without the tangent) and the tangent, or
    `(tensor, None)` when no level is active."""
    if level is None:
        level = STATE.level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if level != STATE.level:
        raise RuntimeError(ERR_UNPACK_DUAL_INVALID_LEVEL)
    tangent = tensor._fw_grad
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with formula_mode():
        primal = tensor.view(tensor.shape)
    return UnpackedDualTensor(primal, tangent)


def attach_tangent(tensor: Tensor, tangent: Tensor) -> None:
    """Attach `tangent` to `tensor` at the current level (PyTorch's _set_fw_grad)."""
    with STATE.lock:
        if STATE.level < 0:
            return
        STATE.holders.append(weakref.ref(tensor))
    tensor._fw_grad = tangent


class formula_mode:
    """Pause forward AD while a forward formula runs: its ops see plain primals."""

    __slots__ = ("_prev",)

    def __enter__(self) -> None:
        self._prev = STATE.active
        STATE.active = False

    def __exit__(self, *exc: object) -> None:
        STATE.active = self._prev
