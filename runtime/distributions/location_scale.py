"""Families of the real line defined by a location and a scale: Normal,
Laplace, Cauchy and StudentT, and Uniform on [low, high).

Each reparameterised draw is the standard draw mapped by x = loc + scale * e
(Uniform: low + (high - low) * u), so the gradient of a sample in the
parameters is that map's, as in PyTorch. Standard draws come from the default
generator (`yamlgrad.manual_seed`) in the parameters' dtype.
"""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import yamlgrad as yg
from yamlgrad.runtime.autograd.tensor import Size, Tensor
from yamlgrad.runtime.distributions import constraints
from yamlgrad.runtime.distributions.distribution import Distribution
from yamlgrad.runtime.distributions.exp_family import ExponentialFamily
from yamlgrad.runtime.distributions.gamma_family import Chi2
from yamlgrad.runtime.distributions.utils import broadcast_all

__all__ = ["Cauchy", "GeneralizedPareto", "Laplace", "Normal", "StudentT", "Uniform"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _batch_of(*params: Any) -> Size:
    """The batch shape of broadcast parameters: () when all were numbers."""
    if all(isinstance(p, Number) for p in params):
        return Size()
    return None  # type: ignore[return-value]


class _LocScale(Distribution):
    """loc and scale broadcast together; the batch shape is theirs."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        numbers = isinstance(loc, Number) and isinstance(scale, Number)
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = Size() if numbers else self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        return self._expanded(type(self), batch_shape, _instance)

    def _standard(self, sample_shape: Any) -> Tensor:
        raise NotImplementedError

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        e = self._standard(self._extended_shape(sample_shape))
        return self.loc + e * self.scale

    def _z(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (value - self.loc) / self.scale


class Normal(_LocScale, ExponentialFamily):
    """The normal distribution N(loc, scale^2).

    >>> Normal(yg.tensor([0.0]), yg.tensor([1.0])).sample()  # doctest: +SKIP
    """

    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2)

    def _standard(self, shape: Size) -> Tensor:
        return yg.randn(tuple(shape), dtype=self.loc.dtype)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with yg.no_grad():
            return yg.normal(self.loc.expand(shape), self.scale.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_scale = (
            math.log(self.scale) if isinstance(self.scale, Number) else self.scale.log()
        )
        squared = (value - self.loc) ** 2
        return -squared / (2 * self.scale**2) - log_scale - _LOG_SQRT_2PI

    def cdf(self, value: Tensor) -> Tensor:
        return 0.5 * (1 + yg.erf(self._z(value) / math.sqrt(2)))

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc + self.scale * yg.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + _LOG_SQRT_2PI + yg.log(self.scale)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal()

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return -0.25 * x.pow(2) / y + 0.5 * yg.log(-math.pi / y)


class Laplace(_LocScale):
    """The Laplace distribution: density exp(-|x - loc| / scale) / (2 scale)."""

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        # u uniform on (-1, 1), kept off -1 so that log1p(-|u|) is finite.
        shape = tuple(self._extended_shape(sample_shape))
        eps = yg.finfo(self.loc.dtype).eps
        u = (yg.rand(shape, dtype=self.loc.dtype) * 2 - 1).clamp(min=eps - 1)
        return self.loc - self.scale * (u.sign() * yg.log1p(-u.abs()))

    def log_prob(self, value: Tensor) -> Tensor:
        return -yg.log(2 * self.scale) - self._z(value).abs()

    def cdf(self, value: Tensor) -> Tensor:
        z = self._z(value)
        return 0.5 - 0.5 * z.sign() * yg.expm1(-z.abs())

    def icdf(self, value: Tensor) -> Tensor:
        centred = value - 0.5
        return self.loc - self.scale * centred.sign() * yg.log1p(-2 * centred.abs())

    def entropy(self) -> Tensor:
        return 1 + yg.log(2 * self.scale)


class Cauchy(_LocScale):
    """The Cauchy distribution (no mean, no variance: nan and inf)."""

    @property
    def mean(self) -> Tensor:
        return yg.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return yg.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def _standard(self, shape: Size) -> Tensor:
        u = yg.rand(tuple(shape), dtype=self.loc.dtype)
        return yg.tan(math.pi * (u - 0.5))

    def log_prob(self, value: Tensor) -> Tensor:
        z = self._z(value)
        return -math.log(math.pi) - self.scale.log() - yg.log1p(z**2)

    def cdf(self, value: Tensor) -> Tensor:
        return yg.atan(self._z(value)) / math.pi + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        return yg.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()


class StudentT(Distribution):
    """Student's t with df degrees of freedom, located and scaled."""

    arg_constraints = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    def __init__(
        self,
        df: Any,
        loc: Any = 0.0,
        scale: Any = 1.0,
        validate_args: bool | None = None,
    ) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        new = self._expanded(StudentT, batch_shape, _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        return yg.where(self.df > 1, self.loc, yg.full_like(self.loc, math.nan))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        finite = self.scale.pow(2) * self.df / (self.df - 2)
        infinite = yg.where(
            self.df > 1,
            yg.full_like(self.df, math.inf),
            yg.full_like(self.df, math.nan),
        )
        return yg.where(self.df > 2, finite, infinite)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        # t = z / sqrt(chi2(df) / df), with z standard normal.
        shape = self._extended_shape(sample_shape)
        z = yg.randn(tuple(shape), dtype=self.df.dtype)
        chi2 = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * z * yg.rsqrt(chi2 / self.df)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        half_df = 0.5 * self.df
        normalizer = (
            self.scale.log()
            + 0.5 * self.df.log()
            + 0.5 * math.log(math.pi)
            + yg.lgamma(half_df)
            - yg.lgamma(half_df + 0.5)
        )
        return -0.5 * (self.df + 1.0) * yg.log1p(z**2 / self.df) - normalizer

    def entropy(self) -> Tensor:
        half_df = 0.5 * self.df
        log_beta = yg.lgamma(half_df) + math.lgamma(0.5) - yg.lgamma(half_df + 0.5)
        return (
            self.scale.log()
            + (half_df + 0.5) * (yg.digamma(half_df + 0.5) - yg.digamma(half_df))
            + 0.5 * self.df.log()
            + log_beta
        )


class Uniform(Distribution):
    """The uniform distribution on [low, high)."""

    has_rsample = True

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:  # type: ignore[override]
        return {
            "low": constraints.less_than(self.high),
            "high": constraints.greater_than(self.low),
        }

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        numbers = isinstance(low, Number) and isinstance(high, Number)
        self.low, self.high = broadcast_all(low, high)
        batch_shape = Size() if numbers else self.low.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        return self._expanded(Uniform, batch_shape, _instance, ("low", "high"))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return math.nan * self.high

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = yg.rand(tuple(shape), dtype=self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        inside = (self.low <= value).type_as(self.low) * (value < self.high).type_as(
            self.low
        )
        return yg.log(inside) - yg.log(self.high - self.low)

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value: Tensor) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return yg.log(self.high - self.low)


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution: survival (1 + c z)^(-1/c) of
    z = (x - loc) / scale, the exponential's exp(-z) at c = 0 (a concentration
    within isclose of 0 takes that branch). Drawn by inverting the cdf."""

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(
        self,
        loc: Any,
        scale: Any,
        concentration: Any,
        validate_args: bool | None = None,
    ) -> None:
        numbers = all(isinstance(v, Number) for v in (loc, scale, concentration))
        self.loc, self.scale, self.concentration = broadcast_all(
            loc, scale, concentration
        )
        batch_shape = Size() if numbers else self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        return self._expanded(GeneralizedPareto, batch_shape, _instance)

    def _exponential_case(self) -> tuple[Tensor, Tensor]:
        """Where the concentration is (close to) 0, and the concentration with
        those entries replaced by 1 so that dividing by it is safe."""
        c = self.concentration
        at_zero = yg.isclose(c, yg.zeros_like(c))
        return at_zero, yg.where(at_zero, yg.ones_like(c), c)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        c = self.concentration
        bounded = self.loc - self.scale / c
        upper = yg.where(c < 0, bounded, yg.full_like(bounded, math.inf))
        return constraints.interval(self.loc, upper)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return self.icdf(yg.rand(shape, dtype=self.loc.dtype))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        at_zero, c = self._exponential_case()
        power = 1 / c + yg.ones_like(z)
        general = yg.where(power == 0, power, power * yg.log1p(c * z))
        return -self.scale.log() - yg.where(at_zero, z, general)

    def _log_survival(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        at_zero, c = self._exponential_case()
        return yg.where(at_zero, -z, -yg.log1p(c * z) / c)

    def cdf(self, value: Tensor) -> Tensor:
        return yg.exp(yg.log1p(-yg.exp(self._log_survival(value))))

    def icdf(self, value: Tensor) -> Tensor:
        at_zero, c = self._exponential_case()
        log_survival = yg.log1p(-value)
        general = self.loc + self.scale / c * yg.expm1(-c * log_survival)
        return yg.where(at_zero, self.loc - self.scale * log_survival, general)

    @property
    def mean(self) -> Tensor:
        finite = self.concentration < 1
        c = yg.where(finite, self.concentration, yg.full_like(self.concentration, 0.5))
        value = self.loc + self.scale / (1 - c)
        return yg.where(finite, value, yg.full_like(value, math.nan))

    @property
    def variance(self) -> Tensor:
        finite = self.concentration < 0.5
        c = yg.where(finite, self.concentration, yg.full_like(self.concentration, 0.25))
        value = self.scale**2 / ((1 - c) ** 2 * (1 - 2 * c))
        return yg.where(finite, value, yg.full_like(value, math.nan))

    @property
    def mode(self) -> Tensor:
        return self.loc

    def entropy(self) -> Tensor:
        value = yg.log(self.scale) + self.concentration + 1
        return value.expand(self._batch_shape)
