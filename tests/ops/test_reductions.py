"""Reduction and linear-algebra cases that random samples cannot reach, vs torch.

derivatives.yaml draws sample values from intervals, so it never places an exact
zero (prod, cumprod) or an exact tie (amax, amin). These cases are written out here:
values, gradients and double backward against torch in float64.

Then reductions, scans and softmax over empty and 0-d tensors: the same result as
torch (values with nan where torch has nan) or the same error text. Reductions
without an identity (max, argmax, amax, the inf norm) refuse an empty reduced
dim as PyTorch does; sums, means, logsumexp and softmax give its empty or
identity results (found by fuzz/test_fuzz_ops.py, as were the calls at the end).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from support import call_outcome, counting_input

RTOL = 1e-10
ATOL = 1e-12


def _compare(
    fn: Callable[[ModuleType, Any], Any], value: np.ndarray, *, seed: int = 0
) -> None:
    """fn(lib, x) in both libraries: forward, first and second order gradients."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    x = yg.tensor(value, requires_grad=True)
    t = torch.tensor(value, requires_grad=True)
    out, ref = fn(yg, x), fn(torch, t)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), RTOL, ATOL)
    assert type(out.grad_fn).__name__ == type(ref.grad_fn).__name__
    cotangent = rng.standard_normal(tuple(ref.shape))
    direction = rng.standard_normal(value.shape)
    (g,) = yg.autograd.grad(out, [x], yg.tensor(cotangent), create_graph=True)
    (r,) = torch.autograd.grad(ref, [t], torch.tensor(cotangent), create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), r.detach().numpy(), RTOL, ATOL)
    assert g.requires_grad == r.requires_grad
    if r.requires_grad:  # amax's gradient is linear in the cotangent alone: no
        (gg,) = yg.autograd.grad((g * yg.tensor(direction)).sum(), [x])
        (rr,) = torch.autograd.grad((r * torch.tensor(direction)).sum(), [t])
        want = rr.detach().numpy(force=True)  # force: torch may give a ZeroTensor
        np.testing.assert_allclose(gg.numpy(), want, 1e-9, 1e-11)
    # And the first-order route (ndarrays, no create_graph).
    x = yg.tensor(value, requires_grad=True)
    t = torch.tensor(value, requires_grad=True)
    fn(yg, x).backward(yg.tensor(cotangent))
    fn(torch, t).backward(torch.tensor(cotangent))
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), RTOL, ATOL)


ONE_ZERO = np.array([[1.5, 0.0, -0.5], [2.0, -1.25, 0.75]])
TWO_ZEROS = np.array([[1.5, 0.0, -0.5], [0.0, -1.25, 0.75]])
ZERO_IN_A_ROW = np.array([[1.5, 0.0, -0.5, 2.0], [0.5, -1.25, 0.75, 1.0]])


@pytest.mark.parametrize("value", [ONE_ZERO, TWO_ZEROS], ids=["one", "two"])
def test_prod_at_zeros_matches_torch(value: np.ndarray) -> None:
    """One zero: its gradient is the product of the others; two: all zero."""
    _compare(lambda lib, x: lib.prod(x), value)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("value", [ONE_ZERO, TWO_ZEROS], ids=["one", "two"])
def test_prod_dim_at_zeros_matches_torch(
    value: np.ndarray, dim: int, keepdim: bool
) -> None:
    _compare(lambda lib, x: lib.prod(x, dim, keepdim=keepdim), value)


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize(
    "value", [ONE_ZERO, TWO_ZEROS, ZERO_IN_A_ROW], ids=["one", "two", "row"]
)
def test_cumprod_at_zeros_matches_torch(value: np.ndarray, dim: int) -> None:
    _compare(lambda lib, x: lib.cumprod(x, dim), value)


def test_prod_gradient_at_one_zero_is_the_product_of_the_others() -> None:
    x = yg.tensor([2.0, 0.0, 3.0, -1.5], dtype=yg.float64, requires_grad=True)
    out = yg.prod(x)
    assert type(out.grad_fn).__name__ == "ProdBackward0"
    out.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, -9.0, 0.0, 0.0])


