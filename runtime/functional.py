"""The functions PyTorch writes in Python over its ops (torch/functional.py):
`unique` and `unique_consecutive`, `atleast_1d/2d/3d`, `broadcast_tensors`,
`cartesian_prod`; `gradient`, whose `spacing` takes forms (a number, a list of
numbers, a list of tensors) that one schema cannot; and `cdist`, whose
compute_mode is a string.

The unique ops (`_unique2`, `unique_dim`, `unique_consecutive` in
derivatives.yaml) always return three tensors, the ones not asked for empty;
these functions return the unique values alone, or a tuple with the inverse
and/or the counts. The others take their tensors as arguments
(`atleast_1d(a, b)`) or as one sequence, as PyTorch's do, and call the
derivatives.yaml composites.
"""

from __future__ import annotations

from typing import Any

from yamlgrad.runtime.autograd.tensor import Tensor
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
