"""Custom autograd.Function, and the public gradcheck / gradgradcheck."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import yamlgrad as yg


class Exp(yg.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: yg.Tensor) -> yg.Tensor:
        result = x.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx: Any, grad: yg.Tensor) -> yg.Tensor:
        (result,) = ctx.saved_tensors
        return grad * result


OurExp = Exp


class ScaledAdd(yg.autograd.Function):
    """x + alpha * y, with a non-tensor argument in the middle."""

    @staticmethod
    def forward(ctx: Any, x: yg.Tensor, alpha: float, y: yg.Tensor) -> yg.Tensor:
        ctx.alpha = alpha
        ctx.seen_needs = ctx.needs_input_grad
        return x + alpha * y

    @staticmethod
    def backward(ctx: Any, grad: yg.Tensor) -> tuple:
        return grad, None, grad * ctx.alpha


class SortValues(yg.autograd.Function):
    """(values, indices) with indices non-differentiable; grads not materialized."""

    @staticmethod
    def forward(ctx: Any, x: yg.Tensor) -> tuple:
        order = np.argsort(x.detach().numpy())
        values = yg.tensor(x.detach().numpy()[order], dtype=x.dtype)
        indices = yg.tensor(order)
        ctx.mark_non_differentiable(indices)
        ctx.set_materialize_grads(False)
        ctx.order = order
        return values, indices

    @staticmethod
    def backward(ctx: Any, grad_values: Any, grad_indices: Any) -> yg.Tensor:
        assert grad_indices is None
        out = np.zeros_like(grad_values.detach().numpy())
        out[ctx.order] = grad_values.detach().numpy()
        return yg.tensor(out)


def test_function_records_its_own_node_and_gives_exp_gradients() -> None:
    x = yg.tensor([0.5, 1.0, -1.0], dtype=yg.float64, requires_grad=True)
    y = Exp.apply(x)
    assert type(y.grad_fn).__name__ == "ExpBackward"
    assert y.grad_fn.name() == "ExpBackward"
    assert y.grad_fn.next_functions[0][0].variable is x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, 1.0, -1.0]))


def test_function_is_differentiable_twice() -> None:
    x = yg.tensor([0.5, 1.0], dtype=yg.float64, requires_grad=True)
    assert yg.autograd.gradcheck(Exp.apply, (x,))
    assert yg.autograd.gradgradcheck(Exp.apply, (x,))


def test_needs_input_grad_and_non_tensor_arguments() -> None:
    x = yg.tensor([1.0, 2.0], requires_grad=True)
    y = yg.tensor([3.0, 4.0])
    out = ScaledAdd.apply(x, 2.0, y)
    assert out.grad_fn.seen_needs == (True, False, False)
    assert len(out.grad_fn.next_functions) == 2  # one edge per tensor argument
    assert out.grad_fn.next_functions[1] == (None, 0)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


def test_non_differentiable_outputs_and_unmaterialized_grads() -> None:
    x = yg.tensor([3.0, 1.0, 2.0], dtype=yg.float64, requires_grad=True)
    values, indices = SortValues.apply(x)
    assert values.requires_grad and not indices.requires_grad
    (values * yg.tensor([1.0, 10.0, 100.0], dtype=yg.float64)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [100.0, 1.0, 10.0])


def test_wrong_number_of_gradients_is_refused() -> None:
    class TooMany(yg.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: yg.Tensor) -> yg.Tensor:
            return x * 2

        @staticmethod
        def backward(ctx: Any, grad: yg.Tensor) -> tuple:
            return grad, grad

    x = yg.tensor([1.0], requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"returned an incorrect number of gradients \(expected 1, got 2\)",
    ):
        TooMany.apply(x).sum().backward()


def test_saved_tensor_modified_in_place_is_detected() -> None:
    class Square(yg.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: yg.Tensor) -> yg.Tensor:
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx: Any, grad: yg.Tensor) -> yg.Tensor:
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = yg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    out = Square.apply(y)
    y.version_counter.bump()
    with pytest.raises(
        RuntimeError, match="is at version 1; expected version 0 instead"
    ):
        out.sum().backward()


def test_once_differentiable_backward_is_not_recorded() -> None:
    class Cube(yg.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: yg.Tensor) -> yg.Tensor:
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        @yg.autograd.function.once_differentiable
        def backward(ctx: Any, grad: yg.Tensor) -> yg.Tensor:
            (x,) = ctx.saved_tensors
            return 3 * x * x * grad

    x = yg.tensor([1.0, 2.0], dtype=yg.float64, requires_grad=True)
    (g,) = yg.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    assert not g.requires_grad
    np.testing.assert_allclose(g.numpy(), [3.0, 12.0])
    with pytest.raises(yg.autograd.GradcheckError):
        yg.autograd.gradgradcheck(Cube.apply, (x,))


def test_function_matches_torch_custom_function() -> None:
    torch = pytest.importorskip("torch")
    ours = OurExp

    class Exp(torch.autograd.Function):  # the same name: both nodes are ExpBackward
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            result = x.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (result,) = ctx.saved_tensors
            return grad * result

    value = np.array([0.3, -0.7, 1.1])
    x = yg.tensor(value, requires_grad=True)
    t = torch.tensor(value, requires_grad=True)
    y, r = ours.apply(x), Exp.apply(t)
    assert type(y.grad_fn).__name__ == type(r.grad_fn).__name__ == "ExpBackward"
    (y * y).sum().backward()
    (r * r).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_gradcheck_finds_a_wrong_backward() -> None:
    class WrongSin(yg.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: yg.Tensor) -> yg.Tensor:
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx: Any, grad: yg.Tensor) -> yg.Tensor:
            (x,) = ctx.saved_tensors
            return grad * x.sin()  # should be cos

    x = yg.tensor([0.1, 0.7], dtype=yg.float64, requires_grad=True)
    with pytest.raises(
        yg.autograd.GradcheckError,
        match="Jacobian mismatch for output 0 with respect to input 0",
    ):
        yg.autograd.gradcheck(WrongSin.apply, (x,))
    assert yg.autograd.gradcheck(WrongSin.apply, (x,), raise_exception=False) is False


def test_gradcheck_checks_ops_with_several_inputs_and_warns_on_float32() -> None:
    rng = np.random.default_rng(0)
    a = yg.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = yg.tensor(rng.uniform(0.5, 2.0, (3,)), requires_grad=True)
    assert yg.autograd.gradcheck(lambda x, y: x * y.log() + x / y, (a, b))
    assert yg.autograd.gradgradcheck(lambda x, y: (x * y).tanh(), (a, b))
    with pytest.warns(UserWarning, match="not a double precision"):
        yg.autograd.gradcheck(
            lambda x: x * 2, (yg.ones(2, requires_grad=True),), raise_exception=False
        )
