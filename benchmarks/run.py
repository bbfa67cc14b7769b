"""yamlgrad's benchmark suite: each workload against numpy written by hand and peers.

    python benchmarks/run.py                 # full sizes, writes benchmarks/results.md
    python benchmarks/run.py --smoke         # tiny sizes, one repetition (a test runs this)
    python benchmarks/run.py --only 1,3      # some workloads only (nothing is written)
    python benchmarks/run.py --json rows.json  # the rows as JSON too

The peers (torch, HIPS autograd, MyGrad, micrograd) run when installed:
`pip install -e '.[bench]'`. Frameworks run interleaved within each repetition, in
an order that rotates from one repetition to the next (so none always runs right
after another's memory was freed); every framework, numpy's BLAS included, runs on
one thread (YAMLGRAD_BENCH_THREADS to change it), so a busy core does not decide a
ratio. In each repetition a framework runs its step several times in a row, as a
training loop does, and the sample is their mean: enough calls that the slowest
framework's sample lasts about 20 ms (`--calls N` fixes N; `--calls 1` times
single calls, each starting with caches the other frameworks have just filled).
Workload 2 also runs benchmarks/python_tape.py, the least Python a define-by-run
autograd can run over the same numpy work: a reference for the interpreter's
share of a step, not a peer. The table reports the median time and the medians
of the per-repetition ratios against the numpy floor (the same forward in plain
numpy with a hand-written backward) and against torch. Every framework's gradient
is checked against the floor's, so a fast wrong answer is flagged. Workload 5
measures peak resident memory in fresh processes; workload 8 times the
generator's `--check` and `import yamlgrad` in subprocesses. Benchmarks are not
tests: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

# Before numpy (and torch) start their thread pools.
THREADS = os.environ.get("YAMLGRAD_BENCH_THREADS", "1")
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, THREADS)

import numpy as np  # noqa: E402

# A workload-5 child imports only the framework it measures.
ONLY = os.environ.get("YAMLGRAD_BENCH_ONLY", "")
# What a sample's time is read from: wall time, or with --cpu-time this
# process's CPU time (steadier on a machine other work shares; every framework
# here runs on this process's one thread).
CLOCK = time.perf_counter
yg: Any = None
if ONLY.split(" ")[0] in ("", "yamlgrad"):
    import yamlgrad as yg

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))
import python_tape  # noqa: E402

# Workload 2's reference: the least Python any define-by-run autograd runs.
TAPE = "python tape (reference)"
# The same steps through yg.compile: traced once (in the warm-up), then one
# generated forward and backward per call.
COMPILED = "yamlgrad compiled"


def yg_compile(fn: Callable[..., Any]) -> Any:
    """yg.compile(fn); for a yamlgrad from before yg.compile (benchmarks/compare.py
    and icount.py measure older commits with this script), a stand-in that fails
    when called, so the compiled rows are reported as failed and the rest run."""
    compile_ = getattr(yg, "compile", None)
    if compile_ is not None:
        return compile_(fn)

    def missing(*args: Any) -> Any:
        raise NotImplementedError("this yamlgrad has no yg.compile")

    missing.trace_seconds, missing.graphs = [], {}  # type: ignore[attr-defined]
    return missing


class Compiled:
    """A runner of a compiled step; `functions` are its yg.compile'd functions,
    whose tracing and code generation time is reported in a row of its own."""

    def __init__(self, run: Callable[[], Any], *functions: Any) -> None:
        self.run = run
        self.functions = functions

    def __call__(self) -> Any:
        return self.run()

    def trace_seconds(self) -> float:
        return sum(sum(f.trace_seconds) for f in self.functions)

    def traced_calls(self) -> int:
        """The recorded calls of every graph, before the passes: the size that
        tracing and code generation are linear in."""
        return sum(
            g.traced_calls
            for f in self.functions
            for graphs in f.graphs.values()
            if isinstance(graphs, list)
            for g in graphs
        )


def _optional(name: str) -> Any:
    if ONLY and name.split(".")[0] != ONLY:
        return None
    try:
        return __import__(name, fromlist=["_"])
    except ImportError:  # pragma: no cover - depends on the machine
        return None


torch = _optional("torch")
if torch is not None:
    torch.set_num_threads(int(THREADS))
anp = _optional("autograd.numpy")
ag_grad = getattr(_optional("autograd"), "grad", None)
mg = _optional("mygrad")
mg_nnet = _optional("mygrad.nnet")
micrograd_engine = _optional("micrograd.engine")

Gradients = tuple[Any, ...]  # a runner's gradients, one array (or number) each
Runner = Callable[[], Any]  # runs forward + backward, returns the gradient(s)


@dataclass(frozen=True)
class Target:
    """What yamlgrad aims for: `limit` times the named framework's median."""

    limit: float
    against: str  # "numpy" or "torch"

    def text(self) -> str:
        return f"<= {self.limit:.2f}x {self.against}"


@dataclass(frozen=True)
class Workload:
    name: str
    runners: dict[str, Runner]
    target: Target
    repeats: float = 1.0  # a fraction of --repeats for the slow workloads
    tolerance: float = 1e-8
    ops: int | None = None  # ops in one step, where the workload counts them
    compiled_target: Target | None = None  # what the compiled step aims for
    # What the gradients are checked against, where calling the numpy floor
    # changes what it returns next (a training step updates its parameters).
    reference: Runner | None = None


@dataclass
class Row:
    workload: str
    framework: str
    value: str
    floor_ratio: float = float("nan")
    torch_ratio: float = float("nan")
    check: str = "ok"
    target: str = ""
    extra: dict[str, float] = field(default_factory=dict)
    median: float = float("nan")  # in `unit`: "s" or "MB"
    unit: str = ""
    ops: int | None = None  # the workload's ops per step, where it counts them

    @property
    def number(self) -> int:
        """The workload's number, which starts its name."""
        return int(self.workload.split(".", 1)[0])

    def record(self) -> dict[str, Any]:
        """The row for --json: numbers as numbers (NaN as null)."""

        def number(x: float) -> float | None:
            return None if x != x else x

        return {
            "number": self.number,
            "workload": self.workload,
            "framework": self.framework,
            "median": number(self.median),
            "unit": self.unit,
            "ops": self.ops,
            "value": self.value,
            "floor_ratio": number(self.floor_ratio),
            "torch_ratio": number(self.torch_ratio),
            "check": self.check,
            "target": self.target,
        }

    def line(self) -> str:
        def ratio(r: float) -> str:
            return "-" if r != r else f"{r:.2f}x"

        return (
            f"| {self.workload} | {self.framework} | {self.value} "
            f"| {ratio(self.floor_ratio)} | {ratio(self.torch_ratio)} | {self.check} "
            f"| {self.target} |"
        )


