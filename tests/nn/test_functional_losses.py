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
from support import aten_namespace, call_outcome, counting_input

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
        renamed: tuple[str, str] | None = None,
    ) -> None:
        self.id = id
        self.renamed = renamed
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


def _np(t: Any) -> np.ndarray:
    """A torch gradient as an array (a ZeroTensor for the second derivative of abs)."""
    return t.detach().numpy(force=True)


def check_against_torch(case: Case, seed: int = 0) -> None:
    arrays = case.arrays(seed)
    xs, ours = _run(case, yg, YF, arrays)
    ts, theirs = _run(case, torch, TF, arrays)
    got, want = ours.detach().numpy(), theirs.detach().numpy()
    assert got.shape == want.shape
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    names = _node_chain(ours)
    if case.renamed is not None:  # a pinned difference: (ours, PyTorch's) first node
        assert names[0] == case.renamed[0]
        names[0] = case.renamed[1]
    assert names == _node_chain(theirs)
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
        assert all(r is None or not _np(r).any() for r in second_ref)
        return
    second = yg.autograd.grad(total, xs, allow_unused=True)
    for g, r in zip(second, second_ref):
        if r is None:
            assert g is None or not np.any(g.numpy())
            continue
        np.testing.assert_allclose(g.numpy(), _np(r), rtol=1e-9, atol=1e-11)


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
    Case("softsign", [(3, 4)], lambda F, lib, x: F.softsign(x)),
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
    assert (
        _node_chain(got)
        == _node_chain(want)
        == [
            "SoftmaxBackward0",
            "ToCopyBackward0",
        ]
    )


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


# -- losses --------------------------------------------------------------------------


def _probabilities(lib: Any, shape: tuple[int, ...], seed: int = 5) -> Any:
    return lib.tensor(np.random.default_rng(seed).uniform(0.05, 0.95, shape))


def _classes(lib: Any, values: Any) -> Any:
    return lib.tensor(np.asarray(values, dtype=np.int64))


def _class_probabilities(lib: Any, shape: tuple[int, ...], dim: int = 1) -> Any:
    raw = np.random.default_rng(7).uniform(0.1, 1.0, shape)
    return lib.tensor(raw / raw.sum(axis=dim, keepdims=True))


def _weights(lib: Any, n: int) -> Any:
    return lib.tensor(np.linspace(0.5, 2.0, n))


TARGETS_2D = [0, 3, 1, 3, 2]  # for inputs [5, 4]
TARGETS_3D = [[0, 2, 1], [2, 2, 0]]  # for inputs [2, 3, 3]
TARGETS_4D = [[[0, 2], [1, 1]], [[2, 0], [0, 1]]]  # for inputs [2, 3, 2, 2]
TARGETS_5D = [[[[0, 2], [1, 1]]], [[[2, 0], [0, 1]]]]  # for inputs [2, 3, 1, 2, 2]

