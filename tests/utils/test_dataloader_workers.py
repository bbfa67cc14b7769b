"""DataLoader(num_workers > 0) against torch's: the same batches in the same
order, the same worker seeds and WorkerInfo, the same errors, and no worker
process left behind."""

from __future__ import annotations

import gc
import multiprocessing
import random
import time
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.runtime.utils._data_workers import WorkerInfo, _generate_state
from yamlgrad.utils import data

torch = pytest.importorskip("torch")
import torch.utils.data as tdata  # noqa: E402


@pytest.fixture(autouse=True)
def no_worker_outlives_a_test() -> Any:
    yield
    gc.collect()
    deadline = time.monotonic() + 10
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert multiprocessing.active_children() == []


def values(loader: Any) -> list[Any]:
    out = []
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            out.append([b.tolist() if hasattr(b, "tolist") else b for b in batch])
        else:
            out.append(batch.tolist() if hasattr(batch, "tolist") else batch)
    return out


@pytest.mark.parametrize(
    "options",
    [
        {"batch_size": 3},
        {"batch_size": 3, "drop_last": True},
        {"batch_size": None},
        {"batch_size": 2, "prefetch_factor": 1},
    ],
)
def test_batches_come_in_torchs_order(options: dict[str, Any]) -> None:
    x = np.arange(11.0)
    mine = values(
        data.DataLoader(data.TensorDataset(yg.tensor(x)), num_workers=2, **options)
    )
    theirs = values(
        tdata.DataLoader(tdata.TensorDataset(torch.tensor(x)), num_workers=2, **options)
    )
    assert mine == theirs


def test_shuffled_batches_match_the_single_process_order() -> None:
    ds = data.TensorDataset(yg.arange(20))
    orders = []
    for workers in (0, 2):
        loader = data.DataLoader(
            ds,
            batch_size=4,
            shuffle=True,
            num_workers=workers,
            generator=yg.Generator().manual_seed(5),
        )
        orders.append([values(loader), values(loader)])
    assert orders[0] == orders[1]
    assert orders[0][0] != orders[0][1]  # a new order each epoch


def iterable_class(lib_data: Any) -> type:
    class Stream(lib_data.IterableDataset):
        def __iter__(self) -> Any:
            return iter(range(7))

    return Stream


def test_iterable_dataset_runs_in_every_worker_as_torchs() -> None:
    for options in (
        {"batch_size": 2},
        {"batch_size": 2, "drop_last": True},
        {"batch_size": None},
    ):
        mine = values(data.DataLoader(iterable_class(data)(), num_workers=2, **options))
        theirs = values(
            tdata.DataLoader(iterable_class(tdata)(), num_workers=2, **options)
        )
        assert mine == theirs


def worker_report(lib: Any, module: Any) -> Any:
    class Report(module.Dataset):
        def __len__(self) -> int:
            return 4

        def __getitem__(self, i: int) -> Any:
            info = module.get_worker_info()
            state = np.random.get_state()[1][:2].tolist()
            return [
                info.id,
                info.num_workers,
                info.seed,
                lib.initial_seed(),
                random.random(),
                state,
                type(info.dataset).__name__,
            ]

    loader = module.DataLoader(
        Report(),
        num_workers=2,
        batch_size=None,
        generator=lib.Generator().manual_seed(1),
    )
    return list(loader)


def test_worker_info_and_seeds_as_torch() -> None:
    for lib, module in ((yg, data), (torch, tdata)):
        assert module.get_worker_info() is None
        rows = worker_report(lib, module)
        assert [r[0] for r in rows] == [0, 1, 0, 1]
        assert all(r[1] == 2 and r[6] == "Report" for r in rows)
        seed0, seed1 = rows[0][2], rows[1][2]
        assert seed1 == seed0 + 1 and rows[0][3] == seed0 and rows[1][3] == seed1
        assert rows[0][4] == random.Random(seed0).random()
        # numpy's global stream, seeded from (base_seed, worker id)
        rng = np.random.RandomState(_generate_state(seed0, 0))
        assert rows[0][5] == rng.get_state()[1][:2].tolist()
    base = 2**40 + 12345
    for worker in range(3):
        assert _generate_state(base, worker) == tdata._utils.worker._generate_state(
            base, worker
        )


def test_worker_info_object_as_torchs() -> None:
    mine = WorkerInfo(id=1, num_workers=2, seed=7, dataset=None)
    theirs = tdata._utils.worker.WorkerInfo(id=1, num_workers=2, seed=7, dataset=None)
    assert repr(mine) == repr(theirs)
    texts = []
    for info in (mine, theirs):
        with pytest.raises(AttributeError) as caught:
            info.id = 3
        texts.append(str(caught.value))
    assert texts[0] == texts[1]


