"""yg.compile's horizontal packing (runtime/compile/packing.py): random graphs of
small values over several entries give the same values and gradients packed,
unpacked and eagerly; double backward, in-place ops on inputs, guards, hooks
and graphs of big arrays keep their behaviour."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.runtime.compile import packing

Graph = Callable[..., yg.Tensor]


def _random_graph(seed: int, width: int, depth: int) -> Graph:
    """A function of `width` leaves: `depth` layers of `width` values, each one
    entry (add, mul, sub, div, relu, tanh, exp, log, pow, a Python number that
    differs per value) of values of the layer before, some read several times;
    the loss sums the last layer and a few earlier values again. A layer is one
    entry, or two alternating (so a group reads every other row of another);
    its operands are the same positions, shifted ones, or random ones."""
    rng = np.random.default_rng(seed)
    kinds = ["add", "mul", "sub", "div", "relu", "tanh", "exp", "log", "pow"]
    kinds += ["scale", "shift"]
    plan = []
    for _ in range(depth):
        ops = [str(o) for o in rng.choice(kinds, size=int(rng.integers(1, 3)))]
        mode = str(rng.choice(["aligned", "shifted", "random"]))
        layer = []
        for k in range(width):
            i, j = k, (k + 1) % width
            if mode == "random":
                i, j = (int(n) for n in rng.integers(width, size=2))
            elif mode == "aligned":
                j = k
            c = float(rng.uniform(0.5, 1.5))
            layer.append((ops[k % len(ops)], i, j, c))
        plan.append(layer)
    reused = [int(i) for i in rng.integers(width * depth, size=3)]

    def fn(*leaves: yg.Tensor) -> yg.Tensor:
        values = list(leaves)
        previous = list(leaves)
        for layer in plan:
            current = []
            for op, i, j, c in layer:
                a, b = previous[i], previous[j]
                current.append(_apply(op, a, b, c))
            values += current
            previous = current
        total = previous[0]
        for v in previous[1:] + [values[width + r] for r in reused]:
            total = total + v
        return total

    return fn


def _apply(op: str, a: yg.Tensor, b: yg.Tensor, c: float) -> yg.Tensor:
    if op == "add":
        return a + b
    if op == "mul":
        return a * b
    if op == "sub":
        return a - b
    if op == "div":
        return a / (b * b + 1.0)
    if op == "relu":
        return yg.relu(a)
    if op == "tanh":
        return a.tanh()
    if op == "exp":
        return (a * 0.1).exp()
    if op == "log":
        return (a * a + 1.0).log()
    if op == "pow":
        return (a * a + 0.5) ** 1.5
    if op == "scale":
        return a * c
    return a + c


def _leaves(n: int, shape: tuple[int, ...], seed: int) -> list[yg.Tensor]:
    rng = np.random.default_rng(seed)
    return [
        yg.tensor(rng.uniform(-1, 1, shape), dtype=yg.float64, requires_grad=True)
        for _ in range(n)
    ]


def _run(fn: Graph, leaves: list[yg.Tensor]) -> tuple[np.ndarray, list]:
    """The value and the leaves' gradients (None: a leaf the graph never read)."""
    for t in leaves:
        t.grad = None
    out = fn(*leaves)
    out.sum().backward()
    grads = [None if t.grad is None else t.grad.numpy().copy() for t in leaves]
    return out.detach().numpy().copy(), grads


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shape", [(1,), (3,), ()])
def test_packed_unpacked_and_eager_agree_on_random_graphs(
    seed: int, shape: tuple[int, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    fn = _random_graph(seed, width=12, depth=6)
    leaves = _leaves(12, shape, seed)
    want_value, want_grads = _run(fn, leaves)
    packed = yg.compile(fn)
    got_value, got_grads = _run(packed, leaves)
    assert "packed" in packed.code
    monkeypatch.setattr(packing, "MIN_GROUP", 10**9)
    unpacked = yg.compile(fn)
    plain_value, plain_grads = _run(unpacked, leaves)
    assert "packed" not in unpacked.code
    for value in (got_value, plain_value):
        np.testing.assert_allclose(value, want_value, rtol=1e-12, atol=1e-12)
    for grads in (got_grads, plain_grads):
        _same(grads, want_grads)
    # The second call runs the cached packed graph on the same leaves.
    again_value, again_grads = _run(packed, leaves)
    np.testing.assert_allclose(again_value, want_value, rtol=1e-12, atol=1e-12)
    _same(again_grads, want_grads)


def _same(grads: list, want_grads: list) -> None:
    for got, want in zip(grads, want_grads, strict=True):
        assert (got is None) == (want is None)
        if want is not None:
            assert (got.shape, got.dtype) == (want.shape, want.dtype)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def _scalar_mlp(*flat: yg.Tensor) -> yg.Tensor:
    """micrograd's 5-4-1 MLP on size-1 values: weights, biases, then the input."""
    xs = [0.3, -0.7, 0.2, 0.9, -0.1]
    w1, b1, w2, b2 = flat[:20], flat[20:24], flat[24:28], flat[28]
    hidden = []
    for r in range(4):
        act = b1[r]
        for k in range(5):
            act = act * 0.9 + w1[5 * r + k] * xs[k]  # each term in its place
        hidden.append(yg.relu(act) if r % 2 else act.tanh())
    out = b2
    for w, h in zip(w2, hidden):
        out = out + w * h
    return (out - 0.5) * (out - 0.5)


# 0-d values (`tensor(2.0)`) pack as one row each, like (1,)-shaped ones.
SCALARS = pytest.mark.parametrize("shape", [(1,), ()])


@SCALARS
def test_the_groups_and_their_calls_are_named_in_the_source(
    shape: tuple[int, ...],
) -> None:
    step = yg.compile(_scalar_mlp)
    step(*_leaves(29, shape, 0))
    code = step.code
    assert "packed_inputs = " in code  # the inputs, one cat (stack of 0-d ones)
    assert ("np.stack([" in code) == (shape == ())
    assert "24 calls packed: mul, mul_1" in code  # w * x and b * 0.9 of the first layer
    assert "other_numbers" in code  # the xs, one constant vector
    assert "packed_inputs" in step.explanation()


@SCALARS
def test_double_backward_through_a_packed_node_replays_eagerly(
    shape: tuple[int, ...],
) -> None:
    leaves = _leaves(29, shape, 1)
    step = yg.compile(_scalar_mlp)
    assert "packed" in (step(*leaves), step.code)[1]

    def second(fn: Graph) -> list[np.ndarray]:
        for t in leaves:
            t.grad = None
        grads = yg.autograd.grad(fn(*leaves), leaves, create_graph=True)
        sum(g.sum() for g in grads).backward()
        return [t.grad.numpy().copy() for t in leaves]

    for got, want in zip(second(step), second(_scalar_mlp)):
        assert got.shape == want.shape == shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@SCALARS
def test_in_place_on_an_input_is_written_back_around_packed_groups(
    shape: tuple[int, ...],
) -> None:
    def fn(counter: yg.Tensor, *xs: yg.Tensor) -> yg.Tensor:
        counter.add_(1.0)
        total = xs[0]
        for x in [x * (i + 1.0) for i, x in enumerate(xs)]:
            total = total + x.tanh()
        return total

    counter = yg.zeros(shape, dtype=yg.float64)
    xs = _leaves(6, shape, 2)
    step = yg.compile(fn)
    got, grads = _run(lambda *a: step(counter, *a), xs)
    assert "packed" in step.code
    assert counter.item() == 1.0
    zero = yg.zeros(shape, dtype=yg.float64)
    want, want_grads = _run(lambda *a: fn(zero, *a), xs)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    _same(grads, want_grads)
    step(counter, *xs)
    assert counter.item() == 2.0 and counter.shape == shape


def test_a_new_shape_retraces_and_each_graph_is_packed_for_its_own() -> None:
    step = yg.compile(_scalar_mlp)
    for shape in [(1,), (2,), (1,)]:
        leaves = _leaves(29, shape, 3)
        got, grads = _run(step, leaves)
        want, want_grads = _run(_scalar_mlp, leaves)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        for g, w in zip(grads, want_grads):
            np.testing.assert_allclose(g, w, rtol=1e-12)
    assert sum(len(g) for g in step.graphs.values()) == 2


@SCALARS
def test_hooks_and_retain_grad_see_each_leafs_own_gradient(
    shape: tuple[int, ...],
) -> None:
    leaves = _leaves(29, shape, 4)
    seen = {}

    def hook(grad: yg.Tensor) -> None:
        seen["w"] = grad.numpy().copy()

    leaves[0].register_hook(hook)
    step = yg.compile(_scalar_mlp)
    out = step(*leaves)
    out.retain_grad()
    out.backward()
    assert out.grad.item() == 1.0 and out.grad.shape == shape
    want = _leaves(29, shape, 4)
    _scalar_mlp(*want).backward()
    assert seen["w"].shape == shape
    np.testing.assert_allclose(seen["w"], want[0].grad.numpy(), rtol=1e-12)
    for got, w in zip(leaves, want):
        assert (got.grad.shape, got.grad.dtype) == (shape, yg.float64)
        np.testing.assert_allclose(got.grad.numpy(), w.grad.numpy(), rtol=1e-12)
    # A leaf's .grad is its own: changing one leaves the others as they were.
    leaves[1].grad.zero_()
    np.testing.assert_allclose(leaves[2].grad.numpy(), want[2].grad.numpy())


def test_graphs_of_big_arrays_and_small_groups_are_left_alone() -> None:
    def fn(*xs: yg.Tensor) -> yg.Tensor:
        return sum((x * 2.0).tanh() for x in xs[1:]) + xs[0]

    big = yg.compile(fn)
    big(*_leaves(6, (packing.MAX_ELEMENTS + 1,), 5))
    assert "packed" not in big.code
    few = yg.compile(fn)
    few(*_leaves(packing.MIN_GROUP, (1,), 5))  # MIN_GROUP - 1 calls per level
    assert "packed" not in few.code
    enough = yg.compile(fn)
    enough(*_leaves(packing.MIN_GROUP + 1, (1,), 5))
    assert "packed" in enough.code


def _mixed(*xs: yg.Tensor) -> yg.Tensor:
    """0-d values with a Python number per value, values read several times, and
    an operand whose members are partly packed and partly a value alone."""
    scaled = [x * (0.5 + i / 7) for i, x in enumerate(xs[1:])]
    alone = xs[0].exp()  # one call of its level: not packed
    operand = [alone if i == 2 else scaled[(i + 1) % len(scaled)] for i in range(6)]
    summed = [s + o for s, o in zip(scaled, operand)]
    later = [2 - (s * s + 1).log() for s in summed]
    return sum(later[1:], later[0]) + scaled[3] * alone


def test_0d_values_mixed_with_numbers_and_loose_values_agree(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    leaves = _leaves(7, (), 6)
    want_value, want_grads = _run(_mixed, leaves)
    step = yg.compile(_mixed)
    got_value, got_grads = _run(step, leaves)
    code = step.code
    assert "other_numbers" in code  # the numbers, one constant vector
    assert "other_loose = " in code  # the value alone, joined to the packed ones
    assert "select_kernel(" in code  # scaled[3] read alone
    monkeypatch.setattr(packing, "MIN_GROUP", 10**9)
    plain_value, plain_grads = _run(yg.compile(_mixed), leaves)
    for value, grads in [(got_value, got_grads), (plain_value, plain_grads)]:
        assert value.shape == ()
        np.testing.assert_allclose(value, want_value, rtol=1e-12, atol=1e-12)
        _same(grads, want_grads)


def test_0d_leaves_get_views_of_one_packed_gradient() -> None:
    """Each 0-d leaf's .grad is a 0-d view of the packed gradient, not a copy;
    and still its own (writing one leaves the others as they were)."""
    leaves = _leaves(29, (), 7)
    step = yg.compile(_scalar_mlp)
    step(*leaves).backward()
    grads = [t.grad.numpy() for t in leaves[:24]]  # w1 and b1: the inputs packed
    assert all(g.shape == () and g.dtype == np.float64 for g in grads)
    assert len({id(g.base) for g in grads}) == 1 and grads[0].base is not None
    want = [g.copy() for g in grads]
    leaves[1].grad.zero_()
    np.testing.assert_allclose(leaves[2].grad.numpy(), want[1 + 1])
