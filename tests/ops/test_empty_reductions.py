"""Reductions, scans and softmax over empty and 0-d tensors: the same result as
torch (values with nan where torch has nan) or the same error text. Reductions
without an identity (max, argmax, amax, the inf norm) refuse an empty reduced
dim as PyTorch does; sums, means, logsumexp and softmax give its empty or
identity results. Found by tests/fuzz/test_fuzz_ops.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg

torch = pytest.importorskip("torch")

INF = float("inf")
CALLS: dict[str, Callable[[Any, Any], Any]] = {
    "argmax": lambda L, x: L.argmax(x),
    "argmax 0": lambda L, x: L.argmax(x, 0),
    "argmax 1": lambda L, x: L.argmax(x, 1),
    "argmax -1": lambda L, x: L.argmax(x, -1),
    "argmin 0": lambda L, x: L.argmin(x, 0),
    "max": lambda L, x: L.max(x),
    "max 0": lambda L, x: L.max(x, 0),
    "max 1": lambda L, x: L.max(x, 1),
    "min": lambda L, x: L.min(x),
    "min 0": lambda L, x: L.min(x, 0),
    "amax": lambda L, x: L.amax(x),
    "amax 0": lambda L, x: L.amax(x, 0),
    "amax -1": lambda L, x: L.amax(x, -1),
    "amax 0, 0": lambda L, x: L.amax(x, (0, 0)),
    "amin 0": lambda L, x: L.amin(x, 0),
    "sum": lambda L, x: L.sum(x),
    "sum 0": lambda L, x: L.sum(x, 0),
    "mean": lambda L, x: L.mean(x),
    "mean 0": lambda L, x: L.mean(x, 0),
    "prod 0": lambda L, x: L.prod(x, 0),
    "var": lambda L, x: L.var(x),
    "std 0": lambda L, x: L.std(x, 0),
    "logsumexp 0": lambda L, x: L.logsumexp(x, 0),
    "logsumexp 1": lambda L, x: L.logsumexp(x, 1),
    "softmax 0": lambda L, x: L.softmax(x, 0),
    "softmax 1": lambda L, x: L.softmax(x, 1),
    "log_softmax 0": lambda L, x: L.log_softmax(x, 0),
    "cumsum 0": lambda L, x: L.cumsum(x, 0),
    "cumprod 1": lambda L, x: L.cumprod(x, 1),
    "norm": lambda L, x: L.norm(x),
    "vector_norm 2, 0": lambda L, x: _vector_norm(L, x, 2, 0),
    "vector_norm inf": lambda L, x: _vector_norm(L, x, INF),
    "vector_norm -inf": lambda L, x: _vector_norm(L, x, -INF),
    "vector_norm inf, 1": lambda L, x: _vector_norm(L, x, INF, 1),
    "all": lambda L, x: L.all(x),
    "all 1": lambda L, x: L.all(x, 1),
    "sum 1": lambda L, x: L.sum(x, 1),
    "mean -2": lambda L, x: L.mean(x, -2),
    "prod 1": lambda L, x: L.prod(x, 1),
    "var 1": lambda L, x: L.var(x, 1),
    "any 0": lambda L, x: L.any(x, 0),
}


def _vector_norm(L: Any, x: Any, ord: float, dim: Any = None) -> Any:
    if L is torch:
        return torch.linalg.vector_norm(x, ord, dim)
    return yg.linalg_vector_norm(x, ord, dim)


def _outcome(f: Callable[[], Any]) -> Any:
    try:
        out = f()
    except (RuntimeError, IndexError) as error:
        return (type(error).__name__, str(error))
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [(tuple(o.shape), o.detach().numpy().astype(float)) for o in outs]


@pytest.mark.parametrize("shape", [(0, 4), (4, 0), (0,), ()])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_empty_and_0d_as_torch(name: str, shape: tuple[int, ...]) -> None:
    got = _outcome(lambda: CALLS[name](yg, yg.ones(shape)))
    want = _outcome(lambda: CALLS[name](torch, torch.ones(shape)))
    if isinstance(want, tuple) or isinstance(got, tuple):
        assert got == want
        return
    assert [s for s, _ in got] == [s for s, _ in want]
    for (_, a), (_, b) in zip(got, want):
        np.testing.assert_array_equal(a, b)
