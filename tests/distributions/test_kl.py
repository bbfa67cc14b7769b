"""kl_divergence: every pair torch registers, values and gradients against torch,
and the registry's dispatch (most specific pair, the ambiguity warning, the
NotImplementedError text)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from distribution_cases import makers, positive, real, simplex, spd, unit

# One instance per family, all of batch shape (3,), built from `seed`'s numbers.
BUILDERS = {
    "Bernoulli": lambda D, t, s: D.Bernoulli(probs=t(unit((3,), s))),
    "Beta": lambda D, t, s: D.Beta(t(positive((3,), s)), t(positive((3,), s + 1))),
    "Binomial": lambda D, t, s: D.Binomial(5, probs=t(unit((3,), s))),
    "Categorical": lambda D, t, s: D.Categorical(probs=t(simplex((3, 4), s))),
    "Cauchy": lambda D, t, s: D.Cauchy(t(real((3,), s)), t(positive((3,), s + 1))),
    "ContinuousBernoulli": lambda D, t, s: D.ContinuousBernoulli(t(unit((3,), s))),
    "Dirichlet": lambda D, t, s: D.Dirichlet(t(positive((3, 4), s))),
    "Exponential": lambda D, t, s: D.Exponential(t(positive((3,), s))),
    "Gamma": lambda D, t, s: D.Gamma(t(positive((3,), s)), t(positive((3,), s + 1))),
    "Geometric": lambda D, t, s: D.Geometric(t(unit((3,), s))),
    "Gumbel": lambda D, t, s: D.Gumbel(t(real((3,), s)), t(positive((3,), s + 1))),
    "HalfNormal": lambda D, t, s: D.HalfNormal(t(positive((3,), s))),
    "Laplace": lambda D, t, s: D.Laplace(t(real((3,), s)), t(positive((3,), s + 1))),
    "LowRankMultivariateNormal": lambda D, t, s: D.LowRankMultivariateNormal(
        t(real((3, 2), s)), t(real((3, 2, 2), s + 1)), t(positive((3, 2), s + 2))
    ),
    "MultivariateNormal": lambda D, t, s: D.MultivariateNormal(
        t(real((3, 2), s)), scale_tril=t(np.linalg.cholesky(spd(2, (3,), s + 1)))
    ),
    "Normal": lambda D, t, s: D.Normal(t(real((3,), s)), t(positive((3,), s + 1))),
    "OneHotCategorical": lambda D, t, s: D.OneHotCategorical(t(simplex((3, 4), s))),
    "Pareto": lambda D, t, s: D.Pareto(
        t(positive((3,), s)), t(positive((3,), s + 1, 2.5, 4.0))
    ),
    "Poisson": lambda D, t, s: D.Poisson(t(positive((3,), s))),
    "Uniform": lambda D, t, s: D.Uniform(
        t(real((3,), s) - 2.0), t(real((3,), s + 1) + 2.0)
    ),
    "Independent": lambda D, t, s: D.Independent(
        D.Normal(t(real((3, 2), s)), t(positive((3, 2), s + 1))), 1
    ),
    "TransformedDistribution": lambda D, t, s: D.TransformedDistribution(
        D.Normal(t(real((3,), s)), t(positive((3,), s + 1))),
        D.transforms.ExpTransform(),
    ),
    # The generic Bregman-divergence KL between exponential families.
    "ExponentialFamily": lambda D, t, s: D.Normal(
        t(real((3,), s)), t(positive((3,), s + 1))
    ),
}
# Families whose every pair is infinite by support (Pareto against a family on
# the whole line) still compare: torch gives inf, and so must yamlgrad.


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch")


def registered_pairs() -> list[tuple[str, str]]:
    torch = pytest.importorskip("torch")
    from torch.distributions.kl import _KL_REGISTRY

    from yamlgrad.distributions.kl import _KL_REGISTRY as ours

    theirs = {(p.__name__, q.__name__) for p, q in _KL_REGISTRY}
    return sorted(theirs & {(p.__name__, q.__name__) for p, q in ours})


def test_the_registry_holds_torchs_pairs(torch: Any) -> None:
    """The pairs registered here are torch's, all of them."""
    from torch.distributions.kl import _KL_REGISTRY as theirs

    from yamlgrad.distributions.kl import _KL_REGISTRY

    ours = {(p.__name__, q.__name__) for p, q in _KL_REGISTRY}
    assert ours == {(p.__name__, q.__name__) for p, q in theirs}


