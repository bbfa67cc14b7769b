"""A least-squares gradient over a design matrix on disk, larger than memory.

    python benchmarks/dask_lstsq.py --gib 40                  # the full run
    python benchmarks/dask_lstsq.py --gib 2 --workers 1,2,4   # a LocalCluster too

Writes X (float64, `--gib` GiB, `--cols` columns) and y as chunk files of
`--chunk-mib` MiB each (`np.save`, one per row block) under `--dir`, unless
they are there already; reads them back as Dask arrays of memory-mapped
chunks (`dask.array.from_delayed` over `np.load(mmap_mode="r")`), and runs

    loss = mean((X @ W - y) ** 2); loss.backward(); yg.compute(loss, W.grad)

with yamlgrad: one graph for forward and backward, computed in one pass over X.
It reports the time, the peak resident memory of this process (and of the
workers with --workers), and checks the loss and gradient against a chunked
numpy reference (one pass over the same files, float64 sums) to 1e-10
(relative). Benchmarks are not tests: nothing here asserts a time; a tiny run
of it is a test (tests/api/test_backends.py).
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path
from typing import Any

import numpy as np

import yamlgrad as yg


def _peak_mib() -> float:
    """This process's peak resident memory (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def make_data(folder: Path, gib: float, cols: int, chunk_mib: int) -> list[Path]:
    """X and y as chunk files (row blocks), written once; the X files' paths."""
    folder.mkdir(parents=True, exist_ok=True)
    rows_per_chunk = max(1, chunk_mib * 2**20 // (8 * cols))
    total_rows = max(1, int(gib * 2**30) // (8 * cols))
    n_chunks = -(-total_rows // rows_per_chunk)
    w_true = np.linspace(-1, 1, cols)[:, None]
    paths = []
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
        paths.append(path)
    return paths


def lazy_arrays(paths: list[Path]) -> tuple[Any, Any]:
    """X and y as Dask arrays whose chunks are memory-mapped chunk files."""
    import dask
    import dask.array as da

    def load(path: Path) -> np.ndarray:
        return np.load(path, mmap_mode="r")

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


def yamlgrad_step(paths: list[Path], w: np.ndarray) -> tuple[float, np.ndarray, float]:
    X, y = (yg.from_dask(a) for a in lazy_arrays(paths))
    W = yg.tensor(w).to("dask").requires_grad_()
    start = time.perf_counter()
    loss = ((X @ W - y) ** 2).mean()
    loss.backward()
    value, grad = yg.compute(loss, W.grad)
    return value.item(), grad.numpy(), time.perf_counter() - start


def _check(got: tuple[float, np.ndarray], want: tuple[float, np.ndarray]) -> float:
    err = max(
        abs(got[0] - want[0]) / abs(want[0]),
        float(np.max(np.abs(got[1] - want[1])) / np.max(np.abs(want[1]))),
    )
    if err > 1e-10:
        raise SystemExit(f"disagrees with the chunked numpy reference: {err:.3g}")
    return err


def run_cluster(paths: list[Path], w: np.ndarray, workers: int, limit: str) -> str:
    """The same step on a LocalCluster of `workers` processes (one thread each)."""
    import distributed

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
        peak = max(client.run(_peak_mib).values())
    return f"| {workers} | {got[2]:.2f} | {peak:.0f} | {limit} |"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gib", type=float, default=1.0, help="size of X in GiB")
    parser.add_argument("--cols", type=int, default=64)
    parser.add_argument("--chunk-mib", type=int, default=64)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/yamlgrad_lstsq"))
    parser.add_argument("--workers", default="", help="e.g. 1,2,4: LocalCluster runs")
    parser.add_argument("--memory-limit", default="1GiB", help="per worker")
    parser.add_argument("--skip-reference", action="store_true")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    paths = make_data(args.dir, args.gib, args.cols, args.chunk_mib)
    made = time.perf_counter() - start
    w = np.zeros((args.cols, 1))
    got = yamlgrad_step(paths, w)
    print(
        f"X: {args.gib} GiB float64, {args.cols} columns, {len(paths)} chunk files "
        f"of <= {args.chunk_mib} MiB (data ready in {made:.1f} s)"
    )
    print(f"yamlgrad on dask (threads): {got[2]:.2f} s, peak RSS {_peak_mib():.0f} MiB")
    if not args.skip_reference:
        start = time.perf_counter()
        want = numpy_reference(paths, w)
        took = time.perf_counter() - start
        err = _check(got[:2], want)
        print(
            f"chunked numpy reference: {took:.2f} s; max relative difference "
            f"{err:.2e}: agrees with the chunked numpy reference to 1e-10"
        )
    if args.workers:
        print(
            "\n| workers | time (s) | peak worker RSS (MiB) | memory limit |\n|---|---|---|---|"
        )
        for n in (int(k) for k in args.workers.split(",")):
            print(run_cluster(paths, w, n, args.memory_limit))


if __name__ == "__main__":
    main()
