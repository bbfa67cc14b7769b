"""Anomaly detection, as torch.autograd.detect_anomaly / set_detect_anomaly.

While it is on, every new node keeps the Python stack of the forward call that made
it (in `node.metadata["traceback_"]`), and the engine, when a node fails in
backward, first warns `Error detected in PowBackward0. Traceback of forward call
that caused the error:` with that stack. With `check_nan`, a backward output
containing NaN raises `Function 'DivBackward0' returned nan values in its 1th
output.`. Off by default: it costs a stack capture per node.

A lazy array (Dask's) is not computed to look for NaN: the gradient gets the
check as a step of its own graph, run on each chunk as it is computed, which
warns and raises the same error from `yg.compute` (so a backward under
`detect_anomaly()` still computes nothing).
"""

from __future__ import annotations

import threading
import traceback
import warnings
from typing import Any

from yamlgrad.runtime import backend

WARN_ENABLED = (
    "Anomaly Detection has been enabled. This mode will increase the runtime and "
    "should only be enabled for debugging."
)


class _State(threading.local):
    enabled = False
    check_nan = True


state = _State()

# Whether any thread has turned anomaly detection on yet. Until one has, the
# engine reads this instead of the thread-local `state` for every node it runs
# (a plain global is several times quicker to read).
ever_enabled = False


def _set(enabled: bool, check_nan: bool) -> None:
    global ever_enabled
    state.enabled, state.check_nan = enabled, check_nan
    ever_enabled = ever_enabled or enabled


def is_anomaly_enabled() -> bool:
    return state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return state.check_nan


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        warnings.warn(WARN_ENABLED, UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        self._prev = (state.enabled, state.check_nan)
        _set(True, self.check_nan)

    def __exit__(self, *exc: object) -> None:
        _set(*self._prev)

    def __call__(self, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """`set_detect_anomaly(True)` switches it now; as a context it restores it."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._prev = (state.enabled, state.check_nan)
        _set(bool(mode), check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _set(*self._prev)


def record_forward_stack(metadata: dict, skip: int) -> None:
    """Keep the forward call's stack on a node, without this frame and the `skip`
    frames that called it (runtime/autograd/node.py's record_anomaly)."""
    metadata["traceback_"] = traceback.format_stack()[: -(skip + 1)]


def warn_failed_node(name: str, metadata: dict | None) -> None:
    stack = "".join((metadata or {}).get("traceback_", []))
    warnings.warn(
        f"Error detected in {name}. Traceback of forward call that caused the "
        f"error:\n{stack}",
        UserWarning,
        stacklevel=3,
    )


def nan_message(name: str, index: int) -> str:
    return f"Function '{name}' returned nan values in its {index}th output."


def _has_nan(block: Any) -> bool:
    return backend.dtype_kind(block.dtype) in "fc" and bool((block != block).any())


def nan_check_deferred(array: Any, node: Any, index: int) -> Any:
    """A lazy gradient that `node` returned as its `index`th output, with the NaN
    check run on each of its chunks when they are computed."""
    name, stack = node.name(), (node._metadata or {}).get("traceback_", [])

    def fail() -> None:
        warn_failed_node(name, {"traceback_": stack})
        raise RuntimeError(nan_message(name, index))

    return backend.check_when_computed(array, _has_nan, fail)
