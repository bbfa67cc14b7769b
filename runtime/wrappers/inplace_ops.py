"""The hand-written in-place ops: `Tensor.copy_` and `x[key] = value`.

Both write into existing memory and, when autograd is involved, record
CopyBackwards (the node PyTorch gives `copy_`): on a whole tensor it becomes the
tensor's grad_fn; on a view or an indexed region the base's grad_fn becomes
CopySlices (IndexPutBackward0 for a tensor, list or mask index on a tensor that
is not a view) around it, as runtime/autograd/copy_slices.py explains.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.autograd import grad_mode
from yamlgrad.runtime.errors import ERR_INFERENCE_INPLACE, ERR_VIEW_OF_LEAF_INPLACE
from yamlgrad.runtime.autograd.copy_slices import (
    CopyBackwards,
    CopySlices,
    IndexPutBackward0,
    rebase_region,
    view_index_map,
)
from yamlgrad.runtime.autograd.tensor import InferenceTensor, Tensor
from yamlgrad.runtime.wrappers.forward_grad import (
    any_has_forward_grad,
    set_fw_grad_inplace,
    tangent_of,
)
from yamlgrad.runtime.wrappers.interposition import tracing
from yamlgrad.runtime.wrappers.variable_type_utils import (
    check_inplace,
    collect_next_edges,
    rebase_history,
    write_inplace,
)

_NUMBERS = (int, float, bool, np.number, np.bool_)


def _source(value: Any, op: str) -> tuple[Any, bool]:
    """The data to write and whether it requires grad."""
    if isinstance(value, Tensor):
        return value._data, value._requires_grad
    if isinstance(value, _NUMBERS):
        return value, False
    raise TypeError(
        f"{op}(): argument 'src' must be Tensor or a number, not {type(value).__name__}"
    )


def _broadcast_error(dst: tuple[int, ...], src: tuple[int, ...]) -> RuntimeError:
    """PyTorch's message for a source that does not broadcast to the target."""
    for i in range(1, min(len(dst), len(src)) + 1):
        a, b = dst[-i], src[-i]
        if a != b and b != 1:
            return RuntimeError(
                f"The size of tensor a ({a}) must match the size of tensor b ({b}) "
                f"at non-singleton dimension {len(dst) - i}"
            )
    return RuntimeError(
        f"expand(torch.FloatTensor{{{list(src)}}}, size={list(dst)}): the number of "
        "sizes provided must be greater or equal to the number of dimensions in the "
        "tensor"
    )


def _check_writable(self: Tensor) -> None:
    if (
        type(self) is not Tensor  # a plain Tensor: one identity test
        and isinstance(self, InferenceTensor)  # an inference Parameter too
        and not grad_mode.is_inference_mode_enabled()
    ):
        raise RuntimeError(ERR_INFERENCE_INPLACE)


def _write(dst: np.ndarray, value: Any) -> None:
    try:
        np.copyto(dst, value, casting="unsafe")
    except ValueError:
        raise _broadcast_error(dst.shape, np.shape(value)) from None


