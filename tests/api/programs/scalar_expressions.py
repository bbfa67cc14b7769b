"""Scalar expressions checked against autograd, as small autograd engines test
themselves: one-element double tensors made with the legacy constructor, relu,
powers, division, and the gradients of the leaves."""

import torch

x = torch.Tensor([-4.0]).double()
x.requires_grad = True
z = 2 * x + 2 + x
q = z.relu() + z * x
h = (z * z).relu()
y = h + q + q * x
y.backward()
xpt, ypt = x, y
print(f"y = {ypt.data.item():.6f}, dy/dx = {xpt.grad.item():.6f}")

a = torch.Tensor([-4.0]).double()
b = torch.Tensor([2.0]).double()
a.requires_grad = True
b.requires_grad = True
c = a + b
d = a * b + b**3
c = c + c + 1
c = c + 1 + c + (-a)
d = d + d * 2 + (b + a).relu()
d = d + 3 * d + (b - a).relu()
e = c - d
f = e**2
g = f / 2.0
g = g + 10.0 / f
g.backward()
apt, bpt, gpt = a, b, g
print(f"g = {gpt.data.item():.6f}")
print(f"dg/da = {apt.grad.item():.6f}, dg/db = {bpt.grad.item():.6f}")
print(type(g.grad_fn).__name__, x.grad.dtype, a.type())
values = [v.item() for v in (x.grad, a.grad, b.grad)]
