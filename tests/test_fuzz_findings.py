"""Calls tests/test_fuzz_ops.py found yamlgrad answering differently from torch,
each compared with torch directly: the same shapes, values and grad_fn names, or
the same error text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg

torch = pytest.importorskip("torch")


def _outcome(f: Callable[[Any], Any], lib: Any) -> Any:
    """Shapes, values and grad_fn names of f(lib)'s outputs, or the error."""
    try:
        out = f(lib)
    except (RuntimeError, IndexError, ValueError, TypeError) as error:
        # PyTorch's rewrapped errors carry the C++ backtrace of the first one
        return (type(error).__name__, str(error).split("\nException raised from")[0])
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    return [
        (
            tuple(o.shape),
            np.round(o.detach().numpy().astype(float), 12).tolist(),
            type(o.grad_fn).__name__ if o.grad_fn is not None else None,
        )
        for o in outs
    ]


def _x(lib: Any, *shape: int) -> Any:
    data = np.arange(float(np.prod(shape))).reshape(shape)
    return lib.tensor(data, requires_grad=True) * 1


def _aten(lib: Any) -> Any:
    """The op namespace that reaches an overload directly."""
    return torch.ops.aten if lib is torch else yg.ops


CALLS: dict[str, Callable[[Any], Any]] = {
    # repeat_interleave's checks, and a one-element or 0-d `repeats`
    "repeat_interleave sizes": lambda lib: _x(lib, 3, 4).repeat_interleave(
        lib.tensor([1, 2]), dim=0
    ),
    "repeat_interleave flat sizes": lambda lib: _x(lib, 3, 4).repeat_interleave(
        lib.tensor([1, 2])
    ),
    "repeat_interleave 2-d repeats": lambda lib: _x(lib, 3, 4).repeat_interleave(
        lib.tensor([[1, 2]]), dim=0
    ),
    "repeat_interleave negative": lambda lib: _x(lib, 3, 4).repeat_interleave(
        lib.tensor([1, -2, 1]), dim=0
    ),
    "repeat_interleave [n]": lambda lib: _x(lib, 3, 4).repeat_interleave(
        lib.tensor([2]), dim=0
    ),
    "repeat_interleave 0-d": lambda lib: _x(lib, 3, 4).repeat_interleave(
        lib.tensor(2), dim=1
    ),
    "repeat_interleave empty": lambda lib: _x(lib, 0, 3).repeat_interleave(
        lib.tensor([1, 2, 3]), dim=-2
    ),
    # celu divides by alpha: PyTorch refuses 0 (in place too, and on empty input)
    "celu alpha 0": lambda lib: lib.celu(_x(lib, 3), 0.0),
    "celu_ alpha 0": lambda lib: lib.nn.functional.celu(_x(lib, 3), 0.0, inplace=True),
    "celu alpha 0 of an empty tensor": lambda lib: lib.celu(_x(lib, 4, 0), 0.0),
    "celu alpha 2": lambda lib: lib.celu(_x(lib, 3) - 1, 2.0),
    # tensordot: size-1 contracted dims broadcast (summed first); dtype before dims
    "tensordot size-1 dim of self": lambda lib: lib.tensordot(
        _x(lib, 3, 1), _x(lib, 4, 5), dims=([1], [0])
    ),
    "tensordot size-1 dim of other": lambda lib: lib.tensordot(
        _x(lib, 3, 4), _x(lib, 1, 5), dims=([1], [0])
    ),
    "tensordot dim out of range": lambda lib: lib.tensordot(
        _x(lib, 3, 4), _x(lib, 4, 5), dims=([5], [0])
    ),
    "tensordot repeated dim": lambda lib: lib.tensordot(
        _x(lib, 3, 4), _x(lib, 4, 4), dims=([1, 1], [0, 1])
    ),
    "tensordot dim of a 0-d tensor": lambda lib: lib.tensordot(
        _x(lib), _x(lib, 4, 5), dims=([0], [0])
    ),
    "tensordot two dtypes": lambda lib: lib.tensordot(
        _x(lib, 3, 4).float(), _x(lib, 4, 5), dims=([1], [0])
    ),
    # unflatten rewords infer_size's "is invalid" and wraps its other errors
    "unflatten a 0-d tensor": lambda lib: _x(lib).unflatten(0, (3, 2)),
    "unflatten two -1": lambda lib: _x(lib, 6).unflatten(0, (-1, -1)),
    "unflatten -1 that does not divide": lambda lib: _x(lib, 6).unflatten(0, (-1, 4)),
    "unflatten -1 of an empty dim": lambda lib: _x(lib, 0).unflatten(0, (-1, 0)),
    "unflatten negative size": lambda lib: _x(lib, 6).unflatten(0, (2, -2)),
    "unflatten 0 and -1": lambda lib: _x(lib, 6).unflatten(0, (0, -1)),
    "unflatten inferred": lambda lib: _x(lib, 2, 6).unflatten(1, (-1, 3)),
    "view negative size": lambda lib: _x(lib, 6).view(2, -2),
    "reshape negative sizes": lambda lib: _x(lib, 6).reshape(-2, -3),
    # index_add's out-of-range errors: PyTorch's CPU kernel scatters along the
    # first or last dim of a matrix when alpha is 1, else loops over the indices
    "index_add dim 0 alpha 1": lambda lib: _x(lib, 3, 4).index_add(
        0, lib.tensor([0, 9]), _x(lib, 2, 4)
    ),
    "index_add dim 0 alpha 2": lambda lib: _x(lib, 3, 4).index_add(
        0, lib.tensor([0, 9]), _x(lib, 2, 4), alpha=2
    ),
    "index_add middle dim": lambda lib: _x(lib, 2, 3, 4).index_add(
        1, lib.tensor([0, 9]), _x(lib, 2, 2, 4)
    ),
    "index_add last dim negative": lambda lib: _x(lib, 3, 4).index_add(
        1, lib.tensor([-1]), _x(lib, 3, 1)
    ),
    "index_add vector": lambda lib: _x(lib, 3).index_add(
        0, lib.tensor([0, 9]), _x(lib, 2)
    ),
    "index_add empty vector": lambda lib: _x(lib, 0).index_add(
        0, lib.tensor([0]), _x(lib, 1)
    ),
    "index_add 0-d": lambda lib: _x(lib).index_add(
        0, lib.tensor([0]), _x(lib), alpha=2
    ),
    "index_add 0-d index 1": lambda lib: _x(lib).index_add(0, lib.tensor([1]), _x(lib)),
    "index_add 0-d two indices": lambda lib: _x(lib).index_add(
        0, lib.tensor([0, 0]), _x(lib)
    ),
    # norm is a Python function in PyTorch: p defaults to "fro" (the 2-norm)
    "norm over a dim without p": lambda lib: _x(lib, 2, 3).norm(dim=1),
    "norm of everything": lambda lib: lib.norm(_x(lib, 2, 3)),
    "norm fro over two dims": lambda lib: _x(lib, 2, 3).norm("fro", (0, 1)),
    "norm p None": lambda lib: _x(lib, 2, 3).norm(None, 1, True),
    "norm inf over a dim": lambda lib: _x(lib, 2, 3).norm(float("inf"), dim=0),
    "vector_norm narrowing dtype": lambda lib: lib.linalg.vector_norm(
        _x(lib, 3), 2, dtype=lib.float32
    ),
    "vector_norm widening dtype": lambda lib: lib.linalg.vector_norm(
        _x(lib, 3).float(), 2, dtype=lib.float64
    ),
    "vector_norm of integers": lambda lib: lib.linalg.vector_norm(lib.arange(3)),
    # layer norm: weight and bias shaped as normalized_shape, which is not empty
    "layer_norm weight shape": lambda lib: lib.nn.functional.layer_norm(
        _x(lib, 2, 4), (4,), weight=_x(lib, 3)
    ),
    "layer_norm bias shape": lambda lib: lib.nn.functional.layer_norm(
        _x(lib, 2, 4), (4,), bias=_x(lib, 1, 4)
    ),
    "layer_norm empty normalized_shape": lambda lib: lib.nn.functional.layer_norm(
        _x(lib, 2, 4), ()
    ),
    # take_along_dim broadcasts self and indices except along dim (and expands
    # even when nothing changes: ExpandBackward0 under GatherBackward0)
    "take_along_dim broadcast indices": lambda lib: lib.take_along_dim(
        _x(lib, 4, 4), lib.zeros((1, 2), dtype=lib.int64), 1
    ),
    "take_along_dim broadcast self": lambda lib: lib.take_along_dim(
        _x(lib, 1, 4), lib.zeros((3, 2), dtype=lib.int64), 1
    ),
    "take_along_dim sizes that do not broadcast": lambda lib: lib.take_along_dim(
        _x(lib, 4, 4), lib.zeros((3, 2), dtype=lib.int64), 1
    ),
    "take_along_dim ranks": lambda lib: lib.take_along_dim(
        _x(lib, 4, 4), lib.zeros((2,), dtype=lib.int64), 1
    ),
    "take_along_dim int32 indices": lambda lib: lib.take_along_dim(
        _x(lib, 4, 4), lib.zeros((4, 2), dtype=lib.int32), 1
    ),
    # index_add checks in PyTorch's order: the dim first, then the index, the
    # dtypes and the sizes; int32 indices never take the scatter path
    "index_add dim before dtypes": lambda lib: _x(lib, 3, 4).index_add(
        -3, lib.tensor([0]), _x(lib, 1, 4).float()
    ),
    "index_add 2-d index": lambda lib: _x(lib, 3, 4).index_add(
        0, lib.tensor([[0]]), _x(lib, 1, 4)
    ),
    "index_add dim beyond the source": lambda lib: _x(lib, 3, 4).index_add(
        1, lib.tensor([0]), _x(lib, 3)
    ),
    "index_add 0-d source into a vector": lambda lib: _x(lib, 3).index_add(
        0, lib.tensor([1]), _x(lib)
    ),
    "index_add int32 out of range": lambda lib: _x(lib, 3, 4).index_add(
        0, lib.tensor([0, 9], dtype=lib.int32), _x(lib, 2, 4)
    ),
    # BCE checks input, then target, element by element (nan is outside too)
    "BCE target above 1": lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.tensor([0.3, 0.4, 0.5]), lib.tensor([0.5, 2.0, 0.1])
    ),
    "BCE nan input": lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.tensor([float("nan"), 0.4, 0.5]), lib.tensor([0.5, 0.5, 0.1])
    ),
    "BCE bad target before a bad input": lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.tensor([0.3, 2.0, 0.5]), lib.tensor([-1.0, 0.4, 0.5])
    ),
    "BCE sizes that squeeze apart": lambda lib: _aten(lib).binary_cross_entropy.default(
        lib.full((3, 4), 0.5), lib.full((3, 1), 0.25), None, 0
    ),
    "BCE sizes that squeeze together": lambda lib: _aten(
        lib
    ).binary_cross_entropy.default(
        lib.full((3, 4), 0.5), lib.full((1, 4), 0.25), None, 0
    ),
    # diag_embed wraps its dims against the result's rank, distinct
    "diag_embed dim out of range": lambda lib: lib.diag_embed(_x(lib, 3, 0), -4, 0, 3),
    "diag_embed identical dims": lambda lib: lib.diag_embed(_x(lib, 2, 3), 0, 2, 2),
    "diag_embed 0-d": lambda lib: lib.diag_embed(_x(lib), 0, 0, 1),
    "diag_embed negative dims": lambda lib: lib.diag_embed(_x(lib, 2, 3), 1, -1, 0),
    # a 0-d tensor transposes dims 0 and -1 into a view of itself
    "transpose 0-d": lambda lib: _x(lib).transpose(0, -1),
    "transpose 0-d out of range": lambda lib: _x(lib).transpose(1, 0),
    # slices: Python indexing's ValueErrors, aten::slice's RuntimeError
    "getitem negative step": lambda lib: _x(lib, 5, 3)[::-1],
    "getitem zero step": lambda lib: _x(lib, 5, 3)[::0],
    "setitem negative step": lambda lib: _x(lib, 5, 3).__setitem__(
        slice(None, None, -1), 2.0
    ),
    "aten slice negative step": lambda lib: _aten(lib).slice.Tensor(
        _x(lib, 5, 3), 0, 0, 2, -1
    ),
    "aten slice of a 0-d tensor": lambda lib: _aten(lib).slice.Tensor(
        _x(lib), 0, 0, 2, 1
    ),
    # split, chunk, narrow
    "split 0 of a non-empty dim": lambda lib: _x(lib, 5, 3).split(0),
    "split 0 of an empty dim": lambda lib: _x(lib, 0, 5).split(0),
    "split negative": lambda lib: _x(lib, 5).split(-1),
    "split 0-d": lambda lib: _x(lib).split(1),
    "chunk 0-d": lambda lib: _x(lib).chunk(2),
    "chunk 0 chunks": lambda lib: _x(lib, 5, 3).chunk(0),
    "chunk bad dim": lambda lib: _x(lib, 5, 3).chunk(2, 5),
    "narrow start too large": lambda lib: _x(lib, 5, 3).narrow(0, 6, 0),
    "narrow start too small": lambda lib: _x(lib, 5, 3).narrow(0, -6, 1),
    "narrow past the end": lambda lib: _x(lib, 5, 3).narrow(0, 2, 4),
    "narrow negative length": lambda lib: _x(lib, 5, 3).narrow(0, 2, -1),
    "narrow 0-d": lambda lib: _x(lib).narrow(0, 0, 0),
    "narrow negative start": lambda lib: _x(lib, 5, 3).narrow(0, -2, 2),
    # view needs compatible strides; reshape and contiguous copy when they must
    "view of a transpose": lambda lib: _x(lib, 4, 3, 2).permute(2, 1, 0).view(6, 4),
    "reshape of a transpose": lambda lib: _x(lib, 4, 3, 2)
    .permute(2, 1, 0)
    .reshape(6, 4),
    "reshape of a contiguous tensor": lambda lib: _x(lib, 4, 3, 2).reshape(6, 4),
    "contiguous of a transpose": lambda lib: _x(lib, 4, 3).t().contiguous(),
    "contiguous of a contiguous tensor": lambda lib: _x(lib, 4, 3).contiguous(),
    "reshape of a strided view": lambda lib: _x(lib, 3, 3, 8)[..., ::2].reshape(9, 4),
    "flatten of a strided view": lambda lib: _x(lib, 3, 3, 8)[..., ::2].flatten(),
    "flatten of a transpose": lambda lib: _x(lib, 4, 3, 2).permute(2, 1, 0).flatten(),
    "reshape of a transpose, viewable": lambda lib: _x(lib, 3, 3, 8)
    .transpose(0, 1)
    .reshape(3, 3, 2, 4),
    "reshape of a transposed matrix": lambda lib: _x(lib, 4, 3).t().reshape(3, 2, 2),
    # linear with a bias on a non-contiguous input: matmul, then add_
    "linear of a transposed input": lambda lib: lib.nn.functional.linear(
        _x(lib, 4, 3, 2).transpose(0, 2), _x(lib, 5, 4), _x(lib, 5)
    ),
    "linear of a 2-d bias": lambda lib: lib.nn.functional.linear(
        _x(lib, 2, 3, 4, 4), _x(lib, 5, 4), _x(lib, 4, 5)
    ),
    "linear of a 3-d input, 2-d bias": lambda lib: lib.nn.functional.linear(
        _x(lib, 2, 3, 4), _x(lib, 5, 4), _x(lib, 3, 5)
    ),
    "linear of a strided bias": lambda lib: lib.nn.functional.linear(
        _x(lib, 2, 3, 4), _x(lib, 5, 4), _x(lib, 10)[::2]
    ),
    "flip of a 0-d tensor": lambda lib: _x(lib).flip(0),
    "flip out of range": lambda lib: _x(lib).flip(1),
    "flip repeated dims": lambda lib: _x(lib, 2, 3).flip(0, 0),
    "flip negative dims": lambda lib: _x(lib, 2, 3).flip(-1, 0),
    "tril of a vector": lambda lib: _x(lib, 3).tril(),
    "triu of a 0-d tensor": lambda lib: _x(lib).triu(),
    "index_add into an empty tensor": lambda lib: _x(lib, 0, 3).index_add(
        0, lib.tensor([0, 3, 1]), _x(lib, 3, 3)
    ),
    "index_add out of bounds": lambda lib: _x(lib, 2, 3).index_add(
        0, lib.tensor([0, 3, 1]), _x(lib, 3, 3)
    ),
    "index_select from an empty dim": lambda lib: _x(lib, 0, 3).index_select(
        0, lib.tensor([0])
    ),
    "index_select out of range": lambda lib: _x(lib, 2, 3).index_select(
        0, lib.tensor([5])
    ),
    "index_select negative": lambda lib: _x(lib, 2, 3).index_select(
        0, lib.tensor([-1])
    ),
    "index_select float index": lambda lib: _x(lib, 2, 3).index_select(
        0, lib.tensor([0.5])
    ),
    "_softmax half_to_float": lambda lib: (
        lib.ops.aten._softmax(_x(lib, 3), 0, True)
        if lib is torch
        else yg.ops._softmax.default(_x(lib, 3), 0, True)
    ),
    "_log_softmax half_to_float": lambda lib: (
        lib.ops.aten._log_softmax(_x(lib, 3), 0, True)
        if lib is torch
        else yg.ops._log_softmax.default(_x(lib, 3), 0, True)
    ),
    "flatten of one dim": lambda lib: _x(lib, 2, 3).flatten(1, 1),
    "flatten of a 0-d tensor": lambda lib: _x(lib).flatten(),
    "flatten of a 0-d tensor, dim 1": lambda lib: _x(lib).flatten(1),
    "diagonal of a 0-d tensor": lambda lib: _x(lib).diagonal(),
    "diagonal of a vector": lambda lib: _x(lib, 3).diagonal(),
    "diagonal identical dims": lambda lib: _x(lib, 2, 3).diagonal(0, 0, 0),
    "diagonal dim out of range": lambda lib: _x(lib, 2, 3).diagonal(0, 0, 2),
    "diag of a 0-d tensor": lambda lib: _x(lib).diag(),
    "diag of a 3-d tensor": lambda lib: _x(lib, 2, 2, 2).diag(),
    "huber_loss, reduction -1": lambda lib: (
        lib.ops.aten.huber_loss(_x(lib, 3, 4), _x(lib, 3, 4) * 0.5, -1, 1.0)
        if lib is torch
        else yg.ops.huber_loss.default(_x(lib, 3, 4), _x(lib, 3, 4) * 0.5, -1, 1.0)
    ),
    "nll_loss, reduction 3": lambda lib: (
        lib.ops.aten.nll_loss(_x(lib, 3, 4), lib.tensor([0, 1, 2]), None, 3, -100)
        if lib is torch
        else yg.ops.nll_loss.default(
            _x(lib, 3, 4), lib.tensor([0, 1, 2]), None, 3, -100
        )
    ),
    "lerp of float32 with a Scalar weight": lambda lib: lib.lerp(
        _x(lib, 4, 3).float(), _x(lib, 4, 3).float() * 2, 0.3
    ),
    "lerp of float32 with a large Scalar weight": lambda lib: lib.lerp(
        _x(lib, 4, 3).float(), _x(lib, 4, 3).float() * 2, 0.75
    ),
    "embedding of an empty weight": lambda lib: lib.nn.functional.embedding(
        lib.tensor([0, 1]), _x(lib, 0, 3)
    ),
    "group_norm, wrong numel": lambda lib: (
        lib.ops.aten.native_group_norm(_x(lib, 8), None, None, 2, 4, 3, 2, 1e-5)
        if lib is torch
        else yg.ops.native_group_norm.default(_x(lib, 8), None, None, 2, 4, 3, 2, 1e-5)
    ),
    "group_norm, groups not dividing": lambda lib: lib.nn.functional.group_norm(
        _x(lib, 2, 4, 3), 3
    ),
    "group_norm, short weight": lambda lib: lib.nn.functional.group_norm(
        _x(lib, 2, 4, 3), 2, _x(lib, 3)
    ),
    "pad, crop past an empty dim": lambda lib: lib.constant_pad_nd(_x(lib, 0), (-3, 1)),
    "pad, crop past the end": lambda lib: lib.constant_pad_nd(_x(lib, 4), (1, -5)),
    "pad, crop to nothing": lambda lib: lib.constant_pad_nd(_x(lib, 4), (-2, -2)),
    "pad, crop one dim to 0, pad another": lambda lib: lib.constant_pad_nd(
        _x(lib, 2, 3), (1, 0, -2, 0)
    ),
    "repeat_interleave by a negative int": lambda lib: _x(lib, 3, 0).repeat_interleave(
        -1, dim=1
    ),
    "repeat_interleave by a negative int, bad dim": lambda lib: _x(
        lib, 3
    ).repeat_interleave(-1, dim=5),
    "matmul 2-d by an empty batch": lambda lib: lib.matmul(
        _x(lib, 3, 4), _x(lib, 0, 4, 5)
    ),
    "matmul broadcasting an empty batch dim": lambda lib: lib.matmul(
        _x(lib, 0, 1, 3, 4), _x(lib, 3, 4, 2)
    ),
    "matmul 2-d of no columns by 3-d": lambda lib: lib.matmul(
        _x(lib, 3, 0), _x(lib, 2, 0, 5)
    ),
    "view -1 of an empty tensor, ambiguous": lambda lib: _x(lib, 2, 0).view(-1, 0),
    "view -1 of an empty tensor": lambda lib: _x(lib, 2, 0).view(-1, 5),
    "view -1 with a 0 size": lambda lib: _x(lib, 2, 3).view(-1, 0),
    "bilinear of empty batches": lambda lib: lib.nn.functional.bilinear(
        _x(lib, 0, 3), _x(lib, 0, 4), _x(lib, 2, 3, 4)
    ),
    "index_select out of range along dim 1": lambda lib: _x(lib, 2, 3).index_select(
        1, lib.tensor([3])
    ),
    "index_select out of range, empty": lambda lib: _x(lib, 3, 0).index_select(
        0, lib.tensor([3])
    ),
    "index_select negative along dim 1": lambda lib: _x(lib, 0, 3).index_select(
        1, lib.tensor([-1])
    ),
    "smooth_l1_loss, negative beta": lambda lib: lib.nn.functional.smooth_l1_loss(
        _x(lib, 3), _x(lib, 3), beta=-1.5
    ),
    "huber_loss, zero delta": lambda lib: lib.nn.functional.huber_loss(
        _x(lib, 3), _x(lib, 3), delta=0.0
    ),
    # movedim: a 0-d tensor is aliased; repeated dims are refused
    "movedim of a 0-d tensor": lambda lib: _x(lib).movedim(0, -1),
    "movedim out of range on a 0-d tensor": lambda lib: _x(lib).movedim(1, 0),
    "movedim repeated source": lambda lib: _x(lib, 2, 3).movedim([0, 0], [0, 1]),
    "movedim repeated destination": lambda lib: _x(lib, 2, 3).movedim([0, 1], [1, 1]),
    # an in-place view op on a view: set_history, no CopySlices
    "squeeze_ of a view": lambda lib: _x(lib, 3, 1, 3)[1:].squeeze_(),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_call_answers_as_torch(name: str) -> None:
    assert _outcome(CALLS[name], yg) == _outcome(CALLS[name], torch)


