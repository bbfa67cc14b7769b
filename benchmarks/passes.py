"""What numpy can reach on the activations: the passes each one needs and their cost.

    python benchmarks/passes.py --cpu-time               # writes benchmarks/activations.md
    python benchmarks/passes.py --names gelu,sigmoid     # some (nothing is written)

numpy runs an expression one pass over memory per operation, where torch fuses a
whole activation, forward or backward, into one loop. For every activation nets
use (relu, leaky_relu, elu, selu, celu, gelu in both forms, silu, mish, softplus,
sigmoid, hardsigmoid, hardswish, hardtanh, tanh, logsigmoid, softsign) at
1,000,000 elements, in float32 and float64 on one thread, this times:

* torch's forward + backward (`autograd.grad` of the output for a cotangent of
  ones), yamlgrad's (`ours`), and the numpy floor declared beside the op's kernel
  (`FLOORS` of runtime/ops, as benchmarks/ops.py runs it);
* a *recipe*: the fewest numpy passes we found for the forward and the backward
  together, the forward's values reused by the backward, every pass writing into
  an array allocated once (no allocation, no temporary), its results checked
  against torch's before anything is timed. Each pass is timed where it runs and
  `bound` is the sum of their fastest times: what numpy needs for the activation
  at best, without fusing passes. `bound / torch` is then the ratio numpy cannot
  go below; where it is above 1.5, no numpy kernel reaches the target of 1.5x
  torch;
* one plain pass, `np.add(x, 1, out=y)`, and the transcendental passes the
  recipes take (exp, expm1, log1p, tanh, scipy's erf) on their own.

A second table reads benchmarks/ops.md (the per-op benchmark's full run) and
says, for the median target, how many ops are at their floor and what the median
ours/torch would be with every op that has a floor at it.

Repetitions are paired and interleaved as in benchmarks/ops.py (its `measure`).
Benchmarks are not tests: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ops  # noqa: E402  (sets the thread counts before numpy loads)

import numpy as np  # noqa: E402

import yamlgrad as yg  # noqa: E402
from yamlgrad.runtime.ops.common import _special  # noqa: E402

torch = ops.torch
ELEMENTS = 1_000_000
ONE_SIXTH = float(np.float32(1.0) / np.float32(6.0))  # PyTorch's, a float32
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805
GELU_K, GELU_C = math.sqrt(2.0 / math.pi), 0.044715


class Buffers:
    """Arrays of the input's shape, allocated on first use and reused by every
    later run of the recipe: `f(name)` in the input's dtype, `b(name)` bools."""

    def __init__(self, like: np.ndarray) -> None:
        self.like = like
        self.arrays: dict[str, np.ndarray] = {}

    def f(self, name: str) -> np.ndarray:
        if name not in self.arrays:
            self.arrays[name] = np.empty_like(self.like)
        return self.arrays[name]

    def b(self, name: str) -> np.ndarray:
        if name not in self.arrays:
            self.arrays[name] = np.empty(self.like.shape, bool)
        return self.arrays[name]


