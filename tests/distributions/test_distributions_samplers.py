"""Draws the moment test of test_families.py cannot judge: angles, correlation
factors, and variances, each within a statistical tolerance."""

from __future__ import annotations

import numpy as np
import pytest

import yamlgrad as yg

D = yg.distributions
N = 20000


def test_von_mises_draws_have_its_circular_mean_and_concentration() -> None:
    from scipy.special import i0e, i1e

    loc = yg.tensor([0.5, -2.0, 3.0], dtype=yg.float64)
    concentration = yg.tensor([1.0, 4.0, 0.5], dtype=yg.float64)
    yg.manual_seed(0)
    x = D.VonMises(loc, concentration).sample((N,)).numpy()
    assert np.all((x >= -np.pi) & (x < np.pi))
    resultant = np.exp(1j * x).mean(0)
    np.testing.assert_allclose(np.angle(resultant), loc.numpy(), atol=0.05)
    k = concentration.numpy()
    np.testing.assert_allclose(np.abs(resultant), i1e(k) / i0e(k), atol=0.02)


def test_lkj_cholesky_draws_are_correlation_factors() -> None:
    """Valid factors, with the correlations' mean and variance of torch's draws
    (torch's sampler, the onion method as it writes it, is the oracle)."""
    torch = pytest.importorskip("torch")
    yg.manual_seed(0)
    factors = D.LKJCholesky(3, yg.tensor(2.0, dtype=yg.float64)).sample((N,))
    assert bool(D.constraints.corr_cholesky.check(factors).all())
    torch.manual_seed(0)
    theirs = torch.distributions.LKJCholesky(
        3, torch.tensor(2.0, dtype=torch.float64)
    ).sample((N,))
    ours = (factors @ factors.transpose(-2, -1)).numpy()[:, [1, 2, 2], [0, 0, 1]]
    ref = (theirs @ theirs.mT).numpy()[:, [1, 2, 2], [0, 0, 1]]
    np.testing.assert_allclose(ours.mean(0), 0.0, atol=0.03)
    np.testing.assert_allclose(ours.var(0), ref.var(0), atol=0.01)


@pytest.mark.parametrize(
    "d",
    [
        D.Binomial(yg.tensor([4.0, 9.0]), yg.tensor([0.3, 0.8])),
        D.Poisson(yg.tensor([0.7, 5.0])),
        D.Geometric(yg.tensor([0.3, 0.6])),
        D.NegativeBinomial(yg.tensor([3.0, 5.0]), yg.tensor([0.3, 0.6])),
        D.Gamma(yg.tensor([0.3, 4.0]), yg.tensor([2.0, 0.5])),
        D.Beta(yg.tensor([0.4, 3.0]), yg.tensor([2.0, 0.7])),
        D.StudentT(yg.tensor([5.0, 9.0])),
        D.Laplace(yg.tensor([0.0, 1.0]), yg.tensor([1.0, 0.3])),
        D.Multinomial(7, yg.tensor([0.2, 0.3, 0.5])),
        D.Dirichlet(yg.tensor([0.5, 1.5, 3.0])),
    ],
    ids=lambda d: type(d).__name__,
)
def test_sample_variance_is_the_variance(d: D.Distribution) -> None:
    yg.manual_seed(1)
    x = d.sample((N,)).double().numpy()
    variance = d.variance.double().numpy()
    # The standard error of a sample variance: sqrt((m4 - v^2) / n).
    centered = x - x.mean(0)
    m4 = (centered**4).mean(0)
    err = np.sqrt(np.maximum(m4 - variance**2, 0) / N)
    assert np.all(np.abs(centered.var(0) - variance) <= 6 * err + 1e-6)


def test_sample_n_is_sample_of_n() -> None:
    d = D.Normal(yg.zeros(3), yg.ones(3))
    yg.manual_seed(0)
    with pytest.warns(FutureWarning, match="will be deprecated"):
        a = d.sample_n(4)
    yg.manual_seed(0)
    b = d.sample((4,))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_one_generator_seed_gives_one_draw() -> None:
    d = D.Gamma(yg.tensor([0.5, 2.0]), yg.tensor(1.0))
    yg.manual_seed(7)
    first = d.rsample((5,)).detach().numpy()
    yg.manual_seed(7)
    np.testing.assert_array_equal(first, d.rsample((5,)).detach().numpy())
