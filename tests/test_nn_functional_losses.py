"""yg.nn.functional's activations, softmax, distances and losses against
torch.nn.functional: the Python surface the YAML-driven tests cannot see
(`inplace=`, implicit softmax dims, reduction strings, weight, ignore_index,
label_smoothing, probability targets, K-dimensional inputs, error messages).

Each case is one call written once for both libraries (`F` is either
functional module, `lib` yamlgrad or torch) on float64 leaves that share their
values bit for bit; values, gradients, the recorded node names and the double
backward are compared with torch's.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
import yamlgrad.nn.functional as YF

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RTOL = 1e-10
ATOL = 1e-12


class Case:
    """F.<something> of float leaves with the given shapes (values drawn in
    `low`..`high`, away from kinks where `avoid` says so)."""

    def __init__(
        self,
        id: str,
        shapes: list[tuple[int, ...]],
        call: Callable[..., Any],
        low: float = -2.0,
        high: float = 2.0,
        double: bool = True,
    ) -> None:
        self.id = id
        self.shapes = shapes
        self.call = call
        self.low = low
        self.high = high
        self.double = double

    def arrays(self, seed: int) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        out = []
        for shape in self.shapes:
            values = rng.uniform(self.low, self.high, shape)
            # Away from 0 and the integers, where activations and losses bend.
            values = np.where(np.abs(values - np.round(values)) < 0.05, 0.3, values)
            out.append(values)
        return out


def _run(case: Case, lib: Any, F: Any, arrays: list[np.ndarray]) -> tuple:
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    # In-place calls need a non-leaf: every case works on a copy of its leaves.
    inputs = [x * 1 for x in leaves]
    return leaves, case.call(F, lib, *inputs)


def _node_chain(out: Any, depth: int = 4) -> list[str]:
    """The first node names down the first differentiable edge."""
    names = []
    node = out.grad_fn
    while node is not None and len(names) < depth:
        names.append(type(node).__name__)
        nexts = [
            n
            for n, _ in node.next_functions
            if n is not None and type(n).__name__ != "AccumulateGrad"
        ]
        node = nexts[0] if nexts else None
    return names


def check_against_torch(case: Case, seed: int = 0) -> None:
    arrays = case.arrays(seed)
    xs, ours = _run(case, yg, YF, arrays)
    ts, theirs = _run(case, torch, TF, arrays)
    got, want = ours.detach().numpy(), theirs.detach().numpy()
    assert got.shape == want.shape
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    assert _node_chain(ours) == _node_chain(theirs)
    rng = np.random.default_rng(seed + 1)
    cotangent = rng.standard_normal(want.shape)
    first = yg.autograd.grad(ours, xs, yg.tensor(cotangent), create_graph=True)
    first_ref = torch.autograd.grad(
        theirs, ts, torch.tensor(cotangent), create_graph=True
    )
    for g, r in zip(first, first_ref):
        np.testing.assert_allclose(
            g.detach().numpy(), r.detach().numpy(), rtol=RTOL, atol=ATOL
        )
    if not case.double:
        return
    directions = [rng.standard_normal(x.shape) for x in arrays]
    total = sum((g * yg.tensor(d)).sum() for g, d in zip(first, directions))
    total_ref = sum((g * torch.tensor(d)).sum() for g, d in zip(first_ref, directions))
    if not total_ref.requires_grad:  # a gradient that does not depend on the input
        assert not total.requires_grad
        return
    second_ref = torch.autograd.grad(total_ref, ts, allow_unused=True)
    if not total.requires_grad:  # piecewise linear: PyTorch records zeros
        assert all(r is None or not r.any() for r in second_ref)
        return
    second = yg.autograd.grad(total, xs, allow_unused=True)
    for g, r in zip(second, second_ref):
        if r is None:
            assert g is None or not np.any(g.numpy())
            continue
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-9, atol=1e-11)


# -- activations and softmax -------------------------------------------------------

ACTIVATIONS = [
    Case("relu", [(3, 4)], lambda F, lib, x: F.relu(x)),
    Case("relu_inplace", [(3, 4)], lambda F, lib, x: F.relu(x, inplace=True)),
    Case("relu6", [(3, 4)], lambda F, lib, x: F.relu6(x * 4)),
    Case("relu6_inplace", [(3, 4)], lambda F, lib, x: F.relu6(x * 4, True)),
    Case("hardtanh", [(3, 4)], lambda F, lib, x: F.hardtanh(x, -0.5, 1.5)),
    Case("hardtanh_inplace", [(3, 4)], lambda F, lib, x: F.hardtanh(x, inplace=True)),
    Case("gelu", [(3, 4)], lambda F, lib, x: F.gelu(x)),
    Case("gelu_tanh", [(3, 4)], lambda F, lib, x: F.gelu(x, approximate="tanh")),
    Case("silu", [(3, 4)], lambda F, lib, x: F.silu(x)),
    Case("silu_inplace", [(3, 4)], lambda F, lib, x: F.silu(x, inplace=True)),
    Case("mish", [(3, 4)], lambda F, lib, x: F.mish(x)),
    Case("mish_inplace", [(3, 4)], lambda F, lib, x: F.mish(x, inplace=True)),
    Case("softplus", [(3, 4)], lambda F, lib, x: F.softplus(x)),
    Case("softplus_beta", [(3, 4)], lambda F, lib, x: F.softplus(x, 2.0, 1.5)),
    Case("elu", [(3, 4)], lambda F, lib, x: F.elu(x, 0.7)),
    Case("elu_inplace", [(3, 4)], lambda F, lib, x: F.elu(x, 0.7, inplace=True)),
    Case("selu", [(3, 4)], lambda F, lib, x: F.selu(x)),
    Case("selu_inplace", [(3, 4)], lambda F, lib, x: F.selu(x, inplace=True)),
    Case("celu", [(3, 4)], lambda F, lib, x: F.celu(x, 1.5)),
    Case("celu_inplace", [(3, 4)], lambda F, lib, x: F.celu(x, 1.5, True)),
    Case("leaky_relu", [(3, 4)], lambda F, lib, x: F.leaky_relu(x, 0.2)),
    Case(
        "leaky_relu_inplace",
        [(3, 4)],
        lambda F, lib, x: F.leaky_relu(x, 0.2, inplace=True),
    ),
    Case("hardswish", [(3, 4)], lambda F, lib, x: F.hardswish(x * 2)),
    Case("hardswish_inplace", [(3, 4)], lambda F, lib, x: F.hardswish(x * 2, True)),
    Case("hardsigmoid", [(3, 4)], lambda F, lib, x: F.hardsigmoid(x * 2), double=False),
    Case(
        "hardsigmoid_inplace",
        [(3, 4)],
        lambda F, lib, x: F.hardsigmoid(x * 2, inplace=True),
        double=False,
    ),
    Case("logsigmoid", [(3, 4)], lambda F, lib, x: F.logsigmoid(x)),
    Case("sigmoid", [(3, 4)], lambda F, lib, x: F.sigmoid(x)),
    Case("tanh", [(3, 4)], lambda F, lib, x: F.tanh(x)),
    Case("softmax", [(2, 3, 4)], lambda F, lib, x: F.softmax(x, dim=-1)),
    Case("log_softmax", [(2, 3, 4)], lambda F, lib, x: F.log_softmax(x, 1)),
    Case(
        "softmax_dtype",
        [(3, 4)],
        lambda F, lib, x: F.softmax(x, 1, dtype=lib.float64),
    ),
    Case(
        "log_softmax_dtype",
        [(3, 4)],
        lambda F, lib, x: F.log_softmax(x, 0, dtype=lib.float64),
    ),
]


@pytest.mark.parametrize("case", ACTIVATIONS, ids=lambda c: c.id)
def test_activation_matches_torch(case: Case) -> None:
    check_against_torch(case)


@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 3, 4), (2, 3, 4, 5)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_implicit_dim_warns_and_picks_torchs_dim(
    shape: tuple[int, ...], name: str
) -> None:
    x = np.random.default_rng(0).standard_normal(shape)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        got = getattr(YF, name)(yg.tensor(x))
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        want = getattr(TF, name)(torch.tensor(x))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=RTOL, atol=ATOL)
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    assert [w.category for w in ours] == [w.category for w in theirs]


def test_softmax_dtype_casts_the_input_first() -> None:
    x = np.random.default_rng(0).standard_normal((3, 4))
    got = YF.softmax(yg.tensor(x, requires_grad=True), 1, dtype=yg.float32)
    want = TF.softmax(torch.tensor(x, requires_grad=True), 1, dtype=torch.float32)
    assert got.dtype == yg.float32 and want.dtype == torch.float32
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)
    assert _node_chain(got) == _node_chain(want) == [
        "SoftmaxBackward0",
        "ToCopyBackward0",
    ]


def test_gelu_rejects_an_unknown_approximation_as_torch() -> None:
    x = np.zeros(3)
    with pytest.raises(RuntimeError) as theirs:
        TF.gelu(torch.tensor(x), approximate="exact")
    with pytest.raises(RuntimeError) as ours:
        YF.gelu(yg.tensor(x), approximate="exact")
    assert str(ours.value) == str(theirs.value)


def test_inplace_activation_changes_its_input_and_bumps_the_version() -> None:
    for F, lib in ((YF, yg), (TF, torch)):
        x = lib.tensor([-1.0, 0.5, 2.0], requires_grad=True)
        y = x * 1
        before = y._version
        out = F.leaky_relu(y, 0.1, inplace=True)
        assert out is y and y._version == before + 1
        np.testing.assert_allclose(y.detach().numpy(), [-0.1, 0.5, 2.0])
