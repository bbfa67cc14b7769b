"""Linear algebra: the Cholesky factorisation and its solves, triangular solves,
QR, the matrix exponential and the cross product; kernels over numpy.linalg and
scipy.linalg (imported on first use), each beside its backward helper.

The helpers translate PyTorch's (cholesky_backward, cholesky_solve_backward,
cholesky_inverse_backward, linalg_solve_triangular_backward,
triangular_solve_backward, linalg_qr_backward, linalg_matrix_exp_differential)
into operations `array_namespace` offers on ndarrays and on Tensors, so the
triangular solves and products they make are recorded under `create_graph=True`
and every formula has a double backward. Matrices are the last two dimensions;
the others are a batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime.errors import scalar_type_name

from yamlgrad.runtime.ops.namespace import (
    array_namespace,
    constant_tensor,
    register_numpy_kernels,
)

KERNELS = (
    "cholesky_kernel",
    "cholesky_factor",
    "cholesky_solve_kernel",
    "cholesky_inverse_kernel",
    "solve_triangular_kernel",
    "triangular_solve_kernel",
    "qr_kernel",
    "matrix_exp_kernel",
    "cross_kernel",
)
BACKWARD_HELPERS = (
    "cholesky_backward",
    "cholesky_jvp",
    "cholesky_solve_backward",
    "cholesky_inverse_backward",
    "linalg_solve_triangular_backward",
    "triangular_solve_backward",
    "linalg_qr_backward",
    "linalg_matrix_exp_differential",
    "linalg_cross",
)


def _mT(x: Any) -> Any:
    """The matrices transposed (PyTorch's `x.mT`)."""
    return array_namespace(x).transpose(x, -1, -2)


def _constant(like: Any, array: np.ndarray) -> Any:
    """A constant (an identity, a permutation) beside `like`: a Tensor outside
    any graph when `like` is one, else the ndarray."""
    return array if isinstance(like, np.ndarray) else constant_tensor(array)


def _check_matrix(x: Any, op: str, name: str = "A") -> None:
    if np.ndim(x) < 2:
        raise RuntimeError(
            f"{op}: The input tensor {name} must have at least 2 dimensions."
        )


def _check_square(x: Any, op: str, name: str = "A") -> None:
    _check_matrix(x, op, name)
    if x.shape[-1] != x.shape[-2]:
        raise RuntimeError(
            f"{op}: {name} must be batches of square matrices, "
            f"but they are {x.shape[-2]} by {x.shape[-1]} matrices"
        )


def _check_float(x: Any, op: str) -> None:
    if np.result_type(x).kind != "f":
        raise RuntimeError(
            f"{op}: Expected a floating point or complex tensor as input. Got "
            f"{_type_name(x)}"
        )


def _type_name(x: Any) -> str:
    from yamlgrad.runtime.errors import scalar_type_name

    return scalar_type_name(np.result_type(x))


# -- triangular solves -----------------------------------------------------------------


def _triangle(a: Any, upper: bool, unitriangular: bool) -> Any:
    t = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        t = t.copy()
        np.einsum("...ii->...i", t)[...] = 1
    return t


def _solve(a: Any, b: Any) -> Any:
    """a^{-1} b over broadcast batches; a singular matrix gives inf and nan, as
    LAPACK's trtrs-free triangular solve in PyTorch does."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        from scipy.linalg import solve_triangular

        out = np.empty(batch + b.shape[-2:], dtype=np.result_type(a, b))
        for i in np.ndindex(*batch):
            with np.errstate(all="ignore"):
                out[i] = _substitute(a[i], b[i], solve_triangular)
        return out


def _substitute(a: Any, b: Any, solve_triangular: Any) -> Any:
    lower = not np.any(np.triu(a, 1))
    try:
        return solve_triangular(a, b, lower=lower, check_finite=False)
    except np.linalg.LinAlgError:
        return np.full(b.shape, np.nan, dtype=np.result_type(a, b))


def solve_triangular_kernel(
    a: Any, b: Any, upper: bool, left: bool, unitriangular: bool
) -> Any:
    """X with A X = B (left) or X A = B, reading one triangle of A."""
    op = "linalg.solve_triangular"
    _check_matrix(a, op, "A")
    _check_matrix(b, op, "B")
    _check_square(a, op, "A")
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"{op}: Expected A and B to have the same dtype, but found A of type "
            f"{_type_name(a)} and B of type {_type_name(b)} instead"
        )
    _check_float(a, op)
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        side = "rows" if left else "columns"
        raise RuntimeError(
            f"{op}: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({a.shape[-2]}x{n} and "
            f"{b.shape[-2]}x{b.shape[-1]}): the number of {side} must match"
        )
    t = _triangle(a, upper, unitriangular)
    if left:
        return _solve(t, b)
    return np.swapaxes(_solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def triangular_solve_kernel(
    b: Any, a: Any, upper: bool, transpose: bool, unitriangular: bool
) -> tuple[Any, Any]:
    """(X, A) with op(A) X = b, op(A) = A or A^T: torch.triangular_solve."""
    for name, x in (("b", b), ("A", a)):
        if np.ndim(x) < 2:
            raise RuntimeError(
                f"torch.triangular_solve: Expected {name} to have at least 2 "
                f"dimensions, but it has {np.ndim(x)} dimensions instead"
            )
    t = _triangle(a, upper, unitriangular)
    solution = _solve(np.swapaxes(t, -1, -2) if transpose else t, b)
    batch = solution.shape[:-2]
    return solution, np.broadcast_to(a, batch + a.shape[-2:]).copy()


def linalg_solve_triangular_backward(
    grad: Any,
    A: Any,
    X: Any,
    upper: bool,
    left: bool,
    unitriangular: bool,
    grad_input_mask: tuple[bool, ...],
) -> tuple[Any, Any]:
    """gB = A^{-T} gX, gA = -gB X^T (left; -X^T gB otherwise), on A's triangle."""
    xp = array_namespace(grad, A, X)
    gB = xp.linalg_solve_triangular(
        _mT(A), grad, upper=not upper, left=left, unitriangular=unitriangular
    )
    gA = None
    if grad_input_mask[0]:
        gA = -(gB @ _mT(X)) if left else -(_mT(X) @ gB)
        shift = int(unitriangular)
        gA = xp.triu(gA, shift) if upper else xp.tril(gA, -shift)
    return gA, gB if grad_input_mask[1] else None


def triangular_solve_backward(
    grads: list[Any],
    b: Any,
    A: Any,
    X: Any,
    upper: bool,
    transpose: bool,
    unitriangular: bool,
    grad_input_mask: tuple[bool, ...],
) -> tuple[Any, Any]:
    """As linalg_solve_triangular's, with op(A) = A^T when `transpose`; the
    cloned coefficient passes its gradient to A."""
    xp = array_namespace(grads[0], A, X)
    grad_x, grad_m = grads[0], grads[1]
    coefficient = A if transpose else _mT(A)
    triangle = upper if transpose else not upper
    grad_b = xp.linalg_solve_triangular(
        coefficient, grad_x, upper=triangle, unitriangular=unitriangular
    )
    grad_a = None
    if grad_input_mask[1]:
        grad_a = -(X @ _mT(grad_b)) if transpose else -(grad_b @ _mT(X))
        shift = int(unitriangular)
        grad_a = xp.triu(grad_a, shift) if upper else xp.tril(grad_a, -shift)
        grad_a = grad_a + grad_m
    return grad_b if grad_input_mask[0] else None, grad_a


# -- Cholesky --------------------------------------------------------------------------


def _leading_minor(a: np.ndarray) -> int:
    """The order of the first leading minor that is not positive definite."""
    for k in range(1, a.shape[-1] + 1):
        try:
            np.linalg.cholesky(a[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return 0


def cholesky_kernel(
    a: Any, upper: bool, check_errors: bool, op: str = "linalg.cholesky"
) -> tuple[Any, Any]:
    """(L, info): the lower factor of A = L L^T (U = L^T with `upper`), read from
    A's lower triangle; info is the order of the first leading minor that is not
    positive definite (0 when A is), and with `check_errors` that raises."""
    _check_square(a, op)
    _check_float(a, op)
    batch = a.shape[:-2]
    info = np.zeros(batch, dtype=np.int32)
    try:
        factor = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        factor = np.zeros_like(a)
        for i in np.ndindex(*batch):
            info[i] = _leading_minor(a[i])
            if info[i] == 0:
                factor[i] = np.linalg.cholesky(a[i])
        if check_errors:
            first = next(i for i in np.ndindex(*batch) if info[i])
            where = (
                f"(Batch element {np.ravel_multi_index(first, batch)}): "
                if batch
                else ""
            )
            raise RuntimeError(
                f"{op}: {where}The factorization could not be completed because "
                f"the input is not positive-definite (the leading minor of order "
                f"{info[first]} is not positive-definite)."
            )
    factor = np.swapaxes(factor, -1, -2) if upper else factor
    return np.ascontiguousarray(factor), info


def cholesky_factor(a: Any, upper: bool) -> Any:
    """torch.cholesky: the factor, or the error of a matrix that is not
    positive definite."""
    return cholesky_kernel(a, upper, True, "cholesky")[0]


def cholesky_backward(grad: Any, upper: bool, L: Any) -> Any:
    """gA = L^{-T} Phi(L^T gL) L^{-1}, symmetrised, where Phi keeps the lower
    triangle and halves the diagonal (the factor of U^T U when `upper`)."""
    xp = array_namespace(grad, L)
    if upper:
        L, grad = _mT(L), _mT(grad)
    phi = _mT(L) @ grad
    phi = 0.5 * (xp.tril(phi, 0) + xp.tril(phi, -1))
    left = xp.linalg_solve_triangular(_mT(L), phi, upper=True)
    gA = xp.linalg_solve_triangular(L, left, upper=False, left=False)
    return 0.5 * (gA + _mT(gA))


def cholesky_jvp(dA: Any, L: Any, upper: bool) -> Any:
    """dL = L Phi(L^{-1} dA L^{-T}), Phi the lower triangle with half the
    diagonal (PyTorch's, which reads the whole tangent dA)."""
    xp = array_namespace(dA, L)
    lower = _mT(L) if upper else L
    dL = xp.linalg_solve_triangular(lower, dA, upper=False)
    dL = xp.linalg_solve_triangular(_mT(lower), dL, upper=True, left=False)
    dL = lower @ (0.5 * (xp.tril(dL, 0) + xp.tril(dL, -1)))
    return _mT(dL) if upper else dL


def _cholesky_factor(factor: Any, upper: bool) -> Any:
    """The lower factor L (A = L L^T), from L or from U = L^T."""
    return np.swapaxes(factor, -1, -2) if upper else factor


def cholesky_solve_kernel(b: Any, factor: Any, upper: bool) -> Any:
    """X with A X = b, A = L L^T (or U^T U) given its factor."""
    for name, x in (("b", b), ("u", factor)):
        if np.ndim(x) < 2:
            raise RuntimeError(
                f"cholesky_solve: Expected {name} to have at least 2 dimensions, "
                f"but it has {np.ndim(x)} dimensions instead"
            )
    lower = np.tril(_cholesky_factor(np.triu(factor) if upper else factor, upper))
    y = _solve(lower, b)
    return _solve(np.swapaxes(lower, -1, -2), y)


def cholesky_solve_backward(
    grad: Any,
    b: Any,
    factor: Any,
    X: Any,
    upper: bool,
    grad_input_mask: tuple[bool, ...],
) -> tuple[Any, Any]:
    """g_b = A^{-1} gX; g_factor = -(g_b X^T + X g_b^T) L (U on the left)."""
    xp = array_namespace(grad, factor, X)
    grad_b = xp.cholesky_solve(grad, factor, upper)
    grad_factor = None
    if grad_input_mask[1]:
        common = grad_b @ _mT(X)
        common = common + _mT(common)
        grad_factor = -(factor @ common) if upper else -(common @ factor)
    return grad_b if grad_input_mask[0] else None, grad_factor


def cholesky_inverse_kernel(factor: Any, upper: bool) -> Any:
    """(L L^T)^{-1} (or (U^T U)^{-1}) from the factor's triangle."""
    if np.ndim(factor) < 2:
        raise RuntimeError(
            "cholesky_inverse: The input tensor input must have at least 2 "
            "dimensions."
        )
    _check_square(factor, "cholesky_inverse", "input")
    n = factor.shape[-1]
    eye = np.broadcast_to(np.eye(n, dtype=factor.dtype), factor.shape)
    return cholesky_solve_kernel(eye, factor, upper)


def cholesky_inverse_backward(grad: Any, factor: Any, upper: bool, inverse: Any) -> Any:
    """-(inverse (g + g^T) inverse) L, or U times it."""
    common = inverse @ ((grad + _mT(grad)) @ inverse)
    return -(factor @ common) if upper else -(common @ factor)


# -- QR ----------------------------------------------------------------------------


def qr_kernel(a: Any, mode: str) -> tuple[Any, Any]:
    """(Q, R) of A; mode 'reduced', 'complete', or 'r' (Q empty)."""
    op = "linalg.qr"
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of "
            "'reduced' (default), 'r', or 'complete'"
        )
    _check_matrix(a, op)
    _check_float(a, op)
    if mode == "r":
        r = np.linalg.qr(a, mode="r")
        return np.empty((0,), dtype=a.dtype), np.ascontiguousarray(r)
    q, r = np.linalg.qr(a, mode=mode)
    return np.ascontiguousarray(q), np.ascontiguousarray(r)


def _qr_backward_tall(gQ: Any, gR: Any, Q: Any, R: Any) -> Any:
    """m >= n: gA = (gQ + Q copyltu(M)) R^{-T}, M = R gR^T - gQ^T Q, where
    copyltu mirrors the lower triangle onto the upper one."""
    xp = array_namespace(gQ, Q)
    M = R @ _mT(gR) - _mT(gQ) @ Q
    M = xp.tril(M, 0) + _mT(xp.tril(M, -1))
    return xp.linalg_solve_triangular(_mT(R), gQ + Q @ M, upper=False, left=False)


def linalg_qr_backward(grads: list[Any], Q: Any, R: Any, mode: str) -> Any:
    """PyTorch's linalg_qr_backward: the tall case directly; a wide A = [X | Y]
    as X = Q R1 (tall) with Y = Q R2 feeding Q's gradient."""
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when "
            "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
            "differentiate through linalg.qr."
        )
    gQ, gR = grads
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and "
            "nrows > ncols."
        )
    if m >= n:
        return _qr_backward_tall(gQ, gR, Q, R)
    xp = array_namespace(gQ, Q)
    gR1, gR2 = gR[..., :m], gR[..., m:]
    Y = Q @ R[..., m:]
    gX = _qr_backward_tall(gQ + Y @ _mT(gR2), gR1, Q, R[..., :m])
    return xp.concatenate([gX, Q @ gR2], -1)