@pytest.mark.parametrize(
    "grad_shape, sizes, offset, dim1, dim2",
    [
        ((3,), (3, 4), 0, 0, 1),
        ((3,), (1, 4), -3, 2, 1),  # a dim out of range of the input's sizes
        ((3,), (3, 4), 0, -3, 1),
        ((3,), (3, 4), 0, 1, 1),  # identical dims
        ((2,), (3, 4), 0, 0, 1),  # copy_'s broadcast texts
        ((4, 1), (3, 4), 0, 0, 1),
        ((1,), (3, 4), 0, 0, 1),
        ((3,), (3, -1), 0, 0, 1),
        ((2, 0), (2, 0, 4), 0, 1, 2),
    ],
)
def test_diagonal_backward_checks_as_torch(
    grad_shape: tuple[int, ...],
    sizes: tuple[int, ...],
    offset: int,
    dim1: int,
    dim2: int,
) -> None:
    """The op that diagonal's backward records, called directly (the fuzzer's
    route into it): diagonal's checks on the zeros, then copy_'s."""
    from yamlgrad.runtime import dispatch

    grad = np.arange(float(np.prod(grad_shape))).reshape(grad_shape)
    calls = {
        "yamlgrad": lambda: dispatch.ops.diagonal_backward(
            yg.tensor(grad), sizes, offset, dim1, dim2
        ),
        "torch": lambda: torch.ops.aten.diagonal_backward(
            torch.tensor(grad), sizes, offset, dim1, dim2
        ),
    }
    assert _outcome(lambda _: calls["yamlgrad"](), yg) == _outcome(
        lambda _: calls["torch"](), torch
    )


