"""Sampling as torch spells it: multinomial, bernoulli, normal, poisson, the
in-place samplers and Generator state. The numbers are not torch's (another
generator); shapes, dtypes, errors, distributions and seeded repeats are."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg


def _same_error(ours: Callable[[], Any], theirs: Callable[[], Any]) -> None:
    with pytest.raises(Exception) as expected:
        theirs()
    with pytest.raises(type(expected.value)) as got:
        ours()
    assert str(got.value) == str(expected.value)


def test_multinomial_shapes_dtype_and_frequencies() -> None:
    g = yg.Generator().manual_seed(0)
    weights = yg.tensor([1.0, 0.0, 3.0])
    draws = yg.multinomial(weights, 20000, replacement=True, generator=g)
    assert draws.dtype == yg.int64 and draws.shape == (20000,)
    counts = np.bincount(draws.numpy(), minlength=3) / 20000
    np.testing.assert_allclose(counts, [0.25, 0.0, 0.75], atol=0.02)
    rows = yg.multinomial(yg.ones(4, 6), 6, generator=g)
    assert rows.shape == (4, 6)
    assert all(sorted(r) == list(range(6)) for r in rows.tolist())
    # Without replacement a zero-weight category comes after every other.
    assert sorted(yg.multinomial(yg.tensor([1.0, 0.0]), 2).tolist()) == [0, 1]
    assert yg.multinomial(yg.tensor([0.0, 1.0, 0.0]), 1).item() == 1
    assert weights.multinomial(2, True).shape == (2,)


def test_multinomial_without_replacement_prefers_heavy_categories() -> None:
    g = yg.Generator().manual_seed(1)
    firsts = [
        yg.multinomial(yg.tensor([8.0, 1.0, 1.0]), 2, generator=g)[0].item()
        for _ in range(2000)
    ]
    assert abs(np.mean(np.array(firsts) == 0) - 0.8) < 0.04


def test_multinomial_errors_as_torch() -> None:
    torch = pytest.importorskip("torch")
    for args in (
        ([0.0, 0.0], 1),
        ([1.0, 0.0], 3),
        ([1.0, -1.0], 1),
        ([[[1.0]]], 1),
        ([1.0, float("nan")], 1),
    ):
        _same_error(
            lambda: yg.multinomial(yg.tensor(args[0]), args[1]),
            lambda: torch.multinomial(torch.tensor(args[0]), args[1]),
        )


def test_seeds_repeat_and_generators_are_independent() -> None:
    yg.manual_seed(5)
    first = yg.multinomial(yg.ones(10), 5), yg.bernoulli(yg.full((6,), 0.5))
    yg.manual_seed(5)
    second = yg.multinomial(yg.ones(10), 5), yg.bernoulli(yg.full((6,), 0.5))
    assert all(yg.equal(a, b) for a, b in zip(first, second))
    g = yg.Generator().manual_seed(5)
    state = g.get_state()
    assert state.dtype == yg.uint8
    a = yg.normal(0.0, 1.0, (4,), generator=g)
    g.set_state(state)
    assert yg.equal(a, yg.normal(0.0, 1.0, (4,), generator=g))
    saved = yg.get_rng_state()
    b = yg.rand(3)
    yg.set_rng_state(saved)
    assert yg.equal(b, yg.rand(3))
    assert yg.Generator().manual_seed(-1).initial_seed() == 2**64 - 1
    with pytest.raises(RuntimeError, match="size"):
        g.set_state(yg.zeros(3, dtype=yg.uint8))


def test_bernoulli_and_normal_overloads() -> None:
    torch = pytest.importorskip("torch")
    g = yg.Generator().manual_seed(2)
    p = yg.full((4000,), 0.3, dtype=yg.float64)
    coins = yg.bernoulli(p, generator=g)
    assert coins.dtype == yg.float64 and set(coins.tolist()) <= {0.0, 1.0}
    assert abs(coins.mean().item() - 0.3) < 0.03
    assert abs(yg.bernoulli(p, 0.9, generator=g).mean().item() - 0.9) < 0.03
    cases = [
        (
            lambda m: m.normal(yg.zeros(2, 1), 2.0),
            lambda t: t.normal(t.zeros(2, 1), 2.0),
        ),
        (lambda m: m.normal(1.0, m.ones(3)), lambda t: t.normal(1.0, t.ones(3))),
        (
            lambda m: m.normal(m.zeros(2, 1, dtype=m.float64), m.ones(3)),
            lambda t: t.normal(t.zeros(2, 1, dtype=t.float64), t.ones(3)),
        ),
        (lambda m: m.normal(0.0, 1.0, (2, 3)), lambda t: t.normal(0.0, 1.0, (2, 3))),
        (lambda m: m.normal(0, 1, size=(2,)), lambda t: t.normal(0, 1, size=(2,))),
    ]
    for ours, theirs in cases:
        out, ref = ours(yg), theirs(torch)
        assert out.shape == tuple(ref.shape) and out.dtype.name == str(ref.dtype)[6:]
    wide = yg.normal(3.0, 2.0, (20000,), generator=g)
    assert abs(wide.mean().item() - 3.0) < 0.06 and abs(wide.std().item() - 2.0) < 0.06
    _same_error(
        lambda: yg.normal(yg.zeros(2), -1.0), lambda: torch.normal(torch.zeros(2), -1.0)
    )
    _same_error(
        lambda: yg.bernoulli(yg.tensor([1.5])),
        lambda: torch.bernoulli(torch.tensor([1.5])),
    )


def test_in_place_samplers() -> None:
    g = yg.Generator().manual_seed(3)
    x = yg.zeros(5000)
    assert x.uniform_(-2.0, 2.0, generator=g) is x and x.min() >= -2 and x.max() < 2
    assert abs(x.mean().item()) < 0.1 and x._version == 1
    assert abs(x.normal_(1.0, 0.5, generator=g).std().item() - 0.5) < 0.03
    assert abs(x.exponential_(2.0, generator=g).mean().item() - 0.5) < 0.03
    assert set(x.bernoulli_(0.5, generator=g).tolist()) == {0.0, 1.0}
    assert set(x.random_(0, 3, generator=g).tolist()) == {0.0, 1.0, 2.0}
    assert set(yg.zeros(100, dtype=yg.int64).random_(4).tolist()) <= {0, 1, 2, 3}
    leaf = yg.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.uniform_()
    with yg.no_grad():
        leaf.normal_()
    assert yg.poisson(
        yg.full((3000,), 4.0), generator=g
    ).mean().item() == pytest.approx(4, abs=0.15)


def test_like_factories_and_randperm() -> None:
    x = yg.zeros(2, 3, dtype=yg.float64)
    assert yg.rand_like(x).dtype == yg.float64 and yg.randn_like(x).shape == (2, 3)
    assert yg.randint_like(x, 3, 5).min() >= 3
    g = yg.Generator().manual_seed(4)
    perm = yg.randperm(7, generator=g)
    assert perm.dtype == yg.int64 and sorted(perm.tolist()) == list(range(7))
    assert yg.randperm(4, dtype=yg.float32).dtype == yg.float32
