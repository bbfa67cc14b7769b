"""AccumulateGrad takes a leaf's first gradient as is when nothing else can see it
(PyTorch steals a gradient whose use_count is 1) and copies it otherwise."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.runtime.autograd import accumulate_grad


class _CountingNumpy:
    """numpy, with a count of the copies AccumulateGrad makes (np.copyto into an
    array laid out as the leaf)."""

    def __init__(self) -> None:
        self.copies = 0

    def copyto(self, *args: Any, **kwargs: Any) -> Any:
        self.copies += 1
        return np.copyto(*args, **kwargs)

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


@pytest.mark.parametrize(
    "bias_shape", [(4,), (1, 4), (3, 1), ()], ids=["lead", "kept", "column", "0-d"]
)
def test_a_broadcast_leafs_reduced_gradient_is_taken_without_a_copy(
    counting: _CountingNumpy, bias_shape: tuple[int, ...]
) -> None:
    """The sum that undoes a broadcast gives an array of its own in the leaf's
    shape (not a reshaped view), which the leaf takes as is."""
    bias = yg.tensor(np.zeros(bias_shape), requires_grad=True)
    h = yg.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    ((h * 2.0) + bias).sum().backward()
    assert counting.copies == 0
    expected = np.broadcast_to(np.ones((3, 4)), (3, 4)).sum(
        axis=tuple(range(2 - len(bias_shape)))
        + tuple(2 - len(bias_shape) + i for i, s in enumerate(bias_shape) if s == 1),
    )
    np.testing.assert_array_equal(bias.grad.numpy().ravel(), expected.ravel())
    assert bias.grad.shape == bias_shape
    assert bias.grad.numpy().base is None


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


@pytest.mark.parametrize("order", ["shared first", "shared last"])
def test_a_gradient_held_by_two_buffers_is_never_summed_into(order: str) -> None:
    """add hands one array to p's and q's buffers; p's buffer also gets another
    gradient. Summing into the shared array in place would change q's too."""
    x = yg.tensor(np.ones(4), requires_grad=True)
    p, q = x * 2.0, x * 5.0
    shared = ((p + q) * 1.0).sum()
    other = (p * 3.0).sum()
    loss = shared + other if order == "shared first" else other + shared
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(4, 2.0 * (1 + 3) + 5.0))


def test_a_fresh_gradient_in_a_buffer_takes_the_next_one_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """mul's two fresh gradients for one input (d * d) are summed into the
    first, with no new array; the values are unchanged."""
    sums = []
    real_add = np.add

    class _Numpy:
        def add(self, *args: Any, **kwargs: Any) -> Any:
            sums.append("out" in kwargs)
            return real_add(*args, **kwargs)

        def __getattr__(self, name: str) -> Any:
            return getattr(np, name)

    from yamlgrad.runtime.autograd import engine

    monkeypatch.setattr(engine, "np", _Numpy())
    d = yg.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    e = d * 1.0
    ((e * e) * 1.0).sum().backward()
    assert sums == [True]
    np.testing.assert_array_equal(d.grad.numpy(), [2.0, 4.0, 6.0])


# -- The gradient layout contract ------------------------------------------------------


def _element_strides(array: np.ndarray) -> tuple[int, ...]:
    return tuple(s // array.itemsize for s in array.strides)


LAYOUT_CASES = {
    "linear": (lambda lib: lib.nn.Linear(12, 5), (7, 12)),
    "conv2d": (lambda lib: lib.nn.Conv2d(3, 4, 3), (2, 3, 6, 6)),
    "embedding": (lambda lib: lib.nn.Embedding(10, 4), None),
    "batch_norm": (lambda lib: lib.nn.BatchNorm2d(3), (2, 3, 4, 4)),
}


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("name", sorted(LAYOUT_CASES))
def test_a_parameters_grad_has_the_parameters_layout_as_in_torch(
    name: str, compiled: bool
) -> None:
    """PyTorch's AccumulateGrad stores a dense parameter's gradient with the
    parameter's strides: Linear's weight gradient (mm's result of x.T @ g, column-
    major) is row-major in .grad, as the weight is."""
    torch = pytest.importorskip("torch")
    make, shape = LAYOUT_CASES[name]
    ours, theirs = make(yg), make(torch)
    if shape is None:
        x, t = yg.tensor([1, 2, 2, 7]), torch.tensor([1, 2, 2, 7])
    else:
        data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        x, t = yg.tensor(data), torch.tensor(data)
    run = yg.compile(lambda v: ours(v).sum()) if compiled else lambda v: ours(v).sum()
    run(x).backward()
    theirs(t).sum().backward()
    for (key, p), q in zip(ours.named_parameters(), theirs.parameters()):
        assert _element_strides(p.grad._data) == q.grad.stride(), key


def test_a_transposed_leafs_grad_is_laid_out_as_the_leaf() -> None:
    torch = pytest.importorskip("torch")
    data = np.arange(12.0).reshape(4, 3)
    w = yg.tensor(data).t().requires_grad_()
    v = torch.tensor(data).t().requires_grad_()
    (w * 2).sum().backward()
    (v * 2).sum().backward()
    assert _element_strides(w.grad._data) == v.grad.stride() == (1, 3)
    np.testing.assert_array_equal(w.grad._data, v.grad.numpy())