LAYOUT_CALLS: dict[str, Callable[[Any], Any]] = {
    "cumsum": lambda lib, t: lib.cumsum(t, 0),
    "softmax": lambda lib, t: lib.softmax(t, 1),
    "sum over a dim": lambda lib, t: t.sum(1),
    "mean over a dim": lambda lib, t: t.mean(0),
    "amax": lambda lib, t: t.amax(1),
    "cat": lambda lib, t: lib.cat([t, t], 0),
    "stack": lambda lib, t: lib.stack([t, t], 1),
    "roll": lambda lib, t: lib.roll(t, 1, 0),
    "tril": lambda lib, t: lib.tril(t),
    "masked_fill": lambda lib, t: t.masked_fill(t > 5, 0.0),
    "layer_norm": lambda lib, t: lib.nn.functional.layer_norm(t, (4,)),
    "flip keeps the layout": lambda lib, t: lib.flip(t, [0]),
    "exp keeps the layout": lambda lib, t: lib.exp(t),
    "inverse is column-major": lambda lib, t: lib.linalg.inv(
        t[:, :, :3] + 10 * lib.eye(3, dtype=t.dtype)
    ),
}


@pytest.mark.parametrize("name", sorted(LAYOUT_CALLS))
def test_result_layout_as_torch(name: str) -> None:
    """A result of a transposed input is contiguous exactly when PyTorch's is:
    `view` then works in both or neither, and reshape records the same node."""
    outcomes = []
    for lib in (yg, torch):
        base = lib.tensor(np.arange(24.0).reshape(4, 3, 2), requires_grad=True)
        result = LAYOUT_CALLS[name](lib, base.permute(2, 1, 0))
        reshaped = result.reshape(-1)
        try:
            result.view(-1)
            view = "view ok"
        except RuntimeError as error:
            view = str(error)
        outcomes.append((view, type(reshaped.grad_fn).__name__))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("needs_grad", ["input", "weight", "bias"])
