"""The distribution families the tests run in yamlgrad and in torch, one table.

Each case builds its distribution from a module of distributions (yamlgrad's or
torch's) and a `make` that turns a float64 ndarray into that library's tensor
(requiring grad unless told otherwise), so one builder serves both libraries and
the parameters are the same numbers. The tests (test_families.py, test_kl.py, ...)
loop over this table as OpInfo's tests loop over op_db.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Make = Callable[..., Any]
Builder = Callable[[Any, Make], Any]


@dataclass(frozen=True)
class Case:
    """One family with one set of parameters."""

    name: str
    build: Builder
    # Parameters a value's gradient flows to (the arrays `make` turned into leaves).
    seed: int = 0

    @property
    def id(self) -> str:
        return f"{self.name}-{self.seed}"


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def positive(shape: tuple[int, ...], seed: int, low: float = 0.5, high: float = 2.0):
    return _rng(seed).uniform(low, high, shape)


def real(shape: tuple[int, ...], seed: int):
    return _rng(seed).standard_normal(shape)


def unit(shape: tuple[int, ...], seed: int):
    return _rng(seed).uniform(0.2, 0.8, shape)


def simplex(shape: tuple[int, ...], seed: int):
    p = _rng(seed).uniform(0.2, 1.0, shape)
    return p / p.sum(-1, keepdims=True)


def spd(n: int, batch: tuple[int, ...], seed: int):
    a = _rng(seed).standard_normal((*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def tril(n: int, batch: tuple[int, ...], seed: int):
    return np.linalg.cholesky(spd(n, batch, seed))


CASES: list[Case] = [
    Case("Normal", lambda D, t: D.Normal(t(real((2, 3), 1)), t(positive((3,), 2)))),
    Case(
        "LogNormal", lambda D, t: D.LogNormal(t(real((2, 3), 1)), t(positive((3,), 2)))
    ),
    Case("HalfNormal", lambda D, t: D.HalfNormal(t(positive((2, 3), 1)))),
    Case("Bernoulli", lambda D, t: D.Bernoulli(probs=t(unit((2, 3), 1)))),
    Case("Bernoulli", lambda D, t: D.Bernoulli(logits=t(real((4,), 2))), seed=1),
    Case(
        "ContinuousBernoulli",
        lambda D, t: D.ContinuousBernoulli(probs=t(unit((2, 3), 1))),
    ),
    Case(
        "ContinuousBernoulli",
        lambda D, t: D.ContinuousBernoulli(logits=t(real((4,), 2))),
        seed=1,
    ),
    Case(
        "Binomial",
        lambda D, t: D.Binomial(
            t(np.array([5.0, 10.0, 3.0]), grad=False), probs=t(unit((2, 3), 1))
        ),
    ),
    Case(
        "Binomial",
        lambda D, t: D.Binomial(7, logits=t(real((3,), 2))),
        seed=1,
    ),
    Case("Categorical", lambda D, t: D.Categorical(probs=t(simplex((2, 4), 1)))),
    Case("Categorical", lambda D, t: D.Categorical(logits=t(real((3, 5), 2))), seed=1),
    Case(
        "OneHotCategorical",
        lambda D, t: D.OneHotCategorical(probs=t(simplex((2, 4), 1))),
    ),
    Case(
        "OneHotCategorical",
        lambda D, t: D.OneHotCategorical(logits=t(real((3,), 2))),
        seed=1,
    ),
    Case("Multinomial", lambda D, t: D.Multinomial(6, probs=t(simplex((2, 4), 1)))),
    Case(
        "Multinomial",
        lambda D, t: D.Multinomial(4, logits=t(real((3,), 2))),
        seed=1,
    ),
    Case("Poisson", lambda D, t: D.Poisson(t(positive((2, 3), 1, 0.5, 4.0)))),
    Case("Geometric", lambda D, t: D.Geometric(probs=t(unit((2, 3), 1)))),
    Case("Geometric", lambda D, t: D.Geometric(logits=t(real((3,), 2))), seed=1),
    Case(
        "NegativeBinomial",
        lambda D, t: D.NegativeBinomial(
            t(positive((3,), 3, 1.0, 5.0)), probs=t(unit((2, 3), 1))
        ),
    ),
    Case(
        "NegativeBinomial",
        lambda D, t: D.NegativeBinomial(4.0, logits=t(real((3,), 2))),
        seed=1,
    ),
    Case(
        "Uniform",
        lambda D, t: D.Uniform(t(real((2, 3), 1)), t(real((2, 3), 1) + 2.0)),
    ),
    Case(
        "Beta",
        lambda D, t: D.Beta(t(positive((2, 3), 1, 0.5, 3.0)), t(positive((3,), 2))),
    ),
    Case(
        "Gamma",
        lambda D, t: D.Gamma(t(positive((2, 3), 1, 0.5, 4.0)), t(positive((3,), 2))),
    ),
    Case("Chi2", lambda D, t: D.Chi2(t(positive((2, 3), 1, 1.0, 5.0)))),
    Case("Dirichlet", lambda D, t: D.Dirichlet(t(positive((2, 4), 1, 0.5, 3.0)))),
    Case("Exponential", lambda D, t: D.Exponential(t(positive((2, 3), 1)))),
    Case("Laplace", lambda D, t: D.Laplace(t(real((2, 3), 1)), t(positive((3,), 2)))),
    Case("Cauchy", lambda D, t: D.Cauchy(t(real((2, 3), 1)), t(positive((3,), 2)))),
    Case("HalfCauchy", lambda D, t: D.HalfCauchy(t(positive((2, 3), 1)))),
    Case(
        "StudentT",
        lambda D, t: D.StudentT(
            t(positive((3,), 3, 2.5, 6.0)), t(real((2, 3), 1)), t(positive((3,), 2))
        ),
    ),
    Case("Gumbel", lambda D, t: D.Gumbel(t(real((2, 3), 1)), t(positive((3,), 2)))),
    Case(
        "VonMises",
        lambda D, t: D.VonMises(t(real((2, 3), 1)), t(positive((3,), 2, 0.5, 4.0))),
    ),
    Case(
        "Weibull", lambda D, t: D.Weibull(t(positive((2, 3), 1)), t(positive((3,), 2)))
    ),
    Case(
        "Pareto",
        lambda D, t: D.Pareto(t(positive((2, 3), 1)), t(positive((3,), 2, 2.5, 4.0))),
    ),
    Case(
        "Kumaraswamy",
        lambda D, t: D.Kumaraswamy(
            t(positive((2, 3), 1, 1.0, 3.0)), t(positive((3,), 2, 1.0, 3.0))
        ),
    ),
    Case(
        "LKJCholesky",
        lambda D, t: D.LKJCholesky(3, t(positive((2,), 1, 0.5, 2.0))),
    ),
    Case(
        "MultivariateNormal",
        lambda D, t: D.MultivariateNormal(
            t(real((2, 3), 1)), covariance_matrix=t(spd(3, (), 2), grad=False)
        ),
    ),
    Case(
        "MultivariateNormal",
        lambda D, t: D.MultivariateNormal(
            t(real((3,), 1)), precision_matrix=t(spd(3, (2,), 2), grad=False)
        ),
        seed=1,
    ),
    Case(
        "MultivariateNormal",
        lambda D, t: D.MultivariateNormal(
            t(real((2, 3), 1)), scale_tril=t(tril(3, (2,), 2))
        ),
        seed=2,
    ),
    Case(
        "LowRankMultivariateNormal",
        lambda D, t: D.LowRankMultivariateNormal(
            t(real((2, 3), 1)), t(real((3, 2), 2)), t(positive((2, 3), 3))
        ),
    ),
    Case(
        "Independent",
        lambda D, t: D.Independent(
            D.Normal(t(real((2, 3), 1)), t(positive((2, 3), 2))), 1
        ),
    ),
    Case(
        "Independent",
        lambda D, t: D.Independent(D.Bernoulli(probs=t(unit((2, 3, 2), 1))), 2),
        seed=1,
    ),
    Case(
        "MixtureSameFamily",
        lambda D, t: D.MixtureSameFamily(
            D.Categorical(logits=t(real((2, 3), 1))),
            D.Normal(t(real((2, 3), 2)), t(positive((2, 3), 3))),
        ),
    ),
    Case(
        "MixtureSameFamily",
        lambda D, t: D.MixtureSameFamily(
            D.Categorical(probs=t(simplex((3,), 1))),
            D.Independent(D.Normal(t(real((3, 2), 2)), t(positive((3, 2), 3))), 1),
        ),
        seed=1,
    ),
    Case(
        "RelaxedBernoulli",
        lambda D, t: D.RelaxedBernoulli(
            t(np.array(0.7), grad=False), probs=t(unit((2, 3), 1))
        ),
    ),
    Case(
        "RelaxedOneHotCategorical",
        lambda D, t: D.RelaxedOneHotCategorical(
            t(np.array(0.5), grad=False), logits=t(real((2, 4), 1))
        ),
    ),
    Case(
        "TransformedDistribution",
        lambda D, t: D.TransformedDistribution(
            D.Normal(t(real((2, 3), 1)), t(positive((3,), 2))),
            [
                D.transforms.AffineTransform(t(real((3,), 4)), t(positive((3,), 5))),
                D.transforms.SigmoidTransform(),
            ],
        ),
    ),
    Case(
        "TransformedDistribution",
        lambda D, t: D.TransformedDistribution(
            D.Normal(t(real((2, 3), 1)), t(positive((3,), 2))),
            D.transforms.StickBreakingTransform(),
        ),
        seed=1,
    ),
    Case(
        "FisherSnedecor",
        lambda D, t: D.FisherSnedecor(
            t(positive((2, 3), 1, 3, 9)), t(positive((3,), 2, 5, 9))
        ),
    ),
    Case(
        "InverseGamma",
        lambda D, t: D.InverseGamma(
            t(positive((2, 3), 1, 2.5, 4.0)), t(positive((3,), 2))
        ),
    ),
    Case(
        "LogisticNormal",
        lambda D, t: D.LogisticNormal(t(real((2, 3), 1)), t(positive((3,), 2))),
    ),
    Case(
        "Wishart",
        lambda D, t: D.Wishart(
            t(positive((2,), 1, 4.0, 6.0)), covariance_matrix=t(spd(3, (2,), 2))
        ),
    ),
    Case(
        "Wishart",
        lambda D, t: D.Wishart(t(np.array(5.0)), scale_tril=t(tril(3, (), 2))),
        seed=1,
    ),
]


def makers(torch: Any) -> tuple[Make, Make, list[Any], list[Any]]:
    """A `make` for each library, and the lists of leaves each one made (in the
    same order), for the gradient comparisons."""
    import yamlgrad as yg

    ours: list[Any] = []
    theirs: list[Any] = []

    def make_ours(array: Any, grad: bool = True) -> Any:
        x = yg.tensor(np.asarray(array, dtype=np.float64), requires_grad=grad)
        if grad:
            ours.append(x)
        return x

    def make_theirs(array: Any, grad: bool = True) -> Any:
        x = torch.tensor(np.asarray(array, dtype=np.float64), requires_grad=grad)
        if grad:
            theirs.append(x)
        return x

    return make_ours, make_theirs, ours, theirs


def build_both(case: Case, torch: Any) -> tuple[Any, Any, list[Any], list[Any]]:
    """The case's distribution in yamlgrad and in torch, and their leaves."""
    import yamlgrad as yg

    make_ours, make_theirs, ours, theirs = makers(torch)
    return (
        case.build(yg.distributions, make_ours),
        case.build(torch.distributions, make_theirs),
        ours,
        theirs,
    )
