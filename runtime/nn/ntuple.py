"""`ntuple`: a size argument of the nn functions and modules (`kernel_size=2` or
`(2, 3)`) as a tuple of n ints, as PyTorch's `_single`, `_pair` and `_triple`
(torch/nn/modules/utils.py) and its ops' argument checks give it.

The error texts are the ones PyTorch gives for a sequence of the wrong length;
each names the op whose check it is, so a caller passes its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

# The texts a caller passes as `error` (fields: name, n, values, size).
CONVOLUTION = (
    "expected {name} to be a single integer value or a list of {n} values to "
    "match the convolution dimensions, but got {name}={values}"
)
IM2COL = "It is expected {name} equals to {n}, but got size {size}"
AVG_POOL1D = "avg_pool1d() argument '{name}' should contain one int (got {size})"
MAX_POOL1D = {
    "kernel_size": "max_pool1d() kernel_size must be an int, list of ints or tuple "
    "of ints of size 1 but got size {size}",
    "stride": "max_pool1d() stride must be None, an int, list of ints, or tuple of "
    "ints of size 1 but got size {size}",
    "padding": "max_pool1d() padding must be an int, list of ints, or tuple of ints "
    "of size 1 but got size {size}",
    "dilation": "max_pool1d() dilation must be an int, list of ints or tuple of ints "
    "of size 1 but got size {size}",
}


def pooling(op: str, count: str, either: bool = True) -> dict[str, str]:
    """The texts of max_pool2d/3d and avg_pool2d/3d for each size argument, by
    its name; `count` is the number in words. avg_pool3d's say "must be" where
    the others say "must either be" (`either=False`)."""
    must = "must either be" if either else "must be"
    return {
        "kernel_size": f"{op}: kernel_size {must} a single int, or a tuple of "
        f"{count} ints",
        "stride": f"{op}: stride {must} omitted, a single int, or a tuple of "
        f"{count} ints",
        "padding": f"{op}: padding {must} a single int, or a tuple of {count} ints",
        "dilation": f"{op}: dilation must be either a single int, or a tuple of "
        f"{count} ints",
    }


def fractional(op: str, count: str) -> str:
    """fractional_max_pool2d/3d's text (`count`: "" or "three ")."""
    return f"{op}: {{name}} must either be a single Int or tuple of {count}Ints"


def ntuple(
    value: Any,
    n: int,
    name: str = "",
    error: str | dict[str, str] | None = None,
    *,
    as_given: bool = False,
) -> tuple:
    """`value` as a tuple of `n` ints: an int stands for n copies of itself, a
    sequence becomes a tuple of ints, and a sequence of one int stands for n
    copies of it.

    A sequence of another length raises RuntimeError with `error` (formatted
    with the argument's `name`, `n`, the `values` as a list and their `size`)
    where the caller gives PyTorch's text for it (or its texts by argument name);
    without one it is returned as it is, for the op to check.

    `as_given`: the rule the modules store their sizes by (torch.nn.modules.
    utils._ntuple): a sequence as the tuple of what it holds, whatever its
    length, and anything else n copies of itself (`Conv2d(2, 3, (2,))` keeps
    `(2,)`, and its forward then fails as PyTorch's does).

    >>> ntuple(2, 2), ntuple([3], 3), ntuple((1, 2), 2)
    ((2, 2), (3, 3, 3), (1, 2))
    """
    if as_given:
        return tuple(value) if isinstance(value, Iterable) else (value,) * n
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * n
    values = tuple(int(v) for v in value)
    if len(values) == 1:
        return values * n
    if error is not None and len(values) != n:
        text = error[name] if isinstance(error, dict) else error
        fields = {"name": name, "n": n, "values": list(values), "size": len(values)}
        raise RuntimeError(text.format(**fields))
    return values


def stride_arg(stride: Any, n: int, error: str | dict[str, str] | None) -> tuple:
    """A pooling op's `stride`: None or an empty sequence is omitted (`()`: the
    kernel size, as PyTorch takes both), anything else `ntuple`'s."""
    if stride is None or (isinstance(stride, (tuple, list)) and not stride):
        return ()
    return ntuple(stride, n, "stride", error)
