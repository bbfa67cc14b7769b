"""`yg.nn.utils.parametrizations`: weight_norm and spectral_norm as
parametrizations (`nn.utils.parametrize`), as PyTorch's.

* `orthogonal(module, name, orthogonal_map=None, *, use_trivialization=True)`:
  the weight is an orthogonal matrix (or one with orthonormal columns or rows)
  Q = base @ map(X), map being `matrix_exp` or `cayley` of the skew-symmetric
  part of X, or the Householder product of X's strictly lower part;
  `base` is the orthogonal matrix assigned last (trivialization).
  The QR factorisations are numpy's LAPACK `geqrf` (through linalg.qr and,
  for the packed form the householder map without trivialization stores,
  scipy's `dgeqrf`), as PyTorch's; the Cayley map applies `linalg.inv`
  where PyTorch calls `linalg.solve`.

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

from enum import Enum, auto

import numpy as np

from yamlgrad.runtime.autograd.grad_mode import no_grad
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime import factories
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.nn import functional as F
from yamlgrad.runtime.nn.layers import _ConvTransposeNd
from yamlgrad.runtime.nn.module import Module
from yamlgrad.runtime.nn.utils import parametrize
from yamlgrad.runtime.nn.utils.weight_norm import _norm_except_dim, _weight_norm

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


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
        rank = weight.ndim
        if not -rank <= dim < rank:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [-{rank}, "
                f"{rank - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.dim = dim % rank
        self.eps = eps
        if rank == 1:
            return  # a vector is just normalised: no power iteration
        self.n_power_iterations = n_power_iterations
        matrix = self._reshape_weight_to_matrix(weight)
        for buffer, length in (("_u", matrix.shape[0]), ("_v", matrix.shape[1])):
            start = matrix.new_empty(length).normal_(0, 1)
            self.register_buffer(buffer, F.normalize(start, dim=0, eps=eps))
        # Fifteen steps at registration, so the first forward starts close to
        # the singular vectors.
        self._power_method(matrix, 15)

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


def _tensor_named(module: Module, name: str) -> Tensor:
    """The parameter or buffer `name` of `module`, which must exist."""
    found = getattr(module, name, None)
    if isinstance(found, Tensor):
        return found
    raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Parametrize `module.<name>` as the weight over its spectral norm."""
    weight = _tensor_named(module, name)
    if dim is None:
        dim = 1 if isinstance(module, _ConvTransposeNd) else 0
    normalisation = _SpectralNorm(weight, n_power_iterations, dim, eps)
    parametrize.register_parametrization(module, name, normalisation)
    return module


def _mT(x: Tensor) -> Tensor:
    return x.transpose(-2, -1)


def _is_orthogonal(Q: Tensor) -> bool:
    n, k = Q.shape[-2], Q.shape[-1]
    eye = factories.eye(k, dtype=Q.dtype)
    eps = 10.0 * n * float(np.finfo(Q._data.dtype).eps)
    return bool(np.allclose((_mT(Q) @ Q)._data, eye._data, rtol=1e-5, atol=eps))


def _make_orthogonal(A: Tensor) -> Tensor:
    """Q of A's QR decomposition, its columns' signs fixed by R's diagonal."""
    Q, R = ops.linalg_qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


def _geqrf(A: Tensor) -> tuple[Tensor, Tensor]:
    """LAPACK's packed QR (`torch.geqrf`) of each matrix of `A`, without history."""
    from scipy.linalg import lapack

    data = np.asarray(A._data)
    batch = data.reshape(-1, *data.shape[-2:])
    packed, taus = [], []
    for matrix in batch:
        qr, tau, _, _ = lapack.dgeqrf(np.asfortranarray(matrix, dtype=np.float64))
        packed.append(qr)
        taus.append(tau)
    out = np.stack(packed).reshape(data.shape).astype(data.dtype)
    tau = np.stack(taus).reshape(*data.shape[:-2], -1).astype(data.dtype)
    return Tensor._make(out), Tensor._make(tau)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(
        self,
        weight: Tensor,
        orthogonal_map: _OrthMaps,
        *,
        use_trivialization: bool = True,
    ) -> None:
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = _mT(X)
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                zeros = X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)
                X = ops.cat([X, zeros], dim=-1)
            A = X - _mT(X)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = ops.linalg_matrix_exp(A)
            else:
                eye = factories.eye(n, dtype=A.dtype)
                Q = ops.linalg_inv(eye - 0.5 * A) @ (eye + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = ops.linalg_householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = _mT(Q)
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. "
                f"Got a tensor of shape {Q.shape}."
            )
        given_shape = Q.shape
        transpose = Q.shape[-2] < Q.shape[-1]
        if transpose:
            Q = _mT(Q)
        n, k = Q.shape[-2], Q.shape[-1]  # n >= k from here on
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the "
                    "Cayley parametrizations when use_trivialization=False."
                )
            A, tau = _geqrf(Q)
            # The diagonal holds the signs of R's diagonal; -1 where tau is 0
            # (no reflection happened), as PyTorch's.
            diagonal = np.sign(np.diagonal(A._data, axis1=-2, axis2=-1))
            diagonal = np.where(tau._data == 0.0, -diagonal, diagonal)
            data = A._data.copy()
            index = np.arange(min(n, k))
            data[..., index, index] = diagonal
            A = Tensor._make(data)
            return _mT(A) if transpose else A
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:
            N = factories.randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype)
            Q = _make_orthogonal(ops.cat([Q, N], dim=-1))
        self.base = Q
        # The parametrized value at -Id is base itself: -Id's tril is its
        # diagonal, whose skew part is 0, so map(-Id) is the identity; the
        # Householder map of -Id is -Id (no reflections) times its int diagonal.
        neg_id = factories.zeros(given_shape, dtype=Q.dtype)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Parametrize `module.<name>` as an orthogonal (or semi-orthogonal) matrix."""
    weight = _tensor_named(module, name)
    if weight.ndim < 2:
        raise ValueError(
            "Expected a matrix or batch of matrices. Got a tensor of "
            f"{weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        rows, columns = weight.shape[-2:]
        orthogonal_map = "matrix_exp" if rows == columns else "householder"
    chosen = getattr(_OrthMaps, orthogonal_map, None)
    if chosen is None:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    parametrization = _Orthogonal(weight, chosen, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, parametrization, unsafe=True)
    return module
