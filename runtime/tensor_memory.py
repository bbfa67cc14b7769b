"""A tensor's memory as PyTorch reports it: strides in elements, the storage
offset and address, the sizes of an element and of the data, resizing, the
element-wise Python callbacks (`apply_`, `map_`, `map2_`), and the flags of the
layouts and devices yamlgrad never makes (sparse, quantized, nested, mkldnn,
pinned: all False). The facade installs METHODS and PROPERTIES on Tensor.

Two decisions:

* A tensor's storage is the numpy array that owns its memory: the end of its
  array's `base` chain. Views of one storage report offsets into it and
  addresses inside it, as PyTorch's views do, and numpy's strides (in bytes)
  are reported in elements. An array of another backend has no address here;
  its strides, as an empty array's (numpy's are all 0), are row-major.
* `share_memory_` marks the storage (a tensor of one process is already where
  a forked worker reads it), so that `is_shared` answers for every view of it.
"""

from __future__ import annotations

import numbers
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from yamlgrad.runtime import backend, dtypes, factories
from yamlgrad.runtime.autograd.tensor import Size, Tensor
from yamlgrad.runtime.errors import (
    ERR_BOOL_AMBIGUOUS,
    ERR_BOOL_EMPTY,
    ERR_NO_ACCELERATOR,
    ERR_NO_STORAGE,
    ERR_RESIZE_REQUIRES_GRAD,
    warn_at_caller,
)
from yamlgrad.runtime.ops.common import _size_at
from yamlgrad.runtime.tensor_methods import type_

# -- storage ---------------------------------------------------------------------


def _storage(data: np.ndarray) -> np.ndarray:
    """The array that owns `data`'s memory."""
    owner = data
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    return owner


def _address(data: Any) -> int:
    if type(data) is np.ndarray:
        return int(data.__array_interface__["data"][0])
    memory = getattr(data, "data", None)  # CuPy's MemoryPointer
    if hasattr(memory, "ptr"):
        return int(memory.ptr)
    raise RuntimeError(ERR_NO_STORAGE)


def _row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def stride(self: Tensor, dim: int | None = None) -> tuple[int, ...] | int:
    """The step, in elements, between neighbours along each dim (`x.stride()`),
    or along `dim`.

    >>> yg.ones(2, 3).t().stride()
    (1, 3)
    """
    data = self._data
    if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int)):
        raise TypeError(
            "stride(): argument 'dim' (position 1) must be int, not "
            f"{type(dim).__name__}"
        )
    byte_strides = getattr(data, "strides", None)
    if byte_strides is None or data.size == 0:  # numpy's are 0 when empty
        strides = _row_major(tuple(data.shape))
    else:
        strides = tuple(s // data.itemsize for s in byte_strides)
    if dim is None:
        return strides
    _size_at(data, dim)
    return strides[dim]


def storage_offset(self: Tensor) -> int:
    """Where the first element lies in the storage, in elements."""
    data = self._data
    if type(data) is not np.ndarray:
        return 0
    return (_address(data) - _address(_storage(data))) // data.itemsize


def data_ptr(self: Tensor) -> int:
    """The address of the first element."""
    return _address(self._data)


def element_size(self: Tensor) -> int:
    """The size of one element, in bytes."""
    return int(self._data.dtype.itemsize)


def nbytes(self: Tensor) -> int:
    """numel() * element_size(): the bytes of the elements the tensor shows."""
    return int(self._data.size) * element_size(self)


def is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Whether both tensors show the same storage, offset, sizes and strides."""
    ours, theirs = self._data, tensor._data
    if type(ours) is not np.ndarray or type(theirs) is not np.ndarray:
        return ours is theirs
    return (
        _storage(ours) is _storage(theirs)
        and _address(ours) == _address(theirs)
        and ours.shape == theirs.shape
        and ours.strides == theirs.strides
    )


_shared: weakref.WeakValueDictionary[int, np.ndarray] = weakref.WeakValueDictionary()


def share_memory_(self: Tensor) -> Tensor:
    """Mark the storage shared (a no-op for the data); returns the tensor."""
    if type(self._data) is np.ndarray:
        owner = _storage(self._data)
        _shared[id(owner)] = owner
    return self


def is_shared(self: Tensor) -> bool:
    """Whether `share_memory_` was called on this storage."""
    if type(self._data) is not np.ndarray:
        return False
    return _shared.get(id(_storage(self._data))) is not None


def pin_memory(self: Tensor, device: Any = None) -> Tensor:
    """PyTorch's error: pinned memory needs an accelerator."""
    raise RuntimeError(ERR_NO_ACCELERATOR)


# -- facts about the values ------------------------------------------------------------


def is_signed(self: Tensor) -> bool:
    """Whether the dtype holds negative numbers (not uint8, not bool)."""
    return backend.dtype_kind(self._data.dtype) in "ifc"


def is_same_size(self: Tensor, other: Tensor) -> bool:
    return tuple(self.shape) == tuple(other.shape)


def is_nonzero(self: Tensor) -> bool:
    """The one element, as a bool; PyTorch's errors for none or several."""
    if self._data.size == 0:
        raise RuntimeError(ERR_BOOL_EMPTY)
    if self._data.size > 1:
        raise RuntimeError(ERR_BOOL_AMBIGUOUS)
    return bool(self.item())


# -- resizing ---------------------------------------------------------------------


def _sizes(sizes: tuple[Any, ...]) -> tuple[int, ...]:
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, Size)):
        sizes = tuple(sizes[0])
    shape = tuple(int(s) for s in sizes)
    if any(s < 0 for s in shape):
        raise RuntimeError("numel: integer multiplication overflow")
    return shape


