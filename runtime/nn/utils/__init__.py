"""`yg.nn.utils`: gradient clipping and flattening parameters, as torch.nn.utils,
and the `rnn` submodule (packed sequences).

Clipping and flattening run under no_grad, on the `.grad` of the parameters
given, in place.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.autograd.grad_mode import no_grad
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.nn.utils import rnn

__all__ = [
    "rnn",
    "clip_grad_norm_",
    "clip_grad_value_",
    "parameters_to_vector",
    "vector_to_parameters",
]


def _listed(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


ERR_NONFINITE = (
    "The total norm of order {} for gradients from `parameters` is non-finite, so "
    "it cannot be clipped. To disable this error and scale the gradients by the "
    "non-finite norm anyway, set `error_if_nonfinite=False`"
)


def clip_grad_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: Any = None,
) -> Tensor:
    """Scale the gradients so that their joint `norm_type` norm is at most
    `max_norm`; returns that norm before clipping (a 0-d tensor)."""
    grads = [p.grad for p in _listed(parameters) if p.grad is not None]
    if not grads:
        return Tensor._make(np.zeros((), dtype=np.float32))
    norm_type = float(norm_type)
    arrays = [g._data for g in grads]
    if any(backend.is_lazy(a) for a in arrays):
        return _clip_lazily(grads, max_norm, norm_type, error_if_nonfinite)
    xp = backend.namespace_of(*arrays)
    if math.isinf(norm_type):
        total = max(
            (float(xp.max(xp.abs(a))) for a in arrays if math.prod(a.shape)),
            default=0.0,
        )
    else:
        per = [xp.sum(xp.abs(xp.astype(a, xp.float64)) ** norm_type) for a in arrays]
        total = sum(float(p) for p in per) ** (1.0 / norm_type)
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(ERR_NONFINITE.format(norm_type))
    coefficient = min(max_norm / (total + 1e-6), 1.0)
    with no_grad():
        for g in grads:
            g.mul_(coefficient)
    return Tensor._make(xp.asarray(total, dtype=arrays[0].dtype))


def _nonfinite(block: Any) -> bool:
    return not bool(np.all(np.isfinite(block)))


def _clip_lazily(
    grads: list[Tensor], max_norm: float, norm_type: float, error_if_nonfinite: bool
) -> Tensor:
    """clip_grad_norm_ on lazy gradients (Dask's): the norm and the scaling stay
    in the graph, and the non-finite check runs when the norm is computed."""
    arrays = [g._data for g in grads]
    xp = backend.array_namespace(*arrays)
    if math.isinf(norm_type):
        total = xp.max(xp.stack([xp.max(xp.abs(a)) for a in arrays]))
    else:
        per = [xp.sum(xp.abs(xp.astype(a, xp.float64)) ** norm_type) for a in arrays]
        total = xp.sum(xp.stack(per)) ** (1.0 / norm_type)
    if error_if_nonfinite:

        def fail() -> None:
            raise RuntimeError(ERR_NONFINITE.format(norm_type))

        total = backend.check_when_computed(total, _nonfinite, fail)
    coefficient = xp.minimum(max_norm / (total + 1e-6), 1.0)
    with no_grad():
        for g in grads:
            g.mul_(Tensor._make(xp.astype(coefficient, g._data.dtype)))
    return Tensor._make(xp.astype(total, arrays[0].dtype))


def clip_grad_value_(
    parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: Any = None
) -> None:
    """Clamp every gradient element to [-clip_value, clip_value], in place."""
    with no_grad():
        for p in _listed(parameters):
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated (a recorded cat of views)."""
    from yamlgrad.runtime.dispatch import ops

    return ops.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Write consecutive slices of `vec` into the parameters' data."""
    offset = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[offset : offset + n].view_as(p))
            offset += n


def _ntuple(n: int, name: str = "parse") -> Any:
    """torch.nn.modules.utils' argument expanders: `_pair(3)` is (3, 3), an
    iterable is kept as a tuple."""

    def parse(x: Any) -> tuple[Any, ...]:
        if isinstance(x, Iterable):
            return tuple(x)
        return (x,) * n

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")
