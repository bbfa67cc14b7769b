"""Grad mode is thread-local; independent graphs backpropagate in parallel threads."""

from __future__ import annotations

import threading

import numpy as np

import yamlgrad as yg


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