def _flat(result: Any) -> np.ndarray:
    """A runner's gradients as one float64 vector, for the check against the
    floor (outside the timed call: a runner returns its gradients as they come)."""
    arrays = result if isinstance(result, (tuple, list)) else (result,)
    return np.concatenate([np.asarray(a, dtype=np.float64).ravel() for a in arrays])


# --- workloads 1 and 4: a chain of element-wise ops ---------------------------------


def chain(n_ops: int, size: int, number: int, target: Target) -> Workload:
    """A chain of `n_ops` element-wise ops (alternately +0.5 and *1.001), then a sum."""
    x0 = np.random.default_rng(0).uniform(0.5, 1.5, size)

    def program(x: Any) -> Any:
        y = x
        for i in range(n_ops):
            y = y * 1.001 if i % 2 else y + 0.5
        return y

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
        program(x).sum().backward()
        return x.grad.numpy()

    step = yg_compile(lambda x: program(x).sum())

    def compiled() -> np.ndarray:
        x = yg.tensor(x0, requires_grad=True)
        step(x).backward()
        return x.grad.numpy()

    runners: dict[str, Runner] = {
        "numpy": floor,
        "yamlgrad": ours,
        COMPILED: Compiled(compiled, step),
    }
    if torch is not None:

        def with_torch() -> np.ndarray:
            x = torch.tensor(x0, requires_grad=True)
            program(x).sum().backward()
            return x.grad.numpy()

        runners["torch"] = with_torch
    if ag_grad is not None:
        gradient = ag_grad(lambda x: anp.sum(program(x)))
        runners["autograd"] = lambda: gradient(x0)
    if mg is not None:

        def with_mygrad() -> np.ndarray:
            x = mg.tensor(x0)
            mg.sum(program(x)).backward()
            return np.asarray(x.grad)

        runners["mygrad"] = with_mygrad
    return Workload(
        f"{number}. chain of {n_ops:,} ops on {size} float64",
        runners,
        target,
        repeats=1.0 if n_ops < 10_000 else 0.34,
        ops=n_ops,
        compiled_target=Target(0.35, "torch") if n_ops < 10_000 else None,
    )


# --- workload 2: an MLP with a softmax cross-entropy from primitives ----------------


@dataclass(frozen=True)
class MlpData:
    """Workload 2's batch and parameters, shared by every framework (not copied:
    only the step is timed, as in a training loop whose parameters persist)."""

    batch: int
    activation: str  # "tanh" or "relu"
    x0: np.ndarray
    onehot: np.ndarray
    params: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # w1, b1, w2, b2

    @classmethod
    def make(
        cls, batch: int, sizes: tuple[int, int, int], activation: str, dtype: type
    ) -> MlpData:
        rng = np.random.default_rng(2)
        n_in, n_hidden, n_out = sizes
        x0 = rng.standard_normal((batch, n_in)).astype(dtype)
        labels = rng.integers(0, n_out, batch)
        onehot = np.eye(n_out, dtype=dtype)[labels]
        w1 = (rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in)).astype(dtype)
        b1 = np.zeros(n_hidden, dtype=dtype)
        w2 = (rng.standard_normal((n_hidden, n_out)) / np.sqrt(n_hidden)).astype(dtype)
        b2 = np.zeros(n_out, dtype=dtype)
        return cls(batch, activation, x0, onehot, (w1, b1, w2, b2))


def mlp_floor(data: MlpData) -> Runner:
    """Workload 2 in numpy, with the backward written by hand."""
    x0, onehot, batch, activation = data.x0, data.onehot, data.batch, data.activation
    w1, b1, w2, b2 = data.params

    def floor() -> Gradients:
        pre = x0 @ w1 + b1
        h = np.tanh(pre) if activation == "tanh" else np.maximum(pre, 0)
        logits = h @ w2 + b2
        z = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        # loss = -(onehot * (z - log s)).sum() / batch
        loss = -(onehot * (z - np.log(s))).sum() / batch
        glogits = (e / s - onehot) / batch
        gw2 = h.T @ glogits
        gb2 = glogits.sum(axis=0)
        gh = glogits @ w2.T
        gpre = gh * (1 - h * h) if activation == "tanh" else gh * (pre > 0)
        gw1 = x0.T @ gpre
        gb1 = gpre.sum(axis=0)
        del loss  # computed, as every framework's forward computes it
        return gw1, gb1, gw2, gb2

    return floor


def mlp_loss(
    lib: Any,
    x: Any,
    p: Any,
    act: Callable[[Any], Any],
    amax: Any,
    hot: Any,
    batch: int,
) -> Any:
    """Workload 2's forward in any framework: `lib` provides log, sum and exp,
    `amax` the row maximum (and in `amax.keep` the keyword arguments that keep
    its dimension)."""
    pre = x @ p[0] + p[1]
    h = act(pre)
    logits = h @ p[2] + p[3]
    z = logits - amax(logits)
    lse = lib.log(lib.sum(lib.exp(z), **amax.keep))
    return -lib.sum((z - lse) * hot) / batch


def _keep(fn: Callable[[Any], Any], **kw: Any) -> Any:
    """`fn`, a row maximum, with the keywords that keep the reduced dimension in
    the framework's own spelling (`dim=1, keepdim=True` or `axis=1, keepdims=True`)."""
    fn.keep = kw  # type: ignore[attr-defined]
    return fn


