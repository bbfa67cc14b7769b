"""The engine's semantics, as PyTorch's engine has them, that the runtime implements.

Execution order, dependency counting, broadcast reduction, retain_graph and freeing,
`.grad` accumulation, `autograd.grad` pruning and its argument errors, grad mode,
detach, the version check of saved tensors, deep graphs, and the tensor repr.
Where torch is installed, the same program runs in torch as the oracle; error
texts are compared with `runtime/errors.py`, which holds PyTorch's.
"""

from __future__ import annotations

import gc
import inspect
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.generated import Functions
from yamlgrad.runtime import errors
from yamlgrad.runtime.autograd.accumulate_grad import AccumulateGrad
from yamlgrad.runtime.autograd.node import UINT64_MAX, Node
from support import error_message


def _values(n: int, seed: int = 0, low: float = 0.5, high: float = 2.0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, n)


def _leaf(values: Any, dtype: Any = yg.float64) -> yg.Tensor:
    return yg.tensor(values, dtype=dtype, requires_grad=True)


# -- execution order ---------------------------------------------------------------


@pytest.fixture
def executed(monkeypatch: pytest.MonkeyPatch) -> list[Node]:
    """Every node the engine applies, in order (each node class's apply wrapped)."""
    log: list[Node] = []
    classes = [AccumulateGrad] + [
        cls
        for cls in vars(Functions).values()
        if inspect.isclass(cls) and issubclass(cls, Node) and cls is not Node
    ]
    for cls in classes:

        def apply(
            self: Node, grads: list, raw: bool = False, _original: Any = cls.apply
        ) -> list:
            log.append(self)
            return _original(self, grads, raw)

        monkeypatch.setattr(cls, "apply", apply)
    return log


def _parallel_labels(ours: Node, theirs: Any) -> tuple[dict, dict]:
    """Number the nodes of two graphs of the same shape in one walk of both."""
    our_labels: dict[Node, int] = {}
    their_labels: dict[Any, int] = {}
    stack = [(ours, theirs)]
    while stack:
        a, b = stack.pop()
        if a is None or b is None:
            assert a is None and b is None
            continue
        if a in our_labels:
            continue
        assert type(a).__name__ == type(b).__name__
        our_labels[a] = their_labels[b] = len(our_labels)
        pairs = zip(a.next_functions, b.next_functions, strict=True)
        stack.extend((na, nb) for (na, _), (nb, _) in pairs)
    return our_labels, their_labels


def _torch_order(torch: Any, root: Any) -> list[Any]:
    """The order torch runs the nodes under `root` in, from node pre-hooks."""
    order: list[Any] = []
    seen: set[Any] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        node.register_prehook(lambda grads, node=node: order.append(node))
        stack.extend(fn for fn, _ in node.next_functions)
    return order


def _first_example(lib: Any) -> tuple[Any, dict[str, Any]]:
    x = lib.tensor(_values(3), requires_grad=True)
    a = x * 2
    b = x.exp()
    c = a + b
    return c.sum(), {"x": x, "a": a, "b": b, "c": c}


def _second_example(lib: Any) -> tuple[Any, dict[str, Any]]:
    x = lib.tensor(_values(3), requires_grad=True)
    w = lib.tensor(_values(3, seed=1), requires_grad=True)
    a = x * 2
    b = a * 3
    out = b + w
    return out.sum(), {"x": x, "w": w, "a": a, "b": b, "out": out}


def _wide_example(lib: Any) -> tuple[Any, dict[str, Any]]:
    """Leaves used by several ops and sums of products: nodes become ready two at
    a time, and a waiting node is outranked by a later one."""
    ws = [lib.tensor(_values(3, seed=i), requires_grad=True) for i in range(4)]
    x = lib.tensor(_values(3, seed=9), requires_grad=True)
    act = ws[0] * x
    for w in ws[1:]:
        act = act + w * 0.5
    out = act.relu() * ws[2] + ws[0]
    return out.sum(), {"x": x, "act": act, "out": out}


def test_sequence_nr_follows_creation_and_accumulate_grad_is_largest() -> None:
    root, t = _first_example(yg)
    nodes = [t["a"].grad_fn, t["b"].grad_fn, t["c"].grad_fn, root.grad_fn]
    numbers = [n._sequence_nr() for n in nodes]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    accumulate = t["a"].grad_fn.next_functions[0][0]
    assert type(accumulate).__name__ == "AccumulateGrad"
    assert accumulate._sequence_nr() == UINT64_MAX == 2**64 - 1
    assert accumulate._sequence_nr() > max(numbers)


