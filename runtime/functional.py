"""`torch.unique` and `torch.unique_consecutive`: Python over an op, as in PyTorch
(torch/functional.py), because what they return depends on their flags.

The ops (`_unique2`, `unique_dim`, `unique_consecutive` in derivatives.yaml)
always return three tensors, the ones not asked for empty; these functions
return the unique values alone, or a tuple with the inverse and/or the counts.
"""

from __future__ import annotations

from typing import Any

from yamlgrad.runtime.dispatch import ops

__all__ = ["unique", "unique_consecutive"]


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
