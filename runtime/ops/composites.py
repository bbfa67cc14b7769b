"""Helpers that derivatives.yaml's composite entries call: bodies made only of
recorded ops (einsum, tensordot, linear, bilinear, take_along_dim, reshape by
strides), so PyTorch's nodes are recorded and nothing here needs a backward.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime import dispatch
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.errors import scalar_type_name
from yamlgrad.runtime.errors import type_meta_name
from yamlgrad.runtime.ops.common import _dim, _dim_list, _size_at
from yamlgrad.runtime.ops.linalg import matmul_by_rank
from yamlgrad.runtime.ops.shapes import element_strides, view_shape, viewable
from yamlgrad.runtime.wrappers.kernel_errors import broadcast_pair
from yamlgrad.runtime.wrappers.variable_type_utils import int_list_arg

COMPOSITE_HELPERS = (
    "atleast_1d_each",
    "atleast_2d_each",
    "tensordot_via_mm",
    "take_along_dim_via_gather",
    "einsum_via_ops",
    "linear_by_rank",
    "bilinear_via_ops",
    "reshape_by_strides",
    "contiguous_by_strides",
    "pad_by_mode",
    "pad_circular_via_ops",
)


def atleast_1d_each(tensors: list[Tensor]) -> list[Any]:
    """Each tensor with at least one dim (a 0-d one becomes shape (1,))."""
    return [dispatch.ops.reshape(t, (1,)) if t.ndim == 0 else t for t in tensors]


def atleast_2d_each(tensors: list[Tensor]) -> list[Any]:
    """Each tensor with at least two dims: (n,) -> (1, n), () -> (1, 1)."""
    out = []
    for t in tensors:
        if t.ndim == 0:
            t = dispatch.ops.reshape(t, (1, 1))
        elif t.ndim == 1:
            t = dispatch.ops.unsqueeze(t, 0)
        out.append(t)
    return out


def tensordot_via_mm(
    self: Tensor, other: Tensor, dims_self: tuple[int, ...], dims_other: tuple[int, ...]
) -> Any:
    """Contract `dims_self` of `self` with `dims_other` of `other`, as PyTorch's
    tensordot does: a contracted dim of size 1 facing a larger one is summed
    away first (SumBackward1), then both are permuted and flattened into
    matrices, `mm`, and the result viewed back (ViewBackward0 over MmBackward0)."""
    ops = dispatch.ops
    if len(dims_self) != len(dims_other):
        raise RuntimeError("both dimension lists should have same length")
    if self.dtype != other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    a, b, size = self, other, 1
    for da, db in zip(dims_self, dims_other):
        sa, sb = _size_at(self, da), _size_at(other, db)
        if sb == 1:  # broadcast: sum the other side's dim right away
            a = ops.sum(a, [da], True)
        elif sa == 1:
            b = ops.sum(b, [db], True)
        elif sa != sb:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {sa} in "
                f"dim {da} and second has size {sb} in dim {db}"
            )
        else:
            size *= sa
    dims_a = _dim_set(dims_self, self.ndim)
    dims_b = _dim_set(dims_other, other.ndim)
    free_a = [d for d in range(self.ndim) if d not in dims_a]
    free_b = [d for d in range(other.ndim) if d not in dims_b]
    rows = math.prod(a.shape[d] for d in free_a)
    cols = math.prod(b.shape[d] for d in free_b)
    out_shape = tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b)
    a = ops.reshape(ops.permute(a, free_a + dims_a), (rows, size))
    b = ops.reshape(ops.permute(b, dims_b + free_b), (size, cols))
    return ops.reshape(ops.mm(a, b), out_shape)


def _wrapped(indices: Tensor, size: int) -> Tensor:
    """Negative indices counted from the end, as take_along_dim counts them
    (gather itself refuses them)."""
    data = indices._data
    if type(data) is not np.ndarray or not (data < 0).any():
        return indices
    return Tensor._make(np.where(data < 0, data + size, data))


def take_along_dim_via_gather(self: Tensor, indices: Tensor, dim: int | None) -> Any:
    """PyTorch's take_along_dim: with a dim, self and indices broadcast to each
    other except along it (ExpandBackward0 under GatherBackward0, expanded even
    when nothing changes); without, both flattened."""
    ops = dispatch.ops
    if dim is None:
        flat = _wrapped(ops.view(indices, [-1]), math.prod(self.shape))
        return ops.gather(ops.view(self, [-1]), 0, flat)
    if self.ndim != indices.ndim:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number "
            f"of dimensions, but got {self.ndim} dimensions for input, and "
            f"{indices.ndim} dimensions for indices"
        )
    if indices._data.dtype != np.int64:
        raise RuntimeError(
            "torch.take_along_dim(): dtype of indices should be Long but got "
            f"{scalar_type_name(indices._data.dtype)}"
        )
    d = _dim(dim, self.ndim, "take_along_dim")
    indices = _wrapped(indices, self.shape[d] if self.ndim else 1)
    sizes = list(self.shape)
    sizes[d] = indices.shape[d]
    index = ops.expand(indices, broadcast_pair(tuple(sizes), tuple(indices.shape)))
    sizes = list(indices.shape)
    sizes[d] = self.shape[d]
    source = ops.expand(self, broadcast_pair(tuple(sizes), tuple(self.shape)))
    return ops.gather(source, d, index)


def _dim_set(dims: tuple[int, ...], ndim: int) -> list[int]:
    """dim_list_to_bitset: the dims wrapped, each at most once."""
    return _dim_list(dims, ndim, "tensordot")  # a 0-d operand failed in _size_at


def _einsum_specs(equation: str, tensors: list[Tensor]) -> tuple[list[str], str]:
    """Each operand's letters and the output's, with `...` spelled out."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    specs = lhs.split(",")
    if len(specs) != len(tensors):
        fewer_or_more = "fewer" if len(tensors) < len(specs) else "more"
        raise RuntimeError(
            f"einsum(): {fewer_or_more} operands were provided than specified in the "
            "equation"
        )
    used = set(eq) - set(".,->")
    spare = [
        c
        for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
        if c not in used
    ]
    widest = 0
    for spec, t in zip(specs, tensors):
        if "..." in spec:
            widest = max(widest, t.ndim - len(spec.replace("...", "")))
    ell = "".join(spare[:widest])
    full = []
    for spec, t in zip(specs, tensors):
        if "..." in spec:
            k = t.ndim - len(spec.replace("...", ""))
            spec = spec.replace("...", ell[widest - k :] if k else "")
        if len(spec) != t.ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(spec)}) does "
                f"not match the number of dimensions ({t.ndim}) for operand"
            )
        full.append(spec)
    _check_einsum_sizes(full, tensors)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        counts = {c: "".join(full).count(c) for c in set("".join(full))}
        out = ell + "".join(
            sorted(c for c, n in counts.items() if n == 1 and c not in ell)
        )
    return full, out


