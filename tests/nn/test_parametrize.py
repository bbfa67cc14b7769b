"""yg.nn.utils.parametrize, parametrizations and the older weight_norm against
torch.nn.utils: the same weights give the same parametrized values, gradients,
state dict keys, class names and errors."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
W = RNG.standard_normal((3, 4))
B = RNG.standard_normal(3)
X = RNG.standard_normal((5, 4))


def linear(lib: Any) -> Any:
    m = lib.nn.Linear(4, 3).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(W))
        m.bias.copy_(lib.tensor(B))
    return m


def symmetric(lib: Any) -> Any:
    class Symmetric(lib.nn.Module):
        def forward(self, X: Any) -> Any:
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A: Any) -> Any:
            return A.triu()

    return Symmetric()


def split(lib: Any) -> Any:
    class Split(lib.nn.Module):
        def forward(self, a: Any, b: Any) -> Any:
            return a * 2 + b

        def right_inverse(self, w: Any) -> Any:
            return (w / 4, w / 2)

    return Split()


def square(lib: Any) -> Any:
    m = lib.nn.Linear(3, 3).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(W[:, :3]))
        m.bias.copy_(lib.tensor(B))
    return m


def check_same(a: Any, b: Any) -> None:
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


def forward_backward(lib: Any, m: Any, x: Any) -> tuple[Any, list[Any]]:
    y = m(lib.tensor(x))
    (y * y).sum().backward()
    return y, [p.grad for p in m.parameters()]


def test_register_parametrization_matches_torch() -> None:
    runs = []
    for lib in (yg, torch):
        m = square(lib)
        P = lib.nn.utils.parametrize
        P.register_parametrization(m, "weight", symmetric(lib))
        assert type(m).__name__ == "ParametrizedLinear"
        assert P.is_parametrized(m) and P.is_parametrized(m, "weight")
        assert not P.is_parametrized(m, "bias")
        assert P.type_before_parametrizations(m) is lib.nn.Linear
        runs.append((m, forward_backward(lib, m, X[:, :3]), list(m.state_dict())))
    (ma, (ya, ga), ka), (mb, (yb, gb), kb) = runs
    assert ka == kb == ["bias", "parametrizations.weight.original"]
    check_same(ya, yb)
    for a, b in zip(ga, gb):
        check_same(a, b)
    check_same(ma.parametrizations.weight.original, mb.parametrizations.weight.original)
    check_same(ma.weight, mb.weight)


def test_assignment_runs_right_inverse() -> None:
    for lib in (yg, torch):
        m = square(lib)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", symmetric(lib))
        original = m.parametrizations.weight.original
        value = lib.tensor(np.arange(9.0).reshape(3, 3))
        m.weight = value + value.T
        assert m.parametrizations.weight.original is original  # same Parameter
        np.testing.assert_allclose(m.weight.detach().numpy(), (value + value.T).numpy())


def test_tuple_right_inverse_gives_original0_original1() -> None:
    names = []
    for lib in (yg, torch):
        m = linear(lib)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", split(lib))
        names.append(list(m.state_dict()))
        p = m.parametrizations.weight
        np.testing.assert_allclose(p.original0.detach().numpy(), W / 4)
        np.testing.assert_allclose(m.weight.detach().numpy(), W)
        assert isinstance(p.original1, lib.nn.Parameter)
    assert names[0] == names[1]


def test_chain_cached_and_remove() -> None:
    for lib in (yg, torch):
        P = lib.nn.utils.parametrize
        calls = []

        class Double(lib.nn.Module):
            def forward(self, x: Any) -> Any:
                calls.append(1)
                return x * 2

        m = linear(lib)
        P.register_parametrization(m, "weight", Double())
        P.register_parametrization(m, "weight", Double())
        np.testing.assert_allclose(m.weight.detach().numpy(), 4 * W)
        calls.clear()
        with P.cached():
            m.weight
            m.weight
        assert len(calls) == 2  # the chain of two, once
        P.remove_parametrizations(m, "weight", leave_parametrized=True)
        assert type(m).__name__ == "Linear" and not hasattr(m, "parametrizations")
        np.testing.assert_allclose(m.weight.detach().numpy(), 4 * W)
        assert isinstance(m.weight, lib.nn.Parameter)
        m2 = linear(lib)
        P.register_parametrization(m2, "weight", Double())
        P.remove_parametrizations(m2, "weight", leave_parametrized=False)
        np.testing.assert_allclose(m2.weight.detach().numpy(), W)


def test_unsafe_allows_a_new_shape() -> None:
    for lib in (yg, torch):

        class Flat(lib.nn.Module):
            def forward(self, x: Any) -> Any:
                return x.reshape(-1)

        m = linear(lib)
        lib.nn.utils.parametrize.register_parametrization(
            m, "weight", Flat(), unsafe=True
        )
        assert tuple(m.weight.shape) == (12,)


def errors(lib: Any) -> list[str]:
    P = lib.nn.utils.parametrize
    texts = []

    class Flat(lib.nn.Module):
        def forward(self, x: Any) -> Any:
            return x.reshape(-1)

    class Float(lib.nn.Module):
        def forward(self, x: Any) -> Any:
            return x.float()

    class NoInverse(lib.nn.Module):
        def forward(self, x: Any) -> Any:
            return x

    for call in (
        lambda: P.register_parametrization(linear(lib), "weight", Flat()),
        lambda: P.register_parametrization(linear(lib), "weight", Float()),
        lambda: P.remove_parametrizations(lib.nn.Identity(), "weight"),
    ):
        with pytest.raises(ValueError) as info:
            call()
        texts.append(str(info.value).replace("torch.", "").replace("yamlgrad.", ""))
    m = linear(lib)
    P.register_parametrization(m, "weight", NoInverse())
    with pytest.raises(RuntimeError) as info:
        m.weight = lib.zeros(3, 4, dtype=lib.float64)
    texts.append(str(info.value))
    m = linear(lib)
    P.register_parametrization(m, "weight", split(lib))
    with pytest.raises(ValueError) as info:
        P.remove_parametrizations(m, "weight", leave_parametrized=False)
    texts.append(str(info.value))
    return texts


def test_errors_match_torch() -> None:
    assert errors(yg) == errors(torch)


def test_weight_norm_parametrization_matches_torch() -> None:
    results = []
    for lib in (yg, torch):
        for dim in (0, 1, None):
            m = lib.nn.utils.parametrizations.weight_norm(linear(lib), dim=dim)
            p = m.parametrizations.weight
            results.append(
                (
                    p.original0.detach().numpy().copy(),
                    p.original1.detach().numpy().copy(),
                    *[
                        t.detach().numpy().copy()
                        for t in forward_backward(lib, m, X)[1]
                    ],
                    list(m.state_dict()),
                )
            )
    assert results[0][0].shape == (3, 1)
    for mine, theirs in zip(results[:3], results[3:]):
        assert mine[-1] == theirs[-1]
        for a, b in zip(mine[:-1], theirs[:-1]):
            np.testing.assert_allclose(a, b, rtol=1e-10)


def test_old_weight_norm_matches_torch() -> None:
    results = []
    for lib in (yg, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m = lib.nn.utils.weight_norm(linear(lib))
        assert any(issubclass(w.category, FutureWarning) for w in caught)
        y, grads = forward_backward(lib, m, X)
        names = [name for name, _ in m.named_parameters()]
        lib.nn.utils.remove_weight_norm(m)
        results.append((y, grads, names, m.weight))
        with pytest.raises(ValueError) as info:
            lib.nn.utils.remove_weight_norm(m)
        assert "weight_norm of 'weight' not found in" in str(info.value)
    (ya, ga, na, wa), (yb, gb, nb, wb) = results
    assert na == nb == ["bias", "weight_g", "weight_v"]
    check_same(ya, yb)
    check_same(wa, wb)
    for a, b in zip(ga, gb):
        check_same(a, b)


@pytest.mark.parametrize("training", [True, False])
def test_spectral_norm_matches_torch_from_the_same_vectors(training: bool) -> None:
    tm = torch.nn.utils.parametrizations.spectral_norm(linear(torch))
    ym = yg.nn.utils.parametrizations.spectral_norm(linear(yg))
    assert list(ym.state_dict()) == list(tm.state_dict())
    with torch.no_grad():  # the same starting vectors (the draws differ)
        for name in ("_u", "_v"):
            buffer = getattr(tm.parametrizations.weight[0], name)
            getattr(ym.parametrizations.weight[0], name).copy_(
                yg.tensor(buffer.numpy())
            )
    tm.train(training)
    ym.train(training)
    for _ in range(2):
        ya, ga = forward_backward(yg, ym, X)
        yb, gb = forward_backward(torch, tm, X)
        check_same(ya, yb)
        for a, b in zip(ga, gb):
            check_same(a, b)
    # After 15 iterations at registration sigma is close to the top singular value.
    sigma = np.linalg.svd(W, compute_uv=False)[0]
    np.testing.assert_allclose(
        np.linalg.svd(ym.weight.detach().numpy(), compute_uv=False)[0], 1.0, rtol=1e-6
    )
    assert sigma > 1


def test_spectral_norm_errors_and_dims() -> None:
    for lib in (yg, torch):
        SN = lib.nn.utils.parametrizations.spectral_norm
        with pytest.raises(
            ValueError, match="has no parameter or buffer with name 'w'"
        ):
            SN(linear(lib), "w")
        with pytest.raises(ValueError, match="n_power_iterations=0"):
            SN(linear(lib), n_power_iterations=0)
        with pytest.raises(IndexError, match=r"range of \[-2, 1\] but got 2"):
            SN(linear(lib), dim=2)
        conv = SN(lib.nn.ConvTranspose2d(2, 5, 3))
        assert tuple(conv.parametrizations.weight[0]._u.shape) == (5,)


def test_total_norm_and_clip_with_norm_match_torch() -> None:
    results = []
    for lib in (yg, torch):
        m = linear(lib)
        forward_backward(lib, m, X)
        grads = [p.grad for p in m.parameters()]
        total = lib.nn.utils.get_total_norm(grads, norm_type=3.0)
        inf = lib.nn.utils.get_total_norm(grads, norm_type=float("inf"))
        lib.nn.utils.clip_grads_with_norm_(m.parameters(), 1.0, total)
        results.append((total, inf, *[p.grad for p in m.parameters()]))
        with pytest.raises(RuntimeError, match="is non-finite"):
            lib.nn.utils.get_total_norm(
                [lib.tensor([float("nan")])], error_if_nonfinite=True
            )
    for a, b in zip(*results):
        check_same(a, b)


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3)])
@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("use_trivialization", [True, False])
def test_orthogonal_matches_torch(
    shape: tuple[int, int], orthogonal_map: str, use_trivialization: bool
) -> None:
    weight = np.random.default_rng(1).standard_normal(shape)
    x = np.random.default_rng(2).standard_normal((2, shape[1]))
    made = []
    for lib in (yg, torch):
        m = lib.nn.Linear(shape[1], shape[0]).double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor(weight))
            m.bias.zero_()
        lib.nn.utils.parametrizations.orthogonal(
            m, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization
        )
        made.append(m)
    mine, theirs = made
    if use_trivialization:  # a random completion when not square: use torch's
        mine.parametrizations.weight[0].base = yg.tensor(
            theirs.parametrizations.weight[0].base.numpy()
        )
    check_same(
        mine.parametrizations.weight.original, theirs.parametrizations.weight.original
    )
    ya, ga = forward_backward(yg, mine, x)
    yb, gb = forward_backward(torch, theirs, x)
    check_same(mine.weight, theirs.weight)
    check_same(ya, yb)
    for a, b in zip(ga, gb):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-12)
    assert list(mine.state_dict()) == list(theirs.state_dict())


def test_orthogonal_errors_match_torch() -> None:
    texts = []
    for lib in (yg, torch):
        orth = lib.nn.utils.parametrizations.orthogonal
        for call in (
            lambda: orth(lib.nn.Linear(3, 3), orthogonal_map="x"),
            lambda: orth(lib.nn.Linear(3, 3), "bias"),
            lambda: orth(lib.nn.Linear(3, 3), "w"),
        ):
            with pytest.raises(ValueError) as info:
                call()
            texts.append(str(info.value))
    assert texts[:3] == texts[3:]


@pytest.mark.parametrize("training", [True, False])
def test_old_spectral_norm_matches_torch(training: bool) -> None:
    tm = torch.nn.utils.spectral_norm(linear(torch), n_power_iterations=2)
    ym = yg.nn.utils.spectral_norm(linear(yg), n_power_iterations=2)
    assert list(ym.state_dict()) == list(tm.state_dict())
    with torch.no_grad():
        for name in ("weight_u", "weight_v"):
            getattr(ym, name).copy_(yg.tensor(getattr(tm, name).numpy()))
    tm.train(training)
    ym.train(training)
    for _ in range(2):
        ya, ga = forward_backward(yg, ym, X)
        yb, gb = forward_backward(torch, tm, X)
        check_same(ya, yb)
        for a, b in zip(ga, gb):
            check_same(a, b)
    for lib, m in ((yg, ym), (torch, tm)):
        lib.nn.utils.remove_spectral_norm(m)
        assert [n for n, _ in m.named_parameters()] == ["bias", "weight"]
        with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
            lib.nn.utils.remove_spectral_norm(m)
    check_same(ym.weight, tm.weight)
