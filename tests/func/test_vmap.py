"""vmap against torch.func.vmap: values and errors across the op families."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from support import torch_text

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 3))
B = RNG.standard_normal((4, 3))
M = RNG.standard_normal((4, 3, 5))
W = RNG.standard_normal((5, 3))
V = RNG.standard_normal(3)


def run(lib: ModuleType, case: Callable[..., Any], arrays: tuple) -> Any:
    tensors = [lib.tensor(a) for a in arrays]
    return case(lib, *tensors)


def values(result: Any) -> list[np.ndarray]:
    items = result if isinstance(result, (tuple, list)) else [result]
    return [np.asarray(r.detach().numpy()) for r in items]


CASES: dict[str, tuple[Callable[..., Any], tuple]] = {
    # element-wise (rules from type_promotion), broadcasting across ranks
    "mul_exp": (
        lambda l, a, b: l.func.vmap(lambda x, y: x * y + l.exp(x))(a, b),
        (A, B),
    ),
    "add_unbatched": (
        lambda l, a, w: l.func.vmap(lambda x, y: x + y, in_dims=(0, None))(a, w),
        (A, W),
    ),
    "where_pow": (
        lambda l, a, b: l.func.vmap(lambda x, y: l.where(x > 0, x**2, y))(a, b),
        (A, B),
    ),
    "in_dim_1": (lambda l, a, b: l.func.vmap(l.sub, in_dims=(1, 0))(a, b.T), (A, B)),
    "out_dim_1": (lambda l, m: l.func.vmap(lambda x: x.sin(), out_dims=1)(m), (M,)),
    "zero_dim_sample_promotes_as_0d": (
        lambda l, a: l.func.vmap(lambda x, s: x * s + (s > x))(a.float(), a[:, 0]),
        (A,),
    ),
    "relu_abs": (lambda l, a: l.func.vmap(lambda x: l.relu(x) - x.abs())(a), (A,)),
    # reductions (rules from the `dim` argument)
    "sum_all": (lambda l, m: l.func.vmap(lambda x: x.sum())(m), (M,)),
    "sum_dim": (
        lambda l, m: l.func.vmap(
            lambda x: x.sum(-1)[:, None] + x.mean(0, keepdim=True)
        )(m),
        (M,),
    ),
    "max_dim": (lambda l, m: l.func.vmap(lambda x: x.max(1))(m), (M,)),
    "softmax": (lambda l, m: l.func.vmap(lambda x: l.softmax(x, 0).cumsum(1))(m), (M,)),
    "logsumexp": (lambda l, m: l.func.vmap(lambda x: l.logsumexp(x, (0, 1)))(m), (M,)),
    # matmul family
    "dot": (lambda l, a, b: l.func.vmap(l.dot)(a, b), (A, B)),
    "mv": (lambda l, w, a: l.func.vmap(l.mv, in_dims=(None, 0))(w, a), (W, A)),
    "mm": (lambda l, m, w: l.func.vmap(lambda x: x @ w)(m), (M, W)),
    "vec_mat": (lambda l, a, m: l.func.vmap(l.matmul)(a, m), (A, M)),
    "bmm": (lambda l, m: l.func.vmap(lambda x: l.bmm(x[None], x.T[None]))(m), (M,)),
    "linear": (
        lambda l, a, w: l.func.vmap(lambda x: l.nn.functional.linear(x, w, w[:, 0]))(a),
        (A, W),
    ),
    "addmm": (
        lambda l, m, w: l.func.vmap(
            lambda x: l.addmm(x, x, w.T @ w, beta=0.5, alpha=2)
        )(m[:, :, :3]),
        (M, W),
    ),
    # shapes
    "reshape": (lambda l, m: l.func.vmap(lambda x: x.reshape(-1, 5).view(15))(m), (M,)),
    "permute": (
        lambda l, m: l.func.vmap(lambda x: x.permute(1, 0).transpose(0, 1).t())(m),
        (M,),
    ),
    "unsqueeze": (
        lambda l, a: l.func.vmap(lambda x: x.unsqueeze(-1).expand(3, 2).flatten())(a),
        (A,),
    ),
    "cat_stack": (
        lambda l, a, b: l.func.vmap(
            lambda x, y: l.stack([l.cat([x, y]), l.cat([y, x])], -1)
        )(a, b),
        (A, B),
    ),
    "cat_unbatched": (
        lambda l, a, v: l.func.vmap(lambda x: l.cat([x, v]), in_dims=0)(a),
        (A, V),
    ),
    "index": (lambda l, m: l.func.vmap(lambda x: x[1] + x[:, 2:4].sum(-1)[0])(m), (M,)),
    # no rule: the loop-and-stack fallback
    "fallback_roll": (lambda l, m: l.func.vmap(lambda x: l.roll(x, 1, 0))(m), (M,)),
    "fallback_mse": (
        lambda l, a, b: l.func.vmap(l.nn.functional.mse_loss)(a, b),
        (A, B),
    ),
    # nesting and pytrees
    "nested": (lambda l, m: l.func.vmap(l.func.vmap(lambda x: x.sum() * x))(m), (M,)),
    "nested_in_dims": (
        lambda l, m, a: l.func.vmap(
            l.func.vmap(l.mul, in_dims=(0, None)), in_dims=(2, None)
        )(m, a[0]),
        (M, A),
    ),
    "dict_input": (
        lambda l, a, b: l.func.vmap(lambda d: d["x"] * d["y"])({"x": a, "y": b}),
        (A, B),
    ),
    "tuple_out": (
        lambda l, a: l.func.vmap(lambda x: (x.sum(), x * 2), out_dims=(0, 1))(a),
        (A,),
    ),
    "unbatched_output": (lambda l, a, v: l.func.vmap(lambda x: v * 2)(a), (A, V)),
}


@pytest.mark.parametrize("name", CASES)
def test_vmap_matches_torch(name: str) -> None:
    case, arrays = CASES[name]
    ours = values(run(yg, case, arrays))
    theirs = values(run(torch, case, arrays))
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert o.shape == t.shape
        assert o.dtype == t.dtype
        np.testing.assert_allclose(
            o, t, rtol=1e-6 if o.dtype == np.float32 else 1e-10, atol=1e-12
        )


ERRORS: dict[str, Callable[[ModuleType, Any], Any]] = {
    "item": lambda l, a: l.func.vmap(lambda x: x.sum().item())(a),
    "control_flow": lambda l, a: l.func.vmap(lambda x: 1 if x.sum() > 0 else 0)(a),
    "in_dim_range": lambda l, a: l.func.vmap(lambda x: x, in_dims=2)(a),
    "in_dim_negative": lambda l, a: l.func.vmap(lambda x: x, in_dims=-3)(a),
    "in_dims_structure": lambda l, a: l.func.vmap(lambda x, y: x, in_dims=(0,))(a, a),
    "in_dims_type": lambda l, a: l.func.vmap(lambda x: x, in_dims="a")(a),
    "in_dims_none": lambda l, a: l.func.vmap(lambda x: x, in_dims=None)(a),
    "sizes": lambda l, a: l.func.vmap(l.add)(a, a[:2]),
    "non_tensor_in": lambda l, a: l.func.vmap(lambda x: x)(3.0),
    "no_inputs": lambda l, a: l.func.vmap(lambda: a)(),
    "output_type": lambda l, a: l.func.vmap(lambda x: 3.0)(a),
    "out_dims_structure": lambda l, a: l.func.vmap(lambda x: x, out_dims=(0, 1))(a),
    "out_dim_range": lambda l, a: l.func.vmap(lambda x: x, out_dims=2)(a),
    "randomness": lambda l, a: l.func.vmap(lambda x: x, randomness="foo")(a),
    "random_in_error_mode": lambda l, a: l.func.vmap(lambda x: l.randn_like(x) * x)(a),
    "dropout_in_error_mode": lambda l, a: l.func.vmap(
        lambda x: l.nn.functional.dropout(x)
    )(a),
    "inplace_unbatched_self": lambda l, a: l.func.vmap(lambda x: l.zeros(3).add_(x))(a),
}


def outcome(lib: ModuleType, name: str) -> tuple[str, str]:
    try:
        ERRORS[name](lib, lib.tensor(A))
    except (RuntimeError, ValueError, IndexError, TypeError) as error:
        return type(error).__name__, torch_text(error).replace("torch.", "")
    raise AssertionError(f"{lib.__name__}: {name} did not raise")


@pytest.mark.parametrize("name", ERRORS)
def test_vmap_errors_match_torch(name: str) -> None:
    assert outcome(yg, name) == outcome(torch, name)


def test_fallback_warns_only_when_enabled() -> None:
    from yamlgrad.runtime.func.batching_rules import set_vmap_fallback_warning_enabled

    x = yg.tensor(M)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yg.func.vmap(lambda t: yg.roll(t, 1, 0))(x)
    set_vmap_fallback_warning_enabled(True)
    try:
        with pytest.warns(UserWarning, match="batching rule for aten::roll"):
            yg.func.vmap(lambda t: yg.roll(t, 1, 0))(x)
    finally:
        set_vmap_fallback_warning_enabled(False)


def test_inplace_on_batched_self_writes_through() -> None:
    x = yg.tensor(A.copy())
    out = yg.func.vmap(lambda t: t.mul_(2))(x)
    np.testing.assert_allclose(x.numpy(), A * 2)
    np.testing.assert_allclose(out.numpy(), A * 2)


def test_gradients_flow_through_vmap() -> None:
    xs = [lib.tensor(M, requires_grad=True) for lib in (yg, torch)]
    for lib, x in zip((yg, torch), xs):
        out = lib.func.vmap(lambda t: (t @ t.T).sin().sum(0))(x)
        (out * lib.tensor(np.arange(3.0))).sum().backward()
    np.testing.assert_allclose(xs[0].grad.numpy(), xs[1].grad.numpy(), rtol=1e-10)


def test_plain_ops_see_no_batched_tensor_after_vmap() -> None:
    from yamlgrad.runtime.wrappers.interposition import interposition, vmap_hook

    with pytest.raises(ValueError):
        yg.func.vmap(lambda t: 3.0)(yg.tensor(A))
    assert vmap_hook.levels == 0 and interposition.active == 0


RANDOM_OPS: dict[str, Callable[[ModuleType, Any], Any]] = {
    "rand": lambda l, t: l.rand(16) + t,
    "randn_like": lambda l, t: l.randn_like(t),
    "rand_like_unbatched": lambda l, t: l.rand_like(l.zeros(16)) * t,
    "randint": lambda l, t: l.randint(0, 1000, (16,)) + t,
    "randint_like": lambda l, t: l.randint_like(t, 1000),
    "randperm": lambda l, t: l.randperm(16) + t,
    "bernoulli": lambda l, t: l.bernoulli(t.sigmoid()),
    "normal": lambda l, t: l.normal(t, 1.0),
    "dropout": lambda l, t: l.nn.functional.dropout(t.exp(), 0.5),
    "multinomial": lambda l, t: l.multinomial(t.exp(), 8),
    "poisson": lambda l, t: l.poisson(t.exp() * 5),
    "uniform_": lambda l, t: t.clone().uniform_(),
    "bernoulli_": lambda l, t: t.clone().bernoulli_(0.5),
    "exponential_": lambda l, t: t.clone().exponential_(),
    "random_": lambda l, t: t.clone().random_(0, 1000),
    "log_normal_": lambda l, t: t.clone().log_normal_(),
    "geometric_": lambda l, t: t.clone().geometric_(0.1),
    "cauchy_": lambda l, t: t.clone().cauchy_(),
    # Random ops of tensors the vmap does not batch (made inside it, unbatched).
    "bernoulli_unbatched": lambda l, t: l.bernoulli(l.full((16,), 0.5).double()) + t,
    "bernoulli_p_unbatched": lambda l, t: l.zeros(16).double().bernoulli(0.5) + t,
    "normal_unbatched": lambda l, t: l.normal(l.zeros(16).double(), 1.0) + t,
    "normal_std_unbatched": lambda l, t: l.normal(0.0, l.ones(16).double()) + t,
    "normal_tensors_unbatched": lambda l, t: (
        l.normal(l.zeros(16).double(), l.ones(16).double()) + t
    ),
    "poisson_unbatched": lambda l, t: l.poisson(l.full((16,), 5.0).double()) + t,
    "multinomial_unbatched": lambda l, t: l.multinomial(l.ones(16).double(), 8) + t[:8],
    "normal__unbatched": lambda l, t: l.zeros(16, dtype=l.float64).normal_() + t,
    "uniform__unbatched": lambda l, t: l.zeros(16, dtype=l.float64).uniform_() + t,
}


def random_outcome(lib: ModuleType, name: str, randomness: str) -> Any:
    x = lib.zeros(4, 16, dtype=lib.float64)  # wide enough that draws differ
    try:
        out = lib.func.vmap(lambda t: RANDOM_OPS[name](lib, t), randomness=randomness)(
            x
        )
    except RuntimeError as error:
        return torch_text(error)
    rows = out.numpy()
    return tuple(out.shape), bool((rows[0] == rows[1]).all())


@pytest.mark.parametrize("randomness", ["error", "same", "different"])
@pytest.mark.parametrize("name", RANDOM_OPS)
def test_random_ops_under_vmap_match_torch(name: str, randomness: str) -> None:
    """Shapes, whether the samples drew alike, and the errors, as torch.func has
    them for each randomness (the values differ: another generator)."""
    assert random_outcome(yg, name, randomness) == random_outcome(
        torch, name, randomness
    )


def test_same_randomness_draws_once_for_all_samples() -> None:
    x = yg.zeros(4, 3)
    out = yg.func.vmap(lambda t: yg.randn_like(t) + t, randomness="same")(x)
    np.testing.assert_array_equal(out.numpy()[0], out.numpy()[3])
    different = yg.func.vmap(lambda t: yg.rand(3) * t, randomness="different")(x + 1)
    assert len({tuple(row) for row in different.numpy()}) == 4
    yg.randn(2)  # the mode ends with the vmap


@pytest.mark.parametrize("randomness", ["error", "same", "different"])
def test_random_ops_of_closed_over_tensors_under_vmap_match_torch(
    randomness: str,
) -> None:
    """bernoulli and normal of tensors made outside the vmap (closed over, not
    batched): "different" draws per sample (the result gains the batch dim),
    "same" once for all, "error" raises PyTorch's text."""

    def outcome(lib: ModuleType) -> Any:
        x = lib.zeros(4, 16, dtype=lib.float64)
        p = lib.full((16,), 0.5, dtype=lib.float64)
        mean, std = lib.zeros(16, dtype=lib.float64), lib.ones(16, dtype=lib.float64)

        def fn(t: Any) -> Any:
            return lib.bernoulli(p) + t, lib.normal(mean, std), lib.normal(mean, 2.0)

        try:
            outs = lib.func.vmap(fn, randomness=randomness)(x)
        except RuntimeError as error:
            return torch_text(error)
        return [
            (tuple(o.shape), len({tuple(row) for row in o.numpy().tolist()}))
            for o in outs
        ]

    expected = {"same": [((4, 16), 1)] * 3, "different": [((4, 16), 4)] * 3}
    assert outcome(yg) == outcome(torch)
    if randomness != "error":
        assert outcome(yg) == expected[randomness]


def test_different_randomness_of_closed_over_tensors_backpropagates_as_torch() -> None:
    def grad_of_mean(lib: ModuleType) -> Any:
        mean = lib.zeros(3, requires_grad=True)
        fn = lambda t: lib.normal(mean, 1.0) * t  # noqa: E731
        out = lib.func.vmap(fn, randomness="different")(lib.ones(4, 3))
        out.sum().backward()
        return tuple(mean.grad.shape), mean.grad.tolist()

    assert grad_of_mean(yg) == grad_of_mean(torch)