def copy_(self: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """`self.copy_(src)`: write `src` (broadcast, cast to `self`'s dtype) into
    `self`. Gradients: none for `self`'s old value, all of it for `src`."""
    del non_blocking  # a CPU copy is always synchronous
    # A write the graph of yg.compile has no step for: the trace says so, rather
    # than compile the value without it.
    tracing.unsupported("copy_ (a write into a tensor)")
    _check_writable(self)
    data, src_requires_grad = _source(src, "copy_")
    forward = any_has_forward_grad(self, src)
    fn = None
    if grad_mode.is_grad_enabled() and (self._requires_grad or src_requires_grad):
        check_inplace(self)
        fn = CopyBackwards()
        fn._next_edges = collect_next_edges(self, src)
    if backend.is_foreign(data):
        data = _transferred(data, self._data)
    if backend.is_foreign(self._data):
        write_inplace(self, data)  # a new array: refused for a view
    else:
        _write(self._data, data)
        self.version_counter.bump()
    if fn is not None:
        rebase_history(self, fn)
    if forward:  # the new tangent is src's (zeros for a number, as PyTorch's)
        set_fw_grad_inplace(self, tangent_of(src))
    return self


def _transferred(data: Any, target: Any) -> Any:
    """copy_'s source of another backend than `target`'s, through host memory
    (PyTorch's copy_ copies across devices); of the same backend, as it is."""
    if backend.device_name(data) == backend.device_name(target):
        return data
    return backend.to_numpy(data)


def setitem(self: Tensor, key: Any, value: Any) -> None:
    """`Tensor.__setitem__`, recorded as PyTorch records it (below); under
    forward AD the tangent of `value` is written into `self`'s the same way."""
    forward = any_has_forward_grad(self, value)
    _setitem(self, key, value)
    if forward:
        tangent = np.array(tangent_of(self)._data, copy=True)
        tangent[_numpy_key(key)] = (
            tangent_of(value)._data if isinstance(value, Tensor) else 0
        )
        set_fw_grad_inplace(self, Tensor._make(tangent))


def _setitem(self: Tensor, key: Any, value: Any) -> None:
    """`Tensor.__setitem__`, recorded as PyTorch records it.

    The basic items of `key` select a view (`x[0]`, `x[1:, None]`), the tensor,
    list and mask items are an `index_put_` on it. So `x[0] = v` and
    `x[idx, 1] = v` give x a CopySlices; `x[idx] = v` and `x[mask] = v` (no view
    taken) give it IndexPutBackward0; `x[:] = v` is `fill_`/`copy_` on x itself.
    """
    _check_writable(self)
    data, value_requires_grad = _source(value, "__setitem__")
    numpy_key = _numpy_key(key)
    record = grad_mode.is_grad_enabled() and (
        self._requires_grad or value_requires_grad
    )
    if not record:
        try:
            self._data[numpy_key] = data
        except (ValueError, TypeError, IndexError) as e:
            raise _index_error(e, self, numpy_key, data) from None
        self.version_counter.bump()
        return
    takes_view, advanced = _key_kind(key, self._data.shape)
    if not takes_view and not advanced:
        if isinstance(value, Tensor):
            copy_(self, value)
        else:  # PyTorch wraps the number: fill_.Tensor (FillBackward3)
            self.fill_(Tensor._make(np.asarray(value)))  # type: ignore[attr-defined]
        return
    if takes_view and self._base is None and self.grad_fn is None:
        if self._requires_grad:
            raise RuntimeError(ERR_VIEW_OF_LEAF_INPLACE)
    check_inplace(self)
    base = self._base if self._base is not None else self
    if base is self:
        where = np.arange(self._data.size, dtype=np.int64).reshape(self._data.shape)
    else:
        where = view_index_map(self._data, base._data)
    try:
        index = np.asarray(where[numpy_key])
        self._data[numpy_key] = data
    except (ValueError, TypeError, IndexError) as e:
        raise _index_error(e, self, numpy_key, data) from None
    self.version_counter.bump()
    fn = CopyBackwards()
    fn._next_edges = collect_next_edges(self, value)
    fn._input_metadata = (*fn._input_metadata, (index.shape, self._data.dtype))
    node_class = CopySlices if takes_view or base is not self else IndexPutBackward0
    rebase_region(base, index, fn, node_class)


def _key_kind(key: Any, shape: tuple[int, ...]) -> tuple[bool, bool]:
    """(whether the basic items of `key` take a view, whether it has advanced
    items). A slice over a whole dim takes no view, as in PyTorch's applySlicing."""
    items = key if isinstance(key, tuple) else (key,)
    consumed = 0
    for item in items:
        if isinstance(item, Tensor):
            item = item._data
        if isinstance(item, (np.ndarray, list)):
            consumed += max(np.ndim(item), 1) if np.asarray(item).dtype == bool else 1
        elif item is not None and item is not Ellipsis:
            consumed += 1
    rest = len(shape) - consumed
    dim = 0
    takes_view = advanced = False
    for item in items:
        if isinstance(item, Tensor):
            item = item._data
        if item is None:
            takes_view = True
        elif item is Ellipsis:
            dim += max(rest, 0)
        elif isinstance(item, slice):
            if item.step is not None and item.step < 0:  # as getitem (PyTorch's text)
                raise ValueError("step must be greater than zero")
            size = shape[dim] if dim < len(shape) else 0
            takes_view |= item.indices(size) != (0, size, 1)
            dim += 1
        elif _is_basic_item(item):
            takes_view = True
            dim += 1
        else:
            advanced = True
            array = np.asarray(item)
            dim += max(array.ndim, 1) if array.dtype == bool else 1
    return takes_view, advanced


def _index_error(e: Exception, self: Tensor, key: Any, data: Any) -> Exception:
    if isinstance(e, IndexError):
        return IndexError(str(e))
    region = np.shape(np.empty(self._data.shape, dtype=np.bool_)[key])
    if isinstance(e, ValueError) and np.shape(data) != region:
        return _broadcast_error(region, np.shape(data))
    return RuntimeError(str(e))


def _is_basic_item(item: Any) -> bool:
    if item is None or item is Ellipsis or isinstance(item, slice):
        return True
    return isinstance(item, (int, np.integer)) and not isinstance(
        item, (bool, np.bool_)
    )


def _numpy_key(key: Any) -> Any:
    """Tensors in an index become their ndarrays (bool masks, integer indices)."""
    if isinstance(key, Tensor):
        return key._data
    if isinstance(key, tuple):
        return tuple(k._data if isinstance(k, Tensor) else k for k in key)
    return key
