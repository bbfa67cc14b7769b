"""Switch a generated folder from its old files to its new ones, all or nothing.

yamlgrad-gen never leaves `generated/` (or an op pack's folder) holding some old
files and some new ones, even when it is killed mid-write. The protocol:

1. The new files are written into `<out>/.yamlgrad-gen.staging/`, each fsynced,
   with a JOURNAL naming the files to install and the old ones to remove.
2. The staging folder is renamed to `<out>/.yamlgrad-gen.commit/`. That rename of
   a folder to a name that does not exist is atomic: it is the commit point.
3. Roll forward: each file is moved over its target with os.replace, the old
   files the journal names are removed, then the journal and the folder go.

Killed before step 2, the old set is intact and the next run deletes the staging
folder (roll back). Killed during step 3, the commit folder is still there, and
`recover()` finishes step 3; it is idempotent, and runs at the start of every
`yamlgrad-gen` and when the generated package is imported, so a reader never
imports a mix. This module imports nothing from yamlgrad, so that import is cheap.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

STAGING_DIR = ".yamlgrad-gen.staging"
COMMIT_DIR = ".yamlgrad-gen.commit"
JOURNAL_FILE = "JOURNAL"


def _kill_point(label: str) -> None:
    """A test hook: with YAMLGRAD_GEN_KILL_AT=N, the N-th step kills the process."""
    at = os.environ.get("YAMLGRAD_GEN_KILL_AT")
    if at is None:
        return
    global _steps
    _steps += 1
    if _steps == int(at):
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


_steps = 0


def fsync_dir(path: Path) -> None:
    """Make a folder's entries (renames, new files) durable, where the OS allows."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # e.g. Windows cannot open a folder
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def recover(out_dir: str | os.PathLike[str]) -> None:
    """Finish a committed switch left unfinished; forget an uncommitted one."""
    out = Path(out_dir)
    commit = out / COMMIT_DIR
    if commit.is_dir():
        _roll_forward(out, commit)
    staging = out / STAGING_DIR
    if staging.exists():
        shutil.rmtree(staging, ignore_errors=True)


def _roll_forward(out: Path, commit: Path) -> None:
    journal = commit / JOURNAL_FILE
    try:
        plan = json.loads(journal.read_text(encoding="utf-8"))
    except FileNotFoundError:  # every file was moved and the journal removed
        shutil.rmtree(commit, ignore_errors=True)
        return
    for name in plan["install"]:
        source = commit / name
        if source.exists():
            os.replace(source, out / name)
            _kill_point(f"install {name}")
    for name in plan["remove"]:
        (out / name).unlink(missing_ok=True)
        _kill_point(f"remove {name}")
    fsync_dir(out)
    journal.unlink(missing_ok=True)
    _kill_point("journal removed")
    shutil.rmtree(commit, ignore_errors=True)


def switch(files: dict[str, str], out_dir: Path, remove: list[str], mode: int) -> None:
    """Install `files` (name -> text) in `out_dir` and delete `remove`, atomically
    in the sense of the module docstring."""
    staging = out_dir / STAGING_DIR
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        for name, text in files.items():
            path = staging / name
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(path, mode)
            _kill_point(f"staged {name}")
        plan = {"install": sorted(files), "remove": sorted(remove)}
        with open(staging / JOURNAL_FILE, "w", encoding="utf-8") as f:
            json.dump(plan, f)
            f.flush()
            os.fsync(f.fileno())
        fsync_dir(staging)
        _kill_point("journal staged")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    commit = out_dir / COMMIT_DIR
    os.rename(staging, commit)  # the commit point
    fsync_dir(out_dir)
    _kill_point("committed")
    _roll_forward(out_dir, commit)
