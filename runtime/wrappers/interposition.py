"""The one check at the top of every generated wrapper: does something stand
between the caller and the eager op?

PyTorch's dispatcher consults the keys above Autograd before an op runs:
FuncTorchBatched (vmap) and the Tracer (`jit::tracer::isTracing()`). yamlgrad's
generated wrappers ask once, before they unpack their arguments:

    if interposition.active and interposed(self, other):
        return interpose("mul.Tensor", "elementwise", mul_Tensor, self, other)

`interposition.active` counts the open vmap levels and the tracing threads; while
it is 0 (nearly always) the check is one attribute read and no call. Otherwise
`interposed` asks whether an argument is batched by an open vmap or this thread
records a trace, and `interpose` hands the call on:

* vmap: to the batching rules of runtime/func (registered in `vmap_hook`, since
  this layer sits below it), which run the wrapper again on unbatched values;
* yg.compile: to the thread's recorder (runtime/compile/tracer.py installs it),
  which runs the wrapper again with recording paused for that one call and notes
  the entry, its arguments and its outputs. Another thread's ops, and the ops a
  composite or a recorded call runs inside itself, are not recorded:
  `is_recording` is per thread.

Forward-mode AD is not interposed: like PyTorch's VariableType, each wrapper runs
its forward derivative itself, after the primal (runtime/wrappers/forward_grad.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from yamlgrad.runtime.autograd.tensor import active_tracing

__all__ = ["interposition", "interposed", "interpose", "vmap_hook", "tracing"]


class Interposition:
    """How many vmap levels are open plus how many threads trace, in any thread."""

    __slots__ = ("active",)

    def __init__(self) -> None:
        self.active = 0


interposition = Interposition()


# -- vmap ------------------------------------------------------------------------


class VmapHook:
    """What runtime/func sets: how many vmap levels are open, and the handler."""

    __slots__ = ("levels", "handler", "draws_per_sample")

    def __init__(self) -> None:
        self.levels = 0
        self.handler: Callable[..., Any] | None = None
        # Whether the innermost vmap draws per sample for a random op of
        # unbatched tensors (randomness="different"; set by runtime/func).
        self.draws_per_sample: Callable[[], bool] = lambda: False

    def enter(self) -> None:
        self.levels += 1
        interposition.active += 1

    def exit(self) -> None:
        self.levels -= 1
        interposition.active -= 1


vmap_hook = VmapHook()


def _has_batch_level(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return any(getattr(v, "_batch_level", 0) for v in value)
    return bool(getattr(value, "_batch_level", 0))


# -- tracing (yg.compile) ----------------------------------------------------------


class Recorder(Protocol):
    def record(self, entry: str, wrapper: Any, args: tuple[Any, ...]) -> Any: ...

    def data_dependent(self, what: str) -> None: ...

    def unsupported(self, what: str) -> None: ...


class _Local(threading.local):
    recorder: Recorder | None = None
    paused: bool = False


class TracingState:
    """Whether some thread traces (`active`), and this thread's recorder."""

    __slots__ = ("active", "_local", "_lock")

    def __init__(self) -> None:
        self.active = 0  # how many threads trace right now
        self._local = _Local()
        self._lock = threading.Lock()

    def is_recording(self) -> bool:
        """This thread traces, and is not inside a call being recorded."""
        local = self._local
        return local.recorder is not None and not local.paused

    def record_call(self, entry: str, wrapper: Any, args: tuple[Any, ...]) -> Any:
        """Run `wrapper` (the generated function of `entry`) on `args`, recorded."""
        return self._local.recorder.record(entry, wrapper, args)  # type: ignore[union-attr]

    def data_dependent(self, what: str) -> None:
        """Called where a value would leave the graph for Python (`.item()`, a
        random draw): the recorder raises, naming the user's line."""
        if self.active and self.is_recording():
            self._local.recorder.data_dependent(what)  # type: ignore[union-attr]

    def unsupported(self, what: str) -> None:
        """Called where the traced function does what a graph cannot hold (a
        backward): the recorder raises, naming the user's line."""
        if self.active and self.is_recording():
            self._local.recorder.unsupported(what)  # type: ignore[union-attr]

    def start(self, recorder: Recorder) -> None:
        if self._local.recorder is not None:
            raise RuntimeError("yamlgrad.compile: a compiled function is being traced")
        self._local.recorder = recorder
        self._local.paused = False
        with self._lock:
            self.active += 1
            interposition.active += 1
            active_tracing[0] = self

    def stop(self) -> None:
        self._local.recorder = None
        with self._lock:
            self.active -= 1
            interposition.active -= 1
            if not self.active:
                active_tracing[0] = None

    def pause(self) -> bool:
        """Stop recording this thread's calls; returns the previous state."""
        was = self._local.paused
        self._local.paused = True
        return was

    def resume(self, was: bool) -> None:
        self._local.paused = was


tracing = TracingState()


# -- the check -----------------------------------------------------------------------


def interposed(*tensors: Any, random: bool = False) -> bool:
    """Whether one of the Tensor arguments is batched by an open vmap, or a
    random op (`random`, one with a Generator) runs in a vmap with
    randomness="different", or this thread records a trace."""
    if vmap_hook.levels and (
        any(_has_batch_level(t) for t in tensors)
        or (random and vmap_hook.draws_per_sample())
    ):
        return True
    return bool(tracing.active) and tracing.is_recording()


def interpose(
    entry: str, rule: str, wrapper: Callable[..., Any], *args: Any, random: bool = False
) -> Any:
    """Run `wrapper` (the generated function of `entry`, e.g. "mul.Tensor") on
    `args` through what stands before it: the batching rule `rule` (the one the
    schema implies, "elementwise" or "dim", or "") of the innermost vmap that
    batches an argument (or, for a random op of unbatched tensors under
    randomness="different", to the innermost vmap's), else this thread's recorder."""
    if vmap_hook.levels and (
        any(_has_batch_level(a) for a in args)
        or (random and vmap_hook.draws_per_sample())
    ):
        handler = vmap_hook.handler
        return handler(entry, rule, wrapper, *args, random=random)  # type: ignore[misc]
    return tracing.record_call(wrapper.__name__, wrapper, args)
