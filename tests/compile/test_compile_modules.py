"""yg.compile of an nn.Module (PyTorch's OptimizedModule), Module.compile(), and
torch.compile's options, each compared with torch where torch has them."""

from __future__ import annotations

import copy
import functools

import numpy as np
import pytest
import torch

import yamlgrad as yg
from yamlgrad.runtime import compile as compile_module


def _pair(seed: int = 0) -> tuple[yg.nn.Module, torch.nn.Module]:
    """The same small model in yamlgrad and torch (batch norm: train and eval differ)."""
    ours = yg.nn.Sequential(
        yg.nn.Linear(4, 6), yg.nn.BatchNorm1d(6), yg.nn.Tanh(), yg.nn.Linear(6, 2)
    ).double()
    theirs = torch.nn.Sequential(
        torch.nn.Linear(4, 6),
        torch.nn.BatchNorm1d(6),
        torch.nn.Tanh(),
        torch.nn.Linear(6, 2),
    ).double()
    rng = np.random.default_rng(seed)
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        value = rng.standard_normal(tuple(p.shape))
        p.data = yg.tensor(value)
        q.data = torch.tensor(value)
    return ours, theirs


def _x(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((8, 4))


def _step(model: object, lib: object, x: np.ndarray) -> tuple[np.ndarray, list]:
    out = model(lib.tensor(x))  # type: ignore[operator, attr-defined]
    (out**2).sum().backward()
    grads = [p.grad.numpy().copy() for p in model.parameters()]  # type: ignore[attr-defined]
    for p in model.parameters():  # type: ignore[attr-defined]
        p.grad = None
    return out.detach().numpy(), grads


def _graphs(compiled: compile_module.CompiledFunction) -> int:
    return sum(len(g) for g in compiled.graphs.values() if isinstance(g, list))


def test_compile_of_a_module_is_an_optimized_module_like_torchs() -> None:
    ours, theirs = _pair()
    cm, tm = yg.compile(ours), torch.compile(theirs)
    assert type(cm).__name__ == type(tm).__name__ == "OptimizedModule"
    assert cm._orig_mod is ours
    assert repr(cm).replace("yamlgrad", "torch") == repr(tm).replace("float64", "")
    assert list(cm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in cm.named_parameters()] == [
        n for n, _ in tm.named_parameters()
    ]
    assert all(a is b for a, b in zip(cm.parameters(), ours.parameters()))
    # Other attributes are the module's; items are not (torch's too).
    linear, tlinear = yg.compile(yg.nn.Linear(2, 3)), torch.compile(
        torch.nn.Linear(2, 3)
    )
    assert linear.out_features == tlinear.out_features == 3
    with pytest.raises(TypeError):
        tm[0]
    with pytest.raises(TypeError):
        cm[0]


def test_optimized_module_matches_torch_in_train_then_eval() -> None:
    ours, theirs = _pair()
    cm = yg.compile(ours)
    for mode in ("train", "eval", "train"):
        getattr(cm, mode)()
        theirs.train(mode == "train")
        assert ours.training == (mode == "train") == ours[1].training
        got, grads = _step(cm, yg, _x())
        want, twant = _step(theirs, torch, _x())
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
        for g, t in zip(grads, twant):
            np.testing.assert_allclose(g, t, rtol=1e-9, atol=1e-12)
    calls = cm.__dict__["_compiled_call_impl"]
    assert _graphs(calls) == 2  # train and eval: the second train call reused
    assert "training mode changed (train -> eval)" in calls.recompile_reasons[0]
    out = cm(yg.tensor(_x()))
    assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"


def test_module_compile_compiles_in_place() -> None:
    ours, _ = _pair()
    twin = copy.deepcopy(ours)  # the same calls, eagerly
    assert ours.compile() is None
    out = ours(yg.tensor(_x()))
    assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"
    twin(yg.tensor(_x()))
    got, want = _step(ours, yg, _x()), _step(twin, yg, _x())
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-13)
    for m in (ours, twin):  # the running statistics were updated alike
        m.eval()
    np.testing.assert_allclose(
        ours(yg.tensor(_x(2))).detach().numpy(),
        twin(yg.tensor(_x(2))).detach().numpy(),
        rtol=1e-12,
    )
    assert ours[1].num_batches_tracked.item() == twin[1].num_batches_tracked.item() == 2


