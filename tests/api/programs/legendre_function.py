"""A cubic Legendre polynomial fit through a custom autograd.Function, checked
with gradcheck and gradgradcheck, in the style of PyTorch's examples."""

import math

import numpy as np
import torch
from torch.autograd import Function
from torch.autograd.function import once_differentiable
from torch.autograd.gradcheck import gradcheck, gradgradcheck


class LegendrePolynomial3(Function):
    """P3(x) = (5x^3 - 3x) / 2, with its backward written by hand."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input**3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input**2 - 1)


class ScaledSquare(Function):
    """(x * k)^2 with a non-tensor argument k (its gradient is None)."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        ctx.save_for_backward(x)
        return (x * k) ** 2

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 2 * ctx.k * ctx.k * x, None


rng = np.random.default_rng(1)
dtype = torch.float
x = torch.linspace(-math.pi, math.pi, 200, dtype=dtype)
y = torch.sin(x)
a, b, c, d = (
    torch.full((), v, dtype=dtype, requires_grad=True) for v in (0.0, -1.0, 0.0, 0.3)
)
learning_rate = 5e-6
for t in range(400):
    P3 = LegendrePolynomial3.apply
    y_pred = a + b * P3(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, f"{loss.item():.4f}")
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
print(
    f"Result: y = {a.item():.5f} + {b.item():.5f} * P3({c.item():.5f} + {d.item():.5f} x)"
)
print(type(y_pred.grad_fn).__name__, type(P3(x.requires_grad_()).grad_fn).__name__)

inputs = [torch.tensor(rng.standard_normal(5), dtype=torch.double, requires_grad=True)]
print("gradcheck:", gradcheck(LegendrePolynomial3.apply, inputs, eps=1e-6, atol=1e-4))
print("gradgradcheck:", gradgradcheck(LegendrePolynomial3.apply, inputs))
print("list:", torch.autograd.gradcheck(lambda t: t.sin().sum(), inputs))

s = torch.tensor(rng.standard_normal(4), requires_grad=True)
out = ScaledSquare.apply(s, 3.0)
out.sum().backward()
scaled_grad = s.grad.clone()
print("scaled:", scaled_grad)
(g,) = torch.autograd.grad(ScaledSquare.apply(s, 2.0).sum(), s)
print("grad:", g)
