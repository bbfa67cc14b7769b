"""Every python block of docs/backends.md runs, in order, in one namespace,
from the repository root; the blocks assert what they claim."""

from __future__ import annotations

import re

import pytest

from support import REPO_ROOT as ROOT

BLOCK = re.compile(r"^```python\n(.*?)^```$", re.M | re.S)
PAGE = ROOT / "docs" / "backends.md"


def test_backends_page_python_blocks_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("dask")
    pytest.importorskip("array_api_strict")
    monkeypatch.chdir(ROOT)
    blocks = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 5
    namespace: dict[str, object] = {"__name__": "backends_doc"}
    for index, code in enumerate(blocks):
        exec(compile(code, f"docs/backends.md python block {index}", "exec"), namespace)
    out = capsys.readouterr().out
    assert "array_api_strict array_api_strict" in out
    assert "tensor(<lazy>" in out


def test_backends_page_is_linked_from_the_readme() -> None:
    assert "(docs/backends.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