def mlp_runners(data: MlpData) -> dict[str, Runner]:
    """Workload 2's step in yamlgrad, the python tape and each installed peer."""
    x0, onehot, params, batch = data.x0, data.onehot, data.params, data.batch
    activation = data.activation
    runners: dict[str, Runner] = {}

    def ours() -> Gradients:
        p = [yg.from_numpy(a).requires_grad_() for a in params]
        act = yg.tanh if activation == "tanh" else yg.relu
        amax = _keep(lambda t: t.amax(dim=1, keepdim=True), dim=1, keepdim=True)
        x, hot = yg.from_numpy(x0), yg.from_numpy(onehot)
        mlp_loss(yg, x, p, act, amax, hot, batch).backward()
        return tuple(t.grad.numpy() for t in p)

    runners["yamlgrad"] = ours
    compiled_act = yg.tanh if activation == "tanh" else yg.relu
    row_max = _keep(lambda t: t.amax(dim=1, keepdim=True), dim=1, keepdim=True)
    loss = yg_compile(
        lambda x, hot, *p: mlp_loss(yg, x, p, compiled_act, row_max, hot, batch)
    )

    def compiled() -> Gradients:
        p = [yg.from_numpy(a).requires_grad_() for a in params]
        loss(yg.from_numpy(x0), yg.from_numpy(onehot), *p).backward()
        return tuple(t.grad.numpy() for t in p)

    runners[COMPILED] = Compiled(compiled, loss)

    def with_tape() -> Gradients:
        p = [python_tape.Var(a, requires_grad=True) for a in params]
        act = python_tape.tanh if activation == "tanh" else python_tape.relu
        amax = _keep(lambda t: t.amax(dim=1, keepdim=True), dim=1, keepdim=True)
        x, hot = python_tape.Var(x0), python_tape.Var(onehot)
        mlp_loss(python_tape, x, p, act, amax, hot, batch).backward()
        return tuple(t.grad for t in p)

    runners[TAPE] = with_tape
    if torch is not None:

        def with_torch() -> Gradients:
            p = [torch.from_numpy(a).requires_grad_() for a in params]
            act = torch.tanh if activation == "tanh" else torch.relu
            amax = _keep(lambda t: t.amax(dim=1, keepdim=True), dim=1, keepdim=True)
            hot = torch.from_numpy(onehot)
            x = torch.from_numpy(x0)
            mlp_loss(torch, x, p, act, amax, hot, batch).backward()
            return tuple(t.grad.numpy() for t in p)

        runners["torch"] = with_torch
    if ag_grad is not None:
        amax = _keep(lambda t: anp.max(t, axis=1, keepdims=True), axis=1, keepdims=True)
        act = anp.tanh if activation == "tanh" else (lambda t: anp.maximum(t, 0))
        gradient = ag_grad(lambda p: mlp_loss(anp, x0, p, act, amax, onehot, batch))
        runners["autograd"] = lambda: tuple(gradient(list(params)))
    if mg is not None:

        def with_mygrad() -> Gradients:
            p = [mg.tensor(a) for a in params]
            act = mg.tanh if activation == "tanh" else mg_nnet.relu
            amax = _keep(
                lambda t: mg.max(t, axis=1, keepdims=True), axis=1, keepdims=True
            )
            mlp_loss(mg, x0, p, act, amax, onehot, batch).backward()
            return tuple(t.grad for t in p)

        runners["mygrad"] = with_mygrad
    return runners


# Workload 2 as a training loop runs it: the parameters are created once (as
# Parameters, kept across steps), the batch is converted from numpy each step,
# and each step ends with the SGD update `p -= p.grad * lr` under no_grad and
# the gradients cleared (set to None, as `zero_grad()` does by default); the
# floor does the same update by hand, in place. Each framework trains its own
# copy of the parameters from the same start, so the first step's gradients (the
# warm-up call's) are checked against the floor's first.
LEARNING_RATE = 0.01


def mlp_training_floor(data: MlpData) -> Runner:
    """Workload 2's training step in numpy: the hand-written step, then the
    update in place."""
    params = [a.copy() for a in data.params]
    gradients = mlp_floor(replace(data, params=tuple(params)))

    def step() -> Gradients:
        grads = gradients()
        for p, g in zip(params, grads):
            p -= g * LEARNING_RATE
        return grads

    return step


def _training_step(lib: Any, data: MlpData, loss: Callable[..., Any]) -> Runner:
    """A training step in yamlgrad or torch (`lib`), `loss` taking (x, hot,
    *params): mlp_loss eagerly, or its compiled form."""
    params = [lib.nn.Parameter(lib.from_numpy(a.copy())) for a in data.params]

    def step() -> Gradients:
        x, hot = lib.from_numpy(data.x0), lib.from_numpy(data.onehot)
        loss(x, hot, *params).backward()
        grads = tuple(p.grad for p in params)
        with lib.no_grad():
            for p in params:
                p -= p.grad * LEARNING_RATE
                p.grad = None
        return grads

    return step


def mlp_training_runners(data: MlpData) -> dict[str, Runner]:
    """Workload 2's training step in yamlgrad (eager and compiled) and torch."""

    def loss_in(lib: Any) -> Callable[..., Any]:
        act = lib.tanh if data.activation == "tanh" else lib.relu
        amax = _keep(lambda t: t.amax(dim=1, keepdim=True), dim=1, keepdim=True)
        return lambda x, hot, *p: mlp_loss(lib, x, p, act, amax, hot, data.batch)

    compiled = yg_compile(loss_in(yg))
    runners: dict[str, Runner] = {
        "yamlgrad": _training_step(yg, data, loss_in(yg)),
        COMPILED: Compiled(_training_step(yg, data, compiled), compiled),
    }
    if torch is not None:
        runners["torch"] = _training_step(torch, data, loss_in(torch))
    return runners


