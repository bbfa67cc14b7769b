"""Shape and indexing ops: what the YAML samples cannot express.

Repeated indices accumulate in backward (index, index_select, gather,
scatter_add), bool masks, `x[...]` with tensors, lists and masks mixed with ints,
slices, None and `...` (node chains and gradients vs torch), `contiguous`, and
`yg.nn.functional.pad`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg


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
    with pytest.raises(NotImplementedError):
        yg.nn.functional.pad(x, (1, 0), mode="reflect")


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
