"""yg.nn.init against torch.nn.init: gains, fans, bounds, spreads and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.nn import init

torch = pytest.importorskip("torch")
tinit = torch.nn.init


@pytest.mark.parametrize(
    "nonlinearity,param",
    [
        ("linear", None),
        ("conv2d", None),
        ("sigmoid", None),
        ("tanh", None),
        ("relu", None),
        ("leaky_relu", None),
        ("leaky_relu", 0.2),
        ("selu", None),
    ],
)
def test_calculate_gain_matches_torch(nonlinearity: str, param: float | None) -> None:
    assert init.calculate_gain(nonlinearity, param) == pytest.approx(
        tinit.calculate_gain(nonlinearity, param), rel=1e-15
    )


def test_bad_arguments_raise_torch_errors() -> None:
    cases = [
        (lambda m: m.calculate_gain("swish"), None),
        (lambda m: m.calculate_gain("leaky_relu", "x"), None),
        (lambda m: m.xavier_uniform_(m_tensor(m, 3)), None),
        (lambda m: m.kaiming_normal_(m_tensor(m, 3, 4), mode="fan_avg"), None),
        (lambda m: m.eye_(m_tensor(m, 3)), None),
        (lambda m: m.orthogonal_(m_tensor(m, 3)), None),
    ]
    for call, _ in cases:
        with pytest.raises(ValueError) as theirs:
            call(tinit)
        with pytest.raises(ValueError) as ours:
            call(init)
        assert str(ours.value) == str(theirs.value)


def m_tensor(module: object, *shape: int) -> object:
    return torch.empty(*shape) if module is tinit else yg.empty(*shape)


@pytest.mark.parametrize("shape", [(300, 200), (64, 16, 3, 3), (50, 40, 5)])
def test_fans_match_torch(shape: tuple[int, ...]) -> None:
    ours = init._calculate_fan_in_and_fan_out(yg.empty(*shape))
    assert ours == tinit._calculate_fan_in_and_fan_out(torch.empty(*shape))


UNIFORM = [
    ("xavier_uniform_", {"gain": 2.0}),
    ("kaiming_uniform_", {"a": math.sqrt(5)}),
    ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}),
    ("uniform_", {"a": -0.3, "b": 0.7}),
]


@pytest.mark.parametrize("name,kwargs", UNIFORM)
def test_uniform_initialisers_fill_torchs_interval(name: str, kwargs: dict) -> None:
    """The same interval as torch: both draws span it and stay inside it."""
    ours = getattr(init, name)(yg.empty(200, 100, 3), **kwargs).numpy()
    theirs = getattr(tinit, name)(torch.empty(200, 100, 3), **kwargs).numpy()
    for lo, hi in ((ours.min(), ours.max()), (theirs.min(), theirs.max())):
        assert lo == pytest.approx(theirs.min(), rel=0.01, abs=1e-3)
        assert hi == pytest.approx(theirs.max(), rel=0.01, abs=1e-3)
    assert ours.std() == pytest.approx(theirs.std(), rel=0.02)


NORMAL = [
    ("xavier_normal_", {"gain": 0.5}),
    ("kaiming_normal_", {"nonlinearity": "relu"}),
    ("kaiming_normal_", {"a": 0.1, "mode": "fan_out"}),
    ("normal_", {"mean": 1.0, "std": 3.0}),
    ("trunc_normal_", {"std": 2.0, "a": -1.0, "b": 3.0}),
]


@pytest.mark.parametrize("name,kwargs", NORMAL)
def test_normal_initialisers_match_torchs_moments(name: str, kwargs: dict) -> None:
    ours = getattr(init, name)(yg.empty(300, 100, 3), **kwargs).numpy()
    theirs = getattr(tinit, name)(torch.empty(300, 100, 3), **kwargs).numpy()
    assert ours.mean() == pytest.approx(theirs.mean(), abs=0.02 * float(theirs.std()))
    assert ours.std() == pytest.approx(theirs.std(), rel=0.02)
    if name == "trunc_normal_":
        assert ours.min() >= -1.0 and ours.max() <= 3.0


def test_deterministic_fills_match_torch() -> None:
    for name, args in [
        ("constant_", (0.25,)),
        ("ones_", ()),
        ("zeros_", ()),
        ("eye_", ()),
    ]:
        ours = getattr(init, name)(yg.empty(3, 4), *args).numpy()
        theirs = getattr(tinit, name)(torch.empty(3, 4), *args).numpy()
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (3, 2, 2)])
def test_orthogonal_gives_orthonormal_rows_or_columns(shape: tuple[int, ...]) -> None:
    q = init.orthogonal_(yg.empty(*shape), gain=2.0).numpy().reshape(shape[0], -1)
    small = min(q.shape)
    gram = q @ q.T if q.shape[0] == small else q.T @ q
    np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-5)


def test_initialisers_work_in_place_outside_the_graph() -> None:
    w = yg.zeros(5, 3, requires_grad=True)
    version = w._version
    assert init.kaiming_uniform_(w) is w
    assert w._version == version + 1 and w.is_leaf and w.grad_fn is None


def test_same_seed_same_values_and_generator_argument() -> None:
    yg.manual_seed(3)
    a = init.xavier_normal_(yg.empty(4, 4)).numpy().copy()
    yg.manual_seed(3)
    b = init.xavier_normal_(yg.empty(4, 4)).numpy().copy()
    np.testing.assert_array_equal(a, b)
    g = yg.Generator().manual_seed(9)
    c = init.uniform_(yg.empty(4), generator=g).numpy().copy()
    d = init.uniform_(yg.empty(4), generator=yg.Generator().manual_seed(9)).numpy()
    np.testing.assert_array_equal(c, d)


def test_zero_element_tensor_is_a_no_op_with_torchs_warning() -> None:
    with pytest.warns(
        UserWarning, match="Initializing zero-element tensors is a no-op"
    ):
        init.kaiming_uniform_(yg.empty(0, 3))
