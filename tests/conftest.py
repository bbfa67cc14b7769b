"""Shared test helpers: the YAML's own entries, and numerical derivatives."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

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
    """Keyword arguments for one sample (ndarrays for tensors, lists of them for a
    Tensor[]), and the slots of the differentiable float tensors among them: a
    name, or `name[i]` for the i-th tensor of a list. A composite has no formulas:
    every float tensor of it is differentiable."""
    kwargs = sample.materialize(rng, dtype)
    diff = {n for d in info.derivatives for n in d.var_names}
    slots = []
    for name, value in kwargs.items():
        if info.composite is None and name not in diff:
            continue
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            slots.append(name)
        elif isinstance(value, list):
            slots += [
                f"{name}[{i}]"
                for i, v in enumerate(value)
                if v is not None and v.dtype.kind == "f"
            ]
    return kwargs, slots


def slot_array(kwargs: dict[str, object], slot: str) -> np.ndarray:
    """The ndarray behind a slot."""
    name, _, index = slot.partition("[")
    value = kwargs[name]
    return value[int(index[:-1])] if index else value  # type: ignore[index,return-value]


def build_args(
    kwargs: dict[str, object],
    leaves: dict[str, Any],
    make: Callable[[np.ndarray], Any],
) -> dict[str, object]:
    """Call arguments: `leaves[slot]` where given, `make(array)` for other arrays."""
    args: dict[str, object] = {}
    for name, value in kwargs.items():
        if isinstance(value, list):
            slots = [f"{name}[{i}]" for i in range(len(value))]
            args[name] = [
                leaves[slot] if slot in leaves else None if v is None else make(v)
                for slot, v in zip(slots, value)
            ]
        elif isinstance(value, np.ndarray):
            args[name] = leaves[name] if name in leaves else make(value)
        else:
            args[name] = value
    return args


def call(
    info: DifferentiabilityInfo,
    kwargs: dict[str, object],
    tensors: dict[str, yg.Tensor],
) -> Any:
    """The generated function of this overload on the sample's arguments."""
    return wrapper(info)(**inplace_safe(info, build_args(kwargs, tensors, yg.tensor)))


def inplace_safe(info: DifferentiabilityInfo, args: dict[str, Any]) -> dict[str, Any]:
    """An in-place op may not write into a leaf that requires grad: give it
    `self * 1` (a non-leaf whose gradient still reaches the leaf), in any library."""
    if info.inplace and getattr(args.get("self"), "requires_grad", False):
        args = {**args, "self": args["self"] * 1}
    return args


def float_outputs(result: Any, info: DifferentiabilityInfo | None = None) -> list[Any]:
    """The floating outputs of an op (a tuple's `indices` are left out), and of
    those only the differentiable ones of `info` (native_layer_norm's output, not
    its mean and rstd)."""
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    if info is not None and info.output_differentiability is not None:
        outputs = [o for o, d in zip(outputs, info.output_differentiability) if d]
    return [o for o in outputs if o.dtype.is_floating_point]


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
