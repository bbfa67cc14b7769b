"""The functions PyTorch writes in Python over its ops (torch/functional.py):
`unique` and `unique_consecutive`, `atleast_1d/2d/3d`, `broadcast_tensors`,
`cartesian_prod`; `gradient`, whose `spacing` takes forms (a number, a list of
numbers, a list of tensors) that one schema cannot; `cdist`, whose
compute_mode is a string; `histogram`, whose bins are edges or a count over
a range; `unravel_index`, integer arithmetic outside any graph; and the
deprecated `chain_matmul`, which is linalg.multi_dot.

The unique ops (`_unique2`, `unique_dim`, `unique_consecutive` in
derivatives.yaml) always return three tensors, the ones not asked for empty;
these functions return the unique values alone, or a tuple with the inverse
and/or the counts. The others take their tensors as arguments
(`atleast_1d(a, b)`) or as one sequence, as PyTorch's do, and call the
derivatives.yaml composites.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.errors import warn_at_caller
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.ops.numeric_composites import gradient_of

__all__ = [
    "unique",
    "unique_consecutive",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_tensors",
    "cartesian_prod",
    "gradient",
    "cdist",
    "histogram",
    "unravel_index",
    "chain_matmul",
]


def _asked_for(
    outputs: tuple[Any, Any, Any], return_inverse: bool, return_counts: bool
) -> Any:
    output, inverse, counts = outputs
    if return_inverse and return_counts:
        return output, inverse, counts
    if return_inverse:
        return output, inverse
    if return_counts:
        return output, counts
    return output


def unique(
    input: Any,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """The distinct values of `input` (or its distinct slices along `dim`), sorted.

    >>> yg.unique(yg.tensor([3, 1, 3]), return_counts=True)
    (tensor([1, 3]), tensor([1, 2]))
    """
    if dim is None:
        outputs = ops._unique2(input, sorted, return_inverse, return_counts)
    else:
        outputs = ops.unique_dim(input, dim, sorted, return_inverse, return_counts)
    return _asked_for(outputs, return_inverse, return_counts)


def unique_consecutive(
    input: Any,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """`input` with each run of equal consecutive values (or slices along `dim`)
    kept once.

    >>> yg.unique_consecutive(yg.tensor([1, 1, 2, 1]))
    tensor([1, 2, 1])
    """
    outputs = ops.unique_consecutive(input, return_inverse, return_counts, dim)
    return _asked_for(outputs, return_inverse, return_counts)


_CDIST_MODES = {
    "use_mm_for_euclid_dist_if_necessary": None,
    "use_mm_for_euclid_dist": 1,
    "donot_use_mm_for_euclid_dist": 2,
}


def cdist(
    x1: Any,
    x2: Any,
    p: float = 2.0,
    compute_mode: str = "use_mm_for_euclid_dist_if_necessary",
) -> Any:
    """The p-norm distance between each row of x1 and each row of x2, by batch:
    [..., P, M] and [..., R, M] give [..., P, R]. For p = 2, the matrix-product
    form is used when a side has more than 25 rows (or always, or never, as
    compute_mode says).

    >>> cdist(yg.tensor([[0.0, 0.0]]), yg.tensor([[3.0, 4.0]]))
    tensor([[5.]])
    """
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return ops.cdist(x1, x2, p, _CDIST_MODES[compute_mode])


def _tensors_of(tensors: tuple[Any, ...]) -> Any:
    """One argument (a tensor or a sequence) as it is; several as a tuple."""
    return tensors[0] if len(tensors) == 1 else tensors


def _atleast(tensors: tuple[Any, ...], one: Any, many: Any) -> Any:
    value = _tensors_of(tensors)
    if isinstance(value, Tensor):
        return one(value)
    return tuple(many(list(value)))


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least one dim: a 0-d tensor viewed as shape (1,).

    >>> yg.atleast_1d(yg.tensor(1.0))
    tensor([1.])
    """
    return _atleast(tensors, ops.atleast_1d, ops.atleast_1d_Sequence)


def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least two dims: () -> (1, 1), (n,) -> (1, n).

    >>> yg.atleast_2d(yg.tensor([1.0, 2.0])).shape
    yamlgrad.Size([1, 2])
    """
    return _atleast(tensors, ops.atleast_2d, ops.atleast_2d_Sequence)


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least three dims: (n,) -> (1, n, 1), (m, n) -> (m, n, 1).

    >>> yg.atleast_3d(yg.ones(2, 3)).shape
    yamlgrad.Size([2, 3, 1])
    """
    return _atleast(tensors, ops.atleast_3d, ops.atleast_3d_Sequence)


