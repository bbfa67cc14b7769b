"""gather, scatter and scatter_add over inputs, indices and sources of many ranks
and sizes, in range or not, empty or not: the same values as torch, or the same
error text (PyTorch's shape checks and index bounds, in its order). Found by
tests/test_fuzz_ops.py: an index out of bounds was a bare numpy IndexError."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg

torch = pytest.importorskip("torch")

INPUTS = [(), (3,), (3, 4), (2, 3, 4)]
INDICES = [
    [0],
    [[3]],
    [[-1]],
    [[0, 1, 2, 3, 4]],
    [[1], [2]],
    [[[0]]],
    0,
    [],
    [[0, 1], [2, 0]],
]
SOURCES = [None, (), (1, 1), (2, 2), (3, 5), (1,)]


def _outcome(op: str, shape: tuple, index: Any, dim: int, src: Any, lib: Any) -> Any:
    try:
        x = lib.tensor(np.arange(float(np.prod(shape))).reshape(shape))
        i = lib.tensor(np.array(index, dtype=np.int64))
        if op == "gather":
            out = x.gather(dim, i)
        else:
            s = 2.5 if src is None else lib.tensor(np.full(src, 100.0))
            out = getattr(x, op)(dim, i, s)
    except (RuntimeError, IndexError) as error:
        return (type(error).__name__, str(error))
    return (tuple(out.shape), out.numpy().tolist())


@pytest.mark.parametrize("op", ["gather", "scatter", "scatter_add"])
def test_every_shape_combination_as_torch(op: str) -> None:
    sources = [None] if op == "gather" else SOURCES
    if op == "scatter_add":
        sources = [s for s in SOURCES if s is not None]
    mismatches = []
    for shape, index, dim, src in itertools.product(
        INPUTS, INDICES, (0, 1, -1), sources
    ):
        got = _outcome(op, shape, index, dim, src, yg)
        want = _outcome(op, shape, index, dim, src, torch)
        if got != want:
            mismatches.append((shape, index, dim, src, got, want))
    assert not mismatches, mismatches[:3]