def mlp_training(
    batch: int, sizes: tuple[int, int, int], activation: str, dtype: type
) -> Workload:
    """784-256-10 MLP trained by SGD: forward, backward and the update."""
    data = MlpData.make(batch, sizes, activation, dtype)
    n_in, n_hidden, n_out = sizes
    name = np.dtype(dtype).name
    return Workload(
        f"2. MLP {n_in}-{n_hidden}-{n_out} batch {batch}, {activation}, {name}, "
        "SGD training step",
        {"numpy": mlp_training_floor(data), **mlp_training_runners(data)},
        Target(1.35, "numpy"),
        tolerance=1e-8 if dtype == np.float64 else 1e-4,
        compiled_target=Target(1.05 if dtype == np.float64 else 1.08, "numpy"),
        reference=mlp_floor(data),
    )


def mlp(
    batch: int, sizes: tuple[int, int, int], activation: str, dtype: type
) -> Workload:
    """784-256-10 MLP, forward + backward of a cross-entropy built from primitives."""
    data = MlpData.make(batch, sizes, activation, dtype)
    n_in, n_hidden, n_out = sizes
    name = np.dtype(dtype).name
    return Workload(
        f"2. MLP {n_in}-{n_hidden}-{n_out} batch {batch}, {activation}, {name}",
        {"numpy": mlp_floor(data), **mlp_runners(data)},
        Target(1.2, "numpy"),
        tolerance=1e-8 if dtype == np.float64 else 1e-4,
        compiled_target=Target(1.05, "numpy"),
    )


# --- workloads 3 and 5: thirteen element-wise ops on a large array -----------------


def _large_input(size: int) -> np.ndarray:
    return np.random.default_rng(1).uniform(0.5, 1.5, size)


def large_floor(x0: np.ndarray) -> np.ndarray:
    a = np.exp(x0)
    b = a * x0
    c = np.sin(b)
    d = c + x0
    e = d * d
    f = np.tanh(e)
    g = f * 3.0
    h = g - x0
    s = 1.0 / (1.0 + np.exp(-h))
    k = np.sqrt(h * h + 1.0)
    m = k + s
    # backward of sum(log(m))
    gm = 1.0 / m
    gh = gm * (h / k + s * (1.0 - s))
    gx = -gh
    ge = (gh * 3.0) * (1 - f * f)
    gd = ge * 2 * d
    gx = gx + gd
    gb = gd * np.cos(b)
    gx = gx + gb * a
    gx = gx + gb * x0 * a
    return gx


def _sigmoid(lib: Any, x: Any) -> Any:
    """lib.sigmoid, or 1 / (1 + exp(-x)) for a library without one."""
    if hasattr(lib, "sigmoid"):
        return lib.sigmoid(x)
    return 1.0 / (1.0 + lib.exp(-x))


def large_program(lib: Any, x: Any) -> Any:
    """Thirteen element-wise ops, then a sum: a chain with the activations and
    the log a user's would have, not only tanh."""
    a = lib.exp(x)
    b = a * x
    c = lib.sin(b)
    d = c + x
    e = d * d
    f = lib.tanh(e)
    g = f * 3.0
    h = g - x
    s = _sigmoid(lib, h)
    k = lib.sqrt(h * h + 1.0)
    return lib.sum(lib.log(k + s))


def large_runner(framework: str, x0: np.ndarray) -> Runner:
    """Forward + backward of the thirteen-op program for one framework."""
    if framework == "numpy":
        return lambda: large_floor(x0)
    if framework == "yamlgrad":

        def ours() -> np.ndarray:
            x = yg.from_numpy(x0).requires_grad_()  # no copy, as the floor
            large_program(yg, x).backward()
            return x.grad.numpy()

        return ours
    if framework == COMPILED:
        program = yg_compile(lambda x: large_program(yg, x))

        def compiled() -> np.ndarray:
            x = yg.from_numpy(x0).requires_grad_()
            program(x).backward()
            return x.grad.numpy()

        return Compiled(compiled, program)
    if framework == "torch":

        def with_torch() -> np.ndarray:
            x = torch.from_numpy(x0).requires_grad_()
            large_program(torch, x).backward()
            return x.grad.numpy()

        return with_torch
    if framework == "autograd":
        gradient = ag_grad(lambda x: large_program(anp, x))
        return lambda: gradient(x0)
    if framework == "mygrad":

        def with_mygrad() -> np.ndarray:
            x = mg.tensor(x0)
            large_program(mg, x).backward()
            return np.asarray(x.grad)

        return with_mygrad
    raise ValueError(framework)


def _installed() -> list[str]:
    names = ["numpy", "yamlgrad", COMPILED]
    names += [n for n, m in (("torch", torch), ("autograd", anp), ("mygrad", mg)) if m]
    return names


def large_elementwise(size: int) -> Workload:
    """Workload 3: thirteen element-wise ops on a large float64 array."""
    x0 = _large_input(size)
    runners = {name: large_runner(name, x0) for name in _installed()}
    # Eager formulas allocate their results as written (plain numpy doing the
    # same allocations takes about 1.28x the floor's in-place passes): 1.35x here,
    # the rest is yg.compile's memory planning.
    return Workload(
        f"3. 13 element-wise ops on {size:,} float64",
        runners,
        Target(1.35, "numpy"),
        compiled_target=Target(1.05, "numpy"),
    )


# --- workload 6: a micrograd-style MLP on size-1 arrays, and on 0-d ones ------------


