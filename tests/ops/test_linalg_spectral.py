"""The spectral decompositions and their composites against torch: degenerate
inputs (repeated singular values and eigenvalues), full_matrices, torch.svd
without compute_uv, the general linalg_eig_backward on complex ndarrays, and
PyTorch's error texts for bad calls of the linalg ops."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from support import call_outcome, libraries_under_test
from yamlgrad.runtime.ops.linalg_spectral import linalg_eig_backward


def _both(a: np.ndarray) -> tuple[Any, Any]:
    torch = pytest.importorskip("torch")
    return yg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def test_repeated_singular_values_give_non_finite_gradients_as_torch() -> None:
    """A loss of U at a repeated singular value divides by zero (inf and nan),
    in both libraries; a loss of the singular values alone stays finite."""
    a = np.diag([2.0, 1.0, 1.0])  # exactly repeated
    x, t = _both(a)
    (gx,) = yg.autograd.grad(yg.linalg.svd(x).U.sum(), x)
    (gt,) = __import__("torch").autograd.grad(
        __import__("torch").linalg.svd(t).U.sum(), t
    )
    assert not np.isfinite(gt.numpy()).all()
    assert not np.isfinite(gx.numpy()).all()
    x, t = _both(a)
    (gx,) = yg.autograd.grad(yg.linalg.svdvals(x).sum(), x)
    (gt,) = __import__("torch").autograd.grad(
        __import__("torch").linalg.svdvals(t).sum(), t
    )
    np.testing.assert_allclose(gx.numpy(), gt.numpy(), rtol=1e-10, atol=1e-12)


def test_repeated_eigenvalues_give_finite_eigenvalue_gradients_as_torch() -> None:
    torch = pytest.importorskip("torch")
    a = np.diag([1.0, 1.0, 9.0])  # exactly repeated
    x, t = _both(a)
    (gx,) = yg.autograd.grad(yg.linalg.eigvalsh(x).sum(), x)
    (gt,) = torch.autograd.grad(torch.linalg.eigvalsh(t).sum(), t)
    np.testing.assert_allclose(gx.numpy(), gt.numpy(), rtol=1e-10, atol=1e-12)
    x, t = _both(a)
    (gx,) = yg.autograd.grad(yg.linalg.eigh(x).eigenvectors.abs().sum(), x)
    (gt,) = torch.autograd.grad(torch.linalg.eigh(t).eigenvectors.abs().sum(), t)
    assert not np.isfinite(gt.numpy()).all() and not np.isfinite(gx.numpy()).all()


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3)])
def test_full_matrices_backward_reads_the_first_k_vectors_as_torch(
    shape: tuple[int, ...],
) -> None:
    """PyTorch differentiates full_matrices=True by narrowing U and Vh to their
    first min(m, n) vectors; a loss of those (sign-free: |U|, |Vh|) matches."""
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(1).standard_normal(shape)
    k = min(shape[-2:])
    x, t = _both(a)
    U, S, Vh = yg.linalg.svd(x, full_matrices=True)
    Ut, St, Vht = torch.linalg.svd(t, full_matrices=True)
    assert U.shape == tuple(Ut.shape) and Vh.shape == tuple(Vht.shape)
    loss = U[..., :k].abs().sum() + S.sum() + (Vh[..., :k, :].abs() * 2).sum()
    loss_t = Ut[..., :k].abs().sum() + St.sum() + (Vht[..., :k, :].abs() * 2).sum()
    (gx,) = yg.autograd.grad(loss, x)
    (gt,) = torch.autograd.grad(loss_t, t)
    np.testing.assert_allclose(gx.numpy(), gt.numpy(), rtol=1e-9, atol=1e-11)


def test_torch_svd_without_compute_uv_returns_zeros_and_differentiates_s() -> None:
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(2).standard_normal((4, 3))
    x, t = _both(a)
    U, S, V = yg.svd(x, compute_uv=False)
    Ut, St, Vt = torch.svd(t, compute_uv=False)
    assert U.shape == tuple(Ut.shape) == (4, 4) and V.shape == tuple(Vt.shape)
    assert not U.numpy().any() and not V.numpy().any()
    (gx,) = yg.autograd.grad(S.sum(), x)
    (gt,) = torch.autograd.grad(St.sum(), t)
    np.testing.assert_allclose(gx.numpy(), gt.numpy(), rtol=1e-10, atol=1e-12)
    assert type(yg.svd(x).V.grad_fn).__name__ == "TransposeBackward0"


def test_linalg_eig_backward_matches_torch_on_complex_arrays() -> None:
    """The general (non-symmetric) backward, on torch's own complex eigenvalues
    and eigenvectors and output gradients of a phase-free loss: the real part is
    torch's gradient of the real input (handle_r_to_c)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    t = torch.tensor(rng.standard_normal((2, 4, 4)), requires_grad=True)
    L, V = torch.linalg.eig(t)
    weights = torch.tensor(rng.standard_normal((2, 4, 4)))
    cL = torch.tensor(rng.standard_normal((2, 4)) + 1j * rng.standard_normal((2, 4)))
    loss = (V.abs() * weights).sum() + (L * cL).real.sum()
    gL, gV = torch.autograd.grad(loss, [L, V], retain_graph=True)
    (want,) = torch.autograd.grad(loss, t)
    got = linalg_eig_backward(
        gL.numpy(), gV.numpy(), L.detach().numpy(), V.detach().numpy(), False
    )
    np.testing.assert_allclose(got.real, want.numpy(), rtol=1e-9, atol=1e-11)
    gL_only = torch.autograd.grad(torch.linalg.eigvals(t).real.sum(), t)[0]
    ones = np.ones((2, 4), dtype=complex)
    got = linalg_eig_backward(
        ones,
        np.zeros((2, 4, 4), complex),
        L.detach().numpy(),
        V.detach().numpy(),
        False,
    )
    np.testing.assert_allclose(got.real, gL_only.numpy(), rtol=1e-9, atol=1e-11)


