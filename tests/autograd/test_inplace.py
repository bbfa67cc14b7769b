"""In-place ops and views: PyTorch's history rebasing, version counters and errors."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

import yamlgrad as yg
from support import libraries_under_test

LIBS = pytest.mark.parametrize("lib", libraries_under_test(), ids=lambda m: m.__name__)


@LIBS
def test_inplace_chain_rebases_history(lib: ModuleType) -> None:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.mul_(2)
    y.add_(1)
    names = []
    node = y.grad_fn
    while node is not None and type(node).__name__ != "AccumulateGrad":
        names.append(type(node).__name__)
        node = node.next_functions[0][0]
    assert names == ["AddBackward0", "MulBackward0", "MulBackward0"]
    assert y._version == 2
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]


@LIBS
def test_inplace_saves_the_original_self(lib: ModuleType) -> None:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, 4.0], requires_grad=True)
    y = x + 0
    y.mul_(w)
    y.sum().backward()
    assert w.grad.tolist() == [1.0, 2.0]  # the value of y before mul_
    assert x.grad.tolist() == [3.0, 4.0]


@LIBS
def test_inplace_operators_call_the_inplace_ops(lib: ModuleType) -> None:
    a = lib.zeros(2)
    b = lib.tensor([1.0, 2.0], requires_grad=True)
    a += b
    assert not a.is_leaf and type(a.grad_fn).__name__ == "AddBackward0"
    a *= 2
    a -= 1
    a /= 2
    a **= 2
    a.sum().backward()
    expected = [2 * (2 * v - 1) / 2 * 2 / 2 for v in (1.0, 2.0)]
    np.testing.assert_allclose(b.grad.tolist(), expected)


@LIBS
def test_leaf_inplace_is_refused_unless_grad_is_off(lib: ModuleType) -> None:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="a leaf Variable that requires grad is being used in an in-place operation",
    ):
        x.add_(1)
    with lib.no_grad():
        x.sub_(0.5)  # what an optimizer step does
        x.mul_(2)
    assert x.tolist() == [1.0, 3.0] and x.is_leaf and x.requires_grad
    assert x._version == 2


@LIBS
def test_modifying_a_saved_tensor_is_detected(lib: ModuleType) -> None:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()  # ExpBackward0 saves its result
    y.add_(1)
    with pytest.raises(
        RuntimeError, match="is at version 1; expected version 0 instead"
    ):
        y.sum().backward()


@LIBS
def test_views_share_the_version_counter(lib: ModuleType) -> None:
    base = lib.zeros(2, 3)
    view = base.view(6)
    row = base[1]
    view.add_(1)
    assert base._version == view._version == row._version == 1
    assert row.tolist() == [1.0, 1.0, 1.0]
    assert view._base is base and row._base is base


@LIBS
def test_modifying_a_view_invalidates_a_saved_base(lib: ModuleType) -> None:
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x.exp()
    with lib.no_grad():
        y[0].mul_(2)  # through a view, without recording
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@LIBS
def test_fill_and_zero_record_their_nodes(lib: ModuleType) -> None:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.fill_(3.0)
    assert type(y.grad_fn).__name__ == "FillBackward2"
    z = x * 1
    z.zero_()
    assert type(z.grad_fn).__name__ == "ZeroBackward0"
    (y + z).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]


@LIBS
def test_inplace_dtype_and_overlap_errors(lib: ModuleType) -> None:
    ints = lib.tensor([1, 2])
    with pytest.raises(
        RuntimeError,
        match="result type Float can't be cast to the desired output type Long",
    ):
        ints.div_(2)
    expanded = lib.ones(1, 3).expand(2, 3)
    with pytest.raises(
        RuntimeError,
        match="more than one element of the written-to tensor refers to a single memory location",
    ):
        expanded.add_(1)


@LIBS
def test_setitem_records_copy_slices(lib: ModuleType) -> None:
    x = lib.zeros(3, 4)
    y = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    x[1] = y * 3
    assert type(x.grad_fn).__name__ == "CopySlices" and x._version == 1
    weights = lib.tensor(np.arange(12.0).reshape(3, 4))
    (x * weights).sum().backward()
    assert y.grad.tolist() == [12.0, 15.0, 18.0, 21.0]


@LIBS
def test_setitem_stops_the_gradient_of_the_overwritten_region(lib: ModuleType) -> None:
    a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = a * 1
    b[:, 0] = 0.0
    b[1:, ...] = lib.tensor([7.0, 8.0]) * 1
    (b * b).sum().backward()
    assert a.grad.tolist() == [[0.0, 4.0], [0.0, 0.0]]


@LIBS
def test_setitem_without_autograd_writes_any_index(lib: ModuleType) -> None:
    x = lib.zeros(4)
    x[lib.tensor([True, False, True, False])] = 5.0
    x[1:3] = lib.tensor([1.0, 2.0])
    assert x.tolist() == [5.0, 1.0, 2.0, 0.0] and x._version == 2


@LIBS
def test_setitem_on_a_leaf_that_requires_grad_is_refused(lib: ModuleType) -> None:
    x = lib.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x[0] = 1.0
    with lib.no_grad():
        x[0] = 1.0
    assert x.tolist() == [1.0, 0.0]


def test_setitem_is_differentiable_twice() -> None:
    def f(base: yg.Tensor, value: yg.Tensor) -> yg.Tensor:
        out = base * base
        out[0, 1:] = value.exp()
        return out * base

    rng = np.random.default_rng(0)
    base = yg.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    value = yg.tensor(rng.standard_normal(2), requires_grad=True)
    assert yg.autograd.gradcheck(f, (base, value))
    assert yg.autograd.gradgradcheck(f, (base, value))
