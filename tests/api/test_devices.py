"""Devices as torch.device: every tensor on the CPU, CUDA named but refused with
PyTorch's error, torch.cuda / backends.mps / accelerator answering as on a
machine without them, the default device."""

from __future__ import annotations

import pickle

import pytest

import yamlgrad as yg
from yamlgrad.runtime import factories


def test_device_parses_prints_and_compares_as_torch() -> None:
    torch = pytest.importorskip("torch")
    for args in (("cpu",), ("cuda:1",), ("cuda", 1), ("cpu", 0)):
        ours, theirs = yg.device(*args), torch.device(*args)
        assert (repr(ours), str(ours)) == (repr(theirs), str(theirs))
        assert (ours.type, ours.index) == (theirs.type, theirs.index)
    assert yg.device("cpu") == yg.device(yg.device("cpu"))
    assert hash(yg.device("cpu")) == hash(yg.device("cpu"))
    assert pickle.loads(pickle.dumps(yg.device("cuda:2"))) == yg.device("cuda", 2)
    with pytest.raises(RuntimeError) as ours:
        yg.device("gpu")
    with pytest.raises(RuntimeError) as theirs:
        torch.device("gpu")
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", factories.__all__)
def test_every_factory_takes_device(name: str) -> None:
    import inspect

    fn = getattr(factories, name)
    if not inspect.isfunction(fn) or name in ("manual_seed", "seed", "initial_seed"):
        return
    if name in ("get_rng_state", "set_rng_state", "from_numpy"):
        return
    assert "device" in inspect.signature(fn).parameters, name


def test_factories_and_to_on_cpu_and_cuda() -> None:
    x = yg.zeros(2, 3, device="cpu")
    assert x.device == yg.device("cpu") and str(x.device) == "cpu"
    assert x.to("cpu") is x and x.cpu() is x and x.to(yg.device("cpu")) is x
    assert x.to("cpu", yg.float64).dtype == yg.float64
    assert x.to(yg.zeros(1, dtype=yg.int64)).dtype == yg.int64
    assert x.to(dtype=yg.float64, device="cpu").dtype == yg.float64
    copied = x.to("cpu", copy=True)
    assert copied is not x and yg.equal(copied, x)
    assert (x.is_cuda, x.is_cpu, x.get_device()) == (False, True, -1)
    for make in (
        lambda: yg.zeros(2, device="cuda"),
        lambda: yg.tensor([1.0], device=yg.device("cuda", 0)),
        lambda: x.cuda(),
        lambda: x.to("cuda"),
        lambda: yg.randn(2, device="cuda:0"),
    ):
        with pytest.raises(
            AssertionError, match="Torch not compiled with CUDA enabled"
        ):
            make()


def test_without_cuda_or_mps() -> None:
    assert yg.cuda.is_available() is False and yg.cuda.device_count() == 0
    yg.cuda.manual_seed(0)
    yg.cuda.manual_seed_all(0)
    assert yg.backends.mps.is_available() is False
    assert yg.accelerator.is_available() is False
    assert yg.accelerator.current_accelerator() is None


def test_default_device() -> None:
    assert yg.get_default_device() == yg.device("cpu")
    with yg.device("cpu"):
        assert yg.ones(1).device == yg.device("cpu")
    yg.set_default_device("cuda")
    try:
        assert yg.get_default_device() == yg.device("cuda")
        with pytest.raises(AssertionError):
            yg.zeros(1)
    finally:
        yg.set_default_device(None)
    assert yg.zeros(1).device == yg.device("cpu")


def test_module_to_device() -> None:
    model = yg.nn.Linear(2, 2)
    assert model.to("cpu") is model
    assert model.to(yg.device("cpu")) is model
