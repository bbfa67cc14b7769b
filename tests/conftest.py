"""Shared test helpers: the YAML's own entries; the sample and finite-difference
helpers live in the public yamlgrad.testing, which tests/test_gradients.py runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import yamlgrad as yg
from yamlgrad.generated import VariableType
from yamlgrad.testing import (  # noqa: F401 - the helpers tests import from here
    build_args,
    float_outputs,
    inplace_safe,
    numerical_vjp,
    python_names,
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
    args = inplace_safe(info, build_args(kwargs, tensors, yg.tensor))
    return wrapper(info)(**python_names(args))


# -- calling an entry the way a user would ----------------------------------------


def split_arguments(
    info: DifferentiabilityInfo, values: dict[str, Any]
) -> tuple[list[Any], dict[str, Any]]:
    """Positional arguments in schema order, keywords after a gap or a `*`."""
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    gap = False
    for argument in info.func.arguments:
        if argument.name not in values:
            gap = True
            continue
        if argument.kwarg_only or gap:
            kwargs[argument.name] = values[argument.name]
        else:
            args.append(values[argument.name])
    return args, kwargs


def overload_name(info: DifferentiabilityInfo) -> str:
    return info.func.overload or "default"


def call_torch(
    torch: ModuleType, info: DifferentiabilityInfo, values: dict, leaf_safe: bool = True
) -> Any:
    """The PyTorch call that reaches exactly this overload, as a user writes it.
    `leaf_safe`: an in-place op gets `self * 1` for a leaf that requires grad."""
    args, kwargs = split_arguments(
        info, inplace_safe(info, values) if leaf_safe else values
    )
    name = info.func.name
    if info.python_binding and hasattr(torch, name):
        return getattr(torch, name)(*args, **kwargs)
    if info.python_binding and hasattr(torch.Tensor, name):
        return getattr(args[0], name)(*args[1:], **kwargs)
    return getattr(getattr(torch.ops.aten, name), overload_name(info))(*args, **kwargs)


def yamlgrad_routes(info: DifferentiabilityInfo) -> dict[str, Callable[..., Any]]:
    """Every public way to reach this overload in yamlgrad, by route name."""
    name = info.func.name
    routes: dict[str, Callable[..., Any]] = {}
    if info.python_binding and info.function:
        routes["function"] = getattr(yg, name)
    if info.python_binding and info.method:
        routes["method"] = lambda *a, **k: getattr(a[0], name)(*a[1:], **k)
    routes["ops"] = getattr(getattr(yg.ops, name), overload_name(info))
    return routes


def call_yamlgrad(
    info: DifferentiabilityInfo,
    values: dict,
    route: str | None = None,
    leaf_safe: bool = True,
) -> yg.Tensor:
    """The yamlgrad call a user would write (function, else method, else ops)."""
    routes = yamlgrad_routes(info)
    fn = routes[route] if route is not None else next(iter(routes.values()))
    args, kwargs = split_arguments(
        info, inplace_safe(info, values) if leaf_safe else values
    )
    return fn(*args, **kwargs)