TIES = np.array([[1.0, 2.0, 2.0], [0.5, 0.5, -1.0], [3.0, 3.0, 3.0]])


@pytest.mark.parametrize("name", ["amax", "amin"])
@pytest.mark.parametrize("dim", [(), (1,), (0, 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_amax_amin_split_ties_evenly_as_torch(
    name: str, dim: tuple[int, ...], keepdim: bool
) -> None:
    _compare(lambda lib, x: getattr(lib, name)(x, dim, keepdim), TIES)


def test_amax_tie_gradient_is_shared() -> None:
    x = yg.tensor([1.0, 3.0, 3.0, 3.0], dtype=yg.float64, requires_grad=True)
    yg.amax(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 1 / 3, 1 / 3, 1 / 3])


def test_vector_norm_inf_with_ties_matches_torch() -> None:
    value = np.array([[1.0, -2.0, 2.0], [0.5, -0.5, 0.25]])
    _compare(lambda lib, x: lib.linalg.vector_norm(x, float("inf"), 1), value)


# -- yg.linalg and diag -------------------------------------------------------------


def test_linalg_namespace_spells_torch_linalg() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    for name in ("vector_norm", "inv", "det", "diagonal"):
        out = getattr(yg.linalg, name)(yg.tensor(a, requires_grad=True))
        ref = getattr(torch.linalg, name)(torch.tensor(a, requires_grad=True))
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), RTOL)
    out = yg.linalg.vector_norm(yg.tensor(a, requires_grad=True), 1, dim=[1])
    assert type(out.grad_fn).__name__ == "LinalgVectorNormBackward0"


def test_diag_of_a_matrix_matches_torch() -> None:
    """diag(matrix) records DiagonalBackward0_copy (from diagonal_copy), as PyTorch."""
    torch = pytest.importorskip("torch")
    value = np.arange(12.0).reshape(3, 4) / 7
    for offset in (0, 1, -1):
        x = yg.tensor(value, requires_grad=True)
        t = torch.tensor(value, requires_grad=True)
        out, ref = yg.diag(x, offset), torch.diag(t, offset)
        assert type(out.grad_fn).__name__ == "DiagonalBackward0_copy"
        assert type(ref.grad_fn).__name__ == "DiagonalBackward0_copy"
        np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
        cotangent = np.linspace(-1.0, 1.0, ref.shape[0])
        out.backward(yg.tensor(cotangent))
        ref.backward(torch.tensor(cotangent))
        np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("name", ["max", "min"])
def test_whole_tensor_max_and_min_share_ties_as_torch(name: str) -> None:
    """max(Tensor)/min(Tensor): MaxBackward1/MinBackward1 (max.dim comes first), the
    gradient split evenly among ties."""
    torch = pytest.importorskip("torch")
    value = np.array([[1.0, 3.0, 3.0], [-1.0, 0.0, -1.0]])
    x = yg.tensor(value, requires_grad=True)
    t = torch.tensor(value, requires_grad=True)
    out, ref = getattr(yg, name)(x), getattr(torch, name)(t)
    assert type(out.grad_fn).__name__ == type(ref.grad_fn).__name__
    assert out.grad_fn.name() == f"{name.title()}Backward1"
    out.backward()
    ref.backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


# Singular matrices whose LU has an exact zero pivot in any LAPACK (the
# arithmetic of the elimination is exact): rank n - 1 and rank <= n - 2.
SINGULAR = {
    "rank n-1, 2x2": [[1.0, 2.0], [2.0, 4.0]],
    "rank n-1, a zero row": [[2.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 3.0]],
    "rank n-1, a zero pivot": [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]],
    "rank n-2": [[2.0, 4.0, 6.0], [1.0, 2.0, 3.0], [4.0, 8.0, 12.0]],
    "rank 0": [[0.0, 0.0], [0.0, 0.0]],
    "a batch with one singular matrix": [
        [[1.0, 2.0], [2.0, 4.0]],
        [[1.0, 0.5], [0.0, 2.0]],
    ],
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(SINGULAR))
def test_det_gradient_at_a_singular_matrix_matches_torch(name: str, dtype: str) -> None:
    """PyTorch's first-order backward gives det(A) * A^{-T} from the LU factors:
    zero where U has a zero pivot, whatever the rank (not the cofactor matrix,
    which is nonzero at rank n - 1); under create_graph it gives the cofactor
    matrix, from an SVD."""
    torch = pytest.importorskip("torch")
    value = np.array(SINGULAR[name], dtype=dtype)
    for create_graph in (False, True):
        x = yg.tensor(value, requires_grad=True)
        t = torch.tensor(value, requires_grad=True)
        (ours,) = yg.autograd.grad(yg.linalg.det(x).sum(), x, create_graph=create_graph)
        (theirs,) = torch.autograd.grad(
            torch.linalg.det(t).sum(), t, create_graph=create_graph
        )
        np.testing.assert_allclose(
            ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-5, atol=1e-5
        )


