"""Read derivatives.yaml with a line number for every mapping and every value.

PyYAML's SafeLoader does the parsing (so `!!python/object` and other unsafe tags are
refused); the subclass here only remembers where each value starts, so that every
later error can name its own line, as torchgen's loader does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from yamlgrad.tools.model import GenError, Location

# Aliases are legal YAML but no entry needs one, and they are how a small file
# expands into a huge one. Refusing them keeps the loader's work linear.
_ALIAS_MESSAGE = "YAML aliases (*name) are not allowed in derivatives.yaml"
# The real file is about 100 KB. A bigger one is refused before it is read, so a
# huge input costs neither time nor memory (PyYAML builds the whole tree).
MAX_YAML_BYTES = 4 * 1024 * 1024
# Bidirectional controls reorder how text is shown, so a reviewer would not read
# what the generator reads ("trojan source"); refused anywhere, comments included.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


class YamlMap(dict):
    """A mapping that knows its own line and the line of each value."""

    line: int
    lines: dict[str, int]


class YamlList(list):
    """A sequence that knows the line of each item."""

    line: int
    lines: list[int]


class _Lines:
    """The constructors of both loaders: a line for every value, ASCII values only."""

    def construct_scalar(self, node: Any) -> Any:
        value = super().construct_scalar(node)  # type: ignore[misc]
        # Every value may end up in generated code or its docstrings; none needs
        # more than ASCII, and a look-alike letter (Cyrillic 'а', a zero-width
        # space, a full-width 'ｓ' that Python normalizes to 's') must not pass.
        if isinstance(value, str) and not value.isascii():
            ch = next(c for c in value if not c.isascii())
            message = f"non-ASCII character U+{ord(ch):04X} in a value"
            raise yaml.MarkedYAMLError(None, None, message, node.start_mark)
        return value

    def construct_mapping(self, node: Any, deep: bool = False) -> YamlMap:
        result = YamlMap()
        result.line = node.start_mark.line + 1
        result.lines = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)  # type: ignore[attr-defined]
            if not isinstance(key, str):
                key = str(key)
            if key in result:
                raise yaml.MarkedYAMLError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            result[key] = self.construct_object(value_node, deep=True)  # type: ignore[attr-defined]
            result.lines[key] = value_node.start_mark.line + 1
        return result

    def construct_sequence(self, node: Any, deep: bool = False) -> YamlList:
        result = YamlList(
            self.construct_object(child, deep=True)  # type: ignore[attr-defined]
            for child in node.value
        )
        result.line = node.start_mark.line + 1
        result.lines = [child.start_mark.line + 1 for child in node.value]
        return result


class _LineLoader(_Lines, yaml.SafeLoader):
    """PyYAML's own parser: it refuses an alias where it stands, and its errors
    are the ones load_yaml reports."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.MarkedYAMLError(None, None, _ALIAS_MESSAGE, event.start_mark)
        return super().compose_node(parent, index)


class _Refused(Exception):
    """The fast loader met what the Python one must report."""


# libyaml's parser, where PyYAML has it: nine tenths of the loading time. It
# loads a good file to the same values; for anything it cannot load, or an
# alias (a node reached a second time), load_yaml reads the file again with
# _LineLoader, whose message and line are the ones reported.
_FastLineLoader: type | None = None
if getattr(yaml, "__with_libyaml__", False):

    class _FastLineLoader(_Lines, yaml.CSafeLoader):  # type: ignore[no-redef]
        def construct_object(self, node: Any, deep: bool = False) -> Any:
            if node in self.constructed_objects:
                raise _Refused
            return super().construct_object(node, deep)


for _loader in (_LineLoader, _FastLineLoader):
    if _loader is not None:
        _loader.add_constructor("tag:yaml.org,2002:map", _Lines.construct_mapping)
        _loader.add_constructor("tag:yaml.org,2002:seq", _Lines.construct_sequence)


def _parse(text: str) -> Any:
    """The file's values, through libyaml when it loads them, else PyYAML."""
    if _FastLineLoader is not None:
        try:
            return yaml.load(text, Loader=_FastLineLoader)  # noqa: S506 - safe
        except Exception:  # noqa: BLE001 - reported by the Python parser below
            pass
    return yaml.load(text, Loader=_LineLoader)  # noqa: S506 - a SafeLoader subclass


def load_yaml(path: Path, display: str) -> YamlList:
    """Parse `path` into YamlMap/YamlList values; errors name `display:line`."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_YAML_BYTES + 1)
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise GenError(Location(display, 0), "(file)", f"cannot read: {e}") from None
    if len(raw) > MAX_YAML_BYTES:
        message = f"the file is larger than the limit of {MAX_YAML_BYTES} bytes"
        raise GenError(Location(display, 0), "(file)", message)
    for number, line_text in enumerate(text.splitlines(), 1):
        if not _BIDI_CONTROLS.isdisjoint(line_text):
            ch = next(c for c in line_text if c in _BIDI_CONTROLS)
            message = f"bidirectional control character U+{ord(ch):04X}"
            raise GenError(Location(display, number), "(yaml)", message)
    try:
        data = _parse(text)
    except yaml.MarkedYAMLError as e:
        lines = text.splitlines()
        mark = e.problem_mark or e.context_mark
        # A problem found at the end of the file (an unclosed bracket or quote) is
        # reported where the construct it is in began.
        if mark is not None and mark.line >= len(lines) and e.context_mark is not None:
            mark = e.context_mark
        line = mark.line + 1 if mark is not None else 0
        problem = e.problem or e.context or "invalid YAML"
        if 1 <= line <= len(lines):
            problem += f": {lines[line - 1].strip()!r}"
        raise GenError(Location(display, line), "(yaml)", problem) from None
    except yaml.YAMLError as e:
        raise GenError(Location(display, 0), "(yaml)", str(e)) from None
    if data is None:
        data = YamlList()
        data.line, data.lines = 1, []
    if not isinstance(data, YamlList):
        raise GenError(Location(display, 1), "(yaml)", "the file must be a YAML list")
    return data