class Passes:
    """numpy's (and scipy.special's) functions, each call timed where it runs."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, float]] = []

    def __getattr__(self, name: str) -> Callable[..., Any]:
        function = getattr(np, name, None) or getattr(_special(), name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = ops.CLOCK()
            result = function(*args, **kwargs)
            self.calls.append((name, ops.CLOCK() - start))
            return result

        return timed


Forward = Callable[[Passes, np.ndarray, Buffers], np.ndarray]
Backward = Callable[[Passes, np.ndarray, np.ndarray, Buffers], np.ndarray]


@dataclass(frozen=True)
class Activation:
    name: str
    call: Callable[[Any, Any, Any], Any]  # (library, its functional, x) -> output
    forward: Forward
    backward: Backward
    floor: str = ""  # the FLOORS entry, if the op has one
    floor_kwargs: dict[str, Any] = field(default_factory=dict)


# -- the recipes: forward passes, then backward passes from the forward's buffers --


def _relu_f(P: Passes, x: np.ndarray, B: Buffers) -> np.ndarray:
    return P.maximum(x, 0, out=B.f("out"))


def _relu_b(P: Passes, x: np.ndarray, g: np.ndarray, B: Buffers) -> np.ndarray:
    return P.multiply(g, P.greater(x, 0, out=B.b("mask")), out=B.f("d"))


def _leaky_relu_f(P: Passes, x: np.ndarray, B: Buffers) -> np.ndarray:
    out = P.multiply(x, 0.01, out=B.f("out"))
    return P.maximum(out, x, out=out)


def _leaky_relu_b(P: Passes, x: np.ndarray, g: np.ndarray, B: Buffers) -> np.ndarray:
    d = P.greater(x, 0, out=B.f("d"))  # 1.0 or 0.0, then max(., slope)
    P.maximum(d, 0.01, out=d)
    return P.multiply(d, g, out=d)


def _elu_f(P: Passes, x: np.ndarray, B: Buffers) -> np.ndarray:
    e = P.expm1(P.minimum(x, 0, out=B.f("e")), out=B.f("e"))
    out = P.maximum(x, 0, out=B.f("out"))
    return P.add(out, e, out=out)


def _elu_b(P: Passes, x: np.ndarray, g: np.ndarray, B: Buffers) -> np.ndarray:
    d = P.add(B.f("e"), 1, out=B.f("d"))  # exp(x) below 0, exactly 1 above
    return P.multiply(d, g, out=d)


def _selu_f(P: Passes, x: np.ndarray, B: Buffers) -> np.ndarray:
    e = P.expm1(P.minimum(x, 0, out=B.f("e")), out=B.f("e"))
    P.multiply(e, SELU_ALPHA * SELU_SCALE, out=e)
    out = P.multiply(x, SELU_SCALE, out=B.f("out"))
    P.maximum(out, 0, out=out)
    return P.add(out, e, out=out)


def _selu_b(P: Passes, x: np.ndarray, g: np.ndarray, B: Buffers) -> np.ndarray:
    d = P.greater(x, 0, out=B.f("d"))
    P.multiply(d, SELU_SCALE - SELU_ALPHA * SELU_SCALE, out=d)
    P.add(d, B.f("e"), out=d)
    P.add(d, SELU_ALPHA * SELU_SCALE, out=d)
    return P.multiply(d, g, out=d)


def _gelu_f(P: Passes, x: np.ndarray, B: Buffers) -> np.ndarray:
    cdf = P.multiply(x, math.sqrt(0.5), out=B.f("cdf"))
    P.erf(cdf, out=cdf)
    P.add(cdf, 1, out=cdf)
    P.multiply(cdf, 0.5, out=cdf)
    return P.multiply(x, cdf, out=B.f("out"))


def _gelu_b(P: Passes, x: np.ndarray, g: np.ndarray, B: Buffers) -> np.ndarray:
    d = P.multiply(x, x, out=B.f("d"))
    P.multiply(d, -0.5, out=d)
    P.exp(d, out=d)
    P.multiply(d, 1 / math.sqrt(2 * math.pi), out=d)
    P.multiply(d, x, out=d)
    P.add(d, B.f("cdf"), out=d)
    return P.multiply(d, g, out=d)


def _gelu_tanh_f(P: Passes, x: np.ndarray, B: Buffers) -> np.ndarray:
    # x * sigmoid(2z), z = k (x + c x^3): the tanh form.
    square = P.multiply(x, x, out=B.f("square"))
    t = P.multiply(square, -2 * GELU_K * GELU_C, out=B.f("t"))
    P.subtract(t, 2 * GELU_K, out=t)
    P.multiply(t, x, out=t)  # -2z
    P.exp(t, out=t)
    P.add(t, 1, out=t)
    return P.divide(x, t, out=B.f("out"))


def _gelu_tanh_b(P: Passes, x: np.ndarray, g: np.ndarray, B: Buffers) -> np.ndarray:
    s = P.reciprocal(B.f("t"), out=B.f("t"))
    dz = P.multiply(B.f("square"), 6 * GELU_K * GELU_C, out=B.f("square"))
    P.add(dz, 2 * GELU_K, out=dz)  # 2z'
    d = P.subtract(1, s, out=B.f("d"))
    P.multiply(d, B.f("out"), out=d)  # x s (1 - s)
    P.multiply(d, dz, out=d)
    P.add(d, s, out=d)
    return P.multiply(d, g, out=d)


def _silu_f(P: Passes, x: np.ndarray, B: Buffers) -> np.ndarray:
    t = P.exp(P.negative(x, out=B.f("t")), out=B.f("t"))
    P.add(t, 1, out=t)
    return P.divide(x, t, out=B.f("out"))


def _silu_b(P: Passes, x: np.ndarray, g: np.ndarray, B: Buffers) -> np.ndarray:
    s = P.reciprocal(B.f("t"), out=B.f("t"))
    d = P.subtract(1, s, out=B.f("d"))
    P.multiply(d, B.f("out"), out=d)  # s + x s (1 - s)
    P.add(d, s, out=d)
    return P.multiply(d, g, out=d)


def _mish_f(P: Passes, x: np.ndarray, B: Buffers) -> np.ndarray:
    e = P.exp(P.minimum(x, 20, out=B.f("e")), out=B.f("e"))
    n = P.add(e, 2, out=B.f("n"))
    P.multiply(n, e, out=n)  # tanh(log1p(e)) = n / (n + 2)
    t = P.add(n, 2, out=B.f("t"))
    P.divide(n, t, out=t)
    return P.multiply(x, t, out=B.f("out"))


def _mish_b(P: Passes, x: np.ndarray, g: np.ndarray, B: Buffers) -> np.ndarray:
    e, t = B.f("e"), B.f("t")
    s = P.add(e, 1, out=B.f("n"))
    P.divide(e, s, out=s)  # sigmoid(x)
    d = P.multiply(t, t, out=B.f("d"))
    P.subtract(1, d, out=d)
    P.multiply(d, s, out=d)
    P.multiply(d, x, out=d)
    P.add(d, t, out=d)
    return P.multiply(d, g, out=d)


def _softplus_f(P: Passes, x: np.ndarray, B: Buffers) -> np.ndarray:
    e = P.exp(P.minimum(x, 20, out=B.f("e")), out=B.f("e"))
    out = P.log1p(e, out=B.f("out"))
    return P.maximum(out, x, out=out)


def _softplus_b(P: Passes, x: np.ndarray, g: np.ndarray, B: Buffers) -> np.ndarray:
    d = P.add(B.f("e"), 1, out=B.f("d"))
    P.divide(B.f("e"), d, out=d)
    return P.multiply(d, g, out=d)


def _sigmoid_f(P: Passes, x: np.ndarray, B: Buffers) -> np.ndarray:
    out = P.exp(P.negative(x, out=B.f("out")), out=B.f("out"))
    P.add(out, 1, out=out)
    return P.reciprocal(out, out=out)


def _sigmoid_b(P: Passes, x: np.ndarray, g: np.ndarray, B: Buffers) -> np.ndarray:
    d = P.subtract(1, B.f("out"), out=B.f("d"))
    P.multiply(d, B.f("out"), out=d)
    return P.multiply(d, g, out=d)


def _hardsigmoid_f(P: Passes, x: np.ndarray, B: Buffers) -> np.ndarray:
    out = P.add(x, 3, out=B.f("out"))
    P.clip(out, 0, 6, out=out)
    return P.divide(out, 6, out=out)


def _hardsigmoid_b(P: Passes, x: np.ndarray, g: np.ndarray, B: Buffers) -> np.ndarray:
    inside = P.less(P.absolute(x, out=B.f("d")), 3, out=B.b("mask"))
    d = P.multiply(g, ONE_SIXTH, out=B.f("d"))
    return P.multiply(d, inside, out=d)


def _hardswish_f(P: Passes, x: np.ndarray, B: Buffers) -> np.ndarray:
    h = _hardsigmoid_f(P, x, B)
    return P.multiply(x, h, out=B.f("swish"))


def _hardswish_b(P: Passes, x: np.ndarray, g: np.ndarray, B: Buffers) -> np.ndarray:
    # hardsigmoid(x) + x / 6 inside (-3, 3): x / 3 + 1 / 2; 0 below, 1 above.
    inside = P.less(P.absolute(x, out=B.f("d")), 3, out=B.b("mask"))
    d = P.multiply(x, 1 / 6, out=B.f("d"))
    P.multiply(d, inside, out=d)
    P.add(d, B.f("out"), out=d)
    return P.multiply(d, g, out=d)


def _hardtanh_f(P: Passes, x: np.ndarray, B: Buffers) -> np.ndarray:
    return P.clip(x, -1, 1, out=B.f("out"))


def _hardtanh_b(P: Passes, x: np.ndarray, g: np.ndarray, B: Buffers) -> np.ndarray:
    inside = P.less(P.absolute(x, out=B.f("d")), 1, out=B.b("mask"))
    return P.multiply(g, inside, out=B.f("d"))


def _tanh_f(P: Passes, x: np.ndarray, B: Buffers) -> np.ndarray:
    return P.tanh(x, out=B.f("out"))


def _tanh_b(P: Passes, x: np.ndarray, g: np.ndarray, B: Buffers) -> np.ndarray:
    d = P.multiply(B.f("out"), B.f("out"), out=B.f("d"))
    P.subtract(1, d, out=d)
    return P.multiply(d, g, out=d)


def _logsigmoid_f(P: Passes, x: np.ndarray, B: Buffers) -> np.ndarray:
    e = P.absolute(x, out=B.f("e"))
    P.negative(e, out=e)
    P.exp(e, out=e)  # exp(-|x|)
    out = P.log1p(e, out=B.f("out"))
    low = P.minimum(x, 0, out=B.f("d"))
    return P.subtract(low, out, out=out)


def _logsigmoid_b(P: Passes, x: np.ndarray, g: np.ndarray, B: Buffers) -> np.ndarray:
    # sigmoid(-x) = max(e, x < 0) / (1 + e), e = exp(-|x|) <= 1.
    e = B.f("e")
    d = P.maximum(e, P.less(x, 0, out=B.b("mask")), out=B.f("d"))
    P.add(e, 1, out=e)
    P.divide(d, e, out=d)
    return P.multiply(d, g, out=d)


def _softsign_f(P: Passes, x: np.ndarray, B: Buffers) -> np.ndarray:
    q = P.add(P.absolute(x, out=B.f("q")), 1, out=B.f("q"))
    return P.divide(x, q, out=B.f("out"))


def _softsign_b(P: Passes, x: np.ndarray, g: np.ndarray, B: Buffers) -> np.ndarray:
    d = P.multiply(B.f("q"), B.f("q"), out=B.f("d"))
    return P.divide(g, d, out=d)


ACTIVATIONS = [
    Activation("relu", lambda lib, F, x: F.relu(x), _relu_f, _relu_b, "relu"),
    Activation(
        "leaky_relu",
        lambda lib, F, x: F.leaky_relu(x, 0.01),
        _leaky_relu_f,
        _leaky_relu_b,
        "leaky_relu",
    ),
    Activation("elu", lambda lib, F, x: F.elu(x), _elu_f, _elu_b, "elu"),
    Activation("selu", lambda lib, F, x: F.selu(x), _selu_f, _selu_b, "selu"),
    Activation("celu", lambda lib, F, x: F.celu(x), _elu_f, _elu_b, "celu"),
    Activation("gelu", lambda lib, F, x: F.gelu(x), _gelu_f, _gelu_b, "gelu"),
    Activation(
        "gelu_tanh",
        lambda lib, F, x: F.gelu(x, approximate="tanh"),
        _gelu_tanh_f,
        _gelu_tanh_b,
        "gelu",
        {"approximate": "tanh"},
    ),
    Activation("silu", lambda lib, F, x: F.silu(x), _silu_f, _silu_b, "silu"),
    Activation("mish", lambda lib, F, x: F.mish(x), _mish_f, _mish_b, "mish"),
    Activation(
        "softplus",
        lambda lib, F, x: F.softplus(x),
        _softplus_f,
        _softplus_b,
        "softplus",
    ),
    Activation(
        "sigmoid", lambda lib, F, x: lib.sigmoid(x), _sigmoid_f, _sigmoid_b, "sigmoid"
    ),
    Activation(
        "hardsigmoid",
        lambda lib, F, x: F.hardsigmoid(x),
        _hardsigmoid_f,
        _hardsigmoid_b,
        "hardsigmoid",
    ),
    Activation(
        "hardswish",
        lambda lib, F, x: F.hardswish(x),
        _hardswish_f,
        _hardswish_b,
        "hardswish",
    ),
    Activation(
        "hardtanh",
        lambda lib, F, x: F.hardtanh(x),
        _hardtanh_f,
        _hardtanh_b,
        "hardtanh",
    ),
    Activation("tanh", lambda lib, F, x: lib.tanh(x), _tanh_f, _tanh_b, "tanh"),
    Activation(
        "logsigmoid",
        lambda lib, F, x: F.logsigmoid(x),
        _logsigmoid_f,
        _logsigmoid_b,
        "log_sigmoid_forward",
    ),
    Activation("softsign", lambda lib, F, x: F.softsign(x), _softsign_f, _softsign_b),
]

# The passes on their own: one plain pass and the transcendental ones.
SINGLE_PASSES = ("add", "exp", "expm1", "log1p", "tanh", "erf")
TRANSCENDENTAL = frozenset(SINGLE_PASSES) - {"add"}


@dataclass
class Row:
    name: str
    dtype: str
    forward_passes: list[str] = field(default_factory=list)
    backward_passes: list[str] = field(default_factory=list)
    times: dict[str, float] = field(default_factory=dict)  # median ms per step
    ratios: dict[str, float] = field(default_factory=dict)  # median x / torch
    bound: float = math.nan  # ms: the sum of the recipe's fastest passes


def inputs(dtype: str, elements: int = ELEMENTS) -> tuple[np.ndarray, np.ndarray]:
    """x uniform on [-6, 6] (every branch of every activation) and a cotangent."""
    rng = np.random.default_rng(0)
    x = rng.uniform(-6, 6, elements).astype(dtype)
    return x, rng.uniform(0.5, 1.5, elements).astype(dtype)


def _framework_step(activation: Activation, lib: Any, functional: Any, x: Any) -> Any:
    output = activation.call(lib, functional, x)
    ones = lib.ones_like(output)

    def step() -> Any:
        return lib.autograd.grad(activation.call(lib, functional, x), [x], [ones])

    return step


def recipe(
    activation: Activation, x: np.ndarray, g: np.ndarray
) -> tuple[Passes, Callable[[], Any], tuple[np.ndarray, np.ndarray]]:
    """The recipe's step (every call timed into one Passes), and its first values."""
    passes, buffers = Passes(), Buffers(x)

    def step() -> tuple[np.ndarray, np.ndarray]:
        out = activation.forward(passes, x, buffers)
        return out, activation.backward(passes, x, g, buffers)

    out, d = step()
    return passes, step, (out.copy(), d.copy())


