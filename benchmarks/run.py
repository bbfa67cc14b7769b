"""yamlgrad's benchmark suite: each workload against numpy written by hand and peers.

    python benchmarks/run.py                 # full sizes, writes benchmarks/results.md
    python benchmarks/run.py --smoke         # tiny sizes, one repetition (a test runs this)

Frameworks run interleaved within each repetition; the table reports the median
time and the medians of the per-repetition ratios against the numpy floor (the same
forward in plain numpy with a hand-written backward) and against torch when it is
installed. Every framework's gradient is checked against the floor's, so a fast
wrong answer is flagged. Benchmarks are not tests: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import yamlgrad as yg

try:  # an optional peer
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

Runner = Callable[[], np.ndarray]  # runs forward + backward, returns the gradient


@dataclass(frozen=True)
class Workload:
    name: str
    runners: dict[str, Runner]


def chain(n_ops: int, size: int) -> Workload:
    """Workload 1: a chain of element-wise ops on a small float64 vector."""
    x0 = np.random.default_rng(0).uniform(0.5, 1.5, size)

    def floor() -> np.ndarray:
        y, scales = x0, []
        for i in range(n_ops):
            if i % 2:
                y = y * 1.001
                scales.append(1.001)
            else:
                y = y + 0.5
        grad = np.ones_like(x0)
        for s in reversed(scales):
            grad = grad * s
        return grad

    def ours() -> np.ndarray:
        x = yg.tensor(x0, requires_grad=True)
        y = x
        for i in range(n_ops):
            y = y * 1.001 if i % 2 else y + 0.5
        y.sum().backward()
        return x.grad.numpy()

    runners = {"numpy": floor, "yamlgrad": ours}
    if torch is not None:

        def theirs() -> np.ndarray:
            x = torch.tensor(x0, requires_grad=True)
            y = x
            for i in range(n_ops):
                y = y * 1.001 if i % 2 else y + 0.5
            y.sum().backward()
            return x.grad.numpy()

        runners["torch"] = theirs
    return Workload(f"chain of {n_ops} ops on {size} float64", runners)


def large_elementwise(size: int) -> Workload:
    """Workload 3: ten element-wise ops on a large float64 array."""
    rng = np.random.default_rng(1)
    x0 = rng.uniform(0.5, 1.5, size)

    def floor() -> np.ndarray:
        a = np.exp(x0)
        b = a * x0
        c = np.sin(b)
        d = c + x0
        e = d * d
        f = np.tanh(e)
        g = f * 3.0
        h = g - x0
        k = np.sqrt(h * h + 1.0)
        # backward of sum(k)
        gk = np.ones_like(k)
        gh = gk * h / k
        gg = gh
        gx = -gh
        gf = gg * 3.0
        ge = gf * (1 - f * f)
        gd = ge * 2 * d
        gc = gd
        gx = gx + gd
        gb = gc * np.cos(b)
        ga = gb * x0
        gx = gx + gb * a
        gx = gx + ga * a
        return gx

    def program(lib: Any, x: Any) -> Any:
        a = x.exp()
        b = a * x
        c = b.sin()
        d = c + x
        e = d * d
        f = e.tanh()
        g = f * 3.0
        h = g - x
        return ((h * h + 1.0).sqrt()).sum()

    def ours() -> np.ndarray:
        x = yg.tensor(x0, requires_grad=True)
        program(yg, x).backward()
        return x.grad.numpy()

    runners = {"numpy": floor, "yamlgrad": ours}
    if torch is not None:

        def theirs() -> np.ndarray:
            x = torch.tensor(x0, requires_grad=True)
            program(torch, x).backward()
            return x.grad.numpy()

        runners["torch"] = theirs
    return Workload(f"10 element-wise ops on {size:,} float64", runners)


def measure(workload: Workload, repeats: int) -> list[str]:
    """One table row per framework: median time, x floor, x torch, gradient check."""
    reference = workload.runners["numpy"]()
    times: dict[str, list[float]] = {name: [] for name in workload.runners}
    errors: dict[str, float] = {}
    for name, run in workload.runners.items():  # warm-up and correctness
        errors[name] = float(np.max(np.abs(run() - reference)))
    for _ in range(repeats):
        for name, run in workload.runners.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    rows = []
    for name, samples in times.items():
        floor_ratio = statistics.median(t / f for t, f in zip(samples, times["numpy"]))
        torch_ratio = (
            statistics.median(t / r for t, r in zip(samples, times["torch"]))
            if "torch" in times
            else float("nan")
        )
        ok = (
            "ok"
            if errors[name] <= 1e-8 * max(1.0, float(np.max(np.abs(reference))))
            else f"WRONG ({errors[name]:.2e})"
        )
        rows.append(
            f"| {workload.name} | {name} | {statistics.median(samples) * 1e3:.3f} ms "
            f"| {floor_ratio:.2f}x | {torch_ratio:.2f}x | {ok} |"
        )
    return rows


def machine() -> list[str]:
    blas = "unknown"
    try:
        config = np.show_config(mode="dicts")  # type: ignore[call-arg]
        blas = config["Build Dependencies"]["blas"]["name"]  # type: ignore[index]
    except Exception:  # noqa: BLE001 - only informational
        pass
    versions = [f"numpy {np.__version__}", f"yamlgrad {yg.__version__}"]
    if torch is not None:
        versions.append(f"torch {torch.__version__}")
    return [
        f"- CPU: {platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        f"- BLAS: {blas}",
        f"- Python {platform.python_version()}; {', '.join(versions)}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes, one repetition"
    )
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).with_name("results.md")
    )
    args = parser.parse_args(argv)
    if args.smoke:
        workloads = [chain(10, 4), large_elementwise(100)]
        repeats = 1
    else:
        workloads = [chain(200, 16), large_elementwise(2_000_000)]
        repeats = args.repeats
    lines = [
        "| workload | framework | median time | x numpy floor | x torch | gradient |",
        "|---|---|---|---|---|---|",
    ]
    for workload in workloads:
        lines += measure(workload, repeats)
    report = "\n".join(["# yamlgrad benchmarks", "", *machine(), "", *lines, ""])
    print(report)
    if not args.smoke:
        args.out.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
