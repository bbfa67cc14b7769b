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

import math
from typing import Any

import numpy as np

from yamlgrad.runtime.errors import scalar_type_name
from yamlgrad.runtime import backend
from yamlgrad.runtime.ops.common import _lapack
from yamlgrad.runtime.ops.complex_numbers import conj
from yamlgrad.runtime.ops.reductions import _numpy_dtype
from yamlgrad.runtime.ops.namespace import (
    array_namespace,
    constant_tensor,
    per_matrix,
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
    "pinv_kernel",
    "lstsq_kernel",
)
BACKWARD_HELPERS = (
    "cholesky_backward",
    "cholesky_jvp",
    "cholesky_solve_backward",
    "cholesky_inverse_backward",
    "cholesky_inverse_jvp",
    "linalg_solve_triangular_backward",
    "triangular_solve_backward",
    "linalg_qr_backward",
    "linalg_matrix_exp_differential",
    "linalg_cross",
    "pinv_backward",
    "linalg_lstsq_backward",
)


def _mT(x: Any) -> Any:
    """The matrices transposed (PyTorch's `x.mT`)."""
    return array_namespace(x).transpose(x, -1, -2)


def _constant(like: Any, array: np.ndarray) -> Any:
    """A constant (an identity, a permutation) beside `like`: a Tensor outside
    any graph when `like` is one, else the ndarray."""
    return array if isinstance(like, np.ndarray) else constant_tensor(array)


def lapack_layout(x: Any) -> Any:
    """Each matrix column-major, as LAPACK writes it and PyTorch returns it."""
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)


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


def _check_float(x: Any, op: str, kinds: str = "f") -> None:
    """A floating input (or complex, for kinds "fc": the ops whose formulas are
    written for complex numbers; the others refuse it rather than give a
    gradient of the wrong convention)."""
    if np.result_type(x).kind not in kinds:
        raise RuntimeError(
            f"{op}: Expected a floating point or complex tensor as input. Got "
            f"{_type_name(x)}"
        )


def _type_name(x: Any) -> str:
    from yamlgrad.runtime.errors import scalar_type_name

    return scalar_type_name(np.result_type(x))


def _blas(name: str, *arrays: np.ndarray) -> Any:
    """scipy's BLAS routine `name` for the arrays' dtype (trsm)."""
    import scipy.linalg.blas

    return scipy.linalg.blas.get_blas_funcs(name, arrays)


def _each_matrix(f: Any, *arrays: np.ndarray) -> np.ndarray:
    """f over the matrices of the batch (LAPACK takes one at a time)."""
    batch = arrays[0].shape[:-2]
    if not batch:
        return f(*arrays)
    outs = [f(*(a[index] for a in arrays)) for index in np.ndindex(*batch)]
    return np.stack(outs).reshape(batch + outs[0].shape)


# -- triangular solves -----------------------------------------------------------------


def _trsm(
    a: Any,
    b: Any,
    upper: bool,
    unitriangular: bool = False,
    transpose: bool = False,
    left: bool = True,
) -> np.ndarray:
    """op(A)^{-1} B (left) or B op(A)^{-1}, op(A) = A or A^T, reading only the
    triangle of A that `upper` names, by BLAS trsm on each matrix of the
    broadcast batch: a zero on the diagonal gives inf and nan, as PyTorch's.

    BLAS reads column-major matrices: a row-major A is given as its transpose
    (a view, whose triangle and op flip), and the solution is written in place
    (overwrite_b) into column-major matrices of our own, initialised with B: one
    copy of B, none of A, and the result in LAPACK's layout, as PyTorch returns
    it."""
    a, solution, batch = _solve_operands(a, b)
    if solution.size == 0:
        return solution
    trsm = _blas("trsm", a, solution)
    dtype = solution.dtype
    for i in np.ndindex(*batch):
        matrix, lower, trans_a = _blas_view(a[i], dtype, upper, transpose)
        trsm(
            1.0,
            matrix,
            solution[i],
            side=int(not left),
            lower=lower,
            trans_a=trans_a,
            diag=int(unitriangular),
            overwrite_b=1,
        )
    return solution


def _solve_operands(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray, tuple]:
    """(A broadcast to the batch, B's copy in column-major matrices of the
    common dtype, the batch): the copy is what BLAS and LAPACK solve into, in
    place (overwrite_b), and the result in the layout PyTorch returns."""
    a, b = np.asarray(a), np.asarray(b)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    dtype = np.result_type(a, b)
    out = np.empty(batch + b.shape[-1:] + b.shape[-2:-1], dtype=dtype)
    solution = np.swapaxes(out, -1, -2)
    np.copyto(solution, b)
    return np.broadcast_to(a, batch + a.shape[-2:]), solution, batch