def test_det_gradient_at_rank_n_minus_1_under_create_graph_is_the_cofactors() -> None:
    """The SVD route (no inverse), whose value PyTorch's create_graph gives."""
    value = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]])
    x = yg.tensor(value, requires_grad=True)
    (grad,) = yg.autograd.grad(yg.linalg.det(x), x, create_graph=True)
    cofactors = np.array([[-2.0, -2.0, 2.0], [1.0, 1.0, -1.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(grad.detach().numpy(), cofactors, atol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's var with ddof >= N
@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0:UserWarning")
@pytest.mark.parametrize("dim", [None, 1])
@pytest.mark.parametrize("correction", [3, 4, 6])
def test_var_with_no_degrees_of_freedom_matches_torch(
    dim: int | None, correction: int
) -> None:
    """2 / (N - correction) is +-inf or negative: PyTorch's values, nan included."""
    torch = pytest.importorskip("torch")
    value = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]])
    x = yg.tensor(value, requires_grad=True)
    t = torch.tensor(value, requires_grad=True)
    out = yg.var(x, dim, correction=correction)
    ref = torch.var(t, dim, correction=correction)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), RTOL)
    out.sum().backward()
    ref.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), RTOL)


@pytest.mark.parametrize("name", ["amax", "amin"])
@pytest.mark.parametrize(
    "shape, dims",
    [
        ((3, 4), (0, 0, 5)),  # out of range is found before the repeat
        ((3, 4), (0, 0)),
        ((3, 4), (1, -1)),  # the same dim, spelled twice
        ((3, 0), (1, 1)),  # an empty reduced dim is found before the repeat
        ((3, 4), (5,)),
        ((3, 4), 5),
        ((3, 4), (-2, 1)),
    ],
)
def test_amax_amin_dim_errors_as_torch(
    name: str, shape: tuple[int, ...], dims: object
) -> None:
    torch = pytest.importorskip("torch")
    data = np.arange(float(np.prod(shape))).reshape(shape)

    def outcome(lib: object, tensor: object) -> object:
        try:
            return tuple(getattr(lib, name)(tensor, dims).shape)
        except (IndexError, RuntimeError) as error:
            return type(error).__name__, str(error)

    assert outcome(yg, yg.tensor(data)) == outcome(torch, torch.tensor(data))


# fmt: off
DEGREES_OF_FREEDOM = [
    ("var of one row", (1, 3), lambda L, x: L.var(x, 0)),
    ("std of one row", (1, 3), lambda L, x: L.std(x, 0)),
    ("std method, keepdim", (1,), lambda L, x: x.std(0, keepdim=True)),
    ("var of nothing", (0, 3), lambda L, x: L.var(x)),
    ("var over a full dim of an empty tensor", (0, 3), lambda L, x: L.var(x, 1)),
    ("var over an empty dim", (3, 0), lambda L, x: L.var(x, 0)),
    ("var of a 0-d tensor", (), lambda L, x: L.var(x)),
    ("correction equal to the count", (2, 3), lambda L, x: L.var(x, 0, correction=2)),
    ("correction above the count", (2, 3), lambda L, x: L.var(x, (0, 1), correction=7)),
    ("correction 0", (2, 3), lambda L, x: L.var(x, 0, correction=0)),
    ("enough values", (2, 3), lambda L, x: L.var(x)),
    ("std of five", (5,), lambda L, x: x.std()),
]
# fmt: on


