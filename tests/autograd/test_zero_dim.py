"""0-d tensors (`yg.tensor(2.0)`): numpy's ufuncs and operators return numpy
scalars (np.float64, not 0-d arrays) on 0-d operands, and the runtime makes
them 0-d arrays where a kernel's result becomes a Tensor and where a
gradient reaches the node of its input. These tests pin what that must
keep: a Tensor's data is a 0-d ndarray of PyTorch's result dtype, a 0-d
leaf's gradient is a 0-d Tensor of the leaf's dtype (cast when the graph
computed in another), and neither path calls the general conversion,
backend.adopt.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.generated import Functions
from yamlgrad.runtime import backend
from yamlgrad.runtime.autograd import accumulate_grad, engine

DTYPES = ("float32", "float64", "int32", "int64", "bool")
UNARY: dict[str, Callable[[Any], Any]] = {
    "neg": lambda a: -a,
    "abs": lambda a: a.abs(),
    "exp": lambda a: a.exp(),
    "relu": lambda a: a.relu(),
    "square": lambda a: a * a,
    "add_number": lambda a: a + 2,
    "mul_float": lambda a: a * 2.5,
    "rsub_float": lambda a: 0.5 - a,
    "pow": lambda a: a**2,
    "gt": lambda a: a > 0,
    "sum": lambda a: a.sum(),
}
# Unsupported pairs, as in PyTorch (each raises there too; skipped here).
_REFUSED = {
    ("neg", "bool"),
    ("abs", "bool"),
    ("relu", "bool"),
    ("rsub_float", "bool"),
}


def _is_0d_ndarray(t: yg.Tensor) -> bool:
    return type(t._data) is np.ndarray and t._data.shape == ()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_an_op_on_0d_tensors_holds_a_0d_ndarray_of_torchs_dtype(
    op: str, dtype: str
) -> None:
    if (op, dtype) in _REFUSED:
        pytest.skip("PyTorch refuses this op on this dtype")
    torch = pytest.importorskip("torch")
    value = True if dtype == "bool" else 3
    ours = UNARY[op](yg.tensor(value, dtype=getattr(yg, dtype)))
    theirs = UNARY[op](torch.tensor(value, dtype=getattr(torch, dtype)))
    assert _is_0d_ndarray(ours)
    assert ours.shape == () and ours.dim() == 0
    assert ours._data.dtype == theirs.numpy().dtype
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-6)
    assert type(ours.item()) is type(theirs.item())


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_binary_ops_of_0d_tensors_record_0d_results(dtype: str) -> None:
    a = yg.tensor(1.5, dtype=getattr(yg, dtype), requires_grad=True)
    b = yg.tensor(-2.0, dtype=getattr(yg, dtype), requires_grad=True)
    for out in (a + b, a - b, a * b, a / b, a * b + a):
        assert _is_0d_ndarray(out) and out._data.dtype == a._data.dtype
        assert out.grad_fn is not None


def test_a_0d_result_is_an_array_of_its_own_that_in_place_ops_write() -> None:
    a = yg.tensor(2.0, requires_grad=True)
    y = a * 3.0
    with yg.no_grad():
        y += 1.0
        y.mul_(2.0)
    assert _is_0d_ndarray(y) and y._data.flags.writeable
    assert y.item() == 14.0 and a.item() == 2.0


def _loss(dtype: str, size_1: bool = False) -> tuple[yg.Tensor, tuple[yg.Tensor, ...]]:
    """A micrograd-style graph on 0-d leaves (or size-1 ones): every gradient
    that reaches a leaf is a numpy scalar made by a formula (mul's, relu's)."""
    kind = getattr(yg, dtype)
    values = ([0.5], [-0.25], [2.0]) if size_1 else (0.5, -0.25, 2.0)
    w, b, x = (yg.tensor(v, dtype=kind, requires_grad=True) for v in values)
    out = (w * x + b).relu() * w
    return (out - 0.125) * (out - 0.125), (w, b, x)


def _gradients(dtype: str) -> tuple[yg.Tensor, ...]:
    loss, leaves = _loss(dtype)
    loss.backward()
    return leaves


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_the_gradients_of_0d_leaves_are_0d_tensors_of_their_dtype(
    dtype: str,
) -> None:
    torch = pytest.importorskip("torch")
    ours = _gradients(dtype)
    kind = getattr(torch, dtype)
    w, b, x = (torch.tensor(v, dtype=kind, requires_grad=True) for v in (0.5, -0.25, 2))
    out = (w * x + b).relu() * w
    ((out - 0.125) * (out - 0.125)).backward()
    for leaf, theirs in zip(ours, (w, b, x)):
        assert _is_0d_ndarray(leaf.grad)
        assert leaf.grad._data.dtype == leaf._data.dtype == theirs.grad.numpy().dtype
        np.testing.assert_allclose(leaf.grad.numpy(), theirs.grad.numpy())


def test_a_0d_gradient_computed_in_another_dtype_is_cast_to_the_leafs() -> None:
    """a float32 leaf times a float64 0-d tensor computes in float64: the
    numpy scalar mul's formula gives the float32 leaf is float64, and is cast."""
    a = yg.tensor(1.5, dtype=yg.float32, requires_grad=True)
    b = yg.tensor(2.0, dtype=yg.float64, requires_grad=True)
    (a * b).backward()
    assert _is_0d_ndarray(a.grad) and a.grad._data.dtype == np.float32
    assert _is_0d_ndarray(b.grad) and b.grad._data.dtype == np.float64
    assert a.grad.item() == 2.0 and b.grad.item() == 1.5


