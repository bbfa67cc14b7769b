"""`yg.nn.utils`: gradient clipping, flattening parameters, parametrizations and
weight normalisations, at torch.nn.utils's paths:

* `clip_grad` (clip_grad_norm_, clip_grad_value_, get_total_norm,
  clip_grads_with_norm_) and `convert_parameters` (parameters_to_vector,
  vector_to_parameters);
* `parametrize` (register_parametrization and its kin) and `parametrizations`
  (weight_norm, spectral_norm built on it);
* `weight_norm` / `remove_weight_norm` and `spectral_norm` /
  `remove_spectral_norm`, the older hook-based API.
"""

from __future__ import annotations

from yamlgrad.runtime.nn.utils import (
    clip_grad,
    convert_parameters,
    parametrizations,
    parametrize,
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