# -- matrix exponential and cross product -------------------------------------------


def matrix_exp_kernel(a: Any) -> Any:
    """exp(A) by scipy's Pade approximation with scaling and squaring."""
    from scipy.linalg import expm

    _check_square(a, "linalg.matrix_exp", "A")
    _check_float(a, "linalg.matrix_exp")
    if a.size == 0:
        return np.empty_like(a)
    return np.ascontiguousarray(expm(a)).astype(a.dtype, copy=False)


def linalg_matrix_exp_differential(A: Any, E: Any, adjoint: bool) -> Any:
    """The derivative of exp at A along E (at A^T when `adjoint`, the backward):
    the upper right block of exp([[A, E], [0, A]])."""
    xp = array_namespace(A, E)
    if adjoint:
        A = _mT(A)
    n = A.shape[-1]
    zeros = A * 0
    top = xp.concatenate([A, E], -1)
    bottom = xp.concatenate([zeros, A], -1)
    block = xp.linalg_matrix_exp(xp.concatenate([top, bottom], -2))
    return block[..., :n, n:]


def cross_kernel(a: Any, b: Any, dim: int) -> Any:
    """a x b along `dim` (size 3), broadcasting the other dimensions."""
    if np.ndim(a) != np.ndim(b):
        raise RuntimeError(
            f"linalg.cross: inputs must have the same number of dimensions."
        )
    ndim = np.ndim(a)
    if not -ndim <= dim < ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-ndim}, "
            f"{ndim - 1}], but got {dim})"
        )
    if a.shape[dim] != 3 or b.shape[dim] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got "
            f"{a.shape[dim]} and {b.shape[dim]}"
        )
    if np.result_type(a) != np.result_type(b):  # no type promotion, as PyTorch's
        raise RuntimeError(
            f"expected scalar type {scalar_type_name(np.result_type(a))} but found "
            f"{scalar_type_name(np.result_type(b))}"
        )
    return np.ascontiguousarray(np.cross(a, b, axis=dim))


def linalg_cross(a: Any, b: Any, dim: int) -> Any:
    return array_namespace(a, b).linalg_cross(a, b, dim=dim)


register_numpy_kernels(
    linalg_solve_triangular=lambda a, b, upper, left=True, unitriangular=False: (
        solve_triangular_kernel(a, b, upper, left, unitriangular)
    ),
    cholesky_solve=cholesky_solve_kernel,
    linalg_matrix_exp=matrix_exp_kernel,
    linalg_cross=lambda a, b, dim=-1: cross_kernel(a, b, dim),
)
