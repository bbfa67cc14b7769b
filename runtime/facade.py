"""The public API: what `import yamlgrad as yg` offers, in PyTorch's spelling.

(The generated ops are star-imported here, so inside this module `sum`, `max`,
`min` and `abs` are yamlgrad ops, not the builtins.)

This is the one runtime module that imports generated/: it re-exports the generated
ops (`yg.exp`, `yg.pow`, ...), installs them as Tensor methods and operators (as
PyTorch's `_tensor.py` and `python_variable_methods.cpp` do), binds the Tensor side
of the formula helpers, and adds the factories.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from yamlgrad.generated import VariableType
from yamlgrad.generated.VariableType import *  # noqa: F403 - the generated ops
from yamlgrad.runtime import autograd, copy_slices, dtypes, formulas, indexing
from yamlgrad.runtime.dtypes import (
    bool_,
    double,
    dtype,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    long,
    short,
    uint8,
)
from yamlgrad.runtime.grad_mode import (
    enable_grad,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from yamlgrad.runtime.tensor import Size, Tensor

formulas.bind_ops(VariableType)

_FACTORY_EXPORTS = [
    "tensor",
    "as_tensor",
    "from_numpy",
    "zeros",
    "ones",
    "zeros_like",
    "ones_like",
]

__all__ = [
    *VariableType.__all__,
    *_FACTORY_EXPORTS,
    "Tensor",
    "Size",
    "autograd",
    "linalg",
    "nn",
    "ops",
    "dtype",
    "float16",
    "float32",
    "float64",
    "half",
    "double",
    "int8",
    "int16",
    "int32",
    "int64",
    "long",
    "short",
    "uint8",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
]


# -- factories ---------------------------------------------------------------------


def _default_dtype(data: Any, array: np.ndarray) -> np.dtype:
    """PyTorch's inference: Python floats -> float32; numpy keeps its own dtype."""
    if isinstance(data, (np.ndarray, np.generic)):
        return array.dtype
    if array.dtype == np.float64:
        return dtypes.DEFAULT_FLOAT.np
    return array.dtype


def tensor(
    data: Any, *, dtype: dtypes.dtype | None = None, requires_grad: bool = False
) -> Tensor:
    """A new tensor holding a copy of `data` (a number, nested lists, or an ndarray).

    >>> yg.tensor([1.0, 2.0], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    """
    if isinstance(data, Tensor):
        data = data._data
    array = np.array(data, copy=True)
    np_dtype = (
        dtypes.to_numpy(dtype) if dtype is not None else _default_dtype(data, array)
    )
    out = Tensor._make(array.astype(np_dtype, copy=False))
    if requires_grad:
        out.requires_grad = True
    return out


def as_tensor(data: Any, dtype: dtypes.dtype | None = None) -> Tensor:
    """Like `tensor`, but shares memory with an ndarray or Tensor when it can."""
    if isinstance(data, Tensor) and (
        dtype is None or data._data.dtype == dtypes.to_numpy(dtype)
    ):
        return data
    if isinstance(data, np.ndarray) and (
        dtype is None or data.dtype == dtypes.to_numpy(dtype)
    ):
        return Tensor._make(data)
    return tensor(data, dtype=dtype)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with `array`."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dtypes.from_numpy(array.dtype)
    return Tensor._make(array)


