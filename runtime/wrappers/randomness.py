"""Where every random draw gets its numpy generator: `draw_rng(generator)`.

A factory (`yg.rand`), a sampler (`yg.multinomial`) and a YAML kernel with a
`Generator?` argument (`bernoulli`, `normal`) all draw through it, so the rules
of an open `vmap` (its `randomness=`) and of tracing apply to each of them, as
functorch's batching rules for random ops apply them:

* "error": any draw raises.
* "same": one draw for every sample; an op that takes a batched tensor (a
  bernoulli of batched probabilities) raises, as in PyTorch.
* "different": each sample its own draw. An op whose inputs are batched runs
  through a batching rule, which draws for the whole batch (or per sample); so
  does a YAML random op (`bernoulli`, `normal`) of unbatched tensors, whose
  wrapper interposes (`random=True`) and whose first tensor the handler expands
  along the batch; a factory (`rand`, `randn_like`, ...) asks
  `different_batch()` and draws with the batch dim in front, then `wrap_batched`
  hides it; a sampler of runtime/sampling.py given a batched tensor runs once per
  sample (`per_sample`). An in-place sampler of an unbatched tensor raises, as
  in PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from yamlgrad.runtime.errors import (
    ERR_VMAP_DIFFERENT_RANDOMNESS,
    ERR_VMAP_RANDOM,
    ERR_VMAP_SAME_RANDOMNESS_BATCHED,
)
from yamlgrad.runtime.generator import Generator, default_generator
from yamlgrad.runtime.wrappers.interposition import tracing

__all__ = [
    "draw_rng",
    "different_batch",
    "per_sample",
    "rule_levels",
    "vmap_randomness",
    "wrap_batched",
]

# Each open vmap as (randomness, level, batch size), innermost last
# (runtime/func/vmap.py keeps it): a draw applies the innermost one's rule.
vmap_randomness: list[tuple[str, int, int]] = []
# The vmap levels whose batching rule is running an op now (runtime/func's
# batching_rules.handle keeps it): a draw there is a draw for batched inputs.
rule_levels: list[int] = []
# How a factory hides the batch dim of its draws: runtime/func's BatchedTensor
# at a level (set by runtime/func/vmap.py, which the wrappers may not import).
wrap_batched: list[Callable[[Any, int], Any]] = []
# How a sampler written in Python (runtime/sampling.py) runs on batched tensors:
# runtime/func's batching handler with the loop-and-stack fallback.
per_sample: list[Callable[..., Any]] = []


def different_batch() -> tuple[int, int] | None:
    """(level, size) of the innermost vmap when it asks a draw per sample of an
    op outside its batching rules (a factory); None otherwise."""
    if not vmap_randomness:
        return None
    randomness, level, size = vmap_randomness[-1]
    if randomness != "different" or level in rule_levels:
        return None
    return level, size


def draw_rng(
    generator: Generator | None, *, per_sample: bool = False
) -> np.random.Generator:
    """The numpy generator behind `generator` (the default one for None).
    `per_sample`: the caller draws a batch dim of its own ("different")."""
    if vmap_randomness:
        randomness, level, _ = vmap_randomness[-1]
        batched = level in rule_levels
        if randomness == "error":
            raise RuntimeError(ERR_VMAP_RANDOM)
        if randomness == "same" and batched:
            raise RuntimeError(ERR_VMAP_SAME_RANDOMNESS_BATCHED)
        if randomness == "different" and not (batched or per_sample):
            raise RuntimeError(ERR_VMAP_DIFFERENT_RANDOMNESS)
    if tracing.active:  # a draw would be baked into a compiled graph
        tracing.data_dependent("a random draw")
    return (generator if generator is not None else default_generator)._rng
