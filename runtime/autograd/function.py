"""`yamlgrad.autograd.Function`: user-defined ops with a hand-written backward.

As in PyTorch, `ctx` *is* the backward node: `Exp.apply(x)` makes an instance of
a class named `ExpBackward` (a Node, one class per Function subclass), runs
`forward(ctx, ...)` with grad mode off, and records that node as the grad_fn of
every differentiable output. In backward the engine calls the node, which calls
`backward(ctx, *grads)`; its results are routed to the inputs' edges and checked
like every other node's.

    class Exp(yg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = x.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad):
            (result,) = ctx.saved_tensors
            return grad * result
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from yamlgrad.runtime.backend import dtype_kind
from yamlgrad.runtime.autograd import grad_mode
from yamlgrad.runtime.errors import ERR_LEAF_INPLACE
from yamlgrad.runtime.autograd.node import INVALID_EDGE, Grad, Node, flat_edges
from yamlgrad.runtime.autograd.saved_variable import SavedVariable
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.autograd.accumulate_grad import gradient_edge

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]

# How `Function.apply` reaches the function transforms, which live above this
# core (runtime/func/ installs it): called with (cls, args, kwargs), it returns
# the result when an argument is batched by a vmap, else NotImplemented.
transform_hook: list[Callable[..., Any] | None] = [None]


class FunctionCtx:
    """What `forward` and `backward` may call on `ctx`."""

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        self._to_save = tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        """These inputs were modified in place by forward."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """These outputs get no gradient (e.g. indices)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """False: backward may receive None for an output that got no gradient."""
        self._materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The node of one `Function.apply` call; also its `ctx`."""

    _function: type[Function]

    def __init__(self) -> None:
        super().__init__()
        self._to_save: tuple[Tensor | None, ...] = ()
        self._saved: list[SavedVariable | None] | None = None
        self._dirty: tuple[Tensor, ...] = ()
        self._non_differentiable: tuple[Tensor, ...] = ()
        self._materialize_grads = True
        self._input_tensor_positions: tuple[int, ...] = ()
        self.needs_input_grad: tuple[bool, ...] = ()

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        """The tensors given to save_for_backward, checked for in-place changes."""
        if self._saved is None:
            raise RuntimeError(
                "saved_tensors is only available in backward, after save_for_backward"
            )
        return tuple(None if s is None else s.unpack(self) for s in self._saved)

    def apply(self, grads: list[Grad], raw: bool = False) -> list[Grad | None]:
        values = list(grads)
        if raw:
            values = [None if g is None else Tensor._make(g) for g in values]
        if self._materialize_grads:
            for i, g in enumerate(values):
                if g is None:
                    shape, dtype = self._input_metadata[i]
                    values[i] = Tensor._make(np.zeros(shape, dtype=dtype))
        result = self._function.backward(self, *values)
        if not isinstance(result, tuple):
            result = (result,)
        expected = len(self.needs_input_grad)
        if len(result) != expected:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {expected}, got {len(result)})"
            )
        out: list[Grad | None] = []
        for position in self._input_tensor_positions:
            g = result[position]
            if g is not None and not isinstance(g, Tensor):
                raise TypeError(
                    f"function {self.name()} returned a gradient of type "
                    f"{type(g).__name__} at position {position}; expected a Tensor or None"
                )
            out.append(g._data if raw and g is not None else g)
        return out

    def release_variables(self) -> None:
        for saved in self._saved or ():
            if saved is not None:
                saved.reset_data()


class _FunctionMeta(type):
    """Gives every Function subclass its own node class, `<Name>Backward`."""

    def __init__(
        cls, name: str, bases: tuple[type, ...], namespace: dict[str, Any]
    ) -> None:
        backward_cls = type(f"{name}Backward", (BackwardCFunction,), {"_function": cls})
        cls._backward_cls = backward_cls
        super().__init__(name, bases, namespace)


class Function(metaclass=_FunctionMeta):
    """Base class of user-defined differentiable ops; call them with `.apply`."""

    _backward_cls: type[BackwardCFunction]

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    # `vmap` over this Function: True runs it once per sample (its forward and
    # backward are then vmapped ops); or override the `vmap` staticmethod.
    generate_vmap_rule = False

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        """Override together with a `forward(*args)` without ctx: it saves what
        backward needs, from the inputs and the output."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def vmap(info: Any, in_dims: tuple[int | None, ...], *args: Any) -> Any:
        """`info` (batch_size, randomness), each arg's batch dim or None, the
        args: returns the batched output and its out_dims."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the "
            "vmap staticmethod or set generate_vmap_rule=True."
        )

    @classmethod
    def _is_setup_context_defined(cls) -> bool:
        return cls.setup_context is not Function.setup_context

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        hook = transform_hook[0]
        if hook is not None:
            result = hook(cls, args, kwargs)
            if result is not NotImplemented:
                return result
        ctx = cls._backward_cls()
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        ctx._input_tensor_positions = positions
        ctx.needs_input_grad = tuple(
            isinstance(a, Tensor) and a.requires_grad for a in args
        )
        record = grad_mode.is_grad_enabled() and any(ctx.needs_input_grad)
        with grad_mode.no_grad():
            if cls._is_setup_context_defined():  # forward(*args), then setup_context
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(outputs, tuple)
        results = (outputs,) if single else outputs
        if record:
            inputs = [args[i] for i in positions]
            ctx.set_next_edges(flat_edges(gradient_edge(t) for t in inputs))
            results = tuple(_wrap_output(ctx, out, inputs) for out in results)
        else:
            ctx.set_next_edges(flat_edges(INVALID_EDGE for _ in positions))
        ctx._saved = [
            None if t is None else SavedVariable(t, is_output=t.grad_fn is ctx)
            for t in ctx._to_save
        ]
        ctx._to_save = ()
        return results[0] if single else results


def _wrap_output(ctx: BackwardCFunction, out: Any, inputs: list[Tensor]) -> Any:
    """Record `ctx` as the grad_fn of one output (a dirty input is rebased)."""
    if not isinstance(out, Tensor):
        return out
    if any(out is t for t in ctx._dirty):
        if out.grad_fn is None and out.requires_grad:
            raise RuntimeError(ERR_LEAF_INPLACE)
        out.version_counter.bump()
    elif any(out is t for t in inputs):
        out = out.detach()  # an input returned as is becomes a new output
    if (
        any(out is t for t in ctx._non_differentiable)
        or dtype_kind(out._data.dtype) not in "fc"
    ):
        ctx.add_input_metadata(out)
        return out
    out.output_nr = ctx.add_input_metadata(out)
    out.grad_fn = ctx
    out._requires_grad = True
    return out


def once_differentiable(
    backward: Callable[..., Any],
) -> Callable[..., Any]:
    """Mark a backward as not differentiable itself: it runs with grad mode off."""

    @functools.wraps(backward)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        with grad_mode.no_grad():
            return backward(ctx, *grads)

    return wrapper
