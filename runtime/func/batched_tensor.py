"""BatchedTensor: a tensor seen by one vmap level without its batch dimension.

PyTorch's functorch wraps each tensor a vmap maps over in a BatchedTensorImpl: the
wrapper holds the underlying `value` (which still has the batch dim), the batch
dim's position `bdim`, and the `level` of the vmap that owns it. Its shape is the
value's without `bdim`, so code inside vmap sees one sample. Every generated
wrapper asks `interposed` first (runtime/wrappers/interposition.py) and sends a
BatchedTensor to the batching rules (batching_rules.py), which work on the values
and wrap the results again.

Nested vmaps nest wrappers: a level-2 BatchedTensor's value may be a level-1
BatchedTensor, whose value is an ordinary Tensor holding both batch dims, the
"physical" tensor. Autograd only ever sees physical tensors, which is how
func.grad composes with vmap (eager_transforms.py).
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

from yamlgrad.runtime import dtypes
from yamlgrad.runtime.autograd.tensor import Size, Tensor
from yamlgrad.runtime.errors import (
    ERR_VMAP_ITEM,
    ERR_VMAP_CONTROL_FLOW,
    ERR_NO_STORAGE,
)


class LogicalData:
    """What a composite may read of a sample's ndarray (shape, dtype, layout)
    without the ndarray, which does not exist: the sample counts as contiguous,
    so reshape and contiguous take their view path, which the rules batch.
    Anything else refuses, as a tensor without storage does."""

    __slots__ = ("shape", "dtype")
    flags = SimpleNamespace(c_contiguous=True, f_contiguous=False)

    def __init__(self, shape: tuple[int, ...], dtype: Any) -> None:
        self.shape = shape
        self.dtype = dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(ERR_NO_STORAGE)

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(ERR_NO_STORAGE)


class BatchedTensor(Tensor):
    """`value` with its dim `bdim` mapped over by the vmap of `level`."""

    __slots__ = ("_value", "_bdim", "_batch_level")

    def __init__(self, value: Tensor, bdim: int, level: int) -> None:  # noqa: D107
        self._value = value
        self._bdim = bdim
        self._batch_level = level

    @property
    def _data(self) -> LogicalData:
        return LogicalData(tuple(self.shape), self._value._data.dtype)

    @property
    def shape(self) -> Size:
        physical = self._value.shape
        return Size(physical[: self._bdim] + physical[self._bdim + 1 :])

    def size(self, dim: int | None = None) -> Size | int:
        return self.shape if dim is None else self.shape[dim]

    @property
    def dtype(self) -> dtypes.dtype:
        return self._value.dtype

    @property
    def ndim(self) -> int:
        return self._value.ndim - 1

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return self.shape.numel()

    def __len__(self) -> int:
        if not self.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def is_floating_point(self) -> bool:
        return self._value.is_floating_point()

    # -- autograd facts are the value's ------------------------------------------

    @property
    def requires_grad(self) -> bool:
        return self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._value.requires_grad = value

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self._value.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self) -> Any:
        return self._value.grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._value.is_leaf

    def detach(self) -> Tensor:
        return BatchedTensor(self._value.detach(), self._bdim, self._batch_level)

    # -- what needs a value per sample ---------------------------------------------

    def item(self) -> Any:
        raise RuntimeError(ERR_VMAP_ITEM)

    def tolist(self) -> Any:
        raise RuntimeError(ERR_VMAP_ITEM)

    def __bool__(self) -> bool:
        raise RuntimeError(ERR_VMAP_CONTROL_FLOW)

    def __float__(self) -> float:
        raise RuntimeError(ERR_VMAP_ITEM)

    def __int__(self) -> int:
        raise RuntimeError(ERR_VMAP_ITEM)

    def __index__(self) -> int:
        raise RuntimeError(ERR_VMAP_ITEM)

    def numpy(self) -> Any:
        raise RuntimeError(ERR_NO_STORAGE)

    def __repr__(self) -> str:
        return (
            f"BatchedTensor(lvl={self._batch_level}, bdim={self._bdim}, "
            f"value=\n{self._value!r}\n)"
        )


def is_batched_at(value: Any, level: int) -> bool:
    """Whether `value` is a BatchedTensor of vmap `level` (the outermost wrapper)."""
    return isinstance(value, BatchedTensor) and value._batch_level == level


def unwrap_physical(t: Tensor) -> tuple[Tensor, list[tuple[int, int]]]:
    """The physical tensor under every wrapper, and the (level, bdim) of each
    wrapper from the innermost out."""
    chain = []
    while isinstance(t, BatchedTensor):
        chain.append((t._batch_level, t._bdim))
        t = t._value
    chain.reverse()
    return t, chain


def rewrap(physical: Tensor, chain: list[tuple[int, int]]) -> Tensor:
    """`unwrap_physical` undone: wrap `physical` in the chain, innermost first."""
    for level, bdim in chain:
        physical = BatchedTensor(physical, bdim, level)
    return physical