LOSSES = []
for reduction in ("mean", "sum", "none"):
    r = reduction
    LOSSES += [
        Case(
            f"mse_{r}",
            [(3, 4), (3, 4)],
            lambda F, lib, x, t, r=r: F.mse_loss(x, t, reduction=r),
        ),
        Case(
            f"l1_{r}",
            [(3, 4), (3, 4)],
            lambda F, lib, x, t, r=r: F.l1_loss(x, t, reduction=r),
        ),
        Case(
            f"mse_weighted_{r}",
            [(3, 4), (3, 4)],
            lambda F, lib, x, t, r=r: F.mse_loss(
                x, t, reduction=r, weight=_probabilities(lib, (3, 4))
            ),
        ),
        Case(
            f"l1_weighted_{r}",
            [(3, 4), (3, 4)],
            lambda F, lib, x, t, r=r: F.l1_loss(
                x, t, reduction=r, weight=_probabilities(lib, (3, 4))
            ),
        ),
        Case(
            f"smooth_l1_{r}",
            [(3, 4), (3, 4)],
            lambda F, lib, x, t, r=r: F.smooth_l1_loss(
                x, t * 0.1, reduction=r, beta=0.5
            ),
        ),
        Case(
            f"smooth_l1_beta0_{r}",
            [(3, 4), (3, 4)],
            lambda F, lib, x, t, r=r: F.smooth_l1_loss(
                x, t * 0.1, reduction=r, beta=0.0
            ),
        ),
        Case(
            f"huber_{r}",
            [(3, 4), (3, 4)],
            lambda F, lib, x, t, r=r: F.huber_loss(x, t * 0.1, reduction=r, delta=0.7),
        ),
        Case(
            f"huber_weighted_{r}",
            [(3, 4), (3, 4)],
            lambda F, lib, x, t, r=r: F.huber_loss(
                x, t * 0.1, r, 0.7, _probabilities(lib, (3, 4))
            ),
        ),
        Case(
            f"bce_{r}",
            [(3, 4)],
            lambda F, lib, x, r=r: F.binary_cross_entropy(
                F.sigmoid(x), _probabilities(lib, (3, 4)), reduction=r
            ),
        ),
        Case(
            f"bce_weight_{r}",
            [(3, 4), (3, 4)],
            lambda F, lib, x, t, r=r: F.binary_cross_entropy(
                F.sigmoid(x), F.sigmoid(t), _weights(lib, 4), reduction=r
            ),
        ),
        Case(
            f"bce_logits_{r}",
            [(3, 4), (3, 4)],
            lambda F, lib, x, t, r=r: F.binary_cross_entropy_with_logits(
                x, F.sigmoid(t), reduction=r
            ),
        ),
        Case(
            f"bce_logits_weights_{r}",
            [(3, 4), (3, 4)],
            lambda F, lib, x, t, r=r: F.binary_cross_entropy_with_logits(
                x,
                F.sigmoid(t),
                _weights(lib, 4),
                reduction=r,
                pos_weight=_weights(lib, 4) * 2,
            ),
        ),
        Case(
            f"nll_{r}",
            [(5, 4)],
            lambda F, lib, x, r=r: F.nll_loss(
                x, _classes(lib, TARGETS_2D), reduction=r
            ),
        ),
        Case(
            f"nll_weight_ignore_{r}",
            [(5, 4)],
            lambda F, lib, x, r=r: F.nll_loss(
                x,
                _classes(lib, TARGETS_2D),
                _weights(lib, 4),
                ignore_index=3,
                reduction=r,
            ),
        ),
        Case(
            f"nll_1d_{r}",
            [(4,)],
            lambda F, lib, x, r=r: F.nll_loss(x, _classes(lib, 2), reduction=r),
        ),
        Case(
            f"nll_3d_{r}",
            [(2, 3, 3)],
            lambda F, lib, x, r=r: F.nll_loss(
                x, _classes(lib, TARGETS_3D), reduction=r
            ),
        ),
        Case(
            f"nll_4d_{r}",
            [(2, 3, 2, 2)],
            lambda F, lib, x, r=r: F.nll_loss(
                x, _classes(lib, TARGETS_4D), _weights(lib, 3), reduction=r
            ),
        ),
        Case(
            f"nll_5d_{r}",
            [(2, 3, 1, 2, 2)],
            lambda F, lib, x, r=r: F.nll_loss(
                x, _classes(lib, TARGETS_5D), ignore_index=0, reduction=r
            ),
        ),
        Case(
            f"cross_entropy_{r}",
            [(5, 4)],
            lambda F, lib, x, r=r: F.cross_entropy(
                x, _classes(lib, TARGETS_2D), reduction=r
            ),
        ),
        Case(
            f"cross_entropy_weight_ignore_{r}",
            [(5, 4)],
            lambda F, lib, x, r=r: F.cross_entropy(
                x,
                _classes(lib, TARGETS_2D),
                _weights(lib, 4),
                ignore_index=1,
                reduction=r,
            ),
        ),
        Case(
            f"cross_entropy_1d_{r}",
            [(4,)],
            lambda F, lib, x, r=r: F.cross_entropy(x, _classes(lib, 3), reduction=r),
        ),
        Case(
            f"cross_entropy_3d_{r}",
            [(2, 3, 3)],
            lambda F, lib, x, r=r: F.cross_entropy(
                x, _classes(lib, TARGETS_3D), reduction=r
            ),
        ),
        Case(
            f"cross_entropy_4d_{r}",
            [(2, 3, 2, 2)],
            lambda F, lib, x, r=r: F.cross_entropy(
                x, _classes(lib, TARGETS_4D), _weights(lib, 3), reduction=r
            ),
        ),
        Case(
            f"cross_entropy_smoothing_{r}",
            [(5, 4)],
            lambda F, lib, x, r=r: F.cross_entropy(
                x, _classes(lib, TARGETS_2D), reduction=r, label_smoothing=0.2
            ),
        ),
        Case(
            f"cross_entropy_smoothing_weight_ignore_{r}",
            [(2, 3, 3)],
            lambda F, lib, x, r=r: F.cross_entropy(
                x,
                _classes(lib, TARGETS_3D),
                _weights(lib, 3),
                ignore_index=2,
                reduction=r,
                label_smoothing=0.3,
            ),
        ),
        Case(
            f"cross_entropy_probabilities_{r}",
            [(5, 4)],
            lambda F, lib, x, r=r: F.cross_entropy(
                x, _class_probabilities(lib, (5, 4)), reduction=r
            ),
        ),
        Case(
            f"cross_entropy_probabilities_weight_smoothing_{r}",
            [(2, 3, 2)],
            lambda F, lib, x, r=r: F.cross_entropy(
                x,
                _class_probabilities(lib, (2, 3, 2)),
                _weights(lib, 3),
                reduction=r,
                label_smoothing=0.1,
            ),
        ),
    ]


