"""black, one top-level unit at a time, with the formatted units kept on disk.

A generated module is thousands of small top-level definitions (a node class, a
wrapper) that black formats independently of each other: it only ever decides the
blank lines *between* two of them, and before a top-level `def`, `class` or
decorator (with the comment lines right above it) that is always two. So a
module is split at those lines into units, each unit is formatted on its own, and
the units are joined with two blank lines. The result is the bytes black gives the
whole module (tests/generator/test_incremental.py checks it on the real
generated/ and on an op pack; `yamlgrad-gen --no-cache` formats whole modules).

Each unit's formatted text is cached, keyed by the sha256 of the formatter's
identity and the unit's rendered text, in one JSON file per generated module name
under the cache folder (`$YAMLGRAD_GEN_CACHE`, else `$XDG_CACHE_HOME/yamlgrad-gen`,
else `~/.cache/yamlgrad-gen`; `YAMLGRAD_GEN_CACHE=off` turns it off). A changed
entry re-renders one or two units, so regeneration formats those alone. The cache
can make generation faster, never different: a key names exactly what the value
was formatted from. A cache that cannot be read or written is ignored.

A unit black refuses makes the whole module go through black, which then reports
the error as before.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path

# The Python versions the generated code runs on (pyproject.toml's
# requires-python), named rather than inferred: black infers them from what a
# module uses, so a unit alone could be formatted for older Pythons than the
# module it belongs to (no trailing comma after a keyword-only argument).
BLACK_MODE = {
    "line_length": 88,
    "target_versions": ["py310", "py311", "py312", "py313", "py314", "py315"],
}
CACHE_ENV = "YAMLGRAD_GEN_CACHE"
CACHE_OFF = "off"
UNIT_SEPARATOR = "\n\n\n"

# A top-level definition starts a unit; so do the comment lines right above it.
_UNIT_START = re.compile(r"^(?:def |class |async def |@)")


def formatter_id() -> str:
    """What, besides the render, decides the formatted bytes: black's version, mode."""
    from importlib.metadata import version

    return f"black {version('black')} {json.dumps(BLACK_MODE, sort_keys=True)}"


def black_mode() -> object:
    """BLACK_MODE as black's Mode."""
    import black

    targets = {black.TargetVersion[v.upper()] for v in BLACK_MODE["target_versions"]}
    return black.Mode(line_length=BLACK_MODE["line_length"], target_versions=targets)


def format_source(text: str, name: str) -> str:
    """black over a whole module, at the pinned version: the reference bytes."""
    import black

    try:
        return black.format_str(text, mode=black_mode())
    except black.InvalidInput as e:  # a template bug, never bad YAML (that is checked)
        raise RuntimeError(f"generated {name} is not valid Python: {e}") from None


def split_units(text: str) -> list[str]:
    """The module's text cut before each top-level definition (its decorators and
    the comment lines directly above them). Joining the pieces gives `text` back."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for index, line in enumerate(lines):
        if index and _UNIT_START.match(line) and not lines[index - 1].startswith("@"):
            start = index
            while start > starts[-1] + 1 and lines[start - 1].startswith("#"):
                start -= 1
            if start > starts[-1]:
                starts.append(start)
    bounds = [*starts, len(lines)]
    return ["".join(lines[a:b]) for a, b in zip(bounds, bounds[1:])]


def cache_dir() -> Path | None:
    """Where formatted units are kept, or None when caching is off."""
    configured = os.environ.get(CACHE_ENV)
    if configured == CACHE_OFF:
        return None
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "yamlgrad-gen"


def unit_digest(unit: str) -> str:
    """A rendered unit's name in MANIFEST.json (16 hex digits of its sha256)."""
    return hashlib.sha256(unit.encode("utf-8")).hexdigest()[:16]


def _head(unit: str) -> str:
    """What a unit defines, as its first code line starts: `def sinh`, `class X`."""
    for line in unit.splitlines():
        if line and not line.startswith("#"):
            return line.split("(")[0].split(":")[0].strip()
    return ""


class UnitCache:
    """Formatted units of one generated module name, read once, written once.

    Besides the cache folder, the committed module itself serves: MANIFEST.json
    names the rendered units it was formatted from (`unit_digests`), so on a
    machine with an empty cache (a fresh clone) every unit whose render is
    unchanged is taken from the file on disk, and only the changed ones are
    formatted (`seed`)."""

    def __init__(self, folder: Path | None, name: str) -> None:
        self.path = None if folder is None else folder / f"{name}.units.json"
        self.formatter = formatter_id()
        self.stored: dict[str, str] = {}
        self.used: dict[str, str] = {}
        self.seeds: dict[str, str] = {}
        self.misses = 0
        if self.path is not None:
            try:
                record = json.loads(self.path.read_text(encoding="utf-8"))
                if record.get("formatter") == self.formatter:
                    self.stored = dict(record["units"])
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                self.stored = {}

    def seed(self, formatted: str, digests: list[str]) -> None:
        """Offer the units of a module on disk that black made from the rendered
        units `digests` names, in order (nothing when the two do not pair up)."""
        units = split_units(formatted)
        if len(units) == len(digests):
            self.seeds = dict(zip(digests, units))

    def key(self, unit: str) -> str:
        data = f"{self.formatter}\0{unit}".encode("utf-8")
        return hashlib.sha256(data).hexdigest()

    def get(self, unit: str) -> str | None:
        key = self.key(unit)
        found = self.stored.get(key)
        if found is None and self.seeds:
            seeded = self.seeds.get(unit_digest(unit))
            if seeded is not None and _head(seeded) == _head(unit):
                found = seeded
        if found is not None:
            self.used[key] = found
        return found

    def put(self, unit: str, formatted: str) -> None:
        self.used[self.key(unit)] = formatted
        self.misses += 1

    def save(self) -> None:
        """Keep the units this run used (a module's own units: the file stays the
        size of one module's formatted text)."""
        if self.path is None or not self.misses:
            return
        record = {"formatter": self.formatter, "units": self.used}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".units-")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(record, f)
            os.replace(tmp, self.path)
        except OSError:
            pass


def format_in_units(text: str, name: str, cache: UnitCache) -> str:
    """The module formatted as black formats it whole, one cached unit at a time."""
    import black

    mode = black_mode()
    formatted = []
    for unit in split_units(text):
        done = cache.get(unit)
        if done is None:
            try:
                done = black.format_str(unit, mode=mode)
            except black.InvalidInput:
                return format_source(text, name)  # raises, naming the module
            cache.put(unit, done)
        formatted.append(done.strip("\n"))
    joined = UNIT_SEPARATOR.join(part for part in formatted if part)
    return joined + "\n" if joined else ""
