"""torch.linalg's and torch's linear algebra written in Python over the ops, as
PyTorch writes them in torch/functional.py and torch/_lowrank.py, or whose
result derivatives.yaml cannot type: `torch.norm`, `torch.lu`,
`torch.linalg.matrix_rank` (an int64 count, no gradient),
`torch.svd_lowrank` and `torch.pca_lowrank`, and `torch.linalg.eig` and
`eigvals`.

eig and eigvals: PyTorch returns the eigenvalues and eigenvectors of a real
matrix as complex tensors, always (also when every eigenvalue is real).
yamlgrad has no complex dtype, so both check their input as PyTorch does and
then raise NotImplementedError naming the missing dtype, rather than return
real tensors no PyTorch program expects; for a symmetric matrix, eigh and
eigvalsh give the real results. The backward, linalg_eig_backward in
runtime/ops/linalg_spectral.py, is the general one already.
"""

from __future__ import annotations

import warnings
from typing import Any

from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.ops import linalg_composites
from yamlgrad.runtime.ops.linalg_spectral import eig_kernel

# `norm` is left out: yamlgrad.norm is also the generated norm.Scalar and
# norm.ScalarOpt_dim, which the facade's binding of this function replaces.
__all__ = ["lu", "svd_lowrank", "pca_lowrank"]
LINALG = ("matrix_rank", "eig", "eigvals")


def norm(
    input: Tensor,
    p: Any = "fro",
    dim: Any = None,
    keepdim: bool = False,
    out: Any = None,
    dtype: Any = None,
) -> Tensor:
    """`torch.norm` and `Tensor.norm`: a vector norm of `p` over `dim` (every
    dim by default; "fro" over at most two dims is the 2-norm), or a matrix
    norm ("nuc", or "fro" over more dims: linalg.matrix_norm's error).

    >>> yg.norm(yg.tensor([[3.0, 4.0]]))  # grad_fn=<LinalgVectorNormBackward0>
    tensor(5.)
    """
    if out is not None:
        raise TypeError("norm(): out= is not supported")
    dims = [dim] if isinstance(dim, int) else None if dim is None else list(dim)
    if isinstance(p, str):
        if p == "fro" and (dims is None or len(dims) <= 2):
            return ops.linalg_vector_norm(input, 2, dims, keepdim, dtype=dtype)
        dims = list(range(input.ndim)) if dims is None else dims
        return ops.linalg_matrix_norm(input, p, dims, keepdim, dtype=dtype)
    p = 2.0 if p is None else p
    return ops.linalg_vector_norm(input, p, dims, keepdim, dtype=dtype)


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False, out: Any = None) -> Any:
    """`torch.lu`: (LU, pivots), and the infos with `get_infos` (else a
    singular matrix raises), through linalg.lu_factor_ex
    (LinalgLuFactorExBackward0), with PyTorch's deprecation warning."""
    if out is not None:
        raise TypeError("lu(): out= is not supported")
    warnings.warn(
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / "
        "torch.linalg.lu_factor_ex and will be removed in a future PyTorch "
        "release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced "
        "with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, "
        "pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be "
        "replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, "
        "compute_pivots)",
        UserWarning,
        stacklevel=2,
    )
    LU, pivots, info = ops.linalg_lu_factor_ex(
        A, pivot=pivot, check_errors=not get_infos
    )
    return (LU, pivots, info) if get_infos else (LU, pivots)


def matrix_rank(
    A: Tensor,
    tol: Any = None,
    hermitian: bool = False,
    *,
    atol: Any = None,
    rtol: Any = None,
) -> Tensor:
    """`torch.linalg.matrix_rank`: the count (int64) of singular values, or
    absolute eigenvalues with `hermitian`, above max(atol, rtol * the largest);
    the legacy `tol` is atol with rtol 0. No gradient.

    >>> yg.linalg.matrix_rank(yg.eye(3))
    tensor(3)
    """
    if tol is not None:
        if atol is not None or rtol is not None:
            raise RuntimeError(
                "linalg.matrix_rank: tol is deprecated, use atol and rtol instead"
            )
        atol, rtol = tol, 0.0
    return linalg_composites.matrix_rank(A, atol, rtol, hermitian)


def eig(A: Tensor) -> Any:
    """`torch.linalg.eig`: refused after PyTorch's checks, as yamlgrad has no
    complex dtype for its results (see the module docstring)."""
    return eig_kernel(A._data if isinstance(A, Tensor) else A)


def eigvals(A: Tensor) -> Any:
    """`torch.linalg.eigvals`: as `eig` (its results are complex too)."""
    return eig_kernel(A._data if isinstance(A, Tensor) else A, "linalg.eigvals")


def _mH(x: Tensor) -> Tensor:
    return ops.transpose(x, -2, -1)


def _basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:
    """torch._lowrank.get_approximate_basis: an orthonormal Q (m x q) whose
    span approximates the range of A - M, by `niter` subspace iterations from
    a Gaussian start drawn from the default generator."""
    from yamlgrad.runtime import factories

    R = factories.randn(A.shape[-1], q, dtype=A.dtype)
    X = ops.matmul(A, R)
    if M is not None:
        X = X - ops.matmul(M, R)
    Q = ops.linalg_qr(X)[0]
    for _ in range(niter):
        X = ops.matmul(_mH(A), Q)
        if M is not None:
            X = X - ops.matmul(_mH(M), Q)
        Q = ops.linalg_qr(X)[0]
        X = ops.matmul(A, Q)
        if M is not None:
            X = X - ops.matmul(M, Q)
        Q = ops.linalg_qr(X)[0]
    return Q


def svd_lowrank(
    A: Tensor, q: int | None = 6, niter: int = 2, M: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """`torch.svd_lowrank`: (U, S, V) of a rank-q approximation of A - M by
    randomized subspace iteration (Halko et al. 2009, algorithm 5.1), as
    torch/_lowrank.py: exact when q is at least the rank. V, as torch.svd."""
    q = 6 if q is None else q
    m, n = A.shape[-2], A.shape[-1]
    if M is not None:
        M = ops.expand(M, tuple(A.shape))
    if m < n:
        A = _mH(A)
        M = None if M is None else _mH(M)
    Q = _basis(A, q, niter, M)
    B = ops.matmul(_mH(Q), A)
    if M is not None:
        B = B - ops.matmul(_mH(Q), M)
    U, S, Vh = ops.linalg_svd(B, full_matrices=False)
    V, U = _mH(Vh), ops.matmul(Q, U)
    return (V, S, U) if m < n else (U, S, V)


def pca_lowrank(
    A: Tensor, q: int | None = None, center: bool = True, niter: int = 2
) -> tuple[Tensor, Tensor, Tensor]:
    """`torch.pca_lowrank`: svd_lowrank of A with its column means removed
    (when `center`), q = min(6, m, n) by default."""
    m, n = A.shape[-2], A.shape[-1]
    q = min(6, m, n) if q is None else q
    if not (q >= 0 and q <= min(m, n)):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, "
            f"n)={min(m, n)}"
        )
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter, M=None)
    C = ops.mean(A, [-2], True)
    return svd_lowrank(A - C, q, niter=niter, M=None)
