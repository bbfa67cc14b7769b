"""An entry's `batch_rule:` key: which rule of runtime/func/batching_rules.py vmap
uses for it, when its schema does not say (DifferentiabilityInfo.batch_rule
derives the rest: element-wise entries and one-Tensor entries with dim arguments).

The names a key may use are the literal `BATCH_RULES` tuple of that module, read
with ast as the helper catalogs are; `dims(a, b)` names the integer arguments
that are dims of the entry's one Tensor argument.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from yamlgrad.tools.catalog import declarations
from yamlgrad.tools.model import FunctionSchema

RULES_MODULE = Path(__file__).resolve().parent.parent / "runtime/func/batching_rules.py"
_RULE_RE = re.compile(r"^(?P<name>\w+)(?:\((?P<args>[^()]*)\))?$")
_names: list[tuple[str, ...]] = []


def rule_names() -> tuple[str, ...]:
    """The rules a `batch_rule:` key may name."""
    if not _names:
        _names.append(declarations(RULES_MODULE, ["BATCH_RULES"])["BATCH_RULES"])
    return _names[0]


def load_batch_rule(
    value: Any, func: FunctionSchema, fail: Callable[[str], NoReturn]
) -> str:
    """The key's value, checked (`fail` raises with the key's file:line)."""
    if not isinstance(value, str):
        fail("'batch_rule' must be the name of a batching rule")
    m = _RULE_RE.match(value.strip())
    names = rule_names()
    if m is None or m["name"] not in names:
        fail(f"unknown batch_rule {value!r}; the rules are {', '.join(names)}")
    if m["name"] != "dims":
        if m["args"] is not None:
            fail(f"batch_rule {m['name']!r} takes no arguments")
        return m["name"]
    args = [a.strip() for a in (m["args"] or "").split(",") if a.strip()]
    integers = {a.name for a in func.arguments if a.type.base in ("int", "SymInt")}
    if not args or any(a not in integers for a in args):
        fail("batch_rule dims(...) names the op's integer dim arguments")
    return f"dims({', '.join(args)})"
