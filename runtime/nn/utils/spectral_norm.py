"""`yg.nn.utils.spectral_norm`: the older, hook-based spectral normalisation.

`spectral_norm(module)` moves `module.weight` to the parameter `weight_orig`,
adds buffers `weight_u` and `weight_v` (normal draws from yamlgrad's default
generator, normalised), and a forward pre-hook that sets `module.weight =
weight_orig / sigma` before every call, sigma = u . (W v), after
`n_power_iterations` steps of power iteration in training mode (v first, then
u; none at registration, unlike `parametrizations.spectral_norm`).

PyTorch also registers state-dict hooks that record a format version and
convert dicts of its pre-1.0 format; yamlgrad's state dicts have one format,
so the keys (`weight_orig`, `weight_u`, `weight_v`) are all there is.
"""

from __future__ import annotations

from typing import Any, TypeVar

from yamlgrad.runtime.autograd.grad_mode import no_grad
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.nn import functional as F
from yamlgrad.runtime.nn.layers import ConvTranspose2d
from yamlgrad.runtime.nn.module import Module
from yamlgrad.runtime.nn.parameter import Parameter

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook of `spectral_norm`."""

    _version: int = 1

    def __init__(
        self,
        name: str = "weight",
        n_power_iterations: int = 1,
        dim: int = 0,
        eps: float = 1e-12,
    ) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        weight_mat = weight
        if self.dim != 0:
            rest = [d for d in range(weight_mat.ndim) if d != self.dim]
            weight_mat = weight_mat.permute(self.dim, *rest)
        return weight_mat.reshape(weight_mat.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(ops.mv(weight_mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(ops.mv(weight_mat, v), dim=0, eps=self.eps))
                # Clones: the next forward changes the buffers in place.
                u, v = u.clone(), v.clone()
        sigma = ops.dot(u, ops.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(
            module,
            self.name,
            self.compute_weight(module, do_power_iteration=module.training),
        )

    @staticmethod
    def apply(
        module: Module, name: str, n_power_iterations: int, dim: int, eps: float
    ) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    "Cannot register two spectral_norm hooks on the same parameter "
                    f"{name}"
                )
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(
                f"`SpectralNorm` cannot be applied as parameter `{name}` is None"
            )
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


T_module = TypeVar("T_module", bound=Module)


def spectral_norm(
    module: T_module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> T_module:
    """Divide `module.<name>` by its spectral norm before every forward."""
    if dim is None:
        dim = 1 if isinstance(module, ConvTranspose2d) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo `spectral_norm`: `<name>` is a parameter again, the normalised weight."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