@pytest.mark.parametrize(
    "example, names",
    [
        pytest.param(
            _first_example,
            [
                "SumBackward0",
                "AddBackward0(c)",
                "ExpBackward0(b)",
                "MulBackward0(a)",
                "AccumulateGrad(x)",
            ],
            id="a=x*2; b=x.exp(); c=a+b",
        ),
        pytest.param(
            _second_example,
            [
                "SumBackward0",
                "AddBackward0(out)",
                "AccumulateGrad(w)",
                "MulBackward0(b)",
                "MulBackward0(a)",
                "AccumulateGrad(x)",
            ],
            id="a=x*2; b=a*3; out=b+w",
        ),
    ],
)
def test_execution_order_is_pytorchs(
    executed: list[Node], example: Callable[[Any], Any], names: list[str]
) -> None:
    """Highest sequence_nr first among ready nodes; AccumulateGrad before others.

    The orders are PyTorch's, observed with pre-hooks in PyTorch.
    """
    root, t = example(yg)
    labels = {}
    for name, value in t.items():
        node = value.grad_fn or _accumulator(value, root.grad_fn)
        labels[node] = f"{type(node).__name__}({name})"
    root.backward()
    assert [labels.get(n, type(n).__name__) for n in executed] == names


def _accumulator(leaf: yg.Tensor, root: Node) -> Node:
    """The AccumulateGrad node of `leaf` in the graph under `root`."""
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if isinstance(node, AccumulateGrad) and node.variable is leaf:
            return node
        stack.extend(fn for fn, _ in node.next_functions)
    raise AssertionError("leaf not in the graph")


@pytest.mark.parametrize("example", [_first_example, _second_example, _wide_example])
def test_execution_order_matches_torch(
    executed: list[Node], example: Callable[[Any], Any]
) -> None:
    torch = pytest.importorskip("torch")
    root, _ = example(yg)
    ref, _ = example(torch)
    ours, theirs = _parallel_labels(root.grad_fn, ref.grad_fn)
    torch_order = _torch_order(torch, ref.grad_fn)
    root.backward()
    ref.backward()
    assert [ours[n] for n in executed] == [theirs[n] for n in torch_order]


# -- dependency counting ----------------------------------------------------------


def test_tensor_used_twice_by_one_op_gets_both_gradients() -> None:
    values = _values(3)
    x = _leaf(values)
    y = x * 3
    z = y + y
    assert z.grad_fn.next_functions[0] == z.grad_fn.next_functions[1]
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * 3 * np.ones_like(values))
    x.grad = None
    y = x * 3
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (3 * values) * 3)


def test_diamond_runs_each_node_once_with_the_summed_gradient(
    executed: list[Node],
) -> None:
    values = _values(4)
    x = _leaf(values)
    a = x * 2
    d = a.exp() * a.sin()
    d.sum().backward()
    assert len(executed) == len(set(executed))
    assert executed.count(a.grad_fn) == 1
    two_x = 2 * values
    want = 2 * np.exp(two_x) * (np.sin(two_x) + np.cos(two_x))
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)


def _backward_copy(lib: Any) -> tuple[Any, Any]:
    """PyTorch's test_backward_copy: one gradient buffered in three places."""
    x = lib.ones(5, 5, requires_grad=True)
    y = lib.ones(5, 5, requires_grad=True)
    a, b, c = x + 2, y + 2, x + 2
    add2 = (a + b) + c
    for _ in range(4):
        a, b, c = a * 2, b * 2, c * 2
    out = add2 + (a + b + c)
    out.backward(lib.ones(5, 5))
    return x.grad, y.grad


def test_gradient_buffered_in_three_places_is_not_mutated() -> None:
    """The documented result: x.grad == 34 and y.grad == 17 everywhere."""
    gx, gy = _backward_copy(yg)
    np.testing.assert_array_equal(gx.numpy(), np.full((5, 5), 34.0))
    np.testing.assert_array_equal(gy.numpy(), np.full((5, 5), 17.0))


def test_gradient_buffered_in_three_places_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    for ours, theirs in zip(_backward_copy(yg), _backward_copy(torch)):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# -- broadcasting ---------------------------------------------------------------------