def broadcast_tensors(*tensors: Any) -> tuple[Any, ...]:
    """The tensors expanded to their common broadcast shape (ExpandBackward0).

    >>> [t.shape for t in yg.broadcast_tensors(yg.ones(3, 1), yg.ones(4))]
    [yamlgrad.Size([3, 4]), yamlgrad.Size([3, 4])]
    """
    if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        tensors = tuple(tensors[0])
    return tuple(ops.broadcast_tensors(list(tensors)))


def cartesian_prod(*tensors: Any) -> Any:
    """The cartesian product of vectors, one row per combination.

    >>> yg.cartesian_prod(yg.tensor([1, 2]), yg.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
    """
    return ops.cartesian_prod(list(tensors))


def gradient(
    input: Any, *, spacing: Any = 1, dim: Any = None, edge_order: int = 1
) -> tuple[Any, ...]:
    """The gradient of a function sampled at `input`, by central differences
    inside and one-sided ones of `edge_order` at the ends, along each dim
    (or those of `dim`). `spacing` is a number, one number per dim, or one
    tensor of coordinates per dim.

    >>> yg.gradient(yg.tensor([1.0, 4.0, 9.0, 16.0]))
    (tensor([3., 4., 6., 7.]),)
    """
    return gradient_of(input, spacing, dim, edge_order)


def histogram(
    input: Tensor,
    bins: Any = 100,
    *,
    range: Any = None,  # noqa: A002 - PyTorch's argument name
    weight: Tensor | None = None,
    density: bool = False,
) -> Any:
    """(hist, bin_edges) of `input` (torch.return_types.histogram's fields):
    between the edges `bins` (a tensor), or in `bins` equal bins over `range`
    (the data's range by default: [0, 1] for none, ±0.5 around a single value).

    >>> yg.histogram(yg.tensor([1.0, 2.0, 1.0]), 2).hist
    tensor([2., 1.])
    """
    if not isinstance(bins, Tensor):
        bins = _bin_edges(input, int(bins), range)
    return ops.histogram_bins_tensor(input, bins, weight=weight, density=density)


def _bin_edges(input: Tensor, bins: int, range: Any) -> Tensor:  # noqa: A002
    """`bins` + 1 equally spaced edges, in input's dtype, as torch.histogram."""
    if bins <= 0:
        raise RuntimeError(
            f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0"
        )
    data = input._data
    if range is not None:
        low, high = (float(r) for r in range)
    elif data.size:
        low, high = float(data.min()), float(data.max())
    else:
        low, high = 0.0, 1.0
    if low > high:
        raise RuntimeError(
            f"torch.histogramdd: min should not exceed max, but got min {low:g} "
            f"max {high:g} for dimension 0"
        )
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(
            f"torch.histogramdd: dimension 0's range [{low:g}, {high:g}] is not "
            "finite"
        )
    if low == high:
        low, high = low - 0.5, high + 0.5
    edges = np.linspace(low, high, bins + 1).astype(data.dtype)
    return Tensor._make(edges)


def unravel_index(indices: Tensor, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates in an array of `shape` of each flat index (int64 tensors
    shaped as `indices`); an index wraps modulo the size, as PyTorch's does.

    >>> yg.unravel_index(yg.tensor([4, 1]), (2, 3))
    (tensor([1, 0]), tensor([1, 1]))
    """
    sizes = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s < 0 for s in sizes):
        raise ValueError(f"'shape' cannot have negative values, but got {sizes}")
    flat = indices._data
    if flat.dtype.kind not in "iu":
        raise TypeError(
            f"expected 'indices' to be integer dtype, but got {indices.dtype}"
        )
    remaining = np.asarray(flat, dtype=np.int64)
    coordinates = []
    for size in reversed(sizes):
        coordinates.append(np.remainder(remaining, size))
        remaining = np.floor_divide(remaining, size)
    return tuple(Tensor._make(c) for c in reversed(coordinates))


_chain_matmul_warned = [False]


def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of the matrices (linalg.multi_dot), with PyTorch's warning
    that chain_matmul is deprecated; one matrix is copied (CloneBackward0)."""
    if not _chain_matmul_warned[0]:
        _chain_matmul_warned[0] = True
        warn_at_caller(
            "torch.chain_matmul is deprecated and will be removed in a future "
            "PyTorch release. Use torch.linalg.multi_dot instead, which accepts a "
            "list of two or more tensors rather than multiple parameters."
        )
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        return ops.clone(matrices[0])
    return ops.linalg_multi_dot(list(matrices))
