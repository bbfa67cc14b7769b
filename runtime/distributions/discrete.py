"""Discrete families: Bernoulli, Geometric, Binomial, NegativeBinomial,
Poisson (counts), and Categorical, OneHotCategorical, Multinomial (categories).

A family given by a probability takes `probs` or `logits`, exactly one; the
other is computed on first use (`lazy_property`) and both stay differentiable
in the one given. Binary logits are log p - log(1 - p); categorical logits are
normalised (log-softmax). None of these draws is reparameterised: `sample`
draws under no_grad and `rsample` is not implemented.
"""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import yamlgrad as yg
from yamlgrad.runtime.nn import functional as F
from yamlgrad.runtime.autograd.tensor import Size, Tensor
from yamlgrad.runtime.distributions import constraints
from yamlgrad.runtime.distributions.distribution import Distribution
from yamlgrad.runtime.distributions.exp_family import ExponentialFamily
from yamlgrad.runtime.distributions.utils import (
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = [
    "Bernoulli",
    "Binomial",
    "Categorical",
    "Geometric",
    "Multinomial",
    "NegativeBinomial",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Poisson",
]

_ONE_OF = "Either `probs` or `logits` must be specified, but not both."


def _exactly_one(probs: Any, logits: Any) -> None:
    if (probs is None) == (logits is None):
        raise ValueError(_ONE_OF)


class _BinaryParameters:
    """One probability per entry, given as `probs` or as `logits`: the other
    is computed from it on first use. `_param` is the one given."""

    _param: Tensor

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    param_shape = property(lambda self: self._param.size())

    def _keep(self, probs: Any, logits: Any, *more: Any) -> tuple[Tensor, ...]:
        """Broadcast the other parameters with the one of probs and logits
        given, store it under its name, and return the others."""
        _exactly_one(probs, logits)
        name, given = ("probs", probs) if probs is not None else ("logits", logits)
        *others, tensor = broadcast_all(*more, given)
        setattr(self, name, tensor)
        self._param = tensor
        return tuple(others)

    def _reattach(self, new: Any) -> Any:
        """After expand: the new instance's `_param` is its expanded twin."""
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new


class _Binary(_BinaryParameters, Distribution):
    """A family parameterised by one probability per batch entry (or its
    logit): Bernoulli and Geometric."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}

    def __init__(self, probs: Any, logits: Any, validate_args: bool | None) -> None:
        self._keep(probs, logits)
        numbers = isinstance(probs if probs is not None else logits, Number)
        batch_shape = Size() if numbers else self._param.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        return self._reattach(self._expanded(type(self), batch_shape, _instance))


class Bernoulli(_Binary, ExponentialFamily):
    """A draw of 1 with probability probs, else 0."""

    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(
        self, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        super().__init__(probs, logits, validate_args)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return yg.where(self.probs == 0.5, yg.full_like(mode, math.nan), mode)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with yg.no_grad():
            return yg.bernoulli(self.probs.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = yg.broadcast_tensors(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return F.binary_cross_entropy_with_logits(
            self.logits, self.probs, reduction="none"
        )

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = yg.arange(2, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (yg.logit(self.probs),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return yg.log1p(yg.exp(x))


class Geometric(_Binary):
    """The number of failures before the first success of probability probs."""

    support = constraints.nonnegative_integer

    def __init__(
        self, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        super().__init__(probs, logits, validate_args)
        if self._validate_args and probs is not None:
            # A success rate of 0 never stops: refused, with the zeros shown.
            positive = self.probs > 0
            if not bool(positive.all()):
                raise ValueError(
                    "Expected parameter probs "
                    f"({type(self.probs).__name__} of shape "
                    f"{tuple(self.probs.shape)}) of distribution {self!r} "
                    "to be positive but found invalid values:\n"
                    f"{self.probs[~positive]}"
                )

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return yg.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        tiny = yg.finfo(self.probs.dtype).tiny
        with yg.no_grad():
            u = yg.rand(tuple(shape), dtype=self.probs.dtype).clamp(min=tiny)
            return (u.log() / yg.log1p(-self.probs)).floor()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        at_one = (probs == 1) & (value == 0)
        probs = yg.where(at_one, yg.zeros_like(probs), probs)
        return value * yg.log1p(-probs) + self.probs.log()

    def entropy(self) -> Tensor:
        return (
            F.binary_cross_entropy_with_logits(
                self.logits, self.probs, reduction="none"
            )
            / self.probs
        )


class Poisson(ExponentialFamily):
    """Counts of events arriving at the given rate."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, Number) else self.rate.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        return self._expanded(Poisson, batch_shape, _instance)

    # Mean and variance are both the rate; the mode is its integer part.
    mean = property(lambda self: self.rate)
    variance = property(lambda self: self.rate)
    mode = property(lambda self: self.rate.floor())

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with yg.no_grad():
            return yg.poisson(self.rate.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - yg.lgamma(value + 1)

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (yg.log(self.rate),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return yg.exp(x)


class Binomial(_BinaryParameters, Distribution):
    """Successes among total_count trials of probability probs."""

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(
        self,
        total_count: Any = 1,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        (count,) = self._keep(probs, logits, total_count)
        self.total_count = count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        return self._reattach(self._expanded(Binomial, batch_shape, _instance))

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        n, p = self.total_count, self.probs
        return n * p

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with yg.no_grad():
            return yg.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        # log p^k (1-p)^(n-k) from the logits without cancellation:
        # k logit - n log(1 + e^logit), log(1 + e^l) = max(l, 0) + log1p(e^-|l|).
        logits = self.logits
        softplus = logits.clamp(min=0) + yg.log1p(yg.exp(-logits.abs()))
        log_normalizer = n * softplus - yg.lgamma(n + 1)
        return (
            value * logits
            - yg.lgamma(value + 1)
            - yg.lgamma(n - value + 1)
            - log_normalizer
        )

    def entropy(self) -> Tensor:
        count = int(self.total_count.max())
        if not bool((self.total_count == count).all()):
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `entropy`."
            )
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(yg.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        count = int(self.total_count.max())
        if not bool((self.total_count == count).all()):
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`."
            )
        values = yg.arange(1 + count, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values


class NegativeBinomial(_BinaryParameters, Distribution):
    """Successes before total_count failures, each trial a success of
    probability probs."""

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(
        self,
        total_count: Any,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        (count,) = self._keep(probs, logits, total_count)
        self.total_count = count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        return self._reattach(self._expanded(NegativeBinomial, batch_shape, _instance))

    @property
    def mean(self) -> Tensor:
        return self.total_count * yg.exp(self.logits)

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / yg.sigmoid(-self.logits)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        # A Poisson draw of a Gamma(total_count, e^-logits) rate.
        from yamlgrad.runtime.distributions.gamma_family import Gamma

        with yg.no_grad():
            rate = Gamma(
                self.total_count, yg.exp(-self.logits), validate_args=False
            ).sample(sample_shape)
            return yg.poisson(rate)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        r = self.total_count
        unnormalised = r * F.logsigmoid(-self.logits) + value * F.logsigmoid(
            self.logits
        )
        normaliser = -yg.lgamma(r + value) + yg.lgamma(1.0 + value) + yg.lgamma(r)
        # r + value == 0 (no draws at all): probability one.
        normaliser = yg.where(r + value == 0.0, yg.zeros_like(normaliser), normaliser)
        return unnormalised - normaliser


class Categorical(Distribution):
    """One of K categories, by probabilities (or logits) along the last
    dimension."""

    arg_constraints = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }
    has_enumerate_support = True

    def __init__(
        self, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        _exactly_one(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.shape[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        new = self._expanded(type(self), batch_shape, _instance, ("probs", "logits"))
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        new._num_events = self._num_events
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return yg.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Tensor:
        return yg.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        sample_shape = Size(sample_shape)
        rows = self.probs.reshape(-1, self._num_events)
        with yg.no_grad():
            draws = yg.multinomial(rows, max(sample_shape.numel(), 1), True).T
        return draws[: sample_shape.numel()].reshape(self._extended_shape(sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        index = value.long().unsqueeze(-1)
        index, log_pmf = yg.broadcast_tensors(index, self.logits)
        return log_pmf.gather(-1, index[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        # -inf logits (zero probabilities) contribute 0, not 0 * -inf.
        logits = self.logits.clamp(min=yg.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = yg.arange(self._num_events, dtype=yg.int64)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values


class _ViaCategorical:
    """A family made of a Categorical (`_categorical`), whose parameters are
    its."""

    _categorical: Categorical
    probs = property(lambda self: self._categorical.probs)
    logits = property(lambda self: self._categorical.logits)
    param_shape = property(lambda self: self._categorical.param_shape)
    _param = property(lambda self: self._categorical._param)


class OneHotCategorical(_ViaCategorical, Distribution):
    """A Categorical draw written as a one-hot vector of length K."""

    arg_constraints = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(
        self, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        self._categorical = Categorical(probs, logits)
        shape = self._categorical.param_shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        new = self._get_checked_instance(type(self), _instance)
        batch_shape = Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> Tensor:
        probs = self._categorical.probs
        return F.one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self) -> Tensor:
        probs = self._categorical.probs
        return probs * (1 - probs)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        probs = self._categorical.probs
        index = self._categorical.sample(Size(sample_shape))
        return F.one_hot(index, probs.shape[-1]).to(probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self.event_shape[0]
        values = yg.eye(n, dtype=self._param.dtype)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + self.batch_shape + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose rsample passes gradients straight through the
    draw: sample + probs - probs.detach()."""

    has_rsample = True

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        draw = self.sample(sample_shape)
        probs = self._categorical.probs
        return draw + (probs - probs.detach())


class Multinomial(_ViaCategorical, Distribution):
    """Counts of total_count Categorical draws."""

    arg_constraints = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }

    def __init__(
        self,
        total_count: int = 1,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        shape = self._categorical.param_shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> constraints.Constraint:
        return constraints.multinomial(self.total_count)

    @property
    def variance(self) -> Tensor:
        p = self.probs
        return self.total_count * p * (1 - p)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        sample_shape = Size(sample_shape)
        with yg.no_grad():
            # total_count category draws, then counted per category.
            draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
            onehot = F.one_hot(draws, self._event_shape[0]).to(self.probs.dtype)
            counts = onehot.sum(0)
        return counts.expand(self._extended_shape(sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = yg.broadcast_tensors(self.logits, value)
        logits = logits.clone()
        # A category of count 0 and probability 0 contributes 0.
        logits = yg.where(
            (value == 0) & (logits == -math.inf), yg.zeros_like(logits), logits
        )
        coefficient = yg.lgamma(value.sum(-1) + 1) - yg.lgamma(value + 1).sum(-1)
        return (logits * value).sum(-1) + coefficient

    def entropy(self) -> Tensor:
        n = yg.tensor(float(self.total_count), dtype=self.probs.dtype)
        binomial = Binomial(self.total_count, probs=self.probs, validate_args=False)
        support = binomial.enumerate_support(False)[1:]
        log_binomial = binomial.log_prob(support)
        term = (yg.exp(log_binomial) * yg.lgamma(support + 1)).sum([0, -1])
        categorical = n * self._categorical.entropy() - yg.lgamma(n + 1)
        return categorical + term
