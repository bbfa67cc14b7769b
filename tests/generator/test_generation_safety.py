"""Generation is all or nothing, even under SIGKILL; `--check` is fast and still sound.

Crash safety: `yamlgrad-gen --out DIR` is run in a subprocess over a folder holding
an older generation and killed at every step of its switch (the
YAMLGRAD_GEN_KILL_AT hook in tools/journal.py), then at random instants. After
recovery (the next `yamlgrad-gen`, or importing the package) the folder holds the
complete old set or the complete new set, byte for byte.

The fast `--check`: when MANIFEST.json vouches for the folder, black is not run.
A hand edit, a stale template, a changed YAML, a changed black version and a
doctored manifest must each still be reported as stale.
"""

from __future__ import annotations

import io
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from yamlgrad.tools import gen, journal
from support import REPO_ROOT, snapshot
from yamlgrad.tools.gen import generate

COMMITTED = REPO_ROOT / "generated"
HELPERS = REPO_ROOT / "examples" / "op_pack" / "my_helpers.py"

OLD_YAML = """\
- name: softsign(Tensor self) -> Tensor
  forward: self / (1 + xp.abs(self))
  self: grad / ((1 + self * sign(self)) ** 2)
  samples:
    - {self: [3]}
"""
NEW_YAML = """\
- name: softsign(Tensor self) -> Tensor
  forward: self / (1 + xp.abs(self))
  self: grad / ((1 + self * sign(self)) * (1 + self * sign(self)))
  samples:
    - {self: [3]}

- name: cubic(Tensor self, Tensor other) -> Tensor
  forward: self * self * self + other * self
  self: grad * (3 * self * self + other)
  other: grad * self
  samples:
    - {self: [3], other: [3]}
"""


def run_gen(yaml: Path, out: Path, *extra: str, kill_at: int | None = None) -> int:
    env = dict(os.environ)
    env.pop("YAMLGRAD_GEN_KILL_AT", None)
    if kill_at is not None:
        env["YAMLGRAD_GEN_KILL_AT"] = str(kill_at)
    command = [sys.executable, "-m", "yamlgrad.tools.cli", "--yaml", str(yaml)]
    command += ["--out", str(out), *extra]
    return subprocess.run(command, env=env, capture_output=True).returncode


@pytest.fixture(scope="module")
def two_sets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """An old generation (with --helpers, so it has files the new one removes),
    the YAML of a new one, and the new generation's folder for reference."""
    root = tmp_path_factory.mktemp("sets")
    old_yaml, new_yaml = root / "ops.yaml", root / "new" / "ops.yaml"
    new_yaml.parent.mkdir()
    old_yaml.write_text(OLD_YAML)
    new_yaml.write_text(NEW_YAML)
    old = root / "old_set"
    assert run_gen(old_yaml, old, "--helpers", str(HELPERS)) == 0
    new = root / "new_set"
    assert run_gen(new_yaml, new) == 0
    assert {"helpers.py"} <= set(snapshot(old)) - set(snapshot(new))
    return old, new_yaml, new


def test_killed_at_every_step_leaves_the_old_or_the_new_set(
    two_sets: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    old, new_yaml, new = two_sets
    old_files, new_files = snapshot(old), snapshot(new)
    outcomes = []
    mixed_seen = False
    for step in range(1, 60):
        out = tmp_path / f"pack{step}"
        shutil.copytree(old, out)
        status = run_gen(new_yaml, out, kill_at=step)
        if status == 0:  # fewer steps than `step`: the run finished
            assert snapshot(out) == new_files
            break
        assert status == -signal.SIGKILL
        if snapshot(out) not in (old_files, new_files):
            mixed_seen = True  # killed mid-switch: visible until recovered
        journal.recover(out)
        after = snapshot(out)
        assert after in (old_files, new_files), f"a mix after a kill at step {step}"
        assert sorted(p.name for p in out.iterdir() if p.is_dir()) == []
        outcomes.append(after == new_files)
    else:
        pytest.fail("the run never finished")
    # Both sides of the commit point were hit, and some kill left work to recover.
    assert False in outcomes and True in outcomes and mixed_seen


def test_importing_the_package_finishes_a_killed_switch(
    two_sets: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    old, new_yaml, new = two_sets
    root = tmp_path / "site"
    out = root / "killed_pack"
    shutil.copytree(old, out)
    # Steps 1-5 stage the four changed files and the journal, 6 commits, 7 moves
    # the first file in place: killed there, the folder is a mix until recovered.
    assert run_gen(new_yaml, out, kill_at=7) == -signal.SIGKILL
    assert (out / journal.COMMIT_DIR).is_dir()
    assert snapshot(out) != snapshot(new)
    code = "import killed_pack, sys; print(killed_pack.__all__)"
    python_path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        capture_output=True,
        text=True,
        # The pack's folder first, then the yamlgrad under test (not an installed one).
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(root), *python_path])},
    )
    assert done.returncode == 0, done.stderr
    assert "cubic" in done.stdout
    assert snapshot(out) == snapshot(new)
    assert not (out / journal.COMMIT_DIR).exists()


