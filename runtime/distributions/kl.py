"""KL divergences KL(p || q): a registry of closed forms by pair of types.

`register_kl(P, Q)` records a function for distributions of types P and Q;
`kl_divergence(p, q)` calls the one registered for the most specific pair of
their classes. Specificity is read from the method resolution orders: a pair
is ranked by the position of P in type(p)'s MRO, then of Q in type(q)'s (and
the other way round); when the two rankings choose different functions the
pair is ambiguous and a RuntimeWarning asks for a registration. Lookups are
cached per pair of types and the cache is cleared by each registration.

Pairs whose supports do not nest (p puts mass where q has none) have an
infinite divergence; they are registered as such.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import yamlgrad as yg
from yamlgrad.runtime.nn import functional as F
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.distributions.combinators import Independent
from yamlgrad.runtime.distributions.continuous_bernoulli import ContinuousBernoulli
from yamlgrad.runtime.distributions.discrete import (
    Bernoulli,
    Binomial,
    Categorical,
    Geometric,
    OneHotCategorical,
    Poisson,
)
from yamlgrad.runtime.distributions.distribution import Distribution
from yamlgrad.runtime.distributions.exp_family import ExponentialFamily
from yamlgrad.runtime.distributions.gamma_family import (
    Beta,
    Dirichlet,
    Exponential,
    Gamma,
)
from yamlgrad.runtime.distributions.location_scale import (
    Cauchy,
    Laplace,
    Normal,
    Uniform,
)
from yamlgrad.runtime.distributions.multivariate import (
    LowRankMultivariateNormal,
    MultivariateNormal,
    _half_log_det,
    _mahalanobis,
)
from yamlgrad.runtime.distributions.transformed import (
    Gumbel,
    HalfNormal,
    Pareto,
    TransformedDistribution,
)
from yamlgrad.runtime.distributions.utils import _sum_rightmost, euler_constant

__all__ = ["register_kl", "kl_divergence"]

KLFunction = Callable[[Any, Any], Tensor]
_KL_REGISTRY: dict[tuple[type, type], KLFunction] = {}
_KL_MEMOIZE: dict[tuple[type, type], KLFunction | None] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[KLFunction], KLFunction]:
    """Decorator: the function computes KL(p || q) for p of type_p and q of
    type_q.

    >>> @register_kl(Normal, Normal)
    ... def kl_normal_normal(p, q): ...
    """
    if not isinstance(type_p, type) or not issubclass(type_p, Distribution):
        raise TypeError(
            f"Expected type_p to be a Distribution subclass but got {type_p}"
        )
    if not isinstance(type_q, type) or not issubclass(type_q, Distribution):
        raise TypeError(
            f"Expected type_q to be a Distribution subclass but got {type_q}"
        )

    def decorator(fun: KLFunction) -> KLFunction:
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun

    return decorator


def _lookup(type_p: type, type_q: type) -> KLFunction | None:
    mro_p, mro_q = type_p.__mro__, type_q.__mro__
    candidates = [
        (mro_p.index(p), mro_q.index(q), p, q)
        for p, q in _KL_REGISTRY
        if issubclass(type_p, p) and issubclass(type_q, q)
    ]
    if not candidates:
        return None
    by_p = min(candidates, key=lambda c: (c[0], c[1]))
    by_q = min(candidates, key=lambda c: (c[1], c[0]))
    chosen = _KL_REGISTRY[by_p[2], by_p[3]]
    if chosen is not _KL_REGISTRY[by_q[2], by_q[3]]:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
            f"Please register_kl({by_p[2].__name__}, {by_q[3].__name__})",
            RuntimeWarning,
        )
    return chosen


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) = E_p[log p(x) - log q(x)], batched over the distributions'
    batch shape.

    >>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0))
    tensor(0.5000)
    """
    key = (type(p), type(q))
    if key not in _KL_MEMOIZE:
        _KL_MEMOIZE[key] = _lookup(*key)
    fun = _KL_MEMOIZE[key]
    if fun is None:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {p.__class__.__name__} "
            f"and q type {q.__class__.__name__}"
        )
    return fun(p, q)


