"""Every op of derivatives.yaml, forward + backward, against torch on one thread.

    python benchmarks/ops.py                          # everything, writes benchmarks/ops.md
    python benchmarks/ops.py --ops gelu,sigmoid       # some ops (nothing is written)
    python benchmarks/ops.py --sizes large --dtypes float32 --repeats 3
    python benchmarks/ops.py --json rows.json         # the rows as JSON too
    python benchmarks/ops.py --cpu-time               # thread CPU time (shared machine)
    python benchmarks/ops.py --merge a.json b.json    # one table from split runs

The table is generated from the YAML: each differentiable entry with `samples`
takes its largest sample, scales every dimension above 1 by one factor (so equal
sizes stay equal: a matrix product still multiplies, a broadcast still
broadcasts) until its largest tensor holds about 1,000,000 elements ("large") or
16,384 ("small"), but a convolution's kernel, as pooling's, keeps its size, and
the integers that measure a dimension (split's `split_size`, narrow's `start` and
`length`, topk's `k`) scale with it, so the pieces and slices keep their count
and share (`scaled`), and times `op(...)` followed by the gradient of every
differentiable input for a cotangent of ones (what `op(...).sum().backward()`
computes, without the sum's own nodes), through `autograd.grad`, in yamlgrad and
in torch (`torch.set_num_threads(1)`), in float32 and float64.

A third column, "kernels", is the same step without autograd: the forward under
`no_grad`, then the node's formulas called once on the ndarrays. It is the cost of
the numpy kernels and formulas alone, so `ours / kernels` is what yamlgrad's
bookkeeping adds, and `kernels / torch` what numpy itself costs.

A fourth, "floor", is the best plain numpy/scipy expression of the same forward
and backward, for the ops whose family declares one beside its kernel (a module
of runtime/ops with `FLOORS`: the entry's C++ name -> a function of the cotangent
and the sample's arguments); where numpy has no vectorised kernel for the math
(sin in float64, erf, digamma, ...) `floor / torch` shows what numpy can reach.

An entry is skipped, with its reason in the table, when its samples cannot scale
(given index values, in-place variants, which their functional entries cover) or
when the call fails both scaled and as the sample is written; a sample whose
scaled call fails (an int[] argument that describes the tensors' shapes no longer
matches them) runs unscaled, at its own elements. An op whose output is larger than its input is scaled down by that factor
(measured at a small size first), and one whose step grows faster than its
elements (matrix products, convolutions) is scaled down until one step takes under
`STEP_BUDGET` seconds; the table gives the elements it ran at.

Repetitions are paired and interleaved: in each one every framework runs its step
a few times in a row (enough for about 10 ms, at least three calls) and keeps its
fastest call, in an order that rotates, and the ratio is taken within the
repetition, so load on the machine cancels. The table reports each framework's
median time and the median of the per-repetition ratios.
Benchmarks are not tests: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

import yamlgrad as yg  # noqa: E402
from yamlgrad.testing import build_args, call_torch, python_names  # noqa: E402
from yamlgrad.tools.load import load_derivatives  # noqa: E402
from yamlgrad.tools.model import DifferentiabilityInfo, Sample  # noqa: E402

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None
else:
    torch.set_num_threads(1)

HERE = Path(__file__).resolve().parent
YAML = HERE.parent / "derivatives.yaml"
SIZES = {"large": 1_000_000, "small": 16_384}
DTYPES = ("float32", "float64")
STEP_BUDGET = 0.2  # seconds for one yamlgrad step before an op is scaled down
SAMPLE_TIME = 0.01  # seconds of calls per framework per repetition
MIN_CALLS = 3  # calls per framework per repetition, at least

Step = Callable[[], Any]


@dataclass
class Row:
    op: str  # the entry's C++ name: gelu, add_Tensor, ...
    size: str
    dtype: str
    elements: int = 0  # of the largest tensor, as run
    ours: float = math.nan  # median seconds per step
    torch: float = math.nan
    kernels: float = math.nan
    ratio: float = math.nan  # median over repetitions of ours / torch
    kernels_ratio: float = math.nan  # kernels / torch
    floor: float = math.nan
    floor_ratio: float = math.nan  # floor / torch
    skipped: str = ""


def tensor_shapes(sample: Sample) -> list[tuple[int, ...]]:
    return [shape for _, shape in named_shapes(sample)]


def named_shapes(sample: Sample) -> list[tuple[str, tuple[int, ...]]]:
    """Each tensor's argument name and shape (a Tensor[]'s name once per tensor)."""
    shapes: list[tuple[str, tuple[int, ...]]] = []
    for a in sample.args:
        if a.shapes is not None:
            shapes += [(a.name, shape) for shape in a.shapes]
        elif a.shape is not None and a.values is None and a.index_list is None:
            shapes.append((a.name, a.shape))
    return shapes


def unscalable(info: DifferentiabilityInfo) -> str:
    """Why no sample of this entry can scale, or ''."""
    if info.inplace:
        return "in-place variant (its functional entry is measured)"
    if not info.samples:
        return "no samples"
    for sample in info.samples:
        if any(a.values is not None or a.index_list is not None for a in sample.args):
            continue
        if any(math.prod(s) > 1 for s in tensor_shapes(sample)):
            return ""
    if any(a.values is not None for s in info.samples for a in s.args):
        return "given index values do not scale"
    if any(a.index_list is not None for s in info.samples for a in s.args):
        return "given index lists do not scale"
    return "no sample with a dimension above 1"


def largest_sample(info: DifferentiabilityInfo) -> Sample:
    candidates = [
        s
        for s in info.samples
        if not any(a.values is not None or a.index_list is not None for a in s.args)
    ]
    return max(candidates, key=lambda s: max(map(math.prod, tensor_shapes(s))))


def scaled(info: DifferentiabilityInfo, sample: Sample, elements: int) -> Sample:
    """The sample with every dimension above 1 multiplied by one factor, so that
    its largest tensor holds about `elements` (and none more), except a
    convolution's kernel (`kernel_dims`); then the integers that measure a
    dimension follow it (`along_dim`)."""
    kernel = kernel_dims(info, sample)

    def growing(name: str, shape: tuple[int, ...]) -> int:
        return sum(d > 1 for d in shape[: len(shape) - kernel.get(name, 0)])

    factor = min(
        (elements / math.prod(shape)) ** (1 / growing(name, shape))
        for name, shape in named_shapes(sample)
        if growing(name, shape)
    )

    def scale(shape: tuple[int, ...], keep: int = 0) -> tuple[int, ...]:
        free, fixed = shape[: len(shape) - keep], shape[len(shape) - keep :]
        return tuple(max(1, round(d * factor)) if d > 1 else d for d in free) + fixed

    args = []
    for a in sample.args:
        if a.shapes is not None:
            a = _replace(a, shapes=tuple(scale(s) for s in a.shapes))
        elif a.shape is not None and a.values is None:
            a = _replace(a, shape=scale(a.shape, kernel.get(a.name, 0)))
        args.append(a)
    return along_dim(info, sample, _replace(sample, args=tuple(args)))


def kernel_dims(info: DifferentiabilityInfo, sample: Sample) -> dict[str, int]:
    """How many trailing dims of each tensor keep their size: in a windowed op (one
    with a `stride`), a `weight` is [out, in, *kernel], and a kernel of 3 stays 3
    as the input grows, as pooling's `kernel_size` does (an integer, not scaled)."""
    names = {a.name for a in info.func.arguments}
    if "stride" not in names:
        return {}
    return {a.name: len(a.shape) - 2 for a in sample.args if a.name == "weight"}


