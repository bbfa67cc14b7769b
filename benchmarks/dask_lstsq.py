"""A least-squares gradient over a design matrix on disk, larger than memory.

    python benchmarks/dask_lstsq.py --gib 40 --dir /work/dask-data --cold   # the full run
    python benchmarks/dask_lstsq.py --gib 8 --workers 1,2,4 --memory-limit 1GiB --cold

Writes X (float64, `--gib` GiB, `--cols` columns) and y as chunk files of
`--chunk-mib` MiB each (`np.save`, one per row block) under `--dir`, unless
they are there already; reads them back as Dask arrays of memory-mapped
chunks (`dask.array.from_delayed` over `np.load(mmap_mode="r")`), and runs

    loss = mean((X @ W - y) ** 2); loss.backward(); yg.compute(loss, W.grad)

with yamlgrad: one graph for forward and backward, computed in one pass over X.
The loader counts the X chunks it opens (in this process, or on each worker):
the passes over X a step made. Every 20 ms this process and its children (the
cluster's workers) are sampled: the peak of their summed resident set (VmRSS,
which counts the pages of the memory-mapped chunks while they are mapped), of
its anonymous part (RssAnon: without those pages, which the kernel may drop),
and the bytes they fetched from storage (`read_bytes`: a page found in the page
cache is not read again, and cached pages never count as resident). With
`--cold` the files' pages are dropped from the page cache (these files' only)
before each run, so a run reads X from disk, and the read column says how many
times. The loss and gradient are checked against a chunked numpy reference (one
pass over the same files, float64 sums) to 1e-10 (relative). Benchmarks are not
tests: nothing here asserts a time; a tiny run of it is a test
(tests/api/test_backends.py).

With `--workers 1,2,4` the same step runs on a LocalCluster of that many
worker processes (one thread each, `--memory-limit` each, on loopback),
started and stopped here.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

import yamlgrad as yg

_MIB = 2**20
# The X chunk files opened by this process's loader (the threaded scheduler's).
_X_LOADS: list[str] = []


class Sampler:
    """Sampled every `interval` seconds over this process and its children
    while in the `with` block: the peak of their summed VmRSS and RssAnon, the
    peak VmRSS of any one of them (a worker's, against its memory limit), and
    the bytes they fetched from storage (`read_bytes` of /proc/<pid>/io, which
    counts a memory-mapped page read from disk, not one found in the cache)."""

    def __init__(self, interval: float = 0.02) -> None:
        import psutil

        self.me = psutil.Process()
        self.interval = interval
        self.peak_rss = self.peak_anon = self.peak_one = 0
        self._read: dict[int, list[int]] = {}  # pid: [first, last] read_bytes
        self._stop = threading.Event()

    @staticmethod
    def _fields(path: str, keys: tuple[str, ...]) -> list[int]:
        found = dict.fromkeys(keys, 0)
        try:
            with open(path) as status:
                for line in status:
                    key, _, value = line.partition(":")
                    if key in found:
                        found[key] = int(value.split()[0])
        except OSError:  # a child that just ended
            pass
        return list(found.values())

    def sample(self) -> None:
        pids = [self.me.pid] + [c.pid for c in self.me.children(recursive=True)]
        rss = anon = 0
        for pid in pids:
            kib = self._fields(f"/proc/{pid}/status", ("VmRSS", "RssAnon"))
            rss, anon = rss + kib[0] * 1024, anon + kib[1] * 1024
            self.peak_one = max(self.peak_one, kib[0] * 1024)
            (read,) = self._fields(f"/proc/{pid}/io", ("read_bytes",))
            self._read.setdefault(pid, [read, read])[1] = read
        self.peak_rss, self.peak_anon = max(self.peak_rss, rss), max(
            self.peak_anon, anon
        )

    def read_now(self) -> int:
        """The bytes read so far, while the children still run: once one is
        reaped, the kernel adds what it read to its parent's counters too."""
        self.sample()
        return sum(last - first for first, last in self._read.values())

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self) -> Sampler:
        self.sample()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()


