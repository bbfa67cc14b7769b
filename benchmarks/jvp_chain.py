"""Forward mode: a JVP through workload 1's chain, and jacfwd against jacrev of a
small MLP, yamlgrad against torch (forward AD and torch.func) in one run.

    python benchmarks/jvp_chain.py              # 200 ops on 16 float64, 15 rounds
    python benchmarks/jvp_chain.py --smoke      # tiny, one round (to test the script)

Workload 1 of run.py is a chain of element-wise ops (alternately +0.5 and *1.001)
on 16 float64 values. Here the same chain runs on a dual tensor, and the tangent
of its sum is read (a JVP): yamlgrad's `forward_ad` and torch's, each also
against its own reverse-mode step (backward through the same chain) so the
table shows what forward mode costs per op in each library. The four programs
run interleaved within each round, in an order that rotates, each several
times in a row; the table gives median times over the rounds. Every JVP is
checked against the chain's exact derivative. `func.jvp` is the same JVP through
the torch.func transform.

The second table is the Jacobian of a small MLP (tanh(W1 x + b1), then W2 . + b2;
16 inputs, 32 hidden units, 8 outputs, float64) by `func.jacfwd` (a jvp vmapped
over the 16 basis tangents) and `func.jacrev` (a vjp vmapped over the 8 basis
cotangents), each checked against torch's. Nothing here asserts a time.
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
    for lib in (yg, torch) if torch is not None else (yg,):
        name = "yamlgrad" if lib is yg else "torch"
        found[f"{name} func.jvp"] = _func_jvp(lib, x0, v0, n_ops)
    # d(sum)/dx is 1.001 ** (number of multiplications) everywhere.
    slope = 1.001 ** (n_ops // 2)
    for name, run in found.items():
        want = slope * v0.sum() if name.endswith("jvp") else np.full(size, slope)
        np.testing.assert_allclose(run(), want, rtol=1e-10, err_msg=name)
    return found


def _func_jvp(lib: Any, x0: np.ndarray, v0: np.ndarray, n_ops: int) -> Callable:
    def run() -> np.ndarray:
        f = lambda x: chain(x, n_ops).sum()  # noqa: E731
        return lib.func.jvp(f, (lib.tensor(x0),), (lib.tensor(v0),))[1].numpy()

    return run


def mlp_programs(sizes: tuple[int, int, int]) -> dict[str, Callable[[], np.ndarray]]:
    """jacfwd and jacrev of a small MLP in each library, checked against torch's."""
    n_in, n_hidden, n_out = sizes
    rng = np.random.default_rng(2)
    arrays = [
        rng.standard_normal((n_hidden, n_in)) / np.sqrt(n_in),
        rng.standard_normal(n_hidden),
        rng.standard_normal((n_out, n_hidden)) / np.sqrt(n_hidden),
        rng.standard_normal(n_out),
        rng.standard_normal(n_in),
    ]
    found = {}
    for lib in (yg, torch) if torch is not None else (yg,):
        w1, b1, w2, b2, x = (lib.tensor(a) for a in arrays)

        def mlp(v: Any, w1: Any = w1, b1: Any = b1, w2: Any = w2, b2: Any = b2) -> Any:
            return w2 @ (w1 @ v + b1).tanh() + b2

        name = "yamlgrad" if lib is yg else "torch"
        for transform in ("jacfwd", "jacrev"):
            jac = getattr(lib.func, transform)(mlp)
            found[f"{name} {transform}"] = lambda jac=jac, x=x: jac(x).numpy()
    w1, b1, w2, _, x = arrays
    want = w2 @ np.diag(1 - np.tanh(w1 @ x + b1) ** 2) @ w1
    for name, run in found.items():
        np.testing.assert_allclose(run(), want, rtol=1e-10, atol=1e-12, err_msg=name)
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


def _table(medians: dict[str, float], n_ops: int | None) -> None:
    print("| program | median |" + (" per op |" if n_ops else "") + " x torch |")
    print("|---|---|" + ("---|" if n_ops else "") + "---|")
    for name, seconds in medians.items():
        peer = medians.get(name.replace("yamlgrad", "torch"))
        ratio = f"{seconds / peer:.2f}" if peer else ""
        per_op = f" {seconds / n_ops * 1e6:.2f} µs |" if n_ops else ""
        print(f"| {name} | {seconds * 1e3:.3f} ms |{per_op} {ratio} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    n_ops, size = (10, 4) if args.smoke else (200, 16)
    rounds, calls = (1, 1) if args.smoke else (args.rounds, 10)
    medians = measure(programs(n_ops, size), rounds, calls)
    print(f"JVP through a chain of {n_ops} ops on {size} float64 ({rounds} rounds)\n")
    _table(medians, n_ops)
    sizes = (4, 6, 3) if args.smoke else (16, 32, 8)
    medians = measure(mlp_programs(sizes), rounds, calls)
    shape = " -> ".join(str(n) for n in sizes)
    print(f"\nJacobian of an MLP {shape} ({rounds} rounds)\n")
    _table(medians, None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
