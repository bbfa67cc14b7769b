"""The benchmark suite runs (tiny sizes, one repetition) and checks gradients."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support import REPO_ROOT


def test_benchmark_smoke_run_covers_every_workload_with_correct_gradients() -> None:
    run = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / "run.py"), "--smoke"],
        capture_output=True,
        text=True,
        check=True,
    )
    table = [line for line in run.stdout.splitlines() if line.count("|") == 8]
    rows = [line.split("|")[1:-1] for line in table[2:]]
    ours = [row for row in rows if row[1].strip() == "yamlgrad"]
    numbers = {row[0].strip().split(".")[0] for row in ours}
    assert numbers == {str(n) for n in range(1, 9)}
    # every framework that ran got the floor's gradient
    assert rows and all(row[5].strip() in ("ok", "stale") for row in rows), table
    # the yamlgrad rows name their target and whether it is met
    assert all(" met" in row[6] or "missed" in row[6] for row in ours)


def test_a_partial_run_writes_its_report_only_where_asked(tmp_path: Path) -> None:
    """`--only` with `--out` writes those rows and the command that made them;
    without `--out` a partial run leaves benchmarks/results.md alone."""
    results = REPO_ROOT / "benchmarks" / "results.md"
    before = results.read_bytes()
    out = tmp_path / "partial.md"
    command = [sys.executable, str(REPO_ROOT / "benchmarks" / "run.py"), "--smoke"]
    subprocess.run(
        [*command, "--only", "1", "--out", str(out)], check=True, capture_output=True
    )
    text = out.read_text(encoding="utf-8")
    assert "--only 1`" in text
    rows = [line for line in text.splitlines() if line.startswith("| 1. ")]
    assert rows and not any(line.startswith("| 2. ") for line in text.splitlines())
    subprocess.run([*command, "--only", "1"], check=True, capture_output=True)
    assert results.read_bytes() == before


def test_compare_times_two_checkouts_in_one_table() -> None:
    """benchmarks/compare.py, with this checkout on both sides: one round of one
    workload, a row whose ratio and time per op are numbers."""
    run = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "benchmarks" / "compare.py"),
            *("--before", str(REPO_ROOT), "--after", str(REPO_ROOT)),
            *("--only", "1", "--rounds", "1", "--smoke"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [line.split("|")[1:-1] for line in run.stdout.splitlines() if "|" in line]
    assert [row[0].strip() for row in rows[2:]] == ["1. chain of 10 ops on 4 float64"]
    float(rows[2][3])  # after/before
    assert rows[2][5].strip().startswith("op: ")
    assert run.stderr.count("round 1/1") == 2


def _icount_child(number: int, steps: int, *options: str) -> dict:
    """benchmarks/icount.py's measured side without valgrind: the JSON record
    (name, ops, rows, Python calls over `steps` steps) of workload `number`."""
    run = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "benchmarks" / "icount.py"),
            *("--child", str(number), str(steps), *options, "--python-calls"),
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "YAMLGRAD_BENCH_ONLY": "yamlgrad"},
    )
    return json.loads(run.stdout.splitlines()[-1])


def test_icount_child_counts_the_python_calls_of_its_steps() -> None:
    """A short chain of workload 1: its Python calls over the steps (two
    steps, twice one's)."""
    one, two = (_icount_child(1, steps, "--ops", "10") for steps in (1, 2))
    assert one["name"] == "1. chain of 10 ops on 16 float64" and one["ops"] == 10
    assert Path(one["yamlgrad"]).resolve() == REPO_ROOT.resolve()
    assert one["calls"] > 10 and two["calls"] == 2 * one["calls"]
    assert one["rows"] == 1


def test_icount_child_counts_each_row_of_a_workload() -> None:
    """Workload 6's second row (0-d values) is counted as its first is."""
    size_1, zero_d = (_icount_child(6, 1, "--row", str(row)) for row in (0, 1))
    assert size_1["rows"] == zero_d["rows"] == 2
    assert "size-1" in size_1["name"] and "0-d" in zero_d["name"]
    assert zero_d["calls"] > 1000


def test_jvp_benchmark_smoke_run_checks_every_jvp() -> None:
    """benchmarks/jvp_chain.py at tiny sizes: it checks each JVP and gradient
    against the chain's exact derivative before timing, and prints one row each."""
    run = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / "jvp_chain.py"), "--smoke"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [line.split("|")[1:-1] for line in run.stdout.splitlines() if "|" in line]
    names = [row[0].strip() for row in rows[2:]]
    assert names[:2] == ["yamlgrad jvp", "yamlgrad backward"]


def test_transformer_benchmark_smoke_run_checks_each_step_against_torch() -> None:
    """benchmarks/transformer.py at tiny sizes: one step of each runner matches
    torch's (loss and updated parameters) before timing; one row each."""
    run = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / "transformer.py"), "--smoke"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [line.split("|")[1:-1] for line in run.stdout.splitlines() if "|" in line]
    names = [row[0].strip() for row in rows[2:]]
    assert names == ["torch", "yamlgrad", "yamlgrad compiled"]
    assert all(row[2].strip().endswith("x") for row in rows[2:])


def test_rnn_benchmark_smoke_run_checks_every_program() -> None:
    """benchmarks/rnn.py at tiny sizes: every program's gradients are checked
    against torch's before timing, and each prints one row."""
    run = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / "rnn.py"), "--smoke"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [line.split("|")[1:-1] for line in run.stdout.splitlines() if "|" in line]
    names = [row[0].strip() for row in rows[2:]]
    assert names == [
        "torch eager",
        "yamlgrad eager",
        "yamlgrad eager, composite cell",
        "yamlgrad compiled",
    ]
