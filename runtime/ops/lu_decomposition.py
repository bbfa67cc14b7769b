"""Linear algebra: the LU factorisation with partial pivoting (linalg_lu_factor_ex,
linalg_lu, lu_unpack, linalg_lu_solve), kernels over scipy.linalg.lu_factor
(imported on first use), each beside its backward helper.

A factorisation is LAPACK's: `LU` holds the unit lower triangle of L below its
diagonal and U on and above it, and `pivots` (int32, from 1) the row swapped
with each row in turn, so A = P L U. The helpers translate PyTorch's
(linalg_lu_backward, lu_factor_ex_backward, lu_unpack_backward,
linalg_lu_solve_LU) into operations `array_namespace` offers on ndarrays and on
Tensors, so every formula has a double backward; the permutation is a constant.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime.ops.common import _lapack
from yamlgrad.runtime.ops.linalg_decompositions import lapack_layout
from yamlgrad.runtime.ops.namespace import (
    array_namespace,
    constant_tensor,
    register_numpy_kernels,
)

KERNELS = (
    "lu_factor_kernel",
    "lu_kernel",
    "lu_unpack_kernel",
    "lu_solve_kernel",
)
BACKWARD_HELPERS = (
    "linalg_lu_backward",
    "lu_factor_ex_backward",
    "lu_unpack_backward",
    "linalg_lu_solve_LU",
    "linalg_lu_solve_B",
)


def _mT(x: Any) -> Any:
    return array_namespace(x).transpose(x, -1, -2)


def _data(x: Any) -> np.ndarray:
    """The values of an ndarray or a Tensor (a permutation is a constant)."""
    return x if isinstance(x, np.ndarray) else x.detach().numpy()


def _like(x: Any, array: np.ndarray) -> Any:
    """`array` as a constant beside `x`: a Tensor outside any graph for a Tensor."""
    return array if isinstance(x, np.ndarray) else constant_tensor(array)


def _check_float_matrix(a: Any, op: str) -> None:
    if np.ndim(a) < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if np.result_type(a).kind != "f":
        from yamlgrad.runtime.errors import scalar_type_name

        raise RuntimeError(
            f"{op}: Expected a floating point or complex tensor as input. Got "
            f"{scalar_type_name(np.result_type(a))}"
        )


# -- factorising --------------------------------------------------------------------


def lu_factor_kernel(a: Any, pivot: bool, check_errors: bool) -> tuple[Any, Any, Any]:
    """(LU, pivots, info); info is the first zero diagonal element of U (from 1),
    0 when there is none; with `check_errors` that raises. LAPACK's getrf on
    each matrix, in place in a column-major copy of A (the layout PyTorch
    returns)."""
    _check_float_matrix(a, "torch.linalg.lu_factor_ex")
    if not pivot:
        raise RuntimeError(
            "linalg.lu_factor: LU without pivoting is not implemented on the CPU"
        )
    a = np.asarray(a)
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    lu = np.swapaxes(np.empty(batch + (n, m), dtype=a.dtype), -1, -2)
    np.copyto(lu, a)
    pivots = np.empty(batch + (k,), dtype=np.int32)
    if m == 0 or n == 0:
        pivots[...] = np.arange(1, k + 1)
    else:
        getrf = _lapack("getrf", lu)
        for i in np.ndindex(*batch):
            pivots[i] = getrf(lu[i], overwrite_a=1)[1][:k] + 1
    zero = np.diagonal(lu, 0, -2, -1) == 0
    first = zero.argmax(-1) + 1 if k else np.zeros(batch, dtype=np.int64)
    info = np.where(zero.any(-1), first, 0).astype(np.int32)
    if check_errors and np.any(info):
        first = int(info.reshape(-1)[np.flatnonzero(info)[0]])
        raise RuntimeError(
            f"torch.linalg.lu_factor: U[{first},{first}] is zero and using it on "
            "lu_solve would result in a division by zero. If you still want to "
            "perform the factorization, consider calling linalg.lu(A, pivot) or "
            "linalg.lu_factor_ex(A, pivot)"
        )
    return lu, pivots, info


def _permutation(pivots: np.ndarray, m: int, dtype: Any) -> np.ndarray:
    """P with A = P L U, from LAPACK's row swaps (1-based): row i of P^T A is
    row perm[i] of A, so P[perm[i], i] = 1."""
    batch = pivots.shape[:-1]
    perm = np.broadcast_to(np.arange(m), batch + (m,)).copy()
    swaps = pivots.astype(np.int64) - 1
    for i in range(swaps.shape[-1]):
        j = swaps[..., i : i + 1]
        at_i = perm[..., i : i + 1].copy()
        perm[..., i : i + 1] = np.take_along_axis(perm, j, -1)
        np.put_along_axis(perm, j, at_i, -1)
    out = np.zeros(batch + (m, m), dtype=dtype)
    np.put_along_axis(out, perm[..., None, :], 1, -2)
    return out


def _unpack(lu: Any, m: int, n: int) -> tuple[Any, Any]:
    """L (m x k, unit diagonal) and U (k x n) of a packed LU, k = min(m, n);
    written with the array namespace, so they are differentiable in LU."""
    xp = array_namespace(lu)
    k = min(m, n)
    eye = np.eye(m, k, dtype=_data(lu).dtype)
    lower = xp.tril(lu[..., :, :k], -1) + _like(lu, eye)
    return lower, xp.triu(lu[..., :k, :], 0)


def lu_unpack_kernel(
    lu: Any, pivots: Any, unpack_data: bool, unpack_pivots: bool
) -> tuple[Any, Any, Any]:
    """(P, L, U) of a packed factorisation; empty ones for what is not asked."""
    if np.ndim(lu) < 2:
        raise RuntimeError(
            "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(np.shape(lu))} instead"
        )
    if pivots.dtype != np.int32:
        raise RuntimeError(
            "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
            "torch.int32 dtype."
        )
    m, n = lu.shape[-2:]
    empty = np.empty((0,), dtype=lu.dtype)
    lower, upper = _unpack(lu, m, n) if unpack_data else (empty, empty)
    if unpack_pivots:
        # only the first min(m, n) swaps are read, each a row of LU (1-based)
        swaps = np.asarray(pivots)[..., : min(m, n)]
        if swaps.size and (swaps.min() < 1 or swaps.max() > m):
            raise RuntimeError(
                "pivots passed to lu_unpack must be between 1 and LU.size(-2) "
                "inclusive.Did you properly pass the result of lu_factor?"
            )
        perm = _permutation(swaps, m, lu.dtype)
        batch = np.broadcast_shapes(lu.shape[:-2], swaps.shape[:-1])
        perm = np.ascontiguousarray(np.broadcast_to(perm, batch + perm.shape[-2:]))
    else:
        perm = empty
    return perm, np.ascontiguousarray(lower), np.ascontiguousarray(upper)


def lu_kernel(a: Any, pivot: bool) -> tuple[Any, Any, Any]:
    """(P, L, U) with A = P L U: torch.linalg.lu."""
    lu, pivots, _ = lu_factor_kernel(a, pivot, False)
    return lu_unpack_kernel(lu, pivots, True, True)


# -- solving --------------------------------------------------------------------------


def _solve_left(lu: Any, pivots: Any, b: Any, adjoint: bool) -> Any:
    """A^{-1} b, or A^{-T} b, from the packed factorisation."""
    from yamlgrad.runtime.ops.linalg_decompositions import solve_triangular_kernel

    n = lu.shape[-1]
    perm = _permutation(pivots, n, lu.dtype)
    batch = np.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    lu = np.broadcast_to(lu, batch + lu.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    if not adjoint:
        y = solve_triangular_kernel(
            lu, np.swapaxes(perm, -1, -2) @ b, False, True, True
        )
        return solve_triangular_kernel(lu, y, True, True, False)
    upper_t = np.swapaxes(np.triu(lu), -1, -2)
    y = solve_triangular_kernel(upper_t, b, False, True, False)
    lower_t = np.swapaxes(np.tril(lu), -1, -2)
    return perm @ solve_triangular_kernel(lower_t, y, True, True, True)


def lu_solve_kernel(lu: Any, pivots: Any, b: Any, left: bool, adjoint: bool) -> Any:
    """X with A X = B (A^T X = B with `adjoint`), or X A = B (X A^T = B)."""
    op = "linalg.lu_solve"
    if pivots.dtype != np.int32:
        raise RuntimeError(
            f"{op}: pivots should be a Tensor of scalar type torch.int32"
        )
    _check_float_matrix(lu, op)
    if np.ndim(b) < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    if lu.shape[-1] != lu.shape[-2]:
        raise RuntimeError(
            f"{op}: A must be batches of square matrices, but they are "
            f"{lu.shape[-2]} by {lu.shape[-1]} matrices"
        )
    if (b.shape[-2] if left else b.shape[-1]) != lu.shape[-1]:
        raise RuntimeError(
            f"{op}: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({lu.shape[-2]}x{lu.shape[-1]} and "
            f"{b.shape[-2]}x{b.shape[-1]})"
        )
    if left:
        return lapack_layout(_solve_left(lu, pivots, b, adjoint))
    x = _solve_left(lu, pivots, np.swapaxes(b, -1, -2), not adjoint)
    return np.ascontiguousarray(np.swapaxes(x, -1, -2))


def linalg_lu_solve_B(
    grad: Any, lu: Any, pivots: Any, left: bool, adjoint: bool
) -> Any:
    """B's gradient: the solve with A transposed (the recorded linalg_lu_solve on
    Tensors, the kernel on ndarrays)."""
    xp = array_namespace(grad, lu)
    pivots = _like(lu, _data(pivots))
    return xp.linalg_lu_solve(lu, pivots, grad, left=left, adjoint=not adjoint)


# -- gradients ------------------------------------------------------------------------


def _square_backward(gL: Any, gU: Any, L: Any, U: Any) -> Any:
    """P^T gA of a square A = P L U: L^{-T} (tril(L^T gL, -1) + triu(gU U^T)) U^{-T}."""
    xp = array_namespace(gL, L)
    phi = xp.tril(_mT(L) @ gL, -1) + xp.triu(gU @ _mT(U), 0)
    phi = xp.linalg_solve_triangular(_mT(L), phi, upper=True, unitriangular=True)
    return xp.linalg_solve_triangular(_mT(U), phi, upper=False, left=False)


def linalg_lu_backward(gL: Any, gU: Any, P: Any, L: Any, U: Any, pivot: bool) -> Any:
    """The gradient of A = P L U (PyTorch's linalg_lu_backward): the square
    block as above; the columns of a wide A past the first m, or the rows of a
    tall one past the first n, solved against the factor they depend on."""
    xp = array_namespace(gL, L)
    m, n = L.shape[-2], U.shape[-1]
    if m == n:
        return P @ _square_backward(gL, gU, L, U)
    if m < n:
        U1, U2, gU1, gU2 = U[..., :m], U[..., m:], gU[..., :m], gU[..., m:]
        gA2 = xp.linalg_solve_triangular(_mT(L), gU2, upper=True, unitriangular=True)
        gA1 = _square_backward(gL - gA2 @ _mT(U2), gU1, L, U1)
        return P @ xp.concatenate([gA1, gA2], -1)
    L1, L2, gL1, gL2 = L[..., :n, :], L[..., n:, :], gL[..., :n, :], gL[..., n:, :]
    gB2 = xp.linalg_solve_triangular(_mT(U), gL2, upper=False, left=False)
    gB1 = _square_backward(gL1, gU - _mT(L2) @ gB2, L1, U)
    return P @ xp.concatenate([gB1, gB2], -2)


def lu_factor_ex_backward(grad: Any, LU: Any, pivots: Any, pivot: bool) -> Any:
    """The packed gradient split into L's (below the diagonal) and U's parts."""
    xp = array_namespace(grad, LU)
    m, n = LU.shape[-2:]
    k = min(m, n)
    L, U = _unpack(LU, m, n)
    P = _like(LU, _permutation(_data(pivots), m, _data(LU).dtype))
    gL = xp.tril(grad[..., :, :k], -1)
    gU = xp.triu(grad[..., :k, :], 0)
    return linalg_lu_backward(gL, gU, P, L, U, pivot)


def lu_unpack_backward(grads: list[Any], sizes: tuple[int, ...]) -> Any:
    """L's gradient below the diagonal and U's on and above it, packed into one
    matrix of `sizes` (PyTorch's lu_unpack_backward)."""
    xp = array_namespace(grads[1], grads[2])
    gL, gU = grads[1], grads[2]
    m, n = sizes[-2], sizes[-1]
    k = min(m, n)
    if m == n:
        return xp.tril(gL, -1) + xp.triu(gU, 0)
    square = xp.tril(gL[..., :k, :], -1) + xp.triu(gU[..., :, :k], 0)
    if m > n:
        return xp.concatenate([square, gL[..., k:, :]], -2)
    return xp.concatenate([square, gU[..., :, k:]], -1)


def linalg_lu_solve_LU(
    gX: Any, LU: Any, pivots: Any, X: Any, left: bool, adjoint: bool
) -> Any:
    """The gradient of lu_solve with respect to the packed LU (PyTorch's
    linalg_lu_solve_LU): through U (on and above the diagonal) and L (below)."""
    xp = array_namespace(gX, LU, X)
    n = LU.shape[-1]
    L, U = _unpack(LU, n, n)
    if left != adjoint:
        rhs = -(gX if left else _mT(gX)) @ (_mT(X) if left else X)
        gR = xp.linalg_solve_triangular(_mT(U), rhs, upper=False)
        gL = xp.linalg_solve_triangular(
            _mT(L), gR @ _mT(U), upper=True, unitriangular=True
        )
        return xp.tril(gL, -1) + xp.triu(gR, 0)
    P = _like(LU, _permutation(_data(pivots), n, _data(LU).dtype))
    gR = -(_mT(P) @ (X if left else _mT(X)) @ (_mT(gX) if left else gX) @ P)
    gR = xp.linalg_solve_triangular(
        _mT(L), gR, upper=True, left=False, unitriangular=True
    )
    gU = xp.linalg_solve_triangular(_mT(U), _mT(L) @ gR, upper=False, left=False)
    return xp.tril(gR, -1) + xp.triu(gU, 0)


register_numpy_kernels(
    linalg_lu_solve=lambda lu, pivots, b, left=True, adjoint=False: lu_solve_kernel(
        lu, pivots, b, left, adjoint
    ),
)
