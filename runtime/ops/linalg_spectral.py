"""Linear algebra: the spectral decompositions (_linalg_svd, _linalg_eigh,
linalg_eig), kernels over numpy.linalg (LAPACK's gesdd, syevd, geev), each
beside its backward helper, translated from PyTorch's svd_backward and
linalg_eig_backward so that they run on ndarrays and, under
`create_graph=True`, on Tensors (every formula has a double backward).

Two decisions:

* Undefined output gradients. PyTorch's formulas ask `gU.defined()`: a loss of
  the singular values alone (svdvals, a matrix 2-norm) never divides by the
  gaps between them, so it has a finite gradient at repeated singular values.
  yamlgrad's nodes hand a formula zeros for an output nobody differentiated,
  so `_defined` reads an all-zero gradient that is a constant as undefined (a
  cotangent that requires grad, as the derived JVPs use, stays defined). A
  loss given an explicit zero cotangent for U therefore gets the finite
  gradient where PyTorch's gives nan.
* linalg_eig of a real matrix. PyTorch always returns complex eigenvalues and
  eigenvectors (complex64 for float32, complex128 for float64), also when every
  eigenvalue is real, and differentiates them with handle_r_to_c. yamlgrad has
  no complex dtype: rather than return real tensors that no PyTorch program
  expects, torch.linalg.eig and eigvals (runtime/linalg_functional.py) check
  their input as PyTorch does and then refuse it with an error naming the
  missing dtype (`eig_kernel`). The backward helper is the
  general one (`linalg_eig_backward` with is_hermitian=False), checked on
  complex ndarrays against torch in tests/ops/test_linalg_spectral.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.errors import scalar_type_name
from yamlgrad.runtime.ops.linalg_decompositions import _mT, lapack_layout
from yamlgrad.runtime.ops.namespace import array_namespace, constant_tensor

KERNELS = ("svd_kernel", "eigh_kernel")
BACKWARD_HELPERS = ("svd_backward", "linalg_eig_backward", "linalg_eigh_jvp")


def _check_float_matrix(a: Any, op: str, square: bool) -> None:
    if np.ndim(a) < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if square and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"{op}: A must be batches of square matrices, but they are "
            f"{a.shape[-2]} by {a.shape[-1]} matrices"
        )
    if np.result_type(a).kind != "f":
        raise RuntimeError(
            f"{op}: Expected a floating point or complex tensor as input. Got "
            f"{scalar_type_name(np.result_type(a))}"
        )


def _defined(g: Any) -> bool:
    """Whether an output's gradient takes part (see the module docstring)."""
    if isinstance(g, Tensor):
        return g.requires_grad or bool(np.any(g._data))
    return bool(np.any(g))


def _values(x: Any) -> np.ndarray:
    return x._data if isinstance(x, Tensor) else np.asarray(x)


def _eye_like(x: Any, n: int) -> Any:
    """The n x n identity in x's dtype, a constant beside x."""
    array = np.eye(n, dtype=_values(x).dtype)
    return array if not isinstance(x, Tensor) else constant_tensor(array)


def _diag(x: Any, eye: Any) -> Any:
    """diag_embed of the last dim of x, given the identity of its size."""
    return eye * x[..., None, :]


def _conj(x: Any) -> Any:
    """x.conj(): x itself for a real x, as PyTorch's (free on real tensors)."""
    return np.conj(x) if _values(x).dtype.kind == "c" else x


# -- singular value decomposition -------------------------------------------------------


def svd_kernel(
    a: Any, full_matrices: bool, compute_uv: bool, driver: str | None
) -> tuple[Any, Any, Any]:
    """(U, S, Vh) with A = U diag(S) Vh, S descending: LAPACK's gesdd (numpy's
    svd), U and Vh column-major as PyTorch returns them; empty U and Vh
    without `compute_uv`."""
    _check_float_matrix(a, "linalg.svd", square=False)
    if driver is not None:
        raise RuntimeError(
            "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA "
            "inputs with cuSOLVER backend."
        )
    a = np.asarray(a)
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    if not compute_uv:
        empty = np.empty((0,), dtype=a.dtype)
        if a.size == 0:
            return empty, np.zeros(batch + (k,), dtype=a.dtype), empty
        return empty, np.linalg.svd(a, compute_uv=False), empty
    if a.size == 0:
        rows, columns = (m, n) if full_matrices else (k, k)
        u = np.broadcast_to(np.eye(m, rows, dtype=a.dtype), batch + (m, rows))
        vh = np.broadcast_to(np.eye(columns, n, dtype=a.dtype), batch + (columns, n))
        s = np.zeros(batch + (k,), dtype=a.dtype)
        return lapack_layout(u), s, lapack_layout(vh)
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return lapack_layout(u), s, lapack_layout(vh)


