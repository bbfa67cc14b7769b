"""Grad mode: a thread-local switch, as torch.no_grad / enable_grad / set_grad_enabled.

Each works as a context manager and as a decorator; `set_grad_enabled(False)` also
works as a plain call. The engine sets grad mode to `create_graph` while it runs.
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


_state = _State()


def is_grad_enabled() -> bool:
    return _state.enabled


def _set(mode: bool) -> None:
    _state.enabled = mode


class _GradModeContext:
    """Base of no_grad / enable_grad: a context manager that is also a decorator."""

    mode: bool = True

    def __enter__(self) -> None:
        self._prev = _state.enabled
        _state.enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        _state.enabled = self._prev

    def __call__(self, fn: F) -> F:
        mode = self.mode
        if inspect.isgeneratorfunction(fn):

            @functools.wraps(fn)
            def generator(*args: Any, **kwargs: Any) -> Any:
                gen = fn(*args, **kwargs)
                prev = _state.enabled
                try:
                    _state.enabled = mode
                    value = next(gen)
                    while True:
                        _state.enabled = prev
                        sent = yield value
                        _state.enabled = mode
                        value = gen.send(sent)
                except StopIteration as stop:
                    return stop.value
                finally:
                    _state.enabled = prev

            return generator  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            prev = _state.enabled
            _state.enabled = mode
            try:
                return fn(*args, **kwargs)
            finally:
                _state.enabled = prev

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
        self._prev = _state.enabled
        _state.enabled = self.mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _state.enabled = self._prev
