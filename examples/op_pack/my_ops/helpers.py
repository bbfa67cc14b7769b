"""The op pack's own helpers: what my_ops.yaml's kernels and formulas may call
besides numpy and yamlgrad's runtime helpers (only the names declared below).

A kernel helper gets ndarrays. A formula helper gets ndarrays in a first-order
backward and yamlgrad Tensors under `create_graph=True`, so it uses only operators
and methods both have.
"""

from __future__ import annotations

from typing import Any

# What the generator lets my_ops.yaml call (read with ast, never imported by it):
# KERNELS from a `forward:`, BACKWARD_HELPERS from a formula.
KERNELS: tuple[str, ...] = ()
BACKWARD_HELPERS = ("smooth_abs_grad",)
__all__ = ["smooth_abs_grad"]


def smooth_abs_grad(x: Any, eps: float) -> Any:
    """d/dx sqrt(x**2 + eps): x / sqrt(x**2 + eps)."""
    return x / (x * x + eps) ** 0.5
