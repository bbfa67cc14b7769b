"""The documented seed examples (the README's, PyTorch's autograd tutorial), exactly.

These are the only tests with hard-coded gradient values: the values are the
examples' own (a.grad == 36, b.grad == -12, every x.grad entry 4.5). Each example
also runs in torch, where it is installed, and must agree with it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import yamlgrad as yg


def _names(next_functions: tuple) -> tuple[tuple[str | None, int], ...]:
    """next_functions by class name: ((MulBackward0, 0), (None, 0))."""
    return tuple(
        (None if node is None else type(node).__name__, nr)
        for node, nr in next_functions
    )


def _q(lib: Any) -> tuple[Any, Any, Any]:
    a = lib.tensor(2.0, requires_grad=True)
    b = lib.tensor(6.0, requires_grad=True)
    return a, b, 3 * a**3 - b**2


def _xyz(lib: Any) -> tuple[Any, Any, Any, Any]:
    x = lib.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    return x, y, z, z.mean()


# -- Q = 3*a**3 - b**2 ---------------------------------------------------------------


def test_q_backward_gives_36_and_minus_12() -> None:
    a, b, q = _q(yg)
    q.backward(gradient=yg.tensor(1.0))
    assert a.grad.item() == 36.0
    assert b.grad.item() == -12.0
    assert a.grad.shape == () and b.grad.shape == ()
    assert a.grad.dtype == b.grad.dtype == yg.float32


def test_q_backward_without_gradient_is_the_same() -> None:
    a, b, q = _q(yg)
    q.backward()
    assert (a.grad.item(), b.grad.item()) == (36.0, -12.0)


def test_q_grad_returns_both_and_leaves_dot_grad_alone() -> None:
    a, b, q = _q(yg)
    ga, gb = yg.autograd.grad(q, [a, b])
    assert (ga.item(), gb.item()) == (36.0, -12.0)
    assert a.grad is None and b.grad is None


def test_q_graph_structure() -> None:
    a, b, q = _q(yg)
    assert type(q.grad_fn).__name__ == "SubBackward0"
    assert _names(q.grad_fn.next_functions) == (
        ("MulBackward0", 0),
        ("PowBackward0", 0),
    )
    three_a_cubed = q.grad_fn.next_functions[0][0]
    assert _names(three_a_cubed.next_functions) == (("PowBackward0", 0), (None, 0))
    b_squared = q.grad_fn.next_functions[1][0]
    assert _names(b_squared.next_functions) == (("AccumulateGrad", 0),)
    assert a.grad_fn is None and b.grad_fn is None
    assert a.is_leaf and b.is_leaf and not q.is_leaf


def test_q_subexpressions_have_the_documented_edges() -> None:
    a = yg.tensor(2.0, requires_grad=True)
    b = yg.tensor(6.0, requires_grad=True)
    assert _names((3 * a**3).grad_fn.next_functions) == (
        ("PowBackward0", 0),
        (None, 0),
    )
    assert _names((b**2).grad_fn.next_functions) == (("AccumulateGrad", 0),)


def test_accumulate_grad_variable_is_the_leaf() -> None:
    a, _, q = _q(yg)
    a_cubed = q.grad_fn.next_functions[0][0].next_functions[0][0]
    accumulate = a_cubed.next_functions[0][0]
    assert type(accumulate).__name__ == "AccumulateGrad"
    assert accumulate.variable is a
    assert accumulate.next_functions == ()
    # One AccumulateGrad per leaf, shared by every op that reads it.
    assert (a * 1).grad_fn.next_functions[0][0] is accumulate


def test_q_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    a, b, q = _q(yg)
    ta, tb, tq = _q(torch)
    assert q.item() == tq.item()
    assert _names(q.grad_fn.next_functions) == _names(tq.grad_fn.next_functions)
    for ours, theirs in zip(q.grad_fn.next_functions, tq.grad_fn.next_functions):
        assert _names(ours[0].next_functions) == _names(theirs[0].next_functions)
    q.backward(gradient=yg.tensor(1.0))
    tq.backward(gradient=torch.tensor(1.0))
    assert (a.grad.item(), b.grad.item()) == (ta.grad.item(), tb.grad.item())
    assert repr(a.grad) == repr(ta.grad) and repr(b.grad) == repr(tb.grad)


# -- x = ones(2, 2); y = x + 2; z = y * y * 3; out = z.mean() ----------------------------


def test_mean_example_gives_four_and_a_half_everywhere() -> None:
    x, y, z, out = _xyz(yg)
    out.backward()
    assert x.grad.shape == (2, 2) and x.grad.dtype == yg.float32
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 2), 4.5))
    assert out.item() == 27.0


def test_mean_example_nodes() -> None:
    x, y, z, out = _xyz(yg)
    assert type(y.grad_fn).__name__ == "AddBackward0"
    assert type(z.grad_fn).__name__ == "MulBackward0"
    assert type(out.grad_fn).__name__ == "MeanBackward0"
    assert _names(out.grad_fn.next_functions) == (("MulBackward0", 0),)
    assert _names(z.grad_fn.next_functions) == (("MulBackward0", 0), (None, 0))
    assert _names(y.grad_fn.next_functions) == (("AccumulateGrad", 0), (None, 0))
    assert repr(y) == "tensor([[3., 3.],\n        [3., 3.]], grad_fn=<AddBackward0>)"
    assert repr(out) == "tensor(27., grad_fn=<MeanBackward0>)"


def test_mean_example_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    x, y, z, out = _xyz(yg)
    tx, ty, tz, tout = _xyz(torch)
    for ours, theirs in ((y, ty), (z, tz), (out, tout)):
        assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
        assert _names(ours.grad_fn.next_functions) == _names(
            theirs.grad_fn.next_functions
        )
        assert repr(ours) == repr(theirs)
    out.backward()
    tout.backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    assert repr(x.grad) == repr(tx.grad)


# -- Python numbers --------------------------------------------------------------------


def test_times_a_number_is_mul_backward0_with_an_empty_edge() -> None:
    x = yg.ones(2, requires_grad=True)
    out = x * 2
    assert type(out.grad_fn).__name__ == "MulBackward0"
    assert _names(out.grad_fn.next_functions) == (("AccumulateGrad", 0), (None, 0))
    assert out.grad_fn.next_functions[1] == (None, 0)


def test_number_minus_tensor_is_rsub_backward1() -> None:
    x = yg.ones(2, requires_grad=True)
    out = 2 - x
    assert type(out.grad_fn).__name__ == "RsubBackward1"
    assert _names(out.grad_fn.next_functions) == (("AccumulateGrad", 0),)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), -np.ones(2))


@pytest.mark.parametrize(
    "expression",
    [
        pytest.param(lambda x: x * 2, id="x * 2"),
        pytest.param(lambda x: 2 - x, id="2 - x"),
    ],
)
def test_python_number_examples_match_torch(expression: Any) -> None:
    torch = pytest.importorskip("torch")
    out = expression(yg.ones(2, requires_grad=True))
    ref = expression(torch.ones(2, requires_grad=True))
    assert type(out.grad_fn).__name__ == type(ref.grad_fn).__name__
    assert _names(out.grad_fn.next_functions) == _names(ref.grad_fn.next_functions)
    assert repr(out) == repr(ref)