def along_dim(info: DifferentiabilityInfo, before: Sample, after: Sample) -> Sample:
    """The `SymInt` arguments of an entry with an `int dim` are positions and
    lengths along that dim of its first tensor (split's `split_size`, narrow's
    `start` and `length`, slice's `start` and `end`, select's `index`, topk's
    `k`): each is scaled as the dim was, so the pieces and slices keep their
    share of it; a list that partitions the dim (split_with_sizes) still does.
    A `step` is a stride and keeps its size, as a kernel's does; a plain `int`
    (chunk's `chunks`, unfold's `size`) is a count or a window and stays too."""
    schema = {a.name: a for a in info.func.arguments}
    dim_arg = schema.get("dim")
    lengths = [
        i
        for i, a in enumerate(after.args)
        if a.name in schema
        and schema[a.name].type.base == "SymInt"
        and a.name != "step"
    ]
    tensor = next((a for a in before.args if a.shape), None)
    if dim_arg is None or str(dim_arg.type) != "int" or not lengths or not tensor:
        return after
    given = {a.name: a.value for a in before.args}
    dim = given["dim"] if "dim" in given else int(dim_arg.default)
    if not -len(tensor.shape) <= dim < len(tensor.shape):
        return after
    old = tensor.shape[dim]
    new = next(a for a in after.args if a.name == tensor.name).shape[dim]
    new_args = list(after.args)
    for i in lengths:
        a = new_args[i]
        if isinstance(a.value, int) and old > 1:
            share = int(a.value * new / old)
            new_args[i] = _replace(a, value=max(share, 1) if a.value > 0 else share)
        elif isinstance(a.value, tuple) and sum(a.value) == old > 1:
            parts = [int(v * new / old) for v in a.value[:-1]]
            new_args[i] = _replace(a, value=(*parts, new - sum(parts)))
    return _replace(after, args=tuple(new_args))


