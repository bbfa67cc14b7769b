"""grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian and functional_call
against torch.func, alone and composed."""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from support import torch_text

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1)
X = RNG.standard_normal(4)
Y = RNG.standard_normal(4)
M = RNG.standard_normal((3, 4))


def leaves(result: Any) -> list[Any]:
    if isinstance(result, (tuple, list)):
        return [leaf for r in result for leaf in leaves(r)]
    if isinstance(result, dict):
        return [leaf for k in sorted(result) for leaf in leaves(result[k])]
    return [result]


def run(lib: ModuleType, case: Callable[..., Any], arrays: tuple) -> list[Any]:
    return leaves(case(lib, *(lib.tensor(a) for a in arrays)))


def f(l: ModuleType, x: Any, y: Any) -> Any:
    return (l.sin(x) * y).sum() + (x**3).sum()


CASES: dict[str, tuple[Callable[..., Any], tuple]] = {
    "grad": (lambda l, x, y: l.func.grad(lambda a, b: f(l, a, b))(x, y), (X, Y)),
    "grad_argnums": (
        lambda l, x, y: l.func.grad(lambda a, b: f(l, a, b), argnums=(0, 1))(x, y),
        (X, Y),
    ),
    "grad_negative_argnum": (
        lambda l, x, y: l.func.grad(lambda a, b: f(l, a, b), argnums=-1)(x, y),
        (X, Y),
    ),
    "grad_and_value_aux": (
        lambda l, x, y: l.func.grad_and_value(
            lambda a, b: (f(l, a, b), {"s": a * 2}), has_aux=True
        )(x, y),
        (X, Y),
    ),
    "grad_of_grad": (
        lambda l, x, y: l.func.grad(
            lambda a: l.func.grad(lambda c, b: f(l, c, b))(a, y).sum()
        )(x),
        (X, Y),
    ),
    "grad_pytree": (
        lambda l, x, y: l.func.grad(lambda d: (d["a"] * d["b"][0]).sum())(
            {"a": x, "b": (y,)}
        ),
        (X, Y),
    ),
    "grad_constant": (lambda l, x, y: l.func.grad(lambda a: (y * y).sum())(x), (X, Y)),
    "vjp": (
        lambda l, x, m: l.func.vjp(lambda a: m @ l.tanh(a), x)[1](l.ones(3)),
        (X, M),
    ),
    "vjp_output": (lambda l, x, m: l.func.vjp(lambda a: m @ l.tanh(a), x)[0], (X, M)),
    "vjp_two_outputs": (
        lambda l, x, y: l.func.vjp(lambda a, b: (a * b, a.exp()), x, y)[1](
            (l.ones(4), y)
        ),
        (X, Y),
    ),
    "jacrev": (lambda l, x, m: l.func.jacrev(lambda a: m @ l.tanh(a))(x), (X, M)),
    "jacrev_argnums": (
        lambda l, x, m: l.func.jacrev(lambda a, b: b @ l.tanh(a), argnums=(0, 1))(x, m),
        (X, M),
    ),
    "jacrev_matrix": (
        lambda l, x, m: l.func.jacrev(lambda b: l.softmax(b, 1))(m),
        (X, M),
    ),
    "hessian": (lambda l, x, y: l.func.hessian(lambda a: f(l, a, y))(x), (X, Y)),
    "jvp": (
        lambda l, x, m: l.func.jvp(lambda a: m @ l.tanh(a), (x,), (x.cos(),)),
        (X, M),
    ),
    "jvp_pytree": (
        lambda l, x, m: l.func.jvp(
            lambda d: (d["a"] * d["b"], d["a"].sum()),
            ({"a": x, "b": x},),
            ({"a": x, "b": x * 0 + 1},),
        ),
        (X, M),
    ),
    "jvp_aux": (
        lambda l, x, m: l.func.jvp(
            lambda a: (a.sin(), a * 2), (x,), (x,), has_aux=True
        ),
        (X, M),
    ),
    "jacfwd": (lambda l, x, m: l.func.jacfwd(lambda a: m @ l.tanh(a))(x), (X, M)),
    "jacfwd_argnums": (
        lambda l, x, m: l.func.jacfwd(lambda a, b: b @ l.tanh(a), argnums=(0, 1))(x, m),
        (X, M),
    ),
    "jacfwd_of_jacrev": (
        lambda l, x, y: l.func.jacfwd(l.func.jacrev(lambda a: f(l, a, y)))(x),
        (X, Y),
    ),
    "jvp_of_jvp": (
        lambda l, x, m: l.func.jvp(
            lambda a: l.func.jvp(lambda b: b.sin() * b, (a,), (a.cos(),))[1],
            (x,),
            (x,),
        ),
        (X, M),
    ),
    "jacfwd_of_jacfwd": (
        lambda l, x, y: l.func.jacfwd(l.func.jacfwd(lambda a: f(l, a, y)))(x),
        (X, Y),
    ),
    "jvp_of_grad": (
        lambda l, x, y: l.func.jvp(l.func.grad(lambda a: f(l, a, y)), (x,), (y,)),
        (X, Y),
    ),
    "grad_of_jvp": (
        lambda l, x, y: l.func.grad(
            lambda a: l.func.jvp(lambda b: f(l, b, y), (a,), (y,))[1]
        )(x),
        (X, Y),
    ),
    "vmap_jvp": (
        lambda l, x, m: l.func.vmap(
            lambda r: l.func.jvp(lambda b: l.tanh(b) @ x, (r,), (r.exp(),))
        )(m),
        (X, M),
    ),
    "jvp_vmap": (
        lambda l, x, m: l.func.jvp(
            l.func.vmap(lambda r: (r * x).sum().cos()), (m,), (m * 2,)
        ),
        (X, M),
    ),
    "jvp_inplace": (
        lambda l, x, m: l.func.jvp(lambda a: (a * 2).mul_(a).sin_(), (x,), (x,)),
        (X, M),
    ),
    "jvp_views": (
        lambda l, x, m: l.func.jvp(
            lambda b: b.t().reshape(-1)[2:].unsqueeze(0).expand(2, -1), (m,), (m,)
        ),
        (X, M),
    ),
    "jvp_requires_grad_primal": (
        lambda l, x, m: l.autograd.grad(
            l.func.jvp(l.sin, (x.requires_grad_(),), (x.cos(),))[1].sum(), x
        ),
        (X, M),
    ),
    "jacfwd_aux": (
        lambda l, x, m: l.func.jacfwd(lambda a: (m @ a, a.sum()), has_aux=True)(x),
        (X, M),
    ),
    "jacfwd_second_argnum": (
        lambda l, x, m: l.func.jacfwd(lambda a, b: b @ l.tanh(a), argnums=1)(x, m),
        (X, M),
    ),
    "hessian_argnums": (
        lambda l, x, y: l.func.hessian(lambda a, b: f(l, a, b), argnums=(0, 1))(x, y),
        (X, Y),
    ),
    "grad_of_jacfwd": (
        lambda l, x, y: l.func.grad(
            lambda a: l.func.jacfwd(lambda b: (b.sin() * b.exp()).cumsum(0))(a)
            .pow(2)
            .sum()
        )(x),
        (X, Y),
    ),
    "jacrev_of_hessian": (
        lambda l, x, y: l.func.jacrev(l.func.hessian(lambda a: (a**3).prod()))(x),
        (X, Y),
    ),
    "vmap_grad": (
        lambda l, x, m: l.func.vmap(
            l.func.grad(lambda w, r: (w * r).sum().sin()), in_dims=(None, 0)
        )(x, m),
        (X, M),
    ),
    "vmap_jacrev": (
        lambda l, x, m: l.func.vmap(l.func.jacrev(lambda r: r.exp() * r.sum()))(m),
        (X, M),
    ),
    "jacrev_vmap": (
        lambda l, x, m: l.func.jacrev(l.func.vmap(lambda r: (r * x).sum()))(m),
        (X, M),
    ),
    "grad_vmap": (
        lambda l, x, m: l.func.grad(
            lambda w: l.func.vmap(lambda r: (r * w).sum().cos())(m).sum()
        )(x),
        (X, M),
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_transform_matches_torch(name: str) -> None:
    case, arrays = CASES[name]
    ours, theirs = run(yg, case, arrays), run(torch, case, arrays)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape)
        assert o.requires_grad == t.requires_grad
        np.testing.assert_allclose(
            o.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12
        )


def test_outer_autograd_reaches_through_grad() -> None:
    """A gradient of a closed-over tensor that requires grad is differentiable."""
    results = []
    for lib in (yg, torch):
        w = lib.tensor(X, requires_grad=True)
        g = lib.func.grad(lambda a: (w * a.sin()).sum())(lib.tensor(Y))
        (g * g).sum().backward()
        results.append(w.grad.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10)


def mlp(lib: ModuleType) -> Any:
    lib.manual_seed(0) if lib is torch else None
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))
    for layer in (0, 2):
        for name in ("weight", "bias"):
            shape = tuple(getattr(model[layer], name).shape)
            value = RNG_MODEL.get((layer, name))
            if value is None:
                value = RNG_MODEL[(layer, name)] = np.random.default_rng(
                    layer
                ).standard_normal(shape)
            with lib.no_grad():
                getattr(model[layer], name).copy_(lib.tensor(value))
    return model.double() if lib is torch else model.double()


