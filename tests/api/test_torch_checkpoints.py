"""PyTorch's checkpoint format: files of torch.save load here, files of yg.save
load in torch, and a hostile file runs nothing."""

from __future__ import annotations

import io
import os
import pickle
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import yamlgrad as yg


def test_torch_files_load_as_yamlgrad_tensors(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.randn(5, 3)).sum().backward()
    optimizer.step()
    torch.save(
        {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "view": torch.arange(6.0)[1:5:2],
            "param": torch.nn.Parameter(torch.ones(2)),
            "dtype": torch.float64,
            "epoch": 7,
        },
        tmp_path / "ckpt.pt",
    )
    got = yg.load(tmp_path / "ckpt.pt", map_location="cpu", weights_only=True)
    assert isinstance(got["model"], OrderedDict)
    assert list(got["model"]) == list(model.state_dict())
    for key, value in model.state_dict().items():
        assert isinstance(got["model"][key], yg.Tensor)
        np.testing.assert_array_equal(got["model"][key].numpy(), value.numpy())
    state = got["optimizer"]["state"][0]["exp_avg"]
    np.testing.assert_array_equal(
        state.numpy(), optimizer.state_dict()["state"][0]["exp_avg"].numpy()
    )
    assert got["view"].tolist() == [1.0, 3.0]
    assert isinstance(got["param"], yg.nn.Parameter) and got["param"].requires_grad
    assert got["dtype"] is yg.float64 and got["epoch"] == 7
    fresh = yg.nn.Sequential(yg.nn.Linear(3, 4), yg.nn.BatchNorm1d(4))
    fresh.load_state_dict(got["model"])


def test_yamlgrad_files_load_in_torch(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    model = yg.nn.Sequential(yg.nn.Linear(3, 4), yg.nn.BatchNorm1d(4))
    model(yg.randn(5, 3))
    values = {
        "model": model.state_dict(),
        "param": model[0].weight,
        "ints": yg.arange(5),
        "bools": yg.tensor([True, False]),
        "half": yg.ones(2, dtype=yg.float16),
        "empty": yg.zeros(0, 3),
        "scalar": yg.tensor(2.5),
        "strided": yg.arange(12.0).reshape(3, 4)[:, ::2],
        "dtype": yg.float64,
        "meta": {"step": 3, "lr": 0.1, "name": "x", "pair": (1, None)},
    }
    yg.save(values, tmp_path / "yg.pt")
    back = torch.load(tmp_path / "yg.pt")  # weights_only=True, torch's default
    reference = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    reference.load_state_dict(back["model"])
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(back["model"][key].numpy(), value.numpy())
    assert isinstance(back["param"], torch.nn.Parameter)
    for key in ("ints", "bools", "half", "empty", "scalar", "strided"):
        ours = values[key].numpy()
        assert (
            back[key].shape == ours.shape
            and str(back[key].dtype)[6:] == str(values[key].dtype)[9:]
        ), key
        np.testing.assert_array_equal(back[key].numpy(), ours)
    assert back["dtype"] is torch.float64 and back["meta"] == values["meta"]


def test_a_buffer_round_trips_in_the_torch_format() -> None:
    buffer = io.BytesIO()
    yg.save({"a": yg.ones(2), "n": [1, 2.5]}, buffer)
    buffer.seek(0)
    assert (
        zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
        .namelist()[0]
        .endswith("data.pkl")
    )
    loaded = yg.load(buffer)
    assert loaded["a"].tolist() == [1.0, 1.0] and loaded["n"] == [1, 2.5]


class _Payload:
    ran: list[str] = []

    def __reduce__(self) -> tuple:
        return (_Payload.ran.append, ("ran",))


def _checkpoint_with(payload: object, path: Path) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("archive/data.pkl", pickle.dumps(payload, protocol=2))
        archive.writestr("archive/version", "3\n")


@pytest.mark.parametrize(
    "payload",
    [_Payload(), {"a": os.system}, {"k": [_Payload()]}],
    ids=["reduce", "os.system", "nested"],
)
def test_a_hostile_checkpoint_runs_nothing(payload: object, tmp_path: Path) -> None:
    path = tmp_path / "evil.pt"
    _checkpoint_with(payload, path)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        yg.load(path, weights_only=False)
    assert _Payload.ran == []


def test_a_torch_checkpoint_of_a_whole_module_is_refused(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    torch.save(torch.nn.Linear(2, 2), tmp_path / "module.pt")
    with pytest.raises(
        pickle.UnpicklingError, match="Unsupported global: GLOBAL torch"
    ):
        yg.load(tmp_path / "module.pt")


def test_the_npz_format_stays_readable(tmp_path: Path) -> None:
    yg.save({"t": yg.ones(3), "raw": np.arange(3)}, tmp_path / "old.npz")
    loaded = yg.load(tmp_path / "old.npz")
    assert loaded["t"].tolist() == [1.0] * 3 and isinstance(loaded["raw"], np.ndarray)