def test_broadcast_inputs_get_gradients_of_their_own_shape() -> None:
    """The documented example: a(2,3) + b(3) + c(1,3) + s(), summed."""
    a = yg.ones(2, 3, requires_grad=True)
    b = yg.ones(3, requires_grad=True)
    c = yg.ones(1, 3, requires_grad=True)
    s = yg.tensor(1.0, requires_grad=True)
    (a + b + c + s).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(b.grad.numpy(), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(c.grad.numpy(), [[2.0, 2.0, 2.0]])
    assert s.grad.shape == () and s.grad.item() == 6.0


def test_broadcast_gradients_match_torch_with_a_random_cotangent() -> None:
    torch = pytest.importorskip("torch")
    shapes = [(2, 1, 3), (4, 1), (3,), ()]
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s) for s in shapes]
    ours = [yg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = ours[0] * ours[1] + ours[2] * ours[3]
    ref = theirs[0] * theirs[1] + theirs[2] * theirs[3]
    cotangent = rng.standard_normal(tuple(ref.shape))
    out.backward(yg.tensor(cotangent))
    ref.backward(torch.tensor(cotangent))
    for x, t in zip(ours, theirs):
        assert x.grad.shape == x.shape
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)


# -- retain_graph and freeing ------------------------------------------------------


def test_second_backward_without_retain_graph_raises() -> None:
    x = _leaf(_values(3))
    y = (x * x).sum()
    y.backward()
    message = error_message(lambda: y.backward())
    assert message == errors.ERR_BACKWARD_TWICE
    assert message.startswith("Trying to backward through the graph a second time")


def test_backward_twice_error_text_is_torchs() -> None:
    torch = pytest.importorskip("torch")
    x = torch.tensor(_values(3), requires_grad=True)
    y = (x * x).sum()
    y.backward()
    assert error_message(lambda: y.backward()) == errors.ERR_BACKWARD_TWICE


def test_saved_tensor_is_freed_after_backward() -> None:
    x = _leaf(_values(3))
    y = x * x
    assert y.grad_fn._saved_self is x  # a leaf input is saved as itself
    y.sum().backward()
    assert error_message(lambda: y.grad_fn._saved_self) == errors.ERR_BACKWARD_TWICE
    assert error_message(lambda: y.grad_fn._saved_other) == errors.ERR_BACKWARD_TWICE


def test_second_grad_call_without_retain_graph_raises() -> None:
    x = _leaf(_values(3))
    y = x.exp().sum()
    yg.autograd.grad(y, x)
    assert error_message(lambda: yg.autograd.grad(y, x)) == errors.ERR_BACKWARD_TWICE


def test_retain_graph_allows_a_second_backward_that_accumulates() -> None:
    values = _values(3)
    x = _leaf(values)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    np.testing.assert_allclose(first, 2 * values)
    assert y.grad_fn.next_functions[0][0]._saved_self is not None
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first)


def test_graph_that_saved_nothing_can_run_twice() -> None:
    x = _leaf(_values(3))
    y = (x + 1).sum()
    y.backward()
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * np.ones(3))


# -- .grad accumulation ----------------------------------------------------------------


def test_grad_accumulates_in_place_keeping_identity() -> None:
    values = _values(3)
    x = _leaf(values)
    (x * x).sum().backward()
    grad = x.grad
    data = grad.numpy()
    (x * x).sum().backward()
    assert x.grad is grad and x.grad.numpy() is data
    np.testing.assert_allclose(x.grad.numpy(), 2 * 2 * values)


def test_accumulating_never_writes_into_a_shared_gradient() -> None:
    """One ndarray flows to two leaves and came from the user: all stay intact."""
    x = _leaf(_values(3))
    w = _leaf(_values(3, seed=1))
    seed = yg.tensor(np.ones(3))
    for step in (1, 2):
        (x + w).backward(seed)
        np.testing.assert_array_equal(x.grad.numpy(), step * np.ones(3))
        np.testing.assert_array_equal(w.grad.numpy(), step * np.ones(3))
    np.testing.assert_array_equal(seed.numpy(), np.ones(3))
    assert not np.shares_memory(x.grad.numpy(), w.grad.numpy())