def check(activation: Activation, x: np.ndarray, g: np.ndarray, got: Any) -> None:
    """The recipe computes the activation and its gradient, within torch's own
    float tolerances (or float64's against yamlgrad where torch is missing)."""
    lib, functional = (torch, torch.nn.functional) if torch else (yg, yg.nn.functional)
    leaf = lib.tensor(x, requires_grad=True)
    output = activation.call(lib, functional, leaf)
    (grad,) = lib.autograd.grad(output, [leaf], [lib.tensor(g)])
    tolerance = {"float32": 2e-5, "float64": 1e-9}[str(x.dtype)]
    for ours, theirs in zip(got, (output.detach().numpy(), grad.numpy())):
        np.testing.assert_allclose(ours, theirs, rtol=tolerance, atol=tolerance)


def measure(activation: Activation, dtype: str, repeats: int) -> Row:
    x, g = inputs(dtype)
    passes, step, values = recipe(activation, x, g)
    check(activation, x, g, values)
    names = [name for name, _ in passes.calls]  # one run, forward then backward
    forward_count = len(_recipe_forward_names(activation, x))
    row = Row(activation.name, dtype)
    row.forward_passes = names[:forward_count]
    row.backward_passes = names[forward_count:]
    steps: dict[str, Callable[[], Any]] = {
        "ours": _framework_step(
            activation, yg, yg.nn.functional, yg.tensor(x, requires_grad=True)
        )
    }
    if torch is not None:
        steps["torch"] = _framework_step(
            activation,
            torch,
            torch.nn.functional,
            torch.from_numpy(x).requires_grad_(),
        )
    if activation.floor:
        floor, kwargs = ops.FLOORS[activation.floor], activation.floor_kwargs
        ones = np.ones_like(x)
        steps["floor"] = lambda: floor(ones, x, **kwargs)
    passes.calls.clear()
    steps["recipe"] = step
    samples = ops.measure(steps, repeats)
    per_run = len(names)
    fastest = [min(t for _, t in passes.calls[i::per_run]) for i in range(per_run)]
    row.bound = sum(fastest) * 1e3
    for name, values_ in samples.items():
        row.times[name] = statistics.median(values_) * 1e3
        if "torch" in samples:
            row.ratios[name] = statistics.median(
                a / b for a, b in zip(values_, samples["torch"])
            )
    return row