def _check_einsum_sizes(specs: list[str], tensors: list[Tensor]) -> None:
    """Every subscript has one size, or 1 where it broadcasts (PyTorch's check)."""
    seen: dict[str, int] = {}
    for index, (spec, t) in enumerate(zip(specs, tensors)):
        for letter, size in zip(spec, t.shape):
            previous = seen.setdefault(letter, size)
            if size != previous and 1 not in (size, previous):
                raise RuntimeError(
                    f"einsum(): subscript {letter} has size {size} for operand "
                    f"{index} which does not broadcast with previously seen size "
                    f"{previous}"
                )
            if previous == 1:
                seen[letter] = size


def einsum_via_ops(equation: str, tensors: list[Tensor]) -> Any:
    """`torch.einsum` as PyTorch computes it: operands permuted to one dim order
    (output letters, then summed ones), letters of one operand summed early, pairs
    contracted left to right with `bmm` (or multiplied when nothing is summed),
    then viewed to the output. Every step is a recorded op."""
    ops = dispatch.ops
    specs, out = _einsum_specs(equation, tensors)
    summed = [c for c in dict.fromkeys("".join(specs)) if c not in out]
    order = list(out) + summed
    sizes: dict[str, int] = {}
    aligned: list[tuple[Any, set[str]]] = []
    for spec, t in zip(specs, tensors):
        while len(set(spec)) != len(spec):  # a repeated letter: take the diagonal
            c = next(c for c in spec if spec.count(c) > 1)
            i = spec.index(c)
            j = spec.index(c, i + 1)
            t = ops.diagonal(t, 0, i, j)
            spec = spec[:i] + spec[i + 1 : j] + spec[j + 1 :] + c
        for c, size in zip(spec, t.shape):
            sizes[c] = size
        present = [c for c in order if c in spec]
        t = ops.permute(t, [spec.index(c) for c in present])
        shape = tuple(sizes[c] if c in spec else 1 for c in order)
        if tuple(t.shape) != shape:
            t = _view_or_reshape(ops, t, shape)
        aligned.append((t, set(spec)))
    # A summed letter in one operand only is summed there first.
    for k, (t, letters) in enumerate(aligned):
        others = set().union(*(l for m, (_, l) in enumerate(aligned) if m != k))
        alone = [order.index(c) for c in summed if c in letters and c not in others]
        if alone and len(aligned) > 1:
            t = ops.sum(t, alone, True)
            letters = letters - {order[d] for d in alone}
        aligned[k] = (t, letters)
    result, letters = aligned[0]
    if len(aligned) == 1:
        dims = [order.index(c) for c in summed]
        return ops.sum(result, dims, False) if dims else result
    for k, (other, other_letters) in enumerate(aligned[1:], start=1):
        later = set().union(set(), *(l for _, l in aligned[k + 1 :]))
        pair = [
            c for c in summed if c in letters and c in other_letters and c not in later
        ]
        if not pair:
            result = ops.mul(result, other)
        else:
            result = _sumproduct_pair(
                ops, result, other, order, letters, other_letters, pair
            )
        letters = (letters | other_letters) - set(pair)
    out_shape = tuple(result.shape[: len(out)])
    if tuple(result.shape) != out_shape:
        result = _view_or_reshape(ops, result, out_shape)
    return result