@pytest.mark.parametrize("case", LOSSES, ids=lambda c: c.id)
def test_loss_matches_torch(case: Case) -> None:
    check_against_torch(case)


def test_loss_targets_get_gradients_as_in_torch() -> None:
    """Float targets are differentiable in PyTorch's mse/huber/bce losses too."""
    cases = [
        Case("mse", [(3, 4), (3, 4)], lambda F, lib, x, t: F.mse_loss(x, t)),
        Case("huber", [(3, 4), (3, 4)], lambda F, lib, x, t: F.huber_loss(x, t * 0.1)),
        Case(
            "bce",
            [(3, 4), (3, 4)],
            lambda F, lib, x, t: F.binary_cross_entropy(F.sigmoid(x), F.sigmoid(t)),
        ),
        Case(
            "bce_logits",
            [(3, 4), (3, 4)],
            lambda F, lib, x, t: F.binary_cross_entropy_with_logits(
                x, F.sigmoid(t), pos_weight=_weights(lib, 4)
            ),
        ),
    ]
    for case in cases:
        check_against_torch(case, seed=3)


def _same_error(call: Callable[[Any, Any], Any]) -> None:
    """Both libraries raise the same exception type with the same text (sizes
    print as torch.Size and yamlgrad.Size)."""
    with pytest.raises(Exception) as theirs:
        call(TF, torch)
    with pytest.raises(Exception) as ours:
        call(YF, yg)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value).replace("torch.Size", "yamlgrad.Size")


