"""Basic indexing, `x[...]`, built from the generated ops as PyTorch records it.

An int is `select` (SelectBackward0), a slice is `slice` (SliceBackward0), None
inserts a dim (a view), and `...` stands for the dims not named. Each step is an op
of its own, so the result's history is exactly the chain PyTorch shows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime import formulas
from yamlgrad.runtime.tensor import Tensor

_INDEX_ERROR = (
    "only integers, slices (`:`), ellipsis (`...`) and None are valid indices "
    "(got {})"
)


def _is_int(item: Any) -> bool:
    return isinstance(item, (int, np.integer)) and not isinstance(
        item, (bool, np.bool_)
    )


def expand_ellipsis(items: tuple[Any, ...], ndim: int) -> tuple[Any, ...]:
    for item in items:
        if not (
            item is None or item is Ellipsis or isinstance(item, slice) or _is_int(item)
        ):
            # TODO: advanced indexing (tensors, lists, bool masks: IndexBackward0).
            raise IndexError(_INDEX_ERROR.format(type(item).__name__))
    if sum(item is Ellipsis for item in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(item is not None and item is not Ellipsis for item in items)
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items = items[:at] + (slice(None),) * (ndim - consumed) + items[at + 1 :]
    return items


def getitem(self: Tensor, key: Any) -> Tensor:
    """`Tensor.__getitem__` for ints, slices, None and `...`."""
    ops = formulas.ops
    items = expand_ellipsis(key if isinstance(key, tuple) else (key,), self.ndim)
    out, dim = self, 0
    for item in items:
        if item is None:
            shape = tuple(out.shape)
            out = ops.view(out, shape[:dim] + (1,) + shape[dim:])
            dim += 1
        elif isinstance(item, slice):
            if item != slice(None):
                step = 1 if item.step is None else item.step
                out = ops.slice_Tensor(out, dim, item.start, item.stop, step)
            dim += 1
        else:
            out = ops.select(out, dim, int(item))
    return out
