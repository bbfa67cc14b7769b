"""DataLoader's worker processes (`num_workers > 0`), as PyTorch's.

The main process keeps one index queue per worker and one result queue shared
by all. Batch k's indices go to worker k mod num_workers (skipping workers
whose IterableDataset is exhausted); `prefetch_factor * num_workers` batches
are in flight at a time. With `in_order=True` results that arrive early wait
in `_task_info` until their turn, so the batches come in the sampler's order,
the order of `num_workers=0`.

Each iterator draws an int64 `base_seed` from the loader's generator (or the
default one); worker i seeds yamlgrad's default generator and `random` with
`base_seed + i`, and numpy's legacy global generator with PyTorch's
`_generate_state(base_seed, i)`. `get_worker_info()` in a worker describes it.

A worker's exception travels back as an `ExceptionWrapper` and is raised again
in the main process as "Caught ValueError in DataLoader worker process 0.
Original Traceback ...". The workers are shut down (a None on every index
queue, a join, then terminate) when the iteration ends (unless persistent), on
an error, and when the iterator is garbage collected; they also exit when the
main process dies. Batches cross processes by pickling (tensors as arrays).
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import queue
import random
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from yamlgrad.runtime.factories import manual_seed

__all__ = ["WorkerInfo", "get_worker_info"]

# How often a waiting process checks that its peers are still alive (seconds).
MP_STATUS_CHECK_INTERVAL = 5.0


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What `get_worker_info()` returns inside a worker process."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None
    worker_method: str | None = "multiprocessing"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker: its id, num_workers, seed and dataset copy; else None."""
    return _worker_info


