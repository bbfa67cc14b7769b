"""`yg.utils.hooks`: marking a hook that is not meant to be pickled.

Pickling a tensor keeps neither its gradient nor its hooks, and warns once per
hook registered with `register_hook`, unless the hook was marked with
`unserializable_hook` (PyTorch's `torch.utils.hooks.unserializable_hook`; the
mark is the same attribute, so hooks marked by either are recognized).

>>> @yg.utils.hooks.unserializable_hook
... def scale(grad):
...     return grad * 2
>>> handle = x.register_hook(scale)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from yamlgrad.runtime.autograd.hooks import RemovableHandle

__all__ = ["unserializable_hook", "RemovableHandle"]

F = TypeVar("F", bound=Callable[..., Any])


def unserializable_hook(f: F) -> F:
    """Mark `f` as a hook that pickling a tensor need not warn about."""
    f.__torch_unserializable__ = True  # type: ignore[attr-defined]
    return f
