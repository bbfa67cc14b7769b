"""`torch.unique`, `torch.unique_consecutive` and `torch.cdist`: Python over an op,
as in PyTorch (torch/functional.py), because what they return depends on their
flags (cdist's: its compute_mode string).

The ops (`_unique2`, `unique_dim`, `unique_consecutive` in derivatives.yaml)
always return three tensors, the ones not asked for empty; these functions
return the unique values alone, or a tuple with the inverse and/or the counts.
"""

from __future__ import annotations

from typing import Any

from yamlgrad.runtime.dispatch import ops

__all__ = ["unique", "unique_consecutive", "cdist"]


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
