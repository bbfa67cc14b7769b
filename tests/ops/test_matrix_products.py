"""The matrix products on operands of every rank from 0 to 3, compatible or not:
the same result shape as torch, or the same error text (the rank and size checks
of mm, mv, dot, bmm, outer, addmm, baddbmm, in PyTorch's order). Found by
fuzz/test_fuzz_ops.py: the kernels used to accept a vector where torch wants a
matrix; also tensordot's and matmul's edge cases."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

import yamlgrad as yg
from support import call_outcome, counting_input

torch = pytest.importorskip("torch")

SHAPES = [(), (3,), (4,), (2, 3), (3, 4), (4, 2), (2, 3, 4), (2, 4, 2), (3, 3, 4)]
OPS = {"mm": 2, "mv": 2, "dot": 2, "bmm": 2, "outer": 2, "addmm": 3, "baddbmm": 3}


def _outcome(f: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return ("ok", tuple(f().shape))
    except (RuntimeError, IndexError) as error:
        return (type(error).__name__, str(error))


@pytest.mark.parametrize("op", sorted(OPS))
def test_every_rank_combination_as_torch(op: str) -> None:
    mismatches = []
    for shapes in itertools.product(SHAPES, repeat=OPS[op]):
        want = _outcome(lambda: getattr(torch, op)(*[torch.ones(s) for s in shapes]))
        got = _outcome(lambda: getattr(yg, op)(*[yg.ones(s) for s in shapes]))
        if got != want:
            mismatches.append((shapes, got, want))
    assert not mismatches, mismatches[:5]


# -- found by the op fuzzer (fuzz/test_fuzz_ops.py) ------------------------------------

# Each call, run in yamlgrad and in torch: the same shapes, values and grad_fn
# names, or the same error text.
FUZZ_MATRIX_PRODUCT_CALLS: dict[str, Callable[[Any], Any]] = {
    # tensordot: size-1 contracted dims broadcast (summed first); dtype before dims
    "tensordot size-1 dim of self": lambda lib: lib.tensordot(
        counting_input(lib, 3, 1), counting_input(lib, 4, 5), dims=([1], [0])
    ),
    "tensordot size-1 dim of other": lambda lib: lib.tensordot(
        counting_input(lib, 3, 4), counting_input(lib, 1, 5), dims=([1], [0])
    ),
    "tensordot dim out of range": lambda lib: lib.tensordot(
        counting_input(lib, 3, 4), counting_input(lib, 4, 5), dims=([5], [0])
    ),
    "tensordot repeated dim": lambda lib: lib.tensordot(
        counting_input(lib, 3, 4), counting_input(lib, 4, 4), dims=([1, 1], [0, 1])
    ),
    "tensordot dim of a 0-d tensor": lambda lib: lib.tensordot(
        counting_input(lib), counting_input(lib, 4, 5), dims=([0], [0])
    ),
    "tensordot two dtypes": lambda lib: lib.tensordot(
        counting_input(lib, 3, 4).float(), counting_input(lib, 4, 5), dims=([1], [0])
    ),
    "matmul 2-d by an empty batch": lambda lib: lib.matmul(
        counting_input(lib, 3, 4), counting_input(lib, 0, 4, 5)
    ),
    "matmul broadcasting an empty batch dim": lambda lib: lib.matmul(
        counting_input(lib, 0, 1, 3, 4), counting_input(lib, 3, 4, 2)
    ),
    "matmul 2-d of no columns by 3-d": lambda lib: lib.matmul(
        counting_input(lib, 3, 0), counting_input(lib, 2, 0, 5)
    ),
}


@pytest.mark.parametrize("name", sorted(FUZZ_MATRIX_PRODUCT_CALLS))
def test_matrix_product_call_answers_as_torch(name: str) -> None:
    assert call_outcome(FUZZ_MATRIX_PRODUCT_CALLS[name], yg) == call_outcome(
        FUZZ_MATRIX_PRODUCT_CALLS[name], torch
    )