def make_data(
    folder: Path, gib: float, cols: int, chunk_mib: int
) -> tuple[list[Path], int]:
    """X and y as chunk files (row blocks), written once; the X files' paths,
    and how many of them this call wrote."""
    folder.mkdir(parents=True, exist_ok=True)
    rows_per_chunk = max(1, chunk_mib * _MIB // (8 * cols))
    total_rows = max(1, int(gib * 2**30) // (8 * cols))
    n_chunks = -(-total_rows // rows_per_chunk)
    w_true = np.linspace(-1, 1, cols)[:, None]
    paths, written = [], 0
    for i in range(n_chunks):
        rows = min(rows_per_chunk, total_rows - i * rows_per_chunk)
        path = folder / f"X_{i:05d}_{rows}x{cols}.npy"
        if not path.exists():
            rng = np.random.default_rng(i)
            x = rng.standard_normal((rows, cols))
            np.save(
                folder / f"y_{i:05d}.npy", x @ w_true + rng.standard_normal((rows, 1))
            )
            np.save(path, x)
            written += 1
        paths.append(path)
    return paths, written


def evict(paths: list[Path]) -> None:
    """Drop the chunk files' pages from the page cache (these files' only,
    `posix_fadvise(DONTNEED)`), so that the next pass reads them from disk."""
    for path in paths:
        for name in (path, path.with_name(f"y_{path.stem.split('_')[1]}.npy")):
            fd = os.open(name, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def _count_x_load(path: Path) -> None:
    """One X chunk opened: counted on the worker that opened it (a cluster's),
    else in this process. (A list's append needs no lock, and a lock would
    keep the loader from being pickled to the workers.)"""
    try:
        import distributed

        worker = distributed.get_worker()
    except (ImportError, ValueError):
        _X_LOADS.append(path.name)
        return
    worker.__dict__.setdefault("x_loads", []).append(path.name)


def load(path: Path) -> np.ndarray:
    """A chunk file, memory-mapped (its pages are read as they are touched)."""
    if path.name.startswith("X_"):
        _count_x_load(path)
    return np.load(path, mmap_mode="r")


def lazy_arrays(paths: list[Path]) -> tuple[Any, Any]:
    """X and y as Dask arrays whose chunks are memory-mapped chunk files."""
    import dask
    import dask.array as da

    xs, ys = [], []
    for path in paths:
        rows, cols = (int(n) for n in path.stem.split("_")[2].split("x"))
        y_path = path.with_name(f"y_{path.stem.split('_')[1]}.npy")
        xs.append(da.from_delayed(dask.delayed(load)(path), (rows, cols), np.float64))
        ys.append(da.from_delayed(dask.delayed(load)(y_path), (rows, 1), np.float64))
    return da.concatenate(xs), da.concatenate(ys)


def numpy_reference(paths: list[Path], w: np.ndarray) -> tuple[float, np.ndarray]:
    """The same loss and gradient, chunk by chunk in plain numpy: one pass."""
    total, grad, n = 0.0, np.zeros_like(w), 0
    for path in paths:
        x = np.load(path, mmap_mode="r")
        y = np.load(path.with_name(f"y_{path.stem.split('_')[1]}.npy"), mmap_mode="r")
        r = x @ w - y
        total += float(np.sum(r * r))
        grad += x.T @ r
        n += r.size
    return total / n, 2 * grad / n


def yamlgrad_step(paths: list[Path], w: np.ndarray) -> dict[str, Any]:
    """One step: the loss and W's gradient, their time, and the tasks of the
    one graph that computes both."""
    X, y = (yg.from_dask(a) for a in lazy_arrays(paths))
    W = yg.tensor(w).to("dask").requires_grad_()
    start = time.perf_counter()
    loss = ((X @ W - y) ** 2).mean()
    loss.backward()
    built = time.perf_counter() - start
    tasks = len(dict(loss._data.__dask_graph__()) | dict(W.grad._data.__dask_graph__()))
    value, grad = yg.compute(loss, W.grad)
    return {
        "loss": value.item(),
        "grad": grad.numpy(),
        "seconds": time.perf_counter() - start,
        "graph_seconds": built,
        "tasks": tasks,
    }


def _check(got: dict[str, Any], want: tuple[float, np.ndarray]) -> float:
    err = max(
        abs(got["loss"] - want[0]) / abs(want[0]),
        float(np.max(np.abs(got["grad"] - want[1])) / np.max(np.abs(want[1]))),
    )
    if err > 1e-10:
        raise SystemExit(f"disagrees with the chunked numpy reference: {err:.3g}")
    return err


def _row(label: str, got: dict[str, Any], sampler: Sampler, n: int) -> str:
    size = sum(p.stat().st_size for p in got["paths"])
    return (
        f"| {label} | {got['seconds']:.2f} | {size / 1e9 / got['seconds']:.2f} | "
        f"{sampler.peak_rss / _MIB:.0f} | {sampler.peak_anon / _MIB:.0f} | "
        f"{sampler.peak_one / _MIB:.0f} | "
        f"{got['x_loads'] / n:g} | {got['disk_read'] / size:.2f} | {got['tasks']} |"
    )


def run_local(paths: list[Path], w: np.ndarray) -> tuple[dict[str, Any], str]:
    """The step on Dask's threaded scheduler, in this process."""
    _X_LOADS.clear()
    with Sampler() as sampler:
        got = yamlgrad_step(paths, w)
        got["disk_read"] = sampler.read_now()
    got.update(paths=paths, x_loads=len(_X_LOADS))
    return got, _row("threads, this process", got, sampler, len(paths))


def run_cluster(
    paths: list[Path], w: np.ndarray, workers: int, limit: str
) -> tuple[dict[str, Any], str]:
    """The same step on a LocalCluster of `workers` processes (one thread each)."""
    import distributed

    with Sampler() as sampler:
        with (
            distributed.LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                memory_limit=limit,
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            got = yamlgrad_step(paths, w)
            got["disk_read"] = sampler.read_now()  # (see Sampler.read_now)
            loads = client.run(
                lambda dask_worker: len(getattr(dask_worker, "x_loads", []))
            )
    got.update(paths=paths, x_loads=sum(loads.values()))
    return got, _row(f"LocalCluster, {workers} x {limit}", got, sampler, len(paths))


HEADER = (
    "| scheduler | step (s) | X read (GB/s) | peak RSS (MiB) | peak anon RSS (MiB) "
    "| largest process's peak RSS (MiB) | passes over X (chunk loads) "
    "| read from disk (x X's size) | tasks |\n|---|---|---|---|---|---|---|---|---|"
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gib", type=float, default=1.0, help="size of X in GiB")
    parser.add_argument("--cols", type=int, default=64)
    parser.add_argument("--chunk-mib", type=int, default=64)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/yamlgrad_lstsq"))
    parser.add_argument("--workers", default="", help="e.g. 1,2,4: LocalCluster runs")
    parser.add_argument("--memory-limit", default="1GiB", help="per worker")
    parser.add_argument("--skip-local", action="store_true", help="cluster runs only")
    parser.add_argument("--skip-reference", action="store_true")
    parser.add_argument(
        "--cold", action="store_true", help="evict the files from the page cache first"
    )
    args = parser.parse_args(argv)
    cold = evict if args.cold else lambda paths: None

    start = time.perf_counter()
    paths, written = make_data(args.dir, args.gib, args.cols, args.chunk_mib)
    made = time.perf_counter() - start
    size = sum(p.stat().st_size for p in paths) / 2**30
    print(
        f"X: {size:.3f} GiB float64, {args.cols} columns, {len(paths)} chunk files "
        f"of <= {args.chunk_mib} MiB under {args.dir}; {written} written in "
        f"{made:.1f} s ({len(paths) - written} found on disk)\n\n{HEADER}",
        flush=True,
    )
    w = np.zeros((args.cols, 1))
    runs = []
    if not args.skip_local:
        cold(paths)
        runs.append(run_local(paths, w))
        print(runs[-1][1], flush=True)
    for n in (int(k) for k in args.workers.split(",") if k):
        cold(paths)
        runs.append(run_cluster(paths, w, n, args.memory_limit))
        print(runs[-1][1], flush=True)
    if runs and not args.skip_reference:
        cold(paths)
        start = time.perf_counter()
        want = numpy_reference(paths, w)
        took = time.perf_counter() - start
        err = max(_check(got, want) for got, _ in runs)
        print(
            f"\nchunked numpy reference: {took:.2f} s; max relative difference "
            f"{err:.2e} over {len(runs)} run(s): agrees with the chunked numpy "
            "reference to 1e-10"
        )


if __name__ == "__main__":
    main()