def _infinite_like(t: Tensor) -> Tensor:
    return yg.full_like(t, math.inf)


def _where_inf(condition: Tensor, value: Tensor) -> Tensor:
    return yg.where(condition, _infinite_like(value), value)


def _where_zero(condition: Tensor, value: Tensor) -> Tensor:
    return yg.where(condition, yg.zeros_like(value), value)


# -- same family ------------------------------------------------------------------


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    ones = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    ones = _where_zero(p.probs == 0, _where_inf(q.probs == 0, ones))
    zeros = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    zeros = _where_zero(p.probs == 1, _where_inf(q.probs == 1, zeros))
    return ones + zeros


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    a1, b1 = p.concentration1, p.concentration0
    a2, b2 = q.concentration1, q.concentration0
    total1, total2 = a1 + b1, a2 + b2
    log_beta_ratio = (
        yg.lgamma(a2)
        + yg.lgamma(b2)
        + yg.lgamma(total1)
        - (yg.lgamma(a1) + yg.lgamma(b1) + yg.lgamma(total2))
    )
    return (
        log_beta_ratio
        + (a1 - a2) * yg.digamma(a1)
        + (b1 - b2) * yg.digamma(b1)
        + (total2 - total1) * yg.digamma(total1)
    )


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p: Binomial, q: Binomial) -> Tensor:
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not "
            "implemented"
        )
    per_trial = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits)) + (
        1 - p.probs
    ) * (F.softplus(q.logits) - F.softplus(p.logits))
    return _where_inf(p.total_count > q.total_count, p.total_count * per_trial)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    terms = p.probs * (p.logits - q.logits)
    terms = _where_inf((q.probs == 0).expand_as(terms), terms)
    terms = _where_zero((p.probs == 0).expand_as(terms), terms)
    return terms.sum(-1)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(
    p: ContinuousBernoulli, q: ContinuousBernoulli
) -> Tensor:
    cross = p.mean * (p.logits - q.logits)
    p_terms = p._cont_bern_log_norm() + yg.log1p(-p.probs)
    q_terms = q._cont_bern_log_norm() + yg.log1p(-q.probs)
    return cross + p_terms - q_terms


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    a, b = p.concentration, q.concentration
    total_a, total_b = a.sum(-1), b.sum(-1)
    log_norm = yg.lgamma(total_a) - yg.lgamma(total_b)
    log_norm = log_norm - (yg.lgamma(a) - yg.lgamma(b)).sum(-1)
    expected_log = yg.digamma(a) - yg.digamma(total_a).unsqueeze(-1)
    return log_norm + ((a - b) * expected_log).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    ratio = q.rate / p.rate
    return ratio - 1 - yg.log(ratio)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p: ExponentialFamily, q: ExponentialFamily) -> Tensor:
    # The Bregman divergence of the log normaliser F between the natural
    # parameters: F(eta_q) - F(eta_p) - <eta_q - eta_p, grad F(eta_p)>.
    if type(p) is not type(q):
        raise NotImplementedError(
            "The cross KL-divergence between different exponential families cannot "
            "                            be computed using Bregman divergences"
        )
    p_params = [t.detach().requires_grad_() for t in p._natural_params]
    q_params = q._natural_params
    p_normalizer = p._log_normalizer(*p_params)
    gradients = yg.autograd.grad(p_normalizer.sum(), p_params, create_graph=True)
    result = q._log_normalizer(*q_params) - p_normalizer
    for eta_p, eta_q, g in zip(p_params, q_params, gradients):
        result = result - _sum_rightmost((eta_q - eta_p) * g, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    a1, r1 = p.concentration, p.rate
    a2, r2 = q.concentration, q.rate
    return (
        a2 * yg.log(r1 / r2)
        + yg.lgamma(a2)
        - yg.lgamma(a1)
        + (a1 - a2) * yg.digamma(a1)
        + (r2 - r1) * (a1 / r1)
    )


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p: Gumbel, q: Gumbel) -> Tensor:
    ratio = p.scale / q.scale
    q_loc, p_loc = q.loc / q.scale, p.loc / q.scale
    first = -yg.log(ratio) - q_loc + p_loc
    third = yg.exp(q_loc + yg.lgamma(1 + ratio) - p_loc)
    return first + ratio * euler_constant + third - (1 + euler_constant)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Geometric, q: Geometric) -> Tensor:
    return -p.entropy() - yg.log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p: HalfNormal, q: HalfNormal) -> Tensor:
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    ratio = p.scale / q.scale
    distance = (p.loc - q.loc).abs()
    return -yg.log(ratio) + distance / q.scale + ratio * yg.exp(-distance / p.scale) - 1


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(
    p: LowRankMultivariateNormal, q: LowRankMultivariateNormal
) -> Tensor:
    return _kl_gaussians(p, q)


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p: MultivariateNormal, q: LowRankMultivariateNormal) -> Tensor:
    return _kl_gaussians(p, q)


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p: LowRankMultivariateNormal, q: MultivariateNormal) -> Tensor:
    return _kl_gaussians(p, q)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    return _kl_gaussians(p, q)


