"""Tensors as PyTorch's basics tutorial shows them: making them, their
attributes, the device idiom, indexing, joining, arithmetic, in-place ops, the
bridge to numpy, and the methods that take another tensor's shape or dtype."""

import numpy as np
import torch
import torch.nn.functional as F

data = [[1, 2], [3, 4]]
x_data = torch.tensor(data)
np_array = np.array(data)
x_np = torch.from_numpy(np_array)
x_ones = torch.ones_like(x_data)
print(f"Ones Tensor: \n {x_ones} \n")
x_full = torch.full_like(x_data, 7, dtype=torch.float)
print(f"Full Tensor: \n {x_full} \n")
shape = (2, 3)
ones_tensor = torch.ones(shape)
zeros_tensor = torch.zeros(shape)
print(f"Ones Tensor: \n {ones_tensor} \n")
print(f"Zeros Tensor: \n {zeros_tensor}")

tensor = torch.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
print(f"Shape of tensor: {tensor.shape}")
print(f"Datatype of tensor: {tensor.dtype}")
print(f"Device tensor is stored on: {tensor.device}")

device = (
    torch.accelerator.current_accelerator().type
    if torch.accelerator.is_available()
    else "cpu"
)
if torch.cuda.is_available():
    device = "cuda"
elif torch.backends.mps.is_available():
    device = "mps"
tensor = tensor.to(device)
print(f"Using {device} device, {torch.get_default_device()}")
print(torch.zeros(2, device=device).device == torch.device("cpu"))

print(f"First row: {tensor[0]}")
print(f"First column: {tensor[:, 0]}")
print(f"Last column: {tensor[..., -1]}")
tensor[:, 1] = 0
print(tensor)
t1 = torch.cat([tensor, tensor, tensor], dim=1)
print(t1.shape, torch.stack([tensor, tensor]).shape)

y1 = tensor @ tensor.T
y2 = tensor.matmul(tensor.T)
_y3 = torch.rand_like(y1)
z1 = tensor * tensor
z2 = tensor.mul(tensor)
print(torch.equal(y1, y2), torch.allclose(z1, z2))
agg = tensor.sum()
agg_item = agg.item()
print(agg_item, type(agg_item).__name__, f"{agg:.1f}")
print(f"{tensor} \n")
tensor.add_(5)
print(tensor)

t = torch.ones(5)
n = t.numpy()
t.add_(1)
print(f"t: {t}", f"n: {n}")
n2 = np.ones(5)
t2 = torch.from_numpy(n2)
np.add(n2, 1, out=n2)
print(f"t: {t2}", f"n: {n2}")
as_array = np.asarray(t)
copied = np.array(t, dtype=np.float64)
print(as_array.dtype, copied.dtype, np.shares_memory(as_array, n))

# -- shapes and dtypes of another tensor -------------------------------------------------------
base = torch.arange(6.0)
grid = torch.zeros(2, 3)
print(base.view_as(grid), base.reshape_as(grid).sum(dim=1, keepdims=True))
print(torch.ones(3).expand_as(grid), base.type_as(x_data).dtype)
print(base.new_zeros(2, 2), base.new_ones((2,)), base.new_full((2,), 3.5))
print(base.new_tensor([1, 2]).dtype, base.new_empty(3).shape, grid.new(2).shape)
print(x_data.float().mean(), x_data.double().dtype, x_data.to(torch.float64).dtype)
print(base.mean(axis=0), base.view(2, 3).amax(dim=1, keepdims=True))
print(base.where(base > 2, torch.zeros(6)), torch.where(base > 2, base, -1.0))

labels = torch.tensor([0, 2, 1, 2])
print(F.one_hot(labels), F.one_hot(labels, num_classes=4).shape)
print(torch.argmax(F.one_hot(labels).float(), dim=1))
g = torch.Generator().manual_seed(42)
_before = g.get_state()
_first = torch.rand(3, generator=g)
g.set_state(_before)
print(torch.equal(_first, torch.rand(3, generator=g)), g.initial_seed())
_perm = torch.randperm(10, generator=g)
print(sorted(_perm.tolist()), _perm.dtype)
_coin = torch.bernoulli(torch.full((1000,), 0.25), generator=g)
print(_coin.dtype, _coin.shape, abs(_coin.mean().item() - 0.25) < 0.06)
_draws = torch.normal(2.0, 3.0, size=(4000,), generator=g)
print(
    _draws.shape,
    abs(_draws.mean().item() - 2.0) < 0.2,
    abs(_draws.std().item() - 3) < 0.2,
)
_mixed = torch.normal(torch.zeros(2, 1), torch.ones(3), generator=g)
print(_mixed.shape, torch.randn_like(grid).shape, torch.randint_like(grid, 5).dtype)