def _sumproduct_pair(
    ops: Any,
    a: Any,
    b: Any,
    order: list[str],
    letters_a: set[str],
    letters_b: set[str],
    pair: list[str],
) -> Any:
    """Contract `pair` of two aligned operands with one bmm; summed dims stay as 1."""
    dims = range(len(order))
    summed = [order.index(c) for c in pair]
    lo = [
        d
        for d in dims
        if d not in summed and order[d] in letters_a and order[d] not in letters_b
    ]
    ro = [
        d
        for d in dims
        if d not in summed and order[d] in letters_b and order[d] not in letters_a
    ]
    lro = [d for d in dims if d not in summed and d not in lo and d not in ro]
    shape = [max(a.shape[d], b.shape[d]) for d in dims]

    def size(ds: list[int]) -> int:
        n = 1
        for d in ds:
            n *= shape[d]
        return n

    a3 = _view_or_reshape(
        ops, ops.permute(a, lro + lo + summed + ro), (size(lro), size(lo), size(summed))
    )
    b3 = _view_or_reshape(
        ops, ops.permute(b, lro + summed + ro + lo), (size(lro), size(summed), size(ro))
    )
    product = ops.bmm(a3, b3)
    kept = lro + lo + ro
    product = _view_or_reshape(
        ops, product, tuple(shape[d] for d in kept) + (1,) * len(summed)
    )
    inverse = [0] * len(order)
    for position, d in enumerate(kept + summed):
        inverse[d] = position
    return ops.permute(product, inverse)


def _row_major(data: Any) -> bool:
    """Whether an array's memory is in row-major order: another backend's array
    has no strides, and counts as such."""
    return type(data) is not np.ndarray or data.flags.c_contiguous


