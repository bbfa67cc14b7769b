"""`yamlgrad-gen`: regenerate generated/ from derivatives.yaml, or check it is current.

    yamlgrad-gen                       # write generated/ (only files that changed)
    yamlgrad-gen --check               # exit 1 with a unified diff if generated/ is stale
    yamlgrad-gen --yaml my.yaml --out pkg/generated
    yamlgrad-gen --yaml my_ops.yaml --out my_ops --helpers my_helpers.py
    yamlgrad-gen --no-cache            # format every unit again (see tools/formatting.py)

On success it prints one line saying what it did (`-q` silences it):

    yamlgrad-gen: 535 entries from derivatives.yaml -> generated/: 4 files written
    (Functions.py, MANIFEST.json, OPS.md, VariableType.py), 1 unchanged; black ran
    on 3 units, 919 from the cache; 2.4 s

Bad input exits 1 with one line, `derivatives.yaml:LINE: OP: what is wrong`, and
writes nothing; so does Ctrl-C (exit 130).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from yamlgrad.tools.gen import PACKAGE_DIR, Outcome, regenerate
from yamlgrad.tools.model import GenError


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"yamlgrad-gen {version('yamlgrad')} (black {version('black')})"
    except PackageNotFoundError:  # run from a checkout that is not installed
        return "yamlgrad-gen (not installed)"


def _files(names: list[str]) -> str:
    return f"{len(names)} file{'s' if len(names) != 1 else ''}"


def summary(args: argparse.Namespace, outcome: Outcome, seconds: float) -> str:
    """The one line a successful run prints."""
    what = f"{outcome.entries} entries from {args.yaml.name} -> {args.out.name}/"
    if args.check:
        state = "stale" if outcome.status else "current"
        done = f"{what} is {state}"
    elif outcome.written:
        done = (
            f"{what}: {_files(outcome.written)} written "
            f"({', '.join(outcome.written)}), {len(outcome.unchanged)} unchanged"
        )
    else:
        done = f"{what}: nothing to write, {_files(outcome.unchanged)} unchanged"
    units = outcome.formatting
    if units.formatted or units.cached:
        done += f"; black ran on {units.formatted} units, {units.cached} from the cache"
    return f"yamlgrad-gen: {done}; {seconds:.2f} s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="yamlgrad-gen",
        description="Generate yamlgrad's backward nodes and forward wrappers from YAML.",
    )
    parser.add_argument(
        "--yaml",
        type=Path,
        default=PACKAGE_DIR / "derivatives.yaml",
        help="the derivatives.yaml to read (default: the package's own)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=PACKAGE_DIR / "generated",
        help="the folder to write (default: the package's generated/)",
    )
    parser.add_argument(
        "--helpers",
        type=Path,
        default=None,
        help="an op pack's own helper module: its literal KERNELS and "
        "BACKWARD_HELPERS tuples name what the pack's kernels and formulas may call",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 and print a diff if the folder is not current",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="format every generated module whole with black, reusing nothing "
        "(the output is the same bytes either way)",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="print nothing on success"
    )
    parser.add_argument("--version", action="version", version=_version())
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        outcome = regenerate(
            args.yaml,
            args.out,
            check=args.check,
            helpers=args.helpers,
            cache=not args.no_cache,
        )
    except GenError as e:
        print(e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("yamlgrad-gen: interrupted; nothing was written", file=sys.stderr)
        return 130
    if args.check and outcome.status:
        print(f"yamlgrad-gen: {args.out} is stale; run `yamlgrad-gen`", file=sys.stderr)
    elif not args.quiet:
        print(summary(args, outcome, time.perf_counter() - start))
    return outcome.status


if __name__ == "__main__":
    sys.exit(main())
