"""No leaks: the runtime makes no reference cycles in ordinary use.

Two kinds of check, both with the cyclic garbage collector switched off, so that
anything a cycle keeps alive stays alive and is seen:

* one graph at a time: weakrefs to every node of the graph (and to saved tensors)
  are dead as soon as the user's last reference goes, without gc.collect();
* a 1,000-step training loop (a 2-layer MLP from yg.nn.functional, manual SGD under
  no_grad, in four variants): live Tensors and live Nodes at step 1,000 equal those
  at step 100; so does the memory of numpy's array buffers (tracemalloc's numpy
  domain), and all traced memory grows by less than 512 KB. That last bound is
  loose on purpose: Python's free lists (tuples, dicts) keep filling for the first
  thousand steps or so and tracemalloc counts what they hold; it levels off (about
  +160 KB by step 1,000, +3 KB more by step 2,000). tracemalloc makes each step
  several times slower, so the two variants that build the biggest graphs
  (retain_graph, create_graph) are checked by their object counts only.
"""

from __future__ import annotations

import gc
import tracemalloc
import weakref
from collections.abc import Callable, Iterator

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.runtime.autograd.accumulate_grad import AccumulateGrad
from yamlgrad.runtime.autograd.node import Node
from yamlgrad.runtime.autograd.tensor import Tensor

F = yg.nn.functional


@pytest.fixture
def no_gc() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def graph_nodes(*roots: Tensor) -> list[Node]:
    """Every node reachable from the roots' grad_fn, leaves' AccumulateGrad excluded
    (a leaf the test keeps holds its own)."""
    found: dict[int, Node] = {}
    stack = [r.grad_fn for r in roots]
    while stack:
        node = stack.pop()
        if node is None or id(node) in found:
            continue
        found[id(node)] = node
        stack.extend(fn for fn, _ in node.next_functions)
    return [n for n in found.values() if not isinstance(n, AccumulateGrad)]


def weak(objects: list[object]) -> list[weakref.ref[object]]:
    return [weakref.ref(o) for o in objects]


def alive(refs: list[weakref.ref[object]]) -> list[str]:
    return [type(o).__name__ for o in (r() for r in refs) if o is not None]


@pytest.fixture
def params() -> tuple[Tensor, Tensor]:
    rng = np.random.default_rng(0)
    w = yg.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    x = yg.tensor(rng.standard_normal((5, 4)))
    return w, x


class Square(yg.autograd.Function):
    @staticmethod
    def forward(ctx, a):  # type: ignore[no-untyped-def]
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, grad):  # type: ignore[no-untyped-def]
        (a,) = ctx.saved_tensors
        return 2 * a * grad


def plain(w: Tensor, x: Tensor) -> list[weakref.ref[object]]:
    hidden = (x @ w).tanh()
    loss = (hidden**2).mean()
    refs = weak([*graph_nodes(loss), hidden])
    loss.backward()
    return refs


def retain_graph(w: Tensor, x: Tensor) -> list[weakref.ref[object]]:
    loss = ((x @ w).tanh() ** 2).mean()
    refs = weak(graph_nodes(loss))
    loss.backward(retain_graph=True)
    loss.backward(retain_graph=True)
    return refs


def double_backward(w: Tensor, x: Tensor) -> list[weakref.ref[object]]:
    loss = ((x @ w).tanh() ** 3).sum()
    (g,) = yg.autograd.grad(loss, w, create_graph=True)
    refs = weak(graph_nodes(loss, g))
    (g * g).sum().backward()
    return refs


def hooks(w: Tensor, x: Tensor) -> list[weakref.ref[object]]:
    y = x @ w
    y.register_hook(lambda g: g * 2)
    y.retain_grad()
    loss = y.tanh().sum()
    loss.grad_fn.register_hook(lambda grad_inputs, grad_outputs: None)
    loss.grad_fn.register_prehook(lambda grad_outputs: None)
    refs = weak([*graph_nodes(loss), y])
    loss.backward()
    return refs


def saved_tensors_hooks(w: Tensor, x: Tensor) -> list[weakref.ref[object]]:
    with yg.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
        y = x @ w
        loss = y.exp().sum()
    refs = weak([*graph_nodes(loss), y])
    loss.backward()
    return refs


def custom_function(w: Tensor, x: Tensor) -> list[weakref.ref[object]]:
    y = Square.apply(x @ w)
    loss = y.sum()
    refs = weak([*graph_nodes(loss), y])
    loss.backward()
    return refs


def inplace_copy_slices(w: Tensor, x: Tensor) -> list[weakref.ref[object]]:
    y = (x @ w) * 1
    y[0] = 0.0
    y.exp_()
    loss = y.sum()
    refs = weak([*graph_nodes(loss), y])
    loss.backward()
    return refs


def views(w: Tensor, x: Tensor) -> list[weakref.ref[object]]:
    y = x @ w
    v = y[1:3].t()
    flat = v.reshape(-1)
    v.mul_(2)
    loss = (flat * y.sum()).sum()
    refs = weak([*graph_nodes(loss), y, v, flat])
    loss.backward()
    return refs


def anomaly_mode(w: Tensor, x: Tensor) -> list[weakref.ref[object]]:
    with pytest.warns(UserWarning), yg.autograd.detect_anomaly():
        loss = (x @ w).exp().sum()
        refs = weak(graph_nodes(loss))
        loss.backward()
    return refs


