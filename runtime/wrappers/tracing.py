"""The hook through which `yg.compile` sees the ops a traced function runs.

PyTorch's generated TraceType kernels ask `jit::tracer::isTracing()` before they
record an op; yamlgrad's generated wrappers ask `tracing.active` the same way, right
after their arguments are unpacked. Outside a trace that is one attribute read per
op. While a thread traces (runtime/compile/tracer.py installs a recorder for it),
each wrapper hands its call to the recorder, which runs the wrapper again with
recording paused for that one call and notes the entry, its arguments and its
outputs. Another thread's ops, and the ops a composite or a recorded call runs
inside itself, are not recorded: `is_recording` is per thread.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

__all__ = ["TracingState", "tracing"]


class Recorder(Protocol):
    def record(self, entry: str, wrapper: Any, args: tuple[Any, ...]) -> Any: ...

    def data_dependent(self, what: str) -> None: ...


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

    def start(self, recorder: Recorder) -> None:
        if self._local.recorder is not None:
            raise RuntimeError("yamlgrad.compile: a compiled function is being traced")
        self._local.recorder = recorder
        self._local.paused = False
        with self._lock:
            self.active += 1

    def stop(self) -> None:
        self._local.recorder = None
        with self._lock:
            self.active -= 1

    def pause(self) -> bool:
        """Stop recording this thread's calls; returns the previous state."""
        was = self._local.paused
        self._local.paused = True
        return was

    def resume(self, was: bool) -> None:
        self._local.paused = was


tracing = TracingState()