def _blas_view(
    a: np.ndarray, dtype: np.dtype, upper: bool, transpose: bool = False
) -> tuple[np.ndarray, int, int]:
    """(matrix, lower, trans_a) giving BLAS or LAPACK op(A), or A's triangle,
    without copying A: a column-major A as it is; a row-major one as its
    transpose, whose triangle and op flip."""
    if a.flags.f_contiguous and a.dtype == dtype:
        return a, int(not upper), int(transpose)
    return np.ascontiguousarray(a, dtype=dtype).T, int(upper), int(not transpose)


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
    _check_float(a, op, "fc")
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        side = "rows" if left else "columns"
        raise RuntimeError(
            f"{op}: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({a.shape[-2]}x{n} and "
            f"{b.shape[-2]}x{b.shape[-1]}): the number of {side} must match"
        )
    return _trsm(a, b, upper, unitriangular, left=left)  # LAPACK's layout


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
    solution = _trsm(a, b, upper, unitriangular, transpose)
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
    """gB = A^{-H} gX, gA = -gB X^H (left; -X^H gB otherwise), on A's triangle
    (^H the conjugate transpose: ^T on real matrices)."""
    xp = array_namespace(grad, A, X)
    gB = xp.linalg_solve_triangular(
        conj(_mT(A)), grad, upper=not upper, left=left, unitriangular=unitriangular
    )
    gA = None
    if grad_input_mask[0]:
        gA = -(gB @ conj(_mT(X))) if left else -(conj(_mT(X)) @ gB)
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
    """As linalg_solve_triangular's, with op(A) = A^T when `transpose` (no
    conjugate, also for complex A); the cloned coefficient passes its gradient
    to A."""
    xp = array_namespace(grads[0], A, X)
    grad_x, grad_m = grads[0], grads[1]
    coefficient = conj(A) if transpose else conj(_mT(A))
    triangle = upper if transpose else not upper
    grad_b = xp.linalg_solve_triangular(
        coefficient, grad_x, upper=triangle, unitriangular=unitriangular
    )
    grad_a = None
    if grad_input_mask[1]:
        if transpose:  # op(A) = A^T, also for complex A: A^T's gradient, transposed
            grad_a = -(conj(X) @ _mT(grad_b))
        else:
            grad_a = -(grad_b @ conj(_mT(X)))
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
    return lapack_layout(factor), info


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


def _cholesky_floor(
    grad: Any, self: Any, upper: bool = False, check_errors: bool = False
) -> tuple[Any, Any]:
    """cholesky forward + backward as the fewest LAPACK/BLAS calls (potrf, two
    trsm, one product), the floor these LAPACK-bound ops are measured against
    (benchmarks/ops.py): what numpy and scipy's LAPACK cost themselves."""
    L = np.linalg.cholesky(self)
    gL = np.swapaxes(grad, -1, -2) if upper else grad
    phi = np.swapaxes(L, -1, -2) @ gL
    phi = 0.5 * (np.tril(phi) + np.tril(phi, -1))
    gA = _trsm(L, _trsm(L, phi, False, transpose=True), False, left=False)
    forward = np.swapaxes(L, -1, -2) if upper else L
    return forward, 0.5 * (gA + np.swapaxes(gA, -1, -2))


FLOORS = {
    "cholesky": _cholesky_floor,
    "linalg_cholesky_ex": _cholesky_floor,
    "linalg_cholesky": _cholesky_floor,
}


def cholesky_jvp(dA: Any, L: Any, upper: bool) -> Any:
    """dL = L Phi(L^{-1} dA L^{-T}), Phi the lower triangle with half the
    diagonal (PyTorch's, which reads the whole tangent dA)."""
    xp = array_namespace(dA, L)
    lower = _mT(L) if upper else L
    dL = xp.linalg_solve_triangular(lower, dA, upper=False)
    dL = xp.linalg_solve_triangular(_mT(lower), dL, upper=True, left=False)
    dL = lower @ (0.5 * (xp.tril(dL, 0) + xp.tril(dL, -1)))
    return _mT(dL) if upper else dL


