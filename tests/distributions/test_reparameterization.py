"""rsample's gradients at fixed noise, against torch's.

yamlgrad's draws are not torch's, so each check takes yamlgrad's sample and asks
torch for the gradient at that very sample:

* a univariate family with a cdf: the implicit reparameterisation gradient
  dx/dtheta = -(dF/dtheta)(x) / p(x), from torch's cdf and log_prob;
* Gamma, Beta and Dirichlet: torch's own backward formulas
  (`_standard_gamma_grad`, `_dirichlet_grad`) at the sample; torch's values are
  fitted approximations (relative error up to about 1e-3), hence the tolerance;
* MultivariateNormal and the relaxed families: the noise recovered from the
  sample, pushed through torch's distribution.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from distribution_cases import makers, positive, real, spd, unit

APPROXIMATE = 2e-3  # torch's fitted implicit derivatives

CDF_FAMILIES = {
    "Normal": lambda D, t: D.Normal(t(real((3,), 1)), t(positive((3,), 2))),
    "LogNormal": lambda D, t: D.LogNormal(t(real((3,), 1)), t(positive((3,), 2))),
    "HalfNormal": lambda D, t: D.HalfNormal(t(positive((3,), 1))),
    "Uniform": lambda D, t: D.Uniform(t(real((3,), 1)), t(real((3,), 1) + 2.0)),
    "Exponential": lambda D, t: D.Exponential(t(positive((3,), 1))),
    "Laplace": lambda D, t: D.Laplace(t(real((3,), 1)), t(positive((3,), 2))),
    "Cauchy": lambda D, t: D.Cauchy(t(real((3,), 1)), t(positive((3,), 2))),
    "HalfCauchy": lambda D, t: D.HalfCauchy(t(positive((3,), 1))),
    "Gumbel": lambda D, t: D.Gumbel(t(real((3,), 1)), t(positive((3,), 2))),
    "Weibull": lambda D, t: D.Weibull(t(positive((3,), 1)), t(positive((3,), 2))),
    "Pareto": lambda D, t: D.Pareto(t(positive((3,), 1)), t(positive((3,), 2))),
    "Kumaraswamy": lambda D, t: D.Kumaraswamy(
        t(positive((3,), 1, 1.0, 3.0)), t(positive((3,), 2, 1.0, 3.0))
    ),
}


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch")


def draw(d: Any, shape: tuple[int, ...]) -> tuple[Any, np.ndarray, np.ndarray]:
    """A seeded rsample, its values, and a cotangent for it."""
    yg.manual_seed(3)
    x = d.rsample(shape)
    cotangent = np.random.default_rng(5).standard_normal(tuple(x.shape))
    return x, x.detach().numpy(), cotangent


def our_grads(x: Any, cotangent: np.ndarray, leaves: list[Any]) -> list[np.ndarray]:
    found = yg.autograd.grad((x * yg.tensor(cotangent)).sum(), leaves)
    return [g.numpy() for g in found]


@pytest.mark.parametrize("name", sorted(CDF_FAMILIES))
def test_rsample_gradient_is_the_implicit_one(name: str, torch: Any) -> None:
    make_ours, make_theirs, leaves, ref_leaves = makers(torch)
    d = CDF_FAMILIES[name](yg.distributions, make_ours)
    d_ref = CDF_FAMILIES[name](torch.distributions, make_theirs)
    x, values, cotangent = draw(d, (4,))
    got = our_grads(x, cotangent, leaves)
    value = torch.tensor(values)
    density = d_ref.log_prob(value).exp().detach()
    implicit = -(d_ref.cdf(value) * torch.tensor(cotangent) / density).sum()
    want = torch.autograd.grad(implicit, ref_leaves)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-6, atol=1e-8)


def test_gamma_rsample_gradient_is_torchs_formula(torch: Any) -> None:
    make_ours, _, leaves, _ = makers(torch)
    alpha, rate = positive((3,), 1, 0.3, 5.0), positive((3,), 2)
    d = yg.distributions.Gamma(make_ours(alpha), make_ours(rate))
    x, values, cotangent = draw(d, (5,))
    got_alpha, got_rate = our_grads(x, cotangent, leaves)
    standard = torch.tensor(values * rate)
    dx = torch._standard_gamma_grad(torch.tensor(alpha).expand_as(standard), standard)
    want_alpha = (cotangent * dx.numpy() / rate).sum(0)
    want_rate = (cotangent * -values / rate).sum(0)
    np.testing.assert_allclose(got_alpha, want_alpha, rtol=APPROXIMATE)
    np.testing.assert_allclose(got_rate, want_rate, rtol=1e-10)


def test_dirichlet_rsample_gradient_is_torchs_formula(torch: Any) -> None:
    make_ours, _, leaves, _ = makers(torch)
    alpha = positive((2, 4), 1, 0.5, 4.0)
    d = yg.distributions.Dirichlet(make_ours(alpha))
    x, values, cotangent = draw(d, (3,))
    (got,) = our_grads(x, cotangent, leaves)
    a = torch.tensor(alpha).expand(values.shape)
    total = a.sum(-1, True).expand_as(a)
    g = torch.tensor(cotangent)
    v = torch.tensor(values)
    want = torch._dirichlet_grad(v, a, total) * (g - (v * g).sum(-1, True))
    np.testing.assert_allclose(got, want.sum(0).numpy(), rtol=APPROXIMATE, atol=1e-9)


def test_beta_rsample_gradient_is_torchs_formula(torch: Any) -> None:
    make_ours, _, leaves, _ = makers(torch)
    a, b = positive((3,), 1, 0.5, 4.0), positive((3,), 2, 0.5, 4.0)
    d = yg.distributions.Beta(make_ours(a), make_ours(b))
    x, values, cotangent = draw(d, (4,))
    got_a, got_b = our_grads(x, cotangent, leaves)
    v = torch.tensor(values)
    total = torch.tensor(a + b).expand_as(v)
    grad_a = torch._dirichlet_grad(v, torch.tensor(a).expand_as(v), total)
    grad_b = torch._dirichlet_grad(1 - v, torch.tensor(b).expand_as(v), total)
    want_a = (grad_a.numpy() * (1 - values) * cotangent).sum(0)
    want_b = (-grad_b.numpy() * values * cotangent).sum(0)
    np.testing.assert_allclose(got_a, want_a, rtol=APPROXIMATE)
    np.testing.assert_allclose(got_b, want_b, rtol=APPROXIMATE)


@pytest.mark.parametrize(
    "matrix", ["scale_tril", "covariance_matrix", "precision_matrix"]
)
def test_mvn_rsample_gradient_at_the_same_noise(matrix: str, torch: Any) -> None:
    make_ours, make_theirs, leaves, ref_leaves = makers(torch)
    cov = spd(3, (2,), 4)
    given = {
        "scale_tril": np.linalg.cholesky(cov),
        "covariance_matrix": cov,
        "precision_matrix": np.linalg.inv(cov),
    }[matrix]
    loc = real((2, 3), 1)
    d = yg.distributions.MultivariateNormal(
        make_ours(loc), **{matrix: make_ours(given)}
    )
    x, values, cotangent = draw(d, (5,))
    got = our_grads(x, cotangent, leaves)
    d_ref = torch.distributions.MultivariateNormal(
        make_theirs(loc), **{matrix: make_theirs(given)}
    )
    tril = d_ref.scale_tril.detach()
    noise = torch.linalg.solve_triangular(
        tril, (torch.tensor(values) - torch.tensor(loc)).unsqueeze(-1), upper=False
    )
    x_ref = d_ref.loc + (d_ref._unbroadcasted_scale_tril @ noise).squeeze(-1)
    np.testing.assert_allclose(values, x_ref.detach().numpy(), rtol=1e-8, atol=1e-10)
    want = torch.autograd.grad((x_ref * torch.tensor(cotangent)).sum(), ref_leaves)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-6, atol=1e-8)


def test_relaxed_bernoulli_rsample_gradient_at_the_same_noise(torch: Any) -> None:
    make_ours, make_theirs, leaves, ref_leaves = makers(torch)
    probs, temperature = unit((2, 3), 1), 0.7
    d = yg.distributions.RelaxedBernoulli(
        yg.tensor(temperature), probs=make_ours(probs)
    )
    x, values, cotangent = draw(d, (4,))
    got = our_grads(x, cotangent, leaves)
    p = make_theirs(probs)
    logits = torch.log(p) - torch.log1p(-p)
    noise = torch.logit(torch.tensor(values)) * temperature - logits.detach()
    x_ref = torch.sigmoid((logits + noise) / temperature)
    want = torch.autograd.grad((x_ref * torch.tensor(cotangent)).sum(), ref_leaves)
    np.testing.assert_allclose(got[0], want[0].numpy(), rtol=1e-6, atol=1e-8)


def test_relaxed_one_hot_rsample_gradient_at_the_same_noise(torch: Any) -> None:
    make_ours, make_theirs, leaves, ref_leaves = makers(torch)
    logits, temperature = real((2, 4), 1), 0.5
    d = yg.distributions.RelaxedOneHotCategorical(
        yg.tensor(temperature), logits=make_ours(logits)
    )
    x, values, cotangent = draw(d, (3,))
    got = our_grads(x, cotangent, leaves)
    l_ref = make_theirs(logits)
    noise = temperature * torch.log(torch.tensor(values)) - l_ref.detach()
    x_ref = torch.softmax((l_ref + noise) / temperature, -1)
    np.testing.assert_allclose(values, x_ref.detach().numpy(), rtol=1e-8)
    want = torch.autograd.grad((x_ref * torch.tensor(cotangent)).sum(), ref_leaves)
    np.testing.assert_allclose(got[0], want[0].numpy(), rtol=1e-6, atol=1e-8)


def test_sample_is_rsample_without_history() -> None:
    loc = yg.tensor([0.0, 1.0], requires_grad=True)
    d = yg.distributions.Normal(loc, yg.tensor(1.0))
    yg.manual_seed(0)
    a = d.sample((3,))
    yg.manual_seed(0)
    b = d.rsample((3,))
    assert not a.requires_grad and b.requires_grad
    np.testing.assert_array_equal(a.numpy(), b.detach().numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_draws_keep_the_parameters_dtype(dtype: str) -> None:
    D = yg.distributions
    t = getattr(yg, dtype)
    ones = yg.ones(3, dtype=t)
    for d in (
        D.Normal(ones, ones),
        D.Gamma(ones, ones),
        D.Beta(ones, ones),
        D.Dirichlet(ones),
        D.Bernoulli(ones * 0.5),
        D.Poisson(ones),
        D.Uniform(ones * 0, ones),
        D.Binomial(5, ones * 0.5),
        D.StudentT(ones * 3),
        D.VonMises(ones * 0, ones),
    ):
        assert d.sample((2,)).dtype == t, type(d).__name__
