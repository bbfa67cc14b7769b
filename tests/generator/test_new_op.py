"""The README's "Adding an op", end to end, on a copy of the repository.

The copy gets the README's entry (an op torch does not have), is regenerated with
`yamlgrad-gen` as the README says, and the README's test command runs there: the
generated checks pass, those that compare with torch skip naming the op, and a
wrong formula fails naming the entry and the line of its sample. The copy is
imported as `yamlgrad` through PYTHONPATH, ahead of the installed package.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO_ROOT

SECTION = re.compile(r"^## Adding an op\n(.*?)^## ", re.M | re.S)
YAML_BLOCK = re.compile(r"^```yaml\n(.*?)^```$", re.M | re.S)
SH_BLOCK = re.compile(r"^```sh\n(.*?)^```$", re.M | re.S)
SKIPPED_DIRS = {".git", ".venv", "__pycache__", ".pytest_cache", "build", "dist"}


def readme_instructions() -> tuple[str, list[list[str]]]:
    """The entry the README adds and the commands it runs after."""
    section = SECTION.search((REPO_ROOT / "README.md").read_text()).group(1)
    entry = YAML_BLOCK.search(section).group(1)
    commands = [
        shlex.split(line) for line in SH_BLOCK.search(section).group(1).splitlines()
    ]
    return entry, commands


def copy_repository(target: Path) -> Path:
    def ignore(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n in SKIPPED_DIRS or n.endswith(".egg-info")}

    root = target / "yamlgrad"
    shutil.copytree(REPO_ROOT, root, ignore=ignore)
    return root


def run(command: list[str], root: Path) -> subprocess.CompletedProcess[str]:
    """A README command in the copy: `yamlgrad-gen` and `python` as this Python's."""
    if command[0] == "yamlgrad-gen":
        command = [sys.executable, "-m", "yamlgrad.tools.cli", *command[1:]]
    elif command[0] == "python":
        command = [sys.executable, *command[1:]]
    env = {**os.environ, "PYTHONPATH": str(root.parent)}
    return subprocess.run(
        command, cwd=root, env=env, capture_output=True, text=True, timeout=1200
    )


def test_the_readme_adds_an_op_torch_lacks_and_the_suite_checks_it(
    tmp_path: Path,
) -> None:
    pytest.importorskip("torch")
    entry, commands = readme_instructions()
    name = re.search(r"name: (\w+)\(", entry).group(1)
    assert [c[0] for c in commands] == ["yamlgrad-gen", "python"]
    root = copy_repository(tmp_path)
    yaml_path = root / "derivatives.yaml"
    original = yaml_path.read_text()
    yaml_path.write_text(original.rstrip("\n") + "\n\n" + entry)

    generated = run(commands[0], root)
    assert generated.returncode == 0, generated.stderr
    summary = generated.stdout.strip()
    assert (
        summary.startswith("yamlgrad-gen: ")
        and "entries from derivatives.yaml" in summary
    )
    assert "Functions.py" in summary and "VariableType.py" in summary

    tests = run([*commands[1], "-q", "-rs", "-p", "no:cacheprovider"], root)
    assert tests.returncode == 0, tests.stdout[-3000:]
    assert re.search(r"\d+ passed", tests.stdout)
    assert (
        f"torch has no aten::{name}; checked by finite differences only" in tests.stdout
    )

    # A wrong backward formula: the suite names the entry and its sample's line.
    wrong = entry.replace("3 * grad * self * self", "2 * grad * self * self")
    assert wrong != entry
    yaml_path.write_text(original.rstrip("\n") + "\n\n" + wrong)
    assert run(["yamlgrad-gen", "-q"], root).returncode == 0
    gradients = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    failed = run([*gradients, "tests/ops/test_gradients.py", "-k", name], root)
    assert failed.returncode == 1
    lines = yaml_path.read_text().splitlines()
    sample_line = len(lines) - 1  # the entry's first sample, `- {self: [3, 4]}`
    assert (
        f"derivatives.yaml:{sample_line}: {name}(Tensor self) -> Tensor"
        in failed.stdout
    )