def cholesky_solve_kernel(b: Any, factor: Any, upper: bool) -> Any:
    """X with A X = b, A = L L^T (or U^T U) given its factor: LAPACK's potrs on
    each matrix, into column-major copies of b (`_solve_operands`)."""
    for name, x in (("b", b), ("u", factor)):
        if np.ndim(x) < 2:
            raise RuntimeError(
                f"cholesky_solve: Expected {name} to have at least 2 dimensions, "
                f"but it has {np.ndim(x)} dimensions instead"
            )
    factor, solution, batch = _solve_operands(factor, b)
    if solution.size == 0:
        return solution
    potrs = _lapack("potrs", factor, solution)  # reads the factor's triangle only
    for i in np.ndindex(*batch):
        matrix, lower, _ = _blas_view(factor[i], solution.dtype, upper)
        potrs(matrix, solution[i], lower=lower, overwrite_b=1)
    return solution


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
    """(L L^T)^{-1} (or (U^T U)^{-1}) from the factor's triangle: LAPACK's
    potri on each matrix (a third of a solve against the identity), in place
    in a column-major copy of the factor, its triangle mirrored."""
    if np.ndim(factor) < 2:
        raise RuntimeError(
            "cholesky_inverse: The input tensor input must have at least 2 "
            "dimensions."
        )
    _check_square(factor, "cholesky_inverse", "input")
    _, inverse, batch = _solve_operands(factor, factor)
    if inverse.size == 0:
        return inverse
    potri = _lapack("potri", inverse)
    for i in np.ndindex(*batch):
        info = potri(inverse[i], lower=int(not upper), overwrite_c=1)[1]
        if info > 0:
            where = (
                f"(Batch element {np.ravel_multi_index(i, batch)}): " if batch else ""
            )
            raise RuntimeError(
                f"cholesky_inverse: {where}The diagonal element {info} is zero, the "
                "inversion could not be completed because the input matrix is "
                "singular."
            )
    # potri writes the factor's triangle; its strict part mirrored completes it.
    keep, strict = (np.triu, 1) if upper else (np.tril, -1)
    mirrored = np.swapaxes(keep(inverse, strict), -1, -2)
    return np.add(keep(inverse), mirrored, out=inverse)


def cholesky_inverse_backward(grad: Any, factor: Any, upper: bool, inverse: Any) -> Any:
    """-(inverse (g + g^T) inverse) L, or U times it."""
    common = inverse @ ((grad + _mT(grad)) @ inverse)
    return -(factor @ common) if upper else -(common @ factor)


def cholesky_inverse_jvp(factor: Any, factor_t: Any, inverse: Any, upper: bool) -> Any:
    """The tangent of X = A^{-1}, A = L L^T (or U^T U): dX = -X dA X = P + P^T
    with P = -X dL L^T X (or -X dU^T U X). The whole tangent counts, its other
    triangle too, as in the backward."""
    if upper:
        partial = -(inverse @ (_mT(factor_t) @ factor) @ inverse)
    else:
        partial = -(inverse @ (factor_t @ _mT(factor)) @ inverse)
    return partial + _mT(partial)


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
        return np.empty((0,), dtype=a.dtype), lapack_layout(r)
    q, r = np.linalg.qr(a, mode=mode)
    return lapack_layout(q), lapack_layout(r)


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
    """exp(A) by scipy's Pade approximation with scaling and squaring, in double
    precision (then rounded to A's dtype): scipy's own float32 path loses about
    twenty times float32's precision on matrices of large norm."""
    from scipy.linalg import expm

    _check_square(a, "linalg.matrix_exp", "A")
    _check_float(a, "linalg.matrix_exp")
    if a.size == 0:
        return np.empty_like(a)
    wide = a.astype(np.promote_types(a.dtype, np.float64), copy=False)
    return np.ascontiguousarray(expm(wide)).astype(a.dtype, copy=False)


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
    if a.dtype != b.dtype:  # no type promotion, as PyTorch's
        raise RuntimeError(
            f"expected scalar type {scalar_type_name(a.dtype)} but found "
            f"{scalar_type_name(b.dtype)}"
        )
    if backend.is_foreign(a):
        return _standard_cross(a, b, dim)
    return np.ascontiguousarray(np.cross(a, b, axis=dim))


def linalg_cross(a: Any, b: Any, dim: int) -> Any:
    if backend.is_foreign(a) or backend.is_foreign(b):
        return _standard_cross(a, b, dim)
    return array_namespace(a, b).linalg_cross(a, b, dim=dim)