def test_first_grad_under_create_graph_is_a_copy() -> None:
    """With create_graph=True the incoming gradient is copied into `.grad` too:
    it may be the user's tensor, or flow to several leaves, and a later backward
    adds into `.grad` in place."""
    x = _leaf(_values(3))
    w = _leaf(_values(3, seed=1))
    seed = yg.tensor(np.ones(3))
    (x + w).backward(seed, create_graph=True)
    assert x.grad is not seed and x.grad is not w.grad
    (x + w).backward(seed)
    np.testing.assert_array_equal(x.grad.numpy(), 2 * np.ones(3))
    np.testing.assert_array_equal(w.grad.numpy(), 2 * np.ones(3))
    np.testing.assert_array_equal(seed.numpy(), np.ones(3))
    x.grad = None
    x.backward(seed, create_graph=True)
    x.backward(seed)
    np.testing.assert_array_equal(x.grad.numpy(), 2 * np.ones(3))
    np.testing.assert_array_equal(seed.numpy(), np.ones(3))


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("seed_dtype", [yg.float64, yg.int64])
def test_seed_gradient_is_cast_to_the_root_dtype(
    seed_dtype: Any, create_graph: bool
) -> None:
    """PyTorch validates the root gradients: `.grad` keeps the leaf's dtype."""
    x = yg.tensor([1.0, 2.0], requires_grad=True)
    seed = yg.tensor([1, 2], dtype=seed_dtype)
    x.backward(seed, create_graph=create_graph)
    assert x.grad.dtype == yg.float32
    np.testing.assert_array_equal(x.grad.detach().numpy(), [1.0, 2.0])
    (gx,) = yg.autograd.grad(x, x, seed, create_graph=create_graph)
    assert gx.dtype == yg.float32
    (gy,) = yg.autograd.grad(x * 2, x, seed, create_graph=create_graph)
    assert gy.dtype == yg.float32


def test_grad_keeps_the_leaf_dtype() -> None:
    x = _leaf(_values(3), dtype=yg.float32)
    y = _leaf(_values(3))
    (x * y).sum().backward()
    assert x.grad.dtype == yg.float32 and y.grad.dtype == yg.float64


# -- autograd.grad -----------------------------------------------------------------------


def test_grad_returns_gradients_and_leaves_dot_grad_alone() -> None:
    values = _values(3)
    x = _leaf(values)
    (gx,) = yg.autograd.grad((x * x).sum(), x)
    np.testing.assert_allclose(gx.numpy(), 2 * values)
    assert x.grad is None
    assert gx.grad_fn is None and not gx.requires_grad


def test_grad_hands_out_an_expanded_gradient_as_the_view_torch_does() -> None:
    """A sum's gradient is its cotangent expanded: `grad` returns that view (no
    copy), whose in-place ops raise PyTorch's overlap error; `.grad` gets a copy."""
    torch = pytest.importorskip("torch")
    x, tx = _leaf(_values(3)), torch.tensor(_values(3), requires_grad=True)
    (gx,) = yg.autograd.grad(x.sum(), x)
    (tgx,) = torch.autograd.grad(tx.sum(), tx)
    assert gx.numpy().strides == (0,) and tgx.stride() == (0,)
    np.testing.assert_array_equal(gx.numpy(), tgx.numpy())
    assert error_message(lambda: gx.add_(1.0)) == errors.ERR_INPLACE_OVERLAP
    x.sum().backward()
    assert x.grad.numpy().flags.writeable
    x.grad.add_(1.0)


def test_grad_with_respect_to_a_non_leaf_does_not_run_below_it() -> None:
    vx, vw = _values(3), _values(3, seed=1)
    x, w = _leaf(vx), _leaf(vw)
    a = x * w
    (ga,) = yg.autograd.grad((a * a).sum(), a)
    np.testing.assert_allclose(ga.numpy(), 2 * vx * vw)
    assert x.grad is None and w.grad is None
    # a's node did not run, so it still holds what it saved.
    assert a.grad_fn._saved_self is x and a.grad_fn._saved_other is w


def test_grad_of_an_unused_input_raises_pytorchs_error() -> None:
    x, w = _leaf(_values(3)), _leaf(_values(3, seed=1))
    message = error_message(lambda: yg.autograd.grad((x * 2).sum(), [x, w]))
    assert message == (
        "The differentiated Tensor at index 1 appears to not have been used in the "
        "graph. Set allow_unused=True if this is the desired behavior."
    )


def test_allow_unused_gives_none_and_materialize_grads_gives_zeros() -> None:
    x, w = _leaf(_values(3)), _leaf(_values(2, seed=1))
    gx, gw = yg.autograd.grad((x * 2).sum(), [x, w], allow_unused=True)
    np.testing.assert_array_equal(gx.numpy(), 2 * np.ones(3))
    assert gw is None
    gx, gw = yg.autograd.grad((x * 2).sum(), [x, w], materialize_grads=True)
    assert gw.shape == w.shape and gw.dtype == w.dtype
    np.testing.assert_array_equal(gw.numpy(), np.zeros(2))
    with pytest.raises(ValueError, match="Expected allow_unused to be True"):
        yg.autograd.grad(
            (x * 2).sum(), [x, w], allow_unused=False, materialize_grads=True
        )