def _replace(obj: Any, **changes: Any) -> Any:
    import dataclasses

    return dataclasses.replace(obj, **changes)


def _differentiable(info: DifferentiabilityInfo, kwargs: dict[str, Any]) -> set[str]:
    if info.composite is not None:
        names = set(kwargs)
    else:
        names = {n for d in info.derivatives for n in d.var_names}
    return {
        n
        for n in names
        if isinstance(kwargs.get(n), np.ndarray) and kwargs[n].dtype.kind in "fc"
    }


def _outputs(result: Any, info: DifferentiabilityInfo) -> list[Any]:
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    if info.output_differentiability is not None:
        outputs = [o for o, d in zip(outputs, info.output_differentiability) if d]
    return [
        o
        for o in outputs
        if (o.dtype.is_floating_point or o.dtype.is_complex) and o.requires_grad
    ]


def yamlgrad_steps(
    info: DifferentiabilityInfo, kwargs: dict[str, Any], diff: set[str]
) -> tuple[Step, Step | None]:
    """The autograd step, and the kernels-only step (None for a composite)."""
    wrapper = getattr(yg.generated.VariableType, info.wrapper_name)
    leaves = {n: yg.tensor(kwargs[n], requires_grad=True) for n in diff}
    args = python_names(build_args(kwargs, leaves, yg.tensor))
    ones = [yg.ones_like(o) for o in _outputs(wrapper(**args), info)]
    inputs = list(leaves.values())

    def ours() -> Any:
        outputs = _outputs(wrapper(**args), info)
        return yg.autograd.grad(outputs, inputs, ones, allow_unused=True)

    if info.composite is not None:
        return ours, None
    node = _outputs(wrapper(**args), info)[0].grad_fn
    raw_ones = [o.numpy() for o in ones]
    with yg.no_grad():
        plain = python_names(build_args(kwargs, {}, yg.tensor))

    def kernels() -> Any:
        with yg.no_grad():
            wrapper(**plain)
        return node.apply(raw_ones, True)

    return ours, kernels


def floors() -> dict[str, Callable[..., Any]]:
    """Every family's FLOORS (runtime/ops), merged: a new floor needs no line here."""
    import importlib
    import pkgutil

    import yamlgrad.runtime.ops as families

    found: dict[str, Callable[..., Any]] = {}
    for module in pkgutil.iter_modules(families.__path__):
        family = importlib.import_module(f"{families.__name__}.{module.name}")
        found.update(getattr(family, "FLOORS", {}))
    return found


FLOORS = floors()


def floor_step(info: DifferentiabilityInfo, kwargs: dict[str, Any]) -> Step | None:
    """The entry's floor with a cotangent of ones like its first output, or None."""
    floor = FLOORS.get(info.func.cpp_name)
    if floor is None:
        return None
    wrapper = getattr(yg.generated.VariableType, info.wrapper_name)
    with yg.no_grad():
        result = wrapper(**python_names(build_args(kwargs, {}, yg.tensor)))
    first = result[0] if isinstance(result, (tuple, list)) else result
    grad = np.ones(first.shape, first.numpy().dtype)
    return lambda: floor(grad, **kwargs)


def torch_step(
    info: DifferentiabilityInfo, kwargs: dict[str, Any], diff: set[str]
) -> Step:
    def make(array: np.ndarray) -> Any:
        return torch.from_numpy(np.ascontiguousarray(array))

    leaves = {n: make(kwargs[n]).requires_grad_() for n in diff}
    values = build_args(kwargs, leaves, make)
    ones = [torch.ones_like(o) for o in _outputs(call_torch(torch, info, values), info)]
    inputs = list(leaves.values())

    def theirs() -> Any:
        outputs = _outputs(call_torch(torch, info, values), info)
        return torch.autograd.grad(outputs, inputs, ones, allow_unused=True)

    return theirs


CLOCK = time.perf_counter  # --cpu-time: time.thread_time, blind to waiting for a core


def _time(step: Step, calls: int) -> float:
    """The fastest of `calls` calls: on a shared machine a slower call measures
    the other processes, not the step."""
    best = math.inf
    for _ in range(calls):
        start = CLOCK()
        step()
        best = min(best, CLOCK() - start)
    return best


