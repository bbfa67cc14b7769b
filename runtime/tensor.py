"""Tensor: a numpy ndarray plus PyTorch's autograd metadata.

The metadata is PyTorch's AutogradMeta, flattened into slots: `requires_grad`,
`grad`, `grad_fn`, `output_nr`, the version counter, and a weak reference to the
leaf's AccumulateGrad node (created on first use and shared by every op that reads
the leaf, as PyTorch's `grad_accumulator` is).

Decisions:

* A tensor is a leaf when it has no `grad_fn`; every tensor that does not require
  grad is a leaf.
* The version counter is created lazily: most tensors are never saved for backward,
  and an object per tensor is not free. `detach()` shares it, as in PyTorch.
* The operators and most methods (`x * y`, `x.sum()`) are generated wrappers that
  the package facade installs on this class; this module never imports generated/.
"""

from __future__ import annotations

import warnings
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from yamlgrad.runtime import dtypes
from yamlgrad.runtime.errors import (
    ERR_BOOL_AMBIGUOUS,
    ERR_ITEM_NUMEL,
    ERR_NUMPY_REQUIRES_GRAD,
    ERR_REQUIRES_GRAD_DTYPE,
    ERR_REQUIRES_GRAD_NON_LEAF,
    WARN_NON_LEAF_GRAD,
)

if TYPE_CHECKING:
    from yamlgrad.runtime.node import Node


class Size(tuple):
    """A tensor's shape: a tuple that prints as `yamlgrad.Size([2, 3])`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"yamlgrad.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


class VersionCounter:
    """How many times a tensor's data was modified in place (`t._version`)."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0

    def bump(self) -> None:
        self.value += 1


class Tensor:
    """An n-dimensional array that can record the operations applied to it."""

    __slots__ = (
        "_data",
        "_requires_grad",
        "grad_fn",
        "output_nr",
        "_version_counter",
        "_grad",
        "_grad_accumulator",
        "_retains_grad",
        "__weakref__",
    )

    def __init__(self, data: Any, *, requires_grad: bool = False) -> None:
        self._data = data if type(data) is np.ndarray else np.asarray(data)
        self._requires_grad = False
        self.grad_fn: Node | None = None
        self.output_nr = 0
        self._version_counter: VersionCounter | None = None
        self._grad: Tensor | None = None
        self._grad_accumulator: weakref.ref | None = None
        self._retains_grad = False
        if requires_grad:
            self.requires_grad = True

    @classmethod
    def _make(cls, value: Any) -> Tensor:
        """A new leaf around a kernel's result (which may be a numpy scalar)."""
        t = cls.__new__(cls)
        t._data = value if type(value) is np.ndarray else np.asarray(value)
        t._requires_grad = False
        t.grad_fn = None
        t.output_nr = 0
        t._version_counter = None
        t._grad = None
        t._grad_accumulator = None
        t._retains_grad = False
        return t

    # -- autograd metadata -------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self.grad_fn is not None:
            raise RuntimeError(ERR_REQUIRES_GRAD_NON_LEAF)
        if value and self._data.dtype.kind not in "fc":
            raise RuntimeError(ERR_REQUIRES_GRAD_DTYPE)
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self) -> Tensor | None:
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn(WARN_NON_LEAF_GRAD, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError("assigned grad has data of a different size")
        self._grad = value

    @property
    def version_counter(self) -> VersionCounter:
        if self._version_counter is None:
            self._version_counter = VersionCounter()
        return self._version_counter

    @property
    def _version(self) -> int:
        return 0 if self._version_counter is None else self._version_counter.value

    def detach(self) -> Tensor:
        """A tensor on the same data and version counter, outside the graph."""
        out = Tensor._make(self._data)
        out._version_counter = self.version_counter
        return out

    def detach_(self) -> Tensor:
        self.grad_fn = None
        self.output_nr = 0
        self._requires_grad = False
        return self

    @property
    def data(self) -> Tensor:
        """The same storage without autograd history (and its own version counter)."""
        return Tensor._make(self._data)

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's `.grad`."""
        from yamlgrad.runtime import autograd

        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # -- array facts -------------------------------------------------------------

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Size | int:
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[dim]

    @property
    def dtype(self) -> dtypes.dtype:
        return dtypes.from_numpy(self._data.dtype)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def numpy(self) -> np.ndarray:
        """The ndarray itself (shared memory), as `torch.Tensor.numpy`."""
        if self._requires_grad:
            raise RuntimeError(ERR_NUMPY_REQUIRES_GRAD)
        return self._data

    def item(self) -> int | float | bool:
        if self._data.size != 1:
            raise RuntimeError(ERR_ITEM_NUMEL.format(numel=self._data.size))
        return self._data.reshape(()).item()

    def tolist(self) -> Any:
        return self._data.tolist()

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(ERR_BOOL_AMBIGUOUS)
        return bool(self._data.reshape(()))

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iu" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return format_tensor(self)


def _format_data(a: np.ndarray) -> str:
    if a.dtype.kind == "f" and a.size:
        finite = a[np.isfinite(a)]
        integral = finite.size == 0 or bool(np.all(finite == np.round(finite)))
        big = finite.size and float(np.max(np.abs(finite))) >= 1e8
        small = finite.size and 0 < float(np.min(np.abs(finite[finite != 0]), initial=np.inf)) < 1e-4
        if big or small:
            formatter = {"float_kind": lambda v: f"{v:.4e}"}
        elif integral:
            formatter = {"float_kind": lambda v: f"{v:.0f}."}
        else:
            formatter = {"float_kind": lambda v: f"{v:.4f}"}
        return np.array2string(a, separator=", ", prefix="tensor(", formatter=formatter)
    return np.array2string(a, separator=", ", prefix="tensor(")


def format_tensor(t: Tensor) -> str:
    """PyTorch's repr: `tensor([1., 2.], dtype=yamlgrad.float64, grad_fn=<MulBackward0>)`."""
    a = t._data
    text = _format_data(a) if a.size else "[]"
    extras = []
    if a.size == 0 and a.shape != (0,):
        extras.append(f"size={tuple(a.shape)}")
    default = a.dtype in (np.dtype(np.float32), np.dtype(np.int64), np.dtype(np.bool_))
    if not default:
        extras.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:
        extras.append("requires_grad=True")
    suffix = "".join(f", {e}" for e in extras)
    return f"tensor({text}{suffix})"
