"""Shape and indexing ops: what the YAML samples cannot express.

Basic indexing (`x[...]`) against torch: values, gradients, the node recorded.

Repeated indices accumulate in backward (index, index_select, gather,
scatter_add), bool masks, `x[...]` with tensors, lists and masks mixed with ints,
slices, None and `...` (node chains and gradients vs torch), `contiguous`, and
`yg.nn.functional.pad`. Then what the op fuzzer found: view, reshape, flatten,
unflatten, split, chunk, narrow, flip, movedim, diagonal and padding calls answered
as torch does, and results laid out (contiguous or not) as PyTorch's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from support import aten_namespace, call_outcome, counting_input


def _chain(t: Any) -> list[str]:
    """The node names from `t` back to the leaf, following the first edge."""
    names = []
    fn = t.grad_fn
    while fn is not None and type(fn).__name__ != "AccumulateGrad":
        names.append(type(fn).__name__)
        nexts = [f for f, _ in fn.next_functions if f is not None]
        fn = nexts[0] if nexts else None
    return names


def test_repeated_indices_accumulate() -> None:
    x = yg.tensor(np.arange(4.0), requires_grad=True)
    x[[1, 1, 3, 1]].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 3.0, 0.0, 1.0])


def test_repeated_indices_accumulate_in_index_select_and_gather() -> None:
    x = yg.tensor(np.ones((2, 3)), requires_grad=True)
    index = yg.tensor(np.array([2, 2, 0]))
    x.index_select(1, index).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 0, 2], [1, 0, 2]])
    y = yg.tensor(np.ones((2, 3)), requires_grad=True)
    y.gather(1, yg.tensor(np.array([[0, 0], [2, 2]]))).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [[2, 0, 0], [0, 0, 2]])


def test_scatter_add_adds_repeated_positions() -> None:
    out = yg.scatter_add(
        yg.zeros(3), 0, yg.tensor(np.array([0, 0, 2])), yg.tensor([1.0, 2.0, 3.0])
    )
    np.testing.assert_array_equal(out.numpy(), [3.0, 0.0, 3.0])


def test_bool_mask_index() -> None:
    data = np.array([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]])
    x = yg.tensor(data, requires_grad=True)
    out = x[x > 0]
    assert type(out.grad_fn).__name__ == "IndexBackward0"
    np.testing.assert_array_equal(out.detach().numpy(), [1.0, 3.0, 5.0])
    out.backward(yg.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 0, 2], [0, 3, 0]])


def test_index_double_backward_is_recorded() -> None:
    x = yg.tensor(np.arange(3.0), requires_grad=True)
    y = (x[[0, 0, 2]] ** 2).sum()
    (g,) = yg.autograd.grad(y, x, create_graph=True)
    np.testing.assert_array_equal(g.detach().numpy(), [0.0, 0.0, 4.0])
    (h,) = yg.autograd.grad(g.sum(), x)
    np.testing.assert_array_equal(h.numpy(), [4.0, 0.0, 2.0])


def test_index_rejects_float_indices() -> None:
    x = yg.tensor([1.0, 2.0])
    with pytest.raises(IndexError):
        x[yg.tensor([0.0])]


MIXES: list[Callable[[Any, Callable[[Any], Any]], Any]] = [
    lambda t, T: t[T([0, 1, 0])],
    lambda t, T: t[[1, 0]],
    lambda t, T: t[0, T([2, 0])],
    lambda t, T: t[:, [0, 2, 2]],
    lambda t, T: t[1:, [1, 1]],
    lambda t, T: t[[0, 1], :, [3, 3]],
    lambda t, T: t[:, [[0], [1]], [1, 2]],
    lambda t, T: t[..., [0, 0]],
    lambda t, T: t[None, [1]],
    lambda t, T: t[..., None],
    lambda t, T: t[T([[True, False, True], [False, True, True]])],
    lambda t, T: t[1, T([True, False, True])],
    lambda t, T: t[T([1]), 2, ::2],
]


@pytest.mark.parametrize("index", MIXES, ids=[str(i) for i in range(len(MIXES))])
def test_index_mixes_match_torch(index: Callable[..., Any]) -> None:
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(0).standard_normal((2, 3, 4))
    x = yg.tensor(data, requires_grad=True)
    t = torch.tensor(data, requires_grad=True)
    out = index(x, lambda v: yg.tensor(np.array(v)))
    ref = index(t, lambda v: torch.tensor(v))
    assert _chain(out) == _chain(ref)
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    cotangent = np.random.default_rng(1).standard_normal(tuple(ref.shape))
    out.backward(yg.tensor(cotangent))
    ref.backward(torch.tensor(cotangent))
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_contiguous_returns_self() -> None:
    x = yg.tensor([1.0, 2.0], requires_grad=True)
    assert x.contiguous() is x


def test_nn_functional_pad_is_constant_pad_nd() -> None:
    x = yg.tensor(np.ones((2, 2)), requires_grad=True)
    out = yg.nn.functional.pad(x, (1, 0), value=3.0)
    assert type(out.grad_fn).__name__ == "ConstantPadNdBackward0"
    np.testing.assert_array_equal(out.detach().numpy(), [[3, 1, 1], [3, 1, 1]])
    wrapped = yg.nn.functional.pad(
        yg.tensor([[1.0, 2.0], [3.0, 4.0]]), (1, 0), "circular"
    )
    np.testing.assert_array_equal(wrapped.numpy(), [[2, 1, 2], [4, 3, 4]])


def test_composites_record_the_nodes_torch_records() -> None:
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(2).standard_normal((2, 3))
    x = yg.tensor(data, requires_grad=True)
    t = torch.tensor(data, requires_grad=True)
    pairs = [
        (x.repeat_interleave(2, 1), t.repeat_interleave(2, 1)),
        (x.repeat_interleave(2), t.repeat_interleave(2)),
        (
            yg.take_along_dim(x, yg.tensor(np.array([5, 0]))),
            torch.take_along_dim(t, torch.tensor([5, 0])),
        ),
        (x.flatten(), t.flatten()),
        (x.movedim(0, 1), t.movedim(0, 1)),
        (x.tile((2,)), t.tile((2,))),
        (x.narrow(1, -2, 2), t.narrow(1, -2, 2)),
    ]
    for ours, theirs in pairs:
        assert _chain(ours) == _chain(theirs)
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


# fmt: off
SPLITS = [
    ("chunk", (5, 3), lambda m, x: m.chunk(x, 2)),
    ("chunk_empty_dim", (0, 3), lambda m, x: m.chunk(x, 3)),
    ("chunk_empty_dim_1", (2, 0), lambda m, x: m.chunk(x, 2, 1)),
    ("chunk_empty_one", (0,), lambda m, x: m.chunk(x, 1)),
    ("split_int", (5, 3), lambda m, x: m.split(x, 2)),
    ("split_list", (5, 3), lambda m, x: m.split(x, [2, 3])),
    ("split_method_list", (5, 3), lambda m, x: x.split([1, 1, 1], 1)),
    ("split_with_sizes", (5, 3), lambda m, x: m.split_with_sizes(x, [5, 0], dim=0)),
    ("split_with_sizes_method", (2, 6), lambda m, x: x.split_with_sizes([4, 2], -1)),
    ("sum_too_small", (5, 3), lambda m, x: m.split_with_sizes(x, [2, 2])),
    ("sum_negative_dim", (5, 3), lambda m, x: m.split_with_sizes(x, [1, 1], -1)),
    ("negative_size", (5, 3), lambda m, x: m.split_with_sizes(x, [-1, 6])),
    ("zero_dim", (), lambda m, x: m.split_with_sizes(x, [1])),
    ("dim_out_of_range", (5, 3), lambda m, x: m.split_with_sizes(x, [3], 5)),
]
# fmt: on


@pytest.mark.parametrize(
    "shape, call", [(s, c) for _, s, c in SPLITS], ids=[n for n, _, _ in SPLITS]
)
def test_split_and_chunk_as_torch(shape: tuple[int, ...], call: Any) -> None:
    """Pieces, their node (SplitBackward0, or SplitWithSizesBackward0 for a list
    of sizes and for chunk of an empty dim), gradients and errors as torch's."""
    torch = pytest.importorskip("torch")
    data = np.arange(float(np.prod(shape))).reshape(shape)

    def outcome(lib: Any, x: Any) -> Any:
        try:
            pieces = call(lib, x)
        except (RuntimeError, IndexError) as error:
            return type(error).__name__, str(error)
        names = {
            type(p.grad_fn).__name__ if lib is torch else p.grad_fn.name()
            for p in pieces
        }
        if pieces:
            total = sum((p * (i + 1.0)).sum() for i, p in enumerate(pieces))
            total.backward()
        return [tuple(p.shape) for p in pieces], names, x.grad.numpy().tolist()

    ours = outcome(yg, yg.tensor(data, requires_grad=True))
    theirs = outcome(torch, torch.tensor(data, requires_grad=True))
    assert ours == theirs