def _recipe_forward_names(activation: Activation, x: np.ndarray) -> list[str]:
    passes = Passes()
    activation.forward(passes, x, Buffers(x))
    return [name for name, _ in passes.calls]


def single_passes(dtype: str, repeats: int) -> dict[str, float]:
    """ms of each pass of SINGLE_PASSES alone, on the inputs' values."""
    x, _ = inputs(dtype)
    x = np.abs(x, out=x) * 0.5  # in every function's domain (log1p's included)
    out = np.empty_like(x)
    functions = {name: getattr(np, name, None) for name in SINGLE_PASSES}
    functions["erf"] = _special().erf
    result = {}
    for name, function in functions.items():
        args = (x, 1) if name == "add" else (x,)
        result[name] = (
            min(ops._time(lambda: function(*args, out=out), 5) for _ in range(repeats))
            * 1e3
        )
    return result


# -- the tables -------------------------------------------------------------------


def _ms(value: float) -> str:
    return "" if math.isnan(value) else f"{value:.2f}"


def _r(value: float | None) -> str:
    return "" if value is None or math.isnan(value) else f"{value:.2f}"


def _kinds(names: list[str]) -> str:
    """'7 (exp, erf)': the count, and the transcendental passes among them."""
    special = [n for n in names if n in TRANSCENDENTAL]
    return f"{len(names)}" + (f" ({', '.join(special)})" if special else "")