@dataclass(frozen=True)
class ScalarMlp:
    """Workload 6's weights and input, as Python floats: each framework makes
    its own size-1 values of them inside the step, as micrograd does."""

    xs: list[float]
    w1: list[list[float]]
    b1: list[float]
    w2: list[float]
    b2: float
    target: float = 0.5

    @classmethod
    def make(cls, n_in: int, n_hidden: int) -> ScalarMlp:
        rng = np.random.default_rng(3)
        xs = rng.uniform(-1, 1, n_in).tolist()
        w1 = rng.uniform(-1, 1, (n_hidden, n_in)).tolist()
        b1 = rng.uniform(-1, 1, n_hidden).tolist()
        w2 = rng.uniform(-1, 1, n_hidden).tolist()
        b2 = float(rng.uniform(-1, 1))
        return cls(xs, w1, b1, w2, b2)

    def boxed(self) -> ScalarMlp:
        """The same net with each parameter a one-element list, which the
        frameworks make their size-1 values of (the floats make 0-d ones)."""
        w1 = [[[w] for w in row] for row in self.w1]
        w2 = [[w] for w in self.w2]
        b1 = [[b] for b in self.b1]
        return replace(self, w1=w1, b1=b1, w2=w2, b2=[self.b2])  # type: ignore

    def forward(
        self, make: Callable[[float], Any], relu: Callable[[Any], Any]
    ) -> tuple[Any, list[Any]]:
        """The squared error of one input, and the parameters in a flat list."""
        xs, target = self.xs, self.target
        params = [[make(w) for w in row] for row in self.w1]
        biases = [make(b) for b in self.b1]
        out_w = [make(w) for w in self.w2]
        out_b = make(self.b2)
        hidden = []
        for row, b in zip(params, biases):
            act = b
            for w, x in zip(row, xs):
                act = act + w * x
            hidden.append(relu(act))
        out = out_b
        for w, h in zip(out_w, hidden):
            out = out + w * h
        loss = (out - target) * (out - target)
        flat = [w for row in params for w in row] + biases + out_w + [out_b]
        return loss, flat

    def floor(self) -> Gradients:
        """The same size-1 arrays in numpy, forward then a hand-written backward."""
        xs, target = self.xs, self.target
        params = [[np.array([w]) for w in row] for row in self.w1]
        biases = [np.array([b]) for b in self.b1]
        out_w = [np.array([w]) for w in self.w2]
        out_b = np.array([self.b2])
        pres, hidden = [], []
        for row, b in zip(params, biases):
            act = b
            for w, x in zip(row, xs):
                act = act + w * x
            pres.append(act)
            hidden.append(np.maximum(act, 0))
        out = out_b
        for w, h in zip(out_w, hidden):
            out = out + w * h
        gout = 2 * (out - target)
        g_out_w = [gout * h for h in hidden]
        g_params, g_biases = [], []
        for w, pre in zip(out_w, pres):
            gpre = gout * w * (pre > 0)
            g_params.append([gpre * x for x in xs])
            g_biases.append(gpre)
        flat = [g for row in g_params for g in row] + g_biases + g_out_w + [gout]
        return tuple(flat)


def scalar_mlp(n_in: int, n_hidden: int, zero_d: bool = False) -> Workload:
    """A 20-16-1 MLP where every weight is its own size-1 array (micrograd's
    style), or its own 0-d one (`torch.tensor(2.0)`, PyTorch's tutorials'); the
    numpy floor runs on size-1 arrays for both."""
    floor = ScalarMlp.make(n_in, n_hidden)
    net = floor if zero_d else floor.boxed()

    def ours() -> Gradients:
        make = lambda v: yg.tensor(v, dtype=yg.float64, requires_grad=True)  # noqa
        loss, flat = net.forward(make, yg.relu)
        loss.backward()
        return tuple(p.grad.numpy() for p in flat)

    def loss_of(*flat: Any) -> Any:
        given = iter(flat)  # forward() asks for the parameters in this order
        return net.forward(lambda v: next(given), yg.relu)[0]

    step = yg_compile(loss_of)
    values = [w for row in net.w1 for w in row] + net.b1 + net.w2 + [net.b2]

    def compiled() -> Gradients:
        flat = [yg.tensor(v, dtype=yg.float64, requires_grad=True) for v in values]
        step(*flat).backward()
        return tuple(p.grad.numpy() for p in flat)

    runners: dict[str, Runner] = {
        "numpy": floor.floor,
        "yamlgrad": ours,
        COMPILED: Compiled(compiled, step),
    }
    if torch is not None:

        def with_torch() -> Gradients:
            make = lambda v: torch.tensor(  # noqa: E731
                v, dtype=torch.float64, requires_grad=True
            )
            loss, flat = net.forward(make, torch.relu)
            loss.backward()
            return tuple(p.grad.numpy() for p in flat)

        runners["torch"] = with_torch
    if micrograd_engine is not None:

        def with_micrograd() -> Gradients:
            loss, flat = floor.forward(micrograd_engine.Value, lambda v: v.relu())
            loss.backward()
            return tuple(p.grad for p in flat)

        runners["micrograd"] = with_micrograd
    kind = "0-d" if zero_d else "size-1"
    return Workload(
        f"6. micrograd-style MLP {n_in}-{n_hidden}-1 on {kind} arrays",
        runners,
        Target(1.0, "torch"),
        compiled_target=Target(0.2, "torch"),
    )


# --- workload 7: a small CNN training step ------------------------------------------


def cnn(batch: int, side: int, channels: int) -> Workload:
    """conv2d 3x3 -> relu -> max_pool2d 2 -> linear -> cross_entropy, one step."""
    rng = np.random.default_rng(4)
    x0 = rng.standard_normal((batch, 1, side, side))
    labels = rng.integers(0, 10, batch)
    k = 3
    conv_side = side - k + 1
    assert conv_side % 2 == 0, "the pooled side must be exact"
    pooled = conv_side // 2
    n_features = channels * pooled * pooled
    cw = rng.standard_normal((channels, 1, k, k)) / 3
    cb = rng.standard_normal(channels) / 10
    lw = rng.standard_normal((10, n_features)) / np.sqrt(n_features)
    lb = np.zeros(10)
    params = (cw, cb, lw, lb)

    def floor() -> Gradients:
        windows = np.lib.stride_tricks.sliding_window_view(x0, (k, k), axis=(2, 3))
        conv = np.einsum("nchwij,ocij->nohw", windows, cw, optimize=True)
        conv += cb[None, :, None, None]
        act = np.maximum(conv, 0)
        blocks = act.reshape(batch, channels, pooled, 2, pooled, 2)
        pool = blocks.max(axis=(3, 5))
        flat = pool.reshape(batch, -1)
        logits = flat @ lw.T + lb
        z = logits - logits.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        glogits = p
        glogits[np.arange(batch), labels] -= 1
        glogits /= batch
        glw = glogits.T @ flat
        glb = glogits.sum(axis=0)
        gpool = (glogits @ lw).reshape(pool.shape)
        mask = blocks == pool[:, :, :, None, :, None]
        gact = (mask * gpool[:, :, :, None, :, None]).reshape(act.shape)
        gconv = gact * (conv > 0)
        gcb = gconv.sum(axis=(0, 2, 3))
        gcw = np.einsum("nchwij,nohw->ocij", windows, gconv, optimize=True)
        return gcw, gcb, glw, glb

    def step(lib: Any, functional: Any, x: Any, p: list[Any], target: Any) -> None:
        h = functional.relu(functional.conv2d(x, p[0], p[1]))
        h = functional.max_pool2d(h, 2)
        logits = functional.linear(h.reshape(batch, -1), p[2], p[3])
        functional.cross_entropy(logits, target).backward()

    def ours() -> Gradients:
        p = [yg.from_numpy(a).requires_grad_() for a in params]  # shared, as above
        step(yg, yg.nn.functional, yg.from_numpy(x0), p, yg.from_numpy(labels))
        return tuple(t.grad.numpy() for t in p)

    runners: dict[str, Runner] = {
        "numpy": floor,
        "yamlgrad": ours,
        COMPILED: cnn_compiled(x0, labels, params),
    }
    if torch is not None:
        import torch.nn.functional as torch_functional

        def with_torch() -> Gradients:
            p = [torch.from_numpy(a).requires_grad_() for a in params]
            x, target = torch.from_numpy(x0), torch.from_numpy(labels)
            step(torch, torch_functional, x, p, target)
            return tuple(t.grad.numpy() for t in p)

        runners["torch"] = with_torch
    return Workload(
        f"7. CNN step, batch {batch} x 1x{side}x{side}, {channels} channels",
        runners,
        Target(1.5, "torch"),
        compiled_target=Target(0.8, "torch"),
    )