def measure(steps: dict[str, Step], repeats: int) -> dict[str, list[float]]:
    """Per framework, `repeats` samples of seconds per step, interleaved."""
    first = {name: _time(step, 1) for name, step in steps.items()}
    calls = max(MIN_CALLS, min(200, int(SAMPLE_TIME / max(max(first.values()), 1e-7))))
    names = list(steps)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for rep in range(repeats):
        order = names[rep % len(names) :] + names[: rep % len(names)]
        for name in order:
            samples[name].append(_time(steps[name], calls))
    return samples


def prepare(
    info: DifferentiabilityInfo, size: str, dtype: str
) -> tuple[dict[str, Step], int]:
    """The steps of one entry at one size, scaled down while a step is too slow.

    Scaling changes the tensors' shapes (and the lengths along a dim), so an
    argument that describes the shapes (affine_grid_generator's `size`,
    fractional pooling's `output_size` and `random_samples`) can stop matching;
    when the scaled call fails, the sample runs as written, at its own elements."""
    sample = largest_sample(info)
    try:
        return _prepare(info, sample, size, dtype)
    except Exception as failure:  # noqa: BLE001 - retried unscaled
        try:
            return _prepare(info, sample, size, dtype, scale=False)
        except Exception:  # noqa: BLE001 - the scaled failure is the reason
            raise failure from None


def _prepare(
    info: DifferentiabilityInfo,
    sample: Sample,
    size: str,
    dtype: str,
    scale: bool = True,
) -> tuple[dict[str, Step], int]:
    elements = SIZES[size] // output_growth(info, sample, dtype) if scale else 0
    while True:
        rng = np.random.default_rng(0)
        run = scaled(info, sample, elements) if scale else sample
        kwargs = run.materialize(rng, np.dtype(dtype))
        diff = _differentiable(info, kwargs)
        if not diff:
            raise ValueError("no floating input to differentiate")
        ours, kernels = yamlgrad_steps(info, kwargs, diff)
        if not scale or _time(ours, 1) < STEP_BUDGET or elements < 1024:
            break
        elements //= 4
    steps = {"ours": ours}
    if torch is not None:
        steps["torch"] = torch_step(info, kwargs, diff)
    if kernels is not None:
        steps["kernels"] = kernels
    floor = floor_step(info, kwargs)
    if floor is not None:
        steps["floor"] = floor
    for step in steps.values():  # a step that fails here fails before timing
        step()
    largest = max(math.prod(s) for s in tensor_shapes(run))
    return steps, largest


def output_growth(info: DifferentiabilityInfo, sample: Sample, dtype: str) -> int:
    """How many times more elements the outputs hold than the largest input, at a
    small size (diag_embed's output is its input's size squared): the size is
    divided by it, so no op allocates gigabytes."""
    small = scaled(info, sample, 4096)
    kwargs = small.materialize(np.random.default_rng(0), np.dtype(dtype))
    wrapper = getattr(yg.generated.VariableType, info.wrapper_name)
    with yg.no_grad():
        result = wrapper(**python_names(build_args(kwargs, {}, yg.tensor)))
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    produced = sum(math.prod(o.shape) for o in outputs)
    largest = max(math.prod(s) for s in tensor_shapes(small))
    return max(1, round(produced / max(largest, 1)))


def bench(info: DifferentiabilityInfo, size: str, dtype: str, repeats: int) -> Row:
    row = Row(info.func.cpp_name, size, dtype)
    reason = unscalable(info)
    if reason:
        row.skipped = reason
        return row
    try:
        steps, row.elements = prepare(info, size, dtype)
        samples = measure(steps, repeats)
    except Exception as failure:  # noqa: BLE001 - reported in the table
        row.skipped = f"{type(failure).__name__}: {str(failure).splitlines()[0][:80]}"
        return row
    row.ours = statistics.median(samples["ours"])
    if "torch" in samples:
        row.torch = statistics.median(samples["torch"])
        row.ratio = statistics.median(
            a / b for a, b in zip(samples["ours"], samples["torch"])
        )
    for name in ("kernels", "floor"):
        if name in samples:
            setattr(row, name, statistics.median(samples[name]))
            if "torch" in samples:
                ratio = (a / b for a, b in zip(samples[name], samples["torch"]))
                setattr(row, f"{name}_ratio", statistics.median(ratio))
    return row


def selected(infos: list[DifferentiabilityInfo], ops: str) -> list[Any]:
    infos = [i for i in infos if i.op is not None or i.composite is not None]
    if not ops:
        return infos
    wanted = set(ops.split(","))
    return [i for i in infos if i.func.name in wanted or i.func.cpp_name in wanted]