def test_eig_and_eigvals_are_refused_naming_the_complex_dtype() -> None:
    x = yg.randn(3, 3)
    with pytest.raises(NotImplementedError, match=r"torch\.complex64"):
        yg.linalg.eig(x)
    with pytest.raises(NotImplementedError, match=r"^linalg\.eigvals: .*complex128"):
        yg.linalg.eigvals(x.double())
    with pytest.raises(RuntimeError, match="must be batches of square matrices"):
        yg.linalg.eig(yg.randn(3, 2))


# PyTorch's error for each bad call, compared text for text.
BAD_CALLS = {
    "svd driver": lambda L: L.linalg.svd(L.ones(3, 3), driver="gesvd"),
    "svd of a vector": lambda L: L.linalg.svd(L.ones(3)),
    "svdvals of a vector": lambda L: L.linalg.svdvals(L.ones(3)),
    "eigh UPLO": lambda L: L.linalg.eigh(L.eye(3), UPLO="X"),
    "eigh not square": lambda L: L.linalg.eigh(L.ones(3, 2)),
    "eigvalsh not square": lambda L: L.linalg.eigvalsh(L.ones(3, 2)),
    "slogdet not square": lambda L: L.linalg.slogdet(L.ones(3, 2)),
    "logdet not square": lambda L: L.logdet(L.ones(3, 2)),
    "solve singular": lambda L: L.linalg.solve(L.zeros(3, 3), L.ones(3)),
    "solve batch singular": lambda L: L.linalg.solve(L.zeros(2, 3, 3), L.ones(3)),
    "solve shapes": lambda L: L.linalg.solve(L.eye(3), L.ones(4, 2)),
    "solve shapes right": lambda L: L.linalg.solve(L.eye(3), L.ones(2, 4), left=False),
    "solve dtypes": lambda L: L.linalg.solve(L.eye(3).double(), L.ones(3)),
    "matrix_norm of a vector": lambda L: L.linalg.matrix_norm(L.ones(3)),
    "matrix_norm order": lambda L: L.linalg.matrix_norm(L.ones(2, 2), 3),
    "matrix_norm str order": lambda L: L.linalg.matrix_norm(L.ones(2, 2), "abc"),
    "matrix_norm same dims": lambda L: L.linalg.matrix_norm(L.ones(2, 2), dim=(0, -2)),
    "norm dims": lambda L: L.linalg.norm(L.ones(2, 2), dim=(0, 1, 1)),
    "norm 3-d with ord": lambda L: L.linalg.norm(L.ones(2, 2, 2), 2),
    "cond of a vector": lambda L: L.linalg.cond(L.ones(3)),
    "cond order": lambda L: L.linalg.cond(L.eye(2), 3),
    "cond not square": lambda L: L.linalg.cond(L.ones(2, 3), 1),
    "cond inf not square": lambda L: L.linalg.cond(L.ones(2, 3), float("inf")),
    "cond fro not square": lambda L: L.linalg.cond(L.ones(2, 3), "fro"),
    "cond str order": lambda L: L.linalg.cond(L.eye(2), "abc"),
    "matrix_power not square": lambda L: L.linalg.matrix_power(L.ones(2, 3), 2),
    "matrix_power of a vector": lambda L: L.linalg.matrix_power(L.ones(3), 2),
    "multi_dot one": lambda L: L.linalg.multi_dot([L.ones(3)]),
    "multi_dot shapes": lambda L: L.linalg.multi_dot([L.ones(2, 3), L.ones(2, 3)]),
    "multi_dot first 3-d": lambda L: L.linalg.multi_dot(
        [L.ones(2, 2, 3), L.ones(3, 3)]
    ),
    "multi_dot middle 3-d": lambda L: L.linalg.multi_dot(
        [L.ones(2, 3), L.ones(3, 3, 3), L.ones(3)]
    ),
    "tensorinv ind": lambda L: L.linalg.tensorinv(L.ones(4, 2, 2), 0),
    "tensorinv shape": lambda L: L.linalg.tensorinv(L.ones(4, 2, 3), 1),
    "tensorsolve shape": lambda L: L.linalg.tensorsolve(L.ones(6, 2, 2), L.ones(6)),
    "vander 2-d": lambda L: L.vander(L.ones(2, 2)),
    "vander N": lambda L: L.vander(L.ones(3), -1),
    "linalg.vander N": lambda L: L.linalg.vander(L.ones(3), N=1),
    "vecdot of integers": lambda L: L.linalg.vecdot(
        L.ones(3, dtype=L.int64), L.ones(3, dtype=L.int64)
    ),
    "inner shapes": lambda L: L.inner(L.ones(3), L.ones(4)),
    "cross without a dim of 3": lambda L: L.cross(L.ones(2, 2), L.ones(2, 2)),
    "matrix_rank of a vector": lambda L: L.linalg.matrix_rank(L.ones(3)),
    "mT of a vector": lambda L: L.ones(3).mT,
    "mH of a vector": lambda L: L.ones(3).mH,
    "H of a batch": lambda L: L.ones(2, 2, 2).H,
}


