"""Tensors over Dask and CuPy arrays: lazy graphs, one pass, the same errors.

A least-squares gradient over chunked Dask arrays builds one graph through the
forward and the backward without computing anything (a scheduler callback
counts computes), `yg.compute` evaluates loss and gradient in one pass, and the
result agrees with numpy; an optimizer's step persists the parameters; a
LocalCluster with two worker processes gives the same gradient. Mixed backends
raise PyTorch's same-device error, numpy-only ops their reason. CuPy runs the
same path when CuPy and a GPU are present.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import yamlgrad as yg
import yamlgrad.nn.functional as F
from support import (
    INFOS,
    build_args,
    call,
    compute_counter,
    gpu_cupy,
    op_id,
    python_names,
    sample_inputs,
    wrapper,
)
from yamlgrad.runtime import backend
from yamlgrad.tools.model import DifferentiabilityInfo

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

REPO = Path(__file__).resolve().parents[2]


def _problem(rows: int = 600, cols: int = 5, chunk: int = 150) -> tuple:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, cols))
    y = rng.standard_normal((rows, 1))
    w = rng.standard_normal((cols, 1))
    X = yg.from_dask(da.from_array(x, chunks=(chunk, cols)))
    Y = yg.as_tensor(da.from_array(y, chunks=(chunk, 1)))
    W = yg.tensor(w).to("dask").requires_grad_()
    return x, y, w, X, Y, W


def _reference(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, np.ndarray]:
    r = x @ w - y
    return float(np.mean(r**2)), 2 * x.T @ r / r.size


def test_lstsq_backward_builds_one_graph_and_computes_once() -> None:
    x, y, w, X, Y, W = _problem()
    with compute_counter() as counter:
        loss = ((X @ W - Y) ** 2).mean()
        loss.backward()
        assert counter.count == 0  # forward and backward only build the graph
        assert type(W.grad._data) is type(X._data)  # AccumulateGrad kept it lazy
        value, grad = yg.compute(loss, W.grad)
        assert counter.count == 1  # loss and gradient in one pass
    want_loss, want_grad = _reference(x, y, w)
    assert abs(value.item() - want_loss) < 1e-10
    np.testing.assert_allclose(grad.numpy(), want_grad, rtol=0, atol=1e-10)


def test_autograd_grad_hands_out_lazy_gradients() -> None:
    x, y, w, X, Y, W = _problem()
    with compute_counter() as counter:
        loss = ((X @ W - Y) ** 2).mean()
        (grad,) = yg.autograd.grad(loss, W)
        assert counter.count == 0 and backend.is_lazy(grad._data)
    np.testing.assert_allclose(grad.numpy(), _reference(x, y, w)[1], atol=1e-10)


def test_gradients_accumulate_lazily() -> None:
    x, y, w, X, Y, W = _problem()
    with compute_counter() as counter:
        for _ in range(2):
            ((X @ W - Y) ** 2).mean().backward()
        assert counter.count == 0
    np.testing.assert_allclose(W.grad.numpy(), 2 * _reference(x, y, w)[1], atol=1e-10)


def test_mlp_step_on_dask_matches_numpy() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((64, 4)), rng.standard_normal((64, 1))
    w1, b1, w2 = (
        rng.standard_normal((8, 4)),
        rng.standard_normal(8),
        rng.standard_normal((1, 8)),
    )

    def step(to: str) -> list[np.ndarray]:
        X, Y = yg.tensor(x).to(to), yg.tensor(y).to(to)
        params = [yg.tensor(p).to(to).requires_grad_() for p in (w1, b1, w2)]
        loss = F.mse_loss(
            F.linear(F.relu(F.linear(X, params[0], params[1])), params[2]), Y
        )
        loss.backward()
        opt = yg.optim.SGD(params, lr=0.1)
        opt.step()
        return [p.detach().numpy() for p in params]

    for got, want in zip(step("dask"), step("cpu")):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_optimizer_step_persists_parameters() -> None:
    x, y, w, X, Y, W = _problem()
    opt = yg.optim.SGD([W], lr=0.5)
    for _ in range(3):
        opt.zero_grad()
        ((X @ W - Y) ** 2).mean().backward()
        opt.step()
        # The parameter holds its values, not the graph that made them.
        assert len(W._data.__dask_graph__()) == W._data.npartitions
    for _ in range(3):
        w = w - 0.5 * _reference(x, y, w)[1]
    np.testing.assert_allclose(W.detach().numpy(), w, atol=1e-10)


def test_anomaly_mode_on_dask_computes_nothing_and_defers_its_nan_check() -> None:
    """Under detect_anomaly() the backward computes nothing; the NaN check runs
    on the gradient's chunks when they are computed, with anomaly mode's error."""
    x, y, w, X, Y, W = _problem()
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        anomaly = yg.autograd.detect_anomaly()
    with compute_counter() as counter:
        with anomaly:
            ((X @ W - Y) ** 2).mean().backward()
        assert counter.count == 0
        (grad,) = yg.compute(W.grad)
        assert counter.count == 1
    np.testing.assert_allclose(grad.numpy(), _reference(x, y, w)[1], atol=1e-10)
    v = yg.from_dask(da.from_array(np.array([1.0, 0.0, 2.0, 3.0]), chunks=2))
    v.requires_grad_()
    with compute_counter() as counter, anomaly, np.errstate(invalid="ignore"):
        (v / v).sum().backward()
        assert counter.count == 0
    with (
        pytest.warns(UserWarning, match="Error detected in DivBackward0"),
        pytest.raises(RuntimeError) as e,
        np.errstate(invalid="ignore"),
    ):
        yg.compute(v.grad)
    assert (
        str(e.value) == "Function 'DivBackward0' returned nan values in its 1th output."
    )


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_on_dask_computes_nothing_and_defers_its_check(
    norm_type: float,
) -> None:
    x, y, w, X, Y, W = _problem()
    ((X @ W - Y) ** 2).mean().backward()
    V = yg.tensor(w).requires_grad_()
    ((yg.tensor(x) @ V - yg.tensor(y)) ** 2).mean().backward()
    want = yg.nn.utils.clip_grad_norm_([V], 0.01, norm_type)
    with compute_counter() as counter:
        total = yg.nn.utils.clip_grad_norm_([W], 0.01, norm_type, True)
        assert counter.count == 0
    total, grad = yg.compute(total, W.grad)
    np.testing.assert_allclose(total.numpy(), want.numpy(), rtol=1e-12)
    np.testing.assert_allclose(grad.numpy(), V.grad.numpy(), rtol=1e-12)
    p = yg.from_dask(da.from_array(np.array([1.0, np.inf]), chunks=1))
    p.requires_grad_()
    (p * p).sum().backward()
    with compute_counter() as counter:
        total = yg.nn.utils.clip_grad_norm_([p], 1.0, norm_type, True)
        assert counter.count == 0
    with pytest.raises(RuntimeError, match="non-finite, so it cannot be clipped"):
        yg.compute(total)


def test_a_mean_gradient_broadcast_over_many_rows_stays_chunked() -> None:
    """Dask's broadcast_to makes a stretched dim one chunk, whatever its size:
    a mean's gradient over a 40 GiB X's rows would be one array of 8 bytes a
    row. yamlgrad's chunks it by Dask's chunk size instead."""
    with dask.config.set({"array.chunk-size": "1KiB"}):
        x = yg.from_dask(da.ones((1000, 1), chunks=(100, 1))).requires_grad_()
        x.mean().backward()
        rows = x.grad._data.chunks[0]
    assert len(rows) > 1 and max(rows) * 8 <= 1024
    np.testing.assert_array_equal(x.grad.numpy(), np.full((1000, 1), 1e-3))


def test_repr_device_and_transfer_compute_nothing_until_asked() -> None:
    _, _, w, X, Y, W = _problem()
    with compute_counter() as counter:
        text = repr(X @ W)
        assert counter.count == 0
    assert (
        "<lazy>" in text and "device='dask'" in text and "grad_fn=<MmBackward0>" in text
    )
    assert str(X.device) == "dask" and yg.tensor(w).device == yg.device("cpu")
    np.testing.assert_array_equal(W.detach().cpu().numpy(), w)
    np.testing.assert_array_equal(W.detach().to("cpu").numpy(), w)


def test_mixed_backends_raise_pytorch_same_device_error() -> None:
    _, _, w, X, _, _ = _problem()
    with pytest.raises(RuntimeError) as e:
        yg.tensor(w.T) @ X.T
    assert str(e.value) == (
        "Expected all tensors to be on the same device, but found at least two "
        "devices, cpu and dask!"
    )


def test_numpy_only_op_says_why_on_dask() -> None:
    _, _, _, X, _, _ = _problem()
    match = "masked_select: not implemented for the dask backend: this op runs on numpy"
    with pytest.raises(NotImplementedError, match=match):
        yg.masked_select(X, X > 0)


BLOCKWISE = tuple(i for i in INFOS if i.runs_on_dask_blockwise and not i.inplace)


@pytest.mark.parametrize("info", BLOCKWISE, ids=op_id)
def test_blockwise_entry_runs_lazily_on_dask_chunks(
    info: DifferentiabilityInfo,
) -> None:
    """An entry marked `backends: [numpy, dask]`: its samples, forward and
    backward, on Dask arrays of small chunks build a graph without computing,
    and give numpy's values, dtypes and gradients."""
    rng = np.random.default_rng(0)
    for sample in info.samples:
        kwargs, _ = sample_inputs(info, sample, rng, np.float32)
        results = []
        for convert in (yg.tensor, _chunked):
            tensors = {k: convert(v) for k, v in kwargs.items() if _is_array(v)}
            leaves = [
                tensors[d.var_name] for d in info.derivatives if not d.not_implemented
            ]
            for leaf in leaves:
                leaf.requires_grad_()
            with compute_counter() as computes:
                out = call(info, kwargs, tensors)
                if leaves:
                    out.sum().backward()
            results.append((out, [leaf.grad for leaf in leaves], computes.count))
        (want, want_grads, _), (got, got_grads, computes) = results
        assert computes == 0 and backend.is_lazy(got._data)
        values = yg.compute(got, *got_grads)
        assert values[0].dtype == want.dtype
        for g, w in zip(values, [want, *want_grads]):
            np.testing.assert_allclose(g.numpy(), w.detach().numpy(), rtol=1e-6)


