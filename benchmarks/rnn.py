"""An LSTM training step, yamlgrad against torch, and what the fused cell buys.

    python benchmarks/rnn.py                 # seq 32, batch 16, 32 -> 64, 2 layers
    python benchmarks/rnn.py --smoke         # tiny, one round (to test the script)

One step is a forward through a 2-layer nn.LSTM (float32), a loss (mean of the
squared output plus mean of the squared final h), and a backward to every
parameter. The programs, all from the same weights:

* `torch eager`: torch.nn.LSTM on the CPU (aten::lstm, whose cells are
  composites of PyTorch's ops, in C++);
* `yamlgrad eager`: yg.nn.LSTM, whose time steps record one
  `_thnn_fused_lstm_cell` node each (runtime/nn/rnn.py);
* `yamlgrad eager, composite cell`: the same loop with the cell written as
  PyTorch's CPU composite (chunk, sigmoid, tanh, products: about a dozen nodes
  per step), which is what yamlgrad would record without the fused entry;
* `yamlgrad compiled`: yg.compile of the step's forward and loss (one
  generated forward and backward for the whole unrolled graph).

Every program's gradients are checked against torch's before timing. The
programs run interleaved within each round, in an order that rotates; the table
gives median times over the rounds and each one's ratio to torch eager.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

import yamlgrad as yg  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover - torch is the reference, when installed
    torch = None


def _loss(output: Any, h_n: Any) -> Any:
    return (output**2).mean() + (h_n**2).mean()


def _composite_lstm(module: Any, x: Any) -> tuple[Any, Any]:
    """module's forward with PyTorch's composite cell (no fused entry)."""
    layer_input = x
    finals = []
    for layer in range(module.num_layers):
        w_ih, w_hh, b_ih, b_hh = module.all_weights[layer]
        gates_in = yg.nn.functional.linear(layer_input, w_ih, b_ih).unbind(0)
        w_hh_t = w_hh.t()
        batch, hidden = x.shape[1], module.hidden_size
        h = yg.zeros(batch, hidden, dtype=x.dtype)
        c = yg.zeros(batch, hidden, dtype=x.dtype)
        outputs = []
        for step in gates_in:
            gates = step + yg.addmm(b_hh, h, w_hh_t)
            i, f, g, o = gates.chunk(4, 1)
            c = f.sigmoid() * c + i.sigmoid() * g.tanh()
            h = o.sigmoid() * c.tanh()
            outputs.append(h)
        layer_input = yg.stack(outputs, 0)
        finals.append(h)
    return layer_input, yg.stack(finals, 0)


def programs(sizes: tuple[int, int, int, int]) -> dict[str, Callable[[], list]]:
    steps, batch, features, hidden = sizes
    x0 = np.random.default_rng(0).standard_normal((steps, batch, features))
    x0 = x0.astype(np.float32)
    ours = yg.nn.LSTM(features, hidden, num_layers=2)
    found: dict[str, Callable[[], list]] = {}

    def run_ours(forward: Callable[[Any], Any]) -> Callable[[], list]:
        def step() -> list:
            ours.zero_grad()
            forward(yg.tensor(x0)).backward()
            return [p.grad.numpy() for p in ours.parameters()]

        return step

    def eager(x: Any) -> Any:
        output, (h_n, _) = ours(x)
        return _loss(output, h_n)

    def composite(x: Any) -> Any:
        return _loss(*_composite_lstm(ours, x))

    if torch is not None:
        torch.manual_seed(0)
        theirs = torch.nn.LSTM(features, hidden, num_layers=2)
        ours.load_state_dict(
            {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
        )

        def torch_eager() -> list:
            theirs.zero_grad()
            output, (h_n, _) = theirs(torch.tensor(x0))
            _loss(output, h_n).backward()
            return [p.grad.numpy() for p in theirs.parameters()]

        found["torch eager"] = torch_eager
    found["yamlgrad eager"] = run_ours(eager)
    found["yamlgrad eager, composite cell"] = run_ours(composite)
    found["yamlgrad compiled"] = run_ours(yg.compile(eager))
    reference = next(iter(found.values()))()
    reference = [g.copy() for g in reference]
    for name, run in found.items():
        for got, want in zip(run(), reference):
            np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-6, err_msg=name)
    return found


def measure(runs: dict[str, Callable[[], list]], rounds: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            start = time.process_time()
            runs[name]()
            samples[name].append(time.process_time() - start)
    return {name: statistics.median(times) for name, times in samples.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    sizes = (3, 2, 4, 5) if args.smoke else (32, 16, 32, 64)
    rounds = 1 if args.smoke else args.rounds
    medians = measure(programs(sizes), rounds)
    steps, batch, features, hidden = sizes
    print(
        f"LSTM training step: seq {steps}, batch {batch}, {features} -> {hidden}, "
        f"2 layers, float32 ({rounds} rounds, CPU time)\n"
    )
    peer = medians.get("torch eager")
    print("| program | median | x torch eager |")
    print("|---|---|---|")
    for name, seconds in medians.items():
        ratio = f"{seconds / peer:.2f}" if peer else ""
        print(f"| {name} | {seconds * 1e3:.2f} ms | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