def test_a_deep_copy_of_a_compiled_module_follows_its_own_mode() -> None:
    ours, _ = _pair()
    ours.compile()
    ours(yg.tensor(_x()))
    twin = copy.deepcopy(ours)
    twin.eval()
    assert ours.training and not twin.training
    x = yg.tensor(_x(3))
    want = copy.deepcopy(ours).eval()._call_impl(x).detach().numpy()  # eager, eval
    np.testing.assert_allclose(twin(x).detach().numpy(), want, rtol=1e-12)


def test_disable_returns_the_model_itself() -> None:
    model = yg.nn.Linear(2, 2)
    assert yg.compile(model, disable=True) is model
    assert torch.compile(torch.nn.Linear(2, 2), disable=True) is not None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"mode": "fast"},
        {"mode": "default", "options": {"a": 1}},
        {"backend": "nope"},
    ],
)
def test_bad_options_raise_torchs_error(kwargs: dict) -> None:
    def f(x):  # noqa: ANN001, ANN202
        return x * 2

    with pytest.raises(RuntimeError) as want:
        torch.compile(f, **kwargs)(torch.ones(2))
    with pytest.raises(RuntimeError) as got:
        yg.compile(f, **kwargs)
    assert type(got.value).__name__ == type(want.value).__name__
    text = str(want.value)
    if "backend" in kwargs:  # names where the backends are listed, its own
        text = text.split(", see")[0]
    assert str(got.value).startswith(text)


def test_accepted_options_compile() -> None:
    for kwargs in (
        {"mode": "reduce-overhead", "fullgraph": True, "dynamic": False},
        {"mode": "max-autotune", "backend": "aot_eager"},
        {"options": {"trace.enabled": False}},
    ):
        f = yg.compile(lambda x: (x * x).sum(), **kwargs)
        x = yg.tensor([1.0, 2.0], requires_grad=True)
        f(x).backward()
        assert x.grad.tolist() == [2.0, 4.0]


def test_a_callable_backend_and_fullgraph_with_fallback_are_refused() -> None:
    with pytest.raises(NotImplementedError, match="backend given as a function"):
        yg.compile(lambda x: x, backend=lambda gm, inputs: gm)
    with pytest.raises(ValueError, match="fullgraph=True .* fallback=True"):
        yg.compile(lambda x: x, fullgraph=True, fallback=True)


def test_not_callable_raises_torchs_error() -> None:
    with pytest.raises(AssertionError) as want:
        torch.compile(3)
    with pytest.raises(AssertionError) as got:
        yg.compile(3)
    assert str(got.value) == str(want.value)


def test_a_partial_compiles() -> None:
    def scaled(k: float, x: yg.Tensor) -> yg.Tensor:
        return (x * k).sum()

    f = yg.compile(functools.partial(scaled, 3.0))
    x = yg.tensor([1.0, 2.0], requires_grad=True)
    f(x).backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert "partial" in f.__qualname__


def test_decorator_with_options() -> None:
    @yg.compile(mode="default", fallback=True)
    def f(x: yg.Tensor) -> yg.Tensor:
        return x * 2 if x.sum().item() > 0 else x

    assert f(yg.ones(2)).tolist() == [2.0, 2.0]


def test_a_failed_trace_leaves_the_externals_as_they_were() -> None:
    x = yg.tensor(_x()) @ yg.ones(4, 6, dtype=yg.float64)
    norm = yg.nn.BatchNorm1d(6, momentum=None).double()  # a cumulative average
    before = norm.num_batches_tracked._version
    with pytest.raises(compile_module.TraceError, match="momentum=None"):
        yg.compile(norm)(x)
    assert norm.num_batches_tracked.item() == 0
    assert norm.num_batches_tracked._version == before
    assert not norm.running_mean.numpy().any()
    eager = copy.deepcopy(norm)
    out = yg.compile(norm, fallback=True)(x)
    np.testing.assert_array_equal(out.detach().numpy(), eager(x).detach().numpy())
    assert norm.num_batches_tracked.item() == 1