ERRORS = {
    "bad_reduction": lambda F, lib: F.mse_loss(
        lib.zeros(3), lib.zeros(3), reduction="avg"
    ),
    "bad_reduction_ce": lambda F, lib: F.cross_entropy(
        lib.zeros(2, 3), _classes(lib, [0, 1]), reduction="all"
    ),
    "target_out_of_bounds": lambda F, lib: F.nll_loss(
        lib.zeros(3, 4), _classes(lib, [0, 1, 7])
    ),
    "negative_target": lambda F, lib: F.cross_entropy(
        lib.zeros(3, 4), _classes(lib, [0, -5, 1])
    ),
    "batch_mismatch": lambda F, lib: F.nll_loss(lib.zeros(3, 4), _classes(lib, [0, 1])),
    "k_dim_target_mismatch": lambda F, lib: F.nll_loss(
        lib.zeros(2, 3, 4, 5, 2), lib.zeros(2, 4, 5, 3, dtype=lib.int64)
    ),
    "spatial_target_mismatch": lambda F, lib: F.cross_entropy(
        lib.zeros(2, 3, 4, 5), lib.zeros(2, 4, 6, dtype=lib.int64)
    ),
    "multi_target": lambda F, lib: F.cross_entropy(lib.zeros(3, 4), lib.zeros(3, 5)),
    "weight_size": lambda F, lib: F.nll_loss(
        lib.zeros(3, 4), _classes(lib, [0, 1, 2]), weight=lib.ones(3)
    ),
    "zero_dim_input": lambda F, lib: F.nll_loss(lib.tensor(1.0), _classes(lib, 0)),
    "probabilities_of_int": lambda F, lib: F.cross_entropy(
        lib.zeros(3, 4), lib.zeros(3, 4, dtype=lib.int64)
    ),
    "probabilities_ignore_index": lambda F, lib: F.cross_entropy(
        lib.zeros(3, 4), lib.zeros(3, 4), ignore_index=1
    ),
    "label_smoothing_range": lambda F, lib: F.cross_entropy(
        lib.zeros(3, 4), _classes(lib, [0, 1, 2]), label_smoothing=1.5
    ),
    "bce_outside_0_1": lambda F, lib: F.binary_cross_entropy(
        lib.tensor([0.5, 1.5]), lib.tensor([0.0, 1.0])
    ),
    "bce_size": lambda F, lib: F.binary_cross_entropy(lib.zeros(3, 4), lib.zeros(3, 5)),
    "bce_logits_size": lambda F, lib: F.binary_cross_entropy_with_logits(
        lib.zeros(3, 4), lib.zeros(3, 5)
    ),
    "smooth_l1_negative_beta": lambda F, lib: F.smooth_l1_loss(
        lib.zeros(3), lib.zeros(3), beta=-1.0
    ),
    "huber_zero_delta": lambda F, lib: F.huber_loss(
        lib.zeros(3), lib.zeros(3), delta=0.0
    ),
    "weight_shape": lambda F, lib: F.mse_loss(
        lib.zeros(3), lib.zeros(3), weight=lib.ones(2)
    ),
}


@pytest.mark.parametrize("name", ERRORS)
def test_loss_error_matches_torch(name: str) -> None:
    _same_error(ERRORS[name])


def test_size_mismatch_warns_as_torch() -> None:
    def call(F: Any, lib: Any) -> list[str]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            F.mse_loss(lib.zeros(3, 1), lib.zeros(3, 4))
        return [str(w.message).replace("torch.Size", "Size") for w in caught]

    ours = [m.replace("yamlgrad.Size", "Size") for m in call(YF, yg)]
    assert ours and ours == call(TF, torch)


# -- kl_div and distances ------------------------------------------------------------

# PyTorch's pairwise_distance calls at::norm, whose node is NormBackward1; yamlgrad's
# norm.ScalarOpt_dim is a composite over linalg_vector_norm (torch.norm's Python
# route), so the same computation records LinalgVectorNormBackward0.
PAIRWISE_NORM = ("LinalgVectorNormBackward0", "NormBackward1")

KL_AND_DISTANCES = []
for reduction in ("mean", "sum", "none", "batchmean"):
    r = reduction
    KL_AND_DISTANCES += [
        Case(
            f"kl_div_{r}",
            [(3, 4), (3, 4)],
            lambda F, lib, x, t, r=r: F.kl_div(
                F.log_softmax(x, 1), F.softmax(t, 1), reduction=r
            ),
        ),
        Case(
            f"kl_div_log_target_{r}",
            [(3, 4), (3, 4)],
            lambda F, lib, x, t, r=r: F.kl_div(
                F.log_softmax(x, 1), F.log_softmax(t, 1), reduction=r, log_target=True
            ),
        ),
    ]
