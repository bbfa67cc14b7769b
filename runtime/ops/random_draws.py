"""Forward kernels of the random ops of derivatives.yaml (`bernoulli`, `normal`,
`poisson`, `multinomial`).

Each draws from the `Generator` its op was given (the default one for None,
resolved by the wrapper) through `draw_rng`, so an open vmap's `randomness=`
applies. The values are not PyTorch's (its generator is another algorithm); the
shapes, dtypes, errors and the distribution are, and one seed gives one draw.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.errors import scalar_type_name
from yamlgrad.runtime.generator import Generator
from yamlgrad.runtime.wrappers.randomness import draw_rng

KERNELS = (
    "bernoulli_draw",
    "normal_draw",
    "normal_fill",
    "poisson_draw",
    "multinomial_draw",
)
BACKWARD_HELPERS: tuple[str, ...] = ()
COMPOSITE_HELPERS: tuple[str, ...] = ()

ERR_PROBABILITY = (
    "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
    "message be improved?  If so, please report an enhancement request to PyTorch.)"
)


def _not_implemented_for(kernel: str, dtype: np.dtype) -> NotImplementedError:
    return NotImplementedError(
        f"\"{kernel}\" not implemented for '{scalar_type_name(dtype)}'"
    )


def _draw_dtype(dtype: np.dtype) -> np.dtype:
    """Draw in the output's float dtype (float64 for half precision)."""
    return dtype if dtype.kind == "f" and dtype.itemsize >= 4 else np.dtype(np.float64)


def bernoulli_draw(self: np.ndarray, p: Any, generator: Generator) -> np.ndarray:
    """1 with probability `p` (self's values, or one float), else 0, in self's
    dtype: bernoulli(self) and bernoulli.p(self, p)."""
    probs = np.asarray(p)
    if probs is self and self.dtype.kind != "f":
        raise _not_implemented_for("bernoulli_tensor_cpu_p_", self.dtype)
    if np.any(probs < 0) or np.any(probs > 1) or np.any(np.isnan(probs)):
        raise RuntimeError(ERR_PROBABILITY)
    draw = draw_rng(generator).random(self.shape) < probs
    return draw.astype(self.dtype)


def _check_std(std: Any) -> None:
    if isinstance(std, np.ndarray):
        if np.any(std < 0):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def normal_draw(mean: Any, std: Any, generator: Generator) -> np.ndarray:
    """Samples of N(mean, std**2), broadcast, in the tensors' dtype: the
    overloads normal.Tensor_float, float_Tensor and Tensor_Tensor."""
    arrays = [a for a in (mean, std) if isinstance(a, np.ndarray)]
    dtype = np.result_type(*arrays)
    if dtype.kind != "f":
        raise _not_implemented_for("normal_kernel_cpu", dtype)
    _check_std(std)
    shape = np.broadcast_shapes(np.shape(mean), np.shape(std))
    draw = draw_rng(generator).standard_normal(shape, dtype=_draw_dtype(dtype))
    return _shifted(draw, mean, std, dtype)


def normal_fill(
    self: np.ndarray, mean: float, std: float, generator: Generator
) -> np.ndarray:
    """normal_'s new values: self's shape and dtype, drawn afresh (in numpy,
    then moved to self's backend)."""
    dtype = backend.numpy_dtype(self)
    if dtype.kind != "f":
        raise _not_implemented_for("normal_kernel_cpu", dtype)
    _check_std(std)
    draw = draw_rng(generator).standard_normal(
        tuple(self.shape), dtype=_draw_dtype(dtype)
    )
    values = _shifted(draw, mean, std, dtype)
    return backend.like(values, self) if backend.is_foreign(self) else values


def _shifted(draw: np.ndarray, mean: Any, std: Any, dtype: np.dtype) -> np.ndarray:
    """mean + std * draw in `dtype`, computed in the draw's own array (it has
    the broadcast shape)."""
    np.multiply(draw, std, out=draw)
    np.add(draw, mean, out=draw)
    return draw.astype(dtype, copy=False)


def poisson_draw(self: np.ndarray, generator: Generator) -> np.ndarray:
    """A Poisson sample of each rate in self, in self's (float) dtype."""
    if self.dtype.kind != "f":
        raise _not_implemented_for("poisson_cpu", self.dtype)
    if np.any(self < 0) or np.any(np.isnan(self)):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return np.asarray(draw_rng(generator).poisson(self)).astype(self.dtype)


def _check_distribution(p: np.ndarray, num_samples: int, replacement: bool) -> None:
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if p.dtype.kind != "f":
        raise RuntimeError("multinomial only supports floating-point dtypes for input")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > p.shape[-1]:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise RuntimeError(
            "probability tensor contains either `inf`, `nan` or element < 0"
        )
    if np.any(p.sum(axis=-1) <= 0):
        raise RuntimeError(
            "invalid multinomial distribution (sum of probabilities <= 0)"
        )


def multinomial_draw(
    self: np.ndarray, num_samples: int, replacement: bool, generator: Generator
) -> np.ndarray:
    """Indices drawn from the categories of each row of `self` (weights, not
    necessarily normalised): int64, of shape (num_samples,) or (rows,
    num_samples). Without replacement it draws as PyTorch does: each category
    gets the key p / E with E exponential, and the `num_samples` largest keys
    win, so a category of probability 0 comes only after every other."""
    p = np.asarray(self)
    _check_distribution(p, num_samples, replacement)
    rows = p.reshape(-1, p.shape[-1]).astype(np.float64)
    rng = draw_rng(generator)
    if replacement:
        cdf = np.cumsum(rows, axis=1)
        u = rng.random((rows.shape[0], num_samples)) * cdf[:, -1:]
        picks = np.stack([np.searchsorted(c, r, side="right") for c, r in zip(cdf, u)])
        picks = np.minimum(picks, rows.shape[1] - 1)
    else:
        keys = rows / rng.exponential(size=rows.shape)
        picks = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    return picks.reshape(*p.shape[:-1], num_samples).astype(np.int64)
