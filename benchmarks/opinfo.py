"""PyTorch's OpInfo database against yamlgrad: every sample, written as a table.

    python benchmarks/opinfo.py                 # all samples, writes benchmarks/opinfo.md
    python benchmarks/opinfo.py --ops abs,mH    # some OpInfos, printed (nothing written)
    python benchmarks/opinfo.py --limit 2       # the first 2 samples of each, printed
    python benchmarks/opinfo.py --dtypes complex128 --ops mul   # one dtype, printed
    python benchmarks/opinfo.py --totals        # the totals of benchmarks/opinfo.md

For each OpInfo of `op_db` that supports autograd, the table says which yamlgrad
callable it maps to (or that it is missing) and, for float64, float32 and
(where PyTorch tests the OpInfo's gradients in complex numbers) complex128, how
many samples each check ran and how many passed: forward values, backward,
forward AD and gradgrad (tests/opinfo/harness.py defines the checks, and
known_differences.yaml beside it the reasons a check is known to differ). The
test suite runs the first few samples of each OpInfo and checks that the
mapped/missing column here is current.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "tests" / "opinfo"))

import harness  # noqa: E402
import torch  # noqa: E402

TABLE = REPO_ROOT / "benchmarks" / "opinfo.md"
UNMAPPED = harness.load_unmapped()
TOTALS_HEADING = "## Totals"
SHORT = {"forward": "fwd", "backward": "bwd", "forward_ad": "fwAD", "gradgrad": "gg"}


@dataclass
class Row:
    """One OpInfo's results: per (dtype, check), samples run and passed."""

    full_name: str
    family: str
    target: str | None
    checks: list[str]
    dtypes: list[str]
    random: bool
    run: Counter = field(default_factory=Counter)
    passed: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    torch_raised: set[str] = field(default_factory=set)  # samples not counted
    error: str | None = None  # the samples themselves could not be made


def measure(
    op: harness.OpInfo, limit: int | None, dtypes: set[str] | None = None
) -> Row:
    target = harness.resolve(op)
    row = Row(
        op.full_name,
        harness.family(op),
        target,
        harness.applicable_checks(op),
        harness.backward_dtypes(op),
        harness.is_random(op),
    )
    if target is None:
        return row
    for dtype in row.dtypes:
        if dtypes is not None and dtype not in dtypes:
            continue
        try:
            for index, case in enumerate(harness.cases(op, dtype, limit)):
                for check in row.checks:
                    try:
                        failure = harness.run_check(case, check)
                    except harness.TorchRaised as error:
                        row.torch_raised.add(f"{check}: {error}")
                        continue
                    row.run[dtype, check] += 1
                    if failure is None:
                        row.passed[dtype, check] += 1
                    else:
                        row.failures.append(f"{dtype} {check} #{index}: {failure}")
        except Exception as error:  # noqa: BLE001 - reported in the table
            row.error = f"{type(error).__name__}: {error}"[:200]
    return row


def _cell(row: Row, dtype: str, check: str) -> str:
    if check not in row.checks or dtype not in row.dtypes:
        return "-"
    if row.target is None:
        return ""
    run, passed = row.run[dtype, check], row.passed[dtype, check]
    return f"{passed}/{run}" if passed == run else f"**{passed}/{run}**"


def totals(rows: list[Row]) -> list[str]:
    mapped = [row for row in rows if row.target is not None]
    lines = [
        f"- OpInfos with autograd: {len(rows)}",
        f"- mapped to a yamlgrad callable: {len(mapped)}",
        f"- missing: {len(rows) - len(mapped)}",
    ]
    kinds = Counter(
        UNMAPPED[row.full_name].kind if row.full_name in UNMAPPED else "no reason"
        for row in rows
        if row.target is None
    )
    for kind, text in (*harness.UNMAPPED_KINDS.items(), ("no reason", "no reason")):
        if kinds[kind]:
            lines.append(f"  - {text}: {kinds[kind]}")
    for dtype in harness.DTYPES:
        tested = [row for row in rows if dtype in row.dtypes]
        tested_mapped = sum(1 for row in tested if row.target is not None)
        share = 100 * tested_mapped / len(tested) if tested else 0.0
        parts = [
            f"{tested_mapped}/{len(tested)} OpInfos with gradients in {dtype} "
            f"mapped ({share:.1f}%)"
        ]
        for check in harness.CHECKS:
            run = sum(row.run[dtype, check] for row in mapped)
            passed = sum(row.passed[dtype, check] for row in mapped)
            clean = sum(
                1
                for row in mapped
                if dtype in row.dtypes
                and check in row.checks
                and row.run[dtype, check] == row.passed[dtype, check]
            )
            having = sum(
                1 for row in mapped if dtype in row.dtypes and check in row.checks
            )
            rate = 100 * passed / run if run else 0.0
            parts.append(
                f"{check} {passed}/{run} samples ({rate:.1f}%), "
                f"{clean}/{having} OpInfos clean"
            )
        lines.append(f"- {dtype}: " + "; ".join(parts))
    return lines