def test_a_0d_gradient_reaching_a_size_1_input_is_reduced_or_refused() -> None:
    """A 0-d gradient and a size-1 input: broadcasting a size-1 leaf against
    a 0-d one gives its gradient in its own shape (1,), and the 0-d leaf's is
    summed back to ()."""
    a = yg.tensor(1.5, requires_grad=True)
    v = yg.tensor([2.0], requires_grad=True)
    (a * v).sum().backward()
    assert _is_0d_ndarray(a.grad) and a.grad.item() == 2.0
    assert v.grad.shape == (1,) and v.grad.item() == 1.5


def test_gradients_of_0d_leaves_accumulate_in_their_own_arrays() -> None:
    """Add's formula hands one numpy scalar to both inputs: each leaf gets an
    array of its own, which a second backward adds into."""
    a = yg.tensor(1.0, requires_grad=True)
    c = yg.tensor(3.0, requires_grad=True)
    for _ in range(2):
        ((a + c) * 2.0).backward()
    assert a.grad._data is not c.grad._data
    assert a.grad.item() == c.grad.item() == 4.0
    a.grad.add_(1.0)
    assert c.grad.item() == 4.0


def test_0d_leaves_take_their_gradients_as_size_1_leaves_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """AccumulateGrad takes a fresh gradient as is: the arrays the engine
    makes of numpy scalars are fresh, so the 0-d graph copies no more
    gradients than the same graph on size-1 leaves (only b's, which add's
    formula shares with the other input)."""
    copies: dict[bool, list[Any]] = {False: [], True: []}
    size_1 = False

    class Counting:  # AccumulateGrad copies with np.copyto, into the leaf's layout
        def copyto(self, *args: Any, **kwargs: Any) -> Any:
            copies[size_1].append(args)
            return np.copyto(*args, **kwargs)

        def __getattr__(self, name: str) -> Any:
            return getattr(np, name)

    monkeypatch.setattr(accumulate_grad, "np", Counting())
    for size_1 in (False, True):
        loss, leaves = _loss("float64", size_1)
        loss.backward()
    assert len(copies[False]) == len(copies[True]) == 1
    assert all(_is_0d_ndarray(leaf.grad) for leaf in _gradients("float64"))


