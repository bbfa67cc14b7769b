"""Element-wise ops at the values random samples never hit, against PyTorch.

The YAML-driven tests draw inputs from each entry's `domain`, away from ties, bounds,
zeros, NaN and infinities. PyTorch's formulas make definite choices there (ties
split the gradient of maximum in half, a value at a clamp bound passes it, xlogy's
gradient is 0 where x is 0, ...), so each case here pins one such choice: same
values, same node name, same gradient for a fixed cotangent.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from support import call_outcome, counting_input

NAN, INF = float("nan"), float("inf")

# (id, expression over the library and its leaves, the leaves' values). Every leaf
# requires grad; the expression's node name and every gradient are compared.
Case = tuple[str, Callable[..., Any], list[list[float]]]

CASES: list[Case] = [
    # Ties: maximum and minimum split the gradient, fmax and fmin give it to self.
    (
        "maximum ties",
        lambda lib, x, y: lib.maximum(x, y),
        [[1.0, 2.0, 3.0, -1.0], [1.0, 1.5, 3.0, 0.0]],
    ),
    (
        "minimum ties",
        lambda lib, x, y: lib.minimum(x, y),
        [[1.0, 2.0, 3.0, -1.0], [1.0, 1.5, 3.0, 0.0]],
    ),
    (
        "fmax ties",
        lambda lib, x, y: lib.fmax(x, y),
        [[1.0, 2.0, -1.0], [1.0, 1.5, 0.0]],
    ),
    (
        "fmin ties",
        lambda lib, x, y: lib.fmin(x, y),
        [[1.0, 2.0, -1.0], [1.0, 1.5, 0.0]],
    ),
    # NaN: maximum propagates it (both inputs get the gradient); fmax ignores it.
    (
        "maximum nan",
        lambda lib, x, y: lib.maximum(x, y),
        [[NAN, 1.0, NAN], [0.5, NAN, NAN]],
    ),
    ("fmax nan", lambda lib, x, y: lib.fmax(x, y), [[NAN, 1.0, NAN], [0.5, NAN, NAN]]),
    ("fmin nan", lambda lib, x, y: lib.fmin(x, y), [[NAN, 1.0, NAN], [0.5, NAN, NAN]]),
    # Clamp: a value at a bound passes the gradient; crossed bounds give `max`.
    (
        "clamp at bounds",
        lambda lib, x: lib.clamp(x, -0.5, 0.5),
        [[-0.5, 0.5, 0.0, -1.0, 1.0]],
    ),
    ("clamp min only", lambda lib, x: lib.clamp(x, min=0.0), [[-1.0, 0.0, 1.0]]),
    ("clamp crossed", lambda lib, x: lib.clamp(x, 1.0, -1.0), [[-2.0, 0.0, 2.0]]),
    (
        "clamp tensor bounds at ties",
        lambda lib, x, lo, hi: lib.clamp(x, lo, hi),
        [[-1.0, 0.0, 1.0, 2.0], [-1.0, -1.0, 0.0, 3.0], [1.0, 1.0, 1.0, 2.0]],
    ),
    (
        "clamp tensor bounds crossed",
        lambda lib, x, lo, hi: lib.clamp(x, lo, hi),
        [[-2.0, 0.0, 2.0], [1.0, 1.0, 1.0], [-1.0, -1.0, -1.0]],
    ),
    (
        "clamp_min tensor tie",
        lambda lib, x, lo: lib.clamp_min(x, lo),
        [[0.0, -1.0, 1.0], [0.0, 0.0, 0.0]],
    ),
    (
        "clamp_max tensor tie",
        lambda lib, x, hi: lib.clamp_max(x, hi),
        [[0.0, -1.0, 1.0], [0.0, 0.0, 0.0]],
    ),
    # Non-finite values.
    ("nan_to_num", lambda lib, x: lib.nan_to_num(x), [[NAN, INF, -INF, 1.5]]),
    (
        "nan_to_num values",
        lambda lib, x: lib.nan_to_num(x, nan=0.5, posinf=2.0, neginf=-2.0),
        [[NAN, INF, -INF, 1.5]],
    ),
    # Zeros: xlogy's and copysign's gradients are defined there.
    (
        "xlogy at zero",
        lambda lib, x, y: lib.xlogy(x, y),
        [[0.0, 0.0, 0.0, 2.0], [0.0, 2.0, -1.0, 0.5]],
    ),
    ("xlogy scalar other", lambda lib, x: lib.xlogy(x, 0.0), [[0.0, 1.0]]),
    (
        "copysign at zero",
        lambda lib, x, y: lib.copysign(x, y),
        [[0.0, -1.5, 2.0], [-1.0, 1.0, -3.0]],
    ),
    # logit outside [eps, 1 - eps], at its ends, and outside [0, 1] without eps.
    (
        "logit eps",
        lambda lib, x: lib.logit(x, 0.25),
        [[0.1, 0.25, 0.5, 0.75, 0.9]],
    ),
    ("logit outside", lambda lib, x: lib.logit(x), [[-0.5, 0.5, 1.5]]),
    ("logit of nothing", lambda lib, x: lib.logit(x, 0.25), [[]]),
    # Rounding: half to even, negative decimals, and PyTorch's frac gradient.
    ("round half", lambda lib, x: lib.round(x), [[0.5, 1.5, 2.5, -0.5, -2.5]]),
    (
        "round decimals",
        lambda lib, x: lib.round(x, decimals=-1),
        [[14.0, 15.0, 25.0, -26.0]],
    ),
    ("frac", lambda lib, x: lib.frac(x), [[-1.5, -0.25, 0.0, 2.75]]),
    # Signs of remainder and fmod, and their gradients w.r.t. the divisor.
    (
        "remainder signs",
        lambda lib, x, y: lib.remainder(x, y),
        [[5.5, -5.5, 5.5, -5.5], [2.0, 2.0, -2.0, -2.0]],
    ),
    (
        "fmod signs",
        lambda lib, x, y: lib.fmod(x, y),
        [[5.5, -5.5, 5.5, -5.5], [2.0, 2.0, -2.0, -2.0]],
    ),
    (
        "div floor negative",
        lambda lib, x, y: lib.div(x, y, rounding_mode="floor"),
        [[5.5, -5.5, 0.0], [2.0, 2.0, -2.0]],
    ),
    (
        "div trunc negative",
        lambda lib, x, y: lib.div(x, y, rounding_mode="trunc"),
        [[5.5, -5.5, 0.0], [2.0, 2.0, -2.0]],
    ),
    # The error function far into its tails, where erfc must not cancel.
    (
        "erf tails",
        lambda lib, x: lib.erf(x),
        [[-6.0, -3.0, -1e-8, 0.0, 1e-8, 0.5, 3.0, 6.0]],
    ),
    ("erfc tails", lambda lib, x: lib.erfc(x), [[-6.0, -1.0, 0.0, 1.0, 5.0, 20.0]]),
    # Python operators.
    ("x % 1.5", lambda lib, x: x % 1.5, [[-2.0, -0.5, 0.5, 2.0]]),
    ("x % y", lambda lib, x, y: x % y, [[-2.0, 2.5], [0.75, -1.5]]),
    ("true_divide number", lambda lib, x: lib.true_divide(x, 4.0), [[1.0, -2.0]]),
    ("square", lambda lib, x: lib.square(x), [[1.0, -2.0, 0.0]]),
]


def _leaves(lib: ModuleType, values: list[list[float]]) -> list[Any]:
    return [lib.tensor(np.array(v), requires_grad=True) for v in values]


def _grads(lib: ModuleType, case: Case) -> tuple[Any, str, list[np.ndarray | None]]:
    _, expression, values = case
    leaves = _leaves(lib, values)
    out = expression(lib, *leaves)
    cotangent = np.linspace(-1.0, 2.0, out.numel())
    out.backward(lib.tensor(cotangent.reshape(tuple(out.shape))))
    grads = [None if x.grad is None else x.grad.detach().numpy() for x in leaves]
    return out.detach().numpy(), type(out.grad_fn).__name__, grads


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's log(0), inf - inf
@pytest.mark.parametrize("case", [pytest.param(c, id=c[0]) for c in CASES])
def test_edge_values_match_torch(case: Case) -> None:
    torch = pytest.importorskip("torch")
    out, name, grads = _grads(yg, case)
    ref, ref_name, ref_grads = _grads(torch, case)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=0)
    assert name == ref_name
    for got, want in zip(grads, ref_grads):
        assert (got is None) == (want is None)
        if want is not None:
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_erf_keeps_float32(name: str) -> None:
    torch = pytest.importorskip("torch")
    values = np.linspace(-4.0, 4.0, 33, dtype=np.float32)
    out = getattr(yg, name)(yg.tensor(values))
    ref = getattr(torch, name)(torch.tensor(values))
    assert out.dtype == yg.float32
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-6, atol=1e-7)


def test_reflected_remainder_has_a_gradient() -> None:
    """`2 % x`: PyTorch records NotImplemented (remainder.Scalar_Tensor has no
    derivative); yamlgrad wraps the number into remainder.Tensor."""
    torch = pytest.importorskip("torch")
    values = np.array([0.75, -1.5, 3.0])
    x = yg.tensor(values, requires_grad=True)
    out = 2 % x
    ref = 2 % torch.tensor(values)
    np.testing.assert_allclose(out.detach().numpy(), ref.numpy(), rtol=1e-12)
    assert type(out.grad_fn).__name__ == "RemainderBackward1"
    out.backward(yg.ones_like(out, dtype=yg.float64))
    np.testing.assert_allclose(x.grad.numpy(), -np.floor(2 / values))


def test_clamp_without_bounds_raises_like_torch() -> None:
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        yg.clamp(yg.ones(2))


def test_div_with_an_unknown_rounding_mode_raises_like_torch() -> None:
    message = "div expected rounding_mode to be one of None, 'trunc', or 'floor'"
    with pytest.raises(RuntimeError, match=message):
        yg.div(yg.ones(2), yg.ones(2), rounding_mode="round")


# -- found by the op fuzzer (fuzz/test_fuzz_ops.py) ------------------------------------

# Each call, run in yamlgrad and in torch: the same shapes, values and grad_fn
# names, or the same error text.
FUZZ_ELEMENTWISE_CALLS: dict[str, Callable[[Any], Any]] = {
    "lerp of float32 with a Scalar weight": lambda lib: lib.lerp(
        counting_input(lib, 4, 3).float(), counting_input(lib, 4, 3).float() * 2, 0.3
    ),
    "lerp of float32 with a large Scalar weight": lambda lib: lib.lerp(
        counting_input(lib, 4, 3).float(), counting_input(lib, 4, 3).float() * 2, 0.75
    ),
}


@pytest.mark.parametrize("name", sorted(FUZZ_ELEMENTWISE_CALLS))
def test_elementwise_call_answers_as_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    assert call_outcome(FUZZ_ELEMENTWISE_CALLS[name], yg) == call_outcome(
        FUZZ_ELEMENTWISE_CALLS[name], torch
    )
