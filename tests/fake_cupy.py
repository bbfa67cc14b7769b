"""A stand-in for CuPy, to run yamlgrad's CuPy code paths without a GPU.

`install(monkeypatch)` puts modules named `cupy` and `cupyx.scipy.special`
in `sys.modules` for one test. Their arrays are `GpuArray`s: numpy arrays of a
subclass whose module is `cupy`, so the backend layer takes them for CuPy's
(their device is `cuda:0`, `.get()` copies them "to the host", a full
reduction or an integer index gives a 0-d array as CuPy's do) while numpy
does the arithmetic. Their namespace is numpy's, with every array result made
a GpuArray again, so a numpy array that leaks into a GPU computation meets the
same-device error, as it would on a GPU. `cupyx.scipy.special` has scipy's
functions, except those named in `MISSING`, and records what it was asked for
in `CALLS`.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np
import scipy.special

# Functions this stand-in's cupyx.scipy.special lacks (CuPy's has no Airy
# functions), to exercise the refusal.
MISSING = frozenset({"airy"})
CALLS: list[str] = []


class GpuArray(np.ndarray):
    """An array the backend layer takes for CuPy's (module `cupy`)."""

    __module__ = "cupy"
    device = types.SimpleNamespace(id=0)

    def __array_wrap__(
        self, array: Any, context: Any = None, return_scalar: bool = False
    ) -> Any:
        return np.asarray(array).view(GpuArray)  # 0-d, never a scalar

    def __getitem__(self, key: Any) -> Any:
        return _on_gpu(super().__getitem__(key))

    def get(self) -> np.ndarray:
        """The values in host memory: a numpy array of their own."""
        return np.array(self.view(np.ndarray), copy=True)


def _on_gpu(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.view(GpuArray)
    if isinstance(value, np.generic):
        return np.asarray(value).view(GpuArray)
    if isinstance(value, tuple):
        return tuple(_on_gpu(v) for v in value)
    if isinstance(value, list):
        return [_on_gpu(v) for v in value]
    return value


def _gpu_function(fn: Any) -> Any:
    def on_gpu(*args: Any, **kwargs: Any) -> Any:
        return _on_gpu(fn(*args, **kwargs))

    on_gpu.__name__ = getattr(fn, "__name__", "function")
    return on_gpu


class Namespace(types.ModuleType):
    """numpy's names; functions give GpuArrays (CuPy's namespace, as
    array-api-compat hands it out)."""

    def __getattr__(self, name: str) -> Any:
        value = getattr(np, name)
        if callable(value) and not isinstance(value, type):
            value = _gpu_function(value)
        setattr(self, name, value)
        return value


class Special(types.ModuleType):
    """cupyx.scipy.special: scipy.special's functions, on GpuArrays."""

    def __getattr__(self, name: str) -> Any:
        if name in MISSING or name.startswith("__"):
            raise AttributeError(name)
        fn = getattr(scipy.special, name)

        def on_gpu(*args: Any) -> Any:
            CALLS.append(name)
            host = [a.get() if isinstance(a, GpuArray) else a for a in args]
            return _on_gpu(np.asarray(fn(*host)))

        return on_gpu


def install(monkeypatch: Any) -> Namespace:
    """`cupy` and `cupyx.scipy.special` for the rest of the test; the backend
    layer finds the GpuArrays' namespace in its cache. Returns `cupy`."""
    from yamlgrad.runtime import backend

    cupy = Namespace("cupy")
    cupy.ndarray = GpuArray
    cupyx = types.ModuleType("cupyx")
    cupyx.scipy = types.ModuleType("cupyx.scipy")
    cupyx.scipy.special = Special("cupyx.scipy.special")
    for name, module in (
        ("cupy", cupy),
        ("cupyx", cupyx),
        ("cupyx.scipy", cupyx.scipy),
        ("cupyx.scipy.special", cupyx.scipy.special),
    ):
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setitem(backend._NAMESPACES, GpuArray, cupy)
    CALLS.clear()
    return cupy
