"""`yg.nn.utils`: gradient clipping, flattening parameters, parametrizations and
weight normalisations, at torch.nn.utils's paths:

* `clip_grad` (clip_grad_norm_, clip_grad_value_, get_total_norm,
  clip_grads_with_norm_) and `convert_parameters` (parameters_to_vector,
  vector_to_parameters);
* `parametrize` (register_parametrization and its kin) and `parametrizations`
  (weight_norm, spectral_norm built on it);
* `weight_norm` / `remove_weight_norm` and `spectral_norm` /
  `remove_spectral_norm`, the older hook-based API;
* `rnn` (packed sequences).

The private `_single`/`_pair`/`_triple`/`_quadruple` argument expanders (torch
keeps them in torch.nn.modules.utils) live here too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from yamlgrad.runtime.nn.utils import (
    clip_grad,
    convert_parameters,
    parametrizations,
    parametrize,
    rnn,
)
from yamlgrad.runtime.nn.utils.clip_grad import (
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from yamlgrad.runtime.nn.utils.convert_parameters import (
    parameters_to_vector,
    vector_to_parameters,
)
from yamlgrad.runtime.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from yamlgrad.runtime.nn.utils.weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "rnn",
    "clip_grad",
    "convert_parameters",
    "parametrizations",
    "parametrize",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "vector_to_parameters",
    "weight_norm",
    "remove_weight_norm",
    "spectral_norm",
    "remove_spectral_norm",
]


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
