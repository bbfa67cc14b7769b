"""`yg.nn.utils.weight_norm`: the older, hook-based weight normalisation.

`weight_norm(module)` replaces `module.weight` by two parameters, `weight_g`
(the norms, one per slice along `dim`) and `weight_v` (the direction), and a
forward pre-hook that sets `module.weight = weight_g * weight_v / ||weight_v||`
before every call. PyTorch deprecates it (with a FutureWarning) in favour of
`parametrizations.weight_norm`, which stores the same two tensors as
`parametrizations.weight.original0` and `original1`.

`_norm_except_dim` and `_weight_norm` are PyTorch's `norm_except_dim` and
`_weight_norm`, composed of recorded ops (PyTorch's CPU kernel has a node of its
own, `WeightNormInterfaceBackward0`; the values and gradients are the same).
"""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.nn.module import Module
from yamlgrad.runtime.nn.parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def _norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The `pow` norm of each slice of `v` along `dim`, shaped to broadcast
    against `v` (all of `v` for dim=-1)."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        shape = (v.shape[0],) + (1,) * (v.ndim - 1)
        return v.reshape(v.shape[0], -1).norm(pow, 1).reshape(shape)
    if dim == v.ndim - 1:
        shape = (1,) * (v.ndim - 1) + (v.shape[-1],)
        return v.reshape(-1, v.shape[-1]).norm(pow, 0).reshape(shape)
    return _norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """g * v / ||v||, the norm taken per slice along `dim`."""
    return v * (g / _norm_except_dim(v, 2, dim))


_MAGNITUDE, _DIRECTION = "_g", "_v"


def _hook_key(module: Module, name: str) -> Any:
    """The key of the WeightNorm hook of `name` among the module's forward
    pre-hooks, or None."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            return key
    return None


class WeightNorm:
    """The forward pre-hook of `weight_norm`: recomputes the weight before a call."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        magnitude = getattr(module, self.name + _MAGNITUDE)
        direction = getattr(module, self.name + _DIRECTION)
        return _weight_norm(direction, magnitude, self.dim)

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))

    def _attach(self, module: Module) -> None:
        """Split the parameter in two, set a first weight, register the hook."""
        weight = module._parameters.pop(self.name)
        magnitude = _norm_except_dim(weight, 2, self.dim)
        module.register_parameter(self.name + _MAGNITUDE, Parameter(magnitude.data))
        module.register_parameter(self.name + _DIRECTION, Parameter(weight.data))
        self(module, ())
        module.register_forward_pre_hook(self)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        warnings.warn(
            "`torch.nn.utils.weight_norm` is deprecated in favor of "
            "`torch.nn.utils.parametrizations.weight_norm`.",
            FutureWarning,
            stacklevel=3,
        )
        if _hook_key(module, name) is not None:
            raise RuntimeError(
                f"Cannot register two weight_norm hooks on the same parameter {name}"
            )
        hook = WeightNorm(name, dim)
        getattr(module, name)  # AttributeError for a missing parameter, as torch
        hook._attach(module)
        return hook

    def remove(self, module: Module) -> None:
        """Put back `<name>` as one parameter holding the current weight."""
        merged = self.compute_weight(module).data
        delattr(module, self.name)
        for suffix in (_MAGNITUDE, _DIRECTION):
            module._parameters.pop(self.name + suffix)
        setattr(module, self.name, Parameter(merged))


ModuleT = TypeVar("ModuleT", bound=Module)


def weight_norm(module: ModuleT, name: str = "weight", dim: int | None = 0) -> ModuleT:
    """Split `module.<name>` into a magnitude `<name>_g` and a direction `<name>_v`."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: ModuleT, name: str = "weight") -> ModuleT:
    """Merge `<name>_g` and `<name>_v` back into one parameter `<name>`."""
    key = _hook_key(module, name)
    if key is None:
        raise ValueError(f"weight_norm of '{name}' not found in {module}")
    module._forward_pre_hooks[key].remove(module)
    del module._forward_pre_hooks[key]
    return module