def _storage_from_offset(data: np.ndarray) -> np.ndarray | None:
    """The storage from the tensor's first element on, in memory order, as a
    1-d view (None where the storage is not one block)."""
    owner = _storage(data)
    if not (owner.flags.c_contiguous or owner.flags.f_contiguous):
        return None
    flat = owner.ravel(order="K").view(data.dtype)
    start = (_address(data) - _address(owner)) // data.itemsize
    return flat[start:]


def resize_(
    self: Tensor, *sizes: Any, memory_format: Any = dtypes.contiguous_format
) -> Tensor:
    """Resize in place, as PyTorch's resize_: the elements are the storage's from
    the tensor's offset on, in memory order (the storage grows if it must; new
    elements are uninitialized). Refused on a tensor that requires grad.

    >>> yg.arange(6.).resize_(2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    if self.requires_grad:
        raise RuntimeError(ERR_RESIZE_REQUIRES_GRAD)
    shape = _sizes(sizes)
    layout = dtypes.memory_format_of(memory_format) or dtypes.contiguous_format
    if layout.rank is not None and len(shape) != layout.rank:
        raise RuntimeError(
            f"required rank {layout.rank} tensor to use {layout.name} format"
        )
    data = self._data
    if type(data) is not np.ndarray:
        raise RuntimeError(ERR_NO_STORAGE)
    count = int(np.prod(shape, dtype=np.int64))
    flat = _storage_from_offset(data)
    if flat is None or flat.size < count:
        grown = np.empty(count, dtype=data.dtype)
        old = flat if flat is not None else data.ravel()
        grown[: old.size] = old[:count]
        flat = grown
    if layout.rank is None:
        array = flat[:count].reshape(shape)
    else:  # the channels innermost: the storage holds (N, *spatial, C)
        moved = (shape[0], *shape[2:], shape[1])
        array = np.moveaxis(flat[:count].reshape(moved), -1, 1)
    self._set_data(array)
    self.version_counter.bump()
    return self


def resize_as_(
    self: Tensor, the_template: Tensor, *, memory_format: Any = None
) -> Tensor:
    """`resize_(the_template.size())`."""
    layout = dtypes.contiguous_format if memory_format is None else memory_format
    return resize_(self, tuple(the_template.shape), memory_format=layout)


def new_empty_strided(
    self: Tensor,
    size: Any,
    stride: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    **kwargs: Any,
) -> Tensor:
    """`empty_strided` in this tensor's dtype unless one is given."""
    return factories.empty_strided(
        size,
        stride,
        dtype=self.dtype if dtype is None else dtype,
        device=device,
        requires_grad=requires_grad,
        **kwargs,
    )