@pytest.mark.parametrize(
    "shape, call",
    [(s, c) for _, s, c in DEGREES_OF_FREEDOM],
    ids=[n for n, _, _ in DEGREES_OF_FREEDOM],
)
def test_no_degrees_of_freedom_warns_as_torch(
    shape: tuple[int, ...], call: Any
) -> None:
    """var/std with nothing left after the correction: PyTorch's UserWarning,
    named at the caller's line, and its values (nan, inf)."""
    torch = pytest.importorskip("torch")
    data = np.arange(float(np.prod(shape))).reshape(shape)

    def run(lib: Any) -> tuple[list[str], set[str], list[Any]]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = call(lib, lib.tensor(data))
        users = [w for w in caught if w.category is UserWarning]
        texts = [str(w.message).split(" (Triggered internally")[0] for w in users]
        return texts, {w.filename for w in users}, out.numpy().tolist()

    ours, theirs = run(yg), run(torch)
    assert ours[0] == theirs[0]
    assert ours[1] <= {__file__}
    np.testing.assert_array_equal(ours[2], theirs[2])


# -- empty and 0-d inputs --------------------------------------------------------------

INF = float("inf")
EMPTY_REDUCTION_CALLS: dict[str, Callable[[Any, Any], Any]] = {
    "argmax": lambda L, x: L.argmax(x),
    "argmax 0": lambda L, x: L.argmax(x, 0),
    "argmax 1": lambda L, x: L.argmax(x, 1),
    "argmax -1": lambda L, x: L.argmax(x, -1),
    "argmin 0": lambda L, x: L.argmin(x, 0),
    "max": lambda L, x: L.max(x),
    "max 0": lambda L, x: L.max(x, 0),
    "max 1": lambda L, x: L.max(x, 1),
    "min": lambda L, x: L.min(x),
    "min 0": lambda L, x: L.min(x, 0),
    "amax": lambda L, x: L.amax(x),
    "amax 0": lambda L, x: L.amax(x, 0),
    "amax -1": lambda L, x: L.amax(x, -1),
    "amax 0, 0": lambda L, x: L.amax(x, (0, 0)),
    "amin 0": lambda L, x: L.amin(x, 0),
    "sum": lambda L, x: L.sum(x),
    "sum 0": lambda L, x: L.sum(x, 0),
    "mean": lambda L, x: L.mean(x),
    "mean 0": lambda L, x: L.mean(x, 0),
    "prod 0": lambda L, x: L.prod(x, 0),
    "var": lambda L, x: L.var(x),
    "std 0": lambda L, x: L.std(x, 0),
    "logsumexp 0": lambda L, x: L.logsumexp(x, 0),
    "logsumexp 1": lambda L, x: L.logsumexp(x, 1),
    "softmax 0": lambda L, x: L.softmax(x, 0),
    "softmax 1": lambda L, x: L.softmax(x, 1),
    "log_softmax 0": lambda L, x: L.log_softmax(x, 0),
    "cumsum 0": lambda L, x: L.cumsum(x, 0),
    "cumprod 1": lambda L, x: L.cumprod(x, 1),
    "norm": lambda L, x: L.norm(x),
    "vector_norm 2, 0": lambda L, x: _vector_norm(L, x, 2, 0),
    "vector_norm inf": lambda L, x: _vector_norm(L, x, INF),
    "vector_norm -inf": lambda L, x: _vector_norm(L, x, -INF),
    "vector_norm inf, 1": lambda L, x: _vector_norm(L, x, INF, 1),
    "all": lambda L, x: L.all(x),
    "all 1": lambda L, x: L.all(x, 1),
    "sum 1": lambda L, x: L.sum(x, 1),
    "mean -2": lambda L, x: L.mean(x, -2),
    "prod 1": lambda L, x: L.prod(x, 1),
    "var 1": lambda L, x: L.var(x, 1),
    "any 0": lambda L, x: L.any(x, 0),
}


def _vector_norm(L: Any, x: Any, ord: float, dim: Any = None) -> Any:
    if L is not yg:  # torch
        return L.linalg.vector_norm(x, ord, dim)
    return yg.linalg_vector_norm(x, ord, dim)