def cnn_compiled(x0: np.ndarray, labels: np.ndarray, params: tuple) -> Compiled:
    """Workload 7's step through yg.compile: the loss compiled, its backward run."""
    batch = x0.shape[0]

    def cnn_loss(x: Any, target: Any, *p: Any) -> Any:
        functional = yg.nn.functional
        h = functional.relu(functional.conv2d(x, p[0], p[1]))
        h = functional.max_pool2d(h, 2)
        logits = functional.linear(h.reshape(batch, -1), p[2], p[3])
        return functional.cross_entropy(logits, target)

    compiled_loss = yg_compile(cnn_loss)

    def compiled() -> Gradients:
        p = [yg.from_numpy(a).requires_grad_() for a in params]
        compiled_loss(yg.from_numpy(x0), yg.from_numpy(labels), *p).backward()
        return tuple(t.grad.numpy() for t in p)

    return Compiled(compiled, compiled_loss)


# --- measuring ----------------------------------------------------------------------


# How long one sample of the slowest framework should last (calls chosen to fit),
# and the most calls a sample takes.
SAMPLE_SECONDS = 0.02
MAX_CALLS = 20


def calls_per_sample(runners: dict[str, Runner], fixed: int | None) -> int:
    """`fixed`, or as many consecutive calls as fill SAMPLE_SECONDS for the
    slowest runner (one call of each timed after its warm-up)."""
    if fixed is not None:
        return fixed
    slowest = 0.0
    for run in runners.values():
        start = CLOCK()
        run()
        slowest = max(slowest, CLOCK() - start)
    return max(1, min(MAX_CALLS, round(SAMPLE_SECONDS / max(slowest, 1e-9))))


def measure(workload: Workload, repeats: int, calls: int | None = None) -> list[Row]:
    """One row per framework: median time, x floor, x torch, gradient check, target."""
    reference = _flat((workload.reference or workload.runners["numpy"])())
    scale = max(1.0, float(np.max(np.abs(reference))))
    checks: dict[str, str] = {}
    runners: dict[str, Runner] = {}
    for name, run in workload.runners.items():  # warm-up and correctness
        try:
            error = float(np.max(np.abs(_flat(run()) - reference)))
        except Exception as exc:  # noqa: BLE001 - a peer that cannot run is reported
            checks[name] = f"failed: {type(exc).__name__}"
            continue
        runners[name] = run
        ok = error <= workload.tolerance * scale
        checks[name] = "ok" if ok else f"WRONG ({error:.2e})"
    number = calls_per_sample(runners, calls)
    times: dict[str, list[float]] = {name: [] for name in runners}
    names = list(runners)
    for rep in range(max(1, round(repeats * workload.repeats))):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            run = runners[name]
            start = CLOCK()
            for _ in range(number):
                run()
            times[name].append((CLOCK() - start) / number)
    rows = _rows(workload.name, times, checks, workload.target, "time")
    for row in rows:
        row.ops = workload.ops
        if row.framework == COMPILED and workload.compiled_target is not None:
            row.target = _verdict(row, workload.compiled_target)
    compiled = workload.runners.get(COMPILED)
    if isinstance(compiled, Compiled):
        seconds, calls = compiled.trace_seconds(), compiled.traced_calls()
        # Per recorded call: equal across workloads 1 and 4 (200 and 100,000
        # calls) when the compile time is linear in the graph's size.
        per_call = (
            f" ({seconds / calls * 1e6:.0f} us x {calls:,} calls)" if calls else ""
        )
        row = Row(
            workload.name,
            f"{COMPILED}: trace + codegen",
            f"{seconds * 1e3:.1f} ms{per_call}",
        )
        row.median, row.unit = seconds, "s"
        rows.append(row)
    return rows


def _verdict(row: Row, target: Target) -> str:
    reached = row.floor_ratio if target.against == "numpy" else row.torch_ratio
    verdict = (
        "-" if reached != reached else ("met" if reached <= target.limit else "missed")
    )
    return f"{target.text()}: {verdict}"


def _rows(
    name: str,
    samples: dict[str, list[float]],
    checks: dict[str, str],
    target: Target,
    unit: str,
    compiled_target: Target | None = None,
) -> list[Row]:
    rows = []
    for framework, check in checks.items():
        values = samples.get(framework)
        if not values:
            rows.append(Row(name, framework, "-", check=check))
            continue

        def ratio(against: str) -> float:
            if against not in samples:
                return float("nan")
            pairs = zip(values, samples[against])
            return statistics.median(v / a for v, a in pairs)

        median = statistics.median(values)
        value = f"{median * 1e3:.3f} ms" if unit == "time" else f"{median:.1f} MB"
        row = Row(name, framework, value, ratio("numpy"), ratio("torch"), check)
        row.median, row.unit = median, "s" if unit == "time" else "MB"
        if framework == "yamlgrad":
            row.target = _verdict(row, target)
        if framework == COMPILED and compiled_target is not None:
            row.target = _verdict(row, compiled_target)
        rows.append(row)
    return rows