# -- basic indexing, x[...] ------------------------------------------------------------

KEYS: list[Any] = [
    1,
    -1,
    (0, 2),
    slice(1, 3),
    slice(None, None, 2),
    (Ellipsis, 2),
    (slice(None), slice(-3, None), 1),
    (-1, Ellipsis, -2),
    (slice(None), None, slice(0, 5, 2)),
]


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_getitem_matches_torch(key: Any) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4, 5))
    x = yg.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    y, r = x[key], t[key]
    assert y.shape == tuple(r.shape)
    np.testing.assert_array_equal(y.detach().numpy(), r.detach().numpy())
    assert y.grad_fn.name() == type(r.grad_fn).__name__
    cotangent = rng.standard_normal(tuple(r.shape))
    y.backward(yg.tensor(cotangent))
    r.backward(torch.tensor(cotangent))
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_getitem_gradient_without_torch() -> None:
    x = yg.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    x[1, 1:3].sum().backward()
    expected = np.zeros((3, 4))
    expected[1, 1:3] = 1.0
    np.testing.assert_array_equal(x.grad.numpy(), expected)


@pytest.mark.parametrize(
    "key, message",
    [
        ((0, 0, 0), "too many indices for tensor of dimension 2"),
        ((Ellipsis, Ellipsis), "single ellipsis"),
        ("a", "only integers, slices"),
        (5, "index 5 out of range for tensor of size [3, 4] at dimension 0"),
    ],
)
def test_bad_index_is_refused(key: Any, message: str) -> None:
    x = yg.ones(3, 4)
    with pytest.raises(
        IndexError, match=message.replace("[", r"\[").replace("]", r"\]")
    ):
        x[key]


