"""Shared test helpers: the YAML's own entries, and numerical derivatives."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

import yamlgrad as yg
from yamlgrad.generated import VariableType
from yamlgrad.tools.load import load_derivatives
from yamlgrad.tools.model import DifferentiabilityInfo, Sample

REPO_ROOT = Path(__file__).resolve().parents[1]
INFOS = load_derivatives(REPO_ROOT / "derivatives.yaml")
DIFFERENTIABLE = tuple(i for i in INFOS if i.op is not None)


def op_id(info: DifferentiabilityInfo) -> str:
    return info.func.cpp_name


def wrapper(info: DifferentiabilityInfo) -> Callable[..., yg.Tensor]:
    """The generated function of exactly this overload."""
    return getattr(VariableType, info.wrapper_name)


def sample_inputs(
    info: DifferentiabilityInfo, sample: Sample, rng: np.random.Generator, dtype: type
) -> tuple[dict[str, object], list[str]]:
    """Keyword arguments for one sample (ndarrays for tensors), and which of them
    are differentiable float tensors."""
    kwargs = sample.materialize(rng, dtype)
    diff = {d.var_name for d in info.derivatives}
    names = [
        name
        for name, value in kwargs.items()
        if name in diff and isinstance(value, np.ndarray) and value.dtype.kind == "f"
    ]
    return kwargs, names


def call(
    info: DifferentiabilityInfo,
    kwargs: dict[str, object],
    tensors: dict[str, yg.Tensor],
) -> yg.Tensor:
    args = {}
    for name, value in kwargs.items():
        if name in tensors:
            args[name] = tensors[name]
        elif isinstance(value, np.ndarray):
            args[name] = yg.tensor(value)
        else:
            args[name] = value
    return wrapper(info)(**args)


def numerical_vjp(
    f: Callable[..., np.ndarray],
    arrays: list[np.ndarray],
    cotangent: np.ndarray,
    eps: float = 1e-6,
) -> list[np.ndarray]:
    """d<cotangent, f(*arrays)>/d(arrays) by central differences, per element."""
    grads = []
    for x in arrays:
        g = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            saved = x[i]
            x[i] = saved + eps
            up = np.vdot(cotangent, f(*arrays))
            x[i] = saved - eps
            down = np.vdot(cotangent, f(*arrays))
            x[i] = saved
            g[i] = (up - down) / (2 * eps)
        grads.append(g)
    return grads
