"""Helpers that forward kernels in derivatives.yaml may call, besides `np.*`.

Each takes and returns ndarrays (or Python numbers) and never sees a Tensor. The
generator reads `__all__` with ast to know which names a `forward:` may use.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "reduce_dims",
    "expand_shape",
    "view_shape",
    "sigmoid",
    "relu",
    "cast",
    "transpose_2d",
]


def reduce_dims(dim: tuple[int, ...] | None, ndim: int) -> tuple[int, ...] | None:
    """The `axis=` for a reduction: PyTorch reduces every dim for None and for [].

    A 0-d tensor takes dim 0 or -1 (PyTorch treats it as one element), which
    numpy's axis= refuses: there is nothing to reduce, so the axes are ().
    """
    if not dim:
        return None
    if ndim == 0 and all(d in (0, -1) for d in dim):
        return ()
    return dim


def expand_shape(shape: tuple[int, ...], size: tuple[int, ...]) -> tuple[int, ...]:
    """`expand`'s target: -1 keeps the input's size; new leading dims are allowed."""
    lead = len(size) - len(shape)
    if lead < 0:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(size)}) must be greater or "
            f"equal to the number of dimensions in the tensor ({len(shape)})"
        )
    out = []
    for i, s in enumerate(size):
        if s == -1:
            if i < lead:
                raise RuntimeError("expand: -1 is not allowed in a leading, non-existing dimension")
            s = shape[i - lead]
        out.append(s)
    return tuple(out)


def view_shape(array: Any, size: tuple[int, ...]) -> tuple[int, ...]:
    """`view`/`reshape`'s target, with PyTorch's message for a size that cannot fit."""
    numel = int(np.size(array))
    known = 1
    for s in size:
        if s != -1:
            known *= s
    if size.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    fits = numel == known if -1 not in size else known and numel % known == 0
    if not fits:
        raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")
    return size


def sigmoid(x: Any) -> Any:
    """1 / (1 + exp(-x)), without overflow for large |x|."""
    return np.exp(-np.logaddexp(0, -x))


def relu(x: Any) -> Any:
    return np.maximum(x, 0)


def cast(x: Any, dtype: np.dtype | None) -> Any:
    """A copy of `x` as `dtype` (a copy even when the dtype is unchanged)."""
    return np.array(x, dtype=dtype, copy=True)


def transpose_2d(x: Any) -> Any:
    """`t()`: transpose a matrix; a vector or a 0-d tensor is returned as it is."""
    if np.ndim(x) > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {np.ndim(x)}D")
    return np.transpose(x)