def _standard_cross(a: Any, b: Any, dim: int) -> Any:
    """a x b in the standard's element-wise names (Dask's linalg has no cross):
    component i is a[i+1] b[i+2] - a[i+2] b[i+1], the components rotated by take."""
    xp = backend.namespace_of(a, b)
    ndim = max(a.ndim, b.ndim)
    axis = dim % ndim - ndim  # from the end, where a and b line up

    def rotated(x: Any, k: int) -> Any:
        return xp.take(x, xp.asarray([(i + k) % 3 for i in range(3)]), axis=axis)

    return rotated(a, 1) * rotated(b, 2) - rotated(a, 2) * rotated(b, 1)


# -- pseudo-inverse -----------------------------------------------------------------


def _pinv_tolerance(
    xp: Any, s_max: Any, atol: Any, rtol: Any, m: int, n: int, eps: float
) -> Any:
    """max(atol, rtol * largest singular value), PyTorch's defaults: rtol is
    eps * max(m, n), or 0 where only a positive atol is given."""
    if rtol is None:
        default = eps * max(m, n)
        rtol = (
            default
            if atol is None
            else xp.where(atol > 0, xp.zeros_like(atol), default)
        )
    atol = 0.0 if atol is None else atol
    if hasattr(atol, "shape"):
        atol = xp.expand_dims(atol, axis=-1)
    if hasattr(rtol, "shape"):
        rtol = xp.expand_dims(rtol, axis=-1)
    return xp.maximum(atol, rtol * s_max)


def pinv_kernel(a: Any, atol: Any, rtol: Any, hermitian: bool) -> Any:
    """The Moore-Penrose pseudo-inverse: singular values (eigenvalues when
    `hermitian`) at or below the tolerance count as zero. In the standard's
    names (its linalg extension's svd, eigh), numpy's included; on Dask, whose
    linalg takes one 2-D matrix, numpy's per block of whole matrices."""
    xp = backend.namespace_of(a, atol, rtol)
    if a.ndim < 2 or not xp.isdtype(a.dtype, "real floating"):
        raise RuntimeError(
            f"linalg.pinv({_tm_shape(a)}): expected a tensor with 2 or more "
            "dimensions of float, double, cfloat or cdouble types"
        )
    m, n = a.shape[-2:]
    if backend.is_lazy(a):
        return per_matrix(
            _pinv_blocks, a, atol, rtol, shape=(n, m), hermitian=hermitian
        )
    if math.prod(a.shape) == 0:
        return xp.zeros(tuple(a.shape[:-2]) + (n, m), dtype=a.dtype)
    eps = float(xp.finfo(a.dtype).eps)
    if hermitian:
        w, u = xp.linalg.eigh(a)
        s, vh = xp.abs(w), xp.matrix_transpose(u)
        s_max = xp.max(s, axis=-1, keepdims=True)
    else:
        u, w, vh = xp.linalg.svd(a, full_matrices=False)
        s, s_max = w, w[..., :1]
    tol = _pinv_tolerance(xp, s_max, atol, rtol, m, n, eps)
    inverse = xp.where(s > tol, 1 / xp.where(w == 0, 1.0, w), 0.0)
    inverse = xp.astype(inverse, a.dtype, copy=False)
    out = (xp.matrix_transpose(vh) * inverse[..., None, :]) @ xp.matrix_transpose(u)
    return np.ascontiguousarray(out) if xp is np else out


def _pinv_blocks(a: Any, atol: Any, rtol: Any, hermitian: bool) -> Any:
    """pinv_kernel of a block of whole matrices, with a tolerance per matrix
    (as `per_matrix` hands them: two trailing axes of size 1)."""
    atol, rtol = (None if t is None else t[..., 0, 0] for t in (atol, rtol))
    return pinv_kernel(a, atol, rtol, hermitian)


def _tm_shape(x: Any) -> str:
    from yamlgrad.runtime.errors import scalar_type_name

    return f"{scalar_type_name(_numpy_dtype(x))}{{{list(np.shape(x))}}}"


def pinv_backward(grad: Any, pinvA: Any, A: Any) -> Any:
    """PyTorch's pinv_backward (Golub and Pereyra's derivative of the
    pseudo-inverse), arranged so the products are of the smaller size."""
    m, n = A.shape[-2], A.shape[-1]
    pinvAh, gradh = _mT(pinvA), _mT(grad)
    if m <= n:
        K = gradh @ pinvA
        KpinvAh = K @ pinvAh
        return (
            -_mT(pinvA @ K)
            + KpinvAh
            - (A @ pinvA) @ KpinvAh
            + (pinvAh @ pinvA) @ (gradh - K @ A)
        )
    K = pinvA @ gradh
    pinvAhK = pinvAh @ K
    return (
        -_mT(K @ pinvA)
        + (gradh - A @ K) @ pinvA @ pinvAh
        + pinvAhK
        - pinvAhK @ pinvA @ A
    )