def linear_by_rank(input: Tensor, weight: Tensor, bias: Tensor | None) -> Any:
    """`input @ weight.T + bias` as at::linear computes it, so the node is PyTorch's:
    addmm for a 2-D input with a bias (AddmmBackward0); with a contiguous input
    and a contiguous 1-D bias, the input flattened to 2-D, addmm, and
    a view back (ViewBackward0); with a bias otherwise, matmul then the bias added
    in place (AddBackward0); without one,
    matmul with `weight.t()` (MmBackward0, UnsafeViewBackward0, SqueezeBackward4)."""
    ops = dispatch.ops
    rows = 1
    for size in input.shape[:-1]:
        rows *= size
    if input.ndim and weight.ndim == 2 and input.shape[-1] != weight.shape[1]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
            f"{weight.shape[1]}x{weight.shape[0]})"
        )
    if bias is None:
        return matmul_by_rank(input, ops.t(weight))
    if input.ndim == 2:
        return ops.addmm(bias, input, ops.t(weight))
    if not (_row_major(input._data) and bias.ndim == 1 and _row_major(bias._data)):
        # PyTorch's general path: matmul, then the bias added in place.
        return ops.add_(matmul_by_rank(input, ops.t(weight)), bias)
    flat = ops.reshape(input, (rows, input.shape[-1]) if input.ndim else (1, 1))
    out = ops.addmm(bias, flat, ops.t(weight))
    return ops.view(out, tuple(input.shape[:-1]) + (out.shape[1],))


def bilinear_via_ops(
    input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None
) -> Any:
    """`y[..., o] = x1[..., i] W[o, i, j] x2[..., j] + b[o]`: both inputs flattened
    to rows, `x1 @ W` as one mm, a product with x2 summed over j, and a reshape
    back (ViewBackward0), then the bias (AddBackward0), as PyTorch's bilinear."""
    ops = dispatch.ops
    named = [("input1", input1), ("input2", input2), ("weight", weight)]
    if bias is not None:
        named.append(("bias", bias))
    if len({t._data.dtype for _, t in named}) > 1:
        listed = ", ".join(f"{n}: {type_meta_name(t._data.dtype)}" for n, t in named)
        raise RuntimeError(f"All tensors must have the same dtype, got {listed}")
    if input1.ndim != input2.ndim:
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {input1.ndim} and "
            f"{input2.ndim}"
        )
    for dim in range(input1.ndim - 1):
        if input1.shape[dim] != input2.shape[dim]:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {dim}: got "
                f"{input1.shape[dim]} and {input2.shape[dim]}"
            )
    for number, x in ((1, input1), (2, input2)):
        expected = weight.shape[number] if weight.ndim > number else weight.shape[-1]
        if x.shape[-1] != expected or weight.ndim != 3:
            raise RuntimeError(
                f"bilinear(): input{number} size does not match weight size: got "
                f"{x.shape[-1]} but expected {expected}"
            )
    out_features, in1, in2 = weight.shape
    if bias is not None and bias.shape[-1] != out_features:
        raise RuntimeError(
            f"bilinear(): bias size does not match weight size: got {bias.shape[-1]} "
            f"but expected {out_features}"
        )
    lead = tuple(input1.shape[:-1])
    rows = math.prod(input1.shape[:-1])  # explicit: -1 is ambiguous when empty
    x1 = ops.reshape(input1, (rows, in1))
    x2 = ops.reshape(input2, (rows, in2))
    w = ops.reshape(ops.permute(weight, (1, 0, 2)), (in1, out_features * in2))
    left = ops.reshape(ops.mm(x1, w), (rows, out_features, in2))
    out = ops.sum(ops.mul(left, ops.unsqueeze(x2, 1)), -1)
    out = ops.reshape(out, lead + (out_features,))
    return out if bias is None else ops.add(out, bias)


def reshape_by_strides(self: Tensor, shape: tuple[int, ...]) -> Any:
    """PyTorch's reshape: a view of a contiguous tensor (ViewBackward0), an alias
    with other strides when they allow one (ReshapeAliasBackward0), else a
    contiguous clone seen as `shape` (UnsafeViewBackward0 after CloneBackward0)."""
    ops = dispatch.ops
    shape = int_list_arg(shape, "reshape", "shape", 2)
    data = self._data
    if _row_major(data):
        return ops.view(self, shape)  # another backend's arrays have no strides
    if viewable(data, shape):
        shape = view_shape(data, shape)
        return ops._reshape_alias(self, shape, element_strides(data, shape))
    return ops._unsafe_view(ops.clone(self, memory_format=0), shape)


