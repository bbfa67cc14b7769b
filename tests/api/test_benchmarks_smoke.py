"""The benchmark suite runs (tiny sizes, one repetition) and checks gradients."""

from __future__ import annotations

import subprocess
import sys

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
