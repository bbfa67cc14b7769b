"""The least Python a define-by-run autograd over numpy can run: a reference, not a peer.

Each op computes its value and appends one closure to a global tape; backward
walks the tape in reverse and calls the closures, which add into `.grad`. Nothing
else: no graph objects, no dependency counting, no checks of shapes or dtypes,
no saved-value versions, no hooks, no grad mode, no double backward. The numpy
work is yamlgrad's (the same kernels and backward formulas, broadcasting undone by
a sum, ties of amax sharing the gradient), so the gap between this and the numpy
floor is the interpreter's share of a step that any Python autograd pays, and the
gap between yamlgrad and this is what yamlgrad's PyTorch architecture costs.

Only what workload 2's program calls is here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

_tape: list[tuple[Var, Callable[[np.ndarray], None]]] = []


class Var:
    """A value on the tape; `grad` is filled by `backward`."""

    __slots__ = ("value", "grad", "requires_grad")

    def __init__(self, value: Any, requires_grad: bool = False) -> None:
        self.value = value
        self.grad: np.ndarray | None = None
        self.requires_grad = requires_grad

    def accumulate(self, grad: np.ndarray) -> None:
        if self.requires_grad:
            self.grad = grad if self.grad is None else self.grad + grad

    def backward(self) -> None:
        self.grad = np.ones_like(self.value)
        for out, backward in reversed(_tape):
            if out.grad is not None:
                backward(out.grad)
        _tape.clear()

    def __matmul__(self, other: Var) -> Var:
        a, b = self.value, other.value

        def backward(grad: np.ndarray) -> None:
            if self.requires_grad:
                self.accumulate(grad @ b.T)
            other.accumulate(a.T @ grad)

        return _record(a @ b, backward, self, other)

    def __add__(self, other: Var) -> Var:
        def backward(grad: np.ndarray) -> None:
            self.accumulate(_sum_to(grad, self.value.shape))
            other.accumulate(_sum_to(grad, other.value.shape))

        return _record(self.value + other.value, backward, self, other)

    def __sub__(self, other: Var) -> Var:
        def backward(grad: np.ndarray) -> None:
            self.accumulate(_sum_to(grad, self.value.shape))
            other.accumulate(_sum_to(-grad, other.value.shape))

        return _record(self.value - other.value, backward, self, other)

    def __mul__(self, other: Var) -> Var:
        a, b = self.value, other.value

        def backward(grad: np.ndarray) -> None:
            if self.requires_grad:
                self.accumulate(_sum_to(grad * b, a.shape))
            if other.requires_grad:
                other.accumulate(_sum_to(grad * a, b.shape))

        return _record(a * b, backward, self, other)

    def __truediv__(self, number: float) -> Var:
        def backward(grad: np.ndarray) -> None:
            self.accumulate(grad / number)

        return _record(self.value / number, backward, self)

    def __neg__(self) -> Var:
        def backward(grad: np.ndarray) -> None:
            self.accumulate(-grad)

        return _record(-self.value, backward, self)

    def amax(self, dim: int, keepdim: bool) -> Var:
        x = self.value
        result = np.maximum.reduce(x, axis=dim, keepdims=keepdim)

        def backward(grad: np.ndarray) -> None:
            mask = x == result
            count = np.add.reduce(mask, axis=dim, keepdims=True, dtype=grad.dtype)
            self.accumulate((grad / count) * mask)

        return _record(result, backward, self)


def _record(value: np.ndarray, backward: Any, *inputs: Var) -> Var:
    out = Var(value, any(v.requires_grad for v in inputs))
    if out.requires_grad:
        _tape.append((out, backward))
    return out


def _sum_to(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Undo a broadcast: sum the leading dims and those `shape` has as 1."""
    if grad.shape == shape:
        return grad
    lead = grad.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and grad.shape[lead + i] != 1
    )
    return np.add.reduce(grad, axis=dims, keepdims=True).reshape(shape)


def _unary(fn: Callable[[np.ndarray], np.ndarray], derivative: Any) -> Any:
    def op(x: Var) -> Var:
        result = fn(x.value)

        def backward(grad: np.ndarray) -> None:
            x.accumulate(derivative(grad, x.value, result))

        return _record(result, backward, x)

    return op


tanh = _unary(np.tanh, lambda grad, x, result: grad * (1 - result * result))
relu = _unary(lambda x: np.maximum(x, 0), lambda grad, x, result: grad * (result > 0))
exp = _unary(np.exp, lambda grad, x, result: grad * result)
log = _unary(np.log, lambda grad, x, result: grad / x)


def sum(x: Var, dim: int | None = None, keepdim: bool = False) -> Var:  # noqa: A001
    value = x.value
    result = np.add.reduce(value, axis=dim, keepdims=keepdim)

    def backward(grad: np.ndarray) -> None:
        if dim is not None and not keepdim:
            grad = np.expand_dims(grad, dim)
        x.accumulate(np.broadcast_to(grad, value.shape))

    return _record(result, backward, x)