# -- least squares --------------------------------------------------------------------

LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq_kernel(a: Any, b: Any, rcond: Any, driver: Any) -> tuple[Any, ...]:
    """(solution, residuals, rank, singular_values) as torch.linalg.lstsq: each
    driver's outputs, and empty ones for what it does not compute (residuals
    only for a tall A of full rank and a driver other than gelsy)."""
    op = "torch.linalg.lstsq"
    driver = "gelsy" if driver is None else driver
    if driver not in LSTSQ_DRIVERS:
        raise RuntimeError(
            f"{op}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
        )
    _check_matrix(a, op, "input")
    _check_float(a, op)
    if b.dtype != a.dtype:
        raise RuntimeError(
            f"{op}: Expected input and other to have the same dtype, but got input's "
            f"dtype {scalar_type_name(a.dtype)} and other's dtype "
            f"{scalar_type_name(b.dtype)}"
        )
    vector = _vector_rhs(a, b)
    b = b[..., None] if vector else b
    m, n = a.shape[-2:]
    rcond = np.finfo(a.dtype).eps * max(m, n) if rcond is None else rcond
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    x = np.empty(batch + (n, b.shape[-1]), dtype=a.dtype)
    rank = np.empty(batch, dtype=np.int64)
    sv = np.empty(batch + (min(m, n),), dtype=a.dtype)
    for i in np.ndindex(*batch):
        x[i], _, rank[i], sv[i] = np.linalg.lstsq(a[i], b[i], rcond=rcond)
    residuals = np.empty((0,), dtype=a.dtype)
    if m > n and driver != "gelsy" and np.all(rank == n):
        residuals = np.sum((a @ x - b) ** 2, -2)
    empty = np.empty((0,), dtype=a.dtype)
    return (
        lapack_layout(x)[..., 0] if vector else lapack_layout(x),
        residuals,
        np.empty((0,), dtype=np.int64) if driver == "gels" else rank,
        sv if driver in ("gelsd", "gelss") else empty,
    )


def _vector_rhs(a: Any, b: Any) -> bool:
    """b is a vector (a batch of them): 1-D, or A's shape without its last dim."""
    b_shape, a_shape = tuple(b.shape), tuple(a.shape)
    return len(b_shape) == 1 or (
        len(b_shape) == len(a_shape) - 1 and b_shape == a_shape[:-1]
    )


def linalg_lstsq_backward(
    gX: Any, gR: Any, A: Any, B: Any, X: Any, grad_input_mask: tuple[bool, ...]
) -> tuple[Any, Any]:
    """Through the pseudo-inverse, X = pinv(A) B (PyTorch's); the residuals
    |A X - B|^2, where computed, add 2 r X^T to A's and -2 r to B's, r = A X - B
    weighted by their gradient (X's own change does not move them: A^T r = 0)."""
    xp = array_namespace(gX, A, B)
    vector = _vector_rhs(A, B)
    if vector:
        B, X, gX = B[..., None], X[..., None], gX[..., None]
    pinvA = xp.linalg_pinv(A)
    gA = pinv_backward(gX @ _mT(B), pinvA, A)
    gB = _mT(pinvA) @ gX
    if gR.ndim and gR.shape[-1] == X.shape[-1] and X.shape[-1] * A.shape[-1]:
        weighted = (A @ X - B) * gR[..., None, :]
        gA = gA + 2 * (weighted @ _mT(X))
        gB = gB - 2 * weighted
    gB = gB[..., 0] if vector else gB
    return gA if grad_input_mask[0] else None, gB if grad_input_mask[1] else None


register_numpy_kernels(
    linalg_solve_triangular=lambda a, b, upper, left=True, unitriangular=False: (
        solve_triangular_kernel(a, b, upper, left, unitriangular)
    ),
    cholesky_solve=cholesky_solve_kernel,
    linalg_pinv=lambda a: pinv_kernel(a, None, None, False),
    linalg_matrix_exp=matrix_exp_kernel,
    linalg_cross=lambda a, b, dim=-1: cross_kernel(a, b, dim),
)
