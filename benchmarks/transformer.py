"""A transformer-encoder training step: yamlgrad eager and compiled against torch.

    python benchmarks/transformer.py --cpu-time
    python benchmarks/transformer.py --layers 4 --d-model 128 --seq 64 --dtype float64

One step is `TransformerEncoder` (batch_first, `--layers` layers of `--d-model`
features, `--heads` heads, feed-forward 2 x d_model, dropout 0) and a Linear
head over `--classes`, cross-entropy against random labels at every position,
backward, and an Adam update of every parameter:

- torch: the program in PyTorch (its CPU attention, one fused node, in training);
- yamlgrad: the same program with `import yamlgrad as yg` (`yg.nn`, `yg.optim`);
- yamlgrad compiled: the loss function under `yg.compile`, so its forward and
  backward are one generated function each (traced at the first call, which is
  not timed).

Before timing, one step of each runner from torch's initial weights is checked
against torch's step (loss and every updated parameter: 1e-9 in float64, 1e-4
in float32). Each row is the median time per step over `--repeats` samples of
`--steps` steps and its ratio to torch. numpy's and torch's kernels run on one
thread (`YAMLGRAD_BENCH_THREADS`); `--cpu-time` reads this thread's CPU time
(steadier on a shared machine), else wall time. Benchmarks are not tests:
nothing here asserts a time (a tiny run is one, tests/api/test_benchmarks_smoke.py).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, os.environ.get("YAMLGRAD_BENCH_THREADS", "1"))

import numpy as np  # noqa: E402

import yamlgrad as yg  # noqa: E402

Step = Callable[[], float]


def build(lib: Any, args: argparse.Namespace) -> tuple[Any, Any]:
    """(encoder, head) of either library."""
    layer = lib.nn.TransformerEncoderLayer(
        args.d_model,
        args.heads,
        dim_feedforward=2 * args.d_model,
        dropout=0.0,
        batch_first=True,
    )
    encoder = lib.nn.TransformerEncoder(layer, args.layers, enable_nested_tensor=False)
    return encoder, lib.nn.Linear(args.d_model, args.classes)


def make_step(lib: Any, modules: tuple[Any, Any], data: tuple, compiled: bool) -> Step:
    """One training step of `lib` on `data` (inputs, labels), returning the loss."""
    encoder, head = modules
    x, labels = (lib.tensor(a) for a in data)
    params = [*encoder.parameters(), *head.parameters()]
    optimizer = lib.optim.Adam(params, lr=1e-3)
    classes = head.out_features

    def loss_of(x: Any, labels: Any) -> Any:
        logits = head(encoder(x)).reshape(-1, classes)
        return lib.nn.functional.cross_entropy(logits, labels.reshape(-1))

    loss_fn = yg.compile(loss_of) if compiled else loss_of

    def step() -> float:
        optimizer.zero_grad()
        loss = loss_fn(x, labels)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


def runners(torch: Any, args: argparse.Namespace) -> dict[str, tuple[Step, Any]]:
    """Each runner's step and modules, all from torch's initial weights."""
    rng = np.random.default_rng(0)
    dtype = getattr(np, args.dtype)
    x = rng.standard_normal((args.batch, args.seq, args.d_model)).astype(dtype)
    labels = rng.integers(0, args.classes, (args.batch, args.seq))
    torch.manual_seed(0)
    reference = tuple(m.to(getattr(torch, args.dtype)) for m in build(torch, args))
    result = {"torch": (make_step(torch, reference, (x, labels), False), reference)}
    for name, compiled in (("yamlgrad", False), ("yamlgrad compiled", True)):
        modules = tuple(m.to(getattr(yg, args.dtype)) for m in build(yg, args))
        for ours, theirs in zip(modules, reference):
            state = theirs.state_dict().items()
            ours.load_state_dict({k: v.detach().numpy() for k, v in state})
        result[name] = (make_step(yg, modules, (x, labels), compiled), modules)
    return result


def check_first_steps(found: dict[str, tuple[Step, Any]], dtype: str) -> None:
    """One step of every runner gives torch's loss and parameters."""
    tolerance = 1e-9 if dtype == "float64" else 1e-4
    losses = {name: step() for name, (step, _) in found.items()}
    want = [p.detach().numpy() for m in found["torch"][1] for p in m.parameters()]
    for name, (_, modules) in found.items():
        got = [p.detach().numpy() for m in modules for p in m.parameters()]
        assert abs(losses[name] - losses["torch"]) <= tolerance, (name, losses)
        for a, b in zip(got, want):
            np.testing.assert_allclose(
                a, b, rtol=tolerance, atol=tolerance, err_msg=name
            )


def median_step(
    step: Step, steps: int, repeats: int, clock: Callable[[], float]
) -> float:
    samples = []
    for _ in range(repeats):
        start = clock()
        for _ in range(steps):
            step()
        samples.append((clock() - start) / steps)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--seq", type=int, default=32)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--classes", type=int, default=32)
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cpu-time", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one sample")
    args = parser.parse_args()
    if args.smoke:
        args.layers, args.d_model, args.heads, args.seq, args.batch = 1, 8, 2, 4, 2
        args.steps, args.repeats, args.dtype = 2, 1, "float64"
    import torch

    torch.set_num_threads(1)
    found = runners(torch, args)
    check_first_steps(found, args.dtype)
    clock = time.thread_time if args.cpu_time else time.perf_counter
    times = {
        name: median_step(step, args.steps, args.repeats, clock)
        for name, (step, _) in found.items()
    }
    print(
        f"TransformerEncoder training step: {args.layers} layers, d_model "
        f"{args.d_model}, {args.heads} heads, batch {args.batch} x {args.seq}, "
        f"{args.dtype}, {'thread CPU' if args.cpu_time else 'wall'} time"
    )
    print("| runner | ms per step | vs torch |")
    print("|---|---|---|")
    for name, seconds in times.items():
        print(f"| {name} | {seconds * 1e3:.2f} | {seconds / times['torch']:.2f}x |")


if __name__ == "__main__":
    main()