def test_hooks_see_0d_tensors_of_the_leafs_dtype() -> None:
    """A hooked leaf's gradient takes validate_outputs' path, not the
    delivery's: the same 0-d Tensor."""
    a = yg.tensor(1.5, dtype=yg.float32, requires_grad=True)
    b = yg.tensor(2.0, dtype=yg.float64)
    seen: list[yg.Tensor] = []
    a.register_hook(lambda g: seen.append(g))
    (a * b).backward()
    assert len(seen) == 1 and _is_0d_ndarray(seen[0])
    assert seen[0]._data.dtype == np.float32 and a.grad.item() == 2.0


def test_0d_ops_and_gradients_skip_the_general_conversion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A numpy scalar of the right dtype becomes a 0-d array inline: neither
    backend.adopt (the conversion of any other value) nor the engine's
    _conform (a gradient to reduce or cast) runs for the results of the ops
    or the gradients of a graph of 0-d float64 leaves."""
    calls: list[str] = []

    def watched(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            calls.append(name)
            return fn(*args)

        return call

    monkeypatch.setattr(backend, "adopt", watched("adopt", backend.adopt))
    monkeypatch.setattr(engine, "_conform", watched("_conform", engine._conform))
    w, b, x = _gradients("float64")
    assert calls == []
    assert all(_is_0d_ndarray(leaf.grad) for leaf in (w, b, x))
    # The general path still runs where it must: a gradient to cast.
    test_a_0d_gradient_computed_in_another_dtype_is_cast_to_the_leafs()
    assert calls == ["_conform", "adopt"]


@pytest.mark.parametrize(
    ("shape", "dtype"),
    [((), np.float64), ((), np.float32), ((1,), np.float64), ((2, 3), np.float64)],
    ids=["0-d", "other dtype", "size-1", "2x3"],
)
def test_conform_makes_a_numpy_scalar_the_inputs_array_or_refuses_it(
    shape: tuple[int, ...], dtype: Any
) -> None:
    """The engine's check of a raw gradient: a numpy scalar for a 0-d input
    of its dtype is its 0-d array; of another dtype, cast; for an input of
    another shape, PyTorch's error (a 0-d gradient does not expand)."""
    node = Functions.MulBackward0()
    grad = np.float64(2.5)
    if shape:
        with pytest.raises(RuntimeError, match="invalid gradient at index 0"):
            engine._conform(node, 0, grad, shape, np.dtype(dtype), True)
        return
    out = engine._conform(node, 0, grad, shape, np.dtype(dtype), True)
    assert type(out) is np.ndarray and out.shape == () and out.dtype == dtype
    assert out == 2.5 and out.flags.writeable


def test_a_0d_gradient_for_an_input_of_another_shape_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A node that gives a size-1 input a numpy scalar (a 0-d gradient) gets
    PyTorch's error from the engine's delivery, as any wrong shape does."""
    v = yg.tensor([1.5], dtype=yg.float64, requires_grad=True)
    y = v * 2.0
    grad_fn = y.grad_fn
    monkeypatch.setattr(
        type(grad_fn), "apply", lambda self, grads, raw=False: [np.float64(2.0), None]
    )
    message = f"Function {grad_fn.name()} returned an invalid gradient at index 0"
    with pytest.raises(RuntimeError, match=message):
        y.sum().backward()
    assert v.grad is None


@pytest.mark.filterwarnings(
    "error:You are comparing a array_api_strict dtype:UserWarning"
)
def test_0d_gradients_on_another_backend_are_its_0d_arrays() -> None:
    """The engine's check for a numpy scalar never compares another
    library's dtype with numpy's (array_api_strict warns of it)."""
    pytest.importorskip("array_api_strict")
    w, x = (
        yg.tensor(v, dtype=yg.float64).to("array_api_strict").requires_grad_()
        for v in (0.5, 2.0)
    )
    (w * x * w).backward()
    for leaf, expected in ((w, 2.0), (x, 0.25)):
        assert type(leaf.grad._data) is type(leaf._data)
        assert leaf.grad.shape == () and float(leaf.grad.numpy()) == expected
