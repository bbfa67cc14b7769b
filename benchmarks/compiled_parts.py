"""Where workload 2's compiled step spends its time beyond the numpy floor.

    OMP_NUM_THREADS=1 python benchmarks/compiled_parts.py --repeats 9 --cpu-time

For each variant of workload 2 (benchmarks/run.py's MLP step: tanh or relu,
float32 or float64) this times, interleaved in one run:

* `floor`: the step in numpy with the backward written by hand (`mlp_floor`);
* `code`: the generated forward and backward of the compiled graph alone, called
  on the arrays (what the generated source costs, without Tensors or the engine);
* `framework`: the whole compiled step (`from_numpy(...).requires_grad_()`, the
  guards, the outputs' Tensors, `CompiledFunctionBackward`, the engine, the
  leaves' AccumulateGrads) with the generated functions replaced by ones that
  return results computed beforehand, the gradients copied (as a fresh backward
  makes them, so the leaves take them without a copy of their own), less the
  time of those copies: what the step costs around the generated code;
* `framework after a matmul`: `framework` run right after the step's largest
  matrix product (`x.T @ g`, the gradient of the first weight), less that
  product alone and the copies: the same Python work where the step does it,
  after numpy has streamed megabytes through the caches (the floor's own glue
  code pays the same, on far fewer statements);
* `plain objects`: the step's calls (six `from_numpy`, four `requires_grad_`,
  the output, the four leaves' `.grad` and `.numpy()`) on a minimal stand-in
  class around the generated code, with no guard, node or engine: the least that
  any Python framework around this code adds;
* `tensors only`: the same with yamlgrad's own Tensors (`yg.from_numpy`,
  `requires_grad_`, a Tensor for the output and for each gradient), still with
  no guard, node or engine: the step if yg.compile's call and backward were free;
* `step`: the whole compiled step (benchmarks/run.py's "yamlgrad compiled" row).

Each cell is the median over `--repeats` of the mean over `--number` calls, with
the spread (max - min of the repeats) beside it; ratios are to the floor. A
second table gives each of code, plain objects, tensors only and step over the
floor: the lower bounds the generated code and the step's own calls put under
the step.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402

PARTS = (
    "floor",
    "code",
    "framework",
    "framework after a matmul",
    "plain objects",
    "tensors only",
    "step",
)
RATIOS = ("code", "plain objects", "tensors only", "step")


class _Plain:
    """A stand-in for a tensor: the attributes the step reads, nothing more."""

    __slots__ = ("_data", "_requires_grad", "grad")

    def __init__(self, data: Any) -> None:
        self._data = data
        self._requires_grad = False
        self.grad = None

    def requires_grad_(self) -> _Plain:
        self._requires_grad = True
        return self

    def numpy(self) -> Any:
        return self._data


def bare_step(data: run.MlpData, code: Any, wrap: Callable[[Any], Any]) -> Any:
    """The step's calls around the generated code, each tensor made by `wrap`
    (and a leaf by `wrap(a).requires_grad_()`), with no guard, node or engine."""
    x0, onehot, params = data.x0, data.onehot, data.params
    forward, backward, n = code.forward, code.backward, code.n_outputs
    dtype = params[0].dtype

    def step() -> Any:
        p = [wrap(a).requires_grad_() for a in params]
        x, hot = wrap(x0), wrap(onehot)
        results = forward(*[t._data for t in (x, hot, *p)])
        wrap(results[0])  # the loss
        grads = backward(np.ones((), dtype), *results[n:])
        for leaf, g in zip(p, grads[2:]):
            leaf.grad = wrap(g)
        return tuple(t.grad.numpy() for t in p)

    return step


def parts(data: run.MlpData) -> dict[str, Callable[[], Any]]:
    """The four timed callables of one variant (see the module docstring)."""
    compiled = run.mlp_runners(data)[run.COMPILED]
    compiled()  # traces
    graph = compiled.functions[0]._last
    code = graph.code
    arrays = [data.x0, data.onehot, *data.params]
    seed = np.ones((), data.params[0].dtype)

    def generated() -> Any:
        results = code.forward(*arrays)
        return code.backward(seed, *results[code.n_outputs :])

    results = code.forward(*arrays)
    grads = code.backward(seed, *results[code.n_outputs :])

    def copies(*args: Any) -> tuple[Any, ...]:
        return tuple(None if g is None else g.copy() for g in grads)

    stub = dataclasses.replace(code, forward=lambda *a: results, backward=copies)

    def framework() -> Any:
        graph.code = stub
        try:
            return compiled()
        finally:
            graph.code = code

    x = data.x0  # the first weight's gradient is x.T @ the hidden layer's
    g = np.ones((x.shape[0], data.params[0].shape[1]), x.dtype)

    def matmul() -> Any:
        return x.T @ g

    def after_matmul() -> Any:
        matmul()
        return framework()

    return {
        "floor": run.mlp_floor(data),
        "code": generated,
        "framework": framework,
        "framework after a matmul": after_matmul,
        "plain objects": bare_step(data, code, _Plain),
        "tensors only": bare_step(data, code, run.yg.from_numpy),
        "step": compiled,
        "copies": copies,
        "matmul": matmul,
    }


def measure(
    fns: dict[str, Callable[[], Any]], repeats: int, number: int, clock: Any
) -> dict[str, list[float]]:
    """Seconds per call of each callable, per repeat, interleaved."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = clock()
            for _ in range(number):
                fn()
            times[name].append((clock() - start) / number)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--number", type=int, default=200)
    parser.add_argument("--cpu-time", action="store_true", help="thread CPU time")
    args = parser.parse_args(argv)
    clock = time.thread_time if args.cpu_time else time.perf_counter
    header = "| variant | " + " | ".join(f"{p} µs (spread)" for p in PARTS) + " |"
    print(header)
    print("|---" * (len(PARTS) + 1) + "|")
    ratio_rows = []
    for activation in ("tanh", "relu"):
        for dtype in (np.float32, np.float64):
            data = run.MlpData.make(64, (784, 256, 10), activation, dtype)
            times = measure(parts(data), args.repeats, args.number, clock)
            copies = times.pop("copies")
            matmuls = times.pop("matmul")
            times["framework"] = [t - c for t, c in zip(times["framework"], copies)]
            times["framework after a matmul"] = [
                t - c - m
                for t, c, m in zip(times["framework after a matmul"], copies, matmuls)
            ]
            median = {k: float(np.median(v)) * 1e6 for k, v in times.items()}
            spread = {k: (max(v) - min(v)) * 1e6 for k, v in times.items()}
            cells = [f"{median[p]:.1f} ({spread[p]:.1f})" for p in PARTS]
            ratios = [f"{median[p] / median['floor']:.3f}" for p in RATIOS]
            name = f"{activation} {np.dtype(dtype).name}"
            print(f"| {name} | " + " | ".join(cells) + " |")
            ratio_rows.append(f"| {name} | " + " | ".join(ratios) + " |")
    print()
    print("| variant | " + " | ".join(f"{p} / floor" for p in RATIOS) + " |")
    print("|---" * (len(RATIOS) + 1) + "|")
    print("\n".join(ratio_rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