@pytest.mark.parametrize("call", list(BAD_CALLS), ids=list(BAD_CALLS))
def test_bad_linalg_calls_raise_torchs_errors(call: str) -> None:
    import warnings

    outcomes = []
    for lib in libraries_under_test():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outcomes.append(call_outcome(BAD_CALLS[call], lib))
    assert isinstance(outcomes[0], tuple), outcomes[0]  # an error
    assert outcomes[0] == outcomes[-1]


# The values and nodes of calls the OpInfo samples do not make.
CALLS = {
    "matrix_power 0 (CopyBackwards)": lambda L, x: L.linalg.matrix_power(x, 0),
    "matrix_power -2": lambda L, x: L.linalg.matrix_power(x, -2),
    "matrix_norm nuc keepdim": lambda L, x: L.linalg.matrix_norm(
        x, "nuc", keepdim=True
    ),
    "matrix_norm -2 over dims (1, 0)": lambda L, x: L.linalg.matrix_norm(
        x, -2, dim=(1, 0)
    ),
    "norm nuc": lambda L, x: L.norm(x, "nuc"),
    "cond nuc": lambda L, x: L.linalg.cond(x, "nuc"),
    "cond -2": lambda L, x: L.linalg.cond(x, -2),
    "multi_dot of four": lambda L, x: L.linalg.multi_dot([x, x.mT, x, x[0]]),
    "kron": lambda L, x: L.kron(x, x[:2]),
    "inner": lambda L, x: L.inner(x, x),
    "vecdot": lambda L, x: L.linalg.vecdot(x, x, dim=0),
    "vander increasing": lambda L, x: L.vander(x[0], 4, increasing=True),
    "linalg.vander": lambda L, x: L.linalg.vander(x),
    "tensorsolve": lambda L, x: L.linalg.tensorsolve(x, x[0]),
    "pinverse": lambda L, x: L.pinverse(x),
    "pinv rcond": lambda L, x: L.linalg.pinv(x, 0.5),
    "pinv atol float": lambda L, x: L.linalg.pinv(x, atol=0.5),
    "pinv hermitian": lambda L, x: L.linalg.pinv(x @ x.mT, hermitian=True),
    "slogdet named": lambda L, x: L.linalg.slogdet(x).logabsdet,
    "logdet of a negative determinant": lambda L, x: L.logdet(-(x @ x.mT)),
    "solve_ex info": lambda L, x: L.linalg.solve_ex(x, x[0]).info,
    "det": lambda L, x: L.det(x),
    "inverse": lambda L, x: L.inverse(x),
    "matrix_rank": lambda L, x: L.linalg.matrix_rank(x),
    "matrix_rank hermitian atol": lambda L, x: L.linalg.matrix_rank(
        x @ x.mT, atol=1.0, hermitian=True
    ),
    "lu": lambda L, x: L.lu(x)[0],
    "lu_factor pivots": lambda L, x: L.linalg.lu_factor(x).pivots,
    "qr complete": lambda L, x: L.qr(x, some=False).R,
}


@pytest.mark.parametrize("call", list(CALLS), ids=list(CALLS))
def test_linalg_calls_match_torch(call: str) -> None:
    import warnings

    a = np.random.default_rng(4).standard_normal((3, 3))
    outcomes = []
    for lib in libraries_under_test():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = lib.tensor(a, requires_grad=True)
            outcomes.append(call_outcome(lambda L: CALLS[call](L, x), lib))
    ours, theirs = outcomes[0], outcomes[-1]
    assert not isinstance(ours, tuple), ours
    assert [(s, n) for s, _, n in ours] == [(s, n) for s, _, n in theirs]
    for (_, got, _), (_, want, _) in zip(ours, theirs):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)
