"""The Gamma family and its relatives: Gamma, Chi2, Exponential, and the
simplex families built from Gamma draws, Beta and Dirichlet.

Gamma draws are reparameterised implicitly: `_standard_gamma` is a YAML entry
whose gradient is d x / d alpha at fixed noise (`_standard_gamma_grad`), and a
Gamma(alpha, rate) draw is that draw divided by rate. A Dirichlet draw is
normalised Gamma draws; its gradient (`_dirichlet_grad`, the derivative of each
Beta marginal at fixed noise, corrected for the simplex) is the backward of a
small autograd Function, as PyTorch's is. Beta(a, b) is the first coordinate of
a Dirichlet([a, b]).
"""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import yamlgrad as yg
from yamlgrad.runtime.autograd.function import Function
from yamlgrad.runtime.autograd.tensor import Size, Tensor
from yamlgrad.runtime.distributions import constraints
from yamlgrad.runtime.distributions.distribution import Distribution
from yamlgrad.runtime.distributions.exp_family import ExponentialFamily
from yamlgrad.runtime.distributions.utils import broadcast_all

__all__ = ["Beta", "Chi2", "Dirichlet", "Exponential", "FisherSnedecor", "Gamma"]


def _keep_positive(x: Tensor) -> Tensor:
    """x with draws that underflowed to 0 raised, in place and unseen by
    autograd, to the dtype's smallest normal number (log_prob stays finite)."""
    x.detach().clamp_(min=yg.finfo(x.dtype).tiny)
    return x


