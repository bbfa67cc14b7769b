"""TransformedDistribution, and the families PyTorch defines as one: a base
distribution pushed through transforms (LogNormal = exp of a Normal, Gumbel =
loc - scale log(-log U), ...).

log_prob inverts the transforms one by one, adding each -log |det J|, so it
is differentiable in the base's parameters and in the transforms'. A draw is
the transforms applied to the base's draw: reparameterised whenever the base's
is.
"""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import yamlgrad as yg
from yamlgrad.runtime.autograd.tensor import Size, Tensor
from yamlgrad.runtime.distributions import constraints
from yamlgrad.runtime.distributions.distribution import Distribution
from yamlgrad.runtime.distributions.gamma_family import Exponential
from yamlgrad.runtime.distributions.location_scale import Cauchy, Normal, Uniform
from yamlgrad.runtime.distributions.transforms import (
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    PowerTransform,
    Transform,
    AbsTransform,
)
from yamlgrad.runtime.distributions.utils import (
    _of_base,
    _sum_rightmost,
    broadcast_all,
    euler_constant,
)

__all__ = [
    "Gumbel",
    "HalfCauchy",
    "InverseGamma",
    "LogisticNormal",
    "HalfNormal",
    "Kumaraswamy",
    "LogNormal",
    "Pareto",
    "TransformedDistribution",
    "Weibull",
]


class TransformedDistribution(Distribution):
    """base_distribution with each of `transforms` applied to its draws."""

    arg_constraints: dict[str, constraints.Constraint] = {}

    def __init__(
        self,
        base_distribution: Distribution,
        transforms: Any,
        validate_args: bool | None = None,
    ) -> None:
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError(
                    "transforms must be a Transform or a list of Transforms"
                )
            self.transforms = transforms
        else:
            raise ValueError(
                f"transforms must be a Transform or list, but was {transforms}"
            )
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        chain = ComposeTransform(self.transforms)
        base_event_dim = len(base_distribution.event_shape)
        if len(base_shape) < chain.domain.event_dim:
            raise ValueError(
                f"base_distribution needs to have shape with size at least "
                f"{chain.domain.event_dim}, but got {base_shape}."
            )
        shape = Size(chain.forward_shape(base_shape))
        expanded_base = Size(chain.inverse_shape(shape))
        if base_shape != expanded_base:
            split = len(expanded_base) - base_event_dim
            base_distribution = base_distribution.expand(expanded_base[:split])
        reinterpreted = chain.domain.event_dim - base_event_dim
        if reinterpreted > 0:
            from yamlgrad.runtime.distributions.combinators import Independent

            base_distribution = Independent(base_distribution, reinterpreted)
        self.base_dist = base_distribution
        event_dim = max(chain.codomain.event_dim, len(self.base_dist.event_shape))
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    # A family defined here lists the tensors it keeps besides base_dist
    # (Gumbel's loc and scale); expand broadcasts them and the base.
    _own_tensors: tuple[str, ...] | None = None

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        if _instance is None and "_own_tensors" in type(self).__dict__:
            _instance = self.__new__(type(self))
            for name in type(self)._own_tensors or ():
                setattr(_instance, name, getattr(self, name).expand(batch_shape))
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = Size(batch_shape)
        shape = batch_shape + self.event_shape
        for t in reversed(self.transforms):
            shape = Size(t.inverse_shape(shape))
        base_batch = shape[: len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch)
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self) -> constraints.Constraint:
        """The last transform's codomain, spanning the whole event."""
        if self.transforms == []:
            return self.base_dist.support
        last = self.transforms[-1].codomain
        extra = len(self.event_shape) - last.event_dim
        return last if extra <= 0 else constraints.independent(last, extra)

    has_rsample = _of_base("has_rsample")  # type: ignore[assignment]

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        with yg.no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        total: Any = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            term = t.log_abs_det_jacobian(x, y)
            total = total - _sum_rightmost(term, event_dim - t.domain.event_dim)
            y = x
        base = self.base_dist.log_prob(y)
        return total + _sum_rightmost(base, event_dim - len(self.base_dist.event_shape))

    def _monotone_cdf_value(self, value: Tensor) -> Tensor:
        sign: Any = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value: Tensor) -> Tensor:
        for t in self.transforms[::-1]:
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotone_cdf_value(self.base_dist.cdf(value))

    def icdf(self, value: Tensor) -> Tensor:
        value = self.base_dist.icdf(self._monotone_cdf_value(value))
        for t in self.transforms:
            value = t(value)
        return value


