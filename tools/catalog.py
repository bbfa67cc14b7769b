"""Which module defines each helper a derivatives.yaml may call.

Every module in runtime/ops/ declares, as literal tuples, the names it offers:

    KERNELS            callable from a `forward:` (on ndarrays), and from a
                       composite body for shape arithmetic
    BACKWARD_HELPERS   callable from a backward formula
    COMPOSITE_HELPERS  callable from a composite body (on Tensors)

The folder is scanned with ast, never imported: the generator must run when the
runtime cannot be imported (a half-written runtime, a broken op pack). Generated
code calls a kernel through its module (`elementwise.clamp(self_data, ...)`) and
imports a backward helper from its module, so a name declared by two modules for
one role is refused: the generated call would be ambiguous.

An op pack's `--helpers` module is one more module, generated code reaches it as
`helpers` (copied into the pack as helpers.py).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

OPS_DIR = Path(__file__).resolve().parent.parent / "runtime" / "ops"
OPS_PACKAGE = "yamlgrad.runtime.ops"
KERNELS = "KERNELS"
BACKWARD_HELPERS = "BACKWARD_HELPERS"
COMPOSITE_HELPERS = "COMPOSITE_HELPERS"
ROLES = (KERNELS, BACKWARD_HELPERS, COMPOSITE_HELPERS)
# How generated code names an op pack's own helper module (its helpers.py).
PACK_MODULE = "helpers"

Declared = Mapping[str, tuple[str, ...]]  # role -> the names a module declares


class CatalogError(ValueError):
    """A module declares something the generator cannot use."""


def declarations(
    path: Path, roles: Iterable[str] = ROLES
) -> dict[str, tuple[str, ...]]:
    """The literal tuples `roles` of a module, read with ast (a missing one: ())."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    wanted = set(roles)
    found: dict[str, tuple[str, ...]] = {role: () for role in wanted}
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id in wanted:
                try:
                    value = ast.literal_eval(node.value)
                except ValueError:
                    value = None
                if not isinstance(value, (tuple, list)) or not all(
                    isinstance(v, str) for v in value
                ):
                    message = (
                        f"{path.name}: {target.id} must be a literal tuple of names"
                    )
                    raise CatalogError(message)
                found[target.id] = tuple(value)
    return found


@dataclass(frozen=True)
class Catalog:
    """For each role, the module (as generated code names it) defining each name."""

    kernels: Mapping[str, str] = field(default_factory=dict)
    backward_helpers: Mapping[str, str] = field(default_factory=dict)
    composite_helpers: Mapping[str, str] = field(default_factory=dict)

    def role(self, role: str) -> Mapping[str, str]:
        return {
            KERNELS: self.kernels,
            BACKWARD_HELPERS: self.backward_helpers,
            COMPOSITE_HELPERS: self.composite_helpers,
        }[role]

    @property
    def modules(self) -> frozenset[str]:
        return frozenset(
            m for role in ROLES for m in self.role(role).values() if m != PACK_MODULE
        )

    def names(self) -> frozenset[str]:
        return frozenset(n for role in ROLES for n in self.role(role))

    def with_module(self, module: str, declared: Declared) -> Catalog:
        """This catalog and `module`'s names; a name another module declares for
        the same role is refused."""
        tables = {role: dict(self.role(role)) for role in ROLES}
        for role, names in declared.items():
            table = tables[role]
            for name in names:
                if table.get(name, module) != module:
                    message = (
                        f"{role} name {name!r} is declared by both "
                        f"{table[name]!r} and {module!r}"
                    )
                    raise CatalogError(message)
                table[name] = module
        return Catalog(
            *(MappingProxyType(tables[role]) for role in ROLES)  # type: ignore[arg-type]
        )


@lru_cache(maxsize=4)
def scan(folder: Path = OPS_DIR) -> Catalog:
    """Every module of `folder` (runtime/ops/ by default), in name order."""
    catalog = Catalog()
    for path in sorted(folder.glob("*.py")):
        if path.name.startswith("_"):
            continue
        catalog = catalog.with_module(path.stem, declarations(path))
    return catalog


def runtime_catalog() -> Catalog:
    return scan(OPS_DIR)


def module_names(folder: Path = OPS_DIR) -> frozenset[str]:
    """The names generated code may import the modules of `folder` as (no op or
    argument may take one): those declaring a helper, and the op pack's module.
    A module that declares nothing is never imported by generated code."""
    try:
        modules = scan(folder).modules
    except (CatalogError, SyntaxError, OSError):  # reported when the YAML loads
        modules = frozenset(p.stem for p in folder.glob("*.py"))
    return modules | {PACK_MODULE}
