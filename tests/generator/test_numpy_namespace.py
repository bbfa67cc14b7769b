"""The generated wrappers' `np` (runtime/wrappers/numpy_namespace.py) holds every
name of numpy the generator lets a numpy-only kernel use, and nothing that
imports the rest of numpy's submodules."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from yamlgrad.runtime.wrappers import numpy_namespace
from yamlgrad.tools.expressions import ExpressionError, _check_namespace_name


def _accepted(name: str) -> bool:
    try:
        _check_namespace_name(["np", name], f"np.{name}", "forward", True)
    except ExpressionError:
        return False
    return True


def test_every_name_a_kernel_may_use_is_in_the_namespace() -> None:
    accepted = [name for name in np.__all__ if _accepted(name)]
    assert len(accepted) > 400  # (numpy's functions, dtypes and constants)
    missing = [n for n in accepted if not hasattr(numpy_namespace, n)]
    assert not missing
    for name in accepted:
        assert getattr(numpy_namespace, name) is getattr(np, name)


@pytest.mark.parametrize("name", ["random", "fft", "testing", "f2py", "ma"])
def test_submodules_other_than_linalg_are_refused(name: str) -> None:
    assert not _accepted(name)
    with pytest.raises(ExpressionError, match="kernels may use"):
        _check_namespace_name(["np", name, "x"], f"np.{name}.x", "forward", True)


def test_linalg_is_accepted() -> None:
    _check_namespace_name(["np", "linalg", "solve"], "np.linalg.solve", "forward", True)
    assert numpy_namespace.linalg is np.linalg


def test_import_yamlgrad_leaves_numpy_testing_and_f2py_unimported() -> None:
    code = (
        "import sys, yamlgrad; "
        "print(sorted(m for m in ('numpy.testing', 'numpy.f2py', 'numpy.ma', "
        "'numpy.polynomial', 'numpy.fft') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
