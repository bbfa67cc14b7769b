"""Random number generators: `Generator` and `default_generator`, as torch's.

A leaf of the runtime (it imports none of it), so the wrappers can hand a
`Generator? generator` argument to a kernel as a Generator (the default one for
None, as PyTorch's get_generator_or_default does), and the factories and
libraries draw from the same streams.

Random numbers come from a numpy `Generator` (PCG64), not from PyTorch's Mersenne
Twister, so values differ from torch's; what matches is the contract: the same
seed gives the same numbers, `manual_seed` resets the default generator, and a
`Generator` object passed as `generator=` draws from its own stream.
"""

from __future__ import annotations

import operator

import numpy as np

# PyTorch's default CPU seed (`default_rng_seed_val`), so a fresh process repeats.
_DEFAULT_SEED = 67280421310721


class Generator:
    """A random number stream with a seed, as `torch.Generator`.

    >>> g = yg.Generator().manual_seed(0)
    >>> yg.rand(2, generator=g)
    """

    __slots__ = ("_seed", "_rng")

    def __init__(self, device: str = "cpu") -> None:
        if str(device) != "cpu":
            raise RuntimeError(f"yamlgrad has no device {device!r}; only 'cpu'")
        self._seed = _DEFAULT_SEED
        self._rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from `seed`; returns the generator itself."""
        seed = operator.index(seed)
        self._seed = seed
        # PCG64 needs a non-negative seed; torch accepts negative ones and wraps.
        self._rng = np.random.Generator(np.random.PCG64(seed % 2**64))
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        """Seed from fresh OS entropy; returns the new seed."""
        new_seed = int(np.random.SeedSequence().entropy) % 2**64
        self.manual_seed(new_seed)
        return new_seed

    @property
    def device(self) -> str:
        return "cpu"

    def __repr__(self) -> str:
        return "<yamlgrad.Generator>"


default_generator = Generator()
