"""A character-level LSTM, trained on a short story shipped with the examples.

    python examples/char_lstm.py                  # 300 steps, then a sample
    python examples/char_lstm.py --steps 50 --compile

examples/data/lighthouse.txt (about 2,200 characters, written for this
example) is read as characters; the model is an embedding, a one-layer
yg.nn.LSTM (batch_first) and a linear layer to the next character's logits,
trained with Adam on random windows, the gradient norm clipped by
yg.nn.utils.clip_grad_norm_. Each report line shows the step, the mean
cross-entropy (nats per character: ln of the vocabulary size for a model that
knows nothing) and the steps per second. At the end the model writes text from
a prompt, one character at a time, carrying the LSTM's (h, c) between calls.
`--compile` runs each training step's forward through yg.compile.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

# Small matrices: one BLAS thread is faster than several contending for the cores.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

import yamlgrad as yg  # noqa: E402
import yamlgrad.nn as nn  # noqa: E402
import yamlgrad.nn.functional as F  # noqa: E402

TEXT = Path(__file__).resolve().parent / "data" / "lighthouse.txt"


class CharLSTM(nn.Module):
    def __init__(self, vocabulary: int, embedding: int, hidden: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocabulary, embedding)
        self.lstm = nn.LSTM(embedding, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocabulary)

    def forward(
        self, codes: yg.Tensor, state: tuple[yg.Tensor, yg.Tensor] | None = None
    ) -> tuple[yg.Tensor, tuple[yg.Tensor, yg.Tensor]]:
        output, state = self.lstm(self.embed(codes), state)
        return self.head(output), state


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=96)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--report-every", type=int, default=25)
    parser.add_argument("--sample", type=int, default=200, help="characters to write")
    parser.add_argument("--compile", action="store_true")
    return parser.parse_args()


def sample(
    model: CharLSTM, prompt: str, length: int, chars: list[str], temperature: float
) -> str:
    """Continue `prompt` by `length` characters, drawn from the softmax of the
    logits at `temperature` with yamlgrad's seeded generator."""
    index = {c: i for i, c in enumerate(chars)}
    codes = yg.tensor([[index[c] for c in prompt]])
    written = []
    with yg.no_grad():
        logits, state = model(codes)
        for _ in range(length):
            probabilities = F.softmax(logits[0, -1] / temperature, dim=-1)
            code = yg.multinomial(probabilities, 1)
            written.append(chars[int(code.item())])
            logits, state = model(code.reshape(1, 1), state)
    return prompt + "".join(written)


def main() -> None:
    args = parse_args()
    yg.manual_seed(args.seed)
    text = TEXT.read_text(encoding="utf-8")
    chars = sorted(set(text))
    codes = np.array([chars.index(c) for c in text], dtype=np.int64)
    model = CharLSTM(len(chars), 24, args.hidden)
    optimizer = yg.optim.Adam(model.parameters(), lr=args.lr)
    rng = np.random.default_rng(args.seed)

    def loss_of(inputs: yg.Tensor, targets: yg.Tensor) -> yg.Tensor:
        logits, _ = model(inputs)
        return F.cross_entropy(logits.reshape(-1, len(chars)), targets.reshape(-1))

    step_loss = yg.compile(loss_of) if args.compile else loss_of
    print(
        f"{len(text)} characters, {len(chars)} distinct (chance: "
        f"{math.log(len(chars)):.2f} nats); LSTM {args.hidden} hidden units, "
        f"{sum(p.numel() for p in model.parameters())} parameters"
    )
    started, running = time.perf_counter(), []
    for step in range(1, args.steps + 1):
        starts = rng.integers(0, len(codes) - args.seq_len - 1, args.batch_size)
        windows = np.stack([codes[s : s + args.seq_len + 1] for s in starts])
        loss = step_loss(yg.tensor(windows[:, :-1]), yg.tensor(windows[:, 1:]))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        running.append(loss.item())
        if step % args.report_every == 0 or step == args.steps:
            rate = step / (time.perf_counter() - started)
            mean = sum(running) / len(running)
            print(f"step {step:4d}  loss {mean:.3f}  ({rate:.1f} steps/s)")
            running = []
    print(f"final loss: {mean:.3f}")
    print("sample:")
    print(sample(model, "The wind was ", args.sample, chars, temperature=0.7))


if __name__ == "__main__":
    main()