def _ms(seconds: float) -> str:
    return "" if math.isnan(seconds) else f"{seconds * 1e3:.3f}"


def _ratio(r: float) -> str:
    return "" if math.isnan(r) else f"{r:.2f}"


def provenance(command: str) -> str:
    """The line under a generated table's title: the command, the machine, the
    versions and the date."""
    return (
        f"`{command}` on {platform.machine()}, Python {platform.python_version()}, "
        f"numpy {np.__version__}"
        + (f", torch {torch.__version__} (one thread)" if torch is not None else "")
        + f", {time.strftime('%Y-%m-%d')}."
    )


def table(rows: list[Row], command: str) -> str:
    measured = [r for r in rows if not r.skipped]
    measured.sort(key=lambda r: (-(r.ratio if not math.isnan(r.ratio) else 0), r.op))
    lines = [
        "# Per-op benchmark: forward + backward against torch",
        "",
        provenance(command),
        "",
        "Generated by [ops.py](ops.py) from derivatives.yaml (its docstring says how "
        "samples are scaled and what is timed). Times are milliseconds per forward + "
        "backward step (median); `ours/torch` and `kernels/torch` are medians of "
        "per-repetition ratios; `kernels` is the numpy kernel and formulas alone, "
        "without autograd; `floor` the best plain numpy/scipy expression of the "
        "same math, where one is declared. [activations.md](activations.md) "
        "counts the numpy passes each activation needs and their cost.",
        "",
    ]
    for size in SIZES:
        for dtype in DTYPES:
            group = [r for r in measured if r.size == size and r.dtype == dtype]
            if not group:
                continue
            ratios = [r.ratio for r in group if not math.isnan(r.ratio)]
            lines += [
                f"## {size} ({SIZES[size]:,} elements), {dtype}",
                "",
                f"{len(group)} ops; median ours/torch "
                f"{_ratio(statistics.median(ratios)) if ratios else 'n/a'}, "
                f"{sum(r > 1.5 for r in ratios)} above 1.5.",
                "",
                "| op | elements | ours ms | torch ms | kernels ms | floor ms "
                "| ours/torch | kernels/torch | floor/torch |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
            ]
            lines += [
                f"| {r.op} | {r.elements:,} | {_ms(r.ours)} | {_ms(r.torch)} "
                f"| {_ms(r.kernels)} | {_ms(r.floor)} | {_ratio(r.ratio)} "
                f"| {_ratio(r.kernels_ratio)} | {_ratio(r.floor_ratio)} |"
                for r in group
            ]
            lines.append("")
    skipped = sorted({(r.op, r.skipped) for r in rows if r.skipped})
    if skipped:
        lines += ["## Not measured", "", "| op | why |", "|---|---|"]
        lines += [f"| {op} | {why} |" for op, why in skipped]
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default="", help="comma-separated names (all)")
    parser.add_argument("--sizes", default=",".join(SIZES), help="large,small")
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="float32,float64")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--out", type=Path, help="the table (default: ops.md, full runs)"
    )
    parser.add_argument("--json", type=Path, help="the rows as JSON too")
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time the thread's CPU time, not wall time (a machine others share)",
    )
    parser.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        help="write the table from the JSON rows of runs split by size or dtype",
    )
    args = parser.parse_args(argv)
    command = "python benchmarks/ops.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    if args.merge:
        merged = {}
        for path in args.merge:
            for r in json.loads(path.read_text()):
                merged.setdefault((r["op"], r["size"], r["dtype"]), Row(**r))
        rows = list(merged.values())
        (args.out or HERE / "ops.md").write_text(table(rows, command.strip()))
        return 0
    if args.cpu_time:
        global CLOCK
        CLOCK = time.thread_time
    infos = selected(load_derivatives(YAML), args.ops)
    sizes, dtypes = args.sizes.split(","), args.dtypes.split(",")
    rows = []
    warnings.simplefilter("ignore")
    for info in infos:
        for size in sizes:
            for dtype in dtypes:
                row = bench(info, size, dtype, args.repeats)
                rows.append(row)
                status = row.skipped or f"{_ratio(row.ratio)}x torch"
                if not math.isnan(row.floor_ratio):
                    status += f" (floor {_ratio(row.floor_ratio)}x)"
                print(f"{row.op:32} {size:6} {dtype:8} {status}", flush=True)
    text = table(rows, command.strip())
    full = not args.ops and len(sizes) == len(SIZES) and len(dtypes) == len(DTYPES)
    out = args.out or (HERE / "ops.md" if full else None)
    if out is not None:
        out.write_text(text)
    else:
        print(text)
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
