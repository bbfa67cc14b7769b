"""A character-level language model: a small causal transformer trained on
examples/char_corpus.txt (a short text shipped with the repository).

    python examples/char_transformer.py                # --steps, --compile, --sample

Characters -> Embedding + learned positions -> TransformerEncoder (pre-norm
layers, a causal mask, batch_first) -> LayerNorm -> Linear over the
characters; cross-entropy of the next character at every position, AdamW.
Every `--log-every` steps it prints the training loss and the loss on the last
tenth of the text (held out), then a sample from the trained model. With
`--compile` the loss function runs under `yg.compile` (without dropout: a
compiled graph draws no random masks).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

import yamlgrad as yg
import yamlgrad.nn as nn
import yamlgrad.nn.functional as F

CORPUS = Path(__file__).resolve().parent / "char_corpus.txt"


class CharTransformer(nn.Module):
    """Next-character logits for every position of a (batch, context) window."""

    def __init__(
        self,
        vocab: int,
        context: int,
        d_model: int,
        heads: int,
        layers: int,
        dropout: float,
    ) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, d_model)
        self.positions = nn.Embedding(context, d_model)
        layer = nn.TransformerEncoderLayer(
            d_model,
            heads,
            dim_feedforward=4 * d_model,
            dropout=dropout,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.out = nn.Linear(d_model, vocab)
        self.register_buffer(
            "causal", nn.Transformer.generate_square_subsequent_mask(context)
        )

    def forward(self, ids: yg.Tensor) -> yg.Tensor:
        length = ids.shape[1]
        x = self.tokens(ids) + self.positions(yg.arange(length))
        mask = self.causal[:length, :length]
        x = self.encoder(x, mask=mask, is_causal=True)
        return self.out(self.norm(x))


def batches(
    data: np.ndarray, batch: int, context: int, rng: np.random.Generator
) -> Iterator[tuple[yg.Tensor, yg.Tensor]]:
    """Random windows of `context + 1` characters: inputs and next characters."""
    while True:
        starts = rng.integers(0, len(data) - context - 1, batch)
        windows = np.stack([data[s : s + context + 1] for s in starts])
        yield yg.tensor(windows[:, :-1]), yg.tensor(windows[:, 1:])


def loss_of(model: CharTransformer, ids: yg.Tensor, targets: yg.Tensor) -> yg.Tensor:
    logits = model(ids)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def held_out_loss(model: CharTransformer, data: np.ndarray, context: int) -> float:
    model.eval()
    starts = range(0, len(data) - context - 1, context)
    windows = np.stack([data[s : s + context + 1] for s in starts])
    with yg.no_grad():
        loss = loss_of(model, yg.tensor(windows[:, :-1]), yg.tensor(windows[:, 1:]))
    model.train()
    return loss.item()


def sample(
    model: CharTransformer, prompt: list[int], length: int, context: int
) -> list[int]:
    """Characters drawn one by one from the model's softmax (temperature 0.8)."""
    ids = list(prompt)
    model.eval()
    with yg.no_grad():
        for _ in range(length):
            window = yg.tensor([ids[-context:]])
            logits = model(window)[0, -1] / 0.8
            ids.append(int(yg.multinomial(F.softmax(logits, dim=-1), 1).item()))
    model.train()
    return ids


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--context", type=int, default=48)
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--sample", type=int, default=200, help="characters to sample")
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--compile", action="store_true", help="implies --dropout 0")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    yg.manual_seed(args.seed)
    text = CORPUS.read_text(encoding="utf-8")
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    data = np.array([index[c] for c in text], dtype=np.int64)
    split = int(0.9 * len(data))
    train, held_out = data[:split], data[split:]
    if args.compile:  # a compiled graph draws no random masks
        args.dropout = 0.0
    sizes = (args.context, args.d_model, args.heads, args.layers, args.dropout)
    model = CharTransformer(len(chars), *sizes)
    optimizer = yg.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    step_loss = yg.compile(loss_of) if args.compile else loss_of
    stream = batches(train, args.batch, args.context, np.random.default_rng(args.seed))
    print(
        f"{len(text)} characters, {len(chars)} distinct; uniform loss {math.log(len(chars)):.3f}"
    )
    start = time.perf_counter()
    for step in range(1, args.steps + 1):
        ids, targets = next(stream)
        loss = step_loss(model, ids, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % args.log_every == 0 or step in (1, args.steps):
            held = held_out_loss(model, held_out, args.context)
            seconds = time.perf_counter() - start
            print(
                f"step {step:4d}  loss {loss.item():.3f}  held-out {held:.3f}  ({seconds:.1f} s)"
            )
    prompt = [index[c] for c in "The "]
    drawn = sample(model, prompt, args.sample, args.context)
    print("sample:", "".join(chars[i] for i in drawn).replace("\n", " "))


if __name__ == "__main__":
    main()
