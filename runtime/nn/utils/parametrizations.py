"""`yg.nn.utils.parametrizations`: weight_norm and spectral_norm as
parametrizations (`nn.utils.parametrize`), as PyTorch's.

* `weight_norm(module, name, dim=0)`: `original0` is g (the norm of each slice
  of the weight along `dim`, e.g. (3, 1) for Linear(4, 3)), `original1` is v; the
  weight is g * v / ||v||.
* `spectral_norm(module, name, n_power_iterations=1, eps=1e-12, dim=None)`: the
  weight divided by its largest singular value sigma = u^H W v, with u and v
  (buffers `_u`, `_v`) kept by power iteration on W (the weight as a matrix,
  `dim` first: 0, or 1 for transposed convolutions). u and v start as normal
  draws from yamlgrad's default generator, refined by 15 iterations at
  registration and `n_power_iterations` more at each forward in training mode.
"""

from __future__ import annotations

from yamlgrad.runtime.autograd.grad_mode import no_grad
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.nn import functional as F
from yamlgrad.runtime.nn.layers import ConvTranspose2d
from yamlgrad.runtime.nn.module import Module
from yamlgrad.runtime.nn.utils import parametrize
from yamlgrad.runtime.nn.utils.weight_norm import _norm_except_dim, _weight_norm

__all__ = ["weight_norm", "spectral_norm"]


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Parametrize `module.<name>` as g * v / ||v||."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(
        self,
        weight: Tensor,
        n_power_iterations: int = 1,
        dim: int = 0,
        eps: float = 1e-12,
    ) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [-{ndim}, "
                f"{ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            rest = (d for d in range(weight.ndim) if d != self.dim)
            weight = weight.permute(self.dim, *rest)
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(
                    F.normalize(ops.mv(weight_mat, self._v), dim=0, eps=self.eps)
                )
                self._v.copy_(
                    F.normalize(
                        ops.mv(weight_mat.transpose(0, 1), self._u),
                        dim=0,
                        eps=self.eps,
                    )
                )

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # Clones: the power method changes the buffers in place, and autograd
        # must see the values this forward used.
        u, v = self._u.clone(), self._v.clone()
        sigma = ops.vdot(u, ops.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Parametrize `module.<name>` as the weight over its spectral norm."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(
            f"Module '{module}' has no parameter or buffer with name '{name}'"
        )
    if dim is None:
        dim = 1 if isinstance(module, ConvTranspose2d) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
