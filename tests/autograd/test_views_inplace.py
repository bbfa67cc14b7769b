"""In-place ops through views, as PyTorch records them: CopySlices on the base,
AsStridedBackward0 on the (stale) views, CopyBackwards for copy_, IndexPutBackward0
for indexed assignment. Each program runs on yamlgrad and, when installed, on torch:
values, gradients and node names must agree; yamlgrad's gradients are also checked
by finite differences (gradcheck) so the file means something without torch.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from support import call_outcome, counting_input, error_message, libraries_under_test

try:
    import torch
except ImportError:  # the checks against finite differences still run
    torch = None

Program = Callable[[ModuleType, list[Any]], tuple[Any, dict[str, Any]]]


def _name(node: Any) -> str | None:
    return None if node is None else type(node).__name__


def _edges(t: Any) -> list[str | None]:
    return [_name(n) for n, _ in t.grad_fn.next_functions]


def _select_mul(lib: ModuleType, ins: list[Any]) -> tuple[Any, dict[str, Any]]:
    (a,) = ins
    x = a * 1
    v = x[0]
    w = x[:, 1]
    v.mul_(2)
    loss = (x * x).sum() + w.sum()
    return loss, {
        "x": _name(x.grad_fn),
        "x.next": _edges(x),
        "v": _name(v.grad_fn),
        "v.next": _edges(v),
        "w": _name(w.grad_fn),
    }


def _strided_add_tensor(lib: ModuleType, ins: list[Any]) -> tuple[Any, dict[str, Any]]:
    a, b = ins
    x = a * 2
    v = x[1:, ::2]
    v.add_(b)  # b broadcasts over the view's rows
    return (x * a).sum(), {"x": _name(x.grad_fn), "x.next": _edges(x)}


def _transpose_exp(lib: ModuleType, ins: list[Any]) -> tuple[Any, dict[str, Any]]:
    (a,) = ins
    x = a * 2
    t = x.t()
    t.exp_()
    return (x.sin() * t.t()).sum(), {"t": _name(t.grad_fn), "x": _name(x.grad_fn)}


def _diagonal_mul(lib: ModuleType, ins: list[Any]) -> tuple[Any, dict[str, Any]]:
    a, b = ins
    x = a + 0.5
    d = x.diagonal()
    d.mul_(b)
    return (x**2).sum() + d.sum(), {"d": _name(d.grad_fn), "x": _name(x.grad_fn)}


def _reshape_view(lib: ModuleType, ins: list[Any]) -> tuple[Any, dict[str, Any]]:
    (a,) = ins
    x = a + 1
    z = x.view(12)
    z.mul_(a.reshape(12))
    return (x * a).sum(), {"z": _name(z.grad_fn), "x": _name(x.grad_fn)}


def _view_of_view(lib: ModuleType, ins: list[Any]) -> tuple[Any, dict[str, Any]]:
    (a,) = ins
    y = a * 1
    y2 = y[1:]
    y3 = y2[:, ::2]
    y3.sin_()
    loss = (y * y).sum() + (y2 * 3).sum() + y3.sum()
    return loss, {
        "y3": _name(y3.grad_fn),
        "y2": _name(y2.grad_fn),
        "y": _name(y.grad_fn),
        "y3.base": y3._base is y,
    }


def _two_views_in_a_row(lib: ModuleType, ins: list[Any]) -> tuple[Any, dict[str, Any]]:
    a, b = ins
    y = a * 3
    v = y[0]
    v.add_(1)
    v.mul_(b)
    w = y[:, 2]
    w.div_(3)
    return (y * y).sum() + (v * b).sum(), {"y": _name(y.grad_fn), "y.next": _edges(y)}


def _stale_view(lib: ModuleType, ins: list[Any]) -> tuple[Any, dict[str, Any]]:
    a, b = ins
    y = a * 1
    v = y[0]
    y.mul_(b)  # in place on the base: v is stale
    return (v * v).sum() + y.sum(), {"v": _name(v.grad_fn), "v.next": _edges(v)}


def _copy_into_view(lib: ModuleType, ins: list[Any]) -> tuple[Any, dict[str, Any]]:
    a, b = ins
    y = a * 1
    v = y[:, 1:3]
    v.copy_(b)  # b is (2,): broadcast over the rows
    return (y * y).sum(), {
        "v": _name(v.grad_fn),
        "y": _name(y.grad_fn),
        "y.next": _edges(y),
    }


def _copy_whole(lib: ModuleType, ins: list[Any]) -> tuple[Any, dict[str, Any]]:
    a, b = ins
    y = a * 1
    y.copy_(b)
    return (y * a).sum(), {"y": _name(y.grad_fn), "y.next": _edges(y)}


def _setitem_basic(lib: ModuleType, ins: list[Any]) -> tuple[Any, dict[str, Any]]:
    a, b = ins
    y = a * 2
    y[0] = b
    y[1:, 0] = 5.0
    return (y * y).sum(), {"y": _name(y.grad_fn), "y.next": _edges(y)}


def _setitem_mask(lib: ModuleType, ins: list[Any]) -> tuple[Any, dict[str, Any]]:
    a, b = ins
    y = a * 2
    y[y > 0] = 0.5
    y[lib.tensor([0, 2]), 1] = b[:2]
    return (y * a).sum(), {"y": _name(y.grad_fn), "y.next": _edges(y)}


def _setitem_on_view(lib: ModuleType, ins: list[Any]) -> tuple[Any, dict[str, Any]]:
    a, b = ins
    y = a.cos()
    v = y[1:]
    v[:, 1] = b[1:]
    return (y * y).sum() + v.sum(), {"y": _name(y.grad_fn), "v": _name(v.grad_fn)}


def _base_without_grad(lib: ModuleType, ins: list[Any]) -> tuple[Any, dict[str, Any]]:
    a, b = ins
    y = a.detach() * 0 + 1.5
    v = y[0]
    w = y[2]
    v.mul_(b)  # only b requires grad: y joins the graph through CopySlices
    return (y * y).sum() + w.sum(), {
        "y": _name(y.grad_fn),
        "v": _name(v.grad_fn),
        "w": _name(w.grad_fn),
        "w.requires_grad": w.requires_grad,
    }


PROGRAMS: dict[str, tuple[Program, list[tuple[int, ...]]]] = {
    "select_mul": (_select_mul, [(3, 4)]),
    "strided_add_tensor": (_strided_add_tensor, [(3, 4), (2,)]),
    "transpose_exp": (_transpose_exp, [(3, 4)]),
    "diagonal_mul": (_diagonal_mul, [(3, 3), (3,)]),
    "reshape_view": (_reshape_view, [(3, 4)]),
    "view_of_view": (_view_of_view, [(3, 4)]),
    "two_views_in_a_row": (_two_views_in_a_row, [(3, 4), (4,)]),
    "stale_view": (_stale_view, [(3, 4), (3, 4)]),
    "copy_into_view": (_copy_into_view, [(3, 4), (2,)]),
    "copy_whole": (_copy_whole, [(3, 4), (4,)]),
    "setitem_basic": (_setitem_basic, [(3, 4), (4,)]),
    "setitem_mask": (_setitem_mask, [(3, 4), (3,)]),
    "setitem_on_view": (_setitem_on_view, [(3, 4), (3,)]),
    "base_without_grad": (_base_without_grad, [(3, 4), (4,)]),
}


def _inputs(shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    rng = np.random.default_rng(sum(map(len, shapes)) + 7)
    return [rng.uniform(-1.0, 1.0, size=s) for s in shapes]


def _run(lib: ModuleType, program: Program, arrays: list[np.ndarray]) -> Any:
    ins = [lib.tensor(x.copy(), requires_grad=True) for x in arrays]
    loss, names = program(lib, ins)
    grads = lib.autograd.grad(loss, ins, allow_unused=True)
    return (
        float(loss.detach()),
        [None if g is None else np.asarray(g.detach().numpy()) for g in grads],
        names,
    )


@pytest.mark.parametrize("name", PROGRAMS)
def test_views_inplace_match_finite_differences(name: str) -> None:
    program, shapes = PROGRAMS[name]
    arrays = _inputs(shapes)

    def f(*ins: Any) -> Any:
        return program(yg, list(ins))[0]

    ins = tuple(yg.tensor(x, requires_grad=True) for x in arrays)
    assert yg.autograd.gradcheck(f, ins)
    assert yg.autograd.gradgradcheck(f, ins)


@pytest.mark.skipif(torch is None, reason="torch is the oracle here")
@pytest.mark.parametrize("name", PROGRAMS)
def test_views_inplace_match_torch(name: str) -> None:
    program, shapes = PROGRAMS[name]
    arrays = _inputs(shapes)
    ours = _run(yg, program, arrays)
    theirs = _run(torch, program, arrays)
    assert ours[2] == theirs[2]  # node names
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    for g, h in zip(ours[1], theirs[1]):
        assert (g is None) == (h is None)
        if g is not None:
            np.testing.assert_allclose(g, h, rtol=1e-10, atol=1e-12)


LIBS = pytest.mark.parametrize("lib", libraries_under_test(), ids=lambda m: m.__name__)


@LIBS
@pytest.mark.parametrize("split", ["unbind", "split", "chunk"])
def test_inplace_on_an_output_of_a_multi_view_op_is_refused(
    lib: ModuleType, split: str
) -> None:
    y = lib.ones(4, 3, requires_grad=True) * 1
    parts = {
        "unbind": lambda: y.unbind(0),
        "split": lambda: y.split(2),
        "chunk": lambda: y.chunk(2),
    }[split]()
    text = error_message(lambda: parts[1].add_(1))
    op = "Unbind" if split == "unbind" else "Split"
    assert text.startswith(f"Output 1 of {op} is a view and is being modified inplace")
    assert "out-of-place one" in text


@LIBS
def test_inplace_on_a_view_made_under_no_grad_is_refused(lib: ModuleType) -> None:
    y = lib.zeros(3, 4)
    with lib.no_grad():
        v = y[0]
    text = error_message(lambda: v.mul_(lib.ones(4, requires_grad=True)))
    assert text.startswith("A view was created in no_grad mode and is being modified")
    with lib.no_grad():
        v.mul_(2)  # both under no_grad: fine
    assert y._version == 1


@LIBS
def test_inplace_on_a_view_of_a_leaf_is_refused(lib: ModuleType) -> None:
    leaf = lib.ones(3, requires_grad=True)
    expected = (
        "a view of a leaf Variable that requires grad is being used in an in-place "
        "operation."
    )
    assert error_message(lambda: leaf[0:2].add_(1)) == expected
    assert error_message(lambda: leaf.__setitem__(0, 2.0)) == expected


@LIBS
def test_copy_casts_and_broadcasts_and_reports_bad_shapes(lib: ModuleType) -> None:
    y = lib.zeros(2, 3, dtype=lib.float32)
    y.copy_(lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
    assert y.dtype == lib.float32 and y.tolist() == [[1.0, 2.0, 3.0]] * 2
    assert y._version == 1
    y.copy_(1.5)
    assert y.tolist() == [[1.5] * 3] * 2
    text = error_message(lambda: lib.ones(3).copy_(lib.ones(4)))
    assert text == (
        "The size of tensor a (3) must match the size of tensor b (4) at "
        "non-singleton dimension 0"
    )


@LIBS
def test_copy_gradient_reaches_src_in_its_dtype(lib: ModuleType) -> None:
    src = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    y = lib.ones(2, 3, dtype=lib.float32, requires_grad=True) * 1
    y.copy_(src)
    (y * lib.tensor([[1.0, 2.0, 3.0]])).sum().backward()
    assert src.grad.dtype == lib.float64
    assert src.grad.tolist() == [2.0, 4.0, 6.0]


def test_double_backward_through_copy_slices() -> None:
    a = yg.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    x = a * a
    x[0].mul_(a[1])
    (g,) = yg.autograd.grad(x.sum(), a, create_graph=True)
    assert g.grad_fn is not None
    (h,) = yg.autograd.grad((g * g).sum(), a)
    if torch is not None:
        ta = torch.tensor(a.tolist(), dtype=torch.float64, requires_grad=True)
        tx = ta * ta
        tx[0].mul_(ta[1])
        (tg,) = torch.autograd.grad(tx.sum(), ta, create_graph=True)
        (th,) = torch.autograd.grad((tg * tg).sum(), ta)
        np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy())
        np.testing.assert_allclose(h.numpy(), th.numpy())


def test_views_remembered_by_a_base_do_not_keep_them_alive() -> None:
    import weakref

    y = yg.ones(4, 4, requires_grad=True) * 1
    refs = [weakref.ref(y[i]) for i in range(4)]
    assert all(r() is None for r in refs)
    for _ in range(200):
        y[0].sum()
    assert len(y._version_counter.views) <= 64


SETITEM_KEYS = {
    "int": lambda idx, mask: 0,
    "slice": lambda idx, mask: slice(0, 2),
    "full_slice": lambda idx, mask: slice(None),
    "ellipsis": lambda idx, mask: Ellipsis,
    "full_slices": lambda idx, mask: (slice(None), slice(None)),
    "tensor": lambda idx, mask: idx,
    "full_slice_tensor": lambda idx, mask: (slice(None), idx),
    "ellipsis_tensor": lambda idx, mask: (Ellipsis, idx),
    "tensor_int": lambda idx, mask: (idx, 1),
    "slice_tensor": lambda idx, mask: (slice(0, 2), idx),
    "none_tensor": lambda idx, mask: (None, idx),
    "mask": lambda idx, mask: mask,
}


@LIBS
@pytest.mark.parametrize("key", SETITEM_KEYS)
@pytest.mark.parametrize("value", ["number", "tensor"])
def test_setitem_records_what_pytorch_records(
    lib: ModuleType, key: str, value: str
) -> None:
    a = lib.tensor(np.linspace(-1.0, 1.0, 12).reshape(3, 4), requires_grad=True)
    y = a * 2
    k = SETITEM_KEYS[key](lib.tensor([0, 2]), y > 0)
    region = np.empty((3, 4))[
        (
            tuple(getattr(i, "numpy", lambda i=i: i)() for i in k)
            if isinstance(k, tuple)
            else getattr(k, "numpy", lambda: k)()
        )
    ]
    v = lib.tensor(np.full(region.shape[-1:], 0.25), requires_grad=True)
    y[k] = 0.25 if value == "number" else v
    expected = {
        "number": {
            "full_slice": "FillBackward3",
            "ellipsis": "FillBackward3",
            "full_slices": "FillBackward3",
        },
        "tensor": {
            "full_slice": "CopyBackwards",
            "ellipsis": "CopyBackwards",
            "full_slices": "CopyBackwards",
        },
    }[value].get(key)
    if expected is None:
        expected = (
            "CopySlices"
            if key in ("int", "slice", "tensor_int", "slice_tensor", "none_tensor")
            else "IndexPutBackward0"
        )
    assert type(y.grad_fn).__name__ == expected
    (y * a).sum().backward()
    if value == "tensor":
        assert v.grad is not None
    ga = a.grad.numpy()
    where = np.zeros((3, 4), dtype=bool)
    where[
        (
            k.numpy()
            if hasattr(k, "numpy")
            else (
                tuple(i.numpy() if hasattr(i, "numpy") else i for i in k)
                if isinstance(k, tuple)
                else k
            )
        )
    ] = True
    a_np = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    y_np = np.where(where, 0.25, 2 * a_np)
    expected_grad = y_np + np.where(where, 0.0, 2 * a_np)
    np.testing.assert_allclose(ga, expected_grad)


@LIBS
@pytest.mark.parametrize(
    "key,message",
    [
        (0, "a view of a leaf Variable"),
        (slice(0, 2), "a view of a leaf Variable"),
        (slice(None), "a leaf Variable"),
        ([0, 2], "a leaf Variable"),
    ],
)
def test_setitem_on_a_leaf_names_what_pytorch_names(
    lib: ModuleType, key: Any, message: str
) -> None:
    leaf = lib.ones(3, requires_grad=True)
    if isinstance(key, list):
        key = lib.tensor(key)
    with pytest.raises(RuntimeError) as info:
        leaf[key] = 2.0
    assert str(info.value).startswith(message)


@LIBS
@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph")
def test_grad_under_create_graph_is_a_recorded_copy(lib: ModuleType) -> None:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward(create_graph=True)
    assert type(x.grad.grad_fn).__name__ == "CopyBackwards"
    assert [_name(n) for n, _ in x.grad.grad_fn.next_functions] == [
        None,
        "AddBackward0",  # x * x: the two products' gradients summed
    ]
    (x * x * x).sum().backward(create_graph=True)
    assert type(x.grad.grad_fn).__name__ == "AddBackward0"
    (g,) = lib.autograd.grad(x.grad.sum(), x)
    assert g.tolist() == [2.0 + 6.0, 2.0 + 12.0]


@LIBS
def test_index_add_in_place_and_through_a_view(lib: ModuleType) -> None:
    a = lib.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)
    s = lib.tensor(np.ones((2, 3)), requires_grad=True)
    y = a * 1
    y.index_add_(0, lib.tensor([3, 3]), s, alpha=2.0)
    assert type(y.grad_fn).__name__ == "IndexAddBackward0"
    v = y[:, 1:]
    v.index_add_(1, lib.tensor([0]), lib.ones(4, 1, dtype=lib.float64) * 3)
    assert type(y.grad_fn).__name__ == "CopySlices"
    (y * y).sum().backward()
    expected = 2 * (np.arange(12.0).reshape(4, 3))
    expected[3] += 2 * 2 * 2  # y[3] = a[3] + 2 + 2
    expected[:, 1] += 2 * 3
    np.testing.assert_allclose(a.grad.numpy(), 2 * y.detach().numpy())
    assert s.grad.tolist() == [[4 * float(y[3, j].detach()) for j in range(3)]] * 2


@LIBS
def test_index_add_reports_bad_input(lib: ModuleType) -> None:
    x = lib.zeros(3, 2)
    with pytest.raises(IndexError, match="Index is supposed to be a vector"):
        x.index_add_(0, lib.tensor([[0]]), lib.ones(1, 2))
    with pytest.raises(RuntimeError, match=r"Number of indices \(2\) should be"):
        x.index_add_(0, lib.tensor([0, 1]), lib.ones(3, 2))
    with pytest.raises(RuntimeError, match="source tensor shape must match self"):
        x.index_add_(0, lib.tensor([0, 1]), lib.ones(2, 3))
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 0"):
        x.index_add_(0, lib.tensor([5]), lib.ones(1, 2))
    with pytest.raises(RuntimeError, match="must have the same scalar type"):
        x.index_add_(0, lib.tensor([0]), lib.ones(1, 2, dtype=lib.float64))
    assert x.tolist() == [[0.0, 0.0]] * 3


def test_in_place_on_a_view_of_an_empty_tensor_records_copyslices() -> None:
    """Size-0 arrays overlap no memory; a slice of one is still a view (found by
    tests/fuzz/test_fuzz_programs.py)."""
    torch = pytest.importorskip("torch")
    names = []
    for lib in (yg, torch):
        x = lib.ones(1, 0, requires_grad=True)
        y = x.clone()
        y[:1].mul_(1.25)
        names.append(type(y.grad_fn).__name__)
        y.sum().backward()
        assert tuple(x.grad.shape) == (1, 0)
    assert names == ["CopySlices", "CopySlices"]


# -- found by the op fuzzer (fuzz/test_fuzz_ops.py) ------------------------------------

# Each call, run in yamlgrad and in torch: the same shapes, values and grad_fn
# names, or the same error text.
FUZZ_VIEW_CALLS: dict[str, Callable[[Any], Any]] = {
    # an in-place view op on a view: set_history, no CopySlices
    "squeeze_ of a view": lambda lib: counting_input(lib, 3, 1, 3)[1:].squeeze_(),
}


@pytest.mark.parametrize("name", sorted(FUZZ_VIEW_CALLS))
def test_view_call_answers_as_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    assert call_outcome(FUZZ_VIEW_CALLS[name], yg) == call_outcome(
        FUZZ_VIEW_CALLS[name], torch
    )


@pytest.mark.parametrize("lib_name", ["yamlgrad", "torch"])
def test_squeeze_of_a_view_backpropagates_into_the_base(lib_name: str) -> None:
    torch = pytest.importorskip("torch")
    lib = yg if lib_name == "yamlgrad" else torch
    leaf = lib.tensor(np.ones((3, 1, 3)), requires_grad=True)
    view = leaf.clone()[1:]
    view.squeeze_()
    (view * lib.tensor(np.arange(6.0).reshape(2, 3))).sum().backward()
    want = np.concatenate([np.zeros((1, 3)), np.arange(6.0).reshape(2, 3)])
    np.testing.assert_array_equal(leaf.grad.numpy().reshape(3, 3), want)
