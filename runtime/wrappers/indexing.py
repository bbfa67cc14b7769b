"""Indexing, `x[...]`, built from the generated ops as PyTorch records it.

Basic items first, in order, each an op of its own: an int is `select`
(SelectBackward0), a slice is `slice` (SliceBackward0), None is `unsqueeze`
(UnsqueezeBackward0), and `...` stands for the dims not named. Tensors, lists and
bool masks (advanced indexing) are collected at the dims they index and applied
last, in one `index.Tensor` (IndexBackward0, whose backward accumulates repeated
indices), as PyTorch's applySlicing + index do. So `x[0, idx]` records
IndexBackward0 after SelectBackward0, and `x[:, idx]` a single IndexBackward0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime.backend import dtype_kind
from yamlgrad.runtime import dispatch
from yamlgrad.runtime.autograd.tensor import Tensor

_INDEX_ERROR = (
    "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
    "are valid indices (got {})"
)


def _is_int(item: Any) -> bool:
    return isinstance(item, (int, np.integer)) and not isinstance(
        item, (bool, np.bool_)
    )


def _as_index(item: Any) -> Tensor | None:
    """A tensor, a list or an ndarray used as an index, as an integer or bool
    Tensor; None for a basic item."""
    if isinstance(item, Tensor):
        array = item._data
    elif isinstance(item, (list, np.ndarray)):
        array = np.asarray(item)
        if dtype_kind(array.dtype) not in "biu":
            raise IndexError(_INDEX_ERROR.format(type(item).__name__))
        if dtype_kind(array.dtype) in "iu":
            array = array.astype(np.int64)
    else:
        return None
    if dtype_kind(array.dtype) not in "biu":
        raise IndexError(
            "tensors used as indices must be long, int, byte or bool tensors"
        )
    return item if isinstance(item, Tensor) else Tensor._make(array)


def _consumed(item: Any) -> int:
    """How many of the tensor's dims an item indexes."""
    if item is None or item is Ellipsis:
        return 0
    if isinstance(item, Tensor) and item._data.dtype == np.bool_:
        return item._data.ndim
    return 1


def _expand_ellipsis(items: tuple[Any, ...], ndim: int) -> tuple[Any, ...]:
    for item in items:
        basic = (
            item is None or item is Ellipsis or isinstance(item, slice) or _is_int(item)
        )
        if not basic and not isinstance(item, Tensor):
            raise IndexError(_INDEX_ERROR.format(type(item).__name__))
    if sum(item is Ellipsis for item in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(_consumed(item) for item in items)
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    ellipsis = [i for i, item in enumerate(items) if item is Ellipsis]
    if ellipsis:  # not `in`/`index`: they would compare Tensors with ==
        at = ellipsis[0]
        items = items[:at] + (slice(None),) * (ndim - consumed) + items[at + 1 :]
    return items


def getitem(self: Tensor, key: Any) -> Tensor:
    """`Tensor.__getitem__`: ints, slices, None, `...`, and integer or bool tensors
    (or lists) as indices."""
    ops = dispatch.ops
    raw_items = key if isinstance(key, tuple) else (key,)
    items = tuple(
        index if (index := _as_index(item)) is not None else item for item in raw_items
    )
    items = _expand_ellipsis(items, self.ndim)
    out, dim = self, 0
    indices: list[Tensor | None] = []
    for item in items:
        if isinstance(item, Tensor):
            indices += [None] * (dim - len(indices)) + [item]
            dim += _consumed(item)
        elif item is None:
            out = ops.unsqueeze(out, dim)
            dim += 1
        elif isinstance(item, slice):
            if item != slice(None):
                step = 1 if item.step is None else item.step
                # Python indexing's own texts, before aten::slice's
                if step == 0:
                    raise ValueError("slice step cannot be zero")
                if step < 0:
                    raise ValueError("step must be greater than zero")
                out = ops.slice_Tensor(out, dim, item.start, item.stop, step)
            dim += 1
        else:
            out = ops.select(out, dim, int(item))
    if indices:
        out = ops.index_Tensor(out, indices)
    return out
