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

__all__ = ["atleast_1d_each", "atleast_2d_each"]


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
