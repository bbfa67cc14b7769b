"""The KL divergences between different families that PyTorch's table holds.

Where p puts mass outside q's support the divergence is infinite: those pairs
give a tensor of inf of p's batch shape. The others are closed forms of
E_p[log p] - E_p[log q] = -H(p) - E_p[log q], with E_p[log q] written out
from p's moments (and E[x log x] for a Uniform p).
"""

from __future__ import annotations

import math

import yamlgrad as yg
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.distributions.continuous_bernoulli import ContinuousBernoulli
from yamlgrad.runtime.distributions.discrete import Bernoulli, Binomial, Poisson
from yamlgrad.runtime.distributions.gamma_family import Beta, Exponential, Gamma
from yamlgrad.runtime.distributions.kl import _where_inf, register_kl
from yamlgrad.runtime.distributions.location_scale import Laplace, Normal, Uniform
from yamlgrad.runtime.distributions.transformed import Gumbel, Pareto
from yamlgrad.runtime.distributions.utils import euler_constant

_LOG_2PI = math.log(2 * math.pi)


def _inf(t: Tensor) -> Tensor:
    return yg.full_like(t, math.inf)


def _x_log_x(t: Tensor) -> Tensor:
    return t * t.log()


def _register_infinite(pairs: list[tuple[type, type]], of: str) -> None:
    """Each pair's divergence is infinite: q has no mass where p has some."""

    def infinite(p: object, q: object) -> Tensor:
        return _inf(getattr(p, of))

    for type_p, type_q in pairs:
        register_kl(type_p, type_q)(infinite)


_register_infinite([(Beta, Pareto)], "concentration1")
_register_infinite([(ContinuousBernoulli, Pareto)], "probs")
_register_infinite(
    [(Exponential, q) for q in (Beta, ContinuousBernoulli, Pareto, Uniform)], "rate"
)
_register_infinite(
    [(Gamma, q) for q in (Beta, ContinuousBernoulli, Pareto, Uniform)],
    "concentration",
)
_register_infinite(
    [
        (Gumbel, q)
        for q in (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)
    ],
    "loc",
)
_register_infinite(
    [
        (Laplace, q)
        for q in (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)
    ],
    "loc",
)
_register_infinite(
    [
        (Normal, q)
        for q in (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)
    ],
    "loc",
)
_register_infinite([(Pareto, q) for q in (Beta, ContinuousBernoulli, Uniform)], "scale")
_register_infinite([(Poisson, Bernoulli), (Poisson, Binomial)], "rate")


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p: Bernoulli, q: Poisson) -> Tensor:
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


def _beta_mean(p: Beta) -> Tensor:
    return p.concentration1 / (p.concentration1 + p.concentration0)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p: Beta, q: ContinuousBernoulli) -> Tensor:
    cross = p.mean * q.logits + yg.log1p(-q.probs) + q._cont_bern_log_norm()
    return -p.entropy() - cross


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p: Beta, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * _beta_mean(p)


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p: Beta, q: Gamma) -> Tensor:
    total = p.concentration1 + p.concentration0
    expected_log = p.concentration1.digamma() - total.digamma()
    log_norm = q.concentration.lgamma() - q.concentration * q.rate.log()
    return (
        -p.entropy()
        + log_norm
        - (q.concentration - 1) * expected_log
        + q.rate * p.concentration1 / total
    )