# -- Python callbacks per element ----------------------------------------------------------


def _python_values(
    name: str, fn: Callable[..., Any], self: Tensor, *others: Tensor
) -> None:
    """Write fn(self's element, others' elements...) into self, element by element."""
    labels = ("other",) if len(others) == 1 else ("x", "y")
    for t in (self, *others):
        if t.requires_grad:
            raise RuntimeError(
                f"Can't call {name}() on Variable that requires grad. Use "
                f"var.detach().{name}() instead."
            )
    data = self._data
    if type(data) is not np.ndarray:
        raise RuntimeError(f"{name}_ is only implemented on CPU tensors")
    operands = [data]
    for label, other in zip(labels, others):
        if other.dtype is not self.dtype:
            raise TypeError(
                f"{name}: expected {type_(self)} for '{label}' (got {type_(other)})"
            )
        operands.append(np.broadcast_to(other._data, data.shape))
    lists = [np.ravel(a).tolist() for a in operands]
    convert = _converter(data.dtype)
    results = [convert(fn(*values)) for values in zip(*lists)]
    data[...] = np.asarray(results, dtype=data.dtype).reshape(data.shape)


def _converter(np_dtype: np.dtype) -> Callable[[Any], Any]:
    kind = np_dtype.kind

    def convert(value: Any) -> Any:
        if not isinstance(value, numbers.Number) or (
            kind != "c" and isinstance(value, complex)
        ):
            raise TypeError(f"must be real number, not {type(value).__name__}")
        return value

    return convert


def apply_(self: Tensor, callable: Callable[[Any], Any]) -> Tensor:
    """Replace each element by `callable(element)` (CPU tensors, not requiring
    grad; slow: one Python call per element)."""
    _python_values("apply_", callable, self)
    return self


def map_(self: Tensor, tensor: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:
    """self[i] = callable(self[i], tensor[i]), `tensor` broadcast to self."""
    _python_values("map_", callable, self, tensor)
    return self


def map2_(
    self: Tensor, x: Tensor, y: Tensor, callable: Callable[[Any, Any, Any], Any]
) -> Tensor:
    """self[i] = callable(self[i], x[i], y[i]), x and y broadcast to self."""
    _python_values("map2_", callable, self, x, y)
    return self


def _false(self: Tensor) -> bool:
    return False


def volatile(self: Tensor) -> bool:
    """False, with PyTorch's warning that the flag was removed."""
    warn_at_caller("volatile was removed (Variable.volatile is always False)")
    return False


METHODS: dict[str, Callable[..., Any]] = {
    "stride": stride,
    "storage_offset": storage_offset,
    "data_ptr": data_ptr,
    "const_data_ptr": data_ptr,
    "element_size": element_size,
    "is_set_to": is_set_to,
    "share_memory_": share_memory_,
    "is_shared": is_shared,
    "pin_memory": pin_memory,
    "is_pinned": lambda self, device=None: False,
    "is_distributed": _false,
    "is_signed": is_signed,
    "is_same_size": is_same_size,
    "is_nonzero": is_nonzero,
    "resize_": resize_,
    "resize_as_": resize_as_,
    "new_empty_strided": new_empty_strided,
    "apply_": apply_,
    "map_": map_,
    "map2_": map2_,
}
# The layouts and devices a tensor here never has, as PyTorch's CPU tensors say.
_NEVER = (
    "is_sparse",
    "is_sparse_csr",
    "is_quantized",
    "is_nested",
    "is_mkldnn",
    "is_ipu",
    "is_maia",
    "is_mps",
    "is_mtia",
    "is_vulkan",
    "is_xla",
    "is_xpu",
)
PROPERTIES: dict[str, Callable[[Tensor], Any]] = {
    "layout": lambda self: dtypes.strided,
    "itemsize": element_size,
    "nbytes": nbytes,
    "volatile": volatile,
    **{name: _false for name in _NEVER},
}
