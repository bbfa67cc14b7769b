"""The runtime's layers and size limits, read from the source with ast.

docs/architecture.md describes the layers: the autograd core, the wrappers the
generated code calls, the op families, and the libraries on top. Each imports only
downward; generated/ is imported only by the facade and the libraries above it
(the layer tests refuse it below). These tests keep it so,
and keep files and functions a size a reader can hold.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO_ROOT

RUNTIME = REPO_ROOT / "runtime"

# Modules every layer may import: they import nothing else of the runtime.
LEAVES = (
    "yamlgrad.runtime.errors",
    "yamlgrad.runtime.dtypes",
    "yamlgrad.runtime.backend",
)
# What each layer may import from yamlgrad, besides itself and the leaves.
ALLOWED = {
    "autograd": ("yamlgrad.runtime.dispatch",),
    # runtime/generator.py (Generator, whose state is a Tensor) sits just above
    # the autograd core: the wrappers hand a `Generator?` argument to a kernel.
    "wrappers": (
        "yamlgrad.runtime.dispatch",
        "yamlgrad.runtime.autograd",
        "yamlgrad.runtime.generator",
    ),
    "ops": (
        "yamlgrad.runtime.dispatch",
        "yamlgrad.runtime.autograd",
        "yamlgrad.runtime.generator",
        "yamlgrad.runtime.wrappers",
    ),
    # The function transforms (vmap, grad, autograd.functional) sit beside the
    # user libraries: they run the ops through dispatch.ops, register their
    # batching handler with the wrappers, make tensors with the factories and
    # swap the parameters of nn Modules; generated/ is none of their business.
    "func": (
        "yamlgrad.runtime.dispatch",
        "yamlgrad.runtime.autograd",
        "yamlgrad.runtime.wrappers",
        "yamlgrad.runtime.factories",
        "yamlgrad.runtime.nn",
    ),
    # yg.compile reads the generator's model of derivatives.yaml and calls the
    # op families' kernels and helpers from the code it generates.
    "compile": (
        "yamlgrad.runtime.dispatch",
        "yamlgrad.runtime.autograd",
        "yamlgrad.runtime.wrappers",
        "yamlgrad.runtime.ops",
        "yamlgrad.tools",
    ),
}
MAX_FILE_LINES = 900
MAX_FUNCTION_LINES = 80
HAND_WRITTEN = ("runtime", "tools", "benchmarks", "examples", "tests")


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every `yamlgrad...` module a file imports, function-local imports included."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return [(line, name) for line, name in found if name.startswith("yamlgrad")]


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _is_module(name: str) -> bool:
    """Whether `name` is a module of the package (not a name imported from one)."""
    parts = name.split(".")[1:]
    path = REPO_ROOT.joinpath(*parts)
    return path.is_dir() or path.with_suffix(".py").exists() or not parts


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_downward(layer: str) -> None:
    own = f"yamlgrad.runtime.{layer}"
    allowed = (own, *LEAVES, *ALLOWED[layer])
    problems = []
    for path in sorted((RUNTIME / layer).rglob("*.py")):
        for line, name in imported_modules(path):
            if not _is_module(name) or name == "yamlgrad.runtime":
                continue
            if not any(_within(name, a) for a in allowed):
                problems.append(f"{path.relative_to(REPO_ROOT)}:{line}: {name}")
    assert not problems, "imports from a layer above:\n" + "\n".join(problems)


def test_leaf_modules_import_no_other_runtime_module() -> None:
    for leaf in LEAVES:
        path = REPO_ROOT.joinpath(*leaf.split(".")[1:]).with_suffix(".py")
        names = [name for _, name in imported_modules(path)]
        assert all(_within(n, leaf) for n in names), (path, names)


def test_no_runtime_file_is_over_the_limit() -> None:
    long_files = {
        str(path.relative_to(REPO_ROOT)): n
        for path in RUNTIME.rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_FILE_LINES
    }
    assert not long_files


def test_no_hand_written_function_is_over_the_limit() -> None:
    long_functions = []
    for folder in HAND_WRITTEN:
        for path in sorted((REPO_ROOT / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if text.startswith("# @generated"):
                continue
            for node in ast.walk(ast.parse(text, str(path))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    length = node.end_lineno - node.lineno + 1
                    if length > MAX_FUNCTION_LINES:
                        where = f"{path.relative_to(REPO_ROOT)}:{node.lineno}"
                        long_functions.append(f"{where} {node.name}: {length} lines")
    assert not long_functions, "\n".join(long_functions)


def test_import_yamlgrad_does_not_import_scipy() -> None:
    """scipy.special is imported on an op's first use: `import yamlgrad` stays as
    light as numpy plus the package (checked in a fresh interpreter)."""
    code = "import sys, yamlgrad; print('scipy' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.stdout.strip() == "False"
