"""An MLP training step on the CPU (numpy) and on a GPU (CuPy), against numpy
and CuPy by hand and PyTorch, in one run.

    python benchmarks/gpu_mlp.py --cpu-time                # here: the numpy side
    python benchmarks/gpu_mlp.py --batch 4096 --hidden 1024  # on a GPU machine

One step is a 2-layer MLP (Linear, ReLU, Linear) on a batch, cross-entropy,
backward and an SGD update of the four parameters:

- by hand: the forward, the backward and the update written out in the array
  library's own calls (one function, given numpy or CuPy), the floor;
- yamlgrad: `yg.nn.Sequential`, `F.cross_entropy`, `backward()`,
  `yg.optim.SGD`, with the model and batch moved by `.to("cpu")` or
  `.to("cuda")` (CuPy arrays);
- torch: the same program in PyTorch, on "cpu" or "cuda".

Each row is the median time per step over `--repeats` samples of `--steps`
steps, and its ratios to the by-hand floor and to torch on the same side. The
CPU kernels run on one thread (`YAMLGRAD_BENCH_THREADS`, as benchmarks/run.py); the
CPU side reads this thread's CPU time with `--cpu-time` (steadier on a shared
machine), else wall time; the GPU side always reads wall time, after
synchronizing the device (a GPU's work is not this thread's CPU time). Before
timing, one step of every runner from the same parameters is checked against
the by-hand step (1e-10 in float64, 1e-4 in float32). The GPU side runs where
CuPy and a CUDA device are present, and says why it is skipped elsewhere.
Benchmarks are not tests: nothing here asserts a time (a tiny run of it is a
test, tests/api/test_cupy_backend.py).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# One thread for numpy's and torch's CPU kernels, as benchmarks/run.py: every
# CPU runner's work is this thread's (its CPU time).
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, os.environ.get("YAMLGRAD_BENCH_THREADS", "1"))

import numpy as np  # noqa: E402

import yamlgrad as yg  # noqa: E402
import yamlgrad.nn.functional as F  # noqa: E402

Params = list[Any]


@dataclass(frozen=True)
class Problem:
    x: np.ndarray
    labels: np.ndarray
    params: tuple[np.ndarray, ...]  # w1 (hidden, in), b1, w2 (classes, hidden), b2
    lr: float = 0.1

    @property
    def sizes(self) -> tuple[int, int, int]:
        """Inputs, hidden units, classes."""
        hidden, n_in = self.params[0].shape
        return n_in, hidden, self.params[2].shape[0]

    @classmethod
    def make(cls, batch: int, sizes: tuple[int, int, int], dtype: str) -> Problem:
        rng = np.random.default_rng(0)
        n_in, hidden, classes = sizes
        return cls(
            rng.standard_normal((batch, n_in)).astype(dtype),
            rng.integers(0, classes, batch),
            (
                (rng.standard_normal((hidden, n_in)) / np.sqrt(n_in)).astype(dtype),
                np.zeros(hidden, dtype),
                (rng.standard_normal((classes, hidden)) / np.sqrt(hidden)).astype(
                    dtype
                ),
                np.zeros(classes, dtype),
            ),
        )


def by_hand(xp: Any, problem: Problem) -> tuple[Callable[[], None], Params]:
    """The step in the array library `xp` (numpy or CuPy), written out."""
    x, labels = xp.asarray(problem.x), xp.asarray(problem.labels)
    params = [xp.array(p, copy=True) for p in problem.params]
    batch = x.shape[0]
    rows = xp.arange(batch)

    def step() -> None:
        w1, b1, w2, b2 = params
        pre = x @ w1.T + b1
        h = xp.maximum(pre, 0)
        logits = h @ w2.T + b2
        z = logits - logits.max(axis=1, keepdims=True)
        e = xp.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = (xp.log(s)[:, 0] - z[rows, labels]).mean()
        glogits = e / s
        glogits[rows, labels] -= 1
        glogits /= batch
        gh = glogits @ w2
        gpre = gh * (pre > 0)
        grads = (gpre.T @ x, gpre.sum(axis=0), glogits.T @ h, glogits.sum(axis=0))
        for p, g in zip(params, grads):
            p -= problem.lr * g
        del loss  # computed, as every framework's forward computes it

    return step, params


def with_yamlgrad(device: str, problem: Problem) -> tuple[Callable[[], None], Params]:
    n_in, hidden, classes = problem.sizes
    model = yg.nn.Sequential(
        yg.nn.Linear(n_in, hidden), yg.nn.ReLU(), yg.nn.Linear(hidden, classes)
    )
    with yg.no_grad():
        for p, value in zip(model.parameters(), problem.params):
            p.data = yg.tensor(value)
    model.to(device)
    x = yg.tensor(problem.x).to(device)
    labels = yg.tensor(problem.labels).to(device)
    opt = yg.optim.SGD(model.parameters(), lr=problem.lr)

    def step() -> None:
        opt.zero_grad()
        F.cross_entropy(model(x), labels).backward()
        opt.step()

    return step, list(model.parameters())


def with_torch(device: str, problem: Problem) -> tuple[Callable[[], None], Params]:
    import torch

    n_in, hidden, classes = problem.sizes
    model = torch.nn.Sequential(
        torch.nn.Linear(n_in, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, classes)
    )
    model.to(device=device, dtype=torch.from_numpy(problem.x).dtype)
    with torch.no_grad():
        for p, value in zip(model.parameters(), problem.params):
            p.copy_(torch.from_numpy(value))
    x = torch.from_numpy(problem.x).to(device)
    labels = torch.from_numpy(problem.labels).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=problem.lr)

    def step() -> None:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), labels).backward()
        opt.step()

    return step, list(model.parameters())


def host(value: Any) -> np.ndarray:
    """A parameter's values in host memory, from any of the runners."""
    if hasattr(value, "detach"):
        value = value.detach()
        if hasattr(value, "cpu"):
            value = value.cpu()
        return np.asarray(value.numpy())
    return value.get() if hasattr(value, "get") else np.asarray(value)


