"""The names the generated code itself uses, read off the rendered modules.

No list is kept by hand: after rendering, VariableType.py and Functions.py are
parsed with `ast`, and what the templates bind there is collected. At module level
that is every imported name (the runtime's helpers, numpy, ...) and every name the
templates define (`METHODS`, `OVERLOADS`, `__all__`); inside a wrapper or an
`apply()` it is every local the template assigns (`grad_fn`, `result`,
`grad_inputs`, ...), as opposed to the lines that unpack an argument or a saved
value. An op whose Python name is one of the module-level names, an argument whose
name (or unpacked local) is any of them, or an op pack helper that Functions.py
would import over one of them, is refused with the YAML line: the generated
package would otherwise fail to import, or silently call the wrong thing.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from yamlgrad.tools.catalog import runtime_catalog
from yamlgrad.tools.expressions import local_name
from yamlgrad.tools.model import (
    DifferentiabilityInfo,
    GenError,
    Location,
    PythonBinding,
)

# The rendered modules whose names are checked, and the import that brings the
# node classes (made from the YAML, not by the templates) into VariableType.py.
VARIABLE_TYPE = "VariableType.py"
FUNCTIONS = "Functions.py"
NODES_MODULE = "Functions"
PACK_HELPERS_MODULE = "helpers"


@dataclass(frozen=True)
class TemplateNames:
    """What the templates bind: per module at module level, and in functions."""

    wrapper_module: frozenset[str]  # VariableType.py's imports and definitions
    node_module: frozenset[str]  # Functions.py's
    wrapper_locals: frozenset[str]  # assigned in a wrapper by the template
    apply_locals: frozenset[str]  # assigned (or a parameter) in an apply()


def _module_names(tree: ast.Module, yaml_made: set[str]) -> set[str]:
    """Names bound at module level by the templates: every import (but those of
    the node classes and a pack's helpers) and every definition not made from
    the YAML. A name defined twice (a YAML op named as the template's `METHODS`)
    is the template's too."""
    imported: set[str] = set()
    defined: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            if node.level and node.module in (NODES_MODULE, PACK_HELPERS_MODULE):
                continue  # the node classes and a pack's helpers: the YAML's own
            imported.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Import):
            imported.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined.extend(t.id for t in targets if isinstance(t, ast.Name))
    twice = {n for n, count in Counter(defined).items() if count > 1}
    return imported | (set(defined) - yaml_made) | twice


def _unpacks(statement: ast.stmt, sources: frozenset[str]) -> bool:
    """`x = converter(x, ...)` or `x = self._raw_saved_x.unpack(self, raw)` /
    `x = self._saved_x`: the line that gives an argument or saved value its local,
    not a name of the template's."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return False
    value = statement.value
    if isinstance(value, ast.Call) and value.args:
        first = value.args[0]
        if isinstance(first, ast.Name) and first.id in sources:
            return True
        value = value.func.value if isinstance(value.func, ast.Attribute) else value
    if isinstance(value, ast.ListComp):
        value = value.generators[0].iter
    return isinstance(value, ast.Attribute) and value.attr.startswith(
        ("_saved_", "_raw_saved_")
    )


def _statements(function: ast.FunctionDef) -> list[ast.AST]:
    """Every statement and except handler inside `function`, nested ones too: an
    assignment is a statement, so the expressions need not be walked."""
    found: list[ast.AST] = []
    todo: list[ast.AST] = list(function.body)
    while todo:
        node = todo.pop()
        found.append(node)
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            todo.extend(getattr(node, name, ()))
    return found


def _local_names(function: ast.FunctionDef, sources: frozenset[str]) -> set[str]:
    """The names a function assigns, other than by unpacking `sources`."""
    names: set[str] = set()
    for statement in _statements(function):
        if isinstance(statement, ast.ExceptHandler) and statement.name:
            names.add(statement.name)
        if isinstance(statement, ast.AnnAssign):
            targets = [statement.target]
        elif isinstance(statement, ast.Assign) and not _unpacks(statement, sources):
            targets = statement.targets
        else:
            continue
        for target in targets:
            names.update(
                n.id
                for n in ast.walk(target)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            )
    return names


def template_names(
    rendered: dict[str, str],
    infos: tuple[DifferentiabilityInfo, ...],
    bindings: list[PythonBinding],
) -> TemplateNames:
    """The names the templates bind in the rendered modules (see the docstring)."""
    wrappers = ast.parse(rendered[VARIABLE_TYPE])
    nodes = ast.parse(rendered[FUNCTIONS])
    yaml_made = {i.wrapper_name for i in infos} | {i.op for i in infos if i.op}
    yaml_made |= {b.name for b in bindings} | {b.table for b in bindings}
    arguments = frozenset(
        n
        for i in infos
        for a in i.func.arguments
        for n in (a.name, a.safe_name, a.local)
    )
    wrapper_locals: set[str] = set()
    for node in wrappers.body:
        if isinstance(node, ast.FunctionDef) and node.name in yaml_made:
            wrapper_locals |= _local_names(node, arguments)
    apply_locals: set[str] = set()
    methods = (n for c in nodes.body if isinstance(c, ast.ClassDef) for n in c.body)
    for node in methods:
        if isinstance(node, ast.FunctionDef) and node.name == "apply":
            apply_locals |= _local_names(node, frozenset())
            apply_locals.update(a.arg for a in node.args.args)
    return TemplateNames(
        frozenset(_module_names(wrappers, yaml_made)),
        frozenset(_module_names(nodes, yaml_made)),
        frozenset(wrapper_locals - {"self"}),  # `self = input`: the argument itself
        frozenset(apply_locals),
    )


def _called(info: DifferentiabilityInfo) -> frozenset[str]:
    """The names an entry's rendered formulas (backward and forward) call."""
    texts = [d.formula for d in info.derivatives]
    texts += [f.rendered for f in info.forward_derivatives]
    return frozenset(
        n.func.id
        for text in texts
        for n in ast.walk(ast.parse(text, mode="eval"))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    )


def _modules_read(wrappers: ast.Module) -> dict[str, frozenset[str]]:
    """The names each top-level function of VariableType.py reads an attribute
    of (`elementwise.clamp`): the modules it calls into."""
    return {
        node.name: frozenset(
            n.value.id
            for n in ast.walk(node)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
        )
        for node in wrappers.body
        if isinstance(node, ast.FunctionDef)
    }


def check_names(
    rendered: dict[str, str],
    infos: tuple[DifferentiabilityInfo, ...],
    bindings: list[PythonBinding],
    pack_helpers: frozenset[str] = frozenset(),
    helpers_path: Path | None = None,
) -> None:
    """Refuse a YAML name, or a pack helper, that the templates bind too."""
    taken = template_names(rendered, infos, bindings)
    wrapper_names = taken.wrapper_module | taken.wrapper_locals
    apply_names = taken.node_module | taken.apply_locals
    helpers = frozenset(runtime_catalog().backward_helpers) | pack_helpers
    families = runtime_catalog().modules
    reads = _modules_read(ast.parse(rendered[VARIABLE_TYPE]))
    for info in infos:
        for name in sorted({info.func.name, info.wrapper_name} & taken.wrapper_module):
            message = f"the op name {name!r} is taken by the generated code"
            raise GenError(info.loc, str(info.func), message)
        # A helper the entry's own formulas never call may share an argument's
        # name (PyTorch's `bool transpose`): the local hides it where unused.
        # Likewise a kernel family its wrapper never reads (PyTorch's `int
        # normalization` beside the normalization family).
        unused = helpers - _called(info)
        unused |= families - reads.get(info.wrapper_name, frozenset())
        for a in info.func.arguments:
            # In the wrapper: its parameter and unpacked local; in apply(): the
            # local a saved value gets.
            in_wrapper = {a.name, a.parameter, a.local} & (wrapper_names - unused)
            if in_wrapper or local_name(a.safe_name) in apply_names - unused:
                message = f"argument {a.name!r} shadows a name the generated code uses"
                raise GenError(info.loc, str(info.func), message)
    clashes = sorted(pack_helpers & (taken.node_module | taken.apply_locals))
    if clashes and helpers_path is not None:
        message = f"__all__ names {clashes}, which yamlgrad already uses; rename them"
        raise GenError(Location(helpers_path.name, 1), "(helpers)", message)
