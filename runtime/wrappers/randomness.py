"""Where every random draw gets its numpy generator: `draw_rng(generator)`.

A factory (`yg.rand`), a sampler (`yg.multinomial`) and a YAML kernel with a
`Generator?` argument (`bernoulli`, `normal`) all draw through it, so the rules
of an open `vmap` (its `randomness=`) and of tracing apply to each of them.
"""

from __future__ import annotations

import numpy as np

from yamlgrad.runtime.errors import ERR_VMAP_DIFFERENT_RANDOMNESS, ERR_VMAP_RANDOM
from yamlgrad.runtime.generator import Generator, default_generator
from yamlgrad.runtime.wrappers.interposition import tracing

__all__ = ["draw_rng", "vmap_randomness"]

# The `randomness` of each open vmap, innermost last (runtime/func/vmap.py keeps
# it): every random draw passes through draw_rng, which applies the innermost one.
vmap_randomness: list[str] = []


def draw_rng(generator: Generator | None) -> np.random.Generator:
    """The numpy generator behind `generator` (the default one for None)."""
    if vmap_randomness and vmap_randomness[-1] != "same":
        raise RuntimeError(
            ERR_VMAP_RANDOM
            if vmap_randomness[-1] == "error"
            else ERR_VMAP_DIFFERENT_RANDOMNESS
        )
    if tracing.active:  # a draw would be baked into a compiled graph
        tracing.data_dependent("a random draw")
    return (generator if generator is not None else default_generator)._rng