def test_killed_at_random_instants_leaves_the_old_or_the_new_set(
    two_sets: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    old, new_yaml, new = two_sets
    old_files, new_files = snapshot(old), snapshot(new)
    rng = random.Random(0)
    command = [sys.executable, "-m", "yamlgrad.tools.cli", "--yaml", str(new_yaml)]
    for attempt in range(3):
        out = tmp_path / f"pack{attempt}"
        shutil.copytree(old, out)
        process = subprocess.Popen([*command, "--out", str(out)])
        time.sleep(rng.uniform(0.0, 2.5))
        process.send_signal(signal.SIGKILL)
        process.wait()
        journal.recover(out)
        assert snapshot(out) in (old_files, new_files)


def test_a_failed_run_leaves_no_staging_folder(tmp_path: Path) -> None:
    yaml_path = tmp_path / "ops.yaml"
    yaml_path.write_text(OLD_YAML)
    out = tmp_path / "out"
    generate(yaml_path, out, check=False)
    before = snapshot(out)
    (out / journal.STAGING_DIR).mkdir()  # left by a run killed before its commit
    (out / journal.STAGING_DIR / "Functions.py").write_text("half\n")
    yaml_path.write_text(NEW_YAML)
    generate(yaml_path, out, check=False)
    assert snapshot(out) != before
    assert [p.name for p in out.iterdir() if p.is_dir()] == []


def test_only_files_of_the_previous_generation_are_removed(tmp_path: Path) -> None:
    yaml_path = tmp_path / "ops.yaml"
    yaml_path.write_text(OLD_YAML)
    out = tmp_path / "out"
    generate(yaml_path, out, check=False, helpers=HELPERS)
    (out / "notes.txt").write_text("mine\n")
    generate(yaml_path, out, check=False)
    assert not (out / "helpers.py").exists()
    assert not (out / "_kernels.py").exists()
    assert (out / "notes.txt").read_text() == "mine\n"


# -- The fast --check ---------------------------------------------------------------


@pytest.fixture
def black_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = gen.format_code

    def counting(text: str, name: str, cache: object = None) -> str:
        calls.append(name)
        return real(text, name, cache)

    monkeypatch.setattr(gen, "format_code", counting)
    return calls


@pytest.fixture
def small_out(tmp_path: Path) -> tuple[Path, Path]:
    yaml_path = tmp_path / "ops.yaml"
    yaml_path.write_text(NEW_YAML)
    out = tmp_path / "out"
    generate(yaml_path, out, check=False)
    return yaml_path, out


def check(yaml_path: Path, out: Path) -> tuple[int, str]:
    stream = io.StringIO()
    return generate(yaml_path, out, check=True, stream=stream), stream.getvalue()


def test_check_of_the_committed_folder_does_not_run_black(
    black_calls: list[str],
) -> None:
    assert check(REPO_ROOT / "derivatives.yaml", COMMITTED) == (0, "")
    assert black_calls == []


def test_manifest_is_deterministic(
    small_out: tuple[Path, Path], tmp_path: Path
) -> None:
    yaml_path, out = small_out
    again = tmp_path / "again"
    generate(yaml_path, again, check=False)
    assert snapshot(again) == snapshot(out)
    assert (out / gen.MANIFEST_FILE).read_text().count("sha256") == 2


def test_check_catches_a_hand_edit(
    small_out: tuple[Path, Path], black_calls: list[str]
) -> None:
    yaml_path, out = small_out
    path = out / "Functions.py"
    path.write_text(path.read_text().replace("grad * self", "grad * self * 2"))
    status, diff = check(yaml_path, out)
    assert status == 1 and "grad * self * 2" in diff
    assert black_calls  # the fallback formats, to print the diff


def test_check_catches_a_changed_yaml(small_out: tuple[Path, Path]) -> None:
    yaml_path, out = small_out
    yaml_path.write_text(NEW_YAML.replace("other: grad * self", "other: grad * 2"))
    status, diff = check(yaml_path, out)
    assert status == 1 and "grad * 2" in diff


def test_check_catches_a_stale_template(
    small_out: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    yaml_path, out = small_out
    templates = tmp_path / "templates"
    shutil.copytree(gen.TEMPLATES_DIR, templates)
    ops = templates / "OPS.md.j2"
    ops.write_text(ops.read_text() + "\nA new closing line.\n")
    monkeypatch.setattr(gen, "TEMPLATES_DIR", templates)
    status, diff = check(yaml_path, out)
    assert status == 1 and "A new closing line." in diff


def test_check_catches_a_changed_black_version(
    small_out: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    yaml_path, out = small_out
    monkeypatch.setattr(gen, "formatter_id", lambda: "black 0.0 {}")
    status, diff = check(yaml_path, out)
    assert status == 1 and "black 0.0" in diff


@pytest.mark.parametrize("edit", ["reordered", "missing", "extra file"])
def test_check_catches_a_doctored_manifest(
    small_out: tuple[Path, Path], edit: str
) -> None:
    yaml_path, out = small_out
    manifest = out / gen.MANIFEST_FILE
    if edit == "reordered":
        manifest.write_text(manifest.read_text().replace("\n ", "\n  "))
    elif edit == "missing":
        manifest.unlink()
    else:
        (out / "helpers.py").write_text("")
        import json

        record = json.loads(manifest.read_text())
        record["files_sha256"]["helpers.py"] = gen._sha256("")
        manifest.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    assert check(yaml_path, out)[0] == 1


def test_check_reports_an_unfinished_switch(small_out: tuple[Path, Path]) -> None:
    yaml_path, out = small_out
    (out / journal.COMMIT_DIR).mkdir()
    assert not gen.is_current(gen.render_files(yaml_path), out)
