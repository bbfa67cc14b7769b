"""matmul by rank: the body of derivatives.yaml's `matmul` composite (at::matmul).

PyTorch has no backward node for matmul itself: `at::matmul` picks an op by the
ranks of its operands and records that op's node. This module does the same for
the cases whose node a yamlgrad op can name:

    1-D @ 1-D -> dot  (DotBackward0)
    2-D @ 1-D -> mv   (MvBackward0)
    2-D @ 2-D -> mm   (MmBackward0)

Batched shapes fold into mm/mv (N-D @ 1-D or 2-D) or broadcast into bmm, and
view back with `_unsafe_view` (UnsafeViewBackward0), as PyTorch does. `1-D @ 2-D`
is `unsqueeze(0).mm(other).squeeze_(0)` (SqueezeBackward4). `2-D @ N-D` is
`(other.mT @ input.mT).mT`, folded into one mm, with PyTorch's clones.

derivatives.yaml's `matmul` entry is a composite calling this (through
runtime/ops/composites.py), so `yg.matmul`, `Tensor.matmul`, `@` and
`yg.ops.matmul.default` all record what PyTorch records.
"""

from __future__ import annotations

from typing import Any

from yamlgrad.runtime import dispatch
from yamlgrad.runtime.errors import argument_type
from yamlgrad.runtime.autograd.tensor import Tensor

__all__ = ["matmul_by_rank"]


def matmul_by_rank(input: Tensor, other: Tensor) -> Tensor:
    """The matrix product of two tensors, by their ranks, as `torch.matmul`.

    >>> yg.matmul(yg.ones(2, 3), yg.ones(3))  # mv: grad_fn=<MvBackward0>
    tensor([3., 3.])
    """
    for position, (name, value) in enumerate((("input", input), ("other", other))):
        if not isinstance(value, Tensor):
            raise TypeError(
                argument_type("matmul", name, position + 1, "Tensor", value)
            )
    ops: Any = dispatch.ops
    dims = (input.ndim, other.ndim)
    if dims == (1, 1):
        return ops.dot(input, other)
    if dims == (2, 1):
        return ops.mv(input, other)
    if dims == (2, 2):
        return ops.mm(input, other)
    if dims == (1, 2):  # PyTorch: unsqueeze(0).mm(other).squeeze_(0)
        return ops.squeeze_(ops.mm(ops.unsqueeze(input, 0), other), 0)
    if dims[0] == 2 and dims[1] >= 3:
        return _transposed(ops, input, other)
    if dims[0] >= 3 and dims[1] in (1, 2):
        return _folded(ops, input, other)
    if dims[1] >= 3 or (dims[0] >= 3 and dims[1] >= 3):
        return _batched(ops, input, other)
    raise RuntimeError(
        "both arguments to matmul need to be at least 1D, but they are "
        f"{dims[0]}D and {dims[1]}D"
    )


def _folded(ops: Any, input: Tensor, other: Tensor) -> Tensor:
    """N-D @ 1-D or 2-D: fold the batch into rows, mm or mv, view back
    (UnsafeViewBackward0 over MmBackward0/MvBackward0, as PyTorch)."""
    batch = tuple(input.shape[:-1])
    rows = ops.reshape(input, (_count(batch), input.shape[-1]))
    if other.ndim == 1:
        return ops.OVERLOADS["_unsafe_view"]["default"](ops.mv(rows, other), batch)
    out_shape = batch + (other.shape[-1],)
    return ops.OVERLOADS["_unsafe_view"]["default"](ops.mm(rows, other), out_shape)


def _transposed(ops: Any, input: Tensor, other: Tensor) -> Tensor:
    """2-D @ N-D as PyTorch computes it: `(other.mT @ input.mT).mT`, the first
    product folded into one mm (CloneBackward0 over TransposeBackward0 on top,
    from `contiguous()`: none for an empty result, which is contiguous)."""
    unsafe_view = ops.OVERLOADS["_unsafe_view"]["default"]
    other_t = ops.contiguous(ops.transpose(other, -1, -2))
    batch = tuple(other_t.shape[:-1])
    rows = unsafe_view(other_t, (_count(batch), other_t.shape[-1]))
    product = unsafe_view(ops.mm(rows, ops.t(input)), batch + (input.shape[0],))
    return ops.contiguous(ops.transpose(product, -1, -2))


def _batched(ops: Any, input: Tensor, other: Tensor) -> Tensor:
    """Batched shapes: broadcast the batch dims, bmm on 3-D, view back
    (UnsafeViewBackward0 over BmmBackward0)."""
    a = ops.reshape(input, (1,) + tuple(input.shape)) if input.ndim == 1 else input
    b = ops.reshape(other, tuple(other.shape) + (1,)) if other.ndim == 1 else other
    batch = _broadcast_batch(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    n, k, m = a.shape[-2], a.shape[-1], b.shape[-1]
    count = 1
    for size in batch:
        count *= size
    a3 = ops.reshape(ops.expand(a, batch + (n, k)), (count, n, k))
    b3 = ops.reshape(ops.expand(b, batch + (k, m)), (count, k, m))
    out_shape = (
        batch + ((n,) if input.ndim > 1 else ()) + ((m,) if other.ndim > 1 else ())
    )
    return ops.OVERLOADS["_unsafe_view"]["default"](ops.bmm(a3, b3), out_shape)


def _broadcast_batch(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {len(out)}"
            )
        out.append(y if x == 1 else x)  # 1 broadcasts to the other size, 0 too
    return tuple(reversed(out))


def _count(batch: tuple[int, ...]) -> int:
    """The rows a batch folds into (explicit: -1 is ambiguous for an empty one)."""
    n = 1
    for size in batch:
        n *= size
    return n