class LogNormal(TransformedDistribution):
    """exp(X) for X ~ Normal(loc, scale)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    _own_tensors = ()

    loc = _of_base("loc")

    scale = _of_base("scale")

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self) -> Tensor:
        return (self.loc - self.scale.pow(2)).exp()

    @property
    def variance(self) -> Tensor:
        s2 = self.scale.pow(2)
        return yg.expm1(s2) * (2 * self.loc + s2).exp()

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc


class HalfNormal(TransformedDistribution):
    """|X| for X ~ Normal(0, scale)."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        base = Normal(0, scale, validate_args=False)
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    _own_tensors = ()

    scale = _of_base("scale")

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self) -> Tensor:
        return yg.zeros_like(self.scale)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return yg.where(value >= 0, log_prob, yg.full_like(log_prob, -math.inf))

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)


class HalfCauchy(TransformedDistribution):
    """|X| for X ~ Cauchy(0, scale)."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        base = Cauchy(0, scale, validate_args=False)
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    _own_tensors = ()

    scale = _of_base("scale")

    @property
    def mean(self) -> Tensor:
        return yg.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def mode(self) -> Tensor:
        return yg.zeros_like(self.scale)

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = yg.as_tensor(value, dtype=self.scale.dtype)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return yg.where(value >= 0, log_prob, yg.full_like(log_prob, -math.inf))

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)


class Gumbel(TransformedDistribution):
    """loc - scale log(-log U) for U uniform on (0, 1)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        info = yg.finfo(self.loc.dtype)
        if isinstance(loc, Number) and isinstance(scale, Number):
            base = Uniform(info.tiny, 1 - info.eps, validate_args=validate_args)
        else:
            low = yg.full_like(self.loc, info.tiny)
            high = yg.full_like(self.loc, 1 - info.eps)
            base = Uniform(low, high, validate_args=validate_args)
        transforms = [
            ExpTransform().inv,
            AffineTransform(loc=0, scale=-yg.ones_like(self.scale)),
            ExpTransform().inv,
            AffineTransform(loc=self.loc, scale=-self.scale),
        ]
        super().__init__(base, transforms, validate_args=validate_args)

    _own_tensors = ("loc", "scale")

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (self.loc - value) / self.scale
        return (z - z.exp()) - self.scale.log()

    mode = property(lambda self: self.loc, doc="loc.")

    @property
    def mean(self) -> Tensor:
        return self.loc + euler_constant * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    @property
    def stddev(self) -> Tensor:
        return self.scale * (math.pi / math.sqrt(6))

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + euler_constant)


class Pareto(TransformedDistribution):
    """scale * exp(E) for E ~ Exponential(alpha): density alpha scale^alpha /
    x^(alpha + 1) above scale."""

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(
        self, scale: Any, alpha: Any, validate_args: bool | None = None
    ) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    _own_tensors = ("scale", "alpha")

    @property
    def mean(self) -> Tensor:
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    mode = property(lambda self: self.scale, doc="scale.")

    @property
    def variance(self) -> Tensor:
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.greater_than_eq(self.scale)

    def entropy(self) -> Tensor:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class Weibull(TransformedDistribution):
    """scale * E^(1/concentration) for E ~ Exponential(1)."""

    arg_constraints = {
        "scale": constraints.positive,
        "concentration": constraints.positive,
    }
    support = constraints.positive

    def __init__(
        self, scale: Any, concentration: Any, validate_args: bool | None = None
    ) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(yg.ones_like(self.scale), validate_args=validate_args)
        transforms = [
            PowerTransform(exponent=self.concentration_reciprocal),
            AffineTransform(loc=0, scale=self.scale),
        ]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        # The transforms hold the parameters: built anew from expanded ones.
        new = self._get_checked_instance(Weibull, _instance)
        Weibull.__init__(
            new,
            self.scale.expand(batch_shape),
            self.concentration.expand(batch_shape),
            validate_args=False,
        )
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.scale * yg.exp(yg.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self) -> Tensor:
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self) -> Tensor:
        second = yg.exp(yg.lgamma(1 + 2 * self.concentration_reciprocal))
        first = yg.exp(2 * yg.lgamma(1 + self.concentration_reciprocal))
        return self.scale.pow(2) * (second - first)

    def entropy(self) -> Tensor:
        return (
            euler_constant * (1 - self.concentration_reciprocal)
            + yg.log(self.scale * self.concentration_reciprocal)
            + 1
        )