def _outcome(f: Callable[[], Any]) -> Any:
    try:
        out = f()
    except (RuntimeError, IndexError) as error:
        return (type(error).__name__, str(error))
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [(tuple(o.shape), o.detach().numpy().astype(float)) for o in outs]


@pytest.mark.parametrize("shape", [(0, 4), (4, 0), (0,), ()])
@pytest.mark.parametrize("name", sorted(EMPTY_REDUCTION_CALLS))
def test_empty_and_0d_as_torch(name: str, shape: tuple[int, ...]) -> None:
    torch = pytest.importorskip("torch")
    got = _outcome(lambda: EMPTY_REDUCTION_CALLS[name](yg, yg.ones(shape)))
    want = _outcome(lambda: EMPTY_REDUCTION_CALLS[name](torch, torch.ones(shape)))
    if isinstance(want, tuple) or isinstance(got, tuple):
        assert got == want
        return
    assert [s for s, _ in got] == [s for s, _ in want]
    for (_, a), (_, b) in zip(got, want):
        np.testing.assert_array_equal(a, b)


# -- found by the op fuzzer (fuzz/test_fuzz_ops.py) ------------------------------------

# Each call, run in yamlgrad and in torch: the same shapes, values and grad_fn
# names, or the same error text.
FUZZ_REDUCTION_CALLS: dict[str, Callable[[Any], Any]] = {
    # norm is a Python function in PyTorch: p defaults to "fro" (the 2-norm)
    "norm over a dim without p": lambda lib: counting_input(lib, 2, 3).norm(dim=1),
    "norm of everything": lambda lib: lib.norm(counting_input(lib, 2, 3)),
    "norm fro over two dims": lambda lib: counting_input(lib, 2, 3).norm("fro", (0, 1)),
    "norm p None": lambda lib: counting_input(lib, 2, 3).norm(None, 1, True),
    "norm inf over a dim": lambda lib: counting_input(lib, 2, 3).norm(
        float("inf"), dim=0
    ),
    "vector_norm narrowing dtype": lambda lib: lib.linalg.vector_norm(
        counting_input(lib, 3), 2, dtype=lib.float32
    ),
    "vector_norm widening dtype": lambda lib: lib.linalg.vector_norm(
        counting_input(lib, 3).float(), 2, dtype=lib.float64
    ),
    "vector_norm of integers": lambda lib: lib.linalg.vector_norm(lib.arange(3)),
    "_softmax half_to_float": lambda lib: (
        lib.ops.aten._softmax(counting_input(lib, 3), 0, True)
        if lib is not yg
        else yg.ops._softmax.default(counting_input(lib, 3), 0, True)
    ),
    "_log_softmax half_to_float": lambda lib: (
        lib.ops.aten._log_softmax(counting_input(lib, 3), 0, True)
        if lib is not yg
        else yg.ops._log_softmax.default(counting_input(lib, 3), 0, True)
    ),
}


@pytest.mark.parametrize("name", sorted(FUZZ_REDUCTION_CALLS))
def test_reduction_call_answers_as_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    assert call_outcome(FUZZ_REDUCTION_CALLS[name], yg) == call_outcome(
        FUZZ_REDUCTION_CALLS[name], torch
    )


NAN = float("nan")


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cummax_cummin_ties_and_nan_as_torch(op: str) -> None:
    """Ties take the last index; a NaN stays, and each later NaN takes over."""
    torch = pytest.importorskip("torch")
    data = np.array([[1.0, 3.0, 3.0, 2.0, 1.0], [0.0, NAN, 5.0, NAN, -1.0]])
    x, t = yg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    ours, theirs = getattr(yg, op)(x, 1), getattr(torch, op)(t, 1)
    np.testing.assert_array_equal(ours[0].detach().numpy(), theirs[0].detach().numpy())
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
    ours[0].sum().backward()
    theirs[0].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_nansum_skips_nan_in_value_and_gradient_as_torch() -> None:
    torch = pytest.importorskip("torch")
    data = np.array([[1.0, NAN, 2.0], [NAN, NAN, 4.0]])
    x, t = yg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    ours, theirs = yg.nansum(x, 1), torch.nansum(t, 1)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    ours.sum().backward()
    theirs.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