def _header(rows: list[Row], seconds: float) -> list[str]:
    return [
        "# PyTorch's OpInfo samples against yamlgrad",
        "",
        f"`python benchmarks/opinfo.py` (all samples; torch {torch.__version__}, "
        f"{seconds:.0f} s of CPU). Generated by [opinfo.py](opinfo.py); the checks are "
        "[tests/opinfo/harness.py](../tests/opinfo/harness.py)'s, the reasons "
        "[tests/opinfo/known_differences.yaml](../tests/opinfo/known_differences.yaml)'s.",
        "",
        "Each cell is samples passed/run (bold: some failed; `-`: the check does not "
        "apply, as the OpInfo declares, or PyTorch tests no gradients in that dtype). "
        "Random OpInfos (PyTorch calls them through `wrapper_set_seed`) draw from "
        "yamlgrad's own generator, so only their shapes and dtypes are compared. "
        "In complex128 the cotangents and tangents are complex and gradgrad "
        "differentiates the real inner product Re<g, v> of the first-order "
        "gradient g with a complex direction v.",
        "",
        TOTALS_HEADING,
        "",
        *totals(rows),
    ]


def _missing(rows: list[Row]) -> list[str]:
    lines = ["", "## Missing, by family", ""]
    lines += [
        "Each missing OpInfo's reason is in the notes column "
        "([tests/opinfo/unmapped.yaml](../tests/opinfo/unmapped.yaml)).",
        "",
    ]
    missing: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        if row.target is None:
            missing[row.family].append(row.full_name)
    for name, members in sorted(missing.items()):
        lines.append(
            f"- {name} ({len(members)}): " + ", ".join(f"`{m}`" for m in members)
        )
    return lines


def _notes(row: Row, known: list[harness.KnownDifference]) -> str:
    notes = ["random"] if row.random else []
    if row.target is None:
        unmapped = UNMAPPED.get(row.full_name)
        notes.append(
            f"{unmapped.kind}: {unmapped.reason}" if unmapped else "no reason given"
        )
    if row.error:
        notes.append(f"samples: {row.error}")
    notes += [
        f"torch raises ({text}), not counted" for text in sorted(row.torch_raised)
    ]
    notes += [
        f"known ({k.check}{', ' + k.dtype if k.dtype else ''})"
        for k in known
        if k.opinfo == row.full_name
    ]
    return "; ".join(notes).replace("|", "/")


def _table(rows: list[Row], known: list[harness.KnownDifference]) -> list[str]:
    columns = [
        f"{dtype} {SHORT[c]}" for dtype in harness.DTYPES for c in harness.CHECKS
    ]
    lines = [
        "",
        "## Per OpInfo",
        "",
        "| OpInfo | yamlgrad | " + " | ".join(columns) + " | notes |",
        "|---|---|" + "---:|" * len(columns) + "---|",
    ]
    for row in rows:
        cells = [_cell(row, d, c) for d in harness.DTYPES for c in harness.CHECKS]
        target = f"`{row.target}`" if row.target else "missing"
        lines.append(
            f"| `{row.full_name}` | {target} | "
            + " | ".join(cells)
            + f" | {_notes(row, known)} |"
        )
    return lines


def _failures(rows: list[Row]) -> list[str]:
    lines = ["", "## Failing samples", ""]
    for row in rows:
        if row.failures:
            lines.append(f"- `{row.full_name}`")
            lines += [f"  - {text.replace('|', '/')}" for text in row.failures[:8]]
            if len(row.failures) > 8:
                lines.append(f"  - ... and {len(row.failures) - 8} more")
    return lines


def _reasons(rows: list[Row], known: list[harness.KnownDifference]) -> list[str]:
    """Each known difference with its reason, marked stale where nothing fails."""
    lines = ["", "## Known differences", ""]
    by_name = {row.full_name: row for row in rows}
    for k in known:
        row = by_name.get(k.opinfo)
        failing = (
            row is None
            or row.target is None
            or any(
                k.covers(k.opinfo, text.split(" ")[1], text.split(" ")[0])
                for text in row.failures
            )
        )
        stale = "" if failing else " (stale: no sample fails)"
        dtype = f" {k.dtype}" if k.dtype else ""
        lines.append(f"- `{k.opinfo}` {k.check}{dtype}: {k.reason}{stale}")
    return lines


def render(
    rows: list[Row], known: list[harness.KnownDifference], seconds: float
) -> str:
    parts = _header(rows, seconds) + _missing(rows) + _table(rows, known)
    parts += _failures(rows) + _reasons(rows, known)
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", help="comma-separated OpInfo full names")
    parser.add_argument("--limit", type=int, help="samples per OpInfo and dtype")
    parser.add_argument(
        "--dtypes", help=f"comma-separated, of {', '.join(harness.DTYPES)}"
    )
    parser.add_argument(
        "--totals", action="store_true", help="print opinfo.md's totals"
    )
    args = parser.parse_args(argv)
    if args.totals:
        text = TABLE.read_text()
        section = text.split(TOTALS_HEADING, 1)[1].split("\n## Per OpInfo", 1)[0]
        print(TOTALS_HEADING + section.rstrip())
        return 0
    warnings.filterwarnings("ignore")
    wanted = set(args.ops.split(",")) if args.ops else None
    dtypes = set(args.dtypes.split(",")) if args.dtypes else None
    start = time.process_time()
    rows = [
        measure(op, args.limit, dtypes)
        for op in harness.autograd_opinfos()
        if wanted is None or op.full_name in wanted
    ]
    text = render(rows, harness.load_known_differences(), time.process_time() - start)
    if wanted is None and args.limit is None and dtypes is None:
        TABLE.write_text(text)
        print(f"wrote {TABLE.relative_to(REPO_ROOT)}")
        print("\n".join(totals(rows)))
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
