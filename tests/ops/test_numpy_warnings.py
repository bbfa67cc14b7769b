"""numpy's RuntimeWarnings do not leak out of yamlgrad: log(0), 0/0, sqrt(-1) and
overflow give inf and nan silently in the forward and in the backward, as in
PyTorch, while a user's own numpy code still warns."""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg

torch: Any
try:
    import torch
except ImportError:  # pragma: no cover - torch is an optional oracle
    torch = None

# Programs that make numpy warn at least once, forward or backward.
PROGRAMS: dict[str, Callable[[Any, Any], Any]] = {
    "log at 0 and below": lambda lib, x: lib.log(x),
    "sqrt below 0": lambda lib, x: lib.sqrt(x),
    "0 / 0": lambda lib, x: x / (x * 0),
    "exp overflow": lambda lib, x: lib.exp(x * 1000),
    "0 ** -1": lambda lib, x: (x * 0) ** -1.0,
    "log of a product at 0": lambda lib, x: lib.log(x * x),
    "reciprocal at 0": lambda lib, x: lib.reciprocal(x),
}
VALUES = [0.0, -1.0, 2.0]


@pytest.fixture(autouse=True)
def _package_filter() -> None:
    """The filter `import yamlgrad` installs. pytest gives each test the warning
    filters of the session's start, which may predate the import; a program that
    imports yamlgrad keeps it."""
    from yamlgrad.runtime.errors import silence_numpy_warnings

    silence_numpy_warnings("yamlgrad")


def _recorded(run: Callable[[], Any]) -> list[warnings.WarningMessage]:
    """The RuntimeWarnings `run` lets through. The "always" filter goes last, so
    any filter already installed decides first, and nothing is deduplicated."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.filterwarnings("always", category=RuntimeWarning, append=True)
        run()
    return [w for w in caught if issubclass(w.category, RuntimeWarning)]


def _forward_backward(lib: Any, program: Callable[[Any, Any], Any]) -> Any:
    x = lib.tensor(VALUES, dtype=lib.float64, requires_grad=True)
    out = program(lib, x)
    out.sum().backward()
    return out.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_no_runtime_warning_leaks_and_values_match_torch(name: str) -> None:
    program = PROGRAMS[name]
    results: list[Any] = []
    leaked = _recorded(lambda: results.append(_forward_backward(yg, program)))
    assert leaked == [], [(str(w.message), w.filename, w.lineno) for w in leaked]
    value, grad = results[0]
    assert not np.all(np.isfinite(np.concatenate([value, grad]))), "no edge case hit"
    if torch is not None:
        theirs: list[Any] = []
        assert _recorded(lambda: theirs.append(_forward_backward(torch, program))) == []
        np.testing.assert_allclose(value, theirs[0][0], equal_nan=True)
        np.testing.assert_allclose(grad, theirs[0][1], equal_nan=True)


def test_the_same_numpy_call_outside_yamlgrad_still_warns() -> None:
    """The filter is scoped to yamlgrad's modules: this test's own numpy warns."""
    leaked = _recorded(lambda: np.log(np.array([0.0, -1.0])))
    assert {str(w.message) for w in leaked} == {
        "divide by zero encountered in log",
        "invalid value encountered in log",
    }


def test_a_users_error_filter_still_wins() -> None:
    """`warnings.simplefilter("error")` goes first: the user asked to see them."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(RuntimeWarning, match="divide by zero encountered in log"):
            yg.log(yg.tensor([0.0]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [4, 20_000])
def test_hardswish_at_minus_inf_is_nan_without_a_warning(dtype: str, size: int) -> None:
    """hardswish(-inf) is 0 * -inf: nan, which PyTorch gives without a word; the
    kernel raises no floating-point flag, so even an error filter stays quiet."""
    x = np.resize(np.array([-np.inf, np.inf, -1.0, 4.0], dtype=dtype), size)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        ours = yg.nn.functional.hardswish(yg.tensor(x)).numpy()
    assert np.isnan(ours[0]) and ours[1] == np.inf
    if torch is not None:
        theirs = torch.nn.functional.hardswish(torch.tensor(x)).numpy()
        np.testing.assert_array_equal(ours, theirs)


# Reductions whose numpy functions warn by themselves (np.mean's "Mean of empty
# slice", np.var's "Degrees of freedom <= 0"): yamlgrad computes them in its own
# modules, so these stay silent too. Each: the input's shape, then the program.
REDUCTIONS: dict[str, tuple[tuple[int, ...], Callable[[Any, Any], Any]]] = {
    "mean of nothing": ((0, 3), lambda lib, x: lib.mean(x)),
    "mean over an empty dim": ((0, 3), lambda lib, x: x.mean(0)),
    "mean of an empty row": ((3, 0), lambda lib, x: x.mean(1, keepdim=True)),
    "var of one value": ((1, 3), lambda lib, x: x.var(0)),
    "std of one value": ((1, 3), lambda lib, x: x.std(0)),
    "var with correction 2 of two": ((2, 3), lambda lib, x: x.var(0, correction=2)),
    "var of nothing": ((0, 3), lambda lib, x: lib.var(x)),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_degenerate_reductions_stay_silent_and_match_torch(name: str) -> None:
    shape, program = REDUCTIONS[name]
    data = np.arange(float(np.prod(shape))).reshape(shape)

    def run(lib: Any) -> Any:
        x = lib.tensor(data, requires_grad=True)
        out = program(lib, x)
        out.sum().backward()
        return out.detach().numpy(), x.grad.numpy()

    results: list[Any] = []
    leaked = _recorded(lambda: results.append(run(yg)))
    assert leaked == [], [(str(w.message), w.filename, w.lineno) for w in leaked]
    if torch is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's own UserWarnings
            value, grad = run(torch)
        np.testing.assert_array_equal(results[0][0], value)
        np.testing.assert_array_equal(results[0][1], grad)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_no_runtime_warning_leaks_from_a_compiled_graph(name: str) -> None:
    """The same programs under yg.compile: the graph's generated code is a module
    of yamlgrad's to the warnings filters, forward and backward."""
    program = PROGRAMS[name]
    compiled = yg.compile(lambda x: program(yg, x).sum())

    def run() -> None:
        x = yg.tensor(VALUES, dtype=yg.float64, requires_grad=True)
        compiled(x).backward()

    leaked = _recorded(run)
    assert leaked == [], [(str(w.message), w.filename, w.lineno) for w in leaked]


USER_TESTS = """
import numpy as np
import pytest
import yamlgrad as yg


def test_eager():
    x = yg.tensor([0.0, -1.0, 2.0], requires_grad=True)
    (yg.log(x) / x).sum().backward()


def test_compiled():
    f = yg.compile(lambda x: (yg.sqrt(x) / (x * 0)).sum())
    f(yg.tensor([0.0, -1.0, 2.0], requires_grad=True)).backward()


def test_the_users_own_numpy_still_warns():
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        np.log(np.zeros(1))
"""


def test_a_users_pytest_run_with_warnings_as_errors_sees_none_of_yamlgrads(
    tmp_path: Path,
) -> None:
    """yamlgrad imported at collection (when pytest's own filters are in place, and
    put back after) and `-W error`: the plugin keeps yamlgrad's filters in front."""
    (tmp_path / "test_user.py").write_text(USER_TESTS)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-W", "error", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "3 passed" in run.stdout and "warning" not in run.stdout
