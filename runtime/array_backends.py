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

from yamlgrad.runtime import backend
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


def to_backend(tensor: Tensor, target: str) -> Tensor:
    """`x.to("cpu")` of another backend's tensor: its values as a numpy array
    (computed, or copied from the GPU); `x.to("dask")` of a numpy tensor: a
    Dask array of one chunk over the same values. No history is recorded."""
    data = tensor._data
    if target == "cpu":
        return Tensor._make(backend.to_numpy(data))
    if target == "dask":
        import dask.array as da

        return Tensor._make(data if backend.is_lazy(data) else da.from_array(data))
    raise RuntimeError(
        f"Expected one of cpu, dask device type at start of device string: {target}"
    )
