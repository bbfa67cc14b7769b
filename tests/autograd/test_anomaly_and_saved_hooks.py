"""Anomaly mode and saved-tensor hooks, with PyTorch's texts and behaviour."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import yamlgrad as yg


def test_detect_anomaly_warns_on_entry_and_names_the_nan_output() -> None:
    x = yg.tensor(0.0, requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        context = yg.autograd.detect_anomaly()
    with context, np.errstate(all="ignore"):
        y = x / x
        with pytest.warns(UserWarning, match="Error detected in DivBackward0"):
            with pytest.raises(
                RuntimeError,
                match=r"Function 'DivBackward0' returned nan values in its 1th output\.",
            ):
                y.backward()


def test_anomaly_mode_records_the_forward_stack_and_is_off_by_default() -> None:
    x = yg.tensor([1.0], requires_grad=True)
    assert (x * 2).grad_fn._metadata is None
    with yg.autograd.set_detect_anomaly(True):
        y = x * 2
    assert "test_anomaly_mode_records_the_forward_stack" in "".join(
        y.grad_fn.metadata["traceback_"]
    )


def test_anomaly_without_nan_check_lets_nan_through() -> None:
    x = yg.tensor(0.0, requires_grad=True)
    with (
        yg.autograd.set_detect_anomaly(True, check_nan=False),
        np.errstate(all="ignore"),
    ):
        (x / x).backward()
    assert np.isnan(x.grad.item())


def test_saved_tensors_hooks_pack_and_unpack_every_saved_tensor() -> None:
    log: list[Any] = []

    def pack(t: yg.Tensor) -> np.ndarray:
        log.append(("pack", tuple(t.shape)))
        return t.detach().numpy().copy()

    def unpack(a: np.ndarray) -> yg.Tensor:
        log.append("unpack")
        return yg.tensor(a)

    x = yg.tensor([1.0, 2.0], dtype=yg.float64, requires_grad=True)
    with yg.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * x).exp()  # MulBackward0 saves x twice, ExpBackward0 its result
    assert [entry for entry in log if entry != "unpack"] == [("pack", (2,))] * 3
    y.sum().backward()
    assert log.count("unpack") == 3
    np.testing.assert_allclose(
        x.grad.numpy(), 2 * np.array([1.0, 2.0]) * np.exp([1.0, 4.0])
    )


def test_saved_tensors_hooks_match_torch_call_counts() -> None:
    torch = pytest.importorskip("torch")
    counts = {}
    for lib in (yg, torch):
        calls = {"pack": 0, "unpack": 0}

        def pack(t: Any, calls: dict = calls) -> Any:
            calls["pack"] += 1
            return t

        def unpack(t: Any, calls: dict = calls) -> Any:
            calls["unpack"] += 1
            return t

        x = lib.tensor([0.5, 1.5], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            out = (x.sin() * x).sum()
        out.backward()
        counts[lib.__name__] = calls
    assert counts["yamlgrad"] == counts["torch"]
