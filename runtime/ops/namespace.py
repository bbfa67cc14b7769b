"""The array namespace a backward helper computes in: numpy, or the recorded ops.

A backward helper runs on ndarrays in a first-order backward and on Tensors under
`create_graph=True`. Rather than branch on `isinstance(x, Tensor)`, it asks

    xp = array_namespace(grad, x)
    return xp.sum(xp.where(mask, grad, 0), axis=dims, keepdims=True)

and gets the `numpy` module itself for ndarrays and numbers (so the first-order
path is plain numpy: no wrapper call, no Tensor, no dtype detour), or
`TENSOR_NAMESPACE`, whose functions have numpy's names and signatures but call the
recorded yamlgrad ops through runtime/dispatch.py (so a double backward
differentiates what the helper computed).

Names follow numpy and the array API standard (`permute_dims`, `axis=`,
`keepdims=`), the seam for other array libraries (Dask, CuPy): a backend is one
more namespace object with these names. Only names some helper uses are here;
an op with no numpy counterpart (gather, index_select, convolution) stays a
function of its family module that takes either kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops


def array_namespace(x: Any, *others: Any) -> Any:
    """`TENSOR_NAMESPACE` if any value is a Tensor, else numpy.

    The first value is tested before any loop: a helper of one operand (most of
    them) pays about one isinstance, which keeps the numpy path as fast as the
    branch it replaces."""
    if isinstance(x, Tensor):
        return TENSOR_NAMESPACE
    if others:
        for value in others:
            if isinstance(value, Tensor):
                return TENSOR_NAMESPACE
    return np


def _axes(axis: int | Sequence[int]) -> tuple[int, ...]:
    return (axis,) if isinstance(axis, int) else tuple(axis)


class _TensorNamespace:
    """numpy's functions, by name and signature, as recorded yamlgrad ops."""

    @staticmethod
    def sum(
        x: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False
    ) -> Any:
        if axis is None:
            return ops.sum(x)
        return ops.sum(x, _axes(axis), keepdims)

    @staticmethod
    def prod(x: Any, axis: int, keepdims: bool = False) -> Any:
        return ops.prod(x, axis, keepdims)

    @staticmethod
    def cumsum(x: Any, axis: int) -> Any:
        return ops.cumsum(x, axis)

    @staticmethod
    def cumprod(x: Any, axis: int) -> Any:
        return ops.cumprod(x, axis)

    @staticmethod
    def where(condition: Any, x: Any, y: Any) -> Any:
        # An ndarray condition is a mask, a constant (never differentiated), as
        # numpy takes any array-like.
        if not isinstance(condition, Tensor):
            condition = Tensor._make(np.asarray(condition))
        return ops.where(condition, x, y)

    @staticmethod
    def maximum(x1: Any, x2: Any) -> Any:
        # Against a number, PyTorch's clamp_min (ClampMinBackward0).
        if isinstance(x2, (int, float)):
            return ops.clamp_min(x1, x2)
        return ops.maximum(x1, x2)

    @staticmethod
    def sign(x: Any) -> Any:
        return ops.sign(x)

    @staticmethod
    def abs(x: Any) -> Any:
        return ops.abs(x)

    @staticmethod
    def reshape(x: Any, shape: Sequence[int]) -> Any:
        return ops.reshape(x, shape)

    @staticmethod
    def permute_dims(x: Any, axes: Sequence[int]) -> Any:
        return ops.permute(x, axes)

    @staticmethod
    def stack(arrays: Sequence[Any], axis: int = 0) -> Any:
        return ops.stack(list(arrays), axis)

    @staticmethod
    def outer(a: Any, b: Any) -> Any:
        return ops.outer(a, b)

    @staticmethod
    def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        return ops.diagonal(x, offset, axis1, axis2)

    @staticmethod
    def tril(x: Any, k: int = 0) -> Any:
        return ops.tril(x, k)

    @staticmethod
    def triu(x: Any, k: int = 0) -> Any:
        return ops.triu(x, k)


TENSOR_NAMESPACE = _TensorNamespace()
