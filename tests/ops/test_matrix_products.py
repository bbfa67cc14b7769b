"""The matrix products on operands of every rank from 0 to 3, compatible or not:
the same result shape as torch, or the same error text (the rank and size checks
of mm, mv, dot, bmm, outer, addmm, baddbmm, in PyTorch's order). Found by
tests/test_fuzz_ops.py: the kernels used to accept a vector where torch wants a
matrix."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

import yamlgrad as yg

torch = pytest.importorskip("torch")

SHAPES = [(), (3,), (4,), (2, 3), (3, 4), (4, 2), (2, 3, 4), (2, 4, 2), (3, 3, 4)]
OPS = {"mm": 2, "mv": 2, "dot": 2, "bmm": 2, "outer": 2, "addmm": 3, "baddbmm": 3}


def _outcome(f: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return ("ok", tuple(f().shape))
    except (RuntimeError, IndexError) as error:
        return (type(error).__name__, str(error))


@pytest.mark.parametrize("op", sorted(OPS))
def test_every_rank_combination_as_torch(op: str) -> None:
    mismatches = []
    for shapes in itertools.product(SHAPES, repeat=OPS[op]):
        want = _outcome(lambda: getattr(torch, op)(*[torch.ones(s) for s in shapes]))
        got = _outcome(lambda: getattr(yg, op)(*[yg.ones(s) for s in shapes]))
        if got != want:
            mismatches.append((shapes, got, want))
    assert not mismatches, mismatches[:5]
