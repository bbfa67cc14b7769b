"""Shared test helpers: the YAML's own entries; the sample and finite-difference
helpers live in the public yamlgrad.testing, which tests/test_gradients.py runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yamlgrad as yg
from yamlgrad.generated import VariableType
from yamlgrad.testing import (  # noqa: F401 - the helpers tests import from here
    build_args,
    float_outputs,
    inplace_safe,
    numerical_vjp,
    sample_inputs,
    slot_array,
)
from yamlgrad.tools.load import load_derivatives
from yamlgrad.tools.model import DifferentiabilityInfo

REPO_ROOT = Path(__file__).resolve().parents[1]
INFOS = load_derivatives(REPO_ROOT / "derivatives.yaml")
DIFFERENTIABLE = tuple(i for i in INFOS if i.op is not None)


def op_id(info: DifferentiabilityInfo) -> str:
    return info.func.cpp_name


def wrapper(info: DifferentiabilityInfo) -> Callable[..., yg.Tensor]:
    """The generated function of exactly this overload."""
    return getattr(VariableType, info.wrapper_name)


def call(
    info: DifferentiabilityInfo,
    kwargs: dict[str, object],
    tensors: dict[str, yg.Tensor],
) -> Any:
    """The generated function of this overload on the sample's arguments."""
    return wrapper(info)(**inplace_safe(info, build_args(kwargs, tensors, yg.tensor)))
