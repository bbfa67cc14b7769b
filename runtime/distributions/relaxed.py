"""The relaxed (concrete, Gumbel-softmax) families: RelaxedBernoulli and
RelaxedOneHotCategorical, continuous stand-ins for Bernoulli and one-hot
Categorical draws whose draws are reparameterised at a temperature.

Each is a TransformedDistribution of a distribution on logits, as in PyTorch:
LogitRelaxedBernoulli (logistic noise added to the logit, divided by the
temperature) through a sigmoid, and ExpRelaxedCategorical (Gumbel noise, a
log-softmax) through exp.
"""

from __future__ import annotations

from numbers import Number
from typing import Any

import yamlgrad as yg
from yamlgrad.runtime.autograd.tensor import Size, Tensor
from yamlgrad.runtime.distributions import constraints
from yamlgrad.runtime.distributions.discrete import (
    Categorical,
    _BinaryParameters,
    _ViaCategorical,
)
from yamlgrad.runtime.distributions.distribution import Distribution
from yamlgrad.runtime.distributions.transformed import TransformedDistribution
from yamlgrad.runtime.distributions.transforms import ExpTransform, SigmoidTransform
from yamlgrad.runtime.distributions.utils import _of_base, broadcast_all, clamp_probs

__all__ = [
    "ExpRelaxedCategorical",
    "LogitRelaxedBernoulli",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
]


class LogitRelaxedBernoulli(_BinaryParameters, Distribution):
    """The logit of a RelaxedBernoulli draw: (logits + L) / temperature for
    standard logistic noise L."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(
        self,
        temperature: Any,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        self.temperature = temperature
        self._keep(probs, logits)
        numbers = isinstance(probs if probs is not None else logits, Number)
        batch_shape = Size() if numbers else self._param.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        new = self._expanded(LogitRelaxedBernoulli, batch_shape, _instance)
        new.temperature = self.temperature
        return self._reattach(new)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        u = clamp_probs(yg.rand(shape, dtype=self.logits.dtype))
        return (u.log() - (-u).log1p() + self.logits) / self.temperature

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        shifted = logits - value * self.temperature
        temperature = yg.as_tensor(self.temperature, dtype=logits.dtype)
        return temperature.log() + shifted - 2 * shifted.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """sigmoid of a LogitRelaxedBernoulli draw: values in (0, 1) that approach
    Bernoulli draws as the temperature falls."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(
        self,
        temperature: Any,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    _own_tensors = ()

    temperature = _of_base("temperature")
    logits = _of_base("logits")
    probs = _of_base("probs")


class ExpRelaxedCategorical(_ViaCategorical, Distribution):
    """The log of a RelaxedOneHotCategorical draw: log-softmax of (logits + G)
    / temperature for standard Gumbel noise G."""

    arg_constraints = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        temperature: Any,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        shape = self._categorical.param_shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        u = clamp_probs(yg.rand(shape, dtype=self.logits.dtype))
        gumbel = -((-(u.log())).log())
        scores = (self.logits + gumbel) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        temperature = yg.as_tensor(self.temperature, dtype=logits.dtype)
        log_scale = yg.full_like(temperature, float(k)).lgamma() - temperature.log() * (
            -(k - 1)
        )
        score = logits - value * temperature
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """exp of an ExpRelaxedCategorical draw: points of the simplex that
    approach one-hot vectors as the temperature falls."""

    arg_constraints = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }
    support = constraints.simplex
    has_rsample = True

    def __init__(
        self,
        temperature: Any,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        base = ExpRelaxedCategorical(
            temperature, probs, logits, validate_args=validate_args
        )
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    _own_tensors = ()

    temperature = _of_base("temperature")
    logits = _of_base("logits")
    probs = _of_base("probs")