def backward_error(w: Tensor, x: Tensor) -> list[weakref.ref[object]]:
    """The error's traceback holds frames; none of them may keep the graph."""
    y = (x @ w).exp()
    loss = y.sum()
    refs = weak([*graph_nodes(loss), y])
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    return refs


def grad_fn_held_by_user(w: Tensor, x: Tensor) -> list[weakref.ref[object]]:
    loss = (x @ w).exp().sum()
    fn = loss.grad_fn
    refs = weak(graph_nodes(loss))
    del loss
    fn(yg.tensor(1.0))  # the user calls the node after its output is gone
    return refs


def mlp_layers(w: Tensor, x: Tensor) -> list[weakref.ref[object]]:
    b = yg.tensor(np.zeros(3), requires_grad=True)
    hidden = F.relu(F.linear(x, w.T, b))
    loss = F.cross_entropy(hidden, yg.tensor(np.array([0, 1, 2, 0, 1])))
    refs = weak([*graph_nodes(loss), hidden, b])
    loss.backward()
    return refs


SCENARIOS = [
    plain,
    retain_graph,
    double_backward,
    hooks,
    saved_tensors_hooks,
    custom_function,
    inplace_copy_slices,
    views,
    anomaly_mode,
    backward_error,
    grad_fn_held_by_user,
    mlp_layers,
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_graph_is_freed_without_the_cycle_collector(
    scenario: Callable[[Tensor, Tensor], list[weakref.ref[object]]],
    params: tuple[Tensor, Tensor],
    no_gc: None,
) -> None:
    refs = scenario(*params)  # every local of the scenario is gone on return
    assert len(refs) >= 3
    assert alive(refs) == []


def test_the_check_sees_a_cycle(params: tuple[Tensor, Tensor], no_gc: None) -> None:
    """A hook that captures its own output is a cycle the user made, as in PyTorch;
    it shows that the checks above would see one."""
    w, x = params

    def scenario() -> list[weakref.ref[object]]:
        loss = (x @ w).exp().sum()
        loss.grad_fn.register_hook(lambda gi, go, keep=loss: None)
        refs = weak(graph_nodes(loss))
        loss.backward(retain_graph=True)
        return refs

    refs = scenario()
    assert alive(refs) != []
    gc.collect()
    assert alive(refs) == []


def test_the_leaf_and_its_accumulator_are_freed(no_gc: None) -> None:
    a = yg.tensor(np.ones(3), requires_grad=True)
    (a * 2).sum().backward()
    node = (a * 2).grad_fn.next_functions[0][0]
    refs = weak([a, node, a.grad])
    del a, node
    assert alive(refs) == []


# -- A 1,000-step training loop ----------------------------------------------------


def live(kind: type) -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, kind))


def traced_memory() -> tuple[int, int]:
    """(numpy array buffers, everything) that tracemalloc sees, in bytes."""
    if not tracemalloc.is_tracing():
        return 0, 0
    snapshot = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.DomainFilter(True, np.lib.tracemalloc_domain)]
    )
    arrays = sum(stat.size for stat in snapshot.statistics("filename"))
    return arrays, tracemalloc.get_traced_memory()[0]


def train(variant: str, steps: int, checkpoints: tuple[int, ...]) -> dict[int, tuple]:
    rng = np.random.default_rng(0)
    params = [
        yg.tensor(rng.standard_normal((8, 16)) * 0.3, requires_grad=True),
        yg.tensor(np.zeros(16), requires_grad=True),
        yg.tensor(rng.standard_normal((16, 4)) * 0.3, requires_grad=True),
        yg.tensor(np.zeros(4), requires_grad=True),
    ]
    x = yg.tensor(rng.standard_normal((32, 8)))
    target = yg.tensor(rng.integers(0, 4, 32))
    if variant == "hooks":
        for p in params:
            p.register_hook(lambda g: g * 1.0)
    seen: dict[int, tuple] = {}
    for step in range(1, steps + 1):
        hidden = F.relu(F.linear(x, params[0].T, params[1]))
        if variant == "hooks":
            hidden.register_hook(lambda g: g)
        loss = F.cross_entropy(F.linear(hidden, params[2].T, params[3]), target)
        if variant == "retain_graph":
            loss.backward(retain_graph=True)
            loss.backward()
        elif variant == "create_graph":
            grads = yg.autograd.grad(loss, params, create_graph=True)
            penalty = sum((g * g).sum() for g in grads)
            (loss + 0.01 * penalty).backward()
            del grads, penalty
        else:
            loss.backward()
        with yg.no_grad():
            for p in params:
                p -= 0.05 * p.grad
                p.grad = None
        del hidden, loss
        if step in checkpoints:
            seen[step] = (live(Tensor), live(Node), *traced_memory())
    return seen


@pytest.mark.parametrize(
    ("variant", "trace"),
    [
        ("plain", True),
        ("hooks", True),
        ("retain_graph", False),
        ("create_graph", False),
    ],
)
def test_training_loop_keeps_memory_and_objects_flat(
    variant: str, trace: bool, no_gc: None
) -> None:
    if trace:
        tracemalloc.start()
    try:
        seen = train(variant, 1000, (100, 1000))
    finally:
        tracemalloc.stop()
    tensors_100, nodes_100, arrays_100, memory_100 = seen[100]
    tensors_1000, nodes_1000, arrays_1000, memory_1000 = seen[1000]
    assert tensors_1000 == tensors_100
    assert nodes_1000 == nodes_100
    assert arrays_1000 == arrays_100
    assert memory_1000 - memory_100 < 512 * 1024, (memory_100, memory_1000)
