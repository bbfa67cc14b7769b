"""Composites that stack, split and combine tensors, as PyTorch composes them:
atleast_1d/2d/3d, broadcast_tensors, column_stack, dstack, cartesian_prod,
combinations, tensor_split and hsplit/vsplit/dsplit.

Each helper is a body of recorded ops (reshape, unsqueeze, expand, slice, stack,
masked_select), so the nodes are PyTorch's (a tensor_split piece records
SliceBackward0, combinations StackBackward0 over MaskedSelectBackward0) and no
helper needs a backward of its own. The checks raise PyTorch's texts before any
op runs, so a bad call records nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime import dispatch
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.ops.common import _dim
from yamlgrad.runtime.wrappers.binding import argument_type
from yamlgrad.runtime.wrappers.kernel_errors import broadcast_pair
from yamlgrad.runtime.wrappers.variable_type_utils import int_list_arg

KERNELS = ("fliplr_dims", "flipud_dims", "hsplit_dim", "vsplit_dim", "dsplit_dim")

COMPOSITE_HELPERS = (
    "atleast_3d_each",
    "at_least_3d",
    "broadcast_each",
    "column_stack_inputs",
    "cartesian_prod_via_stack",
    "combinations_via_masks",
    "tensor_split_sections",
    "tensor_split_indices",
    "tensor_split_tensor",
    "split_along",
    "dstack_inputs",
)


def at_least_3d(t: Tensor) -> Any:
    """() -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1), else `t`."""
    ops = dispatch.ops
    if t.ndim == 0:
        return ops.reshape(t, (1, 1, 1))
    if t.ndim == 1:
        return ops.unsqueeze(ops.unsqueeze(t, 0), -1)
    if t.ndim == 2:
        return ops.unsqueeze(t, -1)
    return t


def atleast_3d_each(tensors: list[Tensor]) -> list[Any]:
    return [at_least_3d(t) for t in tensors]


def nonempty_list(tensors: list[Tensor], op: str) -> list[Tensor]:
    """`tensors`, or PyTorch's error for an empty list (`hstack expects ...`)."""
    if len(tensors) == 0:
        raise RuntimeError(f"{op} expects a non-empty TensorList")
    return tensors


def broadcast_each(tensors: list[Tensor]) -> list[Any]:
    """Each tensor expanded to the shapes' broadcast (ExpandBackward0); one that
    already has it is returned as it is, as at::expand_outplace does."""
    shape: tuple[int, ...] = ()
    for t in tensors:
        shape = broadcast_pair(shape, tuple(t.shape))
    return [
        t if tuple(t.shape) == shape else dispatch.ops.expand(t, shape) for t in tensors
    ]


def column_stack_inputs(tensors: list[Tensor]) -> list[Any]:
    """column_stack's operands: a tensor of at most one dim as a column."""
    nonempty_list(tensors, "column_stack")
    return [
        dispatch.ops.reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in tensors
    ]


def _grids(tensors: list[Tensor]) -> list[Any]:
    """meshgrid(tensors, indexing="ij"): each viewed and expanded to the grid."""
    ops = dispatch.ops
    grid = [t.numel() for t in tensors]
    out = []
    for i, t in enumerate(tensors):
        shape = [1] * len(tensors)
        shape[i] = -1
        out.append(ops.expand(ops.view(t, shape), grid))
    return out


def cartesian_prod_via_stack(tensors: list[Tensor]) -> Any:
    """The grid of the vectors' values, one row per combination: the flattened
    meshgrid stacked along dim 1 (StackBackward0); one vector is itself."""
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    ops = dispatch.ops
    return ops.stack([ops.flatten(g) for g in _grids(tensors)], 1)


def combinations_via_masks(self: Tensor, r: int, with_replacement: bool) -> Any:
    """The length-`r` combinations of a vector's values: the r-fold grid of the
    vector, each grid's values where i < j < ... (or <=) kept by masked_select,
    stacked along dim 1, as at::combinations does."""
    if not isinstance(r, int) or isinstance(r, bool):
        raise TypeError(argument_type("combinations", "r", 2, "int", r))
    if self.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(self.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    ops = dispatch.ops
    if r == 0:
        return ops.new_empty(self, (0,))
    n = self.numel()
    index = np.meshgrid(*([np.arange(n)] * r), indexing="ij")
    mask = np.ones((n,) * r, dtype=bool)
    for lower, upper in zip(index, index[1:]):
        mask &= (lower <= upper) if with_replacement else (lower < upper)
    keep = Tensor._make(mask)
    return ops.stack([ops.masked_select(g, keep) for g in _grids([self] * r)], 1)


def split_along(self: Tensor, bounds: list[int], dim: int) -> tuple[Any, ...]:
    """The slices [bounds[i], bounds[i + 1]) of `self` along `dim`
    (SliceBackward0 each)."""
    ops = dispatch.ops
    return tuple(
        ops.slice_Tensor(self, dim, start, end, 1)
        for start, end in zip(bounds, bounds[1:])
    )


def _split_dim(self: Tensor, dim: int) -> int:
    if self.ndim == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a "
            f"tensor with {self.ndim} dims"
        )
    return _dim(dim, self.ndim, "tensor_split")


