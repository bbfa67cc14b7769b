"""Linear algebra through one LU factorisation: _linalg_slogdet and
_linalg_solve_ex, each kernel beside its backward helper (PyTorch's
slogdet_backward and linalg_solve_backward).

As PyTorch's, both kernels keep the LU factors and pivots as outputs of their
own (not differentiable), so a first-order backward solves with them rather
than factoring A again. slogdet factors a row-major real A as A^T, as
_linalg_det does (its column-major matrices are A's own memory), and its
backward takes the transposed system (`_factors_transpose`); solve factors A
itself, as PyTorch 2.13's does. Under `create_graph=True` the backward solves
with the recorded linalg_solve and linalg_inv instead, so the LU's dependence
on A is differentiated too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime.errors import _LinAlgError, scalar_type_name
from yamlgrad.runtime.ops.linalg import _factors_transpose, linalg_det_kernel
from yamlgrad.runtime.ops.linalg_decompositions import _mT, _vector_rhs
from yamlgrad.runtime.ops.lu_decomposition import lu_factor_kernel, lu_solve_kernel
from yamlgrad.runtime.ops.namespace import (
    NUMPY_NAMESPACE,
    array_namespace,
    register_numpy_kernels,
)

KERNELS = ("slogdet_kernel", "solve_ex_kernel")
BACKWARD_HELPERS = ("slogdet_backward", "linalg_solve_backward")


def _check_square_float(a: Any, op: str) -> None:
    if np.ndim(a) < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"{op}: A must be batches of square matrices, but they are "
            f"{a.shape[-2]} by {a.shape[-1]} matrices"
        )
    if np.result_type(a).kind not in "fc":
        raise RuntimeError(
            f"{op}: Expected a floating point or complex tensor as input. Got "
            f"{scalar_type_name(np.result_type(a))}"
        )


def singular_error(info: Any, op: str) -> RuntimeError | None:
    """PyTorch's _linalg_check_errors for a solve: the first matrix whose LU
    has a zero on U's diagonal, by its flat index in a batch, as a
    torch.linalg.LinAlgError; None if none."""
    info = np.asarray(info)
    if not np.any(info):
        return None
    where = ""
    if info.ndim:
        where = f"(Batch element {int(np.flatnonzero(info)[0])}): "
    return _LinAlgError(
        f"{op}: {where}The solver failed because the input matrix is singular."
    )


# -- slogdet ------------------------------------------------------------------------


def slogdet_kernel(a: Any) -> tuple[Any, Any, Any, Any]:
    """(sign, logabsdet, LU, pivots) as torch._linalg_slogdet: the LU of
    _linalg_det's kernel, sign the product of the signs of U's diagonal (negated
    for an odd permutation), logabsdet the sum of its logs (-inf, with sign 0,
    for a singular matrix)."""
    _check_square_float(a, "linalg.slogdet")
    _, LU, pivots = linalg_det_kernel(a)
    diagonal = np.diagonal(LU, 0, -2, -1)
    n = diagonal.shape[-1]
    swaps = np.count_nonzero(pivots != np.arange(1, n + 1), axis=-1)
    sign = np.prod(np.sign(diagonal), axis=-1) * np.where(swaps % 2, -1, 1)
    logabsdet = np.sum(np.log(np.abs(diagonal)), axis=-1)
    return sign.astype(LU.dtype), logabsdet.astype(LU.dtype), LU, pivots


def slogdet_backward(grad_logabsdet: Any, A: Any, LU: Any, pivots: Any) -> Any:
    """d logabsdet = A^{-T}, scaled by its gradient per matrix (the sign of a
    real matrix is locally constant: its gradient plays no part). The forward's
    LU solves against the scaled identity, as PyTorch's does, so a singular A
    gets inf and nan."""
    xp = array_namespace(grad_logabsdet, A)
    g = grad_logabsdet[..., None, None]
    if xp is NUMPY_NAMESPACE:
        scaled = g * np.eye(A.shape[-1], dtype=LU.dtype)
        return lu_solve_kernel(LU, pivots, scaled, True, not _factors_transpose(A))
    return g * _mT(xp.linalg_inv(A))


# -- solve ---------------------------------------------------------------------------


def _check_solve(A: Any, B: Any, left: bool) -> bool:
    """PyTorch's checks of linalg.solve; whether B is a (batch of) vector(s)."""
    _check_square_float(A, "linalg.solve")
    if A.dtype != B.dtype:
        raise RuntimeError(
            "linalg.solve: Expected A and B to have the same dtype, but found A of "
            f"type {scalar_type_name(A.dtype)} and B of type "
            f"{scalar_type_name(B.dtype)} instead"
        )
    vector = _vector_rhs(A, B)
    B_ = B[..., :, None] if vector and left else B[..., None, :] if vector else B
    n = A.shape[-1]
    if (B_.shape[-2] if left else B_.shape[-1]) != n:
        raise RuntimeError(
            "linalg.solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
            f"{B_.shape[-2]}x{B_.shape[-1]})"
        )
    return vector


