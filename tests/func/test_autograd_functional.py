"""yg.autograd.functional against torch.autograd.functional: values and errors."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from support import torch_text

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(2)
X = RNG.standard_normal(3)
Y = RNG.standard_normal(3)
M = RNG.standard_normal((2, 3))


def leaves(result: Any) -> list[Any]:
    if isinstance(result, (tuple, list)):
        return [leaf for r in result for leaf in leaves(r)]
    return [result]


def two_outputs(l: ModuleType) -> Callable[..., Any]:
    return lambda a, b: (l.sin(a) * b, (a @ b.exp()).reshape(1))


def scalar(l: ModuleType) -> Callable[..., Any]:
    return lambda a, b: (a**3 * b).sum() + a[0] * b[1] ** 2


def cubic(l: ModuleType) -> Callable[..., Any]:
    return lambda a: (a**3).sum() * a[0]


CASES: dict[str, Callable[[ModuleType, Any, Any, Any], Any]] = {
    "vjp": lambda l, x, y, m: l.autograd.functional.vjp(
        lambda a: m @ a.tanh(), x, m[:, 0]
    ),
    "vjp_tuple": lambda l, x, y, m: l.autograd.functional.vjp(
        two_outputs(l), (x, y), (y, l.ones(1))
    ),
    "vjp_scalar_no_v": lambda l, x, y, m: l.autograd.functional.vjp(
        lambda a: a.sum().exp(), x
    ),
    "jvp": lambda l, x, y, m: l.autograd.functional.jvp(lambda a: m @ a.tanh(), x, y),
    "jvp_tuple": lambda l, x, y, m: l.autograd.functional.jvp(
        two_outputs(l), (x, y), (y, x)
    ),
    "jacobian": lambda l, x, y, m: l.autograd.functional.jacobian(
        lambda a: m @ a.tanh(), x
    ),
    "jacobian_tuple": lambda l, x, y, m: l.autograd.functional.jacobian(
        two_outputs(l), (x, y)
    ),
    "jacobian_vectorize": lambda l, x, y, m: l.autograd.functional.jacobian(
        two_outputs(l), (x, y), vectorize=True
    ),
    "jacobian_forward": lambda l, x, y, m: l.autograd.functional.jacobian(
        two_outputs(l), (x, y), vectorize=True, strategy="forward-mode"
    ),
    "jacobian_forward_single": lambda l, x, y, m: l.autograd.functional.jacobian(
        lambda a: m @ a.tanh(), x, vectorize=True, strategy="forward-mode"
    ),
    "jacobian_forward_unused": lambda l, x, y, m: l.autograd.functional.jacobian(
        lambda a, b: (a * 2, a.sum()), (x, y), vectorize=True, strategy="forward-mode"
    ),
    "jacobian_forward_matrix": lambda l, x, y, m: l.autograd.functional.jacobian(
        lambda b: l.softmax(b, 1), m, vectorize=True, strategy="forward-mode"
    ),
    "jacobian_unused": lambda l, x, y, m: l.autograd.functional.jacobian(
        lambda a, b: a * 2, (x, y)
    ),
    "hessian": lambda l, x, y, m: l.autograd.functional.hessian(cubic(l), x),
    "hessian_tuple": lambda l, x, y, m: l.autograd.functional.hessian(
        scalar(l), (x, y)
    ),
    "hessian_vectorize": lambda l, x, y, m: l.autograd.functional.hessian(
        scalar(l), (x, y), vectorize=True
    ),
    "hessian_forward": lambda l, x, y, m: l.autograd.functional.hessian(
        cubic(l), x, vectorize=True, outer_jacobian_strategy="forward-mode"
    ),
    "hessian_forward_tuple": lambda l, x, y, m: l.autograd.functional.hessian(
        scalar(l), (x, y), vectorize=True, outer_jacobian_strategy="forward-mode"
    ),
    "vhp": lambda l, x, y, m: l.autograd.functional.vhp(scalar(l), (x, y), (y, x)),
    "hvp": lambda l, x, y, m: l.autograd.functional.hvp(scalar(l), (x, y), (y, x)),
    "hvp_single": lambda l, x, y, m: l.autograd.functional.hvp(cubic(l), x, y),
}


def run(lib: ModuleType, name: str) -> list[Any]:
    return leaves(CASES[name](lib, lib.tensor(X), lib.tensor(Y), lib.tensor(M)))


@pytest.mark.parametrize("name", CASES)
def test_functional_matches_torch(name: str) -> None:
    ours, theirs = run(yg, name), run(torch, name)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(
            o.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12
        )


@pytest.mark.parametrize("fn", ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"])
def test_create_graph_gives_differentiable_results(fn: str) -> None:
    grads = []
    for lib in (yg, torch):
        x = lib.tensor(X, requires_grad=True)
        f = getattr(lib.autograd.functional, fn)
        scalar_fn = fn in ("hessian", "vhp", "hvp")
        func = cubic(lib) if scalar_fn else (lambda a: a.sin() * a.sum())
        args = (func, x) if fn in ("jacobian", "hessian") else (func, x, lib.ones(3))
        plain = leaves(f(*args))
        assert not any(t.requires_grad for t in plain)
        result = leaves(f(*args, create_graph=True))[-1]
        assert result.requires_grad
        grads.append(lib.autograd.grad(result.sum(), x)[0].numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10)


ERRORS: dict[str, Callable[[ModuleType, Any], Any]] = {
    "inputs_type": lambda l, x: l.autograd.functional.vjp(lambda a: a, 3.0),
    "inputs_type_tuple": lambda l, x: l.autograd.functional.jacobian(
        lambda a, b: a, (x, 3.0)
    ),
    "output_type": lambda l, x: l.autograd.functional.jacobian(lambda a: 3.0, x),
    "v_none": lambda l, x: l.autograd.functional.vjp(lambda a: a * 2, x),
    "v_none_jvp": lambda l, x: l.autograd.functional.jvp(lambda a: a * 2, x),
    "v_length": lambda l, x: l.autograd.functional.jvp(lambda a, b: a, (x, x), (x,)),
    "v_single": lambda l, x: l.autograd.functional.vjp(lambda a: a, x, (x, x)),
    "v_size": lambda l, x: l.autograd.functional.vjp(lambda a: a, x, x[:2]),
    "v_size_tuple": lambda l, x: l.autograd.functional.hvp(
        lambda a, b: (a * b).sum(), (x, x), (x, x[:2])
    ),
    "strict_output": lambda l, x: l.autograd.functional.vjp(
        lambda a: x.detach(), x, x, strict=True
    ),
    "strict_unused": lambda l, x: l.autograd.functional.jacobian(
        lambda a, b: a * 2, (x, x), strict=True
    ),
    "strict_linear_hessian": lambda l, x: l.autograd.functional.hessian(
        lambda a: a.sum(), x, strict=True
    ),
    "strict_jvp_detached": lambda l, x: l.autograd.functional.jvp(
        lambda a: a.detach() * 2, x, x, strict=True
    ),
    "hessian_not_scalar": lambda l, x: l.autograd.functional.hessian(
        lambda a: a * 2, x
    ),
    "hessian_tuple_output": lambda l, x: l.autograd.functional.hessian(
        lambda a: (a.sum(),), x
    ),
    "hvp_not_scalar": lambda l, x: l.autograd.functional.hvp(lambda a: a * 2, x, x),
    "vhp_tuple_output": lambda l, x: l.autograd.functional.vhp(
        lambda a: (a.sum(),), x, x
    ),
    "strategy": lambda l, x: l.autograd.functional.jacobian(
        lambda a: a, x, strategy="sideways"
    ),
    "hessian_strategy": lambda l, x: l.autograd.functional.hessian(
        lambda a: a.sum(), x, outer_jacobian_strategy="x"
    ),
    "forward_not_vectorized": lambda l, x: l.autograd.functional.jacobian(
        lambda a: a, x, strategy="forward-mode"
    ),
    "forward_create_graph": lambda l, x: l.autograd.functional.jacobian(
        lambda a: a, x, create_graph=True, strategy="forward-mode", vectorize=True
    ),
    "forward_strict": lambda l, x: l.autograd.functional.jacobian(
        lambda a: a, x, strict=True, strategy="forward-mode", vectorize=True
    ),
    "hessian_forward_not_vectorized": lambda l, x: l.autograd.functional.hessian(
        lambda a: (a**3).sum(), x, outer_jacobian_strategy="forward-mode"
    ),
    "hessian_forward_create_graph": lambda l, x: l.autograd.functional.hessian(
        lambda a: (a**3).sum(),
        x,
        create_graph=True,
        vectorize=True,
        outer_jacobian_strategy="forward-mode",
    ),
    "forward_output_not_tensor": lambda l, x: l.autograd.functional.jacobian(
        lambda a: 3.0, x, vectorize=True, strategy="forward-mode"
    ),
    "forward_input_not_tensor": lambda l, x: l.autograd.functional.jacobian(
        lambda a: a, (x, 2.0), vectorize=True, strategy="forward-mode"
    ),
    "vectorize_strict": lambda l, x: l.autograd.functional.jacobian(
        lambda a: a * a, x, strict=True, vectorize=True
    ),
}


def outcome(lib: ModuleType, name: str) -> tuple[str, str]:
    try:
        ERRORS[name](lib, lib.tensor(X))
    except (RuntimeError, TypeError, NotImplementedError, AssertionError) as error:
        text = torch_text(error).replace("torch.", "").replace("yamlgrad.", "")
        return type(error).__name__, text
    raise AssertionError(f"{lib.__name__}: {name} did not raise")


@pytest.mark.parametrize("name", ERRORS)
def test_functional_errors_match_torch(name: str) -> None:
    assert outcome(yg, name) == outcome(torch, name)