def test_grad_outputs_is_the_vector_of_the_vjp() -> None:
    values, v = _values(3), _values(3, seed=3, low=-1.0)
    x = _leaf(values)
    (gx,) = yg.autograd.grad(x * x, x, grad_outputs=yg.tensor(v))
    np.testing.assert_allclose(gx.numpy(), 2 * values * v)


def test_grad_of_several_outputs_sums_them() -> None:
    values = _values(3)
    x = _leaf(values)
    (gx,) = yg.autograd.grad([(x * x).sum(), (x * 3).sum()], x)
    np.testing.assert_allclose(gx.numpy(), 2 * values + 3)


def test_grad_input_that_does_not_require_grad_raises() -> None:
    x = _leaf(_values(3))
    message = error_message(lambda: yg.autograd.grad((x * 2).sum(), yg.tensor([1.0])))
    assert message == "One of the differentiated Tensors does not require grad"


def test_grad_with_empty_inputs_raises() -> None:
    x = _leaf(_values(3))
    message = error_message(lambda: yg.autograd.grad((x * 2).sum(), []))
    assert message == "`inputs` argument to `grad()` cannot be empty."


# -- backward's arguments ------------------------------------------------------------


def test_backward_of_several_roots_sums_through_one_task() -> None:
    vx, vw = _values(3), _values(3, seed=1)
    gz, gc = _values(3, seed=2, low=-1.0), _values(3, seed=3, low=-1.0)
    x, w = _leaf(vx), _leaf(vw)
    z, c = x * w, w.exp()
    yg.autograd.backward([z, c], [yg.tensor(gz), yg.tensor(gc)])
    np.testing.assert_allclose(x.grad.numpy(), gz * vw)
    np.testing.assert_allclose(w.grad.numpy(), gz * vx + gc * np.exp(vw))


def test_duplicate_roots_add_their_gradients() -> None:
    values = _values(3)
    g1, g2 = _values(3, seed=2, low=-1.0), _values(3, seed=3, low=-1.0)
    x = _leaf(values)
    z = x * x
    yg.autograd.backward([z, z], [yg.tensor(g1), yg.tensor(g2)])
    np.testing.assert_allclose(x.grad.numpy(), 2 * values * (g1 + g2))
    x.grad = None
    s = x.sum()
    yg.autograd.backward([s, s])
    np.testing.assert_array_equal(x.grad.numpy(), 2 * np.ones(3))


def test_duplicate_roots_match_torch() -> None:
    torch = pytest.importorskip("torch")
    values = _values(3)
    x = _leaf(values)
    t = torch.tensor(values, requires_grad=True)
    z, r = (x * x).sum(), (t * t).sum()
    yg.autograd.backward([z, z])
    torch.autograd.backward([r, r])
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


def test_backward_inputs_only_touches_those_leaves() -> None:
    vx, vw = _values(3), _values(3, seed=1)
    x, w = _leaf(vx), _leaf(vw)
    (x * w).sum().backward(inputs=[x])
    np.testing.assert_allclose(x.grad.numpy(), vw)
    assert w.grad is None
    assert error_message(lambda: (x * w).sum().backward(inputs=[])) == (
        "`inputs` argument to `backward()` cannot be empty."
    )


def test_non_scalar_backward_needs_a_gradient() -> None:
    x = _leaf(_values(3))
    message = error_message(lambda: (x * 2).backward())
    assert message == "grad can be implicitly created only for scalar outputs"


def test_gradient_of_the_wrong_shape_is_rejected() -> None:
    x = _leaf(_values(2))
    message = error_message(lambda: (x * 2).backward(yg.ones(2, 2, dtype=yg.float64)))
    assert message == (
        "Mismatch in shape: grad_output[0] has a shape of yamlgrad.Size([2, 2]) and "
        "output[0] has a shape of yamlgrad.Size([2])."
    )


def test_fewer_gradients_than_outputs_is_torchs_error() -> None:
    x = _leaf(_values(2))
    roots = [(x * 2).sum(), (x * 3).sum()]
    message = error_message(lambda: yg.autograd.backward(roots, [yg.tensor(1.0)]))
    assert message == "got 2 tensors and 1 gradients"


def test_output_that_does_not_require_grad_is_rejected() -> None:
    message = error_message(lambda: yg.tensor([1.0, 2.0]).sum().backward())
    assert message == (
        "element 0 of tensors does not require grad and does not have a grad_fn"
    )