KL_AND_DISTANCES += [
    Case("normalize", [(3, 4)], lambda F, lib, x: F.normalize(x)),
    Case("normalize_p1_dim0", [(3, 4)], lambda F, lib, x: F.normalize(x, 1.0, 0)),
    Case(
        "normalize_eps",
        [(3, 4)],
        lambda F, lib, x: F.normalize(x * 1e-3, dim=-1, eps=0.01),
    ),
    Case(
        "cosine_similarity",
        [(3, 4), (3, 4)],
        lambda F, lib, a, b: F.cosine_similarity(a, b),
    ),
    Case(
        "cosine_similarity_dim0_broadcast",
        [(3, 4), (1, 4)],
        lambda F, lib, a, b: F.cosine_similarity(a, b, dim=0),
    ),
    Case(
        "pairwise_distance",
        [(3, 4), (3, 4)],
        lambda F, lib, a, b: F.pairwise_distance(a, b),
        renamed=PAIRWISE_NORM,
    ),
    Case(
        "pairwise_distance_p1_keepdim",
        [(3, 4), (3, 4)],
        lambda F, lib, a, b: F.pairwise_distance(a, b, 1.0, keepdim=True),
        renamed=PAIRWISE_NORM,
    ),
    Case(
        "pairwise_distance_p3_broadcast",
        [(2, 3, 4), (4,)],
        lambda F, lib, a, b: F.pairwise_distance(a, b, 3.0, eps=1e-3),
        renamed=PAIRWISE_NORM,
    ),
]


@pytest.mark.parametrize("case", KL_AND_DISTANCES, ids=lambda c: c.id)
def test_kl_div_and_distances_match_torch(case: Case) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kl_div's "mean" warning, tested below
        check_against_torch(case)


def test_kl_div_mean_warns_as_torch() -> None:
    def call(F: Any, lib: Any) -> list[str]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            F.kl_div(lib.zeros(2, 3), lib.ones(2, 3))
        return [str(w.message) for w in caught]

    ours = call(YF, yg)
    assert ours and ours == call(TF, torch)


def test_cosine_similarity_clamps_tiny_norms_as_torch() -> None:
    case = Case(
        "tiny",
        [(3, 4), (3, 4)],
        lambda F, lib, a, b: F.cosine_similarity(a * 1e-9, b, eps=1e-6),
    )
    check_against_torch(case)


def test_every_target_ignored_gives_nan_loss_and_zero_gradients_as_torch() -> None:
    x = np.random.default_rng(0).standard_normal((4, 3))
    results = []
    for F, lib in ((YF, yg), (TF, torch)):
        leaf = lib.tensor(x, requires_grad=True)
        loss = F.cross_entropy(leaf, lib.tensor(np.full(4, -100)))
        loss.backward()
        results.append((float(loss.detach().numpy()), leaf.grad.numpy()))
    (ours, our_grad), (theirs, their_grad) = results
    assert np.isnan(ours) and np.isnan(theirs)
    np.testing.assert_array_equal(our_grad, their_grad)


# nll_loss_forward's shape checks and its unbatched case, against torch's: (input
# shape, target, weight). Found by tests/fuzz/test_fuzz_ops.py.
NLL_SHAPES = [
    ((0, 4), [0, 3, 1], None),
    ((3, 4), [[0, 1]] * 3, None),
    ((3, 4), [0, 1, 2], np.ones(3)),
    ((3, 4), [0, 1, 2], np.ones((4, 1))),
    ((3, 4), 1, None),
    ((4,), [1], None),
    ((4,), [1, 2, 0], None),
    ((4,), [], None),
    ((4,), 1, np.arange(4.0)),
    ((), 1, None),
]


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("shape, target, weight", NLL_SHAPES)
def test_nll_loss_forward_checks_shapes_as_torch(
    shape: tuple, target: Any, weight: Any, reduction: int
) -> None:
    x = np.arange(float(np.prod(shape))).reshape(shape)
    t = np.array(target, dtype=np.int64)

    def run(lib: Any, op: Any) -> Any:
        w = None if weight is None else lib.tensor(weight)
        return op(lib.tensor(x), lib.tensor(t), w, reduction, -100)

    try:
        want = run(torch, torch.ops.aten.nll_loss_forward)
    except Exception as error:
        with pytest.raises(type(error)) as got:
            run(yg, yg.ops.nll_loss_forward.default)
        assert str(got.value) == str(error)
        return
    got = run(yg, yg.ops.nll_loss_forward.default)
    for o, r in zip(got, want):
        assert o.shape == tuple(r.shape)
        np.testing.assert_allclose(o.numpy(), r.numpy())


# -- found by the op fuzzer (fuzz/test_fuzz_ops.py) ------------------------------------

