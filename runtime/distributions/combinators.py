"""Distributions made of other distributions: Independent (batch dimensions
read as event dimensions) and MixtureSameFamily (a Categorical mixture of one
family's components)."""

from __future__ import annotations

from typing import Any

import yamlgrad as yg
from yamlgrad.runtime.autograd.tensor import Size, Tensor
from yamlgrad.runtime.distributions import constraints
from yamlgrad.runtime.distributions.discrete import Categorical
from yamlgrad.runtime.distributions.distribution import Distribution
from yamlgrad.runtime.distributions.utils import _of_base, _sum_rightmost

__all__ = ["Independent", "MixtureSameFamily"]


class Independent(Distribution):
    """base_distribution with its `reinterpreted_batch_ndims` rightmost batch
    dimensions moved into the event: log_prob sums over them.

    >>> Independent(Normal(yg.zeros(3), yg.ones(3)), 1).event_shape
    yamlgrad.Size([3])
    """

    arg_constraints: dict[str, constraints.Constraint] = {}

    def __init__(
        self,
        base_distribution: Distribution,
        reinterpreted_batch_ndims: int,
        validate_args: bool | None = None,
    ) -> None:
        batch = base_distribution.batch_shape
        if reinterpreted_batch_ndims > len(batch):
            raise ValueError(
                "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                f"actual {reinterpreted_batch_ndims} vs {len(batch)}"
            )
        split = len(batch) - reinterpreted_batch_ndims
        event_shape = batch[split:] + base_distribution.event_shape
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(batch[:split], event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = Size(batch_shape)
        moved = self.event_shape[: self.reinterpreted_batch_ndims]
        new.base_dist = self.base_dist.expand(batch_shape + moved)
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, False)
        new._validate_args = self._validate_args
        return new

    has_rsample = _of_base("has_rsample")  # type: ignore[assignment]
    mean = _of_base("mean")
    mode = _of_base("mode")
    variance = _of_base("variance")

    @property
    def has_enumerate_support(self) -> bool:  # type: ignore[override]
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        base = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            return constraints.independent(base, self.reinterpreted_batch_ndims)
        return base

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        return _sum_rightmost(
            self.base_dist.log_prob(value), self.reinterpreted_batch_ndims
        )

    def entropy(self) -> Tensor:
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError(
                "Enumeration over cartesian product is not implemented"
            )
        return self.base_dist.enumerate_support(expand)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.base_dist}, "
            f"{self.reinterpreted_batch_ndims})"
        )


class MixtureSameFamily(Distribution):
    """A mixture whose weights are a Categorical over the rightmost batch
    dimension of component_distribution (its components)."""

    has_rsample = False
    arg_constraints: dict[str, constraints.Constraint] = {}

    def __init__(
        self,
        mixture_distribution: Categorical,
        component_distribution: Distribution,
        validate_args: bool | None = None,
    ) -> None:
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(
                " The Mixture distribution needs to be an  instance of "
                "torch.distributions.Categorical"
            )
        if not isinstance(component_distribution, Distribution):
            raise ValueError(
                "The Component distribution need to be an instance of "
                "torch.distributions.Distribution"
            )
        mixture_batch = mixture_distribution.batch_shape
        component_batch = component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mixture_batch), reversed(component_batch)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(
                    f"`mixture_distribution.batch_shape` ({mixture_batch}) is not "
                    "compatible with `component_distribution."
                    f"batch_shape`({component_batch})"
                )
        k = mixture_distribution.logits.shape[-1]
        components = component_distribution.batch_shape[-1]
        if components != k:
            raise ValueError(
                "`mixture_distribution component` "
                f"({k}) does not equal `component_distribution.batch_shape[-1]` "
                f"({components})"
            )
        self._num_component = k
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(
            component_batch,
            component_distribution.event_shape,
            validate_args=validate_args,
        )

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        batch_shape = Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(
            batch_shape + (self._num_component,)
        )
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        return constraints.MixtureSameFamilyConstraint(
            self._component_distribution.support
        )

    mixture_distribution = property(
        lambda self: self._mixture_distribution, doc="The mixing Categorical."
    )
    component_distribution = property(
        lambda self: self._component_distribution, doc="The components, batched."
    )

    def _weights(self) -> Tensor:
        """The mixture's probabilities, shaped to broadcast with a component
        quantity of shape batch + (K,) + event."""
        probs = self._mixture_distribution.probs
        return probs.reshape(probs.shape + (1,) * self._event_ndims)

    @property
    def mean(self) -> Tensor:
        k_dim = -1 - self._event_ndims
        return (self._weights() * self._component_distribution.mean).sum(k_dim)

    @property
    def variance(self) -> Tensor:
        k_dim = -1 - self._event_ndims
        weights = self._weights()
        component_mean = self._component_distribution.mean
        within = (weights * self._component_distribution.variance).sum(k_dim)
        centred = component_mean - self.mean.unsqueeze(k_dim)
        between = (weights * centred.pow(2)).sum(k_dim)
        return within + between

    def _pad(self, x: Tensor) -> Tensor:
        return x.unsqueeze(-1 - self._event_ndims)

    def cdf(self, x: Tensor) -> Tensor:
        x = self._pad(x)
        cdf_x = self._component_distribution.cdf(x)
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self._component_distribution.log_prob(self._pad(x))
        log_mix = yg.log_softmax(self._mixture_distribution.logits, dim=-1)
        return yg.logsumexp(log_prob_x + log_mix, dim=-1)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        sample_shape = Size(sample_shape)
        with yg.no_grad():
            which = self._mixture_distribution.sample(sample_shape)
            draws = self._component_distribution.sample(sample_shape)
            k_dim = len(sample_shape) + len(self.batch_shape)
            index = which.reshape(which.shape + (1,) * (self._event_ndims + 1))
            index = index.expand(which.shape + (1,) + tuple(self.event_shape))
            return draws.gather(k_dim, index).squeeze(k_dim)

    def __repr__(self) -> str:
        return (
            f"MixtureSameFamily(\n  {self._mixture_distribution},\n"
            f"  {self._component_distribution})"
        )
