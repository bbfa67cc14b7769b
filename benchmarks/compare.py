"""yamlgrad before and after a change, timed in one run on this machine.

    python benchmarks/compare.py --before ../wt-before --after . --only 1,4,6

Each of `--rounds` rounds runs `benchmarks/run.py --only ...` once for the
`--before` checkout, then once for the `--after` one (A, B, A, B, ...), each in a
fresh interpreter whose PYTHONPATH starts with a temporary directory holding a
`yamlgrad` symlink to that checkout. Timings taken minutes apart on a shared
machine differ by more than most changes do; interleaved rounds spread whatever
else the machine does over both sides alike.

The run.py beside this script measures both checkouts (an older checkout's own
run.py may have no `--json`), so both are timed by the same harness. Each run
writes its rows as JSON, naming the yamlgrad it imported: a run that imported any
other stops the comparison.

The table gives, for each workload, the median over the rounds of yamlgrad's
median step time on each side, their ratio (after/before; above 1 is slower),
each round's own ratio (their spread is the noise), and the time per op where the
workload counts its ops (the chains; workload 1 has 200, workload 4 100,000),
else per step, with the difference after minus before.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RUN = Path(__file__).resolve().with_name("run.py")


@dataclass
class Side:
    """One checkout and what its rounds measured."""

    label: str  # "before" or "after"
    checkout: Path  # resolved
    path_entry: Path  # a directory whose `yamlgrad` links to the checkout
    # yamlgrad's median of each workload (by run.py's name), one per round
    medians: dict[str, list[float]] = field(default_factory=dict)


def checkout(text: str) -> Path:
    """An argparse type: a directory that holds a yamlgrad source tree."""
    path = Path(text).resolve()
    if not (path / "__init__.py").is_file() or not (path / "runtime").is_dir():
        raise argparse.ArgumentTypeError(f"{text}: not a yamlgrad checkout")
    return path


def link(label: str, tree: Path, scratch: Path) -> Path:
    """A directory under `scratch` in which `yamlgrad` is `tree`, to put first on
    PYTHONPATH (the checkouts' own directories have other names)."""
    entry = scratch / label
    entry.mkdir()
    (entry / "yamlgrad").symlink_to(tree, target_is_directory=True)
    return entry


def run_once(side: Side, options: list[str], out: Path) -> list[dict[str, Any]]:
    """run.py once for `side`: yamlgrad's timed rows (workload 2 has four, one
    for each dtype and activation; workload 5's are not times)."""
    env = dict(os.environ)
    inherited = env.get("PYTHONPATH")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(side.path_entry)] + ([inherited] if inherited else [])
    )
    command = [sys.executable, str(RUN), *options, "--json", str(out)]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"{side.label}: run.py failed ({done.returncode})")
    document = json.loads(out.read_text(encoding="utf-8"))
    measured = Path(document["yamlgrad"]["path"]).resolve()
    if measured != side.checkout:
        raise SystemExit(f"{side.label}: measured {measured}, not {side.checkout}")
    return [
        row
        for row in document["rows"]
        if row["framework"] == "yamlgrad" and row["unit"] == "s"
    ]


def seconds(value: float) -> str:
    """A time in the unit that suits it."""
    size = abs(value)
    if size >= 1.0:
        return f"{value:.3f} s"
    if size >= 1e-3:
        return f"{value * 1e3:.3f} ms"
    if size >= 1e-6:
        return f"{value * 1e6:.2f} µs"
    return f"{value * 1e9:.0f} ns"


def signed(value: float) -> str:
    return ("+" if value >= 0 else "-") + seconds(abs(value))


def table(before: Side, after: Side, ops: dict[str, int | None]) -> list[str]:
    """The markdown table; `ops` names the workloads, in run.py's order, with
    the ops in one step where the workload counts them."""
    lines = [
        f"before: {before.checkout}  ",
        f"after: {after.checkout}",
        "",
        "| workload | before median | after median | after/before "
        "| per round | per op (or step): before → after |",
        "|---|---|---|---|---|---|",
    ]
    for name, count in ops.items():
        old, new = before.medians.get(name), after.medians.get(name)
        if not old or not new:
            continue
        old_median, new_median = statistics.median(old), statistics.median(new)
        rounds = " ".join(f"{b / a:.3f}" for a, b in zip(old, new))
        count, unit = (count, "op") if count else (1, "step")
        per_old, per_new = old_median / count, new_median / count
        lines.append(
            f"| {name} | {seconds(old_median)} | {seconds(new_median)} "
            f"| {new_median / old_median:.3f} | {rounds} "
            f"| {unit}: {seconds(per_old)} → {seconds(per_new)} "
            f"({signed(per_new - per_old)}) |"
        )
    return lines


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=checkout, required=True, metavar="DIR")
    parser.add_argument("--after", type=checkout, required=True, metavar="DIR")
    parser.add_argument("--only", default="1,4,6", help="workload numbers")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--repeats", type=int, default=5, help="run.py's --repeats, for each run"
    )
    parser.add_argument("--calls", type=int, default=None, help="run.py's --calls")
    parser.add_argument(
        "--smoke", action="store_true", help="run.py's --smoke (to test this script)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    options = ["--only", args.only, "--repeats", str(args.repeats)]
    options += ["--calls", str(args.calls)] if args.calls else []
    options += ["--smoke"] if args.smoke else []
    ops: dict[str, int | None] = {}
    with tempfile.TemporaryDirectory(prefix="yamlgrad-compare-") as scratch:
        root = Path(scratch)
        sides = [
            Side(label, tree, link(label, tree, root))
            for label, tree in (("before", args.before), ("after", args.after))
        ]
        for round_number in range(1, args.rounds + 1):
            for side in sides:
                start = time.perf_counter()
                for row in run_once(side, options, root / "rows.json"):
                    name = row["workload"]
                    side.medians.setdefault(name, []).append(row["median"])
                    ops[name] = row["ops"]
                took = time.perf_counter() - start
                print(
                    f"round {round_number}/{args.rounds} {side.label}: {took:.1f} s",
                    file=sys.stderr,
                    flush=True,
                )
    print("\n".join(table(sides[0], sides[1], ops)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
