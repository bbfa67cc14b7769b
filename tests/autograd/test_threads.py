"""Grad mode is thread-local; independent graphs backpropagate in parallel threads;
threads that backpropagate into one shared leaf add up exactly (AccumulateGrad's lock).

The races are made likely with sys.setswitchinterval(1e-6) and barriers that
start every thread's backward at once.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.runtime.autograd.tensor import VersionCounter


def test_grad_mode_of_one_thread_is_not_seen_by_another() -> None:
    entered, release = threading.Event(), threading.Event()
    seen: list[bool] = []

    def worker() -> None:
        with yg.no_grad():
            entered.set()
            release.wait(5)
            seen.append(yg.is_grad_enabled())

    thread = threading.Thread(target=worker)
    thread.start()
    entered.wait(5)
    x = yg.tensor([1.0], requires_grad=True)
    recorded = (x * 2).requires_grad  # main thread: still on
    release.set()
    thread.join()
    assert recorded and seen == [False] and yg.is_grad_enabled()


def test_two_threads_train_independent_graphs_as_sequentially() -> None:
    def step(seed: int, out: dict[int, np.ndarray]) -> None:
        rng = np.random.default_rng(seed)
        w = yg.tensor(rng.standard_normal((4, 3)), requires_grad=True)
        x = yg.tensor(rng.standard_normal((5, 4)))
        for _ in range(20):
            loss = ((x @ w).tanh() ** 2).mean()
            (g,) = yg.autograd.grad(loss, w)
            with yg.no_grad():
                w -= 0.1 * g
        out[seed] = w.detach().numpy().copy()

    sequential: dict[int, np.ndarray] = {}
    for seed in (1, 2):
        step(seed, sequential)
    parallel: dict[int, np.ndarray] = {}
    threads = [threading.Thread(target=step, args=(s, parallel)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for seed in (1, 2):
        np.testing.assert_array_equal(parallel[seed], sequential[seed])


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Switch threads as often as the interpreter can, so races show up."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


def run_in_threads(count: int, target: Callable[[int], None]) -> None:
    errors: list[BaseException] = []

    def guarded(index: int) -> None:
        try:
            target(index)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@pytest.mark.parametrize("create_graph", [False, True])
def test_threads_backpropagating_into_one_leaf_accumulate_exactly(
    fast_switching: None, create_graph: bool
) -> None:
    """Every round, all threads start a backward into the same fresh leaf at once;
    each adds ones, so `.grad` must count them all (none lost to a race)."""
    threads, rounds = 4, 150
    w = yg.tensor(np.zeros(64), requires_grad=True)
    barrier = threading.Barrier(threads)
    totals: list[float] = []

    def work(index: int) -> None:
        for r in range(rounds):
            loss = (w * 1.0).sum() + (w * 2.0).sum()
            if barrier.wait() == 0:
                w.grad = None
            barrier.wait()
            loss.backward(create_graph=create_graph)
            if barrier.wait() == 0:
                totals.append(float(w.grad.numpy().min()))

    run_in_threads(threads, work)
    assert totals == [3.0 * threads] * rounds


def test_threads_making_the_first_node_of_a_leaf_share_it(
    fast_switching: None,
) -> None:
    threads = 4
    barrier = threading.Barrier(threads)
    for _ in range(100):
        w = yg.tensor([1.0], requires_grad=True)
        nodes: list[object] = [None] * threads

        def work(index: int) -> None:
            barrier.wait()
            nodes[index] = (w * 2.0).grad_fn.next_functions[0][0]

        run_in_threads(threads, work)
        assert all(n is nodes[0] for n in nodes)


def test_two_threads_train_two_mlps_bit_identically_to_sequential(
    fast_switching: None,
) -> None:
    """Forward, backward into .grad with hooks, an SGD step under no_grad."""
    F = yg.nn.functional

    def train(seed: int, out: dict[int, list[np.ndarray]]) -> None:
        rng = np.random.default_rng(seed)
        params = [
            yg.tensor(rng.standard_normal((6, 8)) * 0.3, requires_grad=True),
            yg.tensor(np.zeros(8), requires_grad=True),
            yg.tensor(rng.standard_normal((8, 3)) * 0.3, requires_grad=True),
            yg.tensor(np.zeros(3), requires_grad=True),
        ]
        params[0].register_hook(lambda g: g * 1.0)
        x = yg.tensor(rng.standard_normal((16, 6)))
        target = yg.tensor(rng.integers(0, 3, 16))
        for _ in range(30):
            hidden = F.relu(F.linear(x, params[0].T, params[1]))
            loss = F.cross_entropy(F.linear(hidden, params[2].T, params[3]), target)
            loss.backward()
            with yg.no_grad():
                for p in params:
                    p -= 0.1 * p.grad
                    p.grad = None
        out[seed] = [p.detach().numpy().copy() for p in params]

    sequential: dict[int, list[np.ndarray]] = {}
    for seed in (3, 4):
        train(seed, sequential)
    parallel: dict[int, list[np.ndarray]] = {}
    run_in_threads(2, lambda i: train(3 + i, parallel))
    for seed in (3, 4):
        for got, want in zip(parallel[seed], sequential[seed]):
            np.testing.assert_array_equal(got, want)


def test_threads_registering_the_first_hooks_keep_them_all(
    fast_switching: None,
) -> None:
    """The first hook on a tensor or a node creates its hook table; threads doing
    that at once must not replace each other's table."""
    threads = 4
    barrier = threading.Barrier(threads)
    for _ in range(100):
        x = yg.tensor([1.0], requires_grad=True)
        y = x * 2.0

        def work(index: int) -> None:
            barrier.wait()
            x.register_hook(lambda g: g)
            y.register_hook(lambda g: g)
            y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: None)
            y.grad_fn.register_prehook(lambda grad_outputs: None)

        run_in_threads(threads, work)
        assert len(x._hooks) == threads
        node_hooks = y.grad_fn._hooks
        assert len(node_hooks.post_hooks) == len(node_hooks.pre_hooks) == threads
        assert len(node_hooks.tensor_pre_hooks[0]) == threads


def test_in_place_ops_on_views_of_one_base_count_every_bump(
    fast_switching: None,
) -> None:
    """Views share their base's version counter; threads modifying different views
    in place at once must not lose a bump (`_version` counts every one)."""
    threads, steps = 8, 400
    base = yg.zeros(threads, 4)
    views = [base[i] for i in range(threads)]
    barrier = threading.Barrier(threads)

    def work(index: int) -> None:
        barrier.wait()
        with yg.no_grad():
            for _ in range(steps):
                views[index].add_(1.0)

    run_in_threads(threads, work)
    assert base._version == threads * steps
    assert all(v._version == threads * steps for v in views)
    np.testing.assert_array_equal(base.numpy(), np.full((threads, 4), steps))


def test_version_counter_bumps_from_many_threads_are_all_counted(
    fast_switching: None,
) -> None:
    threads, steps = 8, 20_000
    counter = VersionCounter()
    barrier = threading.Barrier(threads)

    def work(index: int) -> None:
        barrier.wait()
        for _ in range(steps):
            counter.bump()

    run_in_threads(threads, work)
    assert counter.value == threads * steps
