"""`x[key] = value`: assignment into part of a tensor, with PyTorch's CopySlices node.

The data is written in place (numpy indexing) and the version bumped. When autograd
is involved (`x` or `value` requires grad) the assignment is recorded as a node
named CopySlices, as PyTorch names it, which becomes `x`'s grad_fn: the gradient
flows to `x`'s old history everywhere except the assigned region, and the region's
gradient flows to `value` (the engine sums it back to `value`'s shape if it was
broadcast). Recorded assignment takes basic indices (ints, slices, None, `...`);
without autograd any numpy index works.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime import grad_mode
from yamlgrad.runtime.node import Grad, Node
from yamlgrad.runtime.tensor import Tensor
from yamlgrad.runtime.variable_type_utils import (
    check_inplace,
    collect_next_edges,
    rebase_history,
)

ERR_ADVANCED_SETITEM = (
    "assigning through a tensor, list or mask index is only supported without "
    "autograd yet (under no_grad, or when nothing requires grad)"
)


def _is_basic(item: Any) -> bool:
    if item is None or item is Ellipsis or isinstance(item, slice):
        return True
    return isinstance(item, (int, np.integer)) and not isinstance(
        item, (bool, np.bool_)
    )


class CopySlices(Node):
    """Backward of `x[key] = value`: `x` keeps the gradient outside the region."""

    __slots__ = ("key", "mask")

    def __init__(self, key: Any, mask: np.ndarray) -> None:
        super().__init__()
        self.key = key
        self.mask = mask  # 1 outside the region, 0 inside

    def apply(self, grads: list[Grad], raw: bool = False) -> list[Grad | None]:
        grad = grads[0]
        grad_inputs: list[Grad | None] = [None, None]
        if grad is None:
            return grad_inputs
        if self.task_should_compute_output(0):
            mask = (
                self.mask if raw else Tensor._make(self.mask.astype(grad._data.dtype))
            )
            grad_inputs[0] = grad * mask
        if self.task_should_compute_output(1):
            grad_inputs[1] = np.array(grad[self.key]) if raw else grad[self.key]
        return grad_inputs


def setitem(self: Tensor, key: Any, value: Any) -> None:
    """`Tensor.__setitem__`."""
    if isinstance(value, Tensor):
        value_data: Any = value._data
        value_requires_grad = value.requires_grad
    elif isinstance(value, (int, float, bool, np.number, np.bool_)):
        value_data, value_requires_grad = value, False
    else:
        raise TypeError(
            f"can't assign a {type(value).__name__} to a {self.dtype!r} tensor"
        )
    record = grad_mode.is_grad_enabled() and (self.requires_grad or value_requires_grad)
    node = None
    if record:
        items = key if isinstance(key, tuple) else (key,)
        if not all(_is_basic(item) for item in items):
            raise IndexError(ERR_ADVANCED_SETITEM)
        check_inplace(self)
        mask = np.ones(self._data.shape, dtype=bool)
        mask[key] = False
        node = CopySlices(key, mask)
        node.set_next_edges(collect_next_edges(self, value))
    try:
        self._data[_numpy_key(key)] = value_data
    except (ValueError, TypeError) as e:
        raise RuntimeError(str(e)) from None
    self.version_counter.bump()
    if node is not None:
        rebase_history(self, node)


def _numpy_key(key: Any) -> Any:
    """Tensors in an index become their ndarrays (bool masks, integer indices)."""
    if isinstance(key, Tensor):
        return key._data
    if isinstance(key, tuple):
        return tuple(k._data if isinstance(k, Tensor) else k for k in key)
    return key