@pytest.mark.parametrize(
    "program",
    [
        pytest.param(lambda lib, x: (x * 2).backward(), id="non-scalar"),
        pytest.param(
            lambda lib, x: (x * 2).backward(lib.ones(2, 2, dtype=x.dtype)),
            id="shape",
        ),
        pytest.param(
            lambda lib, x: lib.tensor([1.0, 2.0]).sum().backward(), id="no-grad-fn"
        ),
        pytest.param(
            lambda lib, x: lib.autograd.grad((x * 2).sum(), [x, lib.ones(2)]),
            id="input-without-grad",
        ),
        pytest.param(
            lambda lib, x: lib.autograd.grad(
                (x * 2).sum(), [x, lib.ones(2, requires_grad=True)]
            ),
            id="unused",
        ),
        pytest.param(
            lambda lib, x: lib.autograd.grad(
                (x * 2).sum(), [x, x], allow_unused=False, materialize_grads=True
            ),
            id="materialize",
        ),
        pytest.param(
            lambda lib, x: lib.autograd.backward(
                [x.sum(), (x * 2).sum()], [lib.tensor(1.0)]
            ),
            id="gradient-count",
        ),
        pytest.param(
            lambda lib, x: lib.tensor([1, 2], requires_grad=True), id="int-dtype"
        ),
        pytest.param(lambda lib, x: x.numpy(), id="numpy"),
        pytest.param(lambda lib, x: setattr(x, "grad", 1.0), id="grad-type"),
        pytest.param(
            lambda lib, x: setattr(x, "grad", lib.ones(3, dtype=x.dtype)),
            id="grad-size",
        ),
        pytest.param(
            lambda lib, x: setattr(x, "grad", lib.ones(2, dtype=lib.float32)),
            id="grad-dtype",
        ),
        pytest.param(lambda lib, x: (x * 2).requires_grad_(False), id="non-leaf"),
    ],
)
def test_error_texts_match_torch(program: Callable[[Any, Any], object]) -> None:
    torch = pytest.importorskip("torch")
    values = _values(2)
    ours = error_message(lambda: program(yg, _leaf(values)), Exception)
    theirs = error_message(
        lambda: program(torch, torch.tensor(values, requires_grad=True)), Exception
    )
    assert ours.replace("yamlgrad.", "torch.") == theirs


# -- grad mode -----------------------------------------------------------------------


def test_no_grad_results_have_no_history() -> None:
    x = _leaf(_values(3))
    with yg.no_grad():
        assert not yg.is_grad_enabled()
        y = x * 2
    assert yg.is_grad_enabled()
    assert y.grad_fn is None and y.is_leaf and not y.requires_grad
    assert x.requires_grad and x.is_leaf


def test_no_grad_works_as_a_decorator() -> None:
    x = _leaf(_values(3))

    @yg.no_grad()
    def double(t: yg.Tensor) -> yg.Tensor:
        assert not yg.is_grad_enabled()
        return t * 2

    y = double(x)
    assert y.grad_fn is None and not y.requires_grad
    assert yg.is_grad_enabled()


def test_no_grad_and_enable_grad_decorate_without_parentheses() -> None:
    x = _leaf(_values(3))

    @yg.no_grad
    def double(t: yg.Tensor) -> yg.Tensor:
        return t * 2

    @yg.enable_grad
    def triple(t: yg.Tensor) -> yg.Tensor:
        return t * 3

    assert double.__name__ == "double"
    assert double(x).grad_fn is None
    with yg.no_grad():
        assert triple(x).grad_fn is not None
        assert not yg.is_grad_enabled()
    assert yg.is_grad_enabled()


def test_enable_grad_inside_no_grad_records() -> None:
    x = _leaf(_values(3))
    with yg.no_grad():
        with yg.enable_grad():
            y = x * 2
        z = x * 2
        assert not yg.is_grad_enabled()
    assert type(y.grad_fn).__name__ == "MulBackward0" and y.requires_grad
    assert z.grad_fn is None


def test_set_grad_enabled_as_a_plain_call_and_as_a_context() -> None:
    x = _leaf(_values(3))
    try:
        yg.set_grad_enabled(False)
        assert not yg.is_grad_enabled()
        assert (x * 2).grad_fn is None
    finally:
        yg.set_grad_enabled(True)
    assert yg.is_grad_enabled() and (x * 2).grad_fn is not None
    with yg.set_grad_enabled(False):
        assert (x * 2).grad_fn is None
    assert yg.is_grad_enabled()


