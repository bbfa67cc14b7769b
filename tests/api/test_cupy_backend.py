"""CuPy's code paths, on a stand-in for CuPy (tests/fake_cupy.py) and, when
CuPy and a GPU are present, on CuPy itself.

The entries marked `backends: [numpy, dask]` run their scipy.special kernel
through `backend.blockwise`; on CuPy arrays it calls the function of the same
name in `cupyx.scipy.special` (a kernel `_<name>` stands for scipy's `<name>`),
or refuses the op naming CuPy where cupyx has none. Every such entry's samples
either give numpy's values and gradients on the GPU arrays or raise that
error. The rest of the backend layer's CuPy paths: the device (`cuda:0`),
`.numpy()` (a copy to the host), `.to("cuda")` and back, the numpy-only
refusal and the same-device error.
"""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest
import scipy.special

import fake_cupy
import yamlgrad as yg
from support import INFOS, REPO_ROOT, call, gpu_cupy, op_id
from yamlgrad.runtime import backend
from yamlgrad.testing import sample_inputs
from yamlgrad.tools.model import DifferentiabilityInfo

BLOCKWISE = tuple(i for i in INFOS if i.runs_on_dask_blockwise and not i.inplace)


@pytest.fixture
def cupy(monkeypatch: pytest.MonkeyPatch) -> object:
    return fake_cupy.install(monkeypatch)


def _on_gpu(value: np.ndarray) -> yg.Tensor:
    return yg.tensor(value).to("cuda")


def test_blockwise_runs_cupyx_special_by_the_function_name(cupy: object) -> None:
    x = np.array([0.5, 1.5, 3.0])
    t = _on_gpu(x).requires_grad_()
    y = yg.lgamma(t)
    assert fake_cupy.CALLS == ["gammaln"]  # scipy.special.gammaln's name
    assert type(y._data) is fake_cupy.GpuArray and str(y.device) == "cuda:0"
    y.sum().backward()  # digamma: scipy.special.psi
    assert fake_cupy.CALLS == ["gammaln", "psi"]
    np.testing.assert_allclose(y.detach().numpy(), scipy.special.gammaln(x))
    np.testing.assert_allclose(t.grad.numpy(), scipy.special.psi(x))


def test_a_kernel_named_after_its_scipy_function_runs_it_in_its_dtype(
    cupy: object,
) -> None:
    """`_polygamma` stands for scipy.special.polygamma, which computes in
    float64; the result is cast to the op's dtype, as on numpy."""
    x = np.array([0.5, 1.5, 3.0], dtype=np.float32)
    y = yg.polygamma(2, _on_gpu(x))
    assert fake_cupy.CALLS == ["polygamma"]
    assert y.dtype == yg.float32 and type(y._data) is fake_cupy.GpuArray
    np.testing.assert_allclose(y.numpy(), yg.polygamma(2, yg.tensor(x)).numpy())


def test_a_function_cupyx_lacks_is_refused_naming_cupy(cupy: object) -> None:
    t = _on_gpu(np.array([0.5, 1.0]))
    message = (
        "not implemented for the cupy backend: this op's kernel computes airy_ai, "
        "which cupyx.scipy.special does not have. Call .numpy() on its inputs first."
    )
    with pytest.raises(NotImplementedError, match=re.escape(message)):
        yg.special.airy_ai(t)


