"""The overload a call binds to is remembered by the call's shape (argument types,
keyword names and types); lists and tuples, whose elements decide, are not. The
choice must be the same on the first call and every later one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.runtime.wrappers import binding

torch = pytest.importorskip("torch")

CALLS: list[tuple[str, Callable[[Any, Any, Any], Any]]] = [
    ("pow tensor-number", lambda lib, x, y: lib.pow(x, 2)),
    ("pow tensor-tensor", lambda lib, x, y: lib.pow(x, y)),
    ("pow number-tensor", lambda lib, x, y: lib.pow(2, y)),
    ("sum", lambda lib, x, y: x.sum()),
    ("sum dim", lambda lib, x, y: x.sum(1)),
    ("sum dim keyword", lambda lib, x, y: x.sum(dim=1, keepdim=True)),
    ("sum dim list", lambda lib, x, y: x.sum([0, 1])),
    ("div number", lambda lib, x, y: x / 4),
    ("div tensor", lambda lib, x, y: x / y),
    ("div mode", lambda lib, x, y: lib.div(x, y, rounding_mode="floor")),
    ("view ints", lambda lib, x, y: x.view(3, 2)),
    ("view tuple", lambda lib, x, y: x.view((6,))),
    ("rsub number", lambda lib, x, y: lib.rsub(x, 2)),
    ("rsub tensor", lambda lib, x, y: lib.rsub(x, y)),
]


def _run(lib: Any, call: Callable[[Any, Any, Any], Any]) -> tuple[str, np.ndarray]:
    x = lib.tensor(np.arange(1.0, 7.0).reshape(2, 3), requires_grad=True)
    y = lib.tensor(np.full((2, 3), 1.5), requires_grad=True)
    out = call(lib, x, y)
    name = type(out.grad_fn).__name__ if lib is yg else out.grad_fn.name()
    return name, out.detach().numpy()


def test_every_call_binds_alike_before_and_after_it_is_remembered() -> None:
    binding._CHOSEN.clear()
    for round_ in range(3):  # first calls fill the memory; later ones read it
        for label, call in CALLS:
            ours, theirs = _run(yg, call), _run(torch, call)
            assert ours[0] == theirs[0], (round_, label)
            np.testing.assert_allclose(ours[1], theirs[1], err_msg=label)
    assert binding._CHOSEN, "nothing was remembered"
    assert not any(tuple in key or list in key for key in binding._CHOSEN)