RNG_MODEL: dict = {}


def test_per_sample_gradients_of_a_model_match_torch() -> None:
    data = RNG.standard_normal((6, 4))
    targets = np.array([0, 2, 1, 1, 0, 2])
    results = []
    for lib in (yg, torch):
        model = mlp(lib)
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p: dict, x: Any, t: Any) -> Any:
            out = lib.func.functional_call(model, p, (x.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, t.unsqueeze(0))

        grads = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(
            params, lib.tensor(data), lib.tensor(targets)
        )
        results.append({k: v.numpy() for k, v in grads.items()})
    assert results[0].keys() == results[1].keys()
    for k in results[0]:
        assert results[0][k].shape == (6, *results[1][k].shape[1:])
        np.testing.assert_allclose(results[0][k], results[1][k], rtol=1e-9, atol=1e-12)


def test_functional_call_restores_the_parameters() -> None:
    model = yg.nn.Linear(3, 2)
    weight = model.weight
    out = yg.func.functional_call(model, {"weight": yg.zeros(2, 3)}, yg.ones(3))
    np.testing.assert_allclose(out.detach().numpy(), model.bias.detach().numpy())
    assert model.weight is weight


ERRORS: dict[str, Callable[[ModuleType, Any], Any]] = {
    "not_scalar": lambda l, x: l.func.grad(lambda a: a)(x),
    "argnum_range": lambda l, x: l.func.grad(lambda a: a.sum(), argnums=1)(x),
    "argnums_unique": lambda l, x: l.func.grad(lambda a: a.sum(), argnums=(0, 0))(x),
    "argnums_type": lambda l, x: l.func.grad(lambda a: a.sum(), argnums=1.0)(x),
    "argnums_empty": lambda l, x: l.func.grad(lambda a: a.sum(), argnums=())(x),
    "aux_not_tuple": lambda l, x: l.func.grad(lambda a: a.sum(), has_aux=True)(x),
    "aux_not_tensor": lambda l, x: l.func.grad(lambda a: (a.sum(), 1.0), has_aux=True)(
        x
    ),
    "output_not_tensor": lambda l, x: l.func.grad(lambda a: 3.0)(x),
    "integer_input": lambda l, x: l.func.grad(lambda a: a.sum())(l.tensor([1, 2])),
    "number_input": lambda l, x: l.func.grad(lambda a: a.sum())(3.0),
    "vjp_shape": lambda l, x: l.func.vjp(lambda a: a * 2, x)[1](l.ones(2)),
    "vjp_not_tensor": lambda l, x: l.func.vjp(lambda a: 3.0, x),
    "jacrev_argnum": lambda l, x: l.func.jacrev(lambda a: a * 2, argnums=3)(x),
    "jacrev_chunk": lambda l, x: l.func.jacrev(lambda a: a * 2, chunk_size=0)(x),
    "jvp_not_tuple": lambda l, x: l.func.jvp(l.sin, x, x),
    "jvp_structure": lambda l, x: l.func.jvp(l.sin, (x,), (x, x)),
    "jvp_size": lambda l, x: l.func.jvp(l.sin, (x,), (x[:2],)),
    "jvp_not_tensor": lambda l, x: l.func.jvp(lambda a: 3.0, (x,), (x,)),
    "jvp_primal_type": lambda l, x: l.func.jvp(l.sin, (3.0,), (x,)),
    "jvp_empty": lambda l, x: l.func.jvp(l.sin, (), ()),
    "jvp_integer_primal": lambda l, x: l.func.jvp(l.sin, (x.long(),), (x,)),
    "jvp_integer_tangent": lambda l, x: l.func.jvp(l.sin, (x,), (x.long(),)),
    "jvp_aux_not_tuple": lambda l, x: l.func.jvp(l.sin, (x,), (x,), has_aux=True),
    "jacfwd_random_op": lambda l, x: l.func.jacfwd(lambda a: a * l.rand(4))(x),
    "jacfwd_randomness": lambda l, x: l.func.jacfwd(l.sin, randomness="foo")(x),
    "jacfwd_argnum": lambda l, x: l.func.jacfwd(l.sin, argnums=2)(x),
    "strict_missing": lambda l, x: l.func.functional_call(
        l.nn.Linear(2, 2),
        {"weight": l.ones(2, 2), "foo": l.ones(1)},
        (l.ones(2),),
        strict=True,
    ),
}


def outcome(lib: ModuleType, name: str) -> tuple[str, str]:
    try:
        ERRORS[name](lib, lib.tensor(X))
    except (RuntimeError, ValueError, TypeError) as error:
        return type(error).__name__, torch_text(error).replace("torch.", "").replace(
            "yamlgrad.", ""
        )
    raise AssertionError(f"{lib.__name__}: {name} did not raise")


@pytest.mark.parametrize("name", ERRORS)
def test_transform_errors_match_torch(name: str) -> None:
    assert outcome(yg, name) == outcome(torch, name)


def test_jvp_runs_forward_mode_on_dual_tensors() -> None:
    seen = []

    def f(a: Any) -> Any:
        seen.append(yg.autograd.forward_ad.unpack_dual(a).tangent)
        return a.exp()

    x = yg.tensor([0.0, 1.0])
    _, tangent = yg.func.jvp(f, (x,), (yg.ones(2),))
    assert seen[0] is not None  # the function saw a dual tensor
    assert np.allclose(tangent.numpy(), np.exp([0.0, 1.0]))
    assert yg.autograd.forward_ad.unpack_dual(tangent).tangent is None  # level closed


def test_jacrev_runs_one_batched_backward(monkeypatch: pytest.MonkeyPatch) -> None:
    """jacrev's rows come from one backward on a batch of cotangents (vmap of
    the vjp), not one backward per output element."""
    from yamlgrad.runtime.func import eager_transforms

    def refuse(*args: Any) -> None:
        raise AssertionError("a backward per sample")

    monkeypatch.setattr(eager_transforms, "_backward_per_sample", refuse)
    for name in ("jacrev", "jacrev_argnums", "jacrev_matrix", "hessian", "vmap_jacrev"):
        case, arrays = CASES[name]
        for o, t in zip(run(yg, case, arrays), run(torch, case, arrays)):
            np.testing.assert_allclose(o.numpy(), t.detach().numpy(), rtol=1e-10)


# One function per op family, each differentiated by jacfwd (forward mode on dual
# tensors, vmapped), jacrev (a batch of cotangents) and hessian (forward over
# reverse), against torch.func.
LABELS = np.array([0, 2, 1])
FAMILIES: dict[str, Callable[[ModuleType, Any], Any]] = {
    "softmax": lambda l, x: l.softmax(x, 1),
    "log_softmax": lambda l, x: l.log_softmax(x, -1),
    "cross_entropy": lambda l, x: l.nn.functional.cross_entropy(x, l.tensor(LABELS)),
    "linear": lambda l, x: l.nn.functional.linear(x, l.tensor(M[:, ::-1].copy())),
    "layer_norm": lambda l, x: l.nn.functional.layer_norm(x, (4,)),
    "cumsum": lambda l, x: x.cumsum(1),
    "indexing": lambda l, x: x[:, [0, 2]] * x[1, :2],
    "sort": lambda l, x: x.sort(1)[0],
    "max_dim": lambda l, x: x.max(1)[0],
    "norm": lambda l, x: x.norm(dim=1),
    "where": lambda l, x: l.where(x > 0, x, x * x),
    "cat": lambda l, x: l.cat([x, x.sin()], 0),
    "matmul": lambda l, x: x @ x.T,
    "inplace": lambda l, x: x.clone().mul_(2).add_(x).exp_(),
    "logsumexp": lambda l, x: x.logsumexp(1),
    "pow": lambda l, x: x.abs() ** 1.5,
    "gelu": lambda l, x: l.nn.functional.gelu(x),
    "var": lambda l, x: x.var(1),
    "prod": lambda l, x: x.prod(1),
    "det": lambda l, x: l.linalg.det(x @ x.T),
    "inv": lambda l, x: l.linalg.inv(x @ x.T + l.eye(3, dtype=x.dtype)),
}
TRANSFORMS = {
    "jacfwd": lambda l, f: l.func.jacfwd(f),
    "jacrev": lambda l, f: l.func.jacrev(f),
    "hessian": lambda l, f: l.func.hessian(lambda a: f(a).sum()),
}


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("family", FAMILIES)
def test_jacobians_across_op_families_match_torch(family: str, transform: str) -> None:
    results = []
    for lib in (yg, torch):
        f = functools.partial(FAMILIES[family], lib)
        results.append(TRANSFORMS[transform](lib, f)(lib.tensor(M)))
    ours, theirs = results
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-9, atol=1e-10)
