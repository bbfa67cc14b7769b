"""Fit y = sin(x) with a cubic, five ways: numpy, tensors with a hand-written
backward, autograd, nn with a hand-written update, and optim with a Module.

A PyTorch program: tests/api/test_programs.py runs it with torch and with
yamlgrad imported as torch and compares what both print and keep. Starting
weights come from numpy, so both runs start from the same numbers.
"""

import math

import numpy as np
import torch

rng = np.random.default_rng(0)
start = rng.standard_normal(4)

# -- numpy ---------------------------------------------------------------------------
x_np = np.linspace(-math.pi, math.pi, 200)
y_np = np.sin(x_np)
a, b, c, d = start
learning_rate = 1e-5
for t in range(300):
    y_pred = a + b * x_np + c * x_np**2 + d * x_np**3
    loss_np = np.square(y_pred - y_np).sum()
    grad_y_pred = 2.0 * (y_pred - y_np)
    a -= learning_rate * grad_y_pred.sum()
    b -= learning_rate * (grad_y_pred * x_np).sum()
    c -= learning_rate * (grad_y_pred * x_np**2).sum()
    d -= learning_rate * (grad_y_pred * x_np**3).sum()
print(f"numpy: loss {loss_np:.6f}, y = {a:.5f} + {b:.5f} x + {c:.5f} x^2 + {d:.5f} x^3")

# -- tensors, backward by hand -----------------------------------------------------------
dtype = torch.float
device = torch.device("cpu")
x = torch.linspace(-math.pi, math.pi, 200, device=device, dtype=dtype)
y = torch.sin(x)
a, b, c, d = (torch.tensor(v, device=device, dtype=dtype) for v in start)
for t in range(300):
    y_pred = a + b * x + c * x**2 + d * x**3
    loss = (y_pred - y).pow(2).sum().item()
    if t % 100 == 99:
        print(t, round(loss, 4))
    grad_y_pred = 2.0 * (y_pred - y)
    a -= learning_rate * grad_y_pred.sum()
    b -= learning_rate * (grad_y_pred * x).sum()
    c -= learning_rate * (grad_y_pred * x**2).sum()
    d -= learning_rate * (grad_y_pred * x**3).sum()
manual = [a.item(), b.item(), c.item(), d.item()]
print(f"tensors: y = {a.item():.5f} + {b.item():.5f} x + {c.item():.5f} x^2")

# -- autograd ------------------------------------------------------------------------------
a, b, c, d = (
    torch.tensor(v, dtype=dtype, device=device, requires_grad=True) for v in start
)
for t in range(300):
    y_pred = a + b * x + c * x**2 + d * x**3
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
        c.grad.zero_()
        d.grad.zero_()
autograd_coefficients = torch.stack([a, b, c, d]).detach()
print(f"autograd: {autograd_coefficients}")

# -- nn ------------------------------------------------------------------------------------
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)
model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
with torch.no_grad():
    model[0].weight.copy_(torch.tensor(start[1:], dtype=dtype).view(1, 3))
    model[0].bias.fill_(float(start[0]))
loss_fn = torch.nn.MSELoss(reduction="sum")
for t in range(300):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, f"{loss.item():.4f}")
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for param in model.parameters():
            param -= 1e-5 * param.grad
linear_layer = model[0]
print(
    f"nn: y = {linear_layer.bias.item():.5f} + {linear_layer.weight[:, 0].item():.5f} x"
    f" + {linear_layer.weight[:, 1].item():.5f} x^2"
    f" + {linear_layer.weight[:, 2].item():.5f} x^3"
)


# -- optim and a custom Module ---------------------------------------------------------------
class Polynomial3(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor(start[0], dtype=torch.float32))
        self.b = torch.nn.Parameter(torch.tensor(start[1], dtype=torch.float32))
        self.c = torch.nn.Parameter(torch.tensor(start[2], dtype=torch.float32))
        self.d = torch.nn.Parameter(torch.tensor(start[3], dtype=torch.float32))

    def forward(self, x):
        return self.a + self.b * x + self.c * x**2 + self.d * x**3

    def string(self):
        return (
            f"y = {self.a.item():.5f} + {self.b.item():.5f} x + "
            f"{self.c.item():.5f} x^2 + {self.d.item():.5f} x^3"
        )


module = Polynomial3()
criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(module.parameters(), lr=1e-6, momentum=0.9)
for t in range(200):
    y_pred = module(x)
    loss = criterion(y_pred, y)
    if t % 50 == 49:
        print(t, f"{loss.item():.4f}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"module: {module.string()}")
rms_model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
with torch.no_grad():
    rms_model[0].weight.copy_(torch.from_numpy(start[1:].astype(np.float32))[None])
    rms_model[0].bias.zero_()
rmsprop = torch.optim.RMSprop(rms_model.parameters(), lr=1e-2)
for t in range(200):
    loss = loss_fn(rms_model(xx), y)
    rmsprop.zero_grad()
    loss.backward()
    rmsprop.step()
final_loss = loss.item()
print(f"rmsprop: {final_loss:.4f}")
state = {k: v.numpy().round(4).tolist() for k, v in rms_model.state_dict().items()}
