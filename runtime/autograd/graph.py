"""`yamlgrad.autograd.graph`: hooks on the values saved for backward.

    with yg.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = x.exp()          # ExpBackward0 keeps pack(result), not result
    y.sum().backward()       # unpack(...) gives the tensor back

`pack(tensor) -> anything` runs when a node saves a tensor; `unpack(anything) ->
tensor` when backward needs it. Use it to offload, compress or log saved values.

`save_on_cpu` is the offloading pair; on a CPU-only build (yamlgrad's) a saved
tensor already lives on the CPU, so it keeps the tensor and its device, as
PyTorch's CPU build does. `disable_saved_tensors_hooks(message)` makes entering
any hooks block fail with `message`, for features that cannot work with them.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from yamlgrad.runtime.autograd.saved_variable import hook_state, hooks_open
from yamlgrad.runtime.autograd.tensor import Tensor

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]

_open_lock = threading.Lock()


class _DisabledState(threading.local):
    """The message of the innermost `disable_saved_tensors_hooks`, or None."""

    message: str | None = None


_disabled = _DisabledState()


class saved_tensors_hooks:
    """Context manager: pack/unpack hooks for every tensor saved inside it."""

    def __init__(
        self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]
    ) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        if _disabled.message is not None:
            raise RuntimeError(_disabled.message)
        hook_state.stack.append((self.pack_hook, self.unpack_hook))
        with _open_lock:
            hooks_open[0] += 1
        return self

    def __exit__(self, *exc: object) -> None:
        hook_state.stack.pop()
        with _open_lock:
            hooks_open[0] -= 1


class save_on_cpu(saved_tensors_hooks):
    """Keep the tensors saved inside the block on the CPU until backward needs them.

    Each saved tensor is packed as (its device, its CPU copy) and unpacked back
    to that device; with `pin_memory=True` the copy is a new CPU tensor.
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor) -> tuple[Any, Tensor]:
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            return (tensor.device, tensor.detach().clone())

        def unpack_from_cpu(packed: tuple[Any, Tensor]) -> Tensor:
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Inside the block, entering `saved_tensors_hooks` raises RuntimeError(error_message)."""
    previous = _disabled.message
    try:
        _disabled.message = error_message
        yield
    finally:
        _disabled.message = previous