@dataclass(frozen=True)
class Side:
    """The CPU or the GPU: its runners, in the table's order, and its clock."""

    name: str
    runners: dict[str, Callable[[Problem], tuple[Callable[[], None], Params]]]
    sync: Callable[[], None]
    clock: Callable[[], float]


def sides(cpu_time: bool) -> tuple[list[Side], str | None]:
    cpu = Side(
        "cpu (numpy)",
        {
            "numpy by hand": lambda p: by_hand(np, p),
            "yamlgrad": lambda p: with_yamlgrad("cpu", p),
            "torch": lambda p: with_torch("cpu", p),
        },
        lambda: None,
        time.thread_time if cpu_time else time.perf_counter,
    )
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return [cpu], "no CUDA device"
    except ImportError:
        return [cpu], "CuPy is not installed"
    except Exception as e:  # no driver
        return [cpu], f"no usable CUDA device ({e})"
    runners = {
        "CuPy by hand": lambda p: by_hand(cupy, p),
        "yamlgrad": lambda p: with_yamlgrad("cuda", p),
    }
    try:
        import torch

        if torch.cuda.is_available():
            runners["torch"] = lambda p: with_torch("cuda", p)
    except ImportError:
        pass
    gpu = Side(
        "cuda (CuPy)",
        runners,
        lambda: cupy.cuda.Device().synchronize(),
        time.perf_counter,
    )
    return [cpu, gpu], None


def check(side: Side, problem: Problem) -> None:
    """One step of every runner from the same parameters gives the by-hand
    step's parameters."""
    tol = 1e-10 if problem.x.dtype == np.float64 else 1e-4
    results = []
    for make in side.runners.values():
        step, params = make(problem)
        step()
        side.sync()
        results.append([host(p) for p in params])
    for name, got in zip(side.runners, results):
        for g, w in zip(got, results[0]):
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=name)


def timed(side: Side, problem: Problem, steps: int, repeats: int) -> dict[str, float]:
    """The median seconds per step of each runner."""
    out = {}
    for name, make in side.runners.items():
        step, _ = make(problem)
        step()  # warm-up: imports, caches, kernels compiled on a GPU
        side.sync()
        samples = []
        for _ in range(repeats):
            start = side.clock()
            for _ in range(steps):
                step()
            side.sync()
            samples.append((side.clock() - start) / steps)
        out[name] = statistics.median(samples)
    return out


def table(results: list[tuple[Side, dict[str, float]]]) -> list[str]:
    lines = [
        "| side | framework | ms per step | / by hand | / torch |",
        "|---|---|---|---|---|",
    ]
    for side, times in results:
        floor = next(iter(times.values()))
        torch_time = times.get("torch")
        for name, seconds in times.items():
            versus_torch = f"{seconds / torch_time:.2f}" if torch_time else "-"
            lines.append(
                f"| {side.name} | {name} | {seconds * 1e3:.3f} "
                f"| {seconds / floor:.2f} | {versus_torch} |"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--inputs", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--steps", type=int, default=10, help="steps per sample")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cpu-time", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one sample")
    args = parser.parse_args(argv)
    if args.smoke:
        args.batch, args.inputs, args.hidden, args.steps, args.repeats = 8, 5, 6, 1, 1
        args.dtype = "float64"
    problem = Problem.make(
        args.batch, (args.inputs, args.hidden, args.classes), args.dtype
    )
    found, skipped = sides(args.cpu_time)
    results = []
    for side in found:
        check(side, problem)
        results.append((side, timed(side, problem, args.steps, args.repeats)))
    print(
        f"MLP {args.inputs}-{args.hidden}-{args.classes}, batch {args.batch}, "
        f"{args.dtype}, SGD; median of {args.repeats} x {args.steps} steps; "
        f"cpu clock: {'thread CPU time' if args.cpu_time else 'wall'}, "
        "gpu clock: wall (synchronized)\n"
    )
    print("\n".join(table(results)))
    print("\nevery runner's step agrees with the by-hand step")
    if skipped:
        print(f"GPU side skipped: {skipped}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