def _moments(a: Tensor, b: Tensor, n: int) -> Tensor:
    """E[X^n] of a Kumaraswamy(a, b): b B(1 + n/a, b)."""
    shifted = 1 + n / a
    log_value = yg.lgamma(shifted) + yg.lgamma(b) - yg.lgamma(shifted + b)
    return b * yg.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """(1 - U^(1/b))^(1/a) for U uniform: density a b x^(a-1) (1 - x^a)^(b-1)."""

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(
        self,
        concentration1: Any,
        concentration0: Any,
        validate_args: bool | None = None,
    ) -> None:
        self.concentration1, self.concentration0 = broadcast_all(
            concentration1, concentration0
        )
        base = Uniform(
            yg.full_like(self.concentration0, 0),
            yg.full_like(self.concentration0, 1),
            validate_args=validate_args,
        )
        # u -> u^(1/b) -> 1 - u^(1/b) -> (1 - u^(1/b))^(1/a)
        root_b = PowerTransform(exponent=self.concentration0.reciprocal())
        complement = AffineTransform(loc=1.0, scale=-1.0)
        root_a = PowerTransform(exponent=self.concentration1.reciprocal())
        transforms = [root_b, complement, root_a]
        super().__init__(base, transforms, validate_args=validate_args)

    _own_tensors = ("concentration1", "concentration0")

    @property
    def mean(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        # As PyTorch computes it: (1/b) log1p(-b) - log1p(-a b), in log space,
        # nan where either concentration is below one.
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        undefined = (b < 1) | (a < 1)
        log_mode = yg.where(undefined, yg.full_like(log_mode, math.nan), log_mode)
        return log_mode.exp()

    @property
    def variance(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        return _moments(a, b, 2) - yg.pow(self.mean, 2)

    def entropy(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        harmonic = yg.digamma(b + 1) + euler_constant
        return (
            (1 - b.reciprocal())
            + (1 - a.reciprocal()) * harmonic
            - yg.log(a)
            - yg.log(b)
        )


class InverseGamma(TransformedDistribution):
    """1 / X for X ~ Gamma(concentration, rate)."""

    arg_constraints = {
        "concentration": constraints.positive,
        "rate": constraints.positive,
    }
    support = constraints.positive
    has_rsample = True

    def __init__(
        self, concentration: Any, rate: Any, validate_args: bool | None = None
    ) -> None:
        from yamlgrad.runtime.distributions.gamma_family import Gamma

        base = Gamma(concentration, rate, validate_args=validate_args)
        reciprocal = PowerTransform(-base.rate.new_ones(()))
        super().__init__(base, reciprocal, validate_args=validate_args)

    _own_tensors = ()

    concentration = _of_base("concentration")

    rate = _of_base("rate")

    @property
    def mean(self) -> Tensor:
        a = self.concentration
        value = self.rate / (a - 1)
        return yg.where(a > 1, value, yg.full_like(value, math.inf))

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        a = self.concentration
        value = self.rate.pow(2) / ((a - 1).pow(2) * (a - 2))
        return yg.where(a > 2, value, yg.full_like(value, math.inf))

    def entropy(self) -> Tensor:
        a = self.concentration
        return a + self.rate.log() + a.lgamma() - (1 + a) * a.digamma()


class LogisticNormal(TransformedDistribution):
    """The stick-breaking image of a Normal(loc, scale) vector: a distribution
    on the simplex one dimension larger than loc's last."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        from yamlgrad.runtime.distributions.transforms import StickBreakingTransform

        base: Distribution = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    _own_tensors = ()

    loc = _of_base("loc", levels=2)

    scale = _of_base("scale", levels=2)
