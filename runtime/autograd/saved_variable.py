"""SavedVariable: a value that a Node keeps for its backward formula.

Two decisions, both PyTorch's:

* An output is saved without its grad_fn. Keeping the Tensor would close a cycle
  (result -> grad_fn -> saved result), so unpacking rebuilds it around the node.
* The tensor's version is recorded here and checked on unpack, so an in-place change
  between forward and backward raises instead of giving a wrong gradient.

A Python number passed where a Tensor goes (`x * 2`) is saved as the number itself,
so a float32 formula stays float32; unpacking gives the number back. `UNDEFINED`
(PyTorch's default-constructed SavedVariable) is what a node holds for a value it
did not save, because no gradient that reads it was needed: it unpacks to None.
`unpack(node, raw=True)` gives the ndarray (a first-order backward makes no Tensor);
`raw=False` gives a Tensor that can take part in a recorded double backward.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from yamlgrad.runtime.autograd import anomaly_mode
from yamlgrad.runtime.errors import (
    ERR_BACKWARD_TWICE,
    ERR_INFERENCE_SAVED,
    modified_by_inplace,
)
from yamlgrad.runtime.autograd import forward_ad
from yamlgrad.runtime.autograd.tensor import InferenceTensor, Tensor, VersionCounter

if TYPE_CHECKING:
    from yamlgrad.runtime.autograd.node import Node

_FREED = object()


class _HookState(threading.local):
    """The (pack, unpack) pairs of the enclosing saved_tensors_hooks blocks."""

    def __init__(self) -> None:
        self.stack: list[tuple[Callable[[Tensor], Any], Callable[[Any], Tensor]]] = []


hook_state = _HookState()
# How many saved_tensors_hooks blocks are open in any thread: while none is, a
# save skips the thread-local lookup, which costs more than the rest of a save.
hooks_open = [0]


class _Packed:
    """What a pack hook returned, with the unpack hook that undoes it."""

    __slots__ = ("value", "unpack_hook")

    def __init__(self, value: Any, unpack_hook: Callable[[Any], Tensor]) -> None:
        self.value = value
        self.unpack_hook = unpack_hook


class SavedVariable:
    __slots__ = (
        "_data",
        "_tensor",
        "_output_nr",
        "_version_counter",
        "_saved_version",
        "_weak_grad_fn",
        "_fw_grad",
    )

    def __init__(
        self, value: Tensor | int | float | bool | None, is_output: bool
    ) -> None:
        kind = type(value)
        if kind is not Tensor:
            if kind is float or kind is int or value is None:
                # A Python number standing for a tensor, kept as the number (so
                # a float32 formula stays float32), or None: undefined.
                self._data = value
                self._version_counter = None
                return
            if not isinstance(value, Tensor):
                # A bool, or a numpy scalar as the number it holds (weak in
                # numpy's promotion, as the wrapper's unpacked argument was).
                self._data = value.item() if isinstance(value, np.generic) else value
                self._version_counter = None
                return
            if isinstance(value, InferenceTensor):
                raise RuntimeError(ERR_INFERENCE_SAVED)
        self._data = value._data
        self._output_nr = value.output_nr
        counter = value._version_counter  # Tensor.version_counter, inlined
        if counter is None:
            counter = value._version_counter = VersionCounter()
        self._version_counter = counter
        self._saved_version = counter.value
        # A leaf output has no grad_fn to close a cycle through; keep it whole.
        self._tensor = None if is_output and value.grad_fn is not None else value
        # An output rebuilt on unpack gets its tangent back (PyTorch's SavedVariable
        # saves the forward grad too), for forward-over-reverse.
        self._fw_grad = value._fw_grad if self._tensor is None else None
        # The output of an in-place op on a view: its grad_fn is the view's
        # regenerated AsStridedBackward0, not the node that saves it. Keep that
        # weakly, as PyTorch does (a strong one would close a cycle through the
        # base's CopySlices).
        self._weak_grad_fn = (
            weakref.ref(value.grad_fn)
            if is_output and value._base is not None and value.grad_fn is not None
            else None
        )
        if hooks_open[0] and hook_state.stack:  # keep what pack returns instead
            pack_hook, unpack_hook = hook_state.stack[-1]
            self._data = _Packed(pack_hook(value), unpack_hook)
            self._tensor = None  # what pack returned is all that is kept

    def unpack(self, grad_fn: Node | None = None, raw: bool = False) -> Any:
        """The saved value; `grad_fn` is the node that owns it."""
        data = self._data
        if data is _FREED:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        counter = self._version_counter
        if counter is None:  # a Python number
            return data
        if type(data) is _Packed:
            tensor = data.unpack_hook(data.value)
            return tensor._data if raw else tensor
        if counter.value != self._saved_version:
            raise RuntimeError(self._modified_message(grad_fn))
        if raw:
            return data
        if self._tensor is not None:
            return self._tensor
        out = Tensor._make(data)
        out._version_counter = counter
        if self._fw_grad is not None and forward_ad.STATE.level >= 0:
            forward_ad.attach_tangent(out, self._fw_grad)
        if self._weak_grad_fn is not None:
            grad_fn = self._weak_grad_fn() or grad_fn
            out.output_nr = 0
            out.grad_fn = grad_fn
            out._requires_grad = True
        elif grad_fn is not None:
            out.grad_fn = grad_fn
            out.output_nr = self._output_nr
            out._requires_grad = True
        return out

    def unpack_wrapped(self, grad_fn: Node | None = None) -> Any:
        """What `grad_fn._saved_x` shows: `unpack`, except that a Python number
        comes back as the 0-d tensor PyTorch wraps it in (int64, float64 or bool),
        as `(x * 2).grad_fn._saved_other` is `tensor(2)`."""
        value = self.unpack(grad_fn)
        if self._version_counter is None and value is not None:
            return Tensor._make(np.asarray(value))
        return value

    def _modified_message(self, grad_fn: Node | None) -> str:
        source = self._tensor.grad_fn if self._tensor is not None else grad_fn
        op = None
        if source is not None:
            name = source.name()
            op = name[: name.rfind("Backward")] if "Backward" in name else name
        dtype = self._data.dtype
        type_name = {"float32": "FloatTensor", "float64": "DoubleTensor"}.get(
            dtype.name, f"{dtype.name}Tensor"
        )
        return modified_by_inplace(
            type_name,
            self._data.shape,
            self._output_nr,
            op,
            self._version_counter.value,  # type: ignore[union-attr]
            self._saved_version,
            anomaly_mode.is_anomaly_enabled(),
        )

    def reset_data(self) -> None:
        """Free the data after a backward without retain_graph; unpack() then raises.
        An undefined one (nothing saved, or None for a `Tensor?`) has nothing to
        free and stays None."""
        if self._data is None:
            return
        self._data = _FREED
        self._tensor = None
        self._fw_grad = None


# A value a node did not save (its gradient was not needed): unpacks to None.
UNDEFINED = SavedVariable(None, False)
