"""sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, unique and
unique_consecutive against torch: ties, NaN, dtypes, named tuples, errors and the
Python-level unique functions (the generated per-entry tests cover gradients)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from support import as_outputs, torch_text

NAN = float("nan")
TIES = [[3.0, 1.0, 2.0, 1.0, 3.0, 1.0], [0.0, 0.0, -1.0, 5.0, 5.0, 0.0]]
WITH_NAN = [[1.0, NAN, 0.0, NAN, -2.0, 1.0], [NAN, 4.0, 4.0, 2.0, 3.0, 0.0]]
INTS = [[3, 1, 2, 1], [0, 7, 7, -1]]
# Rows long enough for topk's partial sort (k below a quarter of the row).
WIDE = [[float(v) for v in np.random.default_rng(0).permutation(20)] for _ in range(2)]
WIDE[1][7] = NAN
DISTINCT = [[0.5, -1.0, 2.0, 1.5], [3.0, 0.0, -2.0, 1.0], [NAN, 0.25, 4.0, -3.0]]


def outcome(f: Callable[[Any], Any], lib: Any) -> Any:
    """Type names, shapes, dtypes, values (NaN as a string), node names: or the error."""
    try:
        out = f(lib)
    except (RuntimeError, IndexError, TypeError) as error:
        return (type(error).__name__, torch_text(error))
    results = []
    for o in as_outputs(out):
        values = o.detach().numpy()
        shown = (
            np.where(np.isnan(values), "nan", values.astype(str))
            if (values.dtype.kind == "f")
            else values
        )
        results.append(
            (
                tuple(o.shape),
                str(o.dtype).rpartition(".")[2],
                np.asarray(shown).tolist(),
                type(o.grad_fn).__name__ if o.grad_fn is not None else None,
            )
        )
    return type(out).__name__, results


def leaf(lib: Any, values: Any) -> Any:
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("sort ties", lambda t: t.sort(leaf(t, TIES))),
    ("sort ties descending", lambda t: leaf(t, TIES).sort(descending=True)),
    ("sort stable dim 0", lambda t: t.sort(leaf(t, TIES), stable=True, dim=0)),
    ("sort nan", lambda t: t.sort(leaf(t, WITH_NAN))),
    ("sort nan descending", lambda t: t.sort(leaf(t, WITH_NAN), 1, True)),
    ("sort ints", lambda t: t.sort(t.tensor(INTS), descending=True)),
    ("sort bool", lambda t: t.sort(t.tensor([True, False, True]))),
    ("sort 0-d", lambda t: t.sort(leaf(t, 2.0))),
    ("argsort ties", lambda t: t.argsort(leaf(t, TIES), descending=True)),
    ("argsort stable", lambda t: leaf(t, WITH_NAN).argsort(stable=True, dim=0)),
    ("msort", lambda t: t.msort(leaf(t, WITH_NAN))),
    ("topk", lambda t: t.topk(leaf(t, DISTINCT), 3)),
    ("topk smallest", lambda t: leaf(t, DISTINCT).topk(2, largest=False, dim=0)),
    ("topk nan", lambda t: t.topk(leaf(t, WITH_NAN), 2, dim=1)),
    ("topk partial", lambda t: t.topk(leaf(t, WIDE), 4)),
    ("topk partial smallest", lambda t: leaf(t, WIDE).topk(3, largest=False)),
    ("topk k=0", lambda t: t.topk(leaf(t, TIES), 0)),
    ("kthvalue ties", lambda t: t.kthvalue(leaf(t, TIES), 2, 1, True)),
    ("kthvalue nan", lambda t: leaf(t, WITH_NAN).kthvalue(2)),
    ("median even", lambda t: t.median(leaf(t, [1.0, 4.0, 2.0, 3.0]))),
    ("median nan", lambda t: t.median(leaf(t, WITH_NAN))),
    ("median dim nan", lambda t: t.median(leaf(t, WITH_NAN), 1)),
    ("median dim even", lambda t: leaf(t, [[4.0, 1.0, 3.0, 2.0]]).median(-1, True)),
    ("median ints", lambda t: t.median(t.tensor(INTS), 0)),
    ("nanmedian", lambda t: t.nanmedian(leaf(t, WITH_NAN))),
    ("nanmedian dim", lambda t: leaf(t, WITH_NAN).nanmedian(1)),
    ("mode ties", lambda t: t.mode(leaf(t, [[1.0, 2.0, 2.0, 1.0, 3.0]]))),
    ("mode dim 0", lambda t: leaf(t, TIES).mode(0, keepdim=True)),
    ("mode ints", lambda t: t.mode(t.tensor(INTS))),
    ("unique", lambda t: t.unique(t.tensor(INTS))),
    (
        "unique flags",
        lambda t: t.unique(t.tensor(TIES), return_inverse=True, return_counts=True),
    ),
    (
        "unique method",
        lambda t: t.tensor(INTS).unique(sorted=False, return_counts=True),
    ),
    ("unique dim", lambda t: t.unique(t.tensor([[1, 2], [0, 1], [1, 2]]), dim=0)),
    (
        "unique dim inverse",
        lambda t: t.unique(t.tensor([[1, 2], [1, 0]]), dim=1, return_inverse=True),
    ),
    ("unique 0-d", lambda t: t.unique(t.tensor(2.0), return_inverse=True)),
    (
        "unique_consecutive",
        lambda t: t.unique_consecutive(t.tensor(INTS), return_inverse=True),
    ),
    (
        "unique_consecutive dim",
        lambda t: t.tensor([[1, 1], [1, 1], [2, 0]]).unique_consecutive(
            return_counts=True, dim=0
        ),
    ),
    # Errors, as PyTorch raises them.
    ("topk k too large", lambda t: t.topk(t.tensor([1.0, 2.0]), 3)),
    ("kthvalue k=0", lambda t: t.kthvalue(t.tensor([1.0, 2.0]), 0)),
    ("sort bad dim", lambda t: t.sort(t.tensor([1.0, 2.0]), 2)),
    ("median empty dim", lambda t: t.median(t.zeros(0, 2), 0)),
    ("mode empty", lambda t: t.mode(t.zeros(0))),
]


@pytest.mark.parametrize("f", [f for _, f in CASES], ids=[i for i, _ in CASES])
def test_matches_torch(f: Callable[[Any], Any]) -> None:
    torch = pytest.importorskip("torch")
    assert outcome(f, yg) == outcome(f, torch)


def test_sort_returns_a_named_tuple_of_values_and_indices() -> None:
    result = yg.sort(yg.tensor([2.0, 1.0], requires_grad=True))
    assert type(result).__name__ == "sort"
    assert result.values.tolist() == [1.0, 2.0]
    assert result.indices.tolist() == [1, 0]
    assert result.indices.grad_fn is None and not result.indices.requires_grad
    values, indices = result
    assert values is result.values and indices is result.indices


def test_topk_ties_take_the_stable_order_and_the_gradient_follows() -> None:
    """Which of equal values topk and kthvalue pick is left to PyTorch's partial
    sorts (here torch picks x[3] before x[1]); yamlgrad picks in stable order."""
    x = yg.tensor([2.0, 1.0, 2.0, 1.0], requires_grad=True)
    top = yg.topk(x, 3)
    assert top.indices.tolist() == [0, 2, 1]
    assert yg.kthvalue(x, 2).indices.tolist() == 3  # stable ascending: 1, 3, 0, 2
    top.values.backward(yg.tensor([1.0, 10.0, 100.0]))
    assert x.grad.tolist() == [1.0, 100.0, 10.0, 0.0]


@pytest.mark.parametrize("largest", [True, False])
def test_topk_by_partial_sort_picks_what_the_full_stable_sort_picks(
    largest: bool,
) -> None:
    rng = np.random.default_rng(5)
    x = rng.integers(0, 6, (40, 30)).astype(float)
    x[rng.random(x.shape) < 0.1] = NAN
    x[rng.random(x.shape) < 0.3] = -np.inf if largest else np.inf
    for k in (1, 3, 7, 12):
        for dim in (0, 1):
            got = yg.topk(yg.tensor(x), k, dim, largest).indices.numpy()
            order = yg.sort(yg.tensor(x), dim, descending=largest).indices.numpy()
            np.testing.assert_array_equal(got, np.take(order, range(k), axis=dim))


def test_median_shares_its_gradient_among_equal_values_as_torch() -> None:
    for lib in (yg, pytest.importorskip("torch")):
        x = lib.tensor([2.0, 1.0, 2.0, 1.0], requires_grad=True)
        lib.median(x).backward()
        assert x.grad.tolist() == [0.0, 0.5, 0.0, 0.5], lib.__name__


def test_unique_of_a_tensor_that_requires_grad_has_no_history() -> None:
    """PyTorch records Unique2Backward0, whose backward raises "the derivative
    for '_unique2' is not implemented."; yamlgrad records nothing."""
    torch = pytest.importorskip("torch")
    ours = yg.unique(yg.tensor([2.0, 1.0, 2.0], requires_grad=True))
    theirs = torch.unique(torch.tensor([2.0, 1.0, 2.0], requires_grad=True))
    assert ours.tolist() == theirs.tolist() == [1.0, 2.0]
    assert ours.grad_fn is None and not ours.requires_grad
    assert type(theirs.grad_fn).__name__ == "Unique2Backward0"


@pytest.mark.parametrize(
    "name",
    ["sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode"]
    + ["unique", "unique_consecutive"],
)
def test_offered_as_function_and_method_as_in_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    assert hasattr(yg, name) == hasattr(torch, name)
    assert hasattr(yg.Tensor, name) == hasattr(torch.Tensor, name)
