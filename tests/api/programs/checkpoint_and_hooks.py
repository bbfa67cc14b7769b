"""A small regression in older PyTorch idioms: Variable, the legacy FloatTensor,
a Module imported from its file's path, a full backward hook watching gradients,
StepLR, a checkpoint saved and resumed with torch.save / torch.load."""

import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.nn.modules.module import Module
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset

torch.backends.cudnn.deterministic = True
torch.set_num_threads(1)
rng = np.random.default_rng(0)
X = torch.FloatTensor(rng.standard_normal((64, 3)).astype(np.float32))
true_w = np.array([[1.5], [-2.0], [0.5]], dtype=np.float32)
y = torch.from_numpy(X.numpy() @ true_w + 0.1)


class Net(Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def initialise(model):
    with torch.no_grad():
        for p in model.parameters():
            values = rng.standard_normal(tuple(p.shape)) * 0.3
            p.copy_(torch.tensor(values, dtype=torch.float32))


net = Net()
initialise(net)
grad_norms = []
net.fc1.register_full_backward_hook(
    lambda module, grad_input, grad_output: grad_norms.append(
        grad_output[0].norm().item()
    )
)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
scheduler = StepLR(optimizer, step_size=5, gamma=0.5)
loader = DataLoader(TensorDataset(X, y), batch_size=16, shuffle=False)
for epoch in range(10):
    total = 0.0
    for xb, yb in loader:
        xb, yb = Variable(xb), Variable(yb)
        optimizer.zero_grad()
        loss = F.mse_loss(net(xb), yb)
        loss.backward()
        optimizer.step()
        total += loss.item() * xb.size(0)
    scheduler.step()
    if epoch % 3 == 0:
        lr = scheduler.get_last_lr()[0]
        print(f"epoch {epoch} loss {total / len(X):.5f} lr {lr:.4f}")

_path = os.path.join(tempfile.mkdtemp(), "checkpoint.pt")
torch.save({"model": net.state_dict(), "optimizer": optimizer.state_dict()}, _path)
checkpoint = torch.load(_path, map_location="cpu", weights_only=True)
resumed = Net()
resumed.load_state_dict(checkpoint["model"])
resumed_optimizer = torch.optim.SGD(resumed.parameters(), lr=0.1, momentum=0.9)
resumed_optimizer.load_state_dict(checkpoint["optimizer"])
with torch.no_grad():
    prediction = resumed(X)
print("max difference after resuming", float((prediction - net(X).detach()).abs().max()))
torch.testing.assert_close(prediction, net(X).detach())

print(X.ndimension(), X.nelement(), X.type(), isinstance(X, torch.FloatTensor))
print(X == None, X in [None], torch.finfo(torch.float32).eps, torch.inf > 1e308)
print(len(grad_norms), f"{grad_norms[0]:.5f}")
stop = torch.tensor(2)
print(X[:stop].shape, [10, 20, 30][stop])
bins = torch.bucketize(y.squeeze(), torch.tensor([-2.0, 0.0, 2.0]))
print(bins.tolist()[:8], torch.searchsorted(torch.tensor([0.0, 1.0]), 0.5).item())
print(np.exp(torch.tensor([0.0, 1.0])))
final_loss = float(F.mse_loss(prediction, y))