def activation_table(rows: list[Row], single: dict[str, dict[str, float]]) -> list[str]:
    lines = []
    for dtype in ops.DTYPES:
        group = [r for r in rows if r.dtype == dtype]
        if not group:
            continue
        p = single[dtype]["add"]
        lines += [
            f"## Activations, {ELEMENTS:,} elements, {dtype}",
            "",
            "One plain pass (`np.add(x, 1, out=y)`) takes "
            f"{p:.3f} ms; "
            + ", ".join(
                f"{name} {single[dtype][name]:.3f} ms"
                for name in sorted(TRANSCENDENTAL)
            )
            + ".",
            "",
            "| activation | torch ms | ours ms | floor ms | recipe ms "
            "| passes fwd + bwd | N x P ms | bound ms | ours/torch | floor/torch "
            "| bound/torch | numpy reaches 1.5x |",
            "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|",
        ]
        for r in group:
            passes = r.forward_passes + r.backward_passes
            bound_ratio = r.bound / r.times["torch"] if "torch" in r.times else math.nan
            reach = (
                "" if math.isnan(bound_ratio) else "yes" if bound_ratio <= 1.5 else "no"
            )
            lines.append(
                f"| {r.name} | {_ms(r.times.get('torch', math.nan))} "
                f"| {_ms(r.times['ours'])} | {_ms(r.times.get('floor', math.nan))} "
                f"| {_ms(r.times['recipe'])} "
                f"| {_kinds(r.forward_passes)} + {_kinds(r.backward_passes)} "
                f"| {len(passes) * p:.2f} | {_ms(r.bound)} "
                f"| {_r(r.ratios.get('ours'))} | {_r(r.ratios.get('floor'))} "
                f"| {_r(bound_ratio)} | {reach} |"
            )
        lines.append("")
    return lines


