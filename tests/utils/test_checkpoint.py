"""yg.utils.checkpoint against torch.utils.checkpoint: the same outputs and
gradients with and without checkpointing, the same graph shapes, warnings and
errors, for both variants; and the saved-tensor hooks it builds on."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
import yamlgrad.nn.functional as F
from yamlgrad.utils.checkpoint import checkpoint, checkpoint_sequential

torch = pytest.importorskip("torch")
import torch.utils.checkpoint as torch_checkpoint  # noqa: E402

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3))
W = RNG.standard_normal((3, 3))


def block(lib: Any) -> Any:
    def f(x: Any, w: Any, scale: float = 1.0) -> Any:
        return ((x @ w).tanh() * scale).sin() @ w

    return f


def run(lib: Any, ckpt: Any, use_reentrant: bool, **kwargs: Any) -> tuple[Any, ...]:
    x = lib.tensor(X, requires_grad=True)
    w = lib.tensor(W, requires_grad=True)
    y = ckpt(block(lib), x, w, use_reentrant=use_reentrant, **kwargs)
    (y * y).sum().backward()
    return y, x.grad, w.grad


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_values_and_gradients_match_torch(use_reentrant: bool) -> None:
    mine = run(yg, checkpoint, use_reentrant)
    theirs = run(torch, torch_checkpoint.checkpoint, use_reentrant)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


def test_keyword_arguments_reach_the_function_without_reentrancy() -> None:
    mine = run(yg, checkpoint, False, scale=0.5)
    theirs = run(torch, torch_checkpoint.checkpoint, False, scale=0.5)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


def test_grad_fn_names() -> None:
    for lib, ckpt in ((yg, checkpoint), (torch, torch_checkpoint.checkpoint)):
        x = lib.tensor(X, requires_grad=True)
        w = lib.tensor(W, requires_grad=True)
        reentrant = ckpt(block(lib), x, w, use_reentrant=True)
        plain = ckpt(block(lib), x, w, use_reentrant=False)
        assert type(reentrant.grad_fn).__name__ == "CheckpointFunctionBackward"
        assert type(plain.grad_fn).__name__ == "MmBackward0"


def errors(lib: Any, ckpt: Any) -> list[str]:
    texts = []
    x = lib.tensor(X, requires_grad=True)
    w = lib.tensor(W, requires_grad=True)
    with pytest.raises(ValueError) as info:
        ckpt(block(lib), x, w, use_reentrant=True, scale=2.0)
    texts.append(str(info.value))
    y = ckpt(block(lib), x, w, use_reentrant=True)
    with pytest.raises(RuntimeError) as info:
        lib.autograd.grad(y.sum(), x)
    texts.append(str(info.value).split("\nException raised from")[0])
    with pytest.raises(ValueError) as info:
        ckpt(block(lib), x, w, use_reentrant=True, context_fn=lambda: (None, None))
    texts.append(str(info.value))
    with pytest.raises(ValueError) as info:
        ckpt(block(lib), x, w, use_reentrant=False, determinism_check="x")
    texts.append(str(info.value))
    return texts


def test_errors_match_torch() -> None:
    assert errors(yg, checkpoint) == errors(torch, torch_checkpoint.checkpoint)


def warnings_of(lib: Any, ckpt: Any, seq: Any) -> list[str]:
    x = lib.tensor(X)
    w = lib.tensor(W)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ckpt(block(lib), x, w)
        seq([lambda t: t.sin(), lambda t: t.cos()], 2, x)
    return [str(c.message) for c in caught]


def test_warnings_match_torch() -> None:
    mine = warnings_of(yg, checkpoint, checkpoint_sequential)
    theirs = warnings_of(
        torch, torch_checkpoint.checkpoint, torch_checkpoint.checkpoint_sequential
    )
    assert mine == theirs
    assert "None of the inputs have requires_grad=True. Gradients will be None" in mine


def test_autograd_grad_works_without_reentrancy() -> None:
    x = yg.tensor(X, requires_grad=True)
    w = yg.tensor(W, requires_grad=True)
    y = checkpoint(block(yg), x, w, use_reentrant=False)
    (gx,) = yg.autograd.grad(y.sum(), x)
    tx = torch.tensor(X, requires_grad=True)
    ty = block(torch)(tx, torch.tensor(W))
    (tgx,) = torch.autograd.grad(ty.sum(), tx)
    np.testing.assert_allclose(gx.numpy(), tgx.numpy(), rtol=1e-12)


def test_retain_graph_recomputes_per_backward() -> None:
    x = yg.tensor(X, requires_grad=True)
    w = yg.tensor(W, requires_grad=True)
    calls = []

    def f(x: Any, w: Any) -> Any:
        calls.append(1)
        return block(yg)(x, w)

    y = checkpoint(f, x, w, use_reentrant=False).sum()
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first)
    assert len(calls) == 3


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_dropout_mask_is_the_same_in_the_rerun(use_reentrant: bool) -> None:
    def f(x: Any) -> Any:
        return F.dropout(x.exp(), 0.5, True) * x

    x = yg.tensor(RNG.standard_normal((20, 20)), requires_grad=True)
    state = yg.get_rng_state()
    y = checkpoint(f, x, use_reentrant=use_reentrant)
    after = yg.get_rng_state()
    y.sum().backward()
    # The rerun left the surrounding generator where the forward left it.
    assert np.array_equal(yg.get_rng_state().numpy(), after.numpy())
    got = x.grad.numpy()
    yg.set_rng_state(state)
    x.grad = None
    f(x).sum().backward()
    np.testing.assert_array_equal(got, x.grad.numpy())


def test_non_tensor_outputs_and_inputs() -> None:
    def f(x: Any, n: int) -> Any:
        return x * n, n + 1

    for lib, ckpt in ((yg, checkpoint), (torch, torch_checkpoint.checkpoint)):
        for use_reentrant in (True, False):
            x = lib.tensor(X, requires_grad=True)
            y, m = ckpt(f, x, 3, use_reentrant=use_reentrant)
            assert m == 4
            y.sum().backward()
            np.testing.assert_allclose(x.grad.numpy(), np.full_like(X, 3.0))


def mismatch_text(lib: Any, ckpt: Any) -> str:
    shapes = iter([(4, 3), (2, 6)])

    def f(x: Any) -> Any:
        return x.reshape(next(shapes)).exp()

    x = lib.tensor(X, requires_grad=True)
    y = ckpt(f, x, use_reentrant=False)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    return str(info.value)


def test_metadata_mismatch_error() -> None:
    mine = mismatch_text(yg, checkpoint)
    theirs = mismatch_text(torch, torch_checkpoint.checkpoint)
    head = "torch.utils.checkpoint: Recomputed values for the following tensors have"
    assert mine.startswith(head) and theirs.startswith(head)
    # The same report, up to the libraries' names for their types.
    cut = mine.index("\n.\n")
    renamed = theirs.replace("torch.Size", "yamlgrad.Size")
    assert mine[:cut] == renamed.replace("torch.float", "yamlgrad.float")[:cut]


def test_checkpoint_sequential_matches_torch() -> None:
    results = []
    for lib, seq in (
        (yg, checkpoint_sequential),
        (torch, torch_checkpoint.checkpoint_sequential),
    ):
        lib.manual_seed(0)
        layers = [lib.nn.Linear(3, 3).double() for _ in range(5)]
        for layer, seed in zip(layers, range(5)):
            w = np.random.default_rng(seed).standard_normal((3, 3))
            with lib.no_grad():
                layer.weight.copy_(lib.tensor(w))
                layer.bias.zero_()
        model = lib.nn.Sequential(
            *[m for layer in layers for m in (layer, lib.nn.Tanh())]
        )
        x = lib.tensor(X, requires_grad=True)
        for use_reentrant in (True, False):
            x.grad = None
            y = seq(model, 3, x, use_reentrant=use_reentrant)
            y.sum().backward()
            results.append((y.detach().numpy(), x.grad.numpy().copy()))
    for a, b in zip(results[:2], results[2:]):
        np.testing.assert_allclose(a[0], b[0], rtol=1e-12)
        np.testing.assert_allclose(a[1], b[1], rtol=1e-12)


def test_save_on_cpu_and_disabled_hooks() -> None:
    for lib in (yg, torch):
        x = lib.tensor(X, requires_grad=True)
        with lib.autograd.graph.save_on_cpu():
            y = (x * x).sum()
        y.backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * X)
        with lib.autograd.graph.disable_saved_tensors_hooks("hooks are off"):
            with pytest.raises(RuntimeError, match="hooks are off"):
                with lib.autograd.graph.save_on_cpu():
                    pass
        with lib.autograd.graph.save_on_cpu():  # enabled again after the block
            pass


def test_benchmark_script_runs() -> None:
    """benchmarks/checkpoint.py at tiny sizes: it checks the gradients itself."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "checkpoint.py"
    done = subprocess.run(
        [sys.executable, str(script), "--smoke"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "| non-reentrant |" in done.stdout


def test_inputs_modified_in_place_fail_the_recomputation_as_torch() -> None:
    texts = []
    for lib, ckpt in ((yg, checkpoint), (torch, torch_checkpoint.checkpoint)):
        x = lib.tensor(X, requires_grad=True)
        a = x * 1.0
        y = ckpt(lambda t: t.sin(), a, use_reentrant=False)
        with lib.no_grad():
            a.add_(1.0)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        texts.append(str(info.value).split(" Hint:")[0])
    assert texts[0] == texts[1].replace("torch.", "")


@pytest.mark.parametrize("outer_reentrant", [True, False])
@pytest.mark.parametrize("inner_reentrant", [True, False])
def test_nested_checkpoints_match_torch(
    outer_reentrant: bool, inner_reentrant: bool
) -> None:
    grads = []
    for lib, ckpt in ((yg, checkpoint), (torch, torch_checkpoint.checkpoint)):
        x = lib.tensor(X, requires_grad=True)

        def inner(t: Any) -> Any:
            return (t.sin() * t).exp()

        def outer(t: Any) -> Any:
            return ckpt(inner, t.cos(), use_reentrant=inner_reentrant).tanh() * t

        ckpt(outer, x, use_reentrant=outer_reentrant).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)
