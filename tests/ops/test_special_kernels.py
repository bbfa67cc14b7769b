"""The fast forms of runtime/ops/special_kernels.py: their accuracy over the
float32 range (the bound benchmarks/special_accuracy.py tabulates), their
special values, and the ops built on them (erf, gelu, special_ndtr) against
torch, values and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.runtime.ops import special_kernels

torch = pytest.importorskip("torch")
scipy_special = pytest.importorskip("scipy.special")


def _ulps(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Errors of float32 values from a float64 reference, in float32 ulps."""
    spacing = np.spacing(np.abs(reference).astype(np.float32)).astype(np.float64)
    return np.abs(values.astype(np.float64) - reference) / spacing


def _sweep() -> np.ndarray:
    """Every 97th float32 bit pattern of [0, 8], both signs."""
    top = int(np.array(8.0, np.float32).view(np.int32))
    positive = np.arange(0, top, 97, dtype=np.int32).view(np.float32)
    return np.concatenate([positive, -positive])


def test_erf_float32_form_within_its_bound() -> None:
    x = _sweep()
    reference = scipy_special.erf(x.astype(np.float64))
    ours = _ulps(special_kernels.erf(x), reference).max()
    theirs = _ulps(torch.erf(torch.from_numpy(x)).numpy(), reference).max()
    assert ours <= max(theirs, 1.0)
    assert ours < 0.65  # what the module's docstring states