def svd_backward(grads: list[Any], U: Any, S: Any, Vh: Any, full_matrices: bool) -> Any:
    """PyTorch's svd_backward, for distinct singular values (repeated ones
    divide by zero: inf and nan, as PyTorch's). With full_matrices, U and Vh
    are first narrowed to their first k = min(m, n) vectors, as PyTorch's
    derivatives.yaml does: the rest are not functions of A."""
    gU, gS, gVh = grads
    if np.ndim(U) < 2:
        raise RuntimeError(
            "linalg.svd: The derivative of linalg.svd depends on U and Vh, which "
            "are not computed when compute_uv=False."
        )
    k = S.shape[-1]
    if full_matrices:
        gU, U = gU[..., :, :k], U[..., :, :k]
        gVh, Vh = gVh[..., :k, :], Vh[..., :k, :]
    xp = array_namespace(gS, U, S, Vh)
    m, n = U.shape[-2], Vh.shape[-1]
    with_u, with_v = _defined(gU), _defined(gVh)
    if not with_u and not with_v:  # svdvals: U diag(gS) Vh, finite at ties
        if m >= n:
            return U @ (gS[..., :, None] * Vh)
        return (U * gS[..., None, :]) @ Vh
    eye = _eye_like(S, k)
    S_row, S_column = S[..., None, :], S[..., :, None]
    E = S_row * S_row - S_column * S_column + eye
    if with_u:
        UhgU = _mT(U) @ gU
        UhgU = UhgU - _mT(UhgU)
    if with_v:
        VhgV = Vh @ _mT(gVh)
        VhgV = VhgV - _mT(VhgV)
    if with_u and with_v:
        gA = (UhgU * S_row + S_column * VhgV) / E
    elif with_u:
        gA = UhgU * (S_row / E)
    else:
        gA = S_column * VhgV / E
    gA = gA + _diag(gS, eye)
    if m > n and with_u:
        gA = U @ gA
        gUSinv = gU / S_row
        gA = gA + gUSinv - U @ (_mT(U) @ gUSinv)
        return gA @ Vh
    if m < n and with_v:
        gA = gA @ Vh
        SinvgVh = gVh / S_column
        gA = gA + SinvgVh - (SinvgVh @ _mT(Vh)) @ Vh
        return U @ gA
    return U @ (gA @ Vh) if m >= n else (U @ gA) @ Vh


# -- eigendecompositions -----------------------------------------------------------------


def eigh_kernel(a: Any, uplo: str, compute_v: bool) -> tuple[Any, Any]:
    """(eigenvalues ascending, eigenvectors) of the symmetric matrix whose lower
    (UPLO='L') or upper triangle A holds: LAPACK's syevd (numpy's eigh); an
    empty eigenvector tensor without `compute_v`."""
    if uplo not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")
    _check_float_matrix(a, "linalg.eigh", square=True)
    a = np.asarray(a)
    if a.size == 0:
        vectors = np.empty(a.shape, dtype=a.dtype) if compute_v else a[..., :0, 0, 0]
        return np.empty(a.shape[:-1], dtype=a.dtype), vectors
    if not compute_v:
        return np.linalg.eigvalsh(a, UPLO=uplo), np.empty((0,), dtype=a.dtype)
    w, v = np.linalg.eigh(a, UPLO=uplo)
    return w, lapack_layout(v)


def eig_kernel(a: Any, op: str = "linalg.eig") -> tuple[Any, Any]:
    """torch.linalg.eig (and eigvals): results PyTorch always returns complex.
    yamlgrad has no complex dtype, so after PyTorch's checks this raises,
    naming it (see the module docstring)."""
    _check_float_matrix(a, op, square=True)
    dtype = "torch.complex64" if np.result_type(a) == np.float32 else "torch.complex128"
    raise NotImplementedError(
        f"{op}: the eigenvalues and eigenvectors of a real matrix are complex "
        f"tensors ({dtype}) in PyTorch, also when every eigenvalue is real, and "
        "yamlgrad has no complex dtype yet. For a symmetric matrix use "
        "linalg.eigh or linalg.eigvalsh, whose results are real."
    )


def linalg_eig_backward(gL: Any, gV: Any, L: Any, V: Any, is_hermitian: bool) -> Any:
    """PyTorch's linalg_eig_backward: gA = V^{-H} (diag(gL) + (V^H gV projected)
    / conj(E)) V^H, with E_ij = L_j - L_i (repeated eigenvalues divide by zero:
    inf and nan, as PyTorch's). Eigenvalues alone give V diag(gL) V^H (eigh)
    or V^{-H} diag(gL) V^H, finite at ties."""
    xp = array_namespace(gL, V)
    Vh = _conj(_mT(V))
    if not _defined(gV):
        if is_hermitian:
            return (V * gL[..., None, :]) @ Vh
        return xp.linalg_solve(Vh, gL[..., :, None] * Vh)
    VhgV = Vh @ gV
    eye = _eye_like(V, L.shape[-1])
    if is_hermitian:
        VhgV = 0.5 * (VhgV - _conj(_mT(VhgV)))
    else:
        diagonal = xp.diagonal(VhgV, 0, -2, -1)
        diagonal = (
            np.real(diagonal) if _values(diagonal).dtype.kind == "c" else diagonal
        )
        VhgV = VhgV - Vh @ (V * diagonal[..., None, :])
    Lc = L if is_hermitian else _conj(L)
    E = Lc[..., None, :] - Lc[..., :, None] + eye
    ret = VhgV / E
    if _defined(gL):
        ret = ret * (1 - eye) + _diag(gL, eye)
    if is_hermitian:
        return V @ (ret @ Vh)
    return xp.linalg_solve(Vh, ret @ Vh)


def linalg_eigh_jvp(dA: Any, L: Any, V: Any) -> tuple[Any, Any]:
    """PyTorch's linalg_eig_jvp for a symmetric A: with dP = V^T dA V, dL is
    its diagonal and dV = V (dP / E) off it, E_ij = L_j - L_i. As PyTorch's,
    it reads the whole tangent dA (a symmetric one is what the op expects)."""
    dP = _mT(V) @ (dA @ V)
    eye = _eye_like(V, L.shape[-1])
    E = L[..., None, :] - L[..., :, None] + eye
    return array_namespace(dP).diagonal(dP, 0, -2, -1), V @ ((dP / E) * (1 - eye))
