"""Autograd's basics as PyTorch's tutorials show them: requires_grad, grad_fn
and its saved values, vector-Jacobian products, no_grad and detach, retain_grad,
hooks, higher derivatives, anomaly mode."""

import numpy as np
import torch

a = torch.tensor([2.0, 3.0], requires_grad=True)
b = torch.tensor([6.0, 4.0], requires_grad=True)
Q = 3 * a**3 - b**2
external_grad = torch.tensor([1.0, 1.0])
Q.backward(gradient=external_grad, retain_graph=True)
print(a.grad, b.grad)
print(9 * a**2 == a.grad, -2 * b == b.grad)
print(type(Q.grad_fn).__name__, [type(f).__name__ for f, _ in Q.grad_fn.next_functions])
mul = Q.grad_fn.next_functions[0][0]
print(sorted(n for n in dir(mul) if n.startswith("_saved_")))
print(mul._saved_other, mul._saved_self)
power = mul.next_functions[0][0]
print(type(power).__name__, power._saved_exponent, power._saved_self)

# -- a one-layer network and its gradients -----------------------------------------------------
rng = np.random.default_rng(0)
x = torch.ones(5)
y = torch.zeros(3)
w = torch.tensor(rng.standard_normal((5, 3)), dtype=torch.float32, requires_grad=True)
bias = torch.tensor(rng.standard_normal(3), dtype=torch.float32, requires_grad=True)
z = torch.matmul(x, w) + bias
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print(f"Gradient function for z = {type(z.grad_fn).__name__}")
print(f"Gradient function for loss = {type(loss.grad_fn).__name__}")
loss.backward()
print(w.grad)
print(bias.grad)
print(z.requires_grad)
with torch.no_grad():
    z = torch.matmul(x, w) + bias
print(z.requires_grad)
z_det = (torch.matmul(x, w) + bias).detach()
print(z_det.requires_grad, z_det.is_leaf)

# -- vector-Jacobian products and repeated backward ---------------------------------------------
inp = torch.eye(4, 5, requires_grad=True)
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"Second call\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"Call after zeroing gradients\n{inp.grad}")

# -- retain_grad, hooks, leaves ----------------------------------------------------------------
u = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
v = u * u
v.retain_grad()
seen = []
v.register_hook(lambda g: seen.append(g.sum().item()))
h = v.register_hook(lambda g: g * 2)
(v.sum() * 3).backward()
print(u.is_leaf, v.is_leaf, v.grad, u.grad, seen)
h.remove()

# -- higher derivatives and relu's -------------------------------------------------------------
t = torch.tensor([0.5, -1.5, 2.0], requires_grad=True)
(g1,) = torch.autograd.grad((t**3).sum(), t, create_graph=True)
(g2,) = torch.autograd.grad(g1.sum(), t, create_graph=True)
(g3,) = torch.autograd.grad(g2.sum(), t)
print(g1, g2, g3)
r = torch.relu(t * 2)
(dr,) = torch.autograd.grad(r.sum(), t, create_graph=True)
(ddr,) = torch.autograd.grad(dr.sum(), t, allow_unused=True)
print(type(dr.grad_fn).__name__, ddr)
print(torch.is_anomaly_enabled())
with torch.autograd.detect_anomaly():
    print(torch.is_anomaly_enabled())
    torch.sigmoid(t).sum().backward()
print(t.grad)

# -- autograd.grad with the old keyword, and the Jacobian of a small function --------------------
(only,) = torch.autograd.grad((t * t).sum(), t, only_inputs=True)
print(only)
node = (t * t).sum().grad_fn
try:
    node(torch.tensor(1.0), torch.tensor(1.0))
except TypeError as e:
    print("TypeError:", e)
view = (t * 1)[:2]
try:
    view.detach_()
except RuntimeError as e:
    print("RuntimeError:", str(e)[:40])
