"""Numerics at the edges against torch: values and gradients at 0, at ties, with
inf and NaN (NaN-aware equality), and float16 reductions that accumulate in
float32 as PyTorch's do."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg

torch = pytest.importorskip("torch")

INF, NAN = np.inf, np.nan

CASES = [
    ("lib.log(x)", [[0.0, 1.0, -1.0, INF, NAN]]),
    ("lib.sqrt(x)", [[0.0, 4.0, -1.0, INF]]),
    ("x ** 2", [[0.0, -0.0, INF, NAN]]),
    ("x ** 0.5", [[0.0, 1.0]]),
    ("x ** 0", [[0.0, 2.0]]),
    ("x ** y", [[0.0, 0.0, 2.0], [0.0, 2.0, 0.5]]),
    ("x.abs()", [[0.0, -1.0, 1.0]]),
    ("lib.relu(x)", [[0.0, -1.0, 1.0]]),
    ("x.max()", [[1.0, 3.0, 3.0, 2.0]]),
    ("x.amax()", [[1.0, 3.0, 3.0, 2.0]]),
    ("x.amin(dim=1)", [[[1.0, 1.0, 2.0], [0.0, 5.0, 0.0]]]),
    ("x.max(dim=0).values", [[[1.0, 3.0], [1.0, 3.0]]]),
    ("x.min()", [[1.0, 1.0, 2.0]]),
    ("lib.maximum(x, y)", [[1.0, 2.0], [1.0, 3.0]]),
    ("lib.minimum(x, y)", [[1.0, NAN], [1.0, 3.0]]),
    ("x.clamp(0.0, 1.0)", [[0.0, 1.0, 0.5, 2.0]]),
    ("x.norm()", [[0.0, 0.0]]),
    ("x.sigmoid()", [[INF, -INF, 0.0]]),
    ("x.tanh()", [[INF, -INF]]),
    ("x.exp()", [[INF, -INF, NAN]]),
    ("x / y", [[1.0, 0.0, -1.0], [0.0, 0.0, 0.0]]),
    ("x.sum()", [[NAN, 1.0]]),
    ("x.mean()", [[INF, -INF]]),
    ("x.std()", [[1.0]]),
    ("x.var()", [[1.0, 1.0]]),
    ("x.softmax(0)", [[INF, 1.0]]),
    ("x.log_softmax(0)", [[-INF, 0.0]]),
    ("x.prod()", [[0.0, 2.0, 3.0]]),
    ("x.prod()", [[0.0, 0.0, 3.0]]),
    ("lib.nn.functional.hardshrink(x)", [[INF, -INF, -0.5, 0.5, 0.7, -0.2]]),
    ("lib.nn.functional.softshrink(x)", [[INF, -INF, -0.5, 0.5, 0.7, -0.2]]),
    ("lib.threshold(x, 0.5, -1.0)", [[NAN, INF, -INF, 0.5, 0.7, -0.2]]),
]


def run(lib: Any, expr: str, inputs: list, dtype: str) -> tuple:
    leaves = [lib.tensor(np.array(a, dtype=dtype), requires_grad=True) for a in inputs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = eval(expr, {"lib": lib, "x": leaves[0], "y": leaves[-1]})
        grads = lib.autograd.grad(out.sum(), leaves, allow_unused=True)
    return out.detach().numpy(), [None if g is None else g.numpy() for g in grads]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(
    "expr,inputs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_edge_values_and_gradients_match_torch(
    expr: str, inputs: list, dtype: str
) -> None:
    ours, theirs = run(yg, expr, inputs, dtype), run(torch, expr, inputs, dtype)
    np.testing.assert_array_equal(ours[0], theirs[0])  # NaN == NaN here
    for g, h in zip(ours[1], theirs[1]):
        assert (g is None) == (h is None)
        if g is not None:
            np.testing.assert_allclose(g, h, rtol=1e-6, atol=0, equal_nan=True)


F16_REDUCTIONS = [
    "x.sum()",
    "x.mean()",
    "x.var()",
    "x.std()",
    "x.norm()",
    "x.softmax(0)",
    "x.log_softmax(0)",
    "x.cumsum(0)",
    "x.prod()",
    "x.sum(dim=0)",
]


@pytest.mark.parametrize("expr", F16_REDUCTIONS)
def test_float16_reductions_accumulate_in_float32(expr: str) -> None:
    """10,000 values of 0.1 in float16: an accumulation in float16 stalls at 256."""
    x = np.full(10000, 0.1, dtype=np.float16)
    ours = eval(expr, {"x": yg.tensor(x)}).numpy()
    theirs = eval(expr, {"x": torch.tensor(x)}).numpy()
    assert ours.dtype == theirs.dtype == np.float16
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("expr", ["x.sum()", "x.mean()", "x.cumsum(0)", "x.cumprod(0)"])
def test_float16_random_reductions_match_torch(expr: str) -> None:
    x = np.random.default_rng(0).uniform(0.9, 1.1, 300).astype(np.float16)
    ours = eval(expr, {"x": yg.tensor(x)}).numpy()
    theirs = eval(expr, {"x": torch.tensor(x)}).numpy()
    np.testing.assert_allclose(
        ours.astype(np.float64), theirs.astype(np.float64), rtol=1e-3
    )


# -- found by the op fuzzer (fuzz/test_fuzz_ops.py) ------------------------------------


@pytest.mark.parametrize(
    "name",
    ["relu", "hardtanh", "hardswish", "hardsigmoid", "relu6", "trace", "max", "min"],
)
def test_an_inf_gradient_outside_the_active_region_gives_zero(name: str) -> None:
    """PyTorch's masked backward kernels select, they do not multiply by 0/1: an
    infinite (or nan) output gradient where the input is inactive gives 0, not nan."""
    grads = []
    for lib, F in ((yg, yg.nn.functional), (torch, torch.nn.functional)):
        x = lib.tensor([-4.0, -3.0, -0.5, 0.0, 3.0, 4.0, 7.0], requires_grad=True)
        if name == "trace":
            lib.trace(x.reshape(1, 7)).backward(lib.tensor(float("inf")))
        elif name in ("max", "min"):  # of the whole tensor: the extreme alone
            getattr(lib, name)(x).backward(lib.tensor(float("nan")))
        else:
            getattr(F, name)(x).backward(lib.tensor([float("inf")] * 7))
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


@pytest.mark.parametrize("size", [13, 20_007])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "call",
    [
        "F.hardswish(x)",
        "F.hardsigmoid(x)",
        "F.hardtanh(x)",
        "F.hardtanh(x, -0.5, 1.5)",
        "F.elu(x)",
        "F.selu(x)",
        "F.celu(x, 2.0)",
        "F.leaky_relu(x, 0.2)",
        "F.softplus(x)",
        "F.relu(x)",
        "F.hardshrink(x)",
        "F.softshrink(x, 1.0)",
        "F.threshold(x, 1.0, -2.0)",
    ],
)
def test_activation_gradients_at_nan_and_the_branch_edges(
    call: str, dtype: str, size: int
) -> None:
    """The value and the gradient at a nan input, at +-inf and at each branch's edge (-3 and
    3, the clamp bounds, 0) are what PyTorch's vectorised kernels give (its
    scalar loop, which takes only the few elements past the last full vector,
    may answer otherwise at nan). Both sizes take yamlgrad's small and large
    paths; torch runs on 20,000 elements, all in full vectors."""
    edges = [NAN, INF, -INF, -4.0, -3.0, -2.5, -1.0, -0.5, 0.0, 1.0, 1.5, 3.0, 4.0]
    values, grads = [], []
    for lib, F, n in (
        (yg, yg.nn.functional, size),
        (torch, torch.nn.functional, 20_000),
    ):
        x = lib.tensor(np.resize(np.array(edges, dtype=dtype), n), requires_grad=True)
        out = eval(call)  # noqa: S307
        out.backward(lib.ones_like(x))
        values.append(out.detach().numpy()[:13])
        grads.append(x.grad.numpy()[:13])
    np.testing.assert_allclose(values[0], values[1], rtol=1e-6, atol=0)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, atol=0)