# Each call, run in yamlgrad and in torch: the same shapes, values and grad_fn
# names, or the same error text.
FUZZ_ACTIVATION_AND_LOSS_CALLS: dict[str, Callable[[Any], Any]] = {
    # celu divides by alpha: PyTorch refuses 0 (in place too, and on empty input)
    "celu alpha 0": lambda lib: lib.celu(counting_input(lib, 3), 0.0),
    "celu_ alpha 0": lambda lib: lib.nn.functional.celu(
        counting_input(lib, 3), 0.0, inplace=True
    ),
    "celu alpha 0 of an empty tensor": lambda lib: lib.celu(
        counting_input(lib, 4, 0), 0.0
    ),
    "celu alpha 2": lambda lib: lib.celu(counting_input(lib, 3) - 1, 2.0),
    # BCE checks input, then target, element by element (nan is outside too)
    "BCE target above 1": lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.tensor([0.3, 0.4, 0.5]), lib.tensor([0.5, 2.0, 0.1])
    ),
    "BCE nan input": lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.tensor([float("nan"), 0.4, 0.5]), lib.tensor([0.5, 0.5, 0.1])
    ),
    "BCE bad target before a bad input": lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.tensor([0.3, 2.0, 0.5]), lib.tensor([-1.0, 0.4, 0.5])
    ),
    "BCE sizes that squeeze apart": lambda lib: aten_namespace(
        lib
    ).binary_cross_entropy.default(
        lib.full((3, 4), 0.5), lib.full((3, 1), 0.25), None, 0
    ),
    "BCE sizes that squeeze together": lambda lib: aten_namespace(
        lib
    ).binary_cross_entropy.default(
        lib.full((3, 4), 0.5), lib.full((1, 4), 0.25), None, 0
    ),
    "huber_loss, reduction -1": lambda lib: (
        lib.ops.aten.huber_loss(
            counting_input(lib, 3, 4), counting_input(lib, 3, 4) * 0.5, -1, 1.0
        )
        if lib is not yg
        else yg.ops.huber_loss.default(
            counting_input(lib, 3, 4), counting_input(lib, 3, 4) * 0.5, -1, 1.0
        )
    ),
    "nll_loss, reduction 3": lambda lib: (
        lib.ops.aten.nll_loss(
            counting_input(lib, 3, 4), lib.tensor([0, 1, 2]), None, 3, -100
        )
        if lib is not yg
        else yg.ops.nll_loss.default(
            counting_input(lib, 3, 4), lib.tensor([0, 1, 2]), None, 3, -100
        )
    ),
    "smooth_l1_loss, negative beta": lambda lib: lib.nn.functional.smooth_l1_loss(
        counting_input(lib, 3), counting_input(lib, 3), beta=-1.5
    ),
    "huber_loss, zero delta": lambda lib: lib.nn.functional.huber_loss(
        counting_input(lib, 3), counting_input(lib, 3), delta=0.0
    ),
}


@pytest.mark.parametrize("name", sorted(FUZZ_ACTIVATION_AND_LOSS_CALLS))
def test_activation_and_loss_call_answers_as_torch(name: str) -> None:
    assert call_outcome(FUZZ_ACTIVATION_AND_LOSS_CALLS[name], yg) == call_outcome(
        FUZZ_ACTIVATION_AND_LOSS_CALLS[name], torch
    )


@pytest.mark.parametrize(
    "name", ["mse_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy"]
)
def test_a_mean_loss_of_broadcast_operands_as_torch(name: str) -> None:
    """A [4, 3] input against a 0-d target: PyTorch's forward averages over 12
    elements, and its backward divides each operand's gradient by that operand's
    own element count (the target's formula is the input's, arguments swapped)."""
    grads = []
    for lib in (yg, torch):
        x = lib.tensor(np.linspace(0.1, 0.9, 12).reshape(4, 3), requires_grad=True)
        t = lib.tensor(0.4, dtype=lib.float64, requires_grad=True)
        args = (x, t, None, 1) if name == "binary_cross_entropy" else (x, t, 1)
        loss = getattr(torch.ops.aten if lib is not yg else yg.ops, name)
        loss = loss(*args) if lib is not yg else loss.default(*args)
        wrt = [x, t]
        grads.append([g.detach().numpy() for g in lib.autograd.grad(loss, wrt)])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