# -- found by the op fuzzer (fuzz/test_fuzz_ops.py) ------------------------------------

# Each call, run in yamlgrad and in torch: the same shapes, values and grad_fn
# names, or the same error text.
FUZZ_SHAPE_OPS_CALLS: dict[str, Callable[[Any], Any]] = {
    # repeat_interleave's checks, and a one-element or 0-d `repeats`
    "repeat_interleave sizes": lambda lib: counting_input(lib, 3, 4).repeat_interleave(
        lib.tensor([1, 2]), dim=0
    ),
    "repeat_interleave flat sizes": lambda lib: counting_input(
        lib, 3, 4
    ).repeat_interleave(lib.tensor([1, 2])),
    "repeat_interleave 2-d repeats": lambda lib: counting_input(
        lib, 3, 4
    ).repeat_interleave(lib.tensor([[1, 2]]), dim=0),
    "repeat_interleave negative": lambda lib: counting_input(
        lib, 3, 4
    ).repeat_interleave(lib.tensor([1, -2, 1]), dim=0),
    "repeat_interleave [n]": lambda lib: counting_input(lib, 3, 4).repeat_interleave(
        lib.tensor([2]), dim=0
    ),
    "repeat_interleave 0-d": lambda lib: counting_input(lib, 3, 4).repeat_interleave(
        lib.tensor(2), dim=1
    ),
    "repeat_interleave empty": lambda lib: counting_input(lib, 0, 3).repeat_interleave(
        lib.tensor([1, 2, 3]), dim=-2
    ),
    # unflatten rewords infer_size's "is invalid" and wraps its other errors
    "unflatten a 0-d tensor": lambda lib: counting_input(lib).unflatten(0, (3, 2)),
    "unflatten two -1": lambda lib: counting_input(lib, 6).unflatten(0, (-1, -1)),
    "unflatten -1 that does not divide": lambda lib: counting_input(lib, 6).unflatten(
        0, (-1, 4)
    ),
    "unflatten -1 of an empty dim": lambda lib: counting_input(lib, 0).unflatten(
        0, (-1, 0)
    ),
    "unflatten negative size": lambda lib: counting_input(lib, 6).unflatten(0, (2, -2)),
    "unflatten 0 and -1": lambda lib: counting_input(lib, 6).unflatten(0, (0, -1)),
    "unflatten inferred": lambda lib: counting_input(lib, 2, 6).unflatten(1, (-1, 3)),
    "view negative size": lambda lib: counting_input(lib, 6).view(2, -2),
    "reshape negative sizes": lambda lib: counting_input(lib, 6).reshape(-2, -3),
    # diag_embed wraps its dims against the result's rank, distinct
    "diag_embed dim out of range": lambda lib: lib.diag_embed(
        counting_input(lib, 3, 0), -4, 0, 3
    ),
    "diag_embed identical dims": lambda lib: lib.diag_embed(
        counting_input(lib, 2, 3), 0, 2, 2
    ),
    "diag_embed 0-d": lambda lib: lib.diag_embed(counting_input(lib), 0, 0, 1),
    "diag_embed negative dims": lambda lib: lib.diag_embed(
        counting_input(lib, 2, 3), 1, -1, 0
    ),
    # a 0-d tensor transposes dims 0 and -1 into a view of itself
    "transpose 0-d": lambda lib: counting_input(lib).transpose(0, -1),
    "transpose 0-d out of range": lambda lib: counting_input(lib).transpose(1, 0),
    # slices: Python indexing's ValueErrors, aten::slice's RuntimeError
    "getitem negative step": lambda lib: counting_input(lib, 5, 3)[::-1],
    "getitem zero step": lambda lib: counting_input(lib, 5, 3)[::0],
    "setitem negative step": lambda lib: counting_input(lib, 5, 3).__setitem__(
        slice(None, None, -1), 2.0
    ),
    "aten slice negative step": lambda lib: aten_namespace(lib).slice.Tensor(
        counting_input(lib, 5, 3), 0, 0, 2, -1
    ),
    "aten slice of a 0-d tensor": lambda lib: aten_namespace(lib).slice.Tensor(
        counting_input(lib), 0, 0, 2, 1
    ),
    # split, chunk, narrow
    "split 0 of a non-empty dim": lambda lib: counting_input(lib, 5, 3).split(0),
    "split 0 of an empty dim": lambda lib: counting_input(lib, 0, 5).split(0),
    "split negative": lambda lib: counting_input(lib, 5).split(-1),
    "split 0-d": lambda lib: counting_input(lib).split(1),
    "chunk 0-d": lambda lib: counting_input(lib).chunk(2),
    "chunk 0 chunks": lambda lib: counting_input(lib, 5, 3).chunk(0),
    "chunk bad dim": lambda lib: counting_input(lib, 5, 3).chunk(2, 5),
    "narrow start too large": lambda lib: counting_input(lib, 5, 3).narrow(0, 6, 0),
    "narrow start too small": lambda lib: counting_input(lib, 5, 3).narrow(0, -6, 1),
    "narrow past the end": lambda lib: counting_input(lib, 5, 3).narrow(0, 2, 4),
    "narrow negative length": lambda lib: counting_input(lib, 5, 3).narrow(0, 2, -1),
    "narrow 0-d": lambda lib: counting_input(lib).narrow(0, 0, 0),
    "narrow negative start": lambda lib: counting_input(lib, 5, 3).narrow(0, -2, 2),
    # view needs compatible strides; reshape and contiguous copy when they must
    "view of a transpose": lambda lib: counting_input(lib, 4, 3, 2)
    .permute(2, 1, 0)
    .view(6, 4),
    "reshape of a transpose": lambda lib: counting_input(lib, 4, 3, 2)
    .permute(2, 1, 0)
    .reshape(6, 4),
    "reshape of a contiguous tensor": lambda lib: counting_input(lib, 4, 3, 2).reshape(
        6, 4
    ),
    "contiguous of a transpose": lambda lib: counting_input(lib, 4, 3).t().contiguous(),
    "contiguous of a contiguous tensor": lambda lib: counting_input(
        lib, 4, 3
    ).contiguous(),
    "reshape of a strided view": lambda lib: counting_input(lib, 3, 3, 8)[
        ..., ::2
    ].reshape(9, 4),
    "flatten of a strided view": lambda lib: counting_input(lib, 3, 3, 8)[
        ..., ::2
    ].flatten(),
    "flatten of a transpose": lambda lib: counting_input(lib, 4, 3, 2)
    .permute(2, 1, 0)
    .flatten(),
    "reshape of a transpose, viewable": lambda lib: counting_input(lib, 3, 3, 8)
    .transpose(0, 1)
    .reshape(3, 3, 2, 4),
    "reshape of a transposed matrix": lambda lib: counting_input(lib, 4, 3)
    .t()
    .reshape(3, 2, 2),
    "flip of a 0-d tensor": lambda lib: counting_input(lib).flip(0),
    "flip out of range": lambda lib: counting_input(lib).flip(1),
    "flip repeated dims": lambda lib: counting_input(lib, 2, 3).flip(0, 0),
    "flip negative dims": lambda lib: counting_input(lib, 2, 3).flip(-1, 0),
    "tril of a vector": lambda lib: counting_input(lib, 3).tril(),
    "triu of a 0-d tensor": lambda lib: counting_input(lib).triu(),
    "flatten of one dim": lambda lib: counting_input(lib, 2, 3).flatten(1, 1),
    "flatten of a 0-d tensor": lambda lib: counting_input(lib).flatten(),
    "flatten of a 0-d tensor, dim 1": lambda lib: counting_input(lib).flatten(1),
    "diagonal of a 0-d tensor": lambda lib: counting_input(lib).diagonal(),
    "diagonal of a vector": lambda lib: counting_input(lib, 3).diagonal(),
    "diagonal identical dims": lambda lib: counting_input(lib, 2, 3).diagonal(0, 0, 0),
    "diagonal dim out of range": lambda lib: counting_input(lib, 2, 3).diagonal(
        0, 0, 2
    ),
    "diag of a 0-d tensor": lambda lib: counting_input(lib).diag(),
    "diag of a 3-d tensor": lambda lib: counting_input(lib, 2, 2, 2).diag(),
    "pad, crop past an empty dim": lambda lib: lib.constant_pad_nd(
        counting_input(lib, 0), (-3, 1)
    ),
    "pad, crop past the end": lambda lib: lib.constant_pad_nd(
        counting_input(lib, 4), (1, -5)
    ),
    "pad, crop to nothing": lambda lib: lib.constant_pad_nd(
        counting_input(lib, 4), (-2, -2)
    ),
    "pad, crop one dim to 0, pad another": lambda lib: lib.constant_pad_nd(
        counting_input(lib, 2, 3), (1, 0, -2, 0)
    ),
    "repeat_interleave by a negative int": lambda lib: counting_input(
        lib, 3, 0
    ).repeat_interleave(-1, dim=1),
    "repeat_interleave by a negative int, bad dim": lambda lib: counting_input(
        lib, 3
    ).repeat_interleave(-1, dim=5),
    "view -1 of an empty tensor, ambiguous": lambda lib: counting_input(lib, 2, 0).view(
        -1, 0
    ),
    "view -1 of an empty tensor": lambda lib: counting_input(lib, 2, 0).view(-1, 5),
    "view -1 with a 0 size": lambda lib: counting_input(lib, 2, 3).view(-1, 0),
    # movedim: a 0-d tensor is aliased; repeated dims are refused
    "movedim of a 0-d tensor": lambda lib: counting_input(lib).movedim(0, -1),
    "movedim out of range on a 0-d tensor": lambda lib: counting_input(lib).movedim(
        1, 0
    ),
    "movedim repeated source": lambda lib: counting_input(lib, 2, 3).movedim(
        [0, 0], [0, 1]
    ),
    "movedim repeated destination": lambda lib: counting_input(lib, 2, 3).movedim(
        [0, 1], [1, 1]
    ),
}


