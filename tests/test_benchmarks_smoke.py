"""The benchmark suite runs (tiny sizes, one repetition) and checks gradients."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def test_benchmark_smoke_run_reports_every_framework_correct() -> None:
    run = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / "run.py"), "--smoke"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [line for line in run.stdout.splitlines() if line.startswith("| chain")]
    assert any("| yamlgrad |" in row for row in rows)
    table = [line for line in run.stdout.splitlines() if line.count("|") == 7]
    assert table and not any("WRONG" in line for line in table)