def test_backward_under_no_grad_still_computes_gradients() -> None:
    values = _values(3)
    x = _leaf(values)
    y = (x * x).sum()
    with yg.no_grad():
        y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * values)


def test_create_graph_gives_a_grad_with_history() -> None:
    values = _values(3)
    x = _leaf(values)
    (x * x * x).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None and x.grad.requires_grad
    np.testing.assert_allclose(x.grad.detach().numpy(), 3 * values**2)
    (second,) = yg.autograd.grad(x.grad.sum(), x)
    np.testing.assert_allclose(second.numpy(), 6 * values)


def test_requires_grad_needs_a_floating_dtype() -> None:
    text = "Only Tensors of floating point and complex dtype can require gradients"
    assert error_message(lambda: yg.tensor([1, 2], requires_grad=True)) == text
    assert error_message(lambda: yg.tensor([1, 2]).requires_grad_()) == text
    assert (
        error_message(lambda: yg.zeros(2, dtype=yg.int64, requires_grad=True)) == text
    )


def test_numpy_of_a_tensor_that_requires_grad_raises() -> None:
    x = _leaf(_values(3))
    assert error_message(lambda: x.numpy()) == (
        "Can't call numpy() on Tensor that requires grad. "
        "Use tensor.detach().numpy() instead."
    )
    assert error_message(lambda: (x * 2).numpy()) == errors.ERR_NUMPY_REQUIRES_GRAD


def test_detach_shares_data_and_version_counter() -> None:
    values = _values(3)
    x = _leaf(values)
    y = x * 2
    d = y.detach()
    assert d.grad_fn is None and d.is_leaf and not d.requires_grad
    d.numpy()[0] = -1.0
    assert y.detach().numpy()[0] == -1.0
    d.version_counter.bump()
    assert y._version == 1


# -- in-place modification of a saved tensor -----------------------------------------


@pytest.mark.parametrize(
    "bump",
    [
        pytest.param(lambda t: t.version_counter.bump(), id="bump"),
        pytest.param(lambda t: setattr(t.version_counter, "value", 1), id="value"),
    ],
)
def test_modified_saved_tensor_is_detected(bump: Callable[[yg.Tensor], None]) -> None:
    x = _leaf(_values(3))
    y = x * 2
    z = y * y
    assert y._version == 0
    bump(y)
    message = error_message(lambda: z.sum().backward())
    assert (
        "one of the variables needed for gradient computation has been modified by "
        "an inplace operation" in message
    )
    assert "is at version 1; expected version 0 instead" in message
    assert ", which is output 0 of Mul," in message


def test_modified_saved_leaf_and_output_are_detected() -> None:
    x = _leaf(_values(3))
    z = x * x
    x.version_counter.value += 1
    message = error_message(lambda: z.sum().backward())
    assert "is at version 1; expected version 0 instead" in message
    assert "which is output" not in message  # a leaf has no grad_fn
    e = _leaf(_values(3)).exp()  # saves its result
    e.version_counter.bump()
    message = error_message(lambda: e.sum().backward())
    assert ", which is output 0 of Exp, is at version 1; expected version 0" in message


def test_version_check_message_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    values = _values(3)
    e = _leaf(values).exp()
    e.version_counter.bump()
    ours = error_message(lambda: e.sum().backward())
    t = torch.tensor(values, requires_grad=True).exp()
    with torch.no_grad():
        t.mul_(1.0)
    theirs = error_message(lambda: t.sum().backward())
    assert ours == theirs.replace("[torch.DoubleTensor", "[DoubleTensor")


# -- deep graphs -------------------------------------------------------------------------


def test_deep_chain_runs_and_frees_without_recursion() -> None:
    depth = 200_000
    x = _leaf([1.0])
    y = x
    for _ in range(depth):
        y = y * 1.0001
    node = y.grad_fn
    for _ in range(depth - 1):
        node = node.next_functions[0][0]
    first = weakref.ref(node)
    assert type(first()).__name__ == "MulBackward0"
    del node
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0001**depth], rtol=1e-9)
    del y
    gc.collect()
    assert first() is None


def test_deep_chain_of_additions_is_freed_after_backward() -> None:
    depth = 200_000
    x = _leaf([0.0])
    y = x
    for _ in range(depth):
        y = y + 1
    last = weakref.ref(y.grad_fn)
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0])
    del y
    gc.collect()
    assert last() is None


# -- repr -----------------------------------------------------------------------------------


