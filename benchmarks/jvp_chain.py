"""Forward mode: a JVP through workload 1's chain, yamlgrad against torch's forward AD.

    python benchmarks/jvp_chain.py              # 200 ops on 16 float64, 15 rounds
    python benchmarks/jvp_chain.py --smoke      # tiny, one round (to test the script)

Workload 1 of run.py is a chain of element-wise ops (alternately +0.5 and *1.001)
on 16 float64 values. Here the same chain runs on a dual tensor, and the tangent
of its sum is read (a JVP): yamlgrad's `forward_ad` and torch's, each also
against its own reverse-mode step (backward through the same chain) so the
table shows what forward mode costs per op in each library. The four programs
run interleaved within each round, in an order that rotates, each several
times in a row; the table gives median times over the rounds. Every JVP is
checked against the chain's exact derivative. Nothing here asserts a time.
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
import yamlgrad.autograd.forward_ad as yg_fwad  # noqa: E402

try:
    import torch
    import torch.autograd.forward_ad as torch_fwad

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover - torch is the reference, when installed
    torch = None


def chain(y: Any, n_ops: int) -> Any:
    for i in range(n_ops):
        y = y * 1.001 if i % 2 else y + 0.5
    return y


def programs(n_ops: int, size: int) -> dict[str, Callable[[], np.ndarray]]:
    x0 = np.random.default_rng(0).uniform(0.5, 1.5, size)
    v0 = np.random.default_rng(1).standard_normal(size)

    def yamlgrad_jvp() -> np.ndarray:
        with yg_fwad.dual_level():
            x = yg_fwad.make_dual(yg.tensor(x0), yg.tensor(v0))
            return yg_fwad.unpack_dual(chain(x, n_ops).sum()).tangent.numpy()

    def yamlgrad_backward() -> np.ndarray:
        x = yg.tensor(x0, requires_grad=True)
        chain(x, n_ops).sum().backward()
        return x.grad.numpy()

    found = {"yamlgrad jvp": yamlgrad_jvp, "yamlgrad backward": yamlgrad_backward}
    if torch is not None:

        def torch_jvp() -> np.ndarray:
            with torch_fwad.dual_level():
                x = torch_fwad.make_dual(torch.tensor(x0), torch.tensor(v0))
                return torch_fwad.unpack_dual(chain(x, n_ops).sum()).tangent.numpy()

        def torch_backward() -> np.ndarray:
            x = torch.tensor(x0, requires_grad=True)
            chain(x, n_ops).sum().backward()
            return x.grad.numpy()

        found.update({"torch jvp": torch_jvp, "torch backward": torch_backward})
    # d(sum)/dx is 1.001 ** (number of multiplications) everywhere.
    slope = 1.001 ** (n_ops // 2)
    for name, run in found.items():
        want = slope * v0.sum() if name.endswith("jvp") else np.full(size, slope)
        np.testing.assert_allclose(run(), want, rtol=1e-10, err_msg=name)
    return found


def measure(
    runs: dict[str, Callable[[], np.ndarray]], rounds: int, calls: int
) -> dict[str, float]:
    samples: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            start = time.perf_counter()
            for _ in range(calls):
                runs[name]()
            samples[name].append((time.perf_counter() - start) / calls)
    return {name: statistics.median(times) for name, times in samples.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    n_ops, size = (10, 4) if args.smoke else (200, 16)
    rounds, calls = (1, 1) if args.smoke else (args.rounds, 10)
    medians = measure(programs(n_ops, size), rounds, calls)
    print(f"JVP through a chain of {n_ops} ops on {size} float64 ({rounds} rounds)\n")
    print("| program | median | per op | x torch |")
    print("|---|---|---|---|")
    for name, seconds in medians.items():
        peer = medians.get(name.replace("yamlgrad", "torch"))
        ratio = f"{seconds / peer:.2f}" if peer else ""
        print(
            f"| {name} | {seconds * 1e3:.3f} ms | {seconds / n_ops * 1e6:.2f} µs "
            f"| {ratio} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
