"""Logic, bit and floor-division operators against torch, on chosen values.

The YAML-driven tests in test_torch_parity.py cover every entry on random samples;
these pin the operator spellings (`&`, `|`, `^`, `~`, `//`, reflected forms) and
the special values random samples never hit (nan, inf, negative quotients).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from support import dtype_name


def _operands(lib: Any) -> dict[str, Any]:
    return {
        "b": lib.tensor([True, False, True, False]),
        "c": lib.tensor([True, True, False, False]),
        "i": lib.tensor([-7, 5, 6, 0]),
        "j": lib.tensor([2, -3, 4, 5]),
        "f": lib.tensor([-7.5, 5.0, float("nan"), float("inf")], dtype=lib.float64),
        "g": lib.tensor([2.0, -3.0, 4.0, float("-inf")], dtype=lib.float64),
    }


EXPRESSIONS: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
    ("b & c", lambda o: o["b"] & o["c"]),
    ("b | c", lambda o: o["b"] | o["c"]),
    ("b ^ c", lambda o: o["b"] ^ o["c"]),
    ("~b", lambda o: ~o["b"]),
    ("b & True", lambda o: o["b"] & True),
    ("True | b", lambda o: True | o["b"]),
    ("False ^ b", lambda o: False ^ o["b"]),
    ("i & j", lambda o: o["i"] & o["j"]),
    ("i | 3", lambda o: o["i"] | 3),
    ("6 ^ i", lambda o: 6 ^ o["i"]),
    ("~i", lambda o: ~o["i"]),
    ("i // j", lambda o: o["i"] // o["j"]),
    ("i // 2", lambda o: o["i"] // 2),
    ("f // g", lambda o: o["f"] // o["g"]),
    ("f // 2", lambda o: o["f"] // 2),
    ("f // 0.0", lambda o: o["f"] // 0.0),
    ("7 // j", lambda o: 7 // o["j"]),
    ("7.5 // j", lambda o: 7.5 // o["j"]),
    ("i // 2.5", lambda o: o["i"] // 2.5),
    ("isnan(f)", lambda o: o["f"].isnan()),
    ("isinf(f)", lambda o: o["f"].isinf()),
    ("isfinite(f)", lambda o: o["f"].isfinite()),
    ("isnan(i)", lambda o: o["i"].isnan()),
    ("logical_and(f, i)", lambda o: o["f"].logical_and(o["i"])),
    ("logical_or(i, c)", lambda o: o["i"].logical_or(o["c"])),
    ("logical_xor(b, g)", lambda o: o["b"].logical_xor(o["g"])),
    ("logical_not(i)", lambda o: o["i"].logical_not()),
    ("f == 5", lambda o: o["f"] == 5),
    ("i < 0.5", lambda o: o["i"] < 0.5),
    ("i >= 5", lambda o: o["i"] >= 5),
    ("eq(i, 5)", lambda o: o["i"].eq(5)),
    ("ne(f, nan)", lambda o: o["f"].ne(float("nan"))),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's x // 0.0
@pytest.mark.parametrize("expression", [pytest.param(e, id=i) for i, e in EXPRESSIONS])
def test_logic_expression_matches_torch(
    expression: Callable[[dict[str, Any]], Any],
) -> None:
    torch = pytest.importorskip("torch")
    out, ref = expression(_operands(yg)), expression(_operands(torch))
    assert dtype_name(out.dtype) == dtype_name(ref.dtype)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())
    assert out.grad_fn is None and not out.requires_grad


def test_logic_results_never_require_grad() -> None:
    x = yg.tensor([1.0, float("nan")], requires_grad=True)
    for out in (x.isnan(), x.isinf(), x.isfinite(), x.logical_not(), x == 1):
        assert out.grad_fn is None and not out.requires_grad and out.is_leaf


def test_invert_of_a_float_tensor_raises_torchs_error() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError) as theirs:
        ~torch.ones(2)
    with pytest.raises(TypeError) as ours:
        ~yg.ones(2)
    assert str(ours.value) == str(theirs.value)


def test_floor_divide_has_no_history_where_torch_records_not_implemented() -> None:
    """Pinned difference: torch's `x // 2` requires grad (a NotImplemented node that
    raises on backward); yamlgrad's has no grad_fn and does not require grad."""
    torch = pytest.importorskip("torch")
    ref = torch.ones(2, requires_grad=True) // 2
    assert type(ref.grad_fn).__name__ == "NotImplemented" and ref.requires_grad
    out = yg.ones(2, requires_grad=True) // 2
    assert out.grad_fn is None and not out.requires_grad
