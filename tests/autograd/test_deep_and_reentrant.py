"""No recursion anywhere: a million-node chain; a backward inside a backward."""

from __future__ import annotations

import gc
import weakref

import numpy as np

import yamlgrad as yg


def test_a_million_node_chain_runs_forward_backward_and_is_freed() -> None:
    x = yg.tensor([1.0], dtype=yg.float64, requires_grad=True)
    y = x
    for _ in range(1_000_000):
        y = y * 1.0000001
    first = weakref.ref(y.grad_fn)
    y.backward(yg.ones(1, dtype=yg.float64))
    np.testing.assert_allclose(x.grad.numpy(), [1.0000001**1_000_000], rtol=1e-9)
    del y
    # Freed by reference counting alone (no cycles), without a RecursionError.
    assert first() is None
    gc.collect()


def test_backward_inside_a_hook_is_reentrant() -> None:
    x = yg.tensor([1.0, 2.0], requires_grad=True)
    inner_grads = []

    def hook(grad: yg.Tensor) -> yg.Tensor:
        z = yg.tensor([3.0], requires_grad=True)
        with yg.enable_grad():  # grad mode is off in a backward, as in PyTorch
            (z * z).sum().backward()  # a whole backward while the outer one runs
        inner_grads.append(z.grad.item())
        return grad * 2

    y = x * x
    y.register_hook(hook)
    y.sum().backward()
    assert inner_grads == [6.0]
    assert x.grad.tolist() == [4.0, 8.0]


def test_grad_inside_a_custom_backward_is_reentrant() -> None:
    class Twice(yg.autograd.Function):
        @staticmethod
        def forward(ctx, x):  # type: ignore[no-untyped-def]
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):  # type: ignore[no-untyped-def]
            (x,) = ctx.saved_tensors
            with yg.enable_grad():
                leaf = x.detach().requires_grad_()
                (inner,) = yg.autograd.grad((leaf * leaf).sum(), leaf)
            return grad * 2 + 0 * inner

    x = yg.tensor([1.0, 2.0], requires_grad=True)
    Twice.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
