"""Attention as PyTorch's tutorials use it: scaled_dot_product_attention with a
causal mask and under sdpa_kernel, a MultiheadAttention's weights, and a small
TransformerEncoder trained a few steps to predict a shifted sequence. Data and
starting weights come from numpy."""

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel

rng = np.random.default_rng(11)
q = torch.tensor(rng.standard_normal((2, 4, 6, 8)), dtype=torch.float32)
k = torch.tensor(rng.standard_normal((2, 4, 6, 8)), dtype=torch.float32)
v = torch.tensor(rng.standard_normal((2, 4, 6, 8)), dtype=torch.float32)
out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
print(f"causal attention: {tuple(out.shape)}, first row {out[0, 0, 0, :3].tolist()}")
with sdpa_kernel(SDPBackend.MATH):
    math_out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
print(f"math backend agrees: {torch.allclose(out, math_out, atol=1e-5)}")

# The explicit formula of the documentation, against the function.
scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
causal = torch.ones(6, 6, dtype=torch.bool).tril()
scores = scores.masked_fill(~causal, float("-inf"))
by_hand = torch.softmax(scores, dim=-1) @ v
print(f"by hand: max difference {(by_hand - out).abs().max().item():.1e}")


def seeded(module, scale=0.2):
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * scale))
    return module


mha = seeded(nn.MultiheadAttention(8, 2, batch_first=True))
x = torch.tensor(rng.standard_normal((3, 5, 8)), dtype=torch.float32)
padding = torch.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
attended, weights = mha(x, x, x, key_padding_mask=padding)
print(
    f"attention weights {tuple(weights.shape)}, rows sum to {weights.sum(-1)[0].tolist()}"
)
print(f"padded keys get weight {weights[1, :, 3:].abs().max().item()}")

layer = nn.TransformerEncoderLayer(
    8, 2, dim_feedforward=16, dropout=0.0, batch_first=True
)
encoder = seeded(nn.TransformerEncoder(layer, 2, enable_nested_tensor=False))
head = seeded(nn.Linear(8, 8))
params = list(encoder.parameters()) + list(head.parameters())
optimizer = torch.optim.SGD(params, lr=0.1, momentum=0.9)
mask = nn.Transformer.generate_square_subsequent_mask(5)
sequence = torch.tensor(rng.standard_normal((4, 6, 8)), dtype=torch.float32)
inputs, targets = sequence[:, :-1], sequence[:, 1:]
for step in range(5):
    prediction = head(encoder(inputs, mask=mask, is_causal=True))
    loss = F.mse_loss(prediction, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.5f}")
final_loss = loss.item()