def test_convolution_backward_refuses_output_padding_on_a_plain_convolution(
    needs_grad: str,
) -> None:
    """The forward ignores it; PyTorch's convolution_backward refuses it."""
    messages = []
    for lib in (yg, torch):
        args = {
            "input": lib.tensor(np.ones((1, 2, 5, 5))),
            "weight": lib.tensor(np.ones((3, 2, 2, 2))),
            "bias": lib.tensor(np.ones(3)),
        }
        args[needs_grad].requires_grad_()
        out = _aten(lib).convolution.default(
            *args.values(), [1, 1], [0, 0], [1, 1], False, [1, 0], 1
        )
        with pytest.raises(RuntimeError) as error:
            out.sum().backward()
        messages.append(str(error.value).split("\nException raised from")[0])
    assert messages[0] == messages[1]


def test_take_along_dim_expands_even_when_nothing_changes() -> None:
    names = []
    for lib in (yg, torch):
        x = lib.tensor(np.ones((4, 4)), requires_grad=True)
        out = lib.take_along_dim(x, lib.zeros((4, 2), dtype=lib.int64), 1)
        node = out.grad_fn
        names.append((node.name(), node.next_functions[0][0].name()))
    assert names[0] == names[1] == ("GatherBackward0", "ExpandBackward0")


