"""PyTorch's error for a call a numpy kernel refused.

A generated wrapper runs its numpy kernel inside `try`; a ValueError that numpy
raises (shapes that do not broadcast, matrices that do not multiply, tensors that
do not concatenate) becomes the RuntimeError PyTorch raises for the same call,
with PyTorch's text where it has one and otherwise the op's name before numpy's.
A KernelValueError, which a kernel helper raises on purpose with PyTorch's own
type and text, passes through unchanged. The check runs only after a failure, so
it costs nothing on the happy path.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["KernelValueError", "broadcast_pair", "kernel_error"]


class KernelValueError(ValueError):
    """A ValueError a kernel helper raises on purpose, with PyTorch's own type and
    text (batch norm: "running_mean and running_var must either both be None or
    neither be None"); it is raised as it is."""


def _arrays(arguments: dict[str, Any]) -> list[np.ndarray]:
    return [v for v in arguments.values() if isinstance(v, np.ndarray)]


def _sizes(shape: tuple[int, ...]) -> str:
    return "x".join(str(s) for s in shape)


def broadcast_pair(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The shape `a` and `b` broadcast to, with PyTorch's infer_size text."""
    ndim = max(len(a), len(b))
    a_full = (1,) * (ndim - len(a)) + tuple(a)
    b_full = (1,) * (ndim - len(b)) + tuple(b)
    for i in range(ndim - 1, -1, -1):
        if a_full[i] != b_full[i] and 1 not in (a_full[i], b_full[i]):
            raise RuntimeError(
                f"The size of tensor a ({a_full[i]}) must match the size of tensor b "
                f"({b_full[i]}) at non-singleton dimension {i}"
            )
    return tuple(y if x == 1 else x for x, y in zip(a_full, b_full))


def _broadcast(op: str, arguments: dict[str, Any]) -> str | None:
    """PyTorch's infer_size text for the first pair of operands that do not
    broadcast (compared from the last dimension)."""
    shapes = [a.shape for a in _arrays(arguments)]
    if not shapes:
        return None
    current = tuple(shapes[0])
    for other in shapes[1:]:
        try:
            current = broadcast_pair(current, tuple(other))
        except RuntimeError as error:
            return str(error)
    return None


def _matrices(op: str, arguments: dict[str, Any]) -> str | None:
    names = ("mat1", "mat2") if "mat1" in arguments else ("self", "mat2")
    a, b = (arguments.get(n) for n in names)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.ndim == 2 and b.ndim == 2:
            return (
                f"mat1 and mat2 shapes cannot be multiplied ({_sizes(a.shape)} and "
                f"{_sizes(b.shape)})"
            )
    return None


def _mv(op: str, arguments: dict[str, Any]) -> str | None:
    mat, vec = arguments.get("self"), arguments.get("vec")
    if isinstance(mat, np.ndarray) and isinstance(vec, np.ndarray) and mat.ndim == 2:
        return (
            f"size mismatch, got input ({mat.shape[0]}), mat ({_sizes(mat.shape)}), "
            f"vec ({vec.shape[0] if vec.ndim else 1})"
        )
    return None


def _dot(op: str, arguments: dict[str, Any]) -> str | None:
    a, b = arguments.get("self"), arguments.get("tensor")
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return (
            f"inconsistent tensor size, expected tensor [{a.size}] and src [{b.size}] "
            "to have the same number of elements, but got "
            f"{a.size} and {b.size} elements respectively"
        )
    return None


def _bmm(op: str, arguments: dict[str, Any]) -> str | None:
    a, b = arguments.get("self"), arguments.get("mat2")
    if (
        isinstance(a, np.ndarray)
        and isinstance(b, np.ndarray)
        and a.ndim == b.ndim == 3
    ):
        return (
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}]."
        )
    return None


def cat_operands(tensors: Any) -> list[Any]:
    """The tensors `cat` joins: a 1-D empty one (shape (0,)) takes no part, in
    shape checks nor in the result, as in PyTorch, whose `torch.tensor([])`
    once started any concatenation; all of them when every one is such."""
    kept = [t for t in tensors if tuple(np.shape(t)) != (0,)]
    return kept or list(tensors)


def _cat(op: str, arguments: dict[str, Any]) -> str | None:
    tensors, dim = arguments.get("tensors"), arguments.get("dim", 0)
    if not isinstance(tensors, (list, tuple)) or not tensors:
        return None
    tensors = cat_operands(tensors)
    first = np.shape(tensors[0])
    dim = dim % len(first) if first else 0
    for index, t in enumerate(tensors[1:], start=1):
        shape = np.shape(t)
        if len(shape) != len(first):
            return (
                f"Tensors must have same number of dimensions: got {len(first)} and "
                f"{len(shape)}"
            )
        for d, (x, y) in enumerate(zip(first, shape)):
            if d != dim and x != y:
                return (
                    f"Sizes of tensors must match except in dimension {dim}. Expected "
                    f"size {x} but got size {y} for tensor number {index} in the list."
                )
    return None


def _stack(op: str, arguments: dict[str, Any]) -> str | None:
    tensors = arguments.get("tensors")
    if not isinstance(tensors, (list, tuple)) or not tensors:
        return None
    first = list(np.shape(tensors[0]))
    for index, t in enumerate(tensors[1:], start=1):
        if list(np.shape(t)) != first:
            return (
                f"stack expects each tensor to be equal size, but got {first} at "
                f"entry 0 and {list(np.shape(t))} at entry {index}"
            )
    return None


def _expand(op: str, arguments: dict[str, Any]) -> str | None:
    data, size = arguments.get("self"), arguments.get("size")
    if not isinstance(data, np.ndarray) or size is None:
        return None
    target = list(size)
    shape = list(data.shape)
    offset = len(target) - len(shape)
    for i in range(len(shape) - 1, -1, -1):
        want = target[i + offset]
        if want != -1 and shape[i] != 1 and shape[i] != want:
            return (
                f"The expanded size of the tensor ({want}) must match the existing "
                f"size ({shape[i]}) at non-singleton dimension {i + offset}.  Target "
                f"sizes: {target}.  Tensor sizes: {shape}"
            )
    return None


_BY_OP: dict[str, Callable[[str, dict[str, Any]], str | None]] = {
    "mm": _matrices,
    "addmm": _matrices,
    "mv": _mv,
    "dot": _dot,
    "bmm": _bmm,
    "cat": _cat,
    "stack": _stack,
    "expand": _expand,
}

_BROADCAST = re.compile(r"operands could not be broadcast together")


def kernel_error(op: str, error: BaseException, /, **arguments: Any) -> BaseException:
    """The exception to raise for `error` from `op`'s kernel, given the call's
    arguments (as the kernel saw them)."""
    if isinstance(error, KernelValueError):
        return error
    if isinstance(error, np.exceptions.AxisError) and error.ndim is not None:
        n = max(error.ndim, 1)
        new: BaseException = IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but "
            f"got {error.axis})"
        )
        new.__cause__ = error
        return new
    message = None
    translate = _BY_OP.get(op.rstrip("_"))
    if translate is not None:
        message = translate(op, arguments)
    if message is None and _BROADCAST.search(str(error)):
        message = _broadcast(op, arguments)
    if message is None:
        message = f"{op}: {error}"
    new = RuntimeError(message)
    new.__cause__ = error
    return new
