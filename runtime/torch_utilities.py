"""torch's top-level utilities that are not ops: the triangle index factories,
`asarray` (which shares memory where it can), the deprecated inclusive `range`,
`typename` and `is_storage`, and the linear-algebra functions PyTorch removed
(solve, lstsq, symeig, eig, matrix_rank), which raise PyTorch's texts pointing
to their torch.linalg successors. Each made tensor is a leaf.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime import dtypes, factories
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.errors import (
    ERR_REMOVED_EIG,
    ERR_REMOVED_LSTSQ,
    ERR_REMOVED_MATRIX_RANK,
    ERR_REMOVED_SOLVE,
    ERR_REMOVED_SYMEIG,
    ERR_READ_ONLY_BUFFER,
    scalar_type_name,
    warn_at_caller,
)
from yamlgrad.runtime.tensor_methods import type_

__all__ = [
    "tril_indices",
    "triu_indices",
    "empty_permuted",
    "frombuffer",
    "asarray",
    "range",
    "typename",
    "is_storage",
    "is_vulkan_available",
    "solve",
    "lstsq",
    "symeig",
    "eig",
    "matrix_rank",
]

# -- factories ------------------------------------------------------------------


def _triangle_indices(
    name: str, lower: bool, row: int, col: int, offset: int, dtype: Any, device: Any
) -> Tensor:
    for label, value in (("row", row), ("col", col)):
        if value < 0:
            raise RuntimeError(f"{label} must be non-negative, got{value}")
    np_dtype = dtypes.to_numpy(dtype)
    if np_dtype.kind not in "iu":
        raise NotImplementedError(
            f"\"{name}\" not implemented for '{scalar_type_name(np_dtype)}'"
        )
    pick = np.tril_indices if lower else np.triu_indices
    rows, cols = pick(row, offset, col)
    array = np.stack([rows, cols]).astype(np_dtype)
    return factories._leaf(array, False, device)


def tril_indices(
    row: int,
    col: int,
    offset: int = 0,
    *,
    dtype: Any = dtypes.int64,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """The (row, column) indices of the lower triangle of a row x col matrix
    (with the `offset`-th diagonal), row by row, as a 2 x N tensor.

    >>> yg.tril_indices(2, 2)
    tensor([[0, 1, 1],
            [0, 0, 1]])
    """
    return _triangle_indices("tril_indices", True, row, col, offset, dtype, device)


def triu_indices(
    row: int,
    col: int,
    offset: int = 0,
    *,
    dtype: Any = dtypes.int64,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """The (row, column) indices of the upper triangle of a row x col matrix
    (from the `offset`-th diagonal), row by row, as a 2 x N tensor."""
    return _triangle_indices("triu_indices", False, row, col, offset, dtype, device)


def empty_permuted(
    size: Any,
    physical_layout: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """An uninitialized tensor of `size` whose dims lie in memory in the order
    `physical_layout` names, outermost first (`empty_permuted((2, 3, 4), (0, 2,
    1))` has strides (12, 1, 3))."""
    shape, order = tuple(size), tuple(physical_layout)
    if len(shape) != len(order):
        raise RuntimeError(
            "Number of dimensions in size does not match the length of the "
            f"physical_layout; i.e. len(size) = {len(shape)} is not equal to "
            f"len(physical_layout) = {len(order)}"
        )
    stored = factories.empty(*(shape[d] for d in order), dtype=dtype)._data
    array = np.transpose(stored, np.argsort(order))
    return factories._leaf(array, requires_grad, device)


_warned_read_only = [False]


def frombuffer(
    buffer: Any,
    *,
    dtype: Any,
    count: int = -1,
    offset: int = 0,
    requires_grad: bool = False,
) -> Tensor:
    """A 1-d tensor over the memory of an object of the buffer protocol (shared,
    not copied): `count` elements of `dtype` from byte `offset` (-1: all)."""
    view = memoryview(buffer)
    np_dtype = dtypes.to_numpy(dtype)
    length = view.nbytes
    if length == 0 or count == 0:
        raise ValueError(
            f"both buffer length ({length}) and count ({count}) must not be 0"
        )
    if count < 0 and (length - offset) % np_dtype.itemsize:
        raise ValueError(
            f"buffer length ({length - offset} bytes) after offset ({offset} bytes) "
            f"must be a multiple of element size ({np_dtype.itemsize})"
        )
    if view.readonly and not _warned_read_only[0]:
        _warned_read_only[0] = True
        warn_at_caller(ERR_READ_ONLY_BUFFER)
    array = np.frombuffer(buffer, dtype=np_dtype, count=count, offset=offset)
    return factories._leaf(array, requires_grad)


def asarray(
    obj: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    copy: bool | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """`obj` as a tensor, sharing its memory where it can: a tensor is returned
    itself, a numpy array (or another buffer) wrapped, unless a dtype change or
    `copy=True` makes a copy; `copy=False` refuses to copy. Sequences and
    numbers are copied, as `tensor` makes them."""
    if isinstance(obj, Tensor):
        if dtype is None or obj.dtype is dtype:
            return factories.tensor(obj._data, dtype=obj.dtype) if copy else obj
        if copy is False:
            raise ValueError(
                f"can't alias tensor with dtype '{scalar_type_name(obj._data.dtype)}'"
                f" into dtype '{scalar_type_name(dtypes.to_numpy(dtype))}'."
            )
        return obj.to(dtype)
    if isinstance(obj, np.ndarray) or hasattr(obj, "__array_interface__"):
        array = np.asarray(obj)
        wanted = array.dtype if dtype is None else dtypes.to_numpy(dtype)
        if copy is False and wanted != array.dtype:
            raise ValueError(
                f"can't alias tensor with dtype '{scalar_type_name(array.dtype)}' "
                f"into dtype '{scalar_type_name(wanted)}'."
            )
        array = array.astype(wanted, copy=bool(copy))
        return factories._leaf(array, requires_grad, device)
    if copy is False:
        raise ValueError("can't alias arbitrary sequence into a tensor.")
    return factories.tensor(
        obj, dtype=dtype, device=device, requires_grad=requires_grad
    )


def range(  # noqa: A001 - PyTorch's name
    start: Any = 0,
    end: Any = None,
    step: Any = 1,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The deprecated inclusive range [start, end] by `step`, in the default
    float dtype unless one is given, with PyTorch's warning."""
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    warn_at_caller(
        "torch.range is deprecated and will be removed in a future release because "
        "its behavior is inconsistent with Python's range builtin. Instead, use "
        "torch.arange, which produces values in [start, end)."
    )
    start, end, step = (float(v) for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    count = math.floor((end - start) / step) + 1
    values = start + step * np.arange(count, dtype=np.float64)
    np_dtype = (dtypes.DEFAULT_FLOAT if dtype is None else dtype).np
    return factories._leaf(values.astype(np_dtype), requires_grad, device)


# -- type facts -------------------------------------------------------------------


def typename(obj: Any) -> str:
    """A tensor's legacy type name ('yamlgrad.FloatTensor'), else the object's
    qualified class name."""
    if isinstance(obj, Tensor):
        return type_(obj)
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in (None, "builtins") else f"{module}.{name}"


def is_vulkan_available() -> bool:
    return False


def is_storage(obj: Any) -> bool:
    """False: yamlgrad has no storage objects (a tensor's memory is its array)."""
    return False


# -- removed linear algebra -----------------------------------------------------------


def solve(input: Tensor, A: Tensor, *, out: Any = None) -> Any:
    raise RuntimeError(ERR_REMOVED_SOLVE)


def lstsq(input: Tensor, A: Tensor, *, out: Any = None) -> Any:
    raise RuntimeError(ERR_REMOVED_LSTSQ)


def symeig(
    input: Tensor, eigenvectors: bool = False, upper: bool = True, *, out: Any = None
) -> Any:
    raise RuntimeError(ERR_REMOVED_SYMEIG)


def eig(
    self: Tensor, eigenvectors: bool = False, *, e: Any = None, v: Any = None
) -> Any:
    raise RuntimeError(ERR_REMOVED_EIG)


def matrix_rank(
    input: Tensor, tol: Any = None, symmetric: bool = False, *, out: Any = None
) -> Any:
    raise RuntimeError(ERR_REMOVED_MATRIX_RANK)


# Tensor methods PyTorch removed with them.
METHODS = {"solve": solve, "lstsq": lstsq, "symeig": symeig, "eig": eig}