@pytest.mark.parametrize("lib_name", ["yamlgrad", "torch"])
def test_squeeze_of_a_view_backpropagates_into_the_base(lib_name: str) -> None:
    lib = yg if lib_name == "yamlgrad" else torch
    leaf = lib.tensor(np.ones((3, 1, 3)), requires_grad=True)
    view = leaf.clone()[1:]
    view.squeeze_()
    (view * lib.tensor(np.arange(6.0).reshape(2, 3))).sum().backward()
    want = np.concatenate([np.zeros((1, 3)), np.arange(6.0).reshape(2, 3)])
    np.testing.assert_array_equal(leaf.grad.numpy().reshape(3, 3), want)


def test_masked_select_saves_its_input_as_torch() -> None:
    """Changing masked_select's input in place fails its backward, in both."""
    messages = []
    for lib in (yg, torch):
        x = lib.tensor(np.ones((2, 3)), requires_grad=True) * 1
        y = x.masked_select(lib.tensor(np.eye(2, 3, dtype=bool)))
        x.mul_(2)
        with pytest.raises(RuntimeError) as error:
            y.sum().backward()
        messages.append(str(error.value).split(":")[0])
    assert messages[0] == messages[1]


@pytest.mark.parametrize(
    "name",
    ["relu", "hardtanh", "hardswish", "hardsigmoid", "relu6", "trace", "max", "min"],
)
def test_an_inf_gradient_outside_the_active_region_gives_zero(name: str) -> None:
    """PyTorch's masked backward kernels select, they do not multiply by 0/1: an
    infinite (or nan) output gradient where the input is inactive gives 0, not nan."""
    grads = []
    for lib, F in ((yg, yg.nn.functional), (torch, torch.nn.functional)):
        x = lib.tensor([-4.0, -3.0, -0.5, 0.0, 3.0, 4.0, 7.0], requires_grad=True)
        if name == "trace":
            lib.trace(x.reshape(1, 7)).backward(lib.tensor(float("inf")))
        elif name in ("max", "min"):  # of the whole tensor: the extreme alone
            getattr(lib, name)(x).backward(lib.tensor(float("nan")))
        else:
            getattr(F, name)(x).backward(lib.tensor([float("inf")] * 7))
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


@pytest.mark.parametrize(
    "name", ["mse_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy"]
)
def test_a_mean_loss_of_broadcast_operands_as_torch(name: str) -> None:
    """A [4, 3] input against a 0-d target: PyTorch's forward averages over 12
    elements, and its backward divides each operand's gradient by that operand's
    own element count (the target's formula is the input's, arguments swapped)."""
    grads = []
    for lib in (yg, torch):
        x = lib.tensor(np.linspace(0.1, 0.9, 12).reshape(4, 3), requires_grad=True)
        t = lib.tensor(0.4, dtype=lib.float64, requires_grad=True)
        args = (x, t, None, 1) if name == "binary_cross_entropy" else (x, t, 1)
        loss = getattr(torch.ops.aten if lib is torch else yg.ops, name)
        loss = loss(*args) if lib is torch else loss.default(*args)
        wrt = [x, t]
        grads.append([g.detach().numpy() for g in lib.autograd.grad(loss, wrt)])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
