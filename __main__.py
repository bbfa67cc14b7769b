"""`python -m yamlgrad script.py [args]`: run a PyTorch program on yamlgrad.

The script runs as `python script.py [args]` would run it (`__name__` is
"__main__", `sys.argv` is `[script.py, args...]`, its folder first on
`sys.path`), with `torch` and every `torch.*` import answered by yamlgrad
(`yamlgrad.install_as_torch`). `python -m yamlgrad -m package.module [args]`
runs a module the same way, as `python -m` does.
"""

from __future__ import annotations

import os
import runpy
import sys

from yamlgrad.runtime.torch_alias import install_as_torch

USAGE = "usage: python -m yamlgrad script.py [args ...] | -m module [args ...]"


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help") or argv[:1] == ["-m"] and len(argv) < 2:
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    install_as_torch()
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]  # run_module puts the module's path first
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # was the cwd
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
