"""ContinuousBernoulli: the density C(p) p^x (1 - p)^(1 - x) on [0, 1].

Its normaliser C(p) = 2 atanh(1 - 2p) / (1 - 2p) and the moments have a
removable singularity at p = 1/2. Within `lims` of it (0.499, 0.501 by
default) the closed forms are evaluated at the edge of the window, so their
gradients stay finite, and the value used is a Taylor expansion in (p - 1/2)
as PyTorch uses; a draw is the inverse cdf of a uniform draw, reparameterised.
"""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import yamlgrad as yg
from yamlgrad.runtime.autograd.tensor import Size, Tensor
from yamlgrad.runtime.distributions import constraints
from yamlgrad.runtime.distributions.discrete import _exactly_one
from yamlgrad.runtime.distributions.distribution import Distribution
from yamlgrad.runtime.distributions.exp_family import ExponentialFamily
from yamlgrad.runtime.distributions.utils import (
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from yamlgrad.runtime.nn import functional as F

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli distribution of parameter probs (or logits)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(
        self,
        probs: Any = None,
        logits: Any = None,
        lims: tuple[float, float] = (0.499, 0.501),
        validate_args: bool | None = None,
    ) -> None:
        _exactly_one(probs, logits)
        if probs is not None:
            numbers = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            # Checked before clamping, which would hide a value outside [0, 1].
            if validate_args is not None and not bool(
                self.arg_constraints["probs"].check(self.probs).all()
            ):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
            self._param = self.probs
        else:
            numbers = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
            self._param = self.logits
        self._lims = lims
        batch_shape = Size() if numbers else self._param.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        new = self._expanded(ContinuousBernoulli, batch_shape, _instance)
        new._lims = self._lims
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @lazy_property
    def probs(self) -> Tensor:
        # Clamped as a given probs is: the density's formulas divide by p(1-p).
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    param_shape = property(lambda self: self._param.size())

    def _stable(self) -> Tensor:
        """Where probs lies outside the window around 1/2."""
        low, high = self._lims
        return (self.probs <= low) | (self.probs > high)

    def _cut_probs(self) -> Tensor:
        """probs, moved to the window's lower edge inside the window."""
        edge = self._lims[0] * yg.ones_like(self.probs)
        return yg.where(self._stable(), self.probs, edge)

    def _cont_bern_log_norm(self) -> Tensor:
        p = self._cut_probs()
        below = yg.where(p <= 0.5, p, yg.zeros_like(p))
        above = yg.where(p >= 0.5, p, yg.ones_like(p))
        log_ratio = (yg.log1p(-p) - yg.log(p)).abs().log()
        denominator = yg.where(
            p <= 0.5, yg.log1p(-2.0 * below), yg.log(2.0 * above - 1.0)
        )
        exact = log_ratio - denominator
        x2 = (self.probs - 0.5).pow(2)
        series = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x2) * x2
        return yg.where(self._stable(), exact, series)

    @property
    def mean(self) -> Tensor:
        p = self._cut_probs()
        exact = p / (2.0 * p - 1.0) + 1.0 / (yg.log1p(-p) - yg.log(p))
        x = self.probs - 0.5
        series = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return yg.where(self._stable(), exact, series)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    @property
    def variance(self) -> Tensor:
        p = self._cut_probs()
        exact = p * (p - 1.0) / (1.0 - 2.0 * p).pow(2) + 1.0 / (
            yg.log1p(-p) - yg.log(p)
        ).pow(2)
        x2 = (self.probs - 0.5).pow(2)
        series = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x2) * x2
        return yg.where(self._stable(), exact, series)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        u = yg.rand(shape, dtype=self.probs.dtype)
        with yg.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return self.icdf(yg.rand(shape, dtype=self.probs.dtype))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        bernoulli = -F.binary_cross_entropy_with_logits(logits, value, reduction="none")
        return bernoulli + self._cont_bern_log_norm()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        exact = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inside = yg.where(self._stable(), exact, value)
        ones, zeros = yg.ones_like(value), yg.zeros_like(value)
        return yg.where(value <= 0.0, zeros, yg.where(value >= 1.0, ones, inside))

    def icdf(self, value: Tensor) -> Tensor:
        p = self._cut_probs()
        exact = (yg.log1p(-p + value * (2.0 * p - 1.0)) - yg.log1p(-p)) / (
            yg.log(p) - yg.log1p(-p)
        )
        return yg.where(self._stable(), exact, value)

    def entropy(self) -> Tensor:
        log_q = yg.log1p(-self.probs)
        log_p = yg.log(self.probs)
        return self.mean * (log_q - log_p) - self._cont_bern_log_norm() - log_q

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.logits,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        low, high = self._lims[0] - 0.5, self._lims[1] - 0.5
        stable = (x <= low) | (x > high)
        cut = yg.where(stable, x, low * yg.ones_like(x))
        exact = (yg.exp(cut) - 1.0).abs().log() - cut.abs().log()
        series = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return yg.where(stable, exact, series)
