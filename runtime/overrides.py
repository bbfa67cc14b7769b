"""`torch.overrides`: the `__torch_function__` protocol's entry points.

yamlgrad's ops do not dispatch on `__torch_function__`, so no argument ever has
an override: `has_torch_function(...)` is False, and code written as PyTorch's
functions are (`if has_torch_function(args): return handle_torch_function(...)`)
takes its ordinary path. `handle_torch_function` calls the function as given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from yamlgrad.runtime.autograd.tensor import Tensor

__all__ = [
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "handle_torch_function",
    "is_tensor_like",
    "is_tensor_method_or_property",
]


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    return False


def has_torch_function_unary(arg: Any) -> bool:
    return False


def has_torch_function_variadic(*args: Any) -> bool:
    return False


def handle_torch_function(
    public_api: Callable[..., Any],
    relevant_args: Iterable[Any],
    *args: Any,
    **kwargs: Any,
) -> Any:
    return public_api(*args, **kwargs)


def is_tensor_like(inp: Any) -> bool:
    """A Tensor, or an object of a type that defines `__torch_function__`."""
    return isinstance(inp, Tensor) or hasattr(type(inp), "__torch_function__")


def is_tensor_method_or_property(func: Callable[..., Any]) -> bool:
    return func is getattr(Tensor, getattr(func, "__name__", ""), None)
