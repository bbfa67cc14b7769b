"""`yamlgrad-gen`: exit status, one stderr line for bad input, `--check` and its diff.

Run in-process through `main(argv)` (stdout and stderr captured by capsys) and as
the installed command in a subprocess. Only tmp_path is written; the committed
generated/ is only read.
"""

from __future__ import annotations

import shutil
import re
import subprocess
from pathlib import Path

import pytest

from support import (
    BAD_INPUTS,
    COMMITTED,
    SENTINELS,
    BadInput,
    assert_one_error_line,
    copy_real_yaml,
    sentinel_out,
    snapshot,
    yamlgrad_gen,
)
from yamlgrad.tools.cli import main

EXP_FORMULA = "grad_inputs[0] = grad * conj(result)"  # ExpBackward0's, in Functions.py


def real_copy(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of derivatives.yaml and of the committed generated/ to edit."""
    yaml_path = copy_real_yaml(tmp_path / "src")
    out = tmp_path / "generated"
    shutil.copytree(COMMITTED, out, ignore=shutil.ignore_patterns("__pycache__"))
    return yaml_path, out


@pytest.mark.parametrize("case", BAD_INPUTS, ids=lambda case: case.id)
@pytest.mark.parametrize("check", [False, True], ids=["write", "check"])
def test_bad_input_exits_1_with_one_stderr_line(
    case: BadInput, check: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "derivatives.yaml"
    path.write_text(case.text, encoding="utf-8")
    out = sentinel_out(tmp_path)
    argv = ["--yaml", str(path), "--out", str(out)] + (["--check"] if check else [])
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.endswith("\n") and captured.err.count("\n") == 1
    assert_one_error_line(captured.err.rstrip("\n"), case)
    assert snapshot(out) == SENTINELS


def test_installed_command_reports_bad_input_in_one_line(tmp_path: Path) -> None:
    (case,) = [c for c in BAD_INPUTS if c.id == "misspelled_name"]
    path = tmp_path / "derivatives.yaml"
    path.write_text(case.text, encoding="utf-8")
    out = sentinel_out(tmp_path)
    run = subprocess.run(
        [yamlgrad_gen(), "--yaml", str(path), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr.count("\n") == 1, run.stderr
    assert run.stderr == (
        "derivatives.yaml:3: exp(Tensor self) -> Tensor: formula uses the unknown "
        "name 'reslt': 'grad * reslt'\n"
    )
    assert snapshot(out) == SENTINELS


def test_unreadable_yaml_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = sentinel_out(tmp_path)
    missing = tmp_path / "derivatives.yaml"
    assert main(["--yaml", str(missing), "--out", str(out)]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith("derivatives.yaml:0: (file): cannot read: ")
    assert captured.err.count("\n") == 1
    assert snapshot(out) == SENTINELS


def test_help_names_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    usage = capsys.readouterr().out
    assert all(option in usage for option in ("--yaml", "--out", "--check"))


def test_check_passes_on_the_committed_generated_folder() -> None:
    """What CI runs: the repository's generated/ is current."""
    run = subprocess.run([yamlgrad_gen(), "--check"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stderr == ""
    assert re.fullmatch(
        r"yamlgrad-gen: \d+ entries from derivatives\.yaml -> generated/ is "
        r"current; \d+\.\d\d s\n",
        run.stdout,
    )


def test_write_then_check_in_a_new_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    yaml_path = copy_real_yaml(tmp_path / "src")
    out = tmp_path / "new" / "generated"
    argv = ["--yaml", str(yaml_path), "--out", str(out)]
    assert main([*argv, "--check"]) == 1  # nothing there yet
    assert not out.exists()  # --check writes nothing
    assert main(argv) == 0
    assert main([*argv, "--check"]) == 0
    capsys.readouterr()
    assert snapshot(out) == snapshot(COMMITTED)


def test_check_reports_a_hand_edit_with_a_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    yaml_path, out = real_copy(tmp_path)
    argv = ["--check", "--yaml", str(yaml_path), "--out", str(out)]
    assert main([*argv, "-q"]) == 0
    assert capsys.readouterr().out == ""

    functions = out / "Functions.py"
    text = functions.read_text(encoding="utf-8")
    assert EXP_FORMULA in text
    functions.write_text(text.replace(EXP_FORMULA, "grad_inputs[0] = 2 * result", 1))
    edited = snapshot(out)
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith(f"--- {functions} (on disk)\n")
    assert f"+++ {functions} (generated)\n" in captured.out
    assert "\n@@ " in captured.out
    assert "\n-            grad_inputs[0] = 2 * result\n" in captured.out
    assert f"\n+            {EXP_FORMULA}\n" in captured.out
    assert "VariableType.py" not in captured.out  # only the stale file is diffed
    assert captured.err == f"yamlgrad-gen: {out} is stale; run `yamlgrad-gen`\n"
    assert snapshot(out) == edited  # --check writes nothing

    assert main(argv[1:]) == 0  # regenerate
    assert main(argv) == 0
    assert snapshot(out) == snapshot(COMMITTED)


def test_check_reports_a_yaml_edit_without_regeneration(tmp_path: Path) -> None:
    yaml_path, out = real_copy(tmp_path)
    lines = yaml_path.read_text(encoding="utf-8").splitlines(keepends=True)
    (index,) = [
        i for i, line in enumerate(lines) if "  self: grad * conj(result)  #" in line
    ]
    lines[index] = "  self: result * grad\n"
    yaml_path.write_text("".join(lines), encoding="utf-8")
    run = subprocess.run(
        [yamlgrad_gen(), "--check", "--yaml", str(yaml_path), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 1
    assert run.stdout.startswith(f"--- {out / 'Functions.py'} (on disk)\n")
    assert f"\n-            {EXP_FORMULA}\n" in run.stdout
    assert "\n+            grad_inputs[0] = result * grad\n" in run.stdout
    assert "\n+    self: result * grad\n" in run.stdout  # the docstring too
    assert run.stderr == f"yamlgrad-gen: {out} is stale; run `yamlgrad-gen`\n"
    assert snapshot(out) == snapshot(COMMITTED)


def test_check_reports_a_missing_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    yaml_path, out = real_copy(tmp_path)
    (out / "__init__.py").unlink()
    assert main(["--check", "--yaml", str(yaml_path), "--out", str(out)]) == 1
    diff = capsys.readouterr().out
    assert diff.startswith(f"--- {out / '__init__.py'} (on disk)\n")
    assert "\n+# @generated by yamlgrad-gen from derivatives.yaml.\n" in diff
    assert not (out / "__init__.py").exists()