def _is_array(value: object) -> bool:
    return isinstance(value, np.ndarray)


def _chunked(value: np.ndarray) -> yg.Tensor:
    return yg.from_dask(da.from_array(value, chunks=2))


def test_blockwise_entry_refuses_array_api_strict_with_its_reason() -> None:
    xps = pytest.importorskip("array_api_strict")
    x = yg.as_tensor(xps.asarray([0.5, 1.0]))
    with pytest.raises(
        NotImplementedError, match="runs on numpy, Dask and CuPy arrays"
    ):
        yg.erf(x)


NUMPY_ONLY = tuple(
    i
    for i in INFOS
    if i.numpy_only
    and not i.runs_on_dask_blockwise
    and i.composite is None
    and i.samples
)


@pytest.mark.parametrize("info", NUMPY_ONLY, ids=op_id)
def test_numpy_only_overload_refuses_dask_naming_itself(info) -> None:
    """The guard is the overload's, not its op name's: `max.dim` numpy-only
    beside a portable `max` still refuses a Dask tensor, with its own reason."""
    kwargs, _ = sample_inputs(
        info, info.samples[0], np.random.default_rng(0), np.float64
    )
    lazy = build_args(kwargs, {}, lambda v: yg.from_dask(da.from_array(v, chunks=-1)))
    if not any(isinstance(v, (yg.Tensor, list)) for v in lazy.values()):
        pytest.skip("the sample has no tensor")
    message = (
        f"{info.func.qualified_name}: not implemented for the dask backend: this op "
        f"runs on numpy arrays only ({info.numpy_only})."
    )
    with pytest.raises(NotImplementedError, match=re.escape(message)):
        wrapper(info)(**python_names(lazy))


