"""VonMises: the circular normal distribution on [-pi, pi).

The density exp(k cos(x - loc)) / (2 pi I0(k)) is evaluated through the
exponentially scaled Bessel function (log I0(k) = log i0e(k) + k), so large
concentrations do not overflow. Draws use Best and Fisher's rejection
sampler, which has no reparameterisation (no rsample, as in PyTorch); each
round redraws only the rejected entries.
"""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import yamlgrad as yg
from yamlgrad.runtime.autograd.tensor import Size, Tensor
from yamlgrad.runtime.distributions import constraints
from yamlgrad.runtime.distributions.distribution import Distribution
from yamlgrad.runtime.distributions.utils import broadcast_all

__all__ = ["VonMises"]


def _log_i0(k: Tensor) -> Tensor:
    return yg.special.i0e(k).log() + k


def _log_i1(k: Tensor) -> Tensor:
    return yg.special.i1e(k).log() + k


class VonMises(Distribution):
    """The von Mises distribution of location loc and concentration."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(
        self, loc: Any, concentration: Any, validate_args: bool | None = None
    ) -> None:
        numbers = isinstance(loc, Number) and isinstance(concentration, Number)
        self.loc, self.concentration = broadcast_all(loc, concentration)
        batch_shape = Size() if numbers else self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        return self._expanded(VonMises, batch_shape, _instance)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        k = self.concentration
        return k * yg.cos(value - self.loc) - math.log(2 * math.pi) - _log_i0(k)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        k = self.concentration
        return 1 - (_log_i1(k) - _log_i0(k)).exp()

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with yg.no_grad():
            k = self.concentration.to(yg.float64).expand(shape)
            # The wrapped Cauchy envelope's parameter r, from tau and rho.
            tau = 1 + (1 + 4 * k**2).sqrt()
            rho = (tau - (2 * tau).sqrt()) / (2 * k)
            r = (1 + rho**2) / (2 * rho)
            theta = yg.zeros(shape, dtype=yg.float64)
            done = yg.zeros(shape, dtype=yg.bool)
            while not bool(done.all()):
                u1, u2, u3 = (yg.rand(shape, dtype=yg.float64) for _ in range(3))
                z = yg.cos(math.pi * u1)
                f = (1 + r * z) / (r + z)
                c = k * (r - f)
                accept = (c * (2 - c) - u2 > 0) | ((c / u2).log() + 1 - c >= 0)
                angle = (u3 - 0.5).sign() * yg.acos(f.clamp(-1, 1))
                fresh = accept & ~done
                theta = yg.where(fresh, angle, theta)
                done = done | accept
            loc = self.loc.to(yg.float64)
            wrapped = (theta + loc + math.pi).remainder(2 * math.pi) - math.pi
            return wrapped.to(self.loc.dtype)