def contiguous_by_strides(self: Tensor, memory_format: Any = 0) -> Any:
    """PyTorch's contiguous: `self` when its memory is already in
    `memory_format`'s order (row-major by default), else a clone laid out so
    (CloneBackward0)."""
    if type(self._data) is not np.ndarray:  # another backend's: no strides
        return self
    if self.is_contiguous(memory_format=memory_format):
        return self
    return dispatch.ops.clone(self, memory_format=memory_format)


def _view_or_reshape(ops: Any, t: Tensor, shape: tuple[int, ...]) -> Any:
    """`view` where the strides allow it (what einsum's steps record in PyTorch,
    whose intermediates there are contiguous), else `reshape`."""
    if viewable(t._data, shape):
        return ops.view(t, shape)
    return ops.reshape(t, shape)


_PAD_OPS = {"reflect": "reflection_pad", "replicate": "replication_pad"}


def pad_by_mode(
    self: Tensor, pad: tuple[int, ...], mode: str, value: float | None
) -> Any:
    """F.pad: constant_pad_nd, _pad_circular, or the reflection or replication
    padding op of the rank the pad's length names (so the node is
    ReflectionPad2DBackward0 & co.)."""
    if mode == "constant":
        return dispatch.ops.constant_pad_nd(self, pad, 0 if value is None else value)
    if value is not None and mode in (*_PAD_OPS, "circular"):
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if mode not in (*_PAD_OPS, "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    nd = len(pad) // 2
    if len(pad) % 2 or nd not in (1, 2, 3) or self.ndim not in (nd + 1, nd + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {self.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    if mode == "circular":
        return dispatch.ops._pad_circular(self, pad)
    return getattr(dispatch.ops, f"{_PAD_OPS[mode]}{nd}d")(self, pad)


def _circular_pairs(self: Tensor, pad: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """(dim, left, right) of each padded dim, after PyTorch's checks; the pad
    lists the last dim first."""
    padded = len(pad) // 2
    kept = self.ndim - padded
    if len(pad) % 2 or kept not in (1, 2):
        raise RuntimeError(
            "Invalid padding size, expected 1 or 2 non-padded dimensions, which "
            f"would be equivalent to padding of length {(self.ndim - 1) * 2} or "
            f"{(self.ndim - 2) * 2} respectively but got {len(pad)}"
        )
    pairs = []
    for i in range(padded):
        left, right = pad[2 * (padded - i - 1)], pad[2 * (padded - i - 1) + 1]
        size = self.shape[kept + i]
        if left > size or right > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if size + left + right < 0:
            raise RuntimeError(
                "Negative padding value is resulting in an empty dimension"
            )
        pairs.append((kept + i, left, right))
    return pairs


def pad_circular_via_ops(self: Tensor, pad: tuple[int, ...]) -> Any:
    """Circular padding written into a fresh tensor, as PyTorch's: the input,
    cropped by the negative pads, copied into the middle; then, dim by dim,
    each positive pad copied from the far side of what is already written (so
    the node is CopySlices, and corners wrap in every padded dim)."""
    pairs = _circular_pairs(self, pad)
    sizes = list(self.shape)
    for dim, left, right in pairs:
        sizes[dim] += left + right
    out = self.new_empty(tuple(sizes))
    middle, source = out, self
    for dim, left, right in pairs:
        length = sizes[dim] - max(left, 0) - max(right, 0)
        middle = middle.narrow(dim, max(left, 0), length)
        source = source.narrow(dim, max(-left, 0), length)
    middle.copy_(source)
    for dim, left, right in pairs:
        end = sizes[dim] - max(right, 0)
        if left > 0:
            out.narrow(dim, 0, left).copy_(out.narrow(dim, end - left, left))
        if right > 0:
            out.narrow(dim, end, right).copy_(out.narrow(dim, max(left, 0), right))
    return out