def test_repr_of_leaves_and_results() -> None:
    assert repr(yg.tensor(2.0, requires_grad=True)) == "tensor(2., requires_grad=True)"
    x = yg.ones(2, 2, requires_grad=True)
    out = (x + 2) * (x + 2) * 3
    assert repr(out) == (
        "tensor([[27., 27.],\n        [27., 27.]], grad_fn=<MulBackward0>)"
    )
    out.mean().backward()
    assert repr(x.grad) == "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])"
    y = yg.tensor([1.5, -2.0], dtype=yg.float64) * 2
    assert repr(y) == "tensor([ 3., -4.], dtype=yamlgrad.float64)"
    assert repr(_leaf([0.5]) * 2) == (
        "tensor([1.], dtype=yamlgrad.float64, grad_fn=<MulBackward0>)"
    )


def _repr_cases() -> Iterator[Any]:
    rng = np.random.default_rng(5)
    yield 2.0
    yield [0.5478, -0.9209]
    yield [[1e-5, 1.0]]
    yield [0.001, 10.0]
    yield [1.0, 10000.0]
    yield [0.0, -1.0]
    yield [float("nan"), 1.0, float("inf")]
    yield rng.standard_normal((3, 12)).astype(np.float32)
    yield rng.standard_normal((2, 2, 3)).astype(np.float32)
    yield rng.standard_normal(2000).astype(np.float32)
    yield np.arange(-3, 4)
    yield np.array([True, False])


@pytest.mark.parametrize(
    "data", [pytest.param(d, id=str(i)) for i, d in enumerate(_repr_cases())]
)
def test_repr_matches_torch(data: Any) -> None:
    torch = pytest.importorskip("torch")
    assert repr(yg.tensor(data)) == repr(torch.tensor(data))
    if np.asarray(data).dtype.kind == "f":
        ours = repr(yg.tensor(data, requires_grad=True) * 2)
        theirs = repr(torch.tensor(data, requires_grad=True) * 2)
        assert ours == theirs


def test_summed_gradients_never_mutate_an_array_seen_outside_the_engine() -> None:
    """A tensor used four times sums four gradients; the engine adds the later ones
    into the array its first sum created, never into one a node or hook handed out."""
    x = yg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2.0
    outputs_seen: list[tuple[np.ndarray, np.ndarray]] = []

    def record(grad_inputs: Any, grad_outputs: Any) -> None:
        for g in grad_inputs:
            if g is not None:
                outputs_seen.append((g.numpy(), g.numpy().copy()))

    s = y + y  # AddBackward0 hands the same gradient to both of its inputs
    s.grad_fn.register_hook(record)
    y_grads: list[yg.Tensor] = []
    y.register_hook(lambda g: y_grads.append(g))
    (s * 3.0 + y * 5.0 + y).sum().backward(retain_graph=True)
    np.testing.assert_array_equal(y_grads[0].numpy(), np.full(3, 12.0))
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 24.0))
    assert outputs_seen
    for array, snapshot in outputs_seen:
        np.testing.assert_array_equal(array, snapshot)
    # the gradient the hook kept is not changed by a second backward either
    kept = y_grads[0].numpy().copy()
    (y * 1.0 + y).sum().backward()
    np.testing.assert_array_equal(y_grads[0].numpy(), kept)


def test_a_node_returning_a_tuple_of_gradients_still_runs() -> None:
    """The engine takes a node's gradients as any sequence, not only a list."""
    x = yg.tensor(np.ones(2), requires_grad=True)
    y = x * 2.0
    node_class = type(y.grad_fn)

    class TupleNode(node_class):  # type: ignore[valid-type, misc]
        __slots__ = ()

        def apply(self, grads: list, raw: bool = False) -> tuple:  # type: ignore[override]
            return tuple(node_class.apply(self, grads, raw))

    y.grad_fn.__class__ = TupleNode
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_a_leafs_grad_accumulator_takes_no_sequence_number() -> None:
    """PyTorch builds AccumulateGrad with UINT64_MAX and no number from the
    counter: nodes made around a leaf's first use are numbered consecutively."""
    torch = pytest.importorskip("torch")
    steps = []
    for lib in (yg, torch):
        a, b, c = (lib.ones(2, requires_grad=True) for _ in range(3))
        x = a * 2
        y = b * c
        z = x + y
        first = x.grad_fn._sequence_nr()
        steps.append([t.grad_fn._sequence_nr() - first for t in (x, y, z)])
        leaf_node = z.grad_fn.next_functions[0][0].next_functions[0][0]
        assert leaf_node._sequence_nr() == 2**64 - 1
    assert steps[0] == steps[1] == [0, 1, 2]