def test_inplace_rebinds_immutable_array_and_refuses_a_view() -> None:
    v = yg.from_dask(da.ones((4,), chunks=2))
    version = v._version
    v.mul_(3.0)
    assert v._version == version + 1
    np.testing.assert_array_equal(v.numpy(), [3.0] * 4)
    with pytest.raises(
        RuntimeError, match="a view of a dask tensor cannot be modified"
    ):
        v.view(2, 2).add_(1.0)


def test_local_cluster_with_two_worker_processes() -> None:
    distributed = pytest.importorskip("distributed")
    x, y, w, X, Y, W = _problem()
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster),
    ):
        ((X @ W - Y) ** 2).mean().backward()
        (grad,) = yg.compute(W.grad)
    np.testing.assert_allclose(grad.numpy(), _reference(x, y, w)[1], atol=1e-10)


def test_lstsq_benchmark_small_run(tmp_path: Path) -> None:
    """benchmarks/dask_lstsq.py end to end, at a tiny size: data on disk, the
    gradient, the agreement check."""
    run = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "dask_lstsq.py"),
            "--gib",
            "0.002",
            "--cols",
            "8",
            "--dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "agrees with the chunked numpy reference" in run.stdout


def test_cupy_runs_the_same_path() -> None:
    cupy = gpu_cupy()
    rng = np.random.default_rng(0)
    x, y, w = (
        rng.standard_normal((64, 5)),
        rng.standard_normal((64, 1)),
        rng.standard_normal((5, 1)),
    )
    X = yg.as_tensor(cupy.asarray(x))
    Y = yg.as_tensor(cupy.asarray(y))
    W = yg.as_tensor(cupy.asarray(w)).requires_grad_()
    ((X @ W - Y) ** 2).mean().backward()
    assert str(W.device) == "cuda:0"
    np.testing.assert_allclose(W.grad.numpy(), _reference(x, y, w)[1], atol=1e-10)
