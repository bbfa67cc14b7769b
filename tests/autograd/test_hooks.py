"""Tensor and node hooks, retain_grad: PyTorch's order, values and messages."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from support import libraries_under_test


def _as_list(t: Any) -> list[float]:
    return [float(v) for v in t.detach().numpy().reshape(-1)]


@pytest.mark.parametrize("lib", libraries_under_test(), ids=lambda m: m.__name__)
def test_node_pre_and_post_hooks_see_the_gradients(lib: ModuleType) -> None:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    log: list[Any] = []
    y.grad_fn.register_prehook(lambda go: log.append(("pre", _as_list(go[0]))))
    y.grad_fn.register_hook(
        lambda gi, go: log.append(("post", _as_list(gi[0]), _as_list(go[0])))
    )
    y.sum().backward()
    assert log == [("pre", [1.0, 1.0]), ("post", [3.0, 3.0], [1.0, 1.0])]


@pytest.mark.parametrize("lib", libraries_under_test(), ids=lambda m: m.__name__)
def test_tensor_hooks_chain_in_order_and_retain_grad_comes_last(
    lib: ModuleType,
) -> None:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()  # registered first, still runs after the other hooks
    y.register_hook(lambda g: g + 1)
    y.register_hook(lambda g: g * 10)
    handle = x.register_hook(lambda g: g * 100)
    y.sum().backward()
    assert _as_list(y.grad) == [20.0, 20.0]
    assert _as_list(x.grad) == [4000.0, 4000.0]
    assert y.retains_grad and not x.retains_grad
    handle.remove()
    x.grad = None
    (x * 2).sum().backward()
    assert _as_list(x.grad) == [2.0, 2.0]


@pytest.mark.parametrize("lib", libraries_under_test(), ids=lambda m: m.__name__)
def test_retain_grad_accumulates_over_backwards(lib: ModuleType) -> None:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.retain_grad()
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert _as_list(y.grad) == [2.0, 2.0]


@pytest.mark.parametrize("lib", libraries_under_test(), ids=lambda m: m.__name__)
def test_leaf_hook_runs_for_autograd_grad_and_changes_the_result(
    lib: ModuleType,
) -> None:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g * 2)
    (g,) = lib.autograd.grad((x * x).sum(), x)
    assert _as_list(g) == [4.0, 8.0]
    assert x.grad is None


@pytest.mark.parametrize("lib", libraries_under_test(), ids=lambda m: m.__name__)
def test_post_accumulate_grad_hook_sees_the_updated_grad(lib: ModuleType) -> None:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    seen: list[list[float]] = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(_as_list(t.grad)))
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0], [6.0, 6.0]]


def test_hook_changing_the_size_is_refused() -> None:
    x = yg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2

    def grow(g: yg.Tensor) -> yg.Tensor:
        return yg.ones(3)

    y.register_hook(grow)
    with pytest.raises(RuntimeError, match="hook 'grow' has changed the size of value"):
        y.sum().backward()


def test_hooks_on_tensors_without_grad_are_refused() -> None:
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        yg.ones(2).register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        yg.ones(2).retain_grad()


def test_hooks_keep_raw_and_graph_backward_equal() -> None:
    """The same hook gives the same result in a raw and a create_graph backward."""
    results = []
    for create_graph in (False, True):
        x = yg.tensor(np.array([0.5, 1.5]), requires_grad=True)
        y = x.exp()
        y.register_hook(lambda g: g * 2)
        (g,) = yg.autograd.grad(y.sum(), x, create_graph=create_graph)
        results.append(g.detach().numpy())
    np.testing.assert_allclose(results[0], results[1])
    np.testing.assert_allclose(results[0], 2 * np.exp([0.5, 1.5]))
