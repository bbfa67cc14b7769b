"""derivatives.yaml is read through libyaml where PyYAML has it, and PyYAML's
own parser otherwise: both give the same values and the same line of every
value, and what libyaml cannot load is reported as PyYAML reports it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from yamlgrad.tools import yaml_loader
from yamlgrad.tools.model import GenError
from yamlgrad.tools.yaml_loader import YamlList, YamlMap, load_yaml

ROOT = Path(__file__).resolve().parents[2]
FILES = [ROOT / "derivatives.yaml", ROOT / "examples/op_pack/my_ops.yaml"]

needs_libyaml = pytest.mark.skipif(
    yaml_loader._FastLineLoader is None, reason="PyYAML was built without libyaml"
)


def _same(a: Any, b: Any, where: str = "") -> None:
    """Equal values, types and lines, all the way down."""
    assert type(a) is type(b), where
    if isinstance(a, YamlMap):
        assert (a.line, a.lines, list(a)) == (b.line, b.lines, list(b)), where
        for key in a:
            _same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, YamlList):
        assert (a.line, a.lines, len(a)) == (b.line, b.lines, len(b)), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert a == b or a != a and b != b, where  # .nan reads as nan in both


@needs_libyaml
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_libyaml_and_pyyaml_read_the_same_values_and_lines(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    fast = yaml.load(text, Loader=yaml_loader._FastLineLoader)  # noqa: S506
    slow = yaml.load(text, Loader=yaml_loader._LineLoader)  # noqa: S506
    _same(fast, slow)


@needs_libyaml
def test_a_good_file_does_not_reach_the_python_parser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: Any) -> None:
        raise AssertionError("read twice")

    monkeypatch.setattr(yaml_loader._LineLoader, "__init__", refuse)
    assert len(load_yaml(FILES[0], "derivatives.yaml")) > 300


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("- {a: 1}\n- &x {b: 2}\n- *x\n", 3, "aliases"),
        ("- &x [1]\n- {<<: *x}\n", 2, "aliases"),
        ("- {a: 1, a: 2}\n", 1, "duplicate key 'a'"),
        ("- {a: [1, 2}\n", 1, "expected"),
        ("- {a: 'x\u0430'}\n", 1, "non-ASCII character U\\+0430"),
    ],
)
def test_what_libyaml_cannot_load_is_reported_by_pyyaml(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    path = tmp_path / "ops.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GenError, match=f"ops.yaml:{line}: .*{message}"):
        load_yaml(path, "ops.yaml")
