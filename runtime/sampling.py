"""Sampling: `normal` and the in-place samplers
(`x.uniform_()`, `x.bernoulli_()`, ...), with PyTorch's signatures. `bernoulli`,
`normal`'s tensor overloads, `normal_`, `poisson` and `multinomial` are
derivatives.yaml entries (their kernels are runtime/ops/random_draws.py);
`normal` here binds those overloads and the factory one, `normal(mean, std, size)`.

Draws come from a `Generator` (runtime/generator.py): the one passed as
`generator=`, else the default one that `manual_seed` reseeds. The values are not
PyTorch's (its generator is another algorithm); the contract is: shapes, dtypes,
errors, the distribution, and the same numbers for the same seed.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from yamlgrad.runtime import backend, dtypes
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.factories import Generator, _leaf, _np_dtype, _rng, _size
from yamlgrad.runtime.ops.random_draws import ERR_PROBABILITY
from yamlgrad.runtime.wrappers.randomness import per_sample, vmap_randomness
from yamlgrad.runtime.wrappers.variable_type_utils import optional_layout_arg

__all__ = ["normal"]


def _batchable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn`, which reads its tensors' ndarrays, made to run under vmap: given a
    batched tensor (one without storage of its own) it runs once per sample
    through vmap's fallback, where the vmap's `randomness=` applies."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def sampler(*args: Any, **kwargs: Any) -> Any:
        values = (*args, *kwargs.values())
        if not any(
            isinstance(v, Tensor)
            and type(v._data) is not np.ndarray
            and not backend.is_foreign(v._data)
            for v in values
        ):
            return fn(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        (name, self), *rest = bound.arguments.items()
        if fn.__name__.endswith("_") and vmap_randomness[-1][0] == "same":
            # One draw for every sample, written into each (as PyTorch's
            # in-place samplers do under randomness="same").
            blank = Tensor._make(np.zeros(tuple(self.shape), self.dtype.np))
            return self.zero_().add_(fn(blank, **dict(rest)))
        return per_sample[0](fn.__name__, "", fn, self, *(v for _, v in rest))

    return sampler


def _array(value: Any) -> np.ndarray:
    return value._data if isinstance(value, Tensor) else np.asarray(value)


def normal(
    mean: Any,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Generator | None = None,
    dtype: dtypes.dtype | None = None,
    layout: dtypes.layout | None = None,
    requires_grad: bool = False,
    device: Any = None,
) -> Tensor:
    """Samples of N(mean, std**2): `normal(mean_tensor, std)`, `normal(mean,
    std_tensor)`, `normal(mean_tensor, std_tensor)` (broadcast; derivatives.yaml's
    normal overloads, which record NormalBackward1..3), or `normal(mean, std,
    size)` of floats (float32 unless a dtype is given), a new leaf."""
    if isinstance(mean, Tensor) and isinstance(std, Tensor):
        return ops.normal_Tensor_Tensor(mean, std, generator=generator)
    if isinstance(mean, Tensor):
        return ops.normal_Tensor_float(mean, std, generator=generator)
    if isinstance(std, Tensor):
        return ops.normal_float_Tensor(mean, std, generator=generator)
    if size is None:
        raise TypeError("normal() missing required argument 'size'")
    shape = _size((size,))
    optional_layout_arg(layout, "normal", "layout", 6)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    draw = _rng(generator).standard_normal(shape)
    return _leaf((mean + std * draw).astype(_np_dtype(dtype)), requires_grad, device)


# -- in place: Tensor.uniform_, normal_, bernoulli_, exponential_, random_, ... ------


def draw_dtype(tensor: Tensor) -> np.dtype:
    """The numpy dtype a draw for `tensor` is made in (on any backend): its own
    float dtype of 32 bits or more, else float64."""
    dtype = tensor.dtype.np
    return dtype if dtype.kind == "f" and dtype.itemsize >= 4 else np.dtype(np.float64)


def fill_with(self: Tensor, values: np.ndarray) -> Tensor:
    """Write a draw into `self` in place, as `self.copy_(draw)`: it bumps the
    version, refuses a leaf that requires grad in grad mode, and to autograd the
    new values do not depend on the old (PyTorch's rules for its samplers)."""
    values = np.asarray(values).astype(self.dtype.np, copy=False)
    if backend.is_foreign(self._data):  # the draw (numpy's) moved to self's backend
        values = backend.like(values, self._data)
    return self.copy_(Tensor._make(values))


@_batchable
def uniform_(
    self: Tensor, from_: float = 0.0, to: float = 1.0, *, generator: Any = None
) -> Tensor:
    draw = _rng(generator).random(self.shape, dtype=draw_dtype(self))
    return fill_with(self, from_ + (to - from_) * draw)


@_batchable
def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    probs = np.broadcast_to(_array(p), self.shape)
    if np.any(probs < 0) or np.any(probs > 1):
        raise RuntimeError(ERR_PROBABILITY)
    return fill_with(self, _rng(generator).random(self.shape) < probs)


@_batchable
def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    if lambd <= 0:
        raise RuntimeError(
            f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}"
        )
    return fill_with(self, _rng(generator).exponential(1.0 / lambd, self.shape))


@_batchable
def random_(
    self: Tensor, from_: int = 0, to: int | None = None, *, generator: Any = None
) -> Tensor:
    """Integers uniform in [from, to); `random_(to)` is [0, to). Without `to`, up
    to 2**mantissa for a float dtype (PyTorch's), or the dtype's maximum."""
    if to is None and from_ != 0:
        from_, to = 0, from_
    if to is None:
        dtype = self.dtype.np
        to = 2 ** (np.finfo(dtype).nmant + 1) if dtype.kind == "f" else None
        to = to if to is not None else int(np.iinfo(dtype).max) + 1
    if from_ >= to:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={from_} "
            f">= to={to}"
        )
    return fill_with(self, _rng(generator).integers(from_, to, self.shape))


@_batchable
def log_normal_(
    self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Any = None
) -> Tensor:
    return fill_with(self, _rng(generator).lognormal(mean, std, self.shape))


@_batchable
def geometric_(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    return fill_with(self, _rng(generator).geometric(p, self.shape))


@_batchable
def cauchy_(
    self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None
) -> Tensor:
    return fill_with(self, median + sigma * _rng(generator).standard_cauchy(self.shape))


# The Tensor methods of this module (torch has no Tensor.normal or .poisson).
METHODS = {
    "uniform_": uniform_,
    "bernoulli_": bernoulli_,
    "exponential_": exponential_,
    "random_": random_,
    "log_normal_": log_normal_,
    "geometric_": geometric_,
    "cauchy_": cauchy_,
}
