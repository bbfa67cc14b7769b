"""`yg.nn.functional`'s prelu, rrelu, softmin, tanhshrink and gumbel_softmax
(re-exported there), each calling what PyTorch's functional calls: prelu the
prelu composite (PreluKernelBackward0), rrelu the rrelu_with_noise entry
(RreluWithNoiseBackward0; its slopes drawn from yamlgrad's generator), softmin a
softmax of the negated input, tanhshrink a subtraction, gumbel_softmax a softmax
of Gumbel-perturbed logits (with `hard`, the straight-through one-hot).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from yamlgrad.generated import VariableType
from yamlgrad.runtime import factories
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.nn import functional as F

__all__ = [
    "prelu",
    "rrelu",
    "rrelu_",
    "softmin",
    "tanhshrink",
    "gumbel_softmax",
]


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """max(0, x) + weight * min(0, x), `weight` one slope or one per channel
    (dim 1).

    >>> prelu(yg.tensor([-2.0, 3.0]), yg.tensor([0.25]))
    tensor([-0.5000,  3.0000])
    """
    return VariableType.prelu(input, weight)


def _rrelu(
    input: Tensor,
    lower: float,
    upper: float,
    training: bool,
    inplace: bool,
    generator: Any = None,
) -> Tensor:
    if lower > upper:
        raise RuntimeError(
            "Lower bound should be less than or equal to the upper bound"
        )
    noise = factories.empty_like(input)
    op = VariableType.rrelu_with_noise_ if inplace else VariableType.rrelu_with_noise
    return op(input, noise, lower, upper, training, generator)


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Leaky ReLU with, in training, a slope drawn uniformly from [lower, upper]
    for each negative element; in evaluation, the slope (lower + upper) / 2."""
    return _rrelu(input, lower, upper, training, inplace)


def rrelu_(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
) -> Tensor:
    """rrelu in place (RreluWithNoiseBackward1)."""
    return _rrelu(input, lower, upper, training, True)


def softmin(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """softmax(-x) along `dim` (NegBackward0 under SoftmaxBackward0)."""
    if dim is None:
        dim = F._softmax_dim("softmin", input.ndim)
    return VariableType.softmax(VariableType.neg(input), dim, dtype)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x) (SubBackward0)."""
    return VariableType.sub(input, VariableType.tanh(input))


def gumbel_softmax(
    logits: Tensor,
    tau: float = 1,
    hard: bool = False,
    eps: float = 1e-10,
    dim: int = -1,
) -> Tensor:
    """A sample of the Gumbel-softmax distribution: softmax((logits + g) / tau),
    g standard Gumbel noise from yamlgrad's generator. With `hard`, the one-hot
    of its argmax, whose gradient is the soft sample's (y_hard - y_soft.detach()
    + y_soft, the straight-through estimator)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    dtype = logits.dtype.np
    draw = factories._rng(None).standard_exponential(tuple(logits.shape))
    gumbels = Tensor._make(-np.log(draw).astype(dtype))
    y_soft = VariableType.softmax(
        VariableType.div(VariableType.add(logits, gumbels), tau), dim
    )
    if not hard:
        return y_soft
    index = VariableType.max(y_soft, dim, True)[1]
    y_hard = factories.zeros_like(logits).scatter_(dim, index, 1.0)
    return VariableType.add(VariableType.sub(y_hard, y_soft.detach()), y_soft)