@pytest.mark.parametrize("name", sorted(FUZZ_SHAPE_OPS_CALLS))
def test_shape_ops_call_answers_as_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    assert call_outcome(FUZZ_SHAPE_OPS_CALLS[name], yg) == call_outcome(
        FUZZ_SHAPE_OPS_CALLS[name], torch
    )


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
    torch = pytest.importorskip("torch")
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
    assert call_outcome(lambda _: calls["yamlgrad"](), yg) == call_outcome(
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
    "remainder by a number keeps the layout": lambda lib, t: lib.remainder(t, -0.7),
    "remainder by a tensor keeps the layout": lambda lib, t: lib.remainder(t, t + 1),
    "unique_consecutive along a dim": lambda lib, t: lib.unique_consecutive(
        t.detach(), dim=1
    ),
    "unique along a dim": lambda lib, t: lib.unique(t.detach() // 4, dim=2),
    "inverse is column-major": lambda lib, t: lib.linalg.inv(
        t[:, :, :3] + 10 * lib.eye(3, dtype=t.dtype)
    ),
}


@pytest.mark.parametrize("name", sorted(LAYOUT_CALLS))
def test_result_layout_as_torch(name: str) -> None:
    """A result of a transposed input is contiguous exactly when PyTorch's is:
    `view` then works in both or neither, and reshape records the same node."""
    torch = pytest.importorskip("torch")
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


def test_masked_select_saves_its_input_as_torch() -> None:
    """Changing masked_select's input in place fails its backward, in both."""
    torch = pytest.importorskip("torch")
    messages = []
    for lib in (yg, torch):
        x = lib.tensor(np.ones((2, 3)), requires_grad=True) * 1
        y = x.masked_select(lib.tensor(np.eye(2, 3, dtype=bool)))
        x.mul_(2)
        with pytest.raises(RuntimeError) as error:
            y.sum().backward()
        messages.append(str(error.value).split(":")[0])
    assert messages[0] == messages[1]


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_pad_of_a_transposed_input_is_contiguous_as_torch_s(mode: str) -> None:
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(0).standard_normal((5, 3, 2))
    ours = yg.nn.functional.pad(yg.tensor(data).T, (2, 1), mode=mode)
    theirs = torch.nn.functional.pad(torch.tensor(data).T, (2, 1), mode=mode)
    assert ours.is_contiguous() == theirs.is_contiguous()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_view_copy_copies_a_layout_that_view_refuses() -> None:
    """torch.view_copy reshapes a transposed input (a copy) where view raises;
    values and gradients as torch's, and view itself still refuses."""
    torch = pytest.importorskip("torch")
    data = np.arange(12.0).reshape(3, 4)
    cotangent = np.linspace(-1.0, 1.0, 12).reshape(2, 6)
    x = yg.tensor(data, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    out = yg.view_copy(x.t(), (2, 6))
    ref = torch.view_copy(tx.t(), (2, 6))
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    assert type(out.grad_fn).__name__ == "ViewBackward0_copy"
    out.backward(yg.tensor(cotangent))
    ref.backward(torch.tensor(cotangent))
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.t().view(2, 6)
