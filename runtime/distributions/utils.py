"""Helpers the distribution families share: broadcasting parameters, the
probs/logits pair, clamping probabilities away from 0 and 1, lazily computed
attributes, and packing lower-triangular matrices into vectors.

Everything here is made of yamlgrad's public ops, so a gradient through a
helper is the YAML entries' gradient.
"""

from __future__ import annotations

from functools import update_wrapper
from numbers import Number
from typing import Any, Callable

import yamlgrad as yg
from yamlgrad.runtime.autograd.tensor import Tensor

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """The values as tensors of one broadcast shape. Numbers become tensors of
    the first tensor's dtype (the default dtype when there is none)."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of numbers.Number, "
            "torch.Tensor or objects implementing __torch_function__."
        )
    like = next((v for v in values if isinstance(v, Tensor)), None)
    dtype = like.dtype if like is not None else yg.get_default_dtype()
    tensors = [
        v if isinstance(v, Tensor) else yg.tensor(v, dtype=dtype) for v in values
    ]
    return tuple(yg.broadcast_tensors(*tensors))


def _standard_normal(shape: Any, dtype: Any, device: Any = None) -> Tensor:
    return yg.randn(tuple(shape), dtype=dtype)


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """value summed over its `dim` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(*value.shape[: value.dim() - dim], -1).sum(-1)


def _of_base(name: str, levels: int = 1) -> property:
    """A property read from the wrapped distribution, `base_dist`, `levels`
    deep (LogisticNormal's loc is its Independent's Normal's)."""

    def read(self: Any) -> Any:
        d = self
        for _ in range(levels):
            d = d.base_dist
        return getattr(d, name)

    return property(read, doc=f"The base distribution's {name}.")


def clamp_probs(probs: Tensor) -> Tensor:
    """probs kept within [eps, 1 - eps] of its dtype."""
    eps = yg.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """sigmoid for a binary variable, else softmax along the last dimension."""
    if is_binary:
        return yg.sigmoid(logits)
    return yg.softmax(logits, dim=-1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """log p - log(1 - p) for a binary variable, else log p (the logits of a
    categorical are defined up to a constant)."""
    p = clamp_probs(probs)
    if is_binary:
        return yg.log(p) - yg.log1p(-p)
    return yg.log(p)


class lazy_property:
    """An attribute computed on first access from the instance's other
    attributes and then kept in its __dict__ (probs from logits and back)."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with yg.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What the class itself shows for a lazy_property: a property, so that
    documentation tools and `isinstance(..., property)` see one."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The entries of mat's lower triangle (from diagonal `diag`), row by row."""
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = _tril_positions(n, diag)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of tril_matrix_to_vec: a lower-triangular matrix whose
    triangle holds vec's entries."""
    m = vec.shape[-1]
    n = 0
    while len(_tril_positions(n, diag)[0]) < m:
        n += 1
    rows, cols = _tril_positions(n, diag)
    if len(rows) != m:
        raise ValueError(f"size of vec ({m}) is not a triangular number.")
    flat_index = yg.tensor([r * n + c for r, c in zip(rows, cols)])
    flat = yg.zeros(*vec.shape[:-1], n * n, dtype=vec.dtype)
    flat = _scatter_last(flat, flat_index, vec)
    return flat.reshape(*vec.shape[:-1], n, n)


def _scatter_last(flat: Tensor, index: Tensor, values: Tensor) -> Tensor:
    index = index.expand(*values.shape[:-1], index.shape[0])
    return flat.scatter(-1, index, values)


def _tril_positions(n: int, diag: int) -> tuple[list[int], list[int]]:
    rows: list[int] = []
    cols: list[int] = []
    for r in range(n):
        for c in range(n):
            if c - r <= diag:
                rows.append(r)
                cols.append(c)
    return rows, cols