# A step under this many ms is the interpreter's, not numpy's: views, shape
# functions and tiny samples, whose ratio no kernel changes.
PYTHON_BOUND_MS = 0.1


def _large_sections(ops_md: Path) -> dict[str, list[dict[str, float]]]:
    """The per-op table's rows at the large size, by dtype: each row's ours,
    torch, kernels and floor ms and its ratios (nan where a cell is empty)."""
    names = (
        "ours",
        "torch",
        "kernels",
        "floor",
        "ratio",
        "kernels_ratio",
        "floor_ratio",
    )
    sections: dict[str, list[dict[str, float]]] = {}
    for section in re.split(r"^## ", ops_md.read_text(), flags=re.M):
        title = section.splitlines()[0]
        if not title.startswith("large"):
            continue
        rows = sections.setdefault(title.rsplit(", ", 1)[1], [])
        for line in section.splitlines():
            cells = [c.strip() for c in line.split("|")[1:-1]]
            if len(cells) != 9 or not re.fullmatch(r"[\d.]+", cells[6]):
                continue
            values = [float(c) if c else math.nan for c in cells[2:]]
            rows.append(dict(zip(names, values)))
    return sections


def median_table(ops_md: Path) -> list[str]:
    """The median target from the per-op table: how many ops have a floor, how
    many run at it (kernels, or ours for a composite, within 1.1x of it), the
    median ours/torch with every op that has a floor at its floor, and how many
    steps are too short for any kernel to matter (`PYTHON_BOUND_MS`)."""
    if not ops_md.exists():
        return []
    lines = [
        "## The median over all ops, from [ops.md](ops.md)",
        "",
        "| dtype (large) | ops | median ours/torch | with a floor "
        "| at their floor (kernels <= 1.1x floor) | floor/torch > 0.8 "
        "| median with each floor reached "
        f"| ours under {PYTHON_BOUND_MS} ms (Python-bound) | their median ours/torch "
        "| median of the others |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for dtype, rows in _large_sections(ops_md).items():
        floored = [r for r in rows if not math.isnan(r["floor"])]
        at_floor = [
            r
            for r in floored
            if (r["ours"] if math.isnan(r["kernels"]) else r["kernels"])
            <= 1.1 * r["floor"]
        ]
        reached = [
            min(r["ratio"], r["floor_ratio"]) if r in floored else r["ratio"]
            for r in rows
        ]
        short = [r["ratio"] for r in rows if r["ours"] < PYTHON_BOUND_MS]
        others = [r["ratio"] for r in rows if r["ours"] >= PYTHON_BOUND_MS]
        lines.append(
            f"| {dtype} | {len(rows)} | {statistics.median(r['ratio'] for r in rows):.2f} "
            f"| {len(floored)} | {len(at_floor)} "
            f"| {sum(r['floor_ratio'] > 0.8 for r in floored)} "
            f"| {statistics.median(reached):.2f} | {len(short)} "
            f"| {statistics.median(short):.2f} | {statistics.median(others):.2f} |"
        )
    return lines + [""]


def document(rows: list[Row], single: dict[str, dict[str, float]], command: str) -> str:
    lines = [
        "# What numpy can reach on the activations",
        "",
        ops.provenance(command),
        "",
        "Generated by [passes.py](passes.py) (its docstring says what is timed). "
        "Times are milliseconds per forward + backward step (median of paired, "
        "interleaved repetitions); ratios are medians of per-repetition ratios. "
        "`recipe`: the fewest numpy passes found for forward + backward, into "
        "buffers allocated once, checked against torch; `passes`: their count, "
        "forward + backward, transcendental ones named; `N x P`: that count times "
        "one plain pass; `bound`: the sum of the recipe's passes, each at its "
        "fastest, the least numpy takes without fusing; `floor`: the op's "
        "declared floor, which allocates its temporaries as plain numpy does.",
        "",
    ]
    return "\n".join(
        lines + activation_table(rows, single) + median_table(HERE / "ops.md")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", default="", help="comma-separated activations")
    parser.add_argument("--dtypes", default=",".join(ops.DTYPES))
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=Path, help="default: activations.md, full runs")
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time the thread's CPU time, not wall time (a machine others share)",
    )
    args = parser.parse_args(argv)
    if args.cpu_time:
        ops.CLOCK = time.thread_time
    wanted = set(args.names.split(",")) if args.names else None
    chosen = [a for a in ACTIVATIONS if wanted is None or a.name in wanted]
    dtypes = args.dtypes.split(",")
    warnings.simplefilter("ignore")
    single = {dtype: single_passes(dtype, args.repeats) for dtype in dtypes}
    rows = []
    for activation in chosen:
        for dtype in dtypes:
            row = measure(activation, dtype, args.repeats)
            rows.append(row)
            print(
                f"{row.name:12} {dtype:8} ours/torch {_r(row.ratios.get('ours'))} "
                f"bound {row.bound:.2f} ms, torch {row.times.get('torch', math.nan):.2f}",
                flush=True,
            )
    command = "python benchmarks/passes.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    text = document(rows, single, command.strip())
    full = wanted is None and len(dtypes) == len(ops.DTYPES)
    out = args.out or (HERE / "activations.md" if full else None)
    if out is not None:
        out.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