@pytest.mark.parametrize("pair", registered_pairs(), ids="-".join)
def test_registered_pair_matches_torch(pair: tuple[str, str], torch: Any) -> None:
    p_name, q_name = pair
    make_ours, make_theirs, leaves, ref_leaves = makers(torch)
    p = BUILDERS[p_name](yg.distributions, make_ours, 1)
    q = BUILDERS[q_name](yg.distributions, make_ours, 4)
    p_ref = BUILDERS[p_name](torch.distributions, make_theirs, 1)
    q_ref = BUILDERS[q_name](torch.distributions, make_theirs, 4)
    from torch.distributions.kl import _dispatch_kl

    # The very function torch registered for the pair, here and there.
    fn_ref = torch.distributions.kl._KL_REGISTRY[
        (getattr(torch.distributions, p_name), getattr(torch.distributions, q_name))
    ]
    from yamlgrad.distributions.kl import _KL_REGISTRY

    fn = _KL_REGISTRY[
        (getattr(yg.distributions, p_name), getattr(yg.distributions, q_name))
    ]
    assert _dispatch_kl is not None
    want = outcome(lambda: fn_ref(p_ref, q_ref))
    if want is NotImplementedError:
        assert outcome(lambda: fn(p, q)) is NotImplementedError
        return
    got = fn(p, q)
    np.testing.assert_allclose(
        got.detach().numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-9
    )
    if not want.requires_grad:
        return
    finite = np.isfinite(want.detach().numpy())
    if not finite.any():
        return
    cotangent = np.where(
        finite, np.random.default_rng(0).standard_normal(finite.shape), 0
    )
    mask, mask_ref = yg.tensor(finite), torch.tensor(finite)
    total = yg.where(mask, got, 0.0) * yg.tensor(cotangent)
    total_ref = torch.where(mask_ref, want, 0.0) * torch.tensor(cotangent)
    ours = yg.autograd.grad(total.sum(), leaves, allow_unused=True)
    theirs = torch.autograd.grad(total_ref.sum(), ref_leaves, allow_unused=True)
    for g, w in zip(ours, theirs):
        if w is None:
            assert g is None or np.allclose(g.numpy(), 0)
            continue
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, atol=1e-8)


def outcome(f: Any) -> Any:
    try:
        return f()
    except NotImplementedError:
        return NotImplementedError


def test_kl_divergence_dispatches_to_the_most_specific_pair(torch: Any) -> None:
    D = yg.distributions
    p = D.Normal(yg.tensor([0.0, 1.0]), yg.tensor([1.0, 2.0]))
    q = D.Normal(yg.tensor([0.5, 0.0]), yg.tensor([1.5, 1.0]))
    t = torch.distributions
    want = t.kl_divergence(
        t.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])),
        t.Normal(torch.tensor([0.5, 0.0]), torch.tensor([1.5, 1.0])),
    )
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), want.numpy(), rtol=1e-6)
    # HalfNormal has no pair of its own with Normal's subclasses: none at all.
    with pytest.raises(NotImplementedError) as ours:
        D.kl_divergence(D.VonMises(yg.tensor(0.0), yg.tensor(1.0)), q)
    with pytest.raises(NotImplementedError) as theirs:
        t.kl_divergence(
            t.VonMises(torch.tensor(0.0), torch.tensor(1.0)),
            t.Normal(torch.tensor(0.0), torch.tensor(1.0)),
        )
    assert str(ours.value) == str(theirs.value)
    assert str(ours.value) == (
        "No KL(p || q) is implemented for p type VonMises and q type Normal"
    )


def test_register_kl_prefers_the_most_specific_and_warns_when_ambiguous() -> None:
    D = yg.distributions

    class A(D.Normal):
        pass

    class B(D.Normal):
        pass

    @D.register_kl(A, D.Normal)
    def _kl_a_normal(p: Any, q: Any) -> Any:
        return yg.tensor(1.0)

    @D.register_kl(D.Normal, B)
    def _kl_normal_b(p: Any, q: Any) -> Any:
        return yg.tensor(2.0)

    a = A(yg.tensor(0.0), yg.tensor(1.0))
    b = B(yg.tensor(0.0), yg.tensor(1.0))
    assert D.kl_divergence(a, D.Normal(yg.tensor(0.0), yg.tensor(1.0))).item() == 1.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        D.kl_divergence(a, b)
    assert any(
        "Ambiguous kl_divergence(A, B). Please register_kl(A, B)" in str(w.message)
        for w in caught
    )