def _scale_tril_of(d: Any) -> Tensor:
    if isinstance(d, MultivariateNormal):
        return d._unbroadcasted_scale_tril
    return yg.linalg.cholesky(d.covariance_matrix)


def _kl_gaussians(p: Any, q: Any) -> Tensor:
    """0.5 (tr(S_q^-1 S_p) + |L_q^-1 (mu_q - mu_p)|^2 - n) + log det L_q - log
    det L_p, from the Cholesky factors of both covariances."""
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with                          "
            "different event shapes cannot be computed"
        )
    n = p.event_shape[0]
    p_tril, q_tril = _scale_tril_of(p), _scale_tril_of(q)
    batch = yg.broadcast_shapes(p_tril.shape[:-2], q_tril.shape[:-2])
    solved = yg.linalg.solve_triangular(
        q_tril.expand(batch + (n, n)), p_tril.expand(batch + (n, n)), upper=False
    )
    trace = solved.pow(2).sum((-2, -1))
    distance = _mahalanobis(q_tril, q.loc - p.loc)
    log_det = _half_log_det(q_tril) - _half_log_det(p_tril)
    return log_det + 0.5 * (trace + distance - n)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    variance_ratio = (p.scale / q.scale).pow(2)
    shift = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (variance_ratio + shift - 1 - variance_ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p: OneHotCategorical, q: OneHotCategorical) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p: Pareto, q: Pareto) -> Tensor:
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * yg.log(p.scale / q.scale) - yg.log(alpha_ratio)
    result = result + alpha_ratio - 1
    return _where_inf(p.support.lower_bound < q.support.lower_bound, result)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Tensor:
    return p.rate * (yg.log(p.rate) - yg.log(q.rate)) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(
    p: TransformedDistribution, q: TransformedDistribution
) -> Tensor:
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return _sum_rightmost(
        kl_divergence(p.base_dist, q.base_dist),
        len(p.event_shape) - len(p.base_dist.event_shape),
    )


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = yg.log((q.high - q.low) / (p.high - p.low))
    return _where_inf((q.low > p.low) | (q.high < p.high), result)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p: Cauchy, q: Cauchy) -> Tensor:
    numerator = (p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)
    return yg.log(numerator / (4 * p.scale * q.scale))


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(
        kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims
    )


# The pairs of different families (after the helpers above, which they use).
from yamlgrad.runtime.distributions import _kl_mixed  # noqa: E402,F401
