"""Edge calls the op-table fuzzer found, pinned against torch: the same error
(type and text), or the same values, dtype and layout (contiguous or not).

Each case builds its inputs in either library from the same arrays; the order of
a kernel's checks decides which error a call with two faults gets, so several
cases carry two.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.generated import VariableType

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
A34, A243, A38 = RNG.random((3, 4)), RNG.random((2, 4, 3)), RNG.random((3, 8))


def t(lib: ModuleType, array: Any, dtype: str = "float64", grad: bool = False) -> Any:
    return lib.tensor(np.asarray(array), dtype=getattr(lib, dtype), requires_grad=grad)


def aten(lib: ModuleType, name: str) -> Callable[..., Any]:
    """An op PyTorch keeps out of its torch namespace (im2col, grid samplers)."""
    return getattr(torch._C._nn, name) if lib is torch else getattr(VariableType, name)


def _bag(
    lib: ModuleType, weight: Any, indices: Any, offsets: Any, grad: bool = False
) -> Any:
    return lib._embedding_bag(t(lib, weight, grad=grad), lib.tensor(indices), offsets)


CASES: dict[str, Callable[[ModuleType], Any]] = {
    # a formula's x.shape[k] is read before the kernel, as PyTorch's wrapper does
    "_embedding_bag of a 0-d weight that requires grad": lambda L: _bag(
        L, 1.0, [0, 1], L.tensor([0]), grad=True
    ),
    "_embedding_bag of a 0-d weight": lambda L: _bag(L, 1.0, [0, 1], L.tensor([0])),
    "_embedding_bag: 0-d indices before the weight": lambda L: _bag(
        L, 1.0, 0, L.tensor([0])
    ),
    "_embedding_bag: 2-d offsets before the weight": lambda L: _bag(
        L, [1.0], [0, 1], L.tensor([[0]])
    ),
    "_embedding_bag: float offsets name the indices": lambda L: _bag(
        L, A34, [0, 1], L.tensor([0.0])
    ),
    "_embedding_bag: int32 indices and offsets": lambda L: L._embedding_bag(
        t(L, A34), L.tensor([0, 1], dtype=L.int32), L.tensor([0], dtype=L.int32)
    )[1],
    "addbmm reads its sizes before its ranks": lambda L: L.addbmm(
        t(L, A34), t(L, 1.0), t(L, A243)
    ),
    "addbmm expands its input before its ranks": lambda L: L.addbmm(
        t(L, A34), t(L, A34), t(L, A243)
    ),
    "im2col of a 2-d input": lambda L: aten(L, "im2col")(
        t(L, A34), (2, 2), (1, 1), (0, 0), (1, 1)
    ),
    "bmm of mixed dtypes with an empty inner dim": lambda L: L.bmm(
        t(L, np.ones((2, 3, 0))), t(L, np.ones((2, 0, 4)), "float32")
    ),
    "baddbmm of mixed dtypes with an empty batch": lambda L: L.baddbmm(
        t(L, A34), t(L, np.ones((0, 3, 2))), t(L, np.ones((0, 2, 4)), "float32")
    ),
    "rms_norm of a transposed input and a float64 weight": lambda L: L.rms_norm(
        t(L, A34, "float32", grad=True).T, [3], t(L, [1.0, 2.0, 3.0])
    ),
    "rms_norm: the weight's shape before the input's rank": lambda L: L.rms_norm(
        t(L, 1.0), [4], t(L, [1.0, 2.0])
    ),
    "rms_norm of a 0-d input": lambda L: L.rms_norm(t(L, 1.0), [4]),
    "unsafe_split of a strided input": lambda L: L.unsafe_split(
        t(L, A38)[..., ::2], 2, 0
    )[0],
    "rot90 of a transposed input": lambda L: L.rot90(t(L, A34).T),
    "a special polynomial of a transposed input": lambda L: (
        L.special.chebyshev_polynomial_v(t(L, A34).T, t(L, [2.0]))
    ),
    "log_sigmoid of a transposed input": lambda L: L.nn.functional.logsigmoid(
        t(L, A34).T
    ),
    "addmv: the size error reads a 0-d input's size": lambda L: L.addmv(
        t(L, 1.0), t(L, A34), t(L, [1.0]), beta=0.5, alpha=2.0
    ),
    "addmv of a 2-d input": lambda L: L.addmv(t(L, A34), t(L, A34), t(L, A34[0])),
    "linalg_lstsq of two dtypes": lambda L: L.linalg.lstsq(
        t(L, A34.T), t(L, A34[0][:, None], "float32")
    ),
    "_softmax_backward_data of two dtypes": lambda L: (
        torch._softmax_backward_data
        if L is torch
        else VariableType._softmax_backward_data
    )(t(L, A34, "float32"), t(L, A34), 1, L.float32),
    "_softmax_backward_data keeps its gradient's dtype": lambda L: (
        torch._softmax_backward_data
        if L is torch
        else VariableType._softmax_backward_data
    )(t(L, A34, "float32"), t(L, A34, "float32"), 1, L.float64),
    "lu_unpack reads the first min(m, n) pivots": lambda L: L.lu_unpack(
        t(L, A34.T[:2, :2]), L.tensor([2, 2, 3], dtype=L.int32)
    )[0],
    "lu_unpack of a pivot outside the rows": lambda L: L.lu_unpack(
        t(L, A34[:, :3]), L.tensor([1, 4, 3], dtype=L.int32)
    ),
}


def _outcome(lib: ModuleType, case: Callable[[ModuleType], Any]) -> Any:
    try:
        out = case(lib)
    except Exception as error:  # compared with the other library's
        return type(error), str(error)
    data = out.detach().numpy()
    contiguous = out.is_contiguous() if lib is torch else out._data.flags.c_contiguous
    return data, str(out.dtype).rpartition(".")[2], contiguous


@pytest.mark.parametrize("name", sorted(CASES))
def test_edge_call_matches_torch(name: str) -> None:
    ours, theirs = _outcome(yg, CASES[name]), _outcome(torch, CASES[name])
    if isinstance(theirs[0], type):
        assert ours[0] is theirs[0] or issubclass(ours[0], theirs[0]), (ours, theirs)
        assert ours[1] == theirs[1]
        return
    assert not isinstance(ours[0], type), ours
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6, atol=1e-12)
    assert ours[1:] == theirs[1:]
