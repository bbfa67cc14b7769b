"""Activation checkpointing: peak memory and time of a deep MLP's training step.

    python benchmarks/checkpoint.py            # 32 layers of 256 units, batch 1024
    python benchmarks/checkpoint.py --smoke    # tiny (to test the script)

The model is `depth` blocks of Linear + Tanh (float32). One step is the forward,
`sum()`, and backward. It runs plain, and with `checkpoint_sequential` in
sqrt(depth) segments, both variants (`use_reentrant` True and False). The peak is
what `tracemalloc` saw above the step's starting point: numpy reports every
array buffer it allocates to tracemalloc, so this is the activations kept for
backward plus backward's temporaries. Every checkpointed run's gradients are
checked against the plain run's. Nothing here asserts a number.
"""

from __future__ import annotations

import argparse
import math
import os
import time
import tracemalloc

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

import yamlgrad as yg  # noqa: E402
from yamlgrad.utils.checkpoint import checkpoint_sequential  # noqa: E402


def step(model: yg.nn.Sequential, x: yg.Tensor, mode: str, segments: int) -> tuple:
    """One forward and backward; (peak bytes, seconds, gradients)."""
    model.zero_grad(set_to_none=True)
    tracemalloc.start()
    start = time.perf_counter()
    base = tracemalloc.get_traced_memory()[0]
    if mode == "plain":
        y = model(x)
    else:
        y = checkpoint_sequential(
            model, segments, x, use_reentrant=(mode == "reentrant")
        )
    y.sum().backward()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    del y
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    return peak, seconds, grads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--depth", type=int, default=32)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--batch", type=int, default=1024)
    args = parser.parse_args()
    if args.smoke:
        args.depth, args.width, args.batch = 4, 8, 4
    yg.manual_seed(0)
    layers = []
    for _ in range(args.depth):
        layers += [yg.nn.Linear(args.width, args.width), yg.nn.Tanh()]
    model = yg.nn.Sequential(*layers)
    x = yg.randn(args.batch, args.width, requires_grad=True)
    segments = max(1, round(math.sqrt(args.depth)))
    print(
        f"{args.depth} x (Linear({args.width}, {args.width}) + Tanh), batch "
        f"{args.batch}, float32; checkpointed in {segments} segments\n"
    )
    print("| run | peak memory | x plain | time | x plain |")
    print("|---|---|---|---|---|")
    reference = None
    for mode in ("plain", "reentrant", "non-reentrant"):
        step(model, x, mode, segments)  # warm up
        peak, seconds, grads = step(model, x, mode, segments)
        if reference is None:
            reference = (peak, seconds, grads)
        for mine, plain in zip(grads, reference[2]):
            np.testing.assert_allclose(mine, plain, rtol=1e-5, atol=1e-6)
        print(
            f"| {mode} | {peak / 2**20:.1f} MiB | {peak / reference[0]:.2f} | "
            f"{seconds * 1e3:.0f} ms | {seconds / reference[1]:.2f} |"
        )


if __name__ == "__main__":
    main()
