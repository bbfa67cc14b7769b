"""Random number generators: `Generator` and `default_generator`, as torch's.

It sits just above the autograd core (its state is a uint8 Tensor, as
`torch.Generator.get_state`'s), so the wrappers can hand a `Generator? generator`
argument to a kernel as a Generator (the default one for None, as PyTorch's
get_generator_or_default does), and the factories and libraries draw from the
same streams.

Random numbers come from a numpy `Generator` (PCG64), not from PyTorch's Mersenne
Twister, so values differ from torch's; what matches is the contract: the same
seed gives the same numbers, `manual_seed` resets the default generator, and a
`Generator` object passed as `generator=` draws from its own stream.
"""

from __future__ import annotations

import operator

import numpy as np

from yamlgrad.runtime.autograd.tensor import Tensor

_STATE_BYTES = 48  # seed, PCG64's state and increment, its cached 32 bits

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
        seed = operator.index(seed) % 2**64  # PyTorch keeps it unsigned
        self._seed = seed
        # PCG64 needs a non-negative seed; torch accepts negative ones and wraps.
        self._rng = np.random.Generator(np.random.PCG64(seed % 2**64))
        return self

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        """The stream's position as a uint8 tensor, for `set_state`."""
        state = self._rng.bit_generator.state
        words = (
            (self._seed, 8),
            (state["state"]["state"], 16),
            (state["state"]["inc"], 16),
            (state["has_uint32"], 4),
            (state["uinteger"], 4),
        )
        raw = b"".join(value.to_bytes(size, "little") for value, size in words)
        return Tensor._make(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, new_state: Tensor) -> Generator:
        """Return to a position `get_state` gave; returns the generator itself."""
        if not isinstance(new_state, Tensor) or new_state._data.dtype != np.uint8:
            raise TypeError(
                "expected a torch.ByteTensor, but got " f"{type(new_state).__name__}"
            )
        raw = new_state._data.tobytes()
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(
                f"Expected a PCG64 generator state of size {_STATE_BYTES} but found "
                f"the input RNG state size to be {len(raw)}"
            )
        fields, offset = [], 0
        for size in (8, 16, 16, 4, 4):
            fields.append(int.from_bytes(raw[offset : offset + size], "little"))
            offset += size
        seed, position, inc, has_uint32, uinteger = fields
        bit_generator = np.random.PCG64()
        bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": position, "inc": inc},
            "has_uint32": has_uint32,
            "uinteger": uinteger,
        }
        self._seed, self._rng = seed, np.random.Generator(bit_generator)
        return self

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
