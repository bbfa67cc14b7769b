"""Complex dtypes against torch: names, promotion with real tensors and Python
complexes, factories, printing and finfo."""

from __future__ import annotations

import numpy as np
import pytest

import yamlgrad as yg

torch = pytest.importorskip("torch")


def _torch_dtype(d: yg.dtype) -> object:
    return getattr(torch, d.name)


def test_names_and_predicates() -> None:
    assert yg.cfloat is yg.complex64 and yg.cdouble is yg.complex128
    assert yg.chalf is yg.complex32
    z = yg.tensor([1 + 2j])
    assert z.is_complex() and yg.is_complex(z) and not z.is_floating_point()
    assert not yg.tensor([1.0]).is_complex()
    assert yg.cfloat.to_real() is yg.float32
    assert yg.float64.to_complex() is yg.complex128


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_python_complex_follows_the_default_dtype(default: str) -> None:
    before = yg.get_default_dtype()
    yg.set_default_dtype(getattr(yg, default))
    torch_before = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, default))
    try:
        for value in (1j, [1 + 2j, 3.0], 2.5):
            assert yg.tensor(value).dtype.name == str(torch.tensor(value).dtype)[6:]
        assert yg.full((2,), 1j).dtype.name == str(torch.full((2,), 1j).dtype)[6:]
    finally:
        yg.set_default_dtype(before)
        torch.set_default_dtype(torch_before)


REALS = ["float32", "float64", "int64", "bool"]
COMPLEXES = ["complex64", "complex128"]


@pytest.mark.parametrize("a", REALS + COMPLEXES)
@pytest.mark.parametrize("b", REALS + COMPLEXES)
def test_promotion_matches_torch(a: str, b: str) -> None:
    da, db = getattr(yg, a), getattr(yg, b)
    want = torch.promote_types(_torch_dtype(da), _torch_dtype(db))
    assert yg.promote_types(da, db).name == str(want)[6:]
    x, y = yg.ones(3, dtype=da), yg.ones((), dtype=db)
    tx, ty = torch.ones(3, dtype=_torch_dtype(da)), torch.ones(
        (), dtype=_torch_dtype(db)
    )
    assert (x * y).dtype.name == str((tx * ty).dtype)[6:]
    assert (x * 1j).dtype.name == str((tx * 1j).dtype)[6:]


@pytest.mark.parametrize("factory", ["zeros", "ones", "empty", "randn", "rand"])
@pytest.mark.parametrize("dtype", COMPLEXES)
def test_factories_make_complex(factory: str, dtype: str) -> None:
    t = getattr(yg, factory)(2, 3, dtype=getattr(yg, dtype))
    assert t.dtype.name == dtype and t.shape == (2, 3)


def test_randn_parts_have_variance_one_half() -> None:
    yg.manual_seed(0)
    z = yg.randn(20000, dtype=yg.cdouble).numpy()
    assert abs(z.real.var() - 0.5) < 0.03 and abs(z.imag.var() - 0.5) < 0.03
    u = yg.rand(20000, dtype=yg.cdouble).numpy()
    assert 0 <= u.real.min() and u.real.max() < 1 and 0 <= u.imag.min()


def test_complex_half_is_refused() -> None:
    with pytest.raises(RuntimeError, match="not implemented for 'ComplexHalf'"):
        yg.zeros(2, dtype=yg.chalf)


CASES = [
    ([1 + 2j, 3 - 4.5j], None),
    ([1 + 2j, 3 - 4.5j], "complex128"),
    (1j, None),
    ([0j, 1e10 + 1j], None),
    ([[1 + 1j, 2], [3, 4 - 1e-5j]], None),
    (np.arange(30).reshape(3, 10) * (1 + 0.5j), None),
    ([complex(-0.0, -0.0), complex(float("nan"), float("inf"))], None),
]


@pytest.mark.parametrize(("data", "dtype"), CASES)
def test_printed_as_torch_prints(data: object, dtype: str | None) -> None:
    ours = yg.tensor(data, dtype=dtype and getattr(yg, dtype))
    theirs = torch.tensor(data, dtype=dtype and getattr(torch, dtype))
    assert repr(ours) == repr(theirs).replace("torch.", "yamlgrad.")


def test_finfo_of_a_complex_dtype_is_its_parts() -> None:
    assert repr(yg.finfo(yg.cdouble)) == repr(torch.finfo(torch.cdouble))
    assert yg.finfo(yg.cfloat).eps == torch.finfo(torch.cfloat).eps
