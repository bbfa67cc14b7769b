"""Factories against torch: shapes, dtypes, values, requires_grad, errors, seeds.

Deterministic factories are compared value for value. Random ones draw from
numpy's PCG64, not torch's generator, so for them the tests check what PyTorch
promises: shapes, dtypes, bounds, rough distribution facts, and that a seed
repeats a stream exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from support import dtype_name, libraries_under_test


def _assert_same(ours: yg.Tensor, theirs: Any, rtol: float = 0.0) -> None:
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert dtype_name(ours.dtype) == dtype_name(theirs.dtype)
    assert ours.requires_grad == theirs.requires_grad
    assert ours.is_leaf and theirs.is_leaf
    want = theirs.detach().numpy()
    got = ours.detach().numpy()
    if rtol:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-7)
    else:
        np.testing.assert_array_equal(got, want)


# (id, factory call over a library); values are compared exactly.
DETERMINISTIC: list[tuple[str, Callable[[Any], Any]]] = [
    ("zeros(2, 3)", lambda lib: lib.zeros(2, 3)),
    ("zeros((2, 3))", lambda lib: lib.zeros((2, 3))),
    ("zeros([4])", lambda lib: lib.zeros([4])),
    ("zeros()", lambda lib: lib.zeros(())),
    ("zeros(size=)", lambda lib: lib.zeros(size=(2, 1))),
    ("zeros int64", lambda lib: lib.zeros(2, dtype=lib.int64)),
    ("ones(3)", lambda lib: lib.ones(3)),
    (
        "ones float64 rg",
        lambda lib: lib.ones(2, 2, dtype=lib.float64, requires_grad=True),
    ),
    ("ones bool", lambda lib: lib.ones(2, dtype=lib.bool)),
    ("full int", lambda lib: lib.full((2, 3), 7)),
    ("full float", lambda lib: lib.full((2,), 1.5)),
    ("full bool", lambda lib: lib.full((2,), True)),
    ("full dtype", lambda lib: lib.full([3], 2, dtype=lib.float64)),
    ("full rg", lambda lib: lib.full((2,), 0.5, requires_grad=True)),
    ("eye(3)", lambda lib: lib.eye(3)),
    ("eye(2, 4)", lambda lib: lib.eye(2, 4)),
    ("eye int", lambda lib: lib.eye(3, dtype=lib.int64)),
    ("arange(5)", lambda lib: lib.arange(5)),
    ("arange(1, 4)", lambda lib: lib.arange(1, 4)),
    ("arange(0, 10, 3)", lambda lib: lib.arange(0, 10, 3)),
    ("arange(10, 0, -3)", lambda lib: lib.arange(10, 0, -3)),
    ("arange(5.0)", lambda lib: lib.arange(5.0)),
    ("arange(0, 1, 0.25)", lambda lib: lib.arange(0, 1, 0.25)),
    ("arange(1, 2.5)", lambda lib: lib.arange(1, 2.5)),
    ("arange(0, 1, 0.1)", lambda lib: lib.arange(0, 1, 0.1)),
    ("arange f64", lambda lib: lib.arange(0, 3, dtype=lib.float64)),
    ("arange rg", lambda lib: lib.arange(3.0, requires_grad=True)),
    ("arange(0)", lambda lib: lib.arange(0)),
    ("linspace(0, 1, 5)", lambda lib: lib.linspace(0, 1, 5)),
    ("linspace(-1, 1, 1)", lambda lib: lib.linspace(-1, 1, 1)),
    ("linspace(0, 1, 0)", lambda lib: lib.linspace(0, 1, 0)),
    ("linspace f64", lambda lib: lib.linspace(-2, 3, 11, dtype=lib.float64)),
    ("linspace int", lambda lib: lib.linspace(0, 10, 4, dtype=lib.int64)),
    ("tensor float", lambda lib: lib.tensor([1.0, 2.5])),
    ("tensor int", lambda lib: lib.tensor([[1, 2], [3, 4]])),
    ("tensor bool", lambda lib: lib.tensor([True, False])),
    ("tensor 0-d", lambda lib: lib.tensor(3.5, requires_grad=True)),
    ("tensor dtype", lambda lib: lib.tensor([1, 2], dtype=lib.float64)),
    ("as_tensor", lambda lib: lib.as_tensor([1.0, 2.0])),
    ("from_numpy", lambda lib: lib.from_numpy(np.arange(6.0).reshape(2, 3))),
]


@pytest.mark.parametrize("make", [pytest.param(f, id=i) for i, f in DETERMINISTIC])
def test_deterministic_factory_matches_torch(make: Callable[[Any], Any]) -> None:
    torch = pytest.importorskip("torch")
    _assert_same(make(yg), make(torch))


# linspace and fractional arange in float32: rounding may differ in the last bit.
NEAR: list[tuple[str, Callable[[Any], Any]]] = [
    ("linspace(0, 1, 7)", lambda lib: lib.linspace(0, 1, 7)),
    ("linspace(-3.3, 2.2, 50)", lambda lib: lib.linspace(-3.3, 2.2, 50)),
    ("arange(-1, 1, 0.3)", lambda lib: lib.arange(-1, 1, 0.3)),
]


@pytest.mark.parametrize("make", [pytest.param(f, id=i) for i, f in NEAR])
def test_float_ranges_match_torch_to_float32_precision(
    make: Callable[[Any], Any],
) -> None:
    torch = pytest.importorskip("torch")
    _assert_same(make(yg), make(torch), rtol=1e-6)


LIKE: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("zeros_like", lambda lib, x: lib.zeros_like(x)),
    ("ones_like", lambda lib, x: lib.ones_like(x)),
    ("ones_like dtype", lambda lib, x: lib.ones_like(x, dtype=lib.int64)),
    ("zeros_like rg", lambda lib, x: lib.zeros_like(x, requires_grad=True)),
    ("full_like", lambda lib, x: lib.full_like(x, 7)),
    ("full_like float", lambda lib, x: lib.full_like(x, 2.5, dtype=lib.float32)),
]


@pytest.mark.parametrize("make", [pytest.param(f, id=i) for i, f in LIKE])
def test_like_factory_matches_torch(make: Callable[[Any, Any], Any]) -> None:
    torch = pytest.importorskip("torch")
    values = np.arange(6.0).reshape(2, 3)
    x = yg.tensor(values, requires_grad=True)
    tx = torch.tensor(values, requires_grad=True)
    _assert_same(make(yg, x), make(torch, tx))


def test_like_factories_keep_the_input_dtype_even_for_integers() -> None:
    torch = pytest.importorskip("torch")
    _assert_same(
        yg.full_like(yg.tensor([1, 2]), 2.7), torch.full_like(torch.tensor([1, 2]), 2.7)
    )


def test_from_numpy_shares_memory() -> None:
    array = np.zeros(3)
    t = yg.from_numpy(array)
    array[0] = 5.0
    assert t[0].item() == 5.0
    t.numpy()[1] = 7.0
    assert array[1] == 7.0


def test_tensor_copies() -> None:
    array = np.zeros(3)
    t = yg.tensor(array)
    array[0] = 5.0
    assert t[0].item() == 0.0


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(
            lambda lib: lib.zeros(2, dtype=lib.int64, requires_grad=True), id="zeros"
        ),
        pytest.param(lambda lib: lib.arange(3, requires_grad=True), id="arange"),
        pytest.param(lambda lib: lib.full((2,), 3, requires_grad=True), id="full"),
        pytest.param(lambda lib: lib.tensor([1, 2], requires_grad=True), id="tensor"),
        pytest.param(
            lambda lib: lib.randint(0, 5, (2,), requires_grad=True), id="randint"
        ),
        pytest.param(lambda lib: lib.randperm(3, requires_grad=True), id="randperm"),
        pytest.param(
            lambda lib: lib.ones_like(lib.ones(2), dtype=lib.int64, requires_grad=True),
            id="ones_like",
        ),
    ],
)
def test_requires_grad_on_an_integer_dtype_raises_torchs_error(
    make: Callable[[Any], Any],
) -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as theirs:
        make(torch)
    with pytest.raises(RuntimeError) as ours:
        make(yg)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda lib: lib.arange(0, 5, 0), id="zero step"),
        pytest.param(lambda lib: lib.arange(5, 0), id="wrong sign"),
        pytest.param(lambda lib: lib.randint(5, 5, (2,)), id="empty randint range"),
        pytest.param(lambda lib: lib.rand(2, dtype=lib.int64), id="rand int64"),
        pytest.param(lambda lib: lib.randn(2, dtype=lib.int32), id="randn int32"),
    ],
)
def test_bad_arguments_raise_like_torch(make: Callable[[Any], Any]) -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as theirs:
        make(torch)
    with pytest.raises(RuntimeError) as ours:
        make(yg)
    assert type(ours.value) is type(theirs.value)
    if isinstance(theirs.value, NotImplementedError):
        assert str(ours.value) == str(theirs.value)


# -- random factories ------------------------------------------------------------------

RANDOM: list[tuple[str, Callable[..., Any]]] = [
    ("rand", lambda lib, **k: lib.rand(3, 4, **k)),
    ("rand tuple", lambda lib, **k: lib.rand((2, 5), **k)),
    ("rand f64", lambda lib, **k: lib.rand(4, dtype=lib.float64, **k)),
    ("randn", lambda lib, **k: lib.randn(2, 3, **k)),
    (
        "randn f64 rg",
        lambda lib, **k: lib.randn(5, dtype=lib.float64, requires_grad=True, **k),
    ),
    ("randint(10, size)", lambda lib, **k: lib.randint(10, (3, 3), **k)),
    ("randint(low, high, size)", lambda lib, **k: lib.randint(-5, 5, (7,), **k)),
    ("randint dtype", lambda lib, **k: lib.randint(0, 3, (2,), dtype=lib.int32, **k)),
    ("randint float", lambda lib, **k: lib.randint(0, 3, (2,), dtype=lib.float32, **k)),
    ("randperm", lambda lib, **k: lib.randperm(6, **k)),
    (
        "rand_like",
        lambda lib, **k: lib.rand_like(lib.ones(2, 2, dtype=lib.float64), **k),
    ),
    ("randn_like", lambda lib, **k: lib.randn_like(lib.ones(3), **k)),
]


@pytest.mark.parametrize("make", [pytest.param(f, id=i) for i, f in RANDOM])
def test_random_factory_shape_dtype_and_requires_grad_match_torch(
    make: Callable[..., Any],
) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = make(yg), make(torch)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert dtype_name(ours.dtype) == dtype_name(theirs.dtype)
    assert ours.requires_grad == theirs.requires_grad and ours.is_leaf


@pytest.mark.parametrize("make", [pytest.param(f, id=i) for i, f in RANDOM])
def test_manual_seed_repeats_the_default_stream(make: Callable[..., Any]) -> None:
    yg.manual_seed(1234)
    first = make(yg).detach().numpy().copy()
    again = make(yg).detach().numpy().copy()
    yg.manual_seed(1234)
    np.testing.assert_array_equal(make(yg).detach().numpy(), first)
    np.testing.assert_array_equal(make(yg).detach().numpy(), again)


@pytest.mark.parametrize("make", [pytest.param(f, id=i) for i, f in RANDOM])
def test_a_generator_object_has_its_own_stream(make: Callable[..., Any]) -> None:
    g = yg.Generator().manual_seed(7)
    first = make(yg, generator=g).detach().numpy().copy()
    yg.manual_seed(0)
    make(yg)  # the default stream moves; g's does not care
    g.manual_seed(7)
    np.testing.assert_array_equal(make(yg, generator=g).detach().numpy(), first)


def test_manual_seed_returns_the_default_generator() -> None:
    torch = pytest.importorskip("torch")
    assert isinstance(torch.manual_seed(3), torch.Generator)
    g = yg.manual_seed(3)
    assert isinstance(g, yg.Generator) and g is yg.default_generator
    assert g.initial_seed() == 3 == yg.initial_seed()
    assert yg.Generator().manual_seed(5).initial_seed() == 5


def test_different_seeds_give_different_numbers() -> None:
    a = yg.randn(100, generator=yg.Generator().manual_seed(1))
    b = yg.randn(100, generator=yg.Generator().manual_seed(2))
    assert not np.array_equal(a.numpy(), b.numpy())


def test_uniform_and_normal_distribution_facts() -> None:
    g = yg.Generator().manual_seed(0)
    u = yg.rand(100_000, generator=g, dtype=yg.float64).numpy()
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.01 and abs(u.var() - 1 / 12) < 0.005
    n = yg.randn(100_000, generator=g, dtype=yg.float64).numpy()
    assert abs(n.mean()) < 0.02 and abs(n.std() - 1.0) < 0.02
    assert 0.67 < np.mean(np.abs(n) < 1.0) < 0.70  # about 68.3% within one sigma
    f = yg.rand(1000, generator=g)
    assert f.dtype == yg.float32 and 0.0 <= f.numpy().min() and f.numpy().max() < 1.0


def test_randint_bounds_and_coverage() -> None:
    g = yg.Generator().manual_seed(0)
    values = yg.randint(-3, 4, (10_000,), generator=g).numpy()
    assert values.dtype == np.int64
    assert set(np.unique(values).tolist()) == set(range(-3, 4))
    high_only = yg.randint(5, (1000,), generator=g).numpy()
    assert high_only.min() == 0 and high_only.max() == 4


def test_randperm_is_a_permutation() -> None:
    g = yg.Generator().manual_seed(0)
    p = yg.randperm(50, generator=g).numpy()
    assert p.dtype == np.int64
    assert sorted(p.tolist()) == list(range(50))
    assert p.tolist() != list(range(50))
    assert yg.randperm(0).shape == (0,)


# -- the default dtype -----------------------------------------------------------------


def _default_dtype_results(lib: ModuleType) -> list[str]:
    """What follows the default dtype: Python floats, float factories, an integer
    tensor with a Python float or true division; not a float32 tensor's result."""
    made = [
        lib.get_default_dtype(),
        lib.tensor([1.5]).dtype,
        lib.zeros(2).dtype,
        lib.rand(2).dtype,
        lib.full((2,), 1.5).dtype,
        lib.linspace(0, 1, 3).dtype,
        lib.arange(0.0, 1.0, 0.5).dtype,
        (lib.arange(3) * 2.5).dtype,
        (lib.arange(3) / 2).dtype,
        (lib.ones(2, dtype=lib.float32) * 2.5).dtype,
    ]
    return [dtype_name(d) for d in made]


@pytest.mark.parametrize("lib", libraries_under_test(), ids=lambda m: m.__name__)
def test_set_default_dtype_as_torch(lib: ModuleType) -> None:
    lib.set_default_dtype(lib.float64)
    try:
        got = _default_dtype_results(lib)
    finally:
        lib.set_default_dtype(lib.float32)
    assert got == ["float64"] * 9 + ["float32"]
    assert _default_dtype_results(lib) == ["float32"] * 10


@pytest.mark.parametrize("lib", libraries_under_test(), ids=lambda m: m.__name__)
def test_set_default_dtype_refuses_a_non_float_dtype(lib: ModuleType) -> None:
    with pytest.raises(TypeError, match="^only floating-point types are supported"):
        lib.set_default_dtype(lib.int64)
    with pytest.raises(TypeError, match="^invalid dtype object: only floating-point"):
        lib.set_default_dtype("float64")
    assert lib.get_default_dtype() == lib.float32
