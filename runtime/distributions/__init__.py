"""yamlgrad.distributions: probability distributions as torch.distributions.

    import yamlgrad as torch
    q = torch.distributions.Normal(mu, sigma)
    z = q.rsample()                                  # differentiable in mu, sigma
    kl = torch.distributions.kl_divergence(q, torch.distributions.Normal(0.0, 1.0))

The families are grouped by kind (location_scale, gamma_family, discrete,
multivariate, transformed, combinators) and published under PyTorch's module
names as well (`yamlgrad.distributions.normal`, ...). Every computation is made
of yamlgrad's ops, so gradients are the YAML entries'.
"""

from __future__ import annotations

from yamlgrad.runtime.distributions import constraints, transforms
from yamlgrad.runtime.distributions.continuous_bernoulli import ContinuousBernoulli
from yamlgrad.runtime.distributions.combinators import Independent, MixtureSameFamily
from yamlgrad.runtime.distributions.constraint_registry import biject_to, transform_to
from yamlgrad.runtime.distributions.discrete import (
    Bernoulli,
    Binomial,
    Categorical,
    Geometric,
    Multinomial,
    NegativeBinomial,
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
    Poisson,
)
from yamlgrad.runtime.distributions.distribution import Distribution
from yamlgrad.runtime.distributions.exp_family import ExponentialFamily
from yamlgrad.runtime.distributions.gamma_family import (
    Beta,
    Chi2,
    Dirichlet,
    Exponential,
    FisherSnedecor,
    Gamma,
)
from yamlgrad.runtime.distributions.kl import kl_divergence, register_kl
from yamlgrad.runtime.distributions.location_scale import (
    Cauchy,
    GeneralizedPareto,
    Laplace,
    Normal,
    StudentT,
    Uniform,
)
from yamlgrad.runtime.distributions.multivariate import (
    LKJCholesky,
    LowRankMultivariateNormal,
    MultivariateNormal,
)
from yamlgrad.runtime.distributions.relaxed import (
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
)
from yamlgrad.runtime.distributions.transformed import (
    Gumbel,
    HalfCauchy,
    HalfNormal,
    InverseGamma,
    Kumaraswamy,
    LogisticNormal,
    LogNormal,
    Pareto,
    TransformedDistribution,
    Weibull,
)
from yamlgrad.runtime.distributions.transforms import *  # noqa: F403
from yamlgrad.runtime.distributions.von_mises import VonMises
from yamlgrad.runtime.distributions.wishart import Wishart

__all__ = [
    "Wishart",
    "GeneralizedPareto",
    "LogisticNormal",
    "InverseGamma",
    "FisherSnedecor",
    "VonMises",
    "RelaxedOneHotCategorical",
    "RelaxedBernoulli",
    "LKJCholesky",
    "ContinuousBernoulli",
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Cauchy",
    "Chi2",
    "Dirichlet",
    "Distribution",
    "Exponential",
    "ExponentialFamily",
    "Gamma",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "Kumaraswamy",
    "Laplace",
    "LogNormal",
    "LowRankMultivariateNormal",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Pareto",
    "Poisson",
    "StudentT",
    "TransformedDistribution",
    "Uniform",
    "Weibull",
    "biject_to",
    "kl_divergence",
    "register_kl",
    "transform_to",
]
__all__.extend(transforms.__all__)
