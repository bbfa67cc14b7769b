"""Grad mode: a thread-local switch, as torch.no_grad / enable_grad / set_grad_enabled.

Each works as a context manager and as a decorator; `set_grad_enabled(False)` also
works as a plain call. The engine sets grad mode to `create_graph` while it runs.

`inference_mode` is no_grad and more, as PyTorch's: tensors made inside are
inference tensors (runtime/autograd/tensor.py InferenceTensor), which never join a graph
later and track no version.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _State(threading.local):
    enabled = True
    inference = False


_state = _State()

# How many threads are inside inference_mode now: Tensor._make reads this plain
# list first, so outside inference mode making a tensor costs no thread-local
# lookup.
inference_threads = [0]
_inference_lock = threading.Lock()


def is_inference_mode_enabled() -> bool:
    return _state.inference


def _set_inference(mode: bool) -> None:
    if mode == _state.inference:
        return
    with _inference_lock:
        inference_threads[0] += 1 if mode else -1
    with _disabled_lock:
        # Inside inference mode nothing records, whatever grad mode says
        # (`enable_grad()` in an inference block): see disabled_threads.
        disabled_threads[0] += 1 if mode else -1
    _state.inference = mode


def is_grad_enabled() -> bool:
    return _state.enabled


# How many threads have grad mode off or inference mode on now (a thread that
# ends with either stays counted, which only costs it the fast path). While none
# has, every thread records, and compute_requires_grad knows it without the
# thread-local lookup, which costs more than the rest of its common case.
disabled_threads = [0]
_disabled_lock = threading.Lock()


def _set(mode: bool) -> bool:
    """Set this thread's grad mode, keeping `disabled_threads`; returns the
    previous mode. Every change of grad mode goes through here."""
    mode = bool(mode)
    prev = _state.enabled
    if mode is not prev:
        with _disabled_lock:
            disabled_threads[0] += -1 if mode else 1
        _state.enabled = mode
    return prev


class _GradModeContext:
    """Base of no_grad / enable_grad: a context manager that is also a decorator."""

    mode: bool = True

    def __enter__(self) -> None:
        self._prev = _set(self.mode)

    def __exit__(self, *exc: object) -> None:
        _set(self._prev)

    def __call__(self, fn: F) -> F:
        mode = self.mode
        if inspect.isgeneratorfunction(fn):

            @functools.wraps(fn)
            def generator(*args: Any, **kwargs: Any) -> Any:
                gen = fn(*args, **kwargs)
                prev = _state.enabled
                try:
                    _set(mode)
                    value = next(gen)
                    while True:
                        _set(prev)
                        sent = yield value
                        _set(mode)
                        value = gen.send(sent)
                except StopIteration as stop:
                    return stop.value
                finally:
                    _set(prev)

            return generator  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            prev = _set(mode)
            try:
                return fn(*args, **kwargs)
            finally:
                _set(prev)

        return wrapper  # type: ignore[return-value]


class _NoParamGradModeContext(_GradModeContext):
    """Also a decorator without parentheses: `@no_grad` as well as `@no_grad()`."""

    def __new__(cls, orig_func: F | None = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamGradModeContext):
    """Results computed inside do not require grad: `with yg.no_grad(): ...`."""

    mode = False


class enable_grad(_NoParamGradModeContext):
    """Turns grad mode back on inside a no_grad block."""

    mode = True


class set_grad_enabled(_GradModeContext):
    """`set_grad_enabled(False)` switches grad mode now; as a context it restores it."""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._prev = _set(self.mode)

    def __call__(self, fn: F) -> F:
        """As a decorator the mode applies inside `fn` only: the switch made at
        construction is undone, as PyTorch's is."""
        _set(self._prev)
        return super().__call__(fn)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _set(self._prev)


class inference_mode:
    """`with yg.inference_mode():` grad mode off, and every tensor made inside is
    an inference tensor: it cannot be saved for backward, updated in place
    outside inference mode, or given requires_grad later. `inference_mode(False)`
    turns it off inside an inference block. Also a decorator, with or without
    parentheses, on functions and generators."""

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode):  # @inference_mode without parentheses
            return cls(True)(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def __enter__(self) -> None:
        self._prev = (_state.enabled, _state.inference)
        _set(not self.mode)  # inference_mode(False) turns grad mode back on
        _set_inference(self.mode)

    def __exit__(self, *exc: object) -> None:
        _set(self._prev[0])
        _set_inference(self._prev[1])

    def __call__(self, fn: F) -> F:
        mode = self.mode
        if inspect.isgeneratorfunction(fn):

            @functools.wraps(fn)
            def generator(*args: Any, **kwargs: Any) -> Any:
                gen = fn(*args, **kwargs)
                value = None
                sent = None
                first = True
                while True:
                    with inference_mode(mode):
                        try:
                            value = next(gen) if first else gen.send(sent)
                        except StopIteration as stop:
                            return stop.value
                    first = False
                    sent = yield value

            return generator  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(mode):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]
