"""Every python block of README.md runs, in order, in one namespace, from the
repository root; the blocks assert what they claim."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from support import REPO_ROOT as ROOT

BLOCK = re.compile(r"^```python\n(.*?)^```$", re.M | re.S)


def blocks() -> list[str]:
    return BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8"))


def test_readme_has_the_tour() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "## A tour" in text
    assert len(blocks()) >= 5


def test_readme_python_blocks_run(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "path", list(sys.path))
    Path("/tmp/seed_graph.svg").unlink(missing_ok=True)
    namespace: dict[str, object] = {"__name__": "readme"}
    for index, code in enumerate(blocks()):
        exec(compile(code, f"README.md python block {index}", "exec"), namespace)
    out = capsys.readouterr().out
    assert "16 checks, 0 failed" in out
    assert "<SumBackward0" in out
    assert "digraph {" in out and "PowBackward0" in out
    for module in [m for m in sys.modules if m == "my_ops" or m.startswith("my_ops.")]:
        del sys.modules[module]
    if shutil.which("dot"):
        assert "<svg" in Path("/tmp/seed_graph.svg").read_text()