def solve_ex_kernel(
    A: Any, B: Any, left: bool, check_errors: bool
) -> tuple[Any, Any, Any, Any]:
    """(X, LU, pivots, info) with A X = B (left) or X A = B, as
    torch._linalg_solve_ex: LAPACK's getrf of A, then the triangular solves;
    info is the first zero on U's diagonal (from 1), which with
    `check_errors` raises."""
    A, B = np.asarray(A), np.asarray(B)
    vector = _check_solve(A, B, left)
    LU, pivots, info = lu_factor_kernel(A, True, False)
    if check_errors:
        error = singular_error(info, "torch.linalg.solve_ex")
        if error is not None:
            raise error
    axis = -1 if left else -2
    B_ = np.expand_dims(B, axis) if vector else B
    X = lu_solve_kernel(LU, pivots, B_, left, False)
    return (np.squeeze(X, axis) if vector else X), LU, pivots, info


def linalg_solve_backward(
    gX: Any,
    X: Any,
    A: Any,
    LU: Any,
    pivots: Any,
    left: bool,
    grad_input_mask: tuple[bool, ...],
) -> tuple[Any, Any]:
    """gB = A^{-T} gX and gA = -gB X^T (left), or gB = gX A^{-T} and
    gA = -X^T gB: the forward's LU in a first-order backward, the recorded
    linalg_solve under create_graph (so the LU's dependence on A counts)."""
    xp = array_namespace(gX, X, A)
    vector = _vector_rhs(LU, X)
    if vector:  # columns (left) or rows, as the forward solved them
        gX = gX[..., :, None] if left else gX[..., None, :]
        X = X[..., :, None] if left else X[..., None, :]
    if xp is NUMPY_NAMESPACE:
        gB = lu_solve_kernel(LU, pivots, gX, left, True)
    else:
        gB = xp.linalg_solve(_mT(A), gX, left=left)
    gA = None
    if grad_input_mask[0]:
        gA = -(gB @ _mT(X)) if left else -(_mT(X) @ gB)
    if vector:
        gB = gB[..., :, 0] if left else gB[..., 0, :]
    return gA, gB if grad_input_mask[1] else None


def _solve(A: Any, B: Any, left: bool = True) -> Any:
    """linalg.solve on ndarrays (real or complex: the eigenvector solves of
    linalg_eig_backward), the error of a singular A included."""
    A, B = np.asarray(A), np.asarray(B)
    if A.dtype.kind == "c" or B.dtype.kind == "c":
        vector = _vector_rhs(A, B)
        if not left:
            X = np.linalg.solve(np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2))
            return np.swapaxes(X, -1, -2)
        return (
            np.linalg.solve(A, B[..., None])[..., 0]
            if vector
            else np.linalg.solve(A, B)
        )
    X, _, _, info = solve_ex_kernel(A, B, left, False)
    error = singular_error(info, "torch.linalg.solve")
    if error is not None:
        raise error
    return X


register_numpy_kernels(linalg_solve=_solve)
