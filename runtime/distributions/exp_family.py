"""ExponentialFamily: distributions with density
p(x; theta) = exp(<t(x), theta> - F(theta) + k(x)).

A family that declares its natural parameters (`_natural_params`), its log
normaliser F (`_log_normalizer`) and the mean of its carrier measure k gets an
entropy, and a KL divergence to another member of its family (the Bregman
divergence of F, in kl.py), both from autograd's gradient of F.
"""

from __future__ import annotations

from typing import Any

import yamlgrad as yg
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution of an exponential family."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """H = F(theta) - <theta, grad F(theta)> - E[k(x)]."""
        params = [p.detach().requires_grad_() for p in self._natural_params]
        normalizer = self._log_normalizer(*params)
        gradients = yg.autograd.grad(normalizer.sum(), params, create_graph=True)
        result = -self._mean_carrier_measure + normalizer
        for theta, gradient in zip(params, gradients):
            result = result - theta * gradient
        event_dims = len(self.event_shape)
        for _ in range(event_dims):
            result = result.sum(-1)
        return result
