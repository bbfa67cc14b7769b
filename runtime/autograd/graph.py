"""`yamlgrad.autograd.graph`: hooks on the values saved for backward.

    with yg.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = x.exp()          # ExpBackward0 keeps pack(result), not result
    y.sum().backward()       # unpack(...) gives the tensor back

`pack(tensor) -> anything` runs when a node saves a tensor; `unpack(anything) ->
tensor` when backward needs it. Use it to offload, compress or log saved values.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from yamlgrad.runtime.autograd.saved_variable import hook_state, hooks_open
from yamlgrad.runtime.autograd.tensor import Tensor

__all__ = ["saved_tensors_hooks"]

_open_lock = threading.Lock()


class saved_tensors_hooks:
    """Context manager: pack/unpack hooks for every tensor saved inside it."""

    def __init__(
        self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]
    ) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        hook_state.stack.append((self.pack_hook, self.unpack_hook))
        with _open_lock:
            hooks_open[0] += 1
        return self

    def __exit__(self, *exc: object) -> None:
        hook_state.stack.pop()
        with _open_lock:
            hooks_open[0] -= 1