def tensor_split_sections(self: Tensor, sections: int, dim: int) -> tuple[Any, ...]:
    """`sections` pieces along `dim`, the first size % sections one longer."""
    d = _split_dim(self, dim)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    size = self.shape[d]
    small, extra = divmod(size, sections)
    bounds = [0]
    for i in range(sections):
        bounds.append(bounds[-1] + small + (1 if i < extra else 0))
    return split_along(self, bounds, d)


def tensor_split_indices(
    self: Tensor, indices: tuple[int, ...], dim: int
) -> tuple[Any, ...]:
    """The pieces between the given indices along `dim` (slice's clamping)."""
    d = _split_dim(self, dim)
    indices = int_list_arg(indices, "tensor_split", "indices", 2)
    return split_along(self, [0, *indices, self.shape[d]], d)


def tensor_split_tensor(
    self: Tensor, tensor_indices_or_sections: Tensor, dim: int
) -> tuple[Any, ...]:
    """tensor_split by a 0-d (sections) or 1-d (indices) int64 tensor."""
    _split_dim(self, dim)
    data = tensor_indices_or_sections._data
    if data.dtype != np.int64:
        from yamlgrad.runtime.errors import scalar_type_name

        raise RuntimeError(
            "tensor_split expected tensor_indices_or_sections to have dtype of long, "
            f"but got {scalar_type_name(data.dtype)}"
        )
    if data.ndim > 1:
        raise RuntimeError(
            "tensor_split expected tensor_indices_or_sections to be a "
            "zero-dimensional or one-dimensional tensor, but got a tensor with "
            f"{data.ndim} dims"
        )
    if data.ndim == 0:
        return tensor_split_sections(self, int(data), dim)
    return tensor_split_indices(self, tuple(int(i) for i in data), dim)


def fliplr_dims(ndim: int) -> tuple[int, ...]:
    """fliplr flips dim 1 of a tensor of at least two dims."""
    if ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return (1,)


def flipud_dims(ndim: int) -> tuple[int, ...]:
    """flipud flips dim 0 of a tensor of at least one dim."""
    if ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return (0,)


def dstack_inputs(tensors: list[Tensor]) -> list[Any]:
    """dstack's operands: each at least 3-d, from a non-empty list."""
    return atleast_3d_each(nonempty_list(tensors, "dstack"))


_SPLIT_DIMS = {"hsplit": 1, "vsplit": 0, "dsplit": 2}
_SPLIT_MIN_DIMS = {"hsplit": 1, "vsplit": 2, "dsplit": 3}


def _split_dim_of(shape: tuple[int, ...], op: str, sections: int | None) -> int:
    """The dim hsplit (1, or 0 for a vector), vsplit (0) and dsplit (2) split,
    with PyTorch's checks; `sections` (None for a list of indices) must divide
    its size."""
    least = _SPLIT_MIN_DIMS[op]
    if len(shape) < least:
        raise RuntimeError(
            f"torch.{op} requires a tensor with at least {least} dimension, but got "
            f"a tensor with {len(shape)} dimensions!"
        )
    dim = 0 if op == "hsplit" and len(shape) == 1 else _SPLIT_DIMS[op]
    if sections is not None and (sections == 0 or shape[dim] % sections != 0):
        raise RuntimeError(
            f"torch.{op} attempted to split along dimension {dim}, but the size of "
            f"the dimension {shape[dim]} is not divisible by the split_size "
            f"{sections}!"
        )
    return dim


def hsplit_dim(shape: tuple[int, ...], sections: int | None) -> int:
    return _split_dim_of(shape, "hsplit", sections)


def vsplit_dim(shape: tuple[int, ...], sections: int | None) -> int:
    return _split_dim_of(shape, "vsplit", sections)


def dsplit_dim(shape: tuple[int, ...], sections: int | None) -> int:
    return _split_dim_of(shape, "dsplit", sections)
