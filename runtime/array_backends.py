"""Tensors over other array libraries: Dask (lazy, chunked, out of core or on a
cluster) and CuPy (a GPU), beside numpy.

    X = yg.from_dask(dask.array.from_array(memmap, chunks=(2**20, 64)))
    W = yg.zeros(64, 1, dtype=yg.float64).to("dask").requires_grad_()
    loss = ((X @ W - y) ** 2).mean()
    loss.backward()                      # builds one graph; computes nothing
    loss_value, grad = yg.compute(loss, W.grad)   # one pass over X

A Tensor keeps the array it is given; every op of derivatives.yaml not marked
`backends: [numpy]` runs on it through its namespace (runtime/backend.py), and so
do the backward formulas, so a backward over Dask arrays only adds to the graph.
`compute` evaluates several tensors in one pass over their shared graph;
`persist` keeps a lazy tensor's chunks (in memory or on the cluster's workers)
so that the graph behind it is dropped, which an optimizer's step does for the
parameters it updates.
"""

from __future__ import annotations

from typing import Any

from yamlgrad.runtime import backend, devices
from yamlgrad.runtime.autograd.tensor import Tensor

__all__ = ["from_dask", "compute", "persist"]


def from_dask(array: Any, requires_grad: bool = False) -> Tensor:
    """A tensor holding a Dask array as it is: lazy, nothing computed."""
    if not backend.is_lazy(array):
        raise TypeError(f"expected a dask array (got {type(array).__name__})")
    return Tensor._make(array).requires_grad_(requires_grad)


def from_array(array: Any) -> Tensor:
    """A tensor holding another backend's array (Dask, CuPy, ...) as it is."""
    return Tensor._make(array)


def compute(*tensors: Tensor | None) -> tuple[Tensor | None, ...]:
    """The tensors with their values computed, in one pass: Dask evaluates the
    chunks their graphs share once. Each computed result holds a numpy array
    and no history; numpy tensors and None are returned as they are."""
    present = [t for t in tensors if t is not None]
    values = iter(backend.compute(*(t._data for t in present)))
    out: list[Tensor | None] = []
    for t in tensors:
        if t is None:
            out.append(None)
            continue
        value = next(values)
        out.append(t if value is t._data else Tensor._make(value))
    return tuple(out)


def persist(tensor: Tensor) -> Tensor:
    """`tensor` with its lazy array's chunks computed and kept (in memory, or on
    the cluster's workers): the graph behind it is dropped, autograd metadata
    and identity stay. Changed in place, as an optimizer's step changes a
    parameter; a numpy tensor is left as it is."""
    (tensor._data,) = backend.persist(tensor._data)
    return tensor


def _to_dask(array: Any) -> Any:
    import dask.array as da

    return da.from_array(backend.to_numpy(array))


def _to_strict(array: Any) -> Any:
    import array_api_strict

    return array_api_strict.asarray(backend.to_numpy(array))


def _to_cupy(array: Any) -> Any:
    try:
        import cupy
    except ImportError:
        raise AssertionError(devices.ERR_NO_CUDA) from None
    return cupy.asarray(backend.to_numpy(array))


# Where `x.to(...)` and `module.to(...)` move a tensor's array, by the device
# type named: numpy's memory, a Dask array (one chunk), the standard's reference
# implementation, a CuPy array on the GPU (PyTorch's error where CuPy is absent).
MOVES = {
    "cpu": backend.to_numpy,
    "dask": _to_dask,
    "array_api_strict": _to_strict,
    "cuda": _to_cupy,
}


def moves_to(device: Any) -> bool:
    """Whether `device` names a backend `move` puts arrays on (not another
    PyTorch device type, which `devices.usable` refuses)."""
    return str(device).partition(":")[0] in MOVES


def move(array: Any, device: Any) -> Any:
    """`array` on the backend `device` names (see MOVES): itself when it is
    there already; a lazy array computed when moved off Dask."""
    kind = str(device).partition(":")[0]
    if backend.device_name(array).partition(":")[0] == kind:
        return array
    return MOVES[kind](array)


def to_backend(tensor: Tensor, target: Any) -> Tensor:
    """`x.to(device)` of a tensor to another backend (or back to numpy): a new
    tensor of the moved array, without history; `x` itself when it is there."""
    data = move(tensor._data, target)
    return tensor if data is tensor._data else Tensor._make(data)