def peak_memory(size: int, repeats: int) -> list[Row]:
    """Workload 5: peak resident memory of workload 3, each run in a fresh process."""
    frameworks = _installed()
    samples: dict[str, list[float]] = {name: [] for name in frameworks}
    checks = {name: "ok" for name in frameworks}
    for _ in range(repeats):
        for framework in frameworks:
            command = [sys.executable, str(HERE), "--rss", framework, str(size)]
            env = {**os.environ, "YAMLGRAD_BENCH_ONLY": framework}
            run = subprocess.run(command, capture_output=True, text=True, env=env)
            if run.returncode != 0:
                checks[framework] = "failed"
                continue
            rss_kb, error = run.stdout.split()
            samples[framework].append(int(rss_kb) / 1024)
            if float(error) > 1e-8 * 10:
                checks[framework] = f"WRONG ({float(error):.2e})"
    name = f"5. peak RSS of workload 3 ({size:,}), fresh process"
    # The compiled step reuses its dead arrays and releases each at its last use.
    compiled = Target(1.0, "numpy")
    return _rows(name, samples, checks, Target(1.05, "numpy"), "MB", compiled)


def _peak_rss_kib() -> int:
    """This process's peak resident set (KiB). /proc's VmHWM belongs to the
    program's own address space; getrusage's ru_maxrss would carry the parent's
    peak over from the fork that started this process."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:  # pragma: no cover - not Linux
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _rss_child(framework: str, size: int) -> None:
    x0 = _large_input(size)
    run = large_runner(framework, x0)
    if framework == COMPILED:
        # The step a training loop repeats, not the trace that runs once: the
        # first call traces, then the peak is reset (Linux's clear_refs) and
        # the second call is measured.
        run()
        try:
            Path("/proc/self/clear_refs").write_text("5")
        except OSError:  # pragma: no cover - not Linux: the trace is included
            pass
    grad = run()
    peak = _peak_rss_kib()
    reference = large_floor(x0) if framework != "numpy" else grad
    print(peak, float(np.max(np.abs(grad - reference))))


def tooling(repeats: int) -> list[Row]:
    """Workload 8: `yamlgrad-gen --check`, and `import yamlgrad` over `import numpy`."""
    python = sys.executable
    check = [
        python,
        "-c",
        "import sys; from yamlgrad.tools.cli import main; "
        "sys.exit(main(['--check']))",
    ]
    ours = [python, "-c", "import yamlgrad"]
    numpy_only = [python, "-c", "import numpy"]
    # With bytecode caches, as an installed package has them (pip compiles them);
    # one warm-up run writes them where PYTHONDONTWRITEBYTECODE had kept them out.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(ours, check=True, env=env)
    gen: list[float] = []
    imports: list[float] = []
    gen_ok = "ok"
    for _ in range(repeats):
        start = time.perf_counter()
        if subprocess.run(check, capture_output=True).returncode != 0:
            gen_ok = "stale"
        gen.append(time.perf_counter() - start)
        pair = []
        for command in (ours, numpy_only):
            start = time.perf_counter()
            subprocess.run(command, check=True, env=env)
            pair.append(time.perf_counter() - start)
        imports.append(pair[0] - pair[1])
    gen_median = statistics.median(gen)
    import_median = statistics.median(imports)
    return [
        Row(
            "8. yamlgrad-gen --check, full YAML",
            "yamlgrad",
            f"{gen_median:.3f} s",
            check=gen_ok,
            target=f"<= 2 s: {'met' if gen_median <= 2.0 else 'missed'}",
            median=gen_median,
            unit="s",
        ),
        Row(
            "8. import yamlgrad minus import numpy (bytecode cached)",
            "yamlgrad",
            f"{import_median * 1e3:.1f} ms",
            target=f"<= 150 ms: {'met' if import_median <= 0.150 else 'missed'}",
            median=import_median,
            unit="s",
        ),
    ]


def machine() -> list[str]:
    blas = "unknown"
    try:
        config = np.show_config(mode="dicts")  # type: ignore[call-arg]
        blas = config["Build Dependencies"]["blas"]["name"]  # type: ignore[index]
    except Exception:  # noqa: BLE001 - only informational
        pass
    versions = [f"numpy {np.__version__}", f"yamlgrad {yg.__version__}"]
    for name in ("torch", "autograd", "mygrad", "micrograd"):
        try:
            from importlib.metadata import version

            versions.append(f"{name} {version(name)}")
        except Exception:  # noqa: BLE001 - not installed
            pass
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return [
        f"- CPU: {cpu}, {os.cpu_count()} cores",
        f"- BLAS: {blas}; every framework on {THREADS} thread(s)",
        f"- Python {platform.python_version()}; {', '.join(versions)}",
    ]


# The numbers of the workloads, in the order they run.
def compile_costs(smoke: bool, repeats: int) -> list[Row]:
    """Workload 9: yg.compile's own costs. The per-call guard check (the
    signature of the arguments, then each external tensor's identity, shape,
    dtype and requires_grad), and the trace + codegen of a long chain, in CPU
    time (the machine may be shared)."""
    rows = []
    for n_inputs in (4, 353):
        args = [yg.tensor([1.0], requires_grad=True) for _ in range(n_inputs)]
        params = [yg.ones(3, requires_grad=True) for _ in range(4)]
        step = yg_compile(lambda *a: (a[0] * params[0] + params[1]).sum())
        step(*args)
        number = 200 if smoke else 20_000 // n_inputs + 200
        samples = []
        for _ in range(1 if smoke else max(repeats, 5)):
            start = time.process_time()
            for _ in range(number):
                step.guard(*args)
            samples.append((time.process_time() - start) / number)
        seconds = statistics.median(samples)
        n = n_inputs + len(params)
        limit = 5 + 0.3 * n
        rows.append(
            Row(
                f"9. yg.compile guard check, {n_inputs} inputs + 4 externals",
                COMPILED,
                f"{seconds * 1e6:.2f} us",
                target=f"<= {limit:.1f} us: {'met' if seconds * 1e6 <= limit else 'missed'}",
                median=seconds,
                unit="s",
            )
        )
    n_ops = 100 if smoke else 10_000

    def long_chain(x: Any) -> Any:
        for i in range(n_ops):
            x = x * 1.001 if i % 2 else x + 0.5
        return x.sum()

    start = time.process_time()
    yg_compile(long_chain)(yg.ones(16, dtype=yg.float64, requires_grad=True))
    seconds = time.process_time() - start
    rows.append(
        Row(
            f"9. yg.compile trace + codegen, chain of {n_ops:,} ops (CPU time)",
            COMPILED,
            f"{seconds:.2f} s",
            target=f"<= 2 s: {'met' if seconds <= 2.0 else 'missed'}",
            median=seconds,
            unit="s",
        )
    )
    return rows


WORKLOADS = range(1, 10)

HEADER = [
    "| workload | framework | median | x numpy floor | x torch | gradient | target |",
    "|---|---|---|---|---|---|---|",
]


def _load_compiler() -> None:
    """Compile a one-op function once, so that no workload's trace + codegen row
    includes what the first yg.compile of a process does once (loading
    derivatives.yaml's model and the template)."""
    if yg is not None and hasattr(yg, "compile"):
        yg_compile(lambda x: x * 2)(yg.ones(1, requires_grad=True))


def timed_workloads(number: int, smoke: bool) -> list[Workload]:
    """Workload `number`'s timed measurements, built (workload 2 has four; 5, 8
    and 9 measure something else and have none)."""
    if number == 1:
        n_ops, size = (10, 4) if smoke else (200, 16)
        return [chain(n_ops, size, 1, Target(1.0, "torch"))]
    if number == 2:
        batch, sizes = (4, (12, 8, 3)) if smoke else (64, (784, 256, 10))
        return [
            workload(batch, sizes, activation, dtype)
            for dtype in (np.float32, np.float64)
            for activation in ("tanh", "relu")
            for workload in (mlp, mlp_training)
        ]
    if number == 3:
        return [large_elementwise(100 if smoke else 2_000_000)]
    if number == 4:
        return [chain(20 if smoke else 100_000, 1, 4, Target(1.0, "torch"))]
    if number == 6:
        sizes = (3, 2) if smoke else (20, 16)
        return [scalar_mlp(*sizes, zero_d) for zero_d in (False, True)]
    if number == 7:
        return [cnn(2, 8, 2) if smoke else cnn(32, 28, 8)]
    return []


def measured(
    number: int, smoke: bool, repeats: int, calls: int | None
) -> Iterator[list[Row]]:
    """Workload `number`, built and measured: its rows, a batch at a time as
    each measurement ends (workload 2 has four)."""
    _load_compiler()
    if number == 5:
        yield peak_memory(100 if smoke else 2_000_000, 1 if smoke else 3)
    elif number == 8:
        yield tooling(1 if smoke else 5)
    elif number == 9:
        yield compile_costs(smoke, repeats)
    else:
        for workload in timed_workloads(number, smoke):
            yield measure(workload, repeats, calls)


def report(
    rows: list[Row], repeats: int, calls: int | None, cpu_time: bool, only: str = ""
) -> str:
    """benchmarks/results.md: the machine, the command and the table."""
    command = (
        f"`python benchmarks/run.py --repeats {repeats}"
        + (f" --calls {calls}" if calls else "")
        + (" --cpu-time" if cpu_time else "")
        + (f" --only {only}" if only else "")
        + "`"
    )
    table = HEADER + [row.line() for row in rows]
    return "\n".join(
        ["# yamlgrad benchmarks", "", *machine(), "", command, "", *table, ""]
    )


def write_json(path: Path, rows: list[Row], argv: list[str]) -> None:
    """The rows for a program to read (benchmarks/compare.py), with the yamlgrad
    that was measured: a comparison checks it measured the checkout it meant."""
    document = {
        "yamlgrad": {
            "version": yg.__version__,
            "path": str(Path(yg.__file__).resolve().parent),
        },
        "argv": argv,
        "machine": machine(),
        "rows": [row.record() for row in rows],
    }
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes, one repetition"
    )
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--only", default="", help="workload numbers, e.g. 1,3")
    parser.add_argument(
        "--calls",
        type=int,
        default=None,
        help="consecutive calls per sample (default: about 20 ms of the slowest)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="write the report to OUT (default: benchmarks/results.md, and only "
        "for a full run: --only or --smoke leave it alone unless OUT is given)",
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="PATH",
        help="also write the rows to PATH as JSON (medians in seconds or MB)",
    )
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time samples in this process's CPU time, not wall time",
    )
    parser.add_argument(
        "--rss", nargs=2, metavar=("FRAMEWORK", "SIZE"), help=argparse.SUPPRESS
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    global CLOCK
    if args.cpu_time:
        CLOCK = time.process_time
    if args.rss:
        _rss_child(args.rss[0], int(args.rss[1]))
        return 0
    smoke = args.smoke
    repeats = 1 if smoke else args.repeats
    calls = 1 if smoke else args.calls
    only = {int(n) for n in args.only.split(",") if n}
    rows: list[Row] = []
    print("\n".join(HEADER), flush=True)
    for number in WORKLOADS:
        if only and number not in only:
            continue
        for batch in measured(number, smoke, repeats, calls):
            for row in batch:
                print(row.line(), flush=True)
            rows += batch
    out = args.out
    if out is None and not smoke and not only:
        out = Path(__file__).with_name("results.md")
    if out is not None:
        text = report(rows, repeats, calls, args.cpu_time, args.only)
        out.write_text(text, encoding="utf-8")
    if args.json is not None:
        write_json(args.json, rows, sys.argv[1:] if argv is None else argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