class ExceptionWrapper:
    """An exception with its traceback as text, to raise again in another process."""

    def __init__(self, where: str = "in background") -> None:
        exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self) -> None:
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    """KeyError shows repr() of its argument; this keeps the text readable."""

    def __repr__(self) -> str:
        return self


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Sent to persistent workers at the start of a new epoch."""


def _generate_state(base_seed: int, worker_id: int) -> list[int]:
    """numpy's seed for a worker, as PyTorch derives it (SeedSequence's hashing)."""
    INIT_A, MULT_A = 0x43B0D7E5, 0x931E8875
    INIT_B, MULT_B = 0x8B51F9DD, 0x58F38DED
    MIX_MULT_L, MIX_MULT_R = 0xCA01F9DD, 0x4973F715
    XSHIFT, MASK32 = 4 * 8 // 2, 0xFFFFFFFF
    entropy = [worker_id, base_seed & MASK32, base_seed >> 32, 0]
    pool = [0] * 4
    hash_const_A = INIT_A

    def hash(value: int) -> int:
        nonlocal hash_const_A
        value = (value ^ hash_const_A) & MASK32
        hash_const_A = (hash_const_A * MULT_A) & MASK32
        value = (value * hash_const_A) & MASK32
        return (value ^ (value >> XSHIFT)) & MASK32

    def mix(x: int, y: int) -> int:
        result = ((MIX_MULT_L * x) & MASK32) - ((MIX_MULT_R * y) & MASK32)
        result &= MASK32
        return (result ^ (result >> XSHIFT)) & MASK32

    for i in range(len(pool)):
        pool[i] = hash(entropy[i])
    for i_src in range(len(pool)):
        for i_dst in range(len(pool)):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash(pool[i_src]))
    hash_const_B = INIT_B
    state = []
    for i_dst in range(4):
        data_val = (pool[i_dst] ^ hash_const_B) & MASK32
        hash_const_B = (hash_const_B * MULT_B) & MASK32
        data_val = (data_val * hash_const_B) & MASK32
        data_val = (data_val ^ (data_val >> XSHIFT)) & MASK32
        state.append(data_val)
    return state


class _Fetcher:
    """Turns one task (a list of indices, or one index) into a batch."""

    def __init__(
        self,
        dataset: Any,
        iterable: bool,
        auto_collation: bool,
        collate_fn: Callable[[Any], Any],
        drop_last: bool,
    ) -> None:
        self.dataset = dataset
        self.iterable = iterable
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.dataset_iter = iter(dataset) if iterable else None
        self.ended = False

    def fetch(self, index: Any) -> Any:
        if not self.iterable:
            if self.auto_collation:
                return self.collate_fn([self.dataset[i] for i in index])
            return self.collate_fn(self.dataset[index])
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def _worker_loop(
    iterable: bool,
    dataset: Any,
    index_queue: Any,
    data_queue: Any,
    done_event: Any,
    auto_collation: bool,
    collate_fn: Callable[[Any], Any],
    drop_last: bool,
    base_seed: int,
    init_fn: Callable[[int], None] | None,
    worker_id: int,
    num_workers: int,
    parent_pid: int,
) -> None:
    try:
        seed = base_seed + worker_id
        random.seed(seed)
        manual_seed(seed)
        np.random.seed(_generate_state(base_seed, worker_id))
        global _worker_info
        _worker_info = WorkerInfo(
            id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset
        )
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _Fetcher(dataset, iterable, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(
                where=f"in DataLoader worker process {worker_id}"
            )
        iteration_end = False
        while os.getppid() == parent_pid:  # the main process is alive
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                fetcher = _Fetcher(
                    dataset, iterable, auto_collation, collate_fn, drop_last
                )
                continue
            if r is None:
                break  # shutdown
            if done_event.is_set() or iteration_end:
                continue  # drain until the None
            idx, index = r
            if init_exception is not None:
                data: Any = init_exception
                init_exception = None
            else:
                try:
                    data = fetcher.fetch(index)  # type: ignore[union-attr]
                except Exception as e:
                    if isinstance(e, StopIteration) and iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(
                            where=f"in DataLoader worker process {worker_id}"
                        )
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass  # the main process handles it and shuts the workers down
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()


class _MultiProcessingDataLoaderIter:
    """The iterator of a DataLoader with worker processes."""

    def __init__(self, loader: Any) -> None:
        self._dataset = loader.dataset
        self._iterable = loader._dataset_is_iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._persistent_workers = loader.persistent_workers
        self._timeout = loader.timeout
        self._in_order = loader.in_order
        self._collate_fn = loader.collate_fn
        self._shutdown = True  # until the workers exist
        self._base_seed = loader._draw_base_seed()
        self._sampler_iter = iter(self._index_sampler)
        if self._prefetch_factor <= 0:
            raise AssertionError(
                "prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter"
            )
        context = loader.multiprocessing_context
        if context is None:
            context = multiprocessing.get_context()
        elif isinstance(context, str):
            context = multiprocessing.get_context(context)
        self._worker_result_queue = context.Queue()
        self._workers_done_event = context.Event()
        self._index_queues = []
        self._workers = []
        for i in range(self._num_workers):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()
            worker = context.Process(
                target=_worker_loop,
                args=(
                    self._iterable,
                    self._dataset,
                    index_queue,
                    self._worker_result_queue,
                    self._workers_done_event,
                    self._auto_collation,
                    self._collate_fn,
                    self._drop_last,
                    self._base_seed,
                    loader.worker_init_fn,
                    i,
                    self._num_workers,
                    os.getpid(),
                ),
                daemon=True,
            )
            worker.start()
            self._index_queues.append(index_queue)
            self._workers.append(worker)
        self._shutdown = False
        self._reset(first_iter=True)

    def __iter__(self) -> _MultiProcessingDataLoaderIter:
        return self

    def __len__(self) -> int:
        return len(self._index_sampler)

    def _reset(self, first_iter: bool = False) -> None:
        if not first_iter:
            self._sampler_iter = iter(self._index_sampler)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info: dict[int, tuple[Any, ...]] = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for index_queue in self._index_queues:
                index_queue.put(_ResumeIteration())
            resume_iteration_cnt = self._num_workers
            while resume_iteration_cnt > 0:
                return_idx, _ = self._get_data()
                if isinstance(return_idx, _ResumeIteration):
                    resume_iteration_cnt -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self) -> None:
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next active worker
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                break
        else:
            return  # every worker is done
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _try_get_data(self, timeout: float) -> tuple[bool, Any]:
        try:
            return True, self._worker_result_queue.get(timeout=timeout)
        except queue.Empty:
            failed = [
                w
                for worker_id, w in enumerate(self._workers)
                if self._workers_status[worker_id] and not w.is_alive()
            ]
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                self._shutdown_workers()
                raise RuntimeError(
                    f"DataLoader worker (pid(s) {pids}) exited unexpectedly"
                ) from None
            return False, None

    def _get_data(self) -> Any:
        if self._timeout > 0:
            success, data = self._try_get_data(self._timeout)
            if success:
                return data
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            success, data = self._try_get_data(MP_STATUS_CHECK_INTERVAL)
            if success:
                return data

    def __next__(self) -> Any:
        try:
            return self._next_data()
        except BaseException as error:
            if not isinstance(error, StopIteration):
                self._shutdown_workers()
            raise

    def _next_data(self) -> Any:
        while True:
            # Skip the tasks of workers whose IterableDataset ran out.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    worker_id = info[0]
                    if len(info) == 2 or self._workers_status[worker_id]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:  # it arrived early
                data = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process_data(data)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:  # hand it out now; its slot is skipped
                    del self._task_info[idx]
                    return self._process_data(data)
                self._task_info[idx] += (data,)  # keep it until its turn
                continue
            del self._task_info[idx]
            self._rcvd_idx += 1
            return self._process_data(data)

    def _process_data(self, data: Any) -> Any:
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(
        self, worker_id: int, shutdown: bool = False
    ) -> None:
        """Tell a worker to finish (a None on its queue) and stop sending it work."""
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id, shutdown=True)
            for worker in self._workers:
                worker.join(timeout=MP_STATUS_CHECK_INTERVAL)
            for index_queue in self._index_queues:
                index_queue.cancel_join_thread()
                index_queue.close()
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()
        finally:
            for worker in self._workers:
                if worker.is_alive():
                    worker.terminate()
                    worker.join()

    def __del__(self) -> None:
        self._shutdown_workers()
