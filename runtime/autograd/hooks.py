"""Backward hooks, as torch/csrc/autograd/function_hook.h and engine.cpp run them.

Per node, in this order (PyTorch's `call_function`):

1. tensor pre-hooks: the hooks registered with `Tensor.register_hook` on the
   tensor that is this node's output `i` (for a leaf, on the tensor itself, read by
   its AccumulateGrad), in registration order, then the `retain_grad` hook, which
   always comes after every other tensor hook. A hook may return a replacement;
2. node pre-hooks (`grad_fn.register_prehook`): `fn(grad_outputs) -> tuple | None`;
3. the node itself;
4. node post-hooks (`grad_fn.register_hook`): `fn(grad_inputs, grad_outputs)`.

Hooks always see Tensors. In a first-order backward (raw ndarrays) the engine wraps
gradients for the hooks only on the nodes that have any, so a graph without hooks
pays nothing.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from yamlgrad.runtime import backend
from yamlgrad.runtime.autograd.tensor import Tensor

if TYPE_CHECKING:
    from yamlgrad.runtime.autograd.node import Grad, Node

_handle_ids = itertools.count()
# Held while a tensor or node makes its hook table on first use, so threads
# registering their first hooks at once do not replace each other's table.
TABLE_LOCK = threading.Lock()


class RemovableHandle:
    """What `register_hook` returns: `.remove()` unregisters the hook."""

    __slots__ = ("_hooks_ref", "id")

    def __init__(self, hooks: dict[int, Any]) -> None:
        self._hooks_ref = weakref.ref(hooks) if _weakrefable(hooks) else lambda: hooks
        self.id = next(_handle_ids)

    def remove(self) -> None:
        hooks = self._hooks_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _weakrefable(obj: object) -> bool:
    try:
        weakref.ref(obj)
    except TypeError:
        return False
    return True


class HookDict(dict):
    """Hooks by handle id, in registration order (a dict that can be weakly held)."""


def add_hook(hooks: HookDict, fn: Callable[..., Any]) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class NodeHooks:
    """The hooks of one node; created on the first registration."""

    __slots__ = ("tensor_pre_hooks", "retains_grad_hooks", "pre_hooks", "post_hooks")

    def __init__(self) -> None:
        self.tensor_pre_hooks: dict[int, HookDict] = {}  # by output_nr
        self.retains_grad_hooks: dict[int, Callable[[Tensor], None]] = {}
        self.pre_hooks = HookDict()
        self.post_hooks = HookDict()


def _to_tensor(g: Grad | None, raw: bool) -> Tensor | None:
    if g is None or not raw:
        return g
    return Tensor._make(g)


def _from_tensor(t: Any, raw: bool) -> Grad | None:
    if t is None or not raw:
        return t
    return t._data


def _hook_name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def _run_tensor_hooks(
    hooks: dict[int, Callable[..., Any]] | None,
    retain: Callable[[Tensor], None] | None,
    grad: Grad | None,
    raw: bool,
) -> Grad | None:
    if grad is None:
        return None
    value = _to_tensor(grad, raw)
    for fn in list((hooks or {}).values()):
        result = fn(value)
        if result is None:
            continue
        if tuple(result.shape) != tuple(value.shape):
            raise RuntimeError(f"hook '{_hook_name(fn)}' has changed the size of value")
        value = result
    if retain is not None:
        retain(value)
    return _from_tensor(value, raw)


def call_tensor_pre_hooks(
    node: Node, inputs: list[Grad | None], raw: bool
) -> list[Grad | None]:
    """The tensor hooks of a node's outputs (a leaf's own hooks for AccumulateGrad)."""
    from yamlgrad.runtime.autograd.accumulate_grad import AccumulateGrad

    if type(node) is AccumulateGrad:  # the leaf's own hooks, read lazily
        variable = node.variable
        if variable._hooks:
            inputs = list(inputs)
            inputs[0] = _run_tensor_hooks(variable._hooks, None, inputs[0], raw)
        return inputs
    hooks = node._hooks
    if hooks is None or not (hooks.tensor_pre_hooks or hooks.retains_grad_hooks):
        return inputs
    inputs = list(inputs)
    for i in range(len(inputs)):
        inputs[i] = _run_tensor_hooks(
            hooks.tensor_pre_hooks.get(i),
            hooks.retains_grad_hooks.get(i),
            inputs[i],
            raw,
        )
    return inputs


def call_pre_hooks(
    node: Node, inputs: list[Grad | None], raw: bool
) -> list[Grad | None]:
    hooks = node._hooks
    if hooks is None or not hooks.pre_hooks:
        return inputs
    values = tuple(_to_tensor(g, raw) for g in inputs)
    for fn in list(hooks.pre_hooks.values()):
        result = fn(values)
        if result is not None:
            values = tuple(result)
    return [_from_tensor(v, raw) for v in values]


def call_post_hooks(
    node: Node, outputs: list[Grad | None], inputs: list[Grad | None], raw: bool
) -> list[Grad | None]:
    hooks = node._hooks
    if hooks is None or not hooks.post_hooks:
        return outputs
    grad_inputs = tuple(_to_tensor(g, raw) for g in outputs)
    grad_outputs = tuple(_to_tensor(g, raw) for g in inputs)
    for fn in list(hooks.post_hooks.values()):
        result = fn(grad_inputs, grad_outputs)
        if result is not None:
            grad_inputs = tuple(result)
    return [_from_tensor(v, raw) for v in grad_inputs]


def retains_grad_hook(tensor: Tensor) -> Callable[[Tensor], None]:
    """The hook `retain_grad()` installs: the gradient lands in `tensor.grad`,
    accumulating over backwards (the tensor is held weakly: no cycle)."""
    ref = weakref.ref(tensor)

    def retain(grad: Tensor) -> None:
        t = ref()
        if t is None:
            return
        if t._grad is None:
            t._grad = Tensor._make(backend.copy(grad._data))
        else:
            t._grad = Tensor._make(t._grad._data + grad._data)

    return retain
