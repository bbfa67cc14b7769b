"""PyTorch programs, run unmodified with torch and with yamlgrad imported as torch.

Each file in programs/ is an ordinary PyTorch script in the style of PyTorch's
tutorials. It runs twice in this process: once as written, once with every
`torch` and `torch.<sub>` import answered by yamlgrad's module of that name. The
two runs must print the same text, number by number (to a float32 tolerance),
and end with the same values in their module globals (tensors, numbers, lists
and dicts of them). Random draws differ between the two (another generator), so
the programs seed their data from numpy, and keep what they sample in globals
named with a leading underscore, which are not compared (what they print of a
draw is a fact both runs share: a shape, a dtype, a mean near its expectation).
"""

from __future__ import annotations

import contextlib
import io
import re
import runpy
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import yamlgrad

PROGRAMS = sorted((Path(__file__).parent / "programs").glob("*.py"))
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:e[-+]?\d+)?")
RTOL, ATOL = 2e-4, 2e-5


@contextlib.contextmanager
def yamlgrad_as_torch() -> Iterator[None]:
    """While inside, `import torch` imports yamlgrad (`yamlgrad.install_as_torch`);
    torch's own modules, put aside meanwhile, come back after."""
    saved = {
        name: sys.modules.pop(name)
        for name in list(sys.modules)
        if name == "torch" or name.startswith("torch.")
    }
    try:
        with yamlgrad.install_as_torch():
            yield
    finally:
        sys.modules.update(saved)


def _torch_as_a_new_process() -> Any:
    """Real torch as a program run on its own sees it: importing
    torch.testing._internal (the OpInfo tests, in this process) freezes the
    global cudnn flags, which a program may set (`cudnn.deterministic = True`)."""
    import torch

    allow = getattr(torch.backends, "__allow_nonbracketed_mutation", None)
    return allow() if allow is not None else contextlib.nullcontext()


def run(path: Path, as_yamlgrad: bool) -> tuple[str, dict[str, Any]]:
    """What the program printed, and its globals, run with torch or yamlgrad."""
    out = io.StringIO()
    context = yamlgrad_as_torch() if as_yamlgrad else _torch_as_a_new_process()
    with context, contextlib.redirect_stdout(out):
        yamlgrad.manual_seed(0)
        namespace = runpy.run_path(str(path), run_name="__main__")
    return out.getvalue(), namespace


def _plain(value: Any) -> Any:
    """A global as numbers: tensors and arrays as float64 arrays, containers by
    item; None for anything else (functions, modules, objects)."""
    if hasattr(value, "detach") and hasattr(value, "shape"):
        return np.asarray(value.detach().numpy(), dtype=np.float64)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return value.astype(np.float64)
    if isinstance(value, (bool, int, float, np.number)):
        return np.float64(value)
    if isinstance(value, (list, tuple)):
        items = [_plain(v) for v in value]
        return None if any(i is None for i in items) else items
    if isinstance(value, dict):
        items = {k: _plain(v) for k, v in value.items()}
        return None if any(i is None for i in items.values()) else items
    if isinstance(value, str):
        return value
    return None


def _assert_same(name: str, ours: Any, theirs: Any) -> None:
    if isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), name
        for i, (o, t) in enumerate(zip(ours, theirs)):
            _assert_same(f"{name}[{i}]", o, t)
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and ours.keys() == theirs.keys(), name
        for key in theirs:
            _assert_same(f"{name}[{key!r}]", ours[key], theirs[key])
    elif isinstance(theirs, str):
        assert ours == theirs, name
    else:
        assert ours is not None, f"{name}: torch's run kept numbers, ours not"
        np.testing.assert_allclose(ours, theirs, rtol=RTOL, atol=ATOL, err_msg=name)


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_program_runs_the_same_with_torch_and_yamlgrad(path: Path) -> None:
    pytest.importorskip("torch")
    expected_text, expected = run(path, as_yamlgrad=False)
    assert not re.search(r"\b(nan|inf)\b", expected_text), "the program diverges"
    text, got = run(path, as_yamlgrad=True)
    expected_words = NUMBER.sub("#", expected_text).replace("torch", "yamlgrad")
    assert NUMBER.sub("#", text) == expected_words, text
    numbers = [float(n) for n in NUMBER.findall(text)]
    expected_numbers = [float(n) for n in NUMBER.findall(expected_text)]
    np.testing.assert_allclose(numbers, expected_numbers, rtol=RTOL, atol=ATOL)
    for name, value in expected.items():
        if name.startswith("_") or _plain(value) is None:
            continue
        assert name in got, name
        _assert_same(name, _plain(got[name]), _plain(value))
