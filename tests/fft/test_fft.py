"""torch.fft, torch.stft and torch.istft against torch: forward values and
dtypes, and gradients by backward with one fixed cotangent (complex for a
complex output), for every function, norm mode, and float32, float64,
complex64 and complex128 input; round trips with gradients; the transforms'
own backwards (the Hermitian-symmetry handling) on complex inputs; PyTorch's
argument errors; and the array backends' FFTs. (The per-entry checks of
derivatives.yaml cover _fft_r2c, _fft_c2r and _fft_c2c on their own samples.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from support import torch_text

torch = pytest.importorskip("torch")

DTYPES = ("float32", "float64", "complex64", "complex128")
NORMS = (None, "backward", "ortho", "forward")
TOLERANCE = {"float32": 2e-5, "complex64": 2e-5, "float64": 1e-10, "complex128": 1e-10}

# name -> the keyword sets each is called with, on a [4, 6] or [3, 4, 5] input.
ONE_DIM = ({}, {"n": 4}, {"n": 9}, {"dim": 0}, {"n": 3, "dim": -2})
MANY_DIMS = ({}, {"s": (3, 4)}, {"dim": (0, 2)}, {"s": (5, -1), "dim": (2, 0)})
TWO_DIMS = ({}, {"s": (2, 7)}, {"dim": (0, 1)})
CALLS: dict[str, tuple[dict[str, Any], ...]] = {
    **{name: ONE_DIM for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")},
    **{
        name: MANY_DIMS
        for name in ("fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn")
    },
    **{
        name: TWO_DIMS
        for name in ("fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2")
    },
}
REAL_ONLY = {"rfft", "rfftn", "rfft2", "ihfft", "ihfftn", "ihfft2"}


def _inputs(name: str, dtype: str, rng: np.random.Generator) -> np.ndarray:
    shape = (4, 6) if name in ONE_DIM_NAMES else (3, 4, 5)
    values = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


ONE_DIM_NAMES = {
    n for n, calls in CALLS.items() if calls is ONE_DIM or calls is TWO_DIMS
}


def _cotangent(
    shape: tuple[int, ...], dtype: Any, rng: np.random.Generator
) -> np.ndarray:
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


def _compare(name: str, dtype: str, kwargs: dict[str, Any], norm: str | None) -> None:
    rng = np.random.default_rng(0)
    a = _inputs(name, dtype, rng)
    ours_in = yg.tensor(a, requires_grad=True)
    theirs_in = torch.tensor(a, requires_grad=True)
    ours = getattr(yg.fft, name)(ours_in, norm=norm, **kwargs)
    theirs = getattr(torch.fft, name)(theirs_in, norm=norm, **kwargs)
    where = f"{name}({dtype}, {kwargs}, norm={norm})"
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch."), where
    assert tuple(ours.shape) == tuple(theirs.shape), where
    tol = TOLERANCE[dtype]
    want = theirs.detach().resolve_conj().numpy()
    np.testing.assert_allclose(
        ours.detach().numpy(), want, rtol=tol, atol=tol, err_msg=where
    )
    cotangent = _cotangent(want.shape, want.dtype, rng)
    ours.backward(yg.tensor(cotangent))
    theirs.backward(torch.tensor(cotangent))
    np.testing.assert_allclose(
        ours_in.grad.numpy(),
        theirs_in.grad.resolve_conj().numpy(),
        rtol=tol,
        atol=tol,
        err_msg=where,
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(CALLS))
def test_transform_and_gradient_match_torch(name: str, dtype: str) -> None:
    if name in REAL_ONLY and dtype.startswith("complex"):
        pytest.skip(f"{name} takes a real input (its refusal is tested below)")
    for kwargs in CALLS[name]:
        for norm in NORMS:
            _compare(name, dtype, kwargs, norm)


@pytest.mark.parametrize(
    "forward, inverse, kwargs",
    [
        ("fft", "ifft", {}),
        ("rfft", "irfft", {"n": 6}),
        ("ihfft", "hfft", {"n": 6}),
        ("fftn", "ifftn", {}),
        ("rfftn", "irfftn", {"s": (4, 6)}),
        ("rfft2", "irfft2", {"s": (4, 6)}),
        ("ihfftn", "hfftn", {"s": (4, 6)}),
    ],
)
@pytest.mark.parametrize("norm", NORMS)
def test_round_trip_gives_the_signal_and_torch_gradients(
    forward: str, inverse: str, kwargs: dict[str, Any], norm: str | None
) -> None:
    """inverse(forward(x)) is x again, with torch's gradient."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 6))
    if forward in ("fft", "fftn"):
        a = a + 1j * rng.standard_normal((4, 6))
    cotangent = _cotangent(a.shape, a.dtype, rng)
    results = []
    for lib in (yg, torch):
        x = lib.tensor(a, requires_grad=True)
        spectrum = getattr(lib.fft, forward)(x, norm=norm)
        back = getattr(lib.fft, inverse)(spectrum, norm=norm, **kwargs)
        np.testing.assert_allclose(back.detach().numpy(), a, atol=1e-12)
        back.backward(lib.tensor(cotangent))
        results.append(x.grad.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("normalization", [0, 1, 2])
def test_primitives_on_complex_inputs_match_torch(normalization: int) -> None:
    """_fft_c2r's doubling of the entries Hermitian symmetry repeats (even and
    odd signal lengths), _fft_c2c both ways, and _fft_r2c's zero-padded adjoint,
    with complex cotangents; forward mode by torch's forward AD."""
    rng = np.random.default_rng(2)
    z = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    r = rng.standard_normal((3, 7))
    calls = [
        ("_fft_c2r", z, ([0, 1], normalization, 6)),
        ("_fft_c2r", z, ([1], normalization, 7)),
        ("_fft_c2c", z, ([0, 1], normalization, True)),
        ("_fft_c2c", z, ([1], normalization, False)),
        ("_fft_r2c", r, ([1, 0], normalization, True)),
        ("_fft_r2c", r, ([1], normalization, False)),
    ]
    for op, a, args in calls:
        x, t = yg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        ours, theirs = getattr(yg, op)(x, *args), getattr(torch, op)(t, *args)
        np.testing.assert_allclose(
            ours.detach().numpy(), theirs.detach().numpy(), atol=1e-12
        )
        assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
        cotangent = _cotangent(tuple(theirs.shape), theirs.detach().numpy().dtype, rng)
        ours.backward(yg.tensor(cotangent))
        theirs.backward(torch.tensor(cotangent))
        np.testing.assert_allclose(
            x.grad.numpy(), t.grad.numpy(), atol=1e-12, err_msg=op
        )
        tangent = rng.standard_normal(a.shape).astype(a.dtype)
        with yg.autograd.forward_ad.dual_level():
            dual = yg.autograd.forward_ad.make_dual(yg.tensor(a), yg.tensor(tangent))
            jvp = yg.autograd.forward_ad.unpack_dual(
                getattr(yg, op)(dual, *args)
            ).tangent
        with torch.autograd.forward_ad.dual_level():
            dual = torch.autograd.forward_ad.make_dual(
                torch.tensor(a), torch.tensor(tangent)
            )
            want = torch.autograd.forward_ad.unpack_dual(
                getattr(torch, op)(dual, *args)
            ).tangent
        np.testing.assert_allclose(jvp.numpy(), want.numpy(), atol=1e-12, err_msg=op)


def test_dtype_is_kept_and_integers_promote() -> None:
    assert yg.fft.fft(yg.ones(4, dtype=yg.complex64)).dtype is yg.complex64
    assert yg.fft.rfft(yg.ones(4, dtype=yg.float32)).dtype is yg.complex64
    assert yg.fft.irfft(yg.ones(3, dtype=yg.complex64)).dtype is yg.float32
    assert yg.fft.fft(yg.tensor([1, 2, 3])).dtype is yg.complex64
    assert yg.fft.fftn(yg.ones(2, 2, dtype=yg.float64)).grad_fn is None


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x, z: lib.fft.fft(x, norm="bad"),
        lambda lib, x, z: lib.fft.fft(x, n=0),
        lambda lib, x, z: lib.fft.fft(x, dim=2),
        lambda lib, x, z: lib.fft.rfft(z),
        lambda lib, x, z: lib.fft.ihfft(z),
        lambda lib, x, z: lib.fft.ihfftn(z),
        lambda lib, x, z: lib.fft.rfftn(z),
        lambda lib, x, z: lib.fft.rfft2(z),
        lambda lib, x, z: lib.fft.irfft(x, n=0),
        lambda lib, x, z: lib.fft.irfft(x[:, :1]),
        lambda lib, x, z: lib.fft.fftn(x, s=(3, 3, 3)),
        lambda lib, x, z: lib.fft.fftn(x, s=(3, 3), dim=(0,)),
        lambda lib, x, z: lib.fft.fftn(x, dim=(0, 0)),
        lambda lib, x, z: lib.fft.fftn(x, s=(0, 3)),
        lambda lib, x, z: lib.fft.fft(x.half()),
        lambda lib, x, z: lib.fft.fft2(x[0]),
        lambda lib, x, z: lib.fft.fft(x[0, 0]),
        lambda lib, x, z: lib.fft.rfftn(x, dim=()),
        lambda lib, x, z: lib.fft.irfftn(z, dim=()),
        lambda lib, x, z: lib.stft(x[0], 4),
        lambda lib, x, z: lib.stft(x[0], 9, center=False, return_complex=True),
        lambda lib, x, z: lib.stft(x, 4, center=True, align_to_window=False),
        lambda lib, x, z: lib.istft(z, 6, hop_length=7),
        lambda lib, x, z: lib.istft(z, 6, win_length=7),
        lambda lib, x, z: lib.istft(z, 6, window=lib.ones(5, dtype=lib.float64)),
        lambda lib, x, z: lib.istft(z * 0, 6, window=lib.zeros(6, dtype=lib.float64)),
        lambda lib, x, z: lib.istft(z[0], 6),
        lambda lib, x, z: lib.istft(z.reshape(1, 1, 1, 4, 6), 6),
        lambda lib, x, z: lib.stft(x[0], 4, hop_length=0, return_complex=True),
        lambda lib, x, z: lib.stft(x[0], 4, win_length=5, return_complex=True),
        lambda lib, x, z: lib.stft(x[0], 4, window=lib.ones(3), return_complex=True),
        lambda lib, x, z: lib.istft(x, 4),
        lambda lib, x, z: lib.istft(z, 4, onesided=True),
        lambda lib, x, z: lib.istft(z, 6, onesided=False),
    ],
)
def test_bad_calls_raise_torch_errors(call: Any) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 6))
    z = x + 1j * rng.standard_normal((4, 6))
    errors = []
    for lib in (yg, torch):
        with pytest.raises((RuntimeError, IndexError, ValueError)) as info:
            call(lib, lib.tensor(x), lib.tensor(z))
        errors.append((info.type.__name__, torch_text(info.value)))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("n, d", [(1, 1.0), (4, 1.0), (5, 0.1), (8, 2.5)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_frequencies_and_shifts_match_torch(n: int, d: float, dtype: str) -> None:
    for name in ("fftfreq", "rfftfreq"):
        ours = getattr(yg.fft, name)(n, d, dtype=getattr(yg, dtype))
        theirs = getattr(torch.fft, name)(n, d, dtype=getattr(torch, dtype))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    a = np.arange(n * 3, dtype=dtype).reshape(3, n)
    for name in ("fftshift", "ifftshift"):
        for dim in (None, 1, (0, 1), -2):
            x, t = yg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
            ours = getattr(yg.fft, name)(x, dim=dim)
            theirs = getattr(torch.fft, name)(t, dim=dim)
            np.testing.assert_array_equal(
                ours.detach().numpy(), theirs.detach().numpy()
            )
            weights = np.arange(a.size, dtype=dtype).reshape(a.shape)
            ours.backward(yg.tensor(weights))
            theirs.backward(torch.tensor(weights))
            np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


STFT_CALLS = [
    {"n_fft": 8, "window": "hamming"},
    {"n_fft": 8, "hop_length": 3, "window": "hamming"},
    {"n_fft": 8, "win_length": 6, "window": "hamming"},
    {"n_fft": 8, "window": "hamming", "center": False},
    {"n_fft": 8, "window": "hamming", "pad_mode": "constant", "normalized": True},
    {"n_fft": 8, "hop_length": 2, "window": "hamming", "onesided": False},
]


REAL_OF = {"float32": "float32", "float64": "float64", "complex64": "float32"}
REAL_OF["complex128"] = "float64"


def _stft_args(lib: Any, kwargs: dict[str, Any], dtype: str) -> dict[str, Any]:
    """The keywords of one call, with a Hamming window of the signal's precision
    that requires grad."""
    kwargs = dict(kwargs)
    if kwargs.get("window") == "hamming":
        size = kwargs.get("win_length", kwargs["n_fft"])
        # A Hamming window: nonzero at its ends, so that a frame of a signal
        # that is not centred still has its overlap-added envelope.
        hamming = 0.54 - 0.46 * np.cos(2 * np.pi * np.arange(size) / size)
        kwargs["window"] = lib.tensor(
            hamming.astype(REAL_OF[dtype]), requires_grad=True
        )
    return kwargs


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kwargs", STFT_CALLS, ids=str)
def test_stft_and_istft_match_torch(kwargs: dict[str, Any], dtype: str) -> None:
    """stft of a batch of signals, and istft of its result back to the signal:
    values, and the gradients of the signal and of the window, as torch's."""
    rng = np.random.default_rng(4)
    complex_signal = dtype.startswith("complex")
    a = rng.standard_normal((2, 40))
    if complex_signal:
        kwargs = {**kwargs, "onesided": False}
        a = a + 1j * rng.standard_normal((2, 40))
    a = a.astype(dtype)
    tol = TOLERANCE[dtype] * 10
    results = []
    cotangents: list[np.ndarray] = []
    for lib in (yg, torch):
        x = lib.tensor(a, requires_grad=True)
        args = _stft_args(lib, kwargs, dtype)
        spec = lib.stft(x, return_complex=True, **args)
        args.pop("pad_mode", None)
        back = lib.istft(spec, length=40, return_complex=complex_signal, **args)
        outputs = [spec, back]
        if not cotangents:
            cotangents = [
                _cotangent(tuple(o.shape), o.detach().numpy().dtype, rng)
                for o in outputs
            ]
        lib.autograd.backward(outputs, [lib.tensor(c) for c in cotangents])
        window = args.get("window")
        results.append(
            [o.detach().numpy() for o in outputs]
            + [x.grad.numpy()]
            + ([] if window is None else [window.grad.numpy()])
        )
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(results[0][1], a, rtol=tol, atol=tol)


def test_fft_runs_on_dask_lazily() -> None:
    """The kernels call the array namespace's fft, here Dask's: a transformed
    dim in several chunks is one chunk first (Dask's FFTs need that)."""
    da = pytest.importorskip("dask.array")
    a = np.random.default_rng(5).standard_normal((4, 6))
    x = yg.from_dask(da.from_array(a, chunks=(2, 3)))
    ours = yg.fft.rfft2(x, norm="ortho")
    back = yg.fft.ifft(yg.fft.fft(x, dim=0), dim=0)
    assert hasattr(ours._data, "dask") and hasattr(back._data, "dask")
    spectrum, signal = yg.compute(ours, back)
    np.testing.assert_allclose(
        spectrum.numpy(), np.fft.rfft2(a, norm="ortho"), atol=1e-12
    )
    np.testing.assert_allclose(signal.numpy(), a, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_grad_fn_is_torchs(name: str) -> None:
    """The last node of each transform, for a real and a complex input: the
    primitive's (FftR2CBackward0, ...), or ConjBackward0 where PyTorch
    conjugates last (ifft of a real input, ihfft)."""
    a = np.random.default_rng(6).standard_normal((4, 6))
    for values in (a, a + 1j * a):
        if name in REAL_ONLY and values.dtype.kind == "c":
            continue
        names = [
            type(getattr(lib.fft, name)(lib.tensor(values, requires_grad=True)).grad_fn)
            for lib in (yg, torch)
        ]
        assert names[0].__name__ == names[1].__name__, name


def test_stft_and_istft_are_tensor_methods_too() -> None:
    x = yg.tensor(np.random.default_rng(7).standard_normal(32))
    window = yg.ones(8, dtype=yg.float64)
    spec = x.stft(8, window=window, return_complex=True)
    assert spec.istft(8, window=window, length=32).shape == (32,)
