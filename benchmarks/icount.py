"""yamlgrad's eager cost per op before and after a change, in instructions.

    python benchmarks/icount.py --before /work/wt-before --after . --only 1,4,6

Wall time on a shared machine moves by more than most changes to the per-op
path do; an instruction count does not. For each workload of benchmarks/run.py
named by `--only` (the ones timed against numpy: 1, 3, 4, 6, 7), each of its
rows (workload 6 has two: size-1 and 0-d values) and each checkout, this
script runs one yamlgrad step of the row once as a warm-up and then
`--steps` A, then B, steps in a fresh interpreter under

    PYTHONHASHSEED=0 OMP_NUM_THREADS=1 valgrind --tool=callgrind python ...

and reports (instructions with B steps - instructions with A steps) / (B - A),
divided by the workload's ops per step where it counts them (workload 1 has
200, workload 4 100,000; workload 6 is reported per step). The difference
cancels the interpreter's start, the imports and the warm-up. The cyclic
garbage collector is off during the counted steps and runs once after them, so
a collection that happens to fall into one run and not the other does not
decide a count; garbage the steps leave still costs what collecting it costs.

It also counts the Python-level function calls per op (sys.setprofile, no
valgrind): the number the readable wrappers must keep small.

Each checkout is imported as `yamlgrad` through a directory holding a symlink
to it, first on PYTHONPATH, as benchmarks/compare.py does, and both are driven
by the run.py beside this script. A child that imported another yamlgrad stops
the comparison. Workload 4 takes a few minutes per checkout under callgrind;
`--ops` shortens the chains of workloads 1 and 4 (reported in the table).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VALGRIND = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
COLLECTED = re.compile(r"^==\d+== Collected : (\d+)", re.MULTILINE)


@dataclass(frozen=True)
class Count:
    """What one child measured: callgrind's instructions (or the Python calls)
    over its steps, and the workload."""

    total: int
    name: str
    ops: int | None
    rows: int  # how many rows (workloads) its number has


def child(
    number: int, row: int, steps: int, ops: int | None, python_calls: bool
) -> None:
    """In the measured interpreter: build row `row` of workload `number`, warm
    it up, run `steps` steps and print what the parent needs as one JSON line."""
    sys.path.insert(0, str(HERE))
    import run  # noqa: PLC0415 - imports yamlgrad, after PYTHONPATH is set

    if ops is not None and number in (1, 4):
        size = 16 if number == 1 else 1
        workloads = [run.chain(ops, size, number, run.Target(1.0, "torch"))]
    else:
        workloads = run.timed_workloads(number, smoke=False)
    workload = workloads[row]
    step = workload.runners["yamlgrad"]
    step()
    calls = [0]

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            calls[0] += 1

    gc.collect()
    gc.disable()
    if python_calls:
        sys.setprofile(profile)
    for _ in range(steps):
        step()
    sys.setprofile(None)
    gc.collect()
    gc.enable()
    path = str(Path(run.yg.__file__).resolve().parent)
    record = {"yamlgrad": path, "name": workload.name, "ops": workload.ops}
    record["rows"] = len(workloads)
    print(json.dumps({**record, "calls": calls[0]}))


@dataclass
class Side:
    """One checkout and the directory that makes it `yamlgrad`."""

    label: str  # "before" or "after"
    checkout: Path  # resolved
    path_entry: Path  # a directory whose `yamlgrad` links to the checkout


def link(label: str, tree: Path, scratch: Path) -> Path:
    """A directory under `scratch` in which `yamlgrad` is `tree`."""
    entry = scratch / label
    entry.mkdir()
    (entry / "yamlgrad").symlink_to(tree, target_is_directory=True)
    return entry


def measure(
    side: Side, number: int, row: int, steps: int, ops: int | None, valgrind: bool
) -> Count:
    """One child for `side`: callgrind's total instructions (or, without
    valgrind, the Python calls) of row `row` of workload `number` with `steps`
    steps."""
    env = dict(os.environ, PYTHONHASHSEED="0", YAMLGRAD_BENCH_ONLY="yamlgrad")
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = "1"
    # Compiled modules cached beside the link (a run without valgrind fills
    # it), so no count pays for compiling the sources.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(side.path_entry / "pycache")
    inherited = env.get("PYTHONPATH")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(side.path_entry)] + ([inherited] if inherited else [])
    )
    command = [sys.executable, str(Path(__file__).resolve()), "--child"]
    command += [str(number), str(steps), "--row", str(row)]
    command += ["--ops", str(ops)] if ops else []
    if valgrind:
        command = VALGRIND + command
    else:
        command.append("--python-calls")
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"{side.label}: workload {number} failed")
    record = json.loads(done.stdout.strip().splitlines()[-1])
    if Path(record["yamlgrad"]).resolve() != side.checkout:
        raise SystemExit(f"{side.label}: measured {record['yamlgrad']}")
    total = record["calls"]
    if valgrind:
        found = COLLECTED.search(done.stderr)
        if found is None:
            raise SystemExit(f"{side.label}: no instruction count in\n{done.stderr}")
        total = int(found.group(1))
    return Count(total, record["name"], record["ops"], record["rows"])


def per_op(
    sides: list[Side],
    number: int,
    row: int,
    args: argparse.Namespace,
    valgrind: bool,
) -> list[tuple[float, Count]]:
    """For each side, instructions (or Python calls) per op of row `row` of
    workload `number` (per step where it does not count its ops), as the
    difference of two step counts; the children run `args.jobs` at a time."""
    runs = [(side, steps) for side in sides for steps in args.steps]
    with ThreadPoolExecutor(max_workers=args.jobs if valgrind else 1) as pool:
        counts = list(
            pool.map(
                lambda run: measure(run[0], number, row, run[1], args.ops, valgrind),
                runs,
            )
        )
    low, high = args.steps
    results = []
    for first, second in zip(counts[::2], counts[1::2]):
        per_step = (second.total - first.total) / (high - low)
        results.append((per_step / (second.ops or 1), second))
    return results


def table(rows: list[tuple[str, str, float, float, float, float]]) -> list[str]:
    """The markdown table: per workload, instructions and Python calls per op
    (or step) before and after, and the ratio of the instructions."""
    lines = [
        "| workload | per | instructions before | after | after/before "
        "| Python calls before | after |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, unit, old, new, old_calls, new_calls in rows:
        lines.append(
            f"| {name} | {unit} | {old / 1e3:,.1f}k | {new / 1e3:,.1f}k "
            f"| {new / old:.3f} | {old_calls:,.1f} | {new_calls:,.1f} |"
        )
    return lines


def checkout(text: str) -> Path:
    """An argparse type: a directory that holds a yamlgrad source tree."""
    path = Path(text).resolve()
    if not (path / "__init__.py").is_file() or not (path / "runtime").is_dir():
        raise argparse.ArgumentTypeError(f"{text}: not a yamlgrad checkout")
    return path


def steps(text: str) -> tuple[int, int]:
    """An argparse type: two step counts, A < B, as "A,B"."""
    low, high = (int(n) for n in text.split(","))
    if not 0 <= low < high:
        raise argparse.ArgumentTypeError(f"{text}: need A,B with 0 <= A < B")
    return low, high


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=checkout, metavar="DIR")
    parser.add_argument("--after", type=checkout, metavar="DIR")
    parser.add_argument("--only", default="1,4,6", help="workload numbers")
    parser.add_argument(
        "--steps", type=steps, default=(1, 3), help="the two step counts A,B"
    )
    parser.add_argument(
        "--ops", type=int, default=None, help="ops in the chains of workloads 1, 4"
    )
    parser.add_argument(
        "--jobs", type=int, default=2, help="callgrind children at a time"
    )
    parser.add_argument("--child", nargs=2, type=int, help=argparse.SUPPRESS)
    parser.add_argument("--row", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--python-calls", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.child:
        number, steps = args.child
        child(number, args.row, steps, args.ops, args.python_calls)
        return 0
    if args.before is None or args.after is None:
        raise SystemExit("--before and --after are required")
    rows = []
    with tempfile.TemporaryDirectory(prefix="yamlgrad-icount-") as scratch:
        root = Path(scratch)
        sides = [
            Side(label, tree, link(label, tree, root))
            for label, tree in (("before", args.before), ("after", args.after))
        ]
        for number in (int(n) for n in args.only.split(",") if n):
            row, count_of_rows = 0, 1
            while row < count_of_rows:
                calls = [c for c, _ in per_op(sides, number, row, args, False)]
                (old, count), (new, _) = per_op(sides, number, row, args, True)
                unit = "op" if count.ops else "step"
                rows.append((count.name, unit, old, new, *calls))
                print(f"{count.name}: {old:,.0f} -> {new:,.0f}", file=sys.stderr)
                row, count_of_rows = row + 1, count.rows
    print(f"before: {args.before}  \nafter: {args.after}  ")
    print(f"steps {args.steps[0]} and {args.steps[1]}, difference taken\n")
    print("\n".join(table(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