def test_worker_init_fn_and_persistent_workers() -> None:
    class Pids(data.Dataset):
        def __len__(self) -> int:
            return 4

        def __getitem__(self, i: int) -> Any:
            import os

            return [os.getpid(), data.get_worker_info().dataset.marker]

    def init(worker_id: int) -> None:
        data.get_worker_info().dataset.marker = worker_id * 10

    loader = data.DataLoader(
        Pids(),
        batch_size=None,
        num_workers=2,
        worker_init_fn=init,
        persistent_workers=True,
    )
    first, second = list(loader), list(loader)
    assert [m for _, m in first] == [0, 10, 0, 10]
    assert {p for p, _ in first} == {p for p, _ in second}  # the same processes
    assert len({p for p, _ in first}) == 2
    fresh = data.DataLoader(Pids(), batch_size=None, num_workers=2, worker_init_fn=init)
    assert {p for p, _ in list(fresh)} != {p for p, _ in first}
    del loader


def option_errors(module: Any, ds: Any) -> list[str]:
    texts = []
    for kwargs in (
        {"prefetch_factor": 2},
        {"persistent_workers": True},
        {"num_workers": 2, "prefetch_factor": -1},
        {"num_workers": -1},
        {"timeout": -1},
    ):
        with pytest.raises(ValueError) as caught:
            module.DataLoader(ds, **kwargs)
        texts.append(str(caught.value))
    with pytest.raises(AssertionError) as caught:
        iter(module.DataLoader(ds, num_workers=2, prefetch_factor=0))
    texts.append(str(caught.value))
    return texts


def test_option_errors_as_torchs() -> None:
    assert option_errors(data, data.TensorDataset(yg.arange(4))) == option_errors(
        tdata, tdata.TensorDataset(torch.arange(4))
    )


def failing(module: Any, error: type) -> Any:
    class Failing(module.Dataset):
        def __len__(self) -> int:
            return 6

        def __getitem__(self, i: int) -> Any:
            if i == 3:
                raise error("bad sample 3")
            return i

    return Failing()


@pytest.mark.parametrize("error", [ValueError, KeyError])
def test_worker_errors_are_raised_in_the_main_process(error: type) -> None:
    texts = []
    for module in (data, tdata):
        with pytest.raises(error) as caught:
            list(
                module.DataLoader(
                    failing(module, error), num_workers=2, batch_size=None
                )
            )
        text = str(caught.value)
        texts.append(text.splitlines()[:2])
        assert text.rstrip().endswith(
            "bad sample 3" if error is ValueError else "'bad sample 3'"
        )
    assert texts[0] == texts[1]
    assert texts[0][0] == f"Caught {error.__name__} in DataLoader worker process 1."


def test_timeout_as_torchs() -> None:
    texts = []
    for module in (data, tdata):

        class Slow(module.Dataset):
            def __len__(self) -> int:
                return 2

            def __getitem__(self, i: int) -> Any:
                time.sleep(1.5)
                return i

        with pytest.raises(RuntimeError) as caught:
            list(module.DataLoader(Slow(), num_workers=1, timeout=0.5, batch_size=None))
        texts.append(str(caught.value))
    assert texts[0] == texts[1] == "DataLoader timed out after 0.5 seconds"


def test_abandoned_iterator_shuts_its_workers_down() -> None:
    loader = data.DataLoader(
        data.TensorDataset(yg.arange(100)), batch_size=2, num_workers=2
    )
    iterator = iter(loader)
    next(iterator)
    workers = list(iterator._workers)
    assert all(w.is_alive() for w in workers)
    del iterator
    gc.collect()
    assert not any(w.is_alive() for w in workers)


def test_pin_memory_is_accepted_and_tensors_cross_processes() -> None:
    x = yg.randn(6, 3)
    loader = data.DataLoader(
        data.TensorDataset(x, yg.arange(6)),
        batch_size=3,
        num_workers=2,
        pin_memory=True,
    )
    batches = list(loader)
    np.testing.assert_array_equal(batches[1][0].numpy(), x.numpy()[3:])
    assert batches[1][1].dtype == yg.int64


INTERRUPTED = """
import os, signal, threading, time
from yamlgrad.utils import data

class Slow(data.Dataset):
    def __len__(self):
        return 100

    def __getitem__(self, i):
        time.sleep(0.2)
        return i

it = iter(data.DataLoader(Slow(), num_workers=2, batch_size=None))
print(*[w.pid for w in it._workers], flush=True)
threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    for _ in it:
        pass
except KeyboardInterrupt:
    print("interrupted", [w.is_alive() for w in it._workers], flush=True)
"""


def test_keyboard_interrupt_shuts_the_workers_down() -> None:
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    pids_line, report = done.stdout.splitlines()
    assert report == "interrupted [False, False]"
    for pid in map(int, pids_line.split()):
        assert (
            not os.path.exists(f"/proc/{pid}")
            or "zombie" in open(f"/proc/{pid}/status").read()
        )
