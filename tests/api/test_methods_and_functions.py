"""An op that torch offers both as a function and as a Tensor method is both here
too, whichever of the two yamlgrad has: `x.where(condition, y)` and
`yg.where(condition, x, y)`, `yg.exp_(x)` and `x.exp_()`. The two lists are read
from the installed torch, restricted to the names yamlgrad has."""

from __future__ import annotations

import inspect

import pytest

import yamlgrad as yg


def _torch_functions_and_methods() -> set[str]:
    torch = pytest.importorskip("torch")
    functions = {
        name
        for name in dir(torch)
        if not name.startswith("_")
        and callable(getattr(torch, name))
        and not inspect.isclass(getattr(torch, name))
        and not inspect.ismodule(getattr(torch, name))
    }
    methods = {name for name in dir(torch.Tensor) if not name.startswith("_")}
    return functions & methods


def test_every_function_torch_offers_as_a_method_is_a_method() -> None:
    both = _torch_functions_and_methods()
    missing = sorted(n for n in both if hasattr(yg, n) and not hasattr(yg.Tensor, n))
    assert missing == []


def test_every_method_torch_offers_as_a_function_is_a_function() -> None:
    both = _torch_functions_and_methods()
    missing = sorted(n for n in both if hasattr(yg.Tensor, n) and not hasattr(yg, n))
    assert missing == []


def test_the_method_and_the_function_agree() -> None:
    x = yg.tensor([0.5, -1.0, 2.0])
    condition = x > 0
    assert yg.equal(x.where(condition, yg.zeros(3)), yg.where(condition, x, 0.0))
    y = x.clone()
    yg.exp_(y)
    assert yg.allclose(y, x.exp())
    assert yg.numel(x) == x.numel() == 3
    assert yg.multinomial is not None and x.abs().multinomial(2).shape == (2,)
