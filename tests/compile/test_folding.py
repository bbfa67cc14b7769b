"""The folding of a generated backward (runtime/compile/folding.py): what is
merged shows in the source, what must not be merged is not, and gradients stay
eager's bit for bit."""

from __future__ import annotations

import ast
from collections.abc import Callable

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.runtime.compile import backward as backward_module
from yamlgrad.runtime.compile.codegen import Stmt, base_namespace, stmt_of
from yamlgrad.runtime.compile.folding import BROADCASTS, fold_backward


def _leaf(*shape: int, seed: int = 0) -> yg.Tensor:
    rng = np.random.default_rng(seed)
    return yg.tensor(rng.uniform(-1.0, 1.0, shape), requires_grad=True)


def _grads(fn: Callable[..., yg.Tensor], leaves: tuple[yg.Tensor, ...]) -> list:
    fn(*leaves).backward()
    grads = [t.grad.numpy().copy() for t in leaves]
    for t in leaves:
        t.grad = None
    return grads


def _both(fn: Callable[..., yg.Tensor], *leaves: yg.Tensor) -> tuple[list, list, str]:
    """fn's gradients compiled, and compiled without folding (which must be
    the same bit for bit, and eager's to rounding), and the compiled
    backward's source without its comments."""
    compiled = yg.compile(fn)
    got = _grads(compiled, leaves)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(backward_module, "fold_backward", lambda stmts, *_: stmts)
        unfolded = yg.compile(fn)
        want = _grads(unfolded, leaves)
    assert "# fused:" not in unfolded.code
    for a, b in zip(_grads(fn, leaves), want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    backward = compiled.code[compiled.code.index("def backward") :]
    lines = backward.splitlines()
    return got, want, "\n".join(x for x in lines if not x.strip().startswith("#"))


def _nll(z: yg.Tensor, hot: yg.Tensor, batch: int) -> yg.Tensor:
    shifted = z - z.amax(dim=1, keepdim=True)
    lse = shifted.exp().sum(dim=1, keepdim=True).log()
    return -((shifted - lse) * hot).sum() / batch


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_mean_loss_gradient_is_one_scaled_product(dtype: type) -> None:
    z = yg.tensor(np.random.default_rng(1).normal(size=(6, 4)).astype(dtype))
    z.requires_grad_()
    hot = yg.tensor(np.eye(4, dtype=dtype)[[0, 3, 2, 1, 1, 0]])
    got, want, backward = _both(lambda z: _nll(z, hot, 6), z)
    # -(g / 6) broadcast and multiplied by hot: one scalar factor, no view
    assert "/ -6 * hot" in backward
    assert "expand(" not in backward and "sum_backward(" not in backward
    assert got[0].dtype == dtype
    np.testing.assert_array_equal(got[0], want[0])


def test_a_sum_without_keepdim_is_no_broadcast_of_its_gradient() -> None:
    # (5,) summed over dim 1 is viewed as (5, 1), where numpy would broadcast
    # a (5,) as (1, 5): folding it would transpose the gradient.
    x = _leaf(5, 5)
    w = yg.tensor(np.arange(1.0, 6.0))
    got, want, backward = _both(lambda x: (x.exp().sum(dim=1) * w).sum(), x)
    assert "sum_backward(" in backward
    np.testing.assert_array_equal(got[0], want[0])


def test_a_broadcast_read_with_a_smaller_operand_stays() -> None:
    x = _leaf(4, 5)
    y = yg.tensor(np.arange(1.0, 6.0))
    got, want, backward = _both(lambda x: (x * y).sum(), x)
    assert "expand(" in backward  # y alone would give a (5,) gradient
    assert got[0].shape == (4, 5)
    np.testing.assert_array_equal(got[0], want[0])


def test_a_0d_chain_folds_into_one_expression() -> None:
    x = _leaf(3, 7)
    got, want, backward = _both(lambda x: (x.sin().mean() * 3.0).neg() / 7, x)
    # -(g / 7) * 3.0 as (g / -7) * 3.0, into mean's backward: one statement
    assert "= mean_backward(grad_div / -7 * 3.0, (3, 7), None, False)" in backward
    assert backward.count("\n    grad_") == 2
    np.testing.assert_array_equal(got[0], want[0])


# -- fold_backward on statements ---------------------------------------------------

_F32 = np.dtype(np.float32)
_METAS = {
    "g": ((), _F32),
    "h": ((), _F32),
    "k": ((), np.dtype(np.int64)),
    "y": ((3, 4), _F32),
    "z": ((3, 4), _F32),
    "t": ((), _F32),
    "u": ((3, 4), _F32),
    "b": ((3, 4), _F32),
    "r": ((3, 4), _F32),
}


def _s(target: str, text: str, op: str = "=") -> Stmt:
    tree = ast.parse(text, mode="eval").body
    uses = {n.id for n in ast.walk(tree) if type(n) is ast.Name}
    return stmt_of([target], tree, uses, op)


def _fold(*stmts: Stmt, keep: tuple[str, ...] = ("r",)) -> list[str]:
    namespace = base_namespace()
    helpers = {name: namespace[name] for name in BROADCASTS}
    folded = fold_backward(list(stmts), _METAS, namespace, helpers, set(keep))
    return [s.text() for s in folded]


def test_folds_a_0d_chain_and_a_broadcast_into_its_reader() -> None:
    assert _fold(
        _s("t", "g / 64"),
        _s("h", "-t"),
        _s("b", "expand(h, (3, 4))"),
        _s("r", "b * y"),
    ) == ["r = g / -64 * y"]


def test_an_update_in_between_stops_the_fold() -> None:
    texts = _fold(_s("t", "g * 2.0"), _s("u", "y", "+="), _s("r", "t * z"))
    assert texts == ["t = g * 2.0", "u += y", "r = t * z"]


def test_a_name_bound_again_in_between_stops_the_fold() -> None:
    texts = _fold(_s("t", "g * 2.0"), _s("g", "h"), _s("r", "t * z"))
    assert texts == ["t = g * 2.0", "g = h", "r = t * z"]


def test_an_array_read_moves_only_into_the_next_line() -> None:
    later = _fold(_s("t", "np.add.reduce(y)"), _s("u", "z * 2.0"), _s("r", "t * z"))
    assert later[0] == "t = np.add.reduce(y)"  # y would live longer
    assert _fold(_s("t", "np.add.reduce(y)"), _s("r", "t * z")) == [
        "r = np.add.reduce(y) * z"
    ]


def test_a_value_read_twice_or_returned_is_kept() -> None:
    assert _fold(_s("t", "g * 2.0"), _s("r", "t * z + t")) == [
        "t = g * 2.0",
        "r = t * z + t",
    ]
    assert _fold(_s("t", "g * 2.0"), _s("u", "t * z"), _s("r", "t * u")) == [
        "t = g * 2.0",
        "u = t * z",
        "r = t * u",
    ]
    assert _fold(_s("t", "g * 2.0"), _s("r", "t * z"), keep=("t", "r")) == [
        "t = g * 2.0",
        "r = t * z",
    ]


def test_a_broadcast_folds_into_an_accumulation_of_its_shape() -> None:
    assert _fold(_s("b", "expand(g, (3, 4))"), _s("r", "b", "+=")) == ["r += g"]
    assert _fold(_s("b", "expand(g, (3, 4))"), _s("r", "z + b")) == ["r = z + g"]


def test_negations_go_onto_nonzero_literals_of_floating_values() -> None:
    assert _fold(_s("t", "g * 2"), _s("r", "-t * z")) == ["r = g * -2 * z"]
    assert _fold(_s("t", "3.0 / g"), _s("r", "-t * z")) == ["r = -3.0 / g * z"]
    # -(g * 0) is -0.0 where g * -0 is +0.0; an integer's sign is not the point
    assert _fold(_s("t", "g * 0"), _s("r", "-t * z")) == ["r = -(g * 0) * z"]
    assert _fold(_s("t", "k * 2"), _s("r", "-t * z")) == ["r = -(k * 2) * z"]


# -- static helpers in the forward -------------------------------------------------


def _forward_of(fn: Callable[..., yg.Tensor], *leaves: yg.Tensor) -> str:
    compiled = yg.compile(fn)
    got = compiled(*leaves)
    want = fn(*leaves)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    got.backward()
    grads = [t.grad.numpy().copy() for t in leaves]
    for t in leaves:
        t.grad = None
    want.backward()
    for t, g in zip(leaves, grads):
        np.testing.assert_array_equal(g, t.grad.numpy())
        t.grad = None
    code = compiled.code
    return code[: code.index("def backward")]


def test_dims_and_shapes_of_the_graph_are_literals_in_the_forward() -> None:
    x = _leaf(2, 3, 4)
    forward = _forward_of(
        lambda x: (x.sum(dim=-1, keepdim=True) * x.mean(dim=(0, 2))[:, None]).sum()
        + x[:1].expand(5, 3, 4).sum(),
        x,
    )
    assert "axis=(-1,)" in forward and "axis=(0, 2)" in forward
    assert "np.broadcast_to(slice, (5, 3, 4))" in forward
    for helper in ("reduce_dims", "expand_shape", ".ndim", ".shape"):
        assert helper not in forward


def test_a_0d_tensor_reduced_over_dim_0_reduces_nothing() -> None:
    x = _leaf()
    forward = _forward_of(lambda x: (x.sum(dim=0) * 3.0).sum(), x)
    assert "axis=()" in forward


def test_only_static_helpers_are_called_at_trace_time() -> None:
    # all.dims' forward calls the static wrap_dims; np.all itself is left alone
    x = yg.tensor(np.array([[1.0, 0.0], [2.0, 3.0]]))
    forward = yg.compile(lambda x: x.all(dim=1))
    np.testing.assert_array_equal(forward(x).numpy(), [False, True])
    assert "wrap_dims" not in forward.code and "np.all(x, axis=(1,)" in forward.code


def test_a_helper_not_marked_static_is_never_called_while_compiling() -> None:
    from types import SimpleNamespace

    from yamlgrad.runtime.compile.codegen import Namespace, _static_folded
    from yamlgrad.runtime.ops.namespace import static

    calls: list[int] = []

    def plain(n: int) -> int:
        calls.append(n)
        return n + 1

    namespace = Namespace({"plain": plain, "pure": static(lambda n: n * 2)})
    call = SimpleNamespace(args={})
    tree = ast.parse("plain(3) + pure(3)", mode="eval").body
    assert ast.unparse(_static_folded(tree, call, namespace)) == "plain(3) + 6"
    assert not calls