def test_erf_float32_special_values_match_torch() -> None:
    tiny = np.finfo(np.float32).smallest_subnormal
    big = np.finfo(np.float32).max
    x = np.array(
        [0.0, -0.0, np.inf, -np.inf, np.nan, tiny, -tiny, big, -big, 3.9, 4.0, 9.0],
        np.float32,
    )
    ours = yg.erf(yg.tensor(x)).numpy()
    theirs = torch.erf(torch.from_numpy(x)).numpy()
    np.testing.assert_array_equal(ours, theirs)
    assert np.signbit(ours[1])  # erf(-0.0) is -0.0
    assert ours.dtype == np.float32


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_dispatch_keeps_dtype_and_shape(dtype: type) -> None:
    x = np.linspace(-3, 3, 12, dtype=dtype).reshape(3, 4)[:, ::2]  # strided
    out = special_kernels.erf(x)
    assert out.dtype == dtype and out.shape == (3, 2)
    np.testing.assert_allclose(out, scipy_special.erf(x), rtol=2e-7, atol=0)
    scalar = special_kernels.erf(np.float32(0.5))  # 0-d: scipy's kernel
    assert scalar.dtype == np.float32


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_float32_extremes_against_float64(approximate: str) -> None:
    """Finite at the largest floats (x * 2 would overflow) and accurate where
    torch's float32 tanh form cancels (1 + tanh(z) for z << 0; the sigmoid
    form does not); the exact form's 1 + erf cancels as torch's does, to an
    absolute error of |x| times an ulp of 1."""
    big = np.finfo(np.float32).max
    x = np.array([-big, -20.0, -4.5, -1e-30, 0.0, 1e-30, 4.5, 20.0, big], np.float32)
    ours = yg.nn.functional.gelu(yg.tensor(x), approximate=approximate).numpy()
    wide = torch.from_numpy(x.astype(np.float64))
    exact = torch.nn.functional.gelu(wide, approximate=approximate).numpy()
    atol = 0.0 if approximate == "tanh" else 4.5 * 6e-8
    np.testing.assert_allclose(ours, exact.astype(np.float32), rtol=1e-6, atol=atol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_gelu_exact_values_and_gradients_match_torch(dtype: torch.dtype) -> None:
    x = torch.linspace(-6, 6, 1001, dtype=dtype, requires_grad=True)
    a = yg.tensor(x.detach().numpy(), requires_grad=True)
    y = yg.nn.functional.gelu(a)
    t = torch.nn.functional.gelu(x)
    cotangent = np.linspace(-1, 1, 1001).astype(x.detach().numpy().dtype)
    y.backward(yg.tensor(cotangent))
    t.backward(torch.from_numpy(cotangent))
    tol = 1e-6 if dtype == torch.float32 else 1e-13
    np.testing.assert_allclose(y.detach().numpy(), t.detach().numpy(), atol=tol)
    np.testing.assert_allclose(a.grad.numpy(), x.grad.numpy(), atol=tol)


def test_ndtr_float32_matches_torch() -> None:
    """PyTorch's formula, (1 + erf(x / sqrt(2))) / 2, on the float32 form: it
    agrees with torch's to erf's rounding (an ulp of 1, absolute)."""
    x = np.linspace(-8, 8, 4001, dtype=np.float32)
    ours = yg.special.ndtr(yg.tensor(x)).numpy()
    theirs = torch.special.ndtr(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=6e-8)


def _float64_ulps(values: np.ndarray, x: np.ndarray, kernel: object) -> float:
    """Errors of float64 values in float64 ulps, against the extended-precision
    kernel (the x87 80-bit long double, whose own error is 2**-11 of those)."""
    reference = kernel(x.astype(np.longdouble))
    spacing = np.spacing(np.abs(reference.astype(np.float64)))
    error = np.abs(values.astype(np.longdouble) - reference) / spacing
    return float(np.nanmax(error))


@pytest.mark.skipif(
    np.finfo(np.longdouble).nmant < 63, reason="needs an extended long double"
)
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_trig_float64_form_within_its_bound(name: str) -> None:
    rng = np.random.default_rng(3)
    top = np.array(np.finfo(np.float64).max).view(np.int64)
    spread = rng.integers(0, top, 100_000).view(np.float64)
    x = np.concatenate(
        [
            rng.uniform(-10, 10, 100_000),
            rng.uniform(-(2.0**20), 2.0**20, 100_000),  # past the form's limit too
            spread * rng.choice([-1.0, 1.0], spread.size),
        ]
    )
    kernel = getattr(special_kernels, f"{name}_kernel")
    assert _float64_ulps(kernel(x), x, getattr(np, name)) < 0.85  # the docstring's


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_trig_float64_special_values_and_layout(name: str) -> None:
    tiny = np.finfo(np.float64).smallest_subnormal
    big = np.finfo(np.float64).max
    special = [0.0, -0.0, tiny, -tiny, 1e-300, big, -big, 2.0**19 * np.pi, 1e6]
    multiples = np.pi / 2 * np.arange(1, 40)  # results near 0 go to numpy's kernel
    x = np.resize(np.concatenate([special, multiples, [np.nan]]), 3 * 8192)
    kernel = getattr(special_kernels, f"{name}_kernel")
    ours, theirs = kernel(x), getattr(np, name)(x)
    np.testing.assert_array_max_ulp(ours, theirs, maxulp=1)
    assert np.array_equal(np.signbit(ours), np.signbit(theirs))
    with np.errstate(invalid="ignore"):
        at_inf = kernel(np.resize([np.inf, -np.inf, 1.0], 9000))
    assert np.isnan(at_inf[:2]).all()
    wide = np.linspace(-5, 5, 4 * 8192).reshape(128, 256)
    for view in (wide.T, wide[:, ::2]):  # Fortran order kept; strided: numpy's
        out = kernel(view)
        assert out.strides == getattr(np, name)(view).strides
        np.testing.assert_array_max_ulp(out, getattr(np, name)(view), maxulp=1)


def test_trig_half_pi_parts() -> None:
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    high, middle, low = special_kernels._HALF_PI
    assert high == np.ldexp(np.floor(np.ldexp(float(mpmath.pi / 2), 32)), -32)
    rest = mpmath.pi / 2 - high
    assert middle == float(mpmath.floor(rest * mpmath.mpf(2) ** 65) / 2**65)
    assert low == float(rest - middle)
    assert special_kernels._TWO_OVER_PI == float(2 / mpmath.pi)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_trig_float64_values_and_gradients_match_torch(name: str) -> None:
    x = np.random.default_rng(4).uniform(-20, 20, (100, 200))
    ours = yg.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    out, expected = getattr(yg, name)(ours), getattr(torch, name)(theirs)
    np.testing.assert_array_max_ulp(out.detach().numpy(), expected.detach().numpy(), 1)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(
        ours.grad.numpy(), theirs.grad.numpy(), rtol=0, atol=3e-16
    )


def test_erfinv_float32_form_within_its_bound() -> None:
    top = int(np.array(1.0, np.float32).view(np.int32))
    positive = np.arange(0, top, 61, dtype=np.int32).view(np.float32)
    below_one = np.float32(1) - np.arange(1, 4000, dtype=np.float32) * 2**-24
    x = np.concatenate([positive, -positive, below_one, -below_one])
    reference = scipy_special.erfinv(x.astype(np.float64))
    ours = _ulps(special_kernels.erfinv(x), reference).max()
    theirs = _ulps(torch.erfinv(torch.from_numpy(x)).numpy(), reference).max()
    assert ours <= max(theirs, 1.0)
    assert ours < 0.51


def test_erfinv_float32_special_values_match_torch() -> None:
    tiny = np.finfo(np.float32).smallest_subnormal
    x = np.array(
        [0.0, -0.0, 1.0, -1.0, 1.5, -2.0, np.inf, -np.inf, np.nan, tiny, -tiny],
        np.float32,
    )
    ours = yg.erfinv(yg.tensor(x)).numpy()
    theirs = torch.erfinv(torch.from_numpy(x)).numpy()
    np.testing.assert_array_max_ulp(ours, theirs, maxulp=1)
    assert np.array_equal(np.signbit(ours[:2]), [False, True])
    assert ours.dtype == np.float32


def test_erfinv_float32_gradient_matches_torch() -> None:
    x = np.random.default_rng(5).uniform(-0.99, 0.99, (50, 400)).astype(np.float32)
    ours = yg.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    yg.erfinv(ours).sum().backward()
    torch.erfinv(theirs).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=2e-6)