@register_kl(Beta, Normal)
def _kl_beta_normal(p: Beta, q: Normal) -> Tensor:
    mean = _beta_mean(p)
    total = p.concentration1 + p.concentration0
    variance = q.scale.pow(2)
    second_moment_half = (mean * (1 - mean) / (total + 1) + mean.pow(2)) * 0.5
    quadratic = second_moment_half - q.loc * mean + q.loc.pow(2) * 0.5
    return -p.entropy() + 0.5 * (variance * 2 * math.pi).log() + quadratic / variance


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p: Beta, q: Uniform) -> Tensor:
    result = -p.entropy() + (q.high - q.low).log()
    outside = (q.low > p.support.lower_bound) | (q.high < p.support.upper_bound)
    return _where_inf(outside, result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(
    p: ContinuousBernoulli, q: Exponential
) -> Tensor:
    return -p.entropy() - yg.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p: ContinuousBernoulli, q: Normal) -> Tensor:
    normalizer = 0.5 * (_LOG_2PI + (q.loc / q.scale).pow(2)) + yg.log(q.scale)
    quadratic = (p.variance + p.mean.pow(2) - 2.0 * q.loc * p.mean) / (
        2.0 * q.scale.pow(2)
    )
    return -p.entropy() + normalizer + quadratic


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p: ContinuousBernoulli, q: Uniform) -> Tensor:
    result = -p.entropy() + yg.log(q.high - q.low)
    # As PyTorch: infinite unless q's interval strictly contains [0, 1].
    outside = (q.low >= p.support.lower_bound) | (q.high <= p.support.upper_bound)
    return _where_inf(outside, result)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p: Exponential, q: Gamma) -> Tensor:
    ratio = q.rate / p.rate
    return (
        -q.concentration * yg.log(ratio)
        + ratio
        + q.concentration.lgamma()
        + q.concentration * euler_constant
        - (1 + euler_constant)
    )


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p: Exponential, q: Gumbel) -> Tensor:
    product = p.rate * q.scale
    shift = q.loc / q.scale
    return (
        product.log()
        - 1
        - shift
        + yg.exp(shift) * product / (product + 1)
        + product.reciprocal()
    )


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p: Exponential, q: Normal) -> Tensor:
    variance = q.scale.pow(2)
    rate2 = p.rate.pow(2)
    log_term = 0.5 * yg.log(rate2 * variance * 2 * math.pi)
    quadratic = rate2.reciprocal() - q.loc / p.rate + q.loc.pow(2) * 0.5
    return log_term - 1 + quadratic / variance


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p: Gamma, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p: Gamma, q: Gumbel) -> Tensor:
    a = p.concentration
    product = p.rate * q.scale
    shift = q.loc / q.scale
    own = (a - 1) * a.digamma() - a.lgamma() - a
    linear = product.log() + a / product
    exponential = yg.exp(shift) * (1 + product.reciprocal()).pow(-a) - shift
    return own + linear + exponential


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p: Gamma, q: Normal) -> Tensor:
    a = p.concentration
    variance = q.scale.pow(2)
    rate2 = p.rate.pow(2)
    log_term = 0.5 * yg.log(rate2 * variance * 2 * math.pi) - a - a.lgamma()
    quadratic = 0.5 * (a.pow(2) + a) / rate2 - q.loc * a / p.rate + 0.5 * q.loc.pow(2)
    return log_term + (a - 1) * a.digamma() + quadratic / variance


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p: Gumbel, q: Normal) -> Tensor:
    ratio = p.scale / q.scale
    log_term = (ratio / math.sqrt(2 * math.pi)).log()
    spread = (math.pi * ratio * 0.5).pow(2) / 3
    shift = ((p.loc + p.scale * euler_constant - q.loc) / q.scale).pow(2) * 0.5
    return -log_term + spread + shift - (euler_constant + 1)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p: Laplace, q: Normal) -> Tensor:
    variance = q.scale.pow(2)
    ratio = p.scale.pow(2) / variance
    log_term = 0.5 * yg.log(2 * ratio / math.pi)
    quadratic = 0.5 * p.loc.pow(2) - p.loc * q.loc + 0.5 * q.loc.pow(2)
    return -log_term + ratio + quadratic / variance - 1


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p: Normal, q: Gumbel) -> Tensor:
    mean_ratio = p.loc / q.scale
    variance_ratio = (p.scale / q.scale).pow(2)
    shift = q.loc / q.scale
    exponential = yg.exp(-mean_ratio + 0.5 * variance_ratio + shift)
    return (
        -variance_ratio.log() * 0.5
        + mean_ratio
        - shift
        + exponential
        - 0.5 * (1 + _LOG_2PI)
    )


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p: Normal, q: Laplace) -> Tensor:
    diff = p.loc - q.loc
    standardised = diff / p.scale
    absolute_mean = math.sqrt(2 / math.pi) * p.scale * yg.exp(
        -0.5 * standardised.pow(2)
    ) + diff * yg.erf(math.sqrt(0.5) * standardised)
    return (
        -yg.log(p.scale / q.scale)
        + absolute_mean / q.scale
        - 0.5 * (1 + math.log(0.5 * math.pi))
    )


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p: Pareto, q: Exponential) -> Tensor:
    product = p.scale * q.rate
    result = (
        (p.alpha / product).log()
        - p.alpha.reciprocal()
        + p.alpha * product / (p.alpha - 1)
        - 1
    )
    return _where_inf(p.alpha <= 1, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p: Pareto, q: Gamma) -> Tensor:
    expected_log = p.scale.log() + p.alpha.reciprocal()
    result = (
        p.alpha.log()
        - expected_log
        + q.concentration.lgamma()
        - q.concentration * q.rate.log()
        + (1 - q.concentration) * expected_log
        + q.rate * p.alpha * p.scale / (p.alpha - 1)
        - 1
    )
    return _where_inf(p.alpha <= 1, result)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p: Pareto, q: Normal) -> Tensor:
    twice_variance = 2 * q.scale.pow(2)
    spread = p.scale / (p.alpha - 1)
    log_term = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    second = p.alpha * spread.pow(2) / (p.alpha - 2)
    shift = (p.alpha * spread - q.loc).pow(2)
    result = log_term - p.alpha.reciprocal() + (second + shift) / twice_variance - 1
    return _where_inf(p.alpha <= 2, result)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p: Uniform, q: Beta) -> Tensor:
    width = p.high - p.low
    log_x = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    log_1mx = (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + width) / width
    log_beta = (
        q.concentration1.lgamma()
        + q.concentration0.lgamma()
        - (q.concentration1 + q.concentration0).lgamma()
    )
    result = (
        (q.concentration0 - 1) * log_1mx
        + log_beta
        - width.log()
        - (q.concentration1 - 1) * log_x
    )
    outside = (p.high > q.support.upper_bound) | (p.low < q.support.lower_bound)
    return _where_inf(outside, result)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p: Uniform, q: ContinuousBernoulli) -> Tensor:
    cross = p.mean * q.logits + yg.log1p(-q.probs) + q._cont_bern_log_norm()
    result = -p.entropy() - cross
    outside = (p.high >= q.support.upper_bound) | (p.low <= q.support.lower_bound)
    return _where_inf(outside, result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p: Uniform, q: Exponential) -> Tensor:
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _where_inf(p.low < q.support.lower_bound, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p: Uniform, q: Gamma) -> Tensor:
    width = p.high - p.low
    log_x = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    result = (
        -width.log()
        + q.concentration.lgamma()
        - q.concentration * q.rate.log()
        + (1 - q.concentration) * log_x
        + q.rate * (p.high + p.low) / 2
    )
    return _where_inf(p.low < q.support.lower_bound, result)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p: Uniform, q: Gumbel) -> Tensor:
    ratio = q.scale / (p.high - p.low)
    high = (p.high - q.loc) / q.scale
    low = (p.low - q.loc) / q.scale
    return ratio.log() + 0.5 * (high + low) - ratio * (yg.exp(-high) - yg.exp(-low))


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p: Uniform, q: Normal) -> Tensor:
    width = p.high - p.low
    log_term = (math.sqrt(math.pi * 2) * q.scale / width).log()
    spread = width.pow(2) / 12
    shift = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return log_term + 0.5 * (spread + shift) / q.scale.pow(2)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p: Uniform, q: Pareto) -> Tensor:
    width = p.high - p.low
    log_norm = (q.alpha * q.scale.pow(q.alpha) * width).log()
    log_x = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    result = log_x * (q.alpha + 1) - log_norm
    return _where_inf(p.low < q.support.lower_bound, result)
