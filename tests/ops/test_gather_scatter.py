"""Index ops against torch: gather, scatter, scatter_add, index_add, index_select
and take_along_dim.

gather, scatter and scatter_add over inputs, indices and sources of many ranks
and sizes, in range or not, empty or not: the same values as torch, or the same
error text (PyTorch's shape checks and index bounds, in its order). Found by
fuzz/test_fuzz_ops.py: an index out of bounds was a bare numpy IndexError. Its
other findings here: index_add's and index_select's checks in PyTorch's order,
take_along_dim's broadcasting."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from support import call_outcome, counting_input

torch = pytest.importorskip("torch")

INPUTS = [(), (3,), (3, 4), (2, 3, 4)]
INDICES = [
    [0],
    [[3]],
    [[-1]],
    [[0, 1, 2, 3, 4]],
    [[1], [2]],
    [[[0]]],
    0,
    [],
    [[0, 1], [2, 0]],
]
SOURCES = [None, (), (1, 1), (2, 2), (3, 5), (1,)]


def _outcome(op: str, shape: tuple, index: Any, dim: int, src: Any, lib: Any) -> Any:
    try:
        x = lib.tensor(np.arange(float(np.prod(shape))).reshape(shape))
        i = lib.tensor(np.array(index, dtype=np.int64))
        if op == "gather":
            out = x.gather(dim, i)
        else:
            s = 2.5 if src is None else lib.tensor(np.full(src, 100.0))
            out = getattr(x, op)(dim, i, s)
    except (RuntimeError, IndexError) as error:
        return (type(error).__name__, str(error))
    return (tuple(out.shape), out.numpy().tolist())


@pytest.mark.parametrize("op", ["gather", "scatter", "scatter_add"])
def test_every_shape_combination_as_torch(op: str) -> None:
    sources = [None] if op == "gather" else SOURCES
    if op == "scatter_add":
        sources = [s for s in SOURCES if s is not None]
    mismatches = []
    for shape, index, dim, src in itertools.product(
        INPUTS, INDICES, (0, 1, -1), sources
    ):
        got = _outcome(op, shape, index, dim, src, yg)
        want = _outcome(op, shape, index, dim, src, torch)
        if got != want:
            mismatches.append((shape, index, dim, src, got, want))
    assert not mismatches, mismatches[:3]


# -- found by the op fuzzer (fuzz/test_fuzz_ops.py) ------------------------------------

# Each call, run in yamlgrad and in torch: the same shapes, values and grad_fn
# names, or the same error text.
FUZZ_INDEX_OPS_CALLS: dict[str, Callable[[Any], Any]] = {
    # index_add's out-of-range errors: PyTorch's CPU kernel scatters along the
    # first or last dim of a matrix when alpha is 1, else loops over the indices
    "index_add dim 0 alpha 1": lambda lib: counting_input(lib, 3, 4).index_add(
        0, lib.tensor([0, 9]), counting_input(lib, 2, 4)
    ),
    "index_add dim 0 alpha 2": lambda lib: counting_input(lib, 3, 4).index_add(
        0, lib.tensor([0, 9]), counting_input(lib, 2, 4), alpha=2
    ),
    "index_add middle dim": lambda lib: counting_input(lib, 2, 3, 4).index_add(
        1, lib.tensor([0, 9]), counting_input(lib, 2, 2, 4)
    ),
    "index_add last dim negative": lambda lib: counting_input(lib, 3, 4).index_add(
        1, lib.tensor([-1]), counting_input(lib, 3, 1)
    ),
    "index_add vector": lambda lib: counting_input(lib, 3).index_add(
        0, lib.tensor([0, 9]), counting_input(lib, 2)
    ),
    "index_add empty vector": lambda lib: counting_input(lib, 0).index_add(
        0, lib.tensor([0]), counting_input(lib, 1)
    ),
    "index_add 0-d": lambda lib: counting_input(lib).index_add(
        0, lib.tensor([0]), counting_input(lib), alpha=2
    ),
    "index_add 0-d index 1": lambda lib: counting_input(lib).index_add(
        0, lib.tensor([1]), counting_input(lib)
    ),
    "index_add 0-d two indices": lambda lib: counting_input(lib).index_add(
        0, lib.tensor([0, 0]), counting_input(lib)
    ),
    # take_along_dim broadcasts self and indices except along dim (and expands
    # even when nothing changes: ExpandBackward0 under GatherBackward0)
    "take_along_dim broadcast indices": lambda lib: lib.take_along_dim(
        counting_input(lib, 4, 4), lib.zeros((1, 2), dtype=lib.int64), 1
    ),
    "take_along_dim broadcast self": lambda lib: lib.take_along_dim(
        counting_input(lib, 1, 4), lib.zeros((3, 2), dtype=lib.int64), 1
    ),
    "take_along_dim sizes that do not broadcast": lambda lib: lib.take_along_dim(
        counting_input(lib, 4, 4), lib.zeros((3, 2), dtype=lib.int64), 1
    ),
    "take_along_dim ranks": lambda lib: lib.take_along_dim(
        counting_input(lib, 4, 4), lib.zeros((2,), dtype=lib.int64), 1
    ),
    "take_along_dim int32 indices": lambda lib: lib.take_along_dim(
        counting_input(lib, 4, 4), lib.zeros((4, 2), dtype=lib.int32), 1
    ),
    # index_add checks in PyTorch's order: the dim first, then the index, the
    # dtypes and the sizes; int32 indices never take the scatter path
    "index_add dim before dtypes": lambda lib: counting_input(lib, 3, 4).index_add(
        -3, lib.tensor([0]), counting_input(lib, 1, 4).float()
    ),
    "index_add 2-d index": lambda lib: counting_input(lib, 3, 4).index_add(
        0, lib.tensor([[0]]), counting_input(lib, 1, 4)
    ),
    "index_add dim beyond the source": lambda lib: counting_input(lib, 3, 4).index_add(
        1, lib.tensor([0]), counting_input(lib, 3)
    ),
    "index_add 0-d source into a vector": lambda lib: counting_input(lib, 3).index_add(
        0, lib.tensor([1]), counting_input(lib)
    ),
    "index_add int32 out of range": lambda lib: counting_input(lib, 3, 4).index_add(
        0, lib.tensor([0, 9], dtype=lib.int32), counting_input(lib, 2, 4)
    ),
    "index_add into an empty tensor": lambda lib: counting_input(lib, 0, 3).index_add(
        0, lib.tensor([0, 3, 1]), counting_input(lib, 3, 3)
    ),
    "index_add out of bounds": lambda lib: counting_input(lib, 2, 3).index_add(
        0, lib.tensor([0, 3, 1]), counting_input(lib, 3, 3)
    ),
    "index_select from an empty dim": lambda lib: counting_input(
        lib, 0, 3
    ).index_select(0, lib.tensor([0])),
    "index_select out of range": lambda lib: counting_input(lib, 2, 3).index_select(
        0, lib.tensor([5])
    ),
    "index_select negative": lambda lib: counting_input(lib, 2, 3).index_select(
        0, lib.tensor([-1])
    ),
    "index_select float index": lambda lib: counting_input(lib, 2, 3).index_select(
        0, lib.tensor([0.5])
    ),
    "index_select out of range along dim 1": lambda lib: counting_input(
        lib, 2, 3
    ).index_select(1, lib.tensor([3])),
    "index_select out of range, empty": lambda lib: counting_input(
        lib, 3, 0
    ).index_select(0, lib.tensor([3])),
    "index_select negative along dim 1": lambda lib: counting_input(
        lib, 0, 3
    ).index_select(1, lib.tensor([-1])),
}


@pytest.mark.parametrize("name", sorted(FUZZ_INDEX_OPS_CALLS))
def test_index_ops_call_answers_as_torch(name: str) -> None:
    assert call_outcome(FUZZ_INDEX_OPS_CALLS[name], yg) == call_outcome(
        FUZZ_INDEX_OPS_CALLS[name], torch
    )


def test_take_along_dim_expands_even_when_nothing_changes() -> None:
    names = []
    for lib in (yg, torch):
        x = lib.tensor(np.ones((4, 4)), requires_grad=True)
        out = lib.take_along_dim(x, lib.zeros((4, 2), dtype=lib.int64), 1)
        node = out.grad_fn
        names.append((node.name(), node.next_functions[0][0].name()))
    assert names[0] == names[1] == ("GatherBackward0", "ExpandBackward0")
