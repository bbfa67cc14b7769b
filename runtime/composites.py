"""Helpers that `composite:` entries in derivatives.yaml may call on Tensors.

A composite's body is one expression over other ops; these cover what one
expression cannot, such as mapping over a `Tensor[]` (`vstack` lifts each input to
at least 2-d first, as PyTorch's does). They call the generated ops through
`formulas.ops`, so everything they do is recorded. The generator reads `__all__`
with ast; calls are emitted as `composites.<name>`.
"""

from __future__ import annotations

from typing import Any

from yamlgrad.runtime import formulas
from yamlgrad.runtime.tensor import Tensor

__all__ = ["atleast_1d_each", "atleast_2d_each", "tensordot_via_mm"]


def atleast_1d_each(tensors: list[Tensor]) -> list[Any]:
    """Each tensor with at least one dim (a 0-d one becomes shape (1,))."""
    return [formulas.ops.reshape(t, (1,)) if t.ndim == 0 else t for t in tensors]


def atleast_2d_each(tensors: list[Tensor]) -> list[Any]:
    """Each tensor with at least two dims: (n,) -> (1, n), () -> (1, 1)."""
    out = []
    for t in tensors:
        if t.ndim == 0:
            t = formulas.ops.reshape(t, (1, 1))
        elif t.ndim == 1:
            t = formulas.ops.unsqueeze(t, 0)
        out.append(t)
    return out


def tensordot_via_mm(
    self: Tensor, other: Tensor, dims_self: tuple[int, ...], dims_other: tuple[int, ...]
) -> Any:
    """Contract `dims_self` of `self` with `dims_other` of `other`, as PyTorch's
    tensordot does: permute and flatten both into matrices, `mm`, then view the
    result back (ViewBackward0 over MmBackward0)."""
    ops = formulas.ops
    if len(dims_self) != len(dims_other):
        raise RuntimeError("both dimension lists should have same length")
    dims_a = [d % max(self.ndim, 1) for d in dims_self]
    dims_b = [d % max(other.ndim, 1) for d in dims_other]
    for da, db in zip(dims_a, dims_b):
        if self.shape[da] != other.shape[db]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size "
                f"{self.shape[da]} in dim {da} and second has size {other.shape[db]} "
                f"in dim {db}"
            )
    free_a = [d for d in range(self.ndim) if d not in dims_a]
    free_b = [d for d in range(other.ndim) if d not in dims_b]
    size = 1
    for d in dims_a:
        size *= self.shape[d]
    out_shape = tuple(self.shape[d] for d in free_a) + tuple(
        other.shape[d] for d in free_b
    )
    rows = 1
    for d in free_a:
        rows *= self.shape[d]
    a = ops.reshape(ops.permute(self, free_a + dims_a), (rows, size))
    b = ops.reshape(ops.permute(other, dims_b + free_b), (size, -1))
    return ops.reshape(ops.mm(a, b), out_shape)