class Gamma(ExponentialFamily):
    """Gamma(concentration, rate): density rate^a x^(a-1) e^(-rate x) / Gamma(a)."""

    arg_constraints = {
        "concentration": constraints.positive,
        "rate": constraints.positive,
    }
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(
        self, concentration: Any, rate: Any, validate_args: bool | None = None
    ) -> None:
        numbers = isinstance(concentration, Number) and isinstance(rate, Number)
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch_shape = Size() if numbers else self.concentration.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        return self._expanded(Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        draw = yg._standard_gamma(self.concentration.expand(shape))
        return _keep_positive(draw / self.rate.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        value = yg.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return (
            yg.xlogy(a, self.rate)
            + yg.xlogy(a - 1, value)
            - self.rate * value
            - yg.lgamma(a)
        )

    def entropy(self) -> Tensor:
        a = self.concentration
        return a - yg.log(self.rate) + yg.lgamma(a) + (1.0 - a) * yg.digamma(a)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return yg.lgamma(x + 1) + (x + 1) * yg.log(-y.reciprocal())

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return yg.special.gammainc(self.concentration, self.rate * value)


class Chi2(Gamma):
    """The chi-squared distribution with df degrees of freedom: Gamma(df/2, 1/2)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Any, validate_args: bool | None = None) -> None:
        if isinstance(df, Number):
            df = yg.tensor(float(df))
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        return self._expanded(Chi2, batch_shape, _instance, ("concentration", "rate"))

    @property
    def df(self) -> Tensor:
        return self.concentration * 2


class Exponential(ExponentialFamily):
    """The exponential distribution of the given rate."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, Number) else self.rate.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        return self._expanded(Exponential, batch_shape, _instance)

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return yg.zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        unit = yg.empty(tuple(shape), dtype=self.rate.dtype).exponential_()
        return unit / self.rate

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - yg.exp(-self.rate * value)

    def icdf(self, value: Tensor) -> Tensor:
        return -yg.log1p(-value) / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - yg.log(self.rate)

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (-self.rate,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return -yg.log(-x)


class _Dirichlet(Function):
    """A Dirichlet draw whose backward is the implicit reparameterisation
    gradient: d x_i / d alpha_j from each Beta marginal (`_dirichlet_grad`),
    projected so that the draw stays on the simplex."""

    @staticmethod
    def forward(ctx: Any, concentration: Tensor) -> Tensor:
        x = yg._sample_dirichlet(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> Tensor:
        x, concentration = ctx.saved_tensors
        total = concentration.sum(-1, keepdim=True).expand_as(concentration)
        marginal = yg._dirichlet_grad(x, concentration, total)
        return marginal * (grad_output - (x * grad_output).sum(-1, keepdim=True))


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution on the simplex of the last dimension."""

    arg_constraints = {
        "concentration": constraints.independent(constraints.positive, 1)
    }
    support = constraints.simplex
    has_rsample = True

    def __init__(
        self, concentration: Tensor, validate_args: bool | None = None
    ) -> None:
        if concentration.dim() < 1:
            raise ValueError(
                "`concentration` parameter must be at least one-dimensional."
            )
        self.concentration = concentration
        shape = concentration.shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        return self._expanded(Dirichlet, batch_shape, _instance)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return _Dirichlet.apply(self.concentration.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return (
            yg.xlogy(a - 1.0, value).sum(-1)
            + yg.lgamma(a.sum(-1))
            - yg.lgamma(a).sum(-1)
        )

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        shifted = (self.concentration - 1).clamp(min=0.0)
        mode = shifted / shifted.sum(-1, keepdim=True)
        # All concentrations below one: the density peaks at the corner of the
        # largest one.
        corner = yg.nn.functional.one_hot(mode.argmax(-1), shifted.shape[-1]).to(
            mode.dtype
        )
        all_below = (self.concentration < 1).all(-1, keepdim=True)
        return yg.where(all_below, corner, mode)

    @property
    def variance(self) -> Tensor:
        total = self.concentration.sum(-1, keepdim=True)
        a = self.concentration
        return a * (total - a) / (total.pow(2) * (total + 1))

    def entropy(self) -> Tensor:
        a = self.concentration
        k = a.shape[-1]
        total = a.sum(-1)
        return (
            yg.lgamma(a).sum(-1)
            - yg.lgamma(total)
            - (k - total) * yg.digamma(total)
            - ((a - 1.0) * yg.digamma(a)).sum(-1)
        )

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return yg.lgamma(x).sum(-1) - yg.lgamma(x.sum(-1))


class Beta(ExponentialFamily):
    """Beta(concentration1, concentration0) on [0, 1]: the first coordinate of
    a Dirichlet([concentration1, concentration0])."""

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
        numbers = isinstance(concentration1, Number) and isinstance(
            concentration0, Number
        )
        c1, c0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(yg.stack([c1, c0], -1), validate_args=validate_args)
        batch_shape = Size() if numbers else self._dirichlet._batch_shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self) -> Tensor:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Tensor:
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        pair = yg.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(pair)

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return self.concentration1, self.concentration0

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return yg.lgamma(x) + yg.lgamma(y) - yg.lgamma(x + y)


class FisherSnedecor(Distribution):
    """Snedecor's F: (X1 / df1) / (X2 / df2) for chi-squared X1, X2, drawn as
    a ratio of two Gamma draws (so reparameterised)."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1: Any, df2: Any, validate_args: bool | None = None) -> None:
        numbers = isinstance(df1, Number) and isinstance(df2, Number)
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        batch_shape = Size() if numbers else self.df1.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        new = self._expanded(FisherSnedecor, batch_shape, _instance)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        value = self.df2 / (self.df2 - 2)
        return yg.where(self.df2 <= 2, yg.full_like(value, math.nan), value)

    @property
    def mode(self) -> Tensor:
        value = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return yg.where(self.df1 <= 2, yg.full_like(value, math.nan), value)

    @property
    def variance(self) -> Tensor:
        d1, d2 = self.df1, self.df2
        value = 2 * d2.pow(2) * (d1 + d2 - 2) / (d1 * (d2 - 2).pow(2) * (d2 - 4))
        return yg.where(d2 <= 4, yg.full_like(value, math.nan), value)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        numerator = self._gamma1.rsample(sample_shape).reshape(shape)
        denominator = self._gamma2.rsample(sample_shape).reshape(shape)
        # Both kept off 0, recorded (a clamped entry has no gradient).
        tiny = yg.finfo(denominator.dtype).tiny
        return (numerator / denominator.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        half1, half2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        log_beta = (half1 + half2).lgamma() - half1.lgamma() - half2.lgamma()
        body = half1 * ratio.log() + (half1 - 1) * yg.log(value)
        return log_beta + body - (half1 + half2) * yg.log1p(ratio * value)
