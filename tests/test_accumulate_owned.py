"""AccumulateGrad takes a leaf's first gradient as is when nothing else can see it
(PyTorch steals a gradient whose use_count is 1) and copies it otherwise."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.runtime import accumulate_grad


class _CountingNumpy:
    """numpy, with a count of the copies AccumulateGrad makes (np.array)."""

    def __init__(self) -> None:
        self.copies = 0

    def array(self, *args: Any, **kwargs: Any) -> Any:
        self.copies += 1
        return np.array(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> _CountingNumpy:
    proxy = _CountingNumpy()
    monkeypatch.setattr(accumulate_grad, "np", proxy)
    return proxy


def test_a_fresh_gradient_is_taken_without_a_copy(counting: _CountingNumpy) -> None:
    w = yg.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    x = yg.tensor(np.ones((2, 3)))
    (x @ w).sum().backward()  # mm's mat2 gradient is a fresh array
    assert counting.copies == 0
    np.testing.assert_array_equal(w.grad.numpy(), np.full((3, 4), 2.0))


def test_a_gradient_that_flows_to_two_leaves_is_copied_for_one(
    counting: _CountingNumpy,
) -> None:
    a = yg.tensor(np.ones(3), requires_grad=True)
    b = yg.tensor(np.ones(3), requires_grad=True)
    (a * 2.0 + b * 1.0).sum().backward()  # mul's results are fresh: no copy
    assert counting.copies == 0
    c = yg.tensor(np.ones(3), requires_grad=True)
    d = yg.tensor(np.ones(3), requires_grad=True)
    ((c + d) * 2.0).sum().backward()  # add hands mul's fresh array to both
    assert counting.copies == 1
    assert not np.shares_memory(c.grad.numpy(), d.grad.numpy())
    c.grad.numpy()[:] = 7.0  # the grads are independent
    np.testing.assert_array_equal(d.grad.numpy(), np.full(3, 2.0))


def test_a_users_seed_gradient_is_never_taken(counting: _CountingNumpy) -> None:
    x = yg.tensor(np.zeros(3), requires_grad=True)
    seed = yg.tensor(np.array([1.0, 2.0, 3.0]))
    x.backward(seed)  # the leaf's own gradient: the seed itself reaches it
    assert counting.copies == 1
    assert not np.shares_memory(x.grad.numpy(), seed.numpy())
    x.backward(seed)  # accumulated in place into .grad, never into the seed
    np.testing.assert_array_equal(seed.numpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_a_view_or_a_broadcast_is_copied(counting: _CountingNumpy) -> None:
    x = yg.tensor(np.ones((2, 3)), requires_grad=True)
    x.sum().backward()  # sum's gradient is a broadcast of the seed: read-only
    assert counting.copies == 1
    x.grad.numpy()[0, 0] = 5.0  # writeable, and only x's
    y = yg.tensor(np.ones((2, 3)), requires_grad=True)
    (y.t() * 3.0).sum().backward()
    assert counting.copies == 2  # mul's fresh result, seen through t()'s view
    np.testing.assert_array_equal(y.grad.numpy(), np.full((2, 3), 3.0))
