"""`yamlgrad-gen`: regenerate generated/ from derivatives.yaml, or check it is current.

    yamlgrad-gen                       # write generated/ (only files that changed)
    yamlgrad-gen --check               # exit 1 with a unified diff if generated/ is stale
    yamlgrad-gen --yaml my.yaml --out pkg/generated
    yamlgrad-gen --yaml my_ops.yaml --out my_ops --helpers my_helpers.py

Bad input exits 1 with one line, `derivatives.yaml:LINE: OP: what is wrong`, and
writes nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from yamlgrad.tools.gen import PACKAGE_DIR, generate
from yamlgrad.tools.model import GenError


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
    args = parser.parse_args(argv)
    try:
        status = generate(args.yaml, args.out, check=args.check, helpers=args.helpers)
    except GenError as e:
        print(e, file=sys.stderr)
        return 1
    if args.check and status:
        print(f"yamlgrad-gen: {args.out} is stale; run `yamlgrad-gen`", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
