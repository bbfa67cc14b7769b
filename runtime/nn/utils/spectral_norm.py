"""`yg.nn.utils.spectral_norm`: the older, hook-based spectral normalisation.

`spectral_norm(module)` turns `module.weight` into `module.weight_orig / sigma`,
recomputed by a forward pre-hook (a `SpectralNorm` object) before every call.
sigma estimates the largest singular value of the weight seen as a matrix (its
`dim` first, the other dimensions flattened) as u . (W v), where u and v are
the buffers `weight_u` and `weight_v`; in training mode each forward first
refines them by `n_power_iterations` steps of power iteration (v from u, then
u from v). They start as normalised normal draws from the default generator,
u's first, with no iteration at registration (unlike
`parametrizations.spectral_norm`).

Decisions:

* The refined u and v are written into the buffers in place and the weight is
  computed from copies of them, so that the graph of this forward keeps the
  values it used even after the next forward refines the buffers again.
* PyTorch also registers state-dict hooks recording a format version and
  converting dicts of its pre-1.0 layout; yamlgrad's state dicts have one
  layout, so the keys (`weight_orig`, `weight_u`, `weight_v`) are all there is.
"""

from __future__ import annotations

from typing import Any, TypeVar

from yamlgrad.runtime.autograd.grad_mode import no_grad
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.nn import functional as F
from yamlgrad.runtime.nn.layers import _ConvTransposeNd
from yamlgrad.runtime.nn.module import Module
from yamlgrad.runtime.nn.parameter import Parameter

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]

# What the normalisation adds to a module, beside `<name>` itself.
_ORIGINAL, _LEFT, _RIGHT = "_orig", "_u", "_v"


def _matrix_view(weight: Tensor, dim: int) -> Tensor:
    """`weight` as a matrix with one row per index of dimension `dim`."""
    if dim != 0:
        order = [dim, *(d for d in range(weight.ndim) if d != dim)]
        weight = weight.permute(*order)
    return weight.reshape(weight.shape[0], -1)


class SpectralNorm:
    """The forward pre-hook of `spectral_norm`: its options, and the
    recomputation of `module.<name>` before each call."""

    _version: int = 1

    def __init__(
        self,
        name: str = "weight",
        n_power_iterations: int = 1,
        dim: int = 0,
        eps: float = 1e-12,
    ) -> None:
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.name = name
        self.dim = dim
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        return _matrix_view(weight, self.dim)

    def _unit(self, vector: Tensor) -> Tensor:
        return F.normalize(vector, dim=0, eps=self.eps)

    def _iterate(self, matrix: Tensor, u: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Refine the buffers u and v in place; return copies of the results."""
        with no_grad():
            for _ in range(self.n_power_iterations):
                v.copy_(self._unit(ops.mv(matrix.t(), u)))
                u.copy_(self._unit(ops.mv(matrix, v)))
            return u.clone(), v.clone()

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        """`<name>_orig` divided by the estimate of its largest singular value."""
        original = getattr(module, self.name + _ORIGINAL)
        u = getattr(module, self.name + _LEFT)
        v = getattr(module, self.name + _RIGHT)
        matrix = self.reshape_weight_to_matrix(original)
        if do_power_iteration:
            u, v = self._iterate(matrix, u, v)
        return original / ops.dot(u, ops.mv(matrix, v))

    def __call__(self, module: Module, inputs: Any) -> None:
        weight = self.compute_weight(module, do_power_iteration=module.training)
        setattr(module, self.name, weight)

    def _attach(self, module: Module, weight: Parameter) -> None:
        """Move `weight` to `<name>_orig`, start u and v, keep a plain tensor
        at `<name>` until the first forward, and register the hook."""
        rows, columns = self.reshape_weight_to_matrix(weight).shape
        with no_grad():
            u = self._unit(weight.new_empty(rows).normal_(0, 1))
            v = self._unit(weight.new_empty(columns).normal_(0, 1))
        delattr(module, self.name)
        module.register_parameter(self.name + _ORIGINAL, weight)
        setattr(module, self.name, weight.data)
        module.register_buffer(self.name + _LEFT, u)
        module.register_buffer(self.name + _RIGHT, v)
        module.register_forward_pre_hook(self)

    def remove(self, module: Module) -> None:
        """Put back `<name>` as a parameter holding the normalised weight."""
        with no_grad():
            final = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", _LEFT, _RIGHT, _ORIGINAL):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(final.detach()))

    @staticmethod
    def apply(
        module: Module, name: str, n_power_iterations: int, dim: int, eps: float
    ) -> SpectralNorm:
        if _hook_key(module, name) is not None:
            raise RuntimeError(
                "Cannot register two spectral_norm hooks on the same parameter "
                f"{name}"
            )
        hook = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(
                f"`SpectralNorm` cannot be applied as parameter `{name}` is None"
            )
        hook._attach(module, weight)
        return hook


def _hook_key(module: Module, name: str) -> Any:
    """The key of the SpectralNorm hook of `name` among the module's forward
    pre-hooks, or None."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            return key
    return None


ModuleT = TypeVar("ModuleT", bound=Module)


def spectral_norm(
    module: ModuleT,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> ModuleT:
    """Divide `module.<name>` by its spectral norm before every forward (along
    dimension 1 for transposed convolutions, 0 otherwise, unless `dim` says)."""
    if dim is None:
        dim = 1 if isinstance(module, _ConvTransposeNd) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: ModuleT, name: str = "weight") -> ModuleT:
    """Undo `spectral_norm`: `<name>` is a parameter again, the normalised weight."""
    key = _hook_key(module, name)
    if key is None:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    module._forward_pre_hooks[key].remove(module)
    del module._forward_pre_hooks[key]
    return module
