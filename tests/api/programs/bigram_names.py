"""A character-level bigram model of names: counts, then a one-layer network
trained by gradient descent, then sampling with multinomial.

What both runs share is everything but the samples: the counts, the losses,
the trained weights. The samples (another generator draws them) are kept in
underscore names and checked here: the same seed gives the same names, and
every name ends where the model ends it.
"""

import numpy as np
import torch
import torch.nn.functional as F

words = (
    "ada alma anna aria ava bea bella cara clara cleo dana della eda ella elsa "
    "emma era eva flora gia gina hana ida ilse ina iris isla jana kara lea lena "
    "lia lila lina lisa lora luna mara maria mia mila mina nadia nina nora ola "
    "oriana paula rina rosa sara selma sofia tara tina uma vera viola wanda zara"
).split()
chars = sorted(set("".join(words)))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
V = len(stoi)

# -- counting ----------------------------------------------------------------------------------
N = torch.zeros((V, V), dtype=torch.int32)
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        N[stoi[ch1], stoi[ch2]] += 1
print(N.sum().item(), N[0].tolist()[:10])
P = (N + 1).float()
P /= P.sum(1, keepdims=True)
print(P[0, :5], P.sum(1)[:3])

log_likelihood = 0.0
n = 0
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        prob = P[stoi[ch1], stoi[ch2]]
        log_likelihood += torch.log(prob)
        n += 1
nll = -log_likelihood
print(f"{log_likelihood=:.4f}", f"{nll=:.4f}", f"{nll / n:.4f}")

# -- the same model as a network ---------------------------------------------------------------
xs, ys = [], []
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        xs.append(stoi[ch1])
        ys.append(stoi[ch2])
xs = torch.tensor(xs)
ys = torch.tensor(ys)
num = xs.nelement()
print("number of examples:", num)
rng = np.random.default_rng(2147483647)
W = torch.tensor(rng.standard_normal((V, V)), dtype=torch.float32, requires_grad=True)
losses = []
for k in range(60):
    xenc = F.one_hot(xs, num_classes=V).float()
    logits = xenc @ W
    counts = logits.exp()
    probs = counts / counts.sum(1, keepdims=True)
    loss = -probs[torch.arange(num), ys].log().mean() + 0.01 * (W**2).mean()
    losses.append(loss.item())
    W.grad = None
    loss.backward()
    W.data += -10 * W.grad
print([round(v, 4) for v in losses[::10]])
cross_entropy = F.cross_entropy(F.one_hot(xs, V).float() @ W, ys)
print(f"{cross_entropy.item():.4f}")


# -- sampling ----------------------------------------------------------------------------------
def sample(table, seed, count):
    g = torch.Generator().manual_seed(seed)
    names = []
    for _ in range(count):
        out = []
        ix = 0
        while True:
            p = table[ix]
            ix = torch.multinomial(
                p, num_samples=1, replacement=True, generator=g
            ).item()
            if ix == 0:
                break
            out.append(itos[ix])
        names.append("".join(out))
    return names


_from_counts = sample(P, 2147483647, 5)
with torch.no_grad():
    _from_net = sample(F.softmax(W, dim=1), 2147483647, 5)
assert _from_counts == sample(P, 2147483647, 5)
assert all(set(name) <= set(chars) for name in _from_counts + _from_net)
_g = torch.Generator().manual_seed(0)
_no_repeat = torch.multinomial(P[0], V, generator=_g)
print(sorted(_no_repeat.tolist()) == list(range(V)))
_batch = torch.multinomial(P[:3], 4, replacement=True, generator=_g)
print(_batch.shape, _batch.dtype)