@pytest.mark.parametrize("info", BLOCKWISE, ids=op_id)
def test_blockwise_entry_on_cupy_gives_numpy_numbers_or_names_cupy(
    info: DifferentiabilityInfo, cupy: object
) -> None:
    """Every `backends: [numpy, dask]` entry's samples, forward and backward,
    on CuPy arrays: numpy's values, dtypes and gradients, or the refusal
    naming the cupy backend (nothing computed on the host in between)."""
    rng = np.random.default_rng(0)
    for sample in info.samples:
        kwargs, _ = sample_inputs(info, sample, rng, np.float32)
        results = []
        for convert in (yg.tensor, _on_gpu):
            tensors = {
                k: convert(v) for k, v in kwargs.items() if isinstance(v, np.ndarray)
            }
            leaves = [
                tensors[d.var_name] for d in info.derivatives if not d.not_implemented
            ]
            for leaf in leaves:
                leaf.requires_grad_()
            try:
                out = call(info, kwargs, tensors)
                if leaves:
                    out.sum().backward()
            except NotImplementedError as e:
                assert convert is _on_gpu
                assert "not implemented for the cupy backend" in str(e)
                return
            results.append((out, [leaf.grad for leaf in leaves]))
        (want, want_grads), (got, got_grads) = results
        assert type(got._data) is fake_cupy.GpuArray and got.dtype == want.dtype
        for g, w in zip([got, *got_grads], [want, *want_grads]):
            assert type(g._data) is fake_cupy.GpuArray
            np.testing.assert_allclose(
                g.detach().numpy(), w.detach().numpy(), rtol=1e-6
            )


def test_device_transfer_and_errors(cupy: object) -> None:
    x = np.arange(6.0).reshape(2, 3)
    t = _on_gpu(x)
    assert str(t.device) == "cuda:0" and backend.device_name(t._data) == "cuda:0"
    back = t.numpy()
    assert type(back) is np.ndarray and not isinstance(back, fake_cupy.GpuArray)
    np.testing.assert_array_equal(back, x)
    assert t.to("cuda") is t and type(t.cpu()._data) is np.ndarray
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "Expected all tensors to be on the same device, but found at least two "
            "devices, cuda:0 and cpu!"
        ),
    ):
        t + yg.tensor(x)
    with pytest.raises(
        NotImplementedError,
        match="masked_select: not implemented for the cupy backend: this op runs "
        "on numpy arrays only",
    ):
        yg.masked_select(t, t > 1)


def test_cupyx_special_on_a_gpu() -> None:
    """On CuPy itself: an entry cupyx has (lgamma, its backward digamma) gives
    scipy's numbers on the GPU; one it lacks (Airy's Ai) is refused naming
    CuPy."""
    cupy = gpu_cupy()
    x = np.array([0.5, 1.5, 3.0])
    t = yg.as_tensor(cupy.asarray(x)).requires_grad_()
    y = yg.lgamma(t)
    y.sum().backward()
    assert type(y._data) is cupy.ndarray and type(t.grad._data) is cupy.ndarray
    np.testing.assert_allclose(y.detach().numpy(), scipy.special.gammaln(x))
    np.testing.assert_allclose(t.grad.numpy(), scipy.special.psi(x))
    with pytest.raises(NotImplementedError, match="not implemented for the cupy"):
        yg.special.airy_ai(t.detach())


def test_gpu_mlp_benchmark_small_run() -> None:
    """benchmarks/gpu_mlp.py at a tiny size: every runner's step agrees with
    the by-hand one, a row per runner; the GPU side runs where there is one
    and says why not elsewhere."""
    run = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / "gpu_mlp.py"), "--smoke"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "every runner's step agrees with the by-hand step" in run.stdout
    rows = [line.split("|")[1:-1] for line in run.stdout.splitlines() if "|" in line]
    cpu = [row[1].strip() for row in rows[2:] if row[0].strip() == "cpu (numpy)"]
    assert cpu == ["numpy by hand", "yamlgrad", "torch"]
    if _cupy_present() is None:
        assert any(row[0].strip() == "cuda (CuPy)" for row in rows[2:])
    else:
        assert "GPU side skipped" in run.stdout


def _cupy_present() -> str | None:
    """Why there is no GPU side here, or None."""
    try:
        import cupy

        return None if cupy.cuda.runtime.getDeviceCount() > 0 else "no device"
    except Exception as e:  # not installed, no driver
        return str(e)