def _size(size: tuple[Any, ...]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


def _filled(
    fill: Any, size: tuple[int, ...], dtype: Any, requires_grad: bool
) -> Tensor:
    np_dtype = dtypes.to_numpy(dtype) if dtype is not None else dtypes.DEFAULT_FLOAT.np
    out = Tensor._make(np.full(size, fill, dtype=np_dtype))
    if requires_grad:
        out.requires_grad = True
    return out


def zeros(
    *size: Any, dtype: dtypes.dtype | None = None, requires_grad: bool = False
) -> Tensor:
    """A tensor of zeros: `yg.zeros(2, 3)` or `yg.zeros((2, 3))`."""
    return _filled(0, _size(size), dtype, requires_grad)


def ones(
    *size: Any, dtype: dtypes.dtype | None = None, requires_grad: bool = False
) -> Tensor:
    """A tensor of ones: `yg.ones(2, 3)` or `yg.ones((2, 3))`."""
    return _filled(1, _size(size), dtype, requires_grad)


def zeros_like(
    t: Tensor, *, dtype: dtypes.dtype | None = None, requires_grad: bool = False
) -> Tensor:
    return _filled(0, t._data.shape, dtype or t.dtype, requires_grad)


def ones_like(
    t: Tensor, *, dtype: dtypes.dtype | None = None, requires_grad: bool = False
) -> Tensor:
    return _filled(1, t._data.shape, dtype or t.dtype, requires_grad)


# -- Tensor methods and operators ----------------------------------------------------


def _to(self: Tensor, dtype: dtypes.dtype) -> Tensor:
    """`x.to(dtype)`: x itself when the dtype already matches, else a recorded copy."""
    if self._data.dtype == dtypes.to_numpy(dtype):
        return self
    return VariableType._to_copy(self, dtype=dtype)


def _rtruediv(self: Tensor, other: Any) -> Tensor:
    # PyTorch computes `2 / x` as `reciprocal(x) * 2` (MulBackward0).
    return VariableType.mul(VariableType.reciprocal(self), other)


def _rsub(self: Tensor, other: Any) -> Tensor:
    return VariableType.rsub(self, other)


def _rpow(self: Tensor, other: Any) -> Tensor:
    return VariableType.pow(other, self)


def _rmatmul(self: Tensor, other: Any) -> Tensor:
    return VariableType.matmul(other, self)


def _rmod(self: Tensor, other: Any) -> Tensor:
    """`2 % x`: remainder.Tensor with the number wrapped (RemainderBackward1).

    PyTorch routes it to remainder.Scalar_Tensor, which has no derivative (its node
    is NotImplemented); here the gradient w.r.t. x is -grad * floor(2 / x).
    """
    return VariableType.remainder(other, self)


def _transposed(self: Tensor) -> Tensor:
    """`x.T`: the dims reversed (PermuteBackward0, as in PyTorch)."""
    return VariableType.permute(self, tuple(range(self._data.ndim - 1, -1, -1)))


_OPERATORS = {
    "__add__": VariableType.add,
    "__radd__": VariableType.add,
    "__sub__": VariableType.sub,
    "__rsub__": _rsub,
    "__mul__": VariableType.mul,
    "__rmul__": VariableType.mul,
    "__truediv__": VariableType.div,
    "__rtruediv__": _rtruediv,
    "__mod__": VariableType.remainder,
    "__rmod__": _rmod,
    "__pow__": VariableType.pow,
    "__rpow__": _rpow,
    "__matmul__": VariableType.matmul,
    "__rmatmul__": _rmatmul,
    "__neg__": VariableType.neg,
    "__abs__": VariableType.abs,
    "__iadd__": VariableType.add_,
    "__isub__": VariableType.sub_,
    "__imul__": VariableType.mul_,
    "__itruediv__": VariableType.div_,
    "__ipow__": VariableType.pow_,
    "__eq__": VariableType.eq,
    "__ne__": VariableType.ne,
    "__lt__": VariableType.lt,
    "__le__": VariableType.le,
    "__gt__": VariableType.gt,
    "__ge__": VariableType.ge,
}


def _install_tensor_methods() -> None:
    for name, fn in VariableType.METHODS.items():
        setattr(Tensor, name, fn)
    for name, fn in _OPERATORS.items():
        setattr(Tensor, name, fn)
    Tensor.to = _to  # type: ignore[attr-defined]
    Tensor.__getitem__ = indexing.getitem  # type: ignore[method-assign]
    Tensor.__setitem__ = copy_slices.setitem  # type: ignore[method-assign]
    Tensor.T = property(_transposed)  # type: ignore[attr-defined]
    for name, target in (
        ("float", dtypes.float32),
        ("double", dtypes.float64),
        ("half", dtypes.float16),
        ("long", dtypes.int64),
        ("int", dtypes.int32),
        ("bool", dtypes.bool_),
    ):
        setattr(Tensor, name, lambda self, _t=target: _to(self, _t))


_install_tensor_methods()


# -- yg.ops.<name>.<overload> ------------------------------------------------------

ops = SimpleNamespace(
    **{name: SimpleNamespace(**group) for name, group in VariableType.OVERLOADS.items()}
)


# -- yg.linalg ---------------------------------------------------------------------

linalg = SimpleNamespace(
    vector_norm=VariableType.linalg_vector_norm,
    inv=VariableType.linalg_inv,
    det=VariableType.linalg_det,
    diagonal=VariableType.linalg_diagonal,
)
"""`torch.linalg`'s spelling: `yg.linalg.vector_norm(x, 2, dim=1)` is the
`linalg_vector_norm` op (LinalgVectorNormBackward0), `yg.linalg.inv`, `yg.linalg.det`."""


# -- yg.nn.functional --------------------------------------------------------------

nn = SimpleNamespace(functional=SimpleNamespace(pad=VariableType.pad))
"""`torch.nn.functional`'s spelling for what yamlgrad has: `yg.nn.functional.pad(x,
(1, 1))` is constant padding (ConstantPadNdBackward0), as in PyTorch."""
