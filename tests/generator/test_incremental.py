"""Incremental generation (tools/formatting.py) and what the CLI says it did.

Formatting one top-level unit at a time must give the bytes black gives a whole
module; the cache may make a run faster, never different.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from support import REPO_ROOT
from yamlgrad.tools import cli, formatting, gen

COMMITTED = REPO_ROOT / "generated"
OP_PACK = REPO_ROOT / "examples" / "op_pack"
CUBE = (
    "\n- name: cube(Tensor self) -> Tensor\n"
    "  forward: self * self * self\n"
    "  self: 3 * grad * self * self\n"
    "  samples:\n"
    "    - {self: [3]}\n"
)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(formatting.CACHE_ENV, str(folder))
    return folder


def test_split_gives_the_text_back_and_cuts_before_definitions() -> None:
    text = "import a\n\n# about f\ndef f():\n    pass\n@d\nclass C:\n    x = 1\n"
    units = formatting.split_units(text)
    assert "".join(units) == text
    assert units == [
        "import a\n\n",
        "# about f\ndef f():\n    pass\n",
        "@d\nclass C:\n    x = 1\n",
    ]


@pytest.mark.parametrize("name", ["Functions.py", "VariableType.py"])
def test_units_give_the_committed_bytes_black_gives_the_whole_module(
    name: str, tmp_path: Path
) -> None:
    """The committed file is what whole-module black makes of the render (the
    staleness check in CI compares that); per-unit formatting gives it too."""
    rendered = gen.render_files(REPO_ROOT / "derivatives.yaml")[name]
    units = formatting.UnitCache(tmp_path, name)
    by_units = formatting.format_in_units(rendered, name, units)
    assert by_units == (COMMITTED / name).read_text(encoding="utf-8")
    assert formatting.format_source(by_units, name) == by_units


def test_the_op_pack_is_the_same_with_and_without_the_cache(
    tmp_path: Path, cache: Path
) -> None:
    yaml_path, helpers = OP_PACK / "my_ops.yaml", OP_PACK / "my_helpers.py"
    for out, use in ((tmp_path / "cold", False), (tmp_path / "warm", True)):
        gen.generate(yaml_path, out, check=False, helpers=helpers, cache=use)
    for path in (tmp_path / "cold").iterdir():
        assert path.read_bytes() == (tmp_path / "warm" / path.name).read_bytes()
        assert path.read_bytes() == (OP_PACK / "my_ops" / path.name).read_bytes()


def test_one_new_entry_formats_only_its_units(tmp_path: Path, cache: Path) -> None:
    yaml_path = tmp_path / "ops.yaml"
    yaml_path.write_text((OP_PACK / "my_ops.yaml").read_text())
    helpers = OP_PACK / "my_helpers.py"
    out = tmp_path / "out"
    first = gen.regenerate(yaml_path, out, check=False, helpers=helpers)
    assert first.formatting.formatted > 0 and first.entries == 4
    again = gen.regenerate(yaml_path, out, check=False, helpers=helpers)
    assert again.entries == 4 and again.written == []  # known unchanged: no load

    yaml_path.write_text(yaml_path.read_text() + CUBE)
    grown = gen.regenerate(yaml_path, out, check=False, helpers=helpers)
    assert grown.entries == 5
    # CubeBackward0 and cube's wrapper (plus the tables that list every op).
    assert 2 <= grown.formatting.formatted <= 6
    assert "Functions.py" in grown.written and "VariableType.py" in grown.written
    whole = tmp_path / "whole"
    gen.generate(yaml_path, whole, check=False, helpers=helpers, cache=False)
    for path in whole.iterdir():
        assert path.read_bytes() == (out / path.name).read_bytes()


def test_a_damaged_cache_is_ignored(tmp_path: Path, cache: Path) -> None:
    yaml_path, helpers = OP_PACK / "my_ops.yaml", OP_PACK / "my_helpers.py"
    gen.generate(yaml_path, tmp_path / "a", check=False, helpers=helpers)
    for path in cache.iterdir():
        path.write_text("{not json")
    gen.generate(yaml_path, tmp_path / "b", check=False, helpers=helpers)
    record = json.loads((cache / "Functions.py.units.json").read_text())
    assert record["formatter"] == formatting.formatter_id()
    assert (tmp_path / "b" / "Functions.py").read_bytes() == (
        OP_PACK / "my_ops" / "Functions.py"
    ).read_bytes()


def test_summary_line_quiet_and_version(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--yaml", str(OP_PACK / "my_ops.yaml"), "--out", str(tmp_path / "p")]
    argv += ["--helpers", str(OP_PACK / "my_helpers.py")]
    assert cli.main(argv) == 0
    line = capsys.readouterr().out
    assert re.fullmatch(
        r"yamlgrad-gen: 4 entries from my_ops\.yaml -> p/: 6 files written "
        r"\(.*\), 0 unchanged; black ran on \d+ units, 0 from the cache; "
        r"\d+\.\d\d s\n",
        line,
    ), line
    assert cli.main(argv) == 0
    assert "nothing to write, 6 files unchanged" in capsys.readouterr().out
    assert cli.main([*argv, "-q"]) == 0
    assert capsys.readouterr().out == ""
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert re.match(r"yamlgrad-gen \S+ \(black \S+\)", capsys.readouterr().out)


def test_ctrl_c_is_one_line_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(gen, "format_files", interrupted)
    out = tmp_path / "out"
    argv = ["--yaml", str(OP_PACK / "my_ops.yaml"), "--out", str(out), "--no-cache"]
    assert cli.main([*argv, "--helpers", str(OP_PACK / "my_helpers.py")]) == 130
    captured = capsys.readouterr()
    assert captured.err == "yamlgrad-gen: interrupted; nothing was written\n"
    assert not out.exists()


@pytest.mark.parametrize(
    "key, message",
    [
        ("smaples", "unknown key 'smaples'; did you mean 'samples'?"),
        ("slef", "formula for 'slef', which is not an argument; did you mean 'self'?"),
    ],
)
def test_a_misspelled_key_is_named_with_the_key_it_resembles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, message: str
) -> None:
    yaml_path = tmp_path / "ops.yaml"
    yaml_path.write_text(
        "- name: cube(Tensor self) -> Tensor\n"
        "  forward: self * self * self\n"
        f"  {key}: 3 * grad * self * self\n"
    )
    assert cli.main(["--yaml", str(yaml_path), "--out", str(tmp_path / "o")]) == 1
    assert capsys.readouterr().err.endswith(f"{message}\n")


def test_a_fresh_clone_formats_only_the_changed_units(
    tmp_path: Path, cache: Path
) -> None:
    """An empty cache (a fresh clone): the committed modules, which MANIFEST.json
    says were formatted from which rendered units, stand in for it."""
    pack = tmp_path / "pack"
    shutil.copytree(OP_PACK, pack)
    yaml_path, helpers, out = (
        pack / "my_ops.yaml",
        pack / "my_helpers.py",
        pack / "my_ops",
    )
    yaml_path.write_text(yaml_path.read_text() + CUBE)
    grown = gen.regenerate(yaml_path, out, check=False, helpers=helpers)
    assert grown.entries == 5
    assert 2 <= grown.formatting.formatted <= 6 < grown.formatting.cached + 6
    whole = tmp_path / "whole"
    gen.generate(yaml_path, whole, check=False, helpers=helpers, cache=False)
    for path in whole.iterdir():
        assert path.read_bytes() == (out / path.name).read_bytes()
    # A hand-edited module is not trusted: its units are formatted again.
    edited = tmp_path / "edited"
    shutil.copytree(OP_PACK, edited)
    functions = edited / "my_ops" / "Functions.py"
    functions.write_text(functions.read_text().replace("grad", "grad ", 1))
    for stale in cache.iterdir():
        stale.unlink()
    again = gen.regenerate(
        edited / "my_ops.yaml",
        edited / "my_ops",
        check=False,
        helpers=edited / "my_helpers.py",
    )
    assert "Functions.py" in again.written
    assert functions.read_bytes() == (OP_PACK / "my_ops" / "Functions.py").read_bytes()
