"""Bad calls raise PyTorch's error for the same call, type and text.

Calls numpy refuses raise PyTorch's error for the same call (type and text),
never numpy's; a failed op leaves its inputs, their versions and the graph as
they were.

Wrong argument counts, unknown keywords and wrong types, for every public op
that torch also has, compared with torch as the oracle.

What matches: the exception type for every case below (but the ones torch
raises from Python code, DIFFERENT_TYPE), and the whole message whenever both
name a wrongly typed argument ("abs(): argument 'input' (position 1) must be
Tensor, not str"). Documented differences, pinned by the type check only:

* A single-overload op is a plain Python function, so Python words its count and
  keyword errors ("add() takes 2 positional arguments but 6 were given") where
  torch's PythonArgParser prints "received an invalid combination of arguments"
  or "missing 1 required positional arguments: \"other\"". Catching Python's
  own TypeError would need a layer around every call.
* For the same reason a missing argument is reported before a wrongly typed one
  (`_softmax("abc")`), where torch names the wrong type first.
* A multi-overload op lists yamlgrad's overloads, which are fewer than torch's
  and have no `out`; torch may also pick a single-signature text where yamlgrad
  has several overloads, and the other way round.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.generated import VariableType

torch = pytest.importorskip("torch")

CALLS = [
    "lib.matmul(lib.ones(2, 3), lib.ones(4, 5))",
    "lib.mm(lib.ones(2, 3), lib.ones(4, 5))",
    "lib.addmm(lib.ones(2, 5), lib.ones(2, 3), lib.ones(4, 5))",
    "lib.mv(lib.ones(2, 3), lib.ones(4))",
    "lib.dot(lib.ones(3), lib.ones(4))",
    "lib.bmm(lib.ones(2, 2, 3), lib.ones(2, 4, 5))",
    "lib.ones(2, 3) + lib.ones(4)",
    "lib.ones(2, 3) * lib.ones(5, 1, 2)",
    "lib.where(lib.ones(2) > 0, lib.ones(3), lib.ones(2))",
    "lib.ones(2, 3).mul_(lib.ones(4))",
    "lib.ones(3).add_(lib.ones(2, 3))",
    "lib.cat([lib.ones(2, 3), lib.ones(2, 4)])",
    "lib.cat([lib.ones(2, 3), lib.ones(3, 4)], dim=1)",
    "lib.cat([lib.ones(2, 3), lib.ones(2, 3, 1)])",
    "lib.stack([lib.ones(2), lib.ones(3)])",
    "lib.ones(2, 3).expand(4, 3)",
    "lib.ones(2, 3).view(7)",
    "lib.ones(5)[::-1]",
    "lib.sum(lib.ones(2, 3), dim=5)",
    "lib.ones(2, 3).transpose(0, -4)",
    "lib.softmax(lib.ones(2), dim=3)",
    "lib.tensor(1.0).sum(dim=2)",
]


def outcome(call: str, lib: object) -> tuple[str, str]:
    try:
        eval(call, {"lib": lib})
    except Exception as error:  # noqa: BLE001 - the type is what is compared
        kind = "ValueError" if isinstance(error, ValueError) else type(error).__name__
        return kind, str(error)
    return "no error", ""


@pytest.mark.parametrize("call", CALLS)
def test_error_type_and_text_match_torch(call: str) -> None:
    assert outcome(call, yg) == outcome(call, torch)


@pytest.mark.parametrize(
    "call",
    [
        "lib.cholesky_inverse(lib.tensor([[1.0, 0.0], [2.0, 0.0]]))",
        "lib.cholesky_inverse(lib.stack([lib.eye(2), lib.tensor([[1.0, 0], [2, 0]])]))",
        "lib.cholesky_inverse(lib.tensor([[0.0, 1.0], [0.0, 2.0]]), upper=True)",
    ],
)
def test_a_singular_factor_raises_torchs_linalg_error_text(call: str) -> None:
    """torch raises its LinAlgError, a RuntimeError, where yamlgrad raises a
    RuntimeError with the same text (as linalg.inv does)."""
    ours, theirs = outcome(call, yg), outcome(call, torch)
    assert ours[0] == "RuntimeError" and issubclass(
        torch.linalg.LinAlgError, RuntimeError
    )
    assert ours[1] == theirs[1]


def test_a_numpy_error_without_a_torch_text_names_the_op() -> None:
    with pytest.raises(RuntimeError, match=r"^linalg_inv_ex: |^linalg.inv: "):
        yg.linalg.inv(yg.zeros(2, 2))


def test_a_failed_in_place_op_changes_nothing() -> None:
    leaf = yg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    x = leaf * 2
    grad_fn, version, before = x.grad_fn, x._version, x.detach().numpy().copy()
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        x.mul_(yg.ones(4))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        yg.ones(2, dtype=yg.int64).mul_(yg.tensor([0.5, 0.5]))
    assert x.grad_fn is grad_fn and x._version == version
    np.testing.assert_array_equal(x.detach().numpy(), before)
    x.sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), np.full((2, 3), 2.0))


def test_a_failed_op_records_nothing_on_its_inputs() -> None:
    a = yg.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError):
        yg.mm(a, yg.ones(4, 5))
    assert a.grad is None and a.is_leaf and a._version == 0
    (a * 3).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full((2, 3), 3.0))


def test_slow_convolutions_refuse_a_kernel_size_that_is_not_the_weights() -> None:
    """kernel_size repeats the weight's sizes: PyTorch's dilated kernels refuse
    one that does not (its transposed kernels read past the weight), yamlgrad's
    slow_conv_* all do, with that text."""
    x4, w4 = yg.ones(1, 2, 6, 6), yg.ones(3, 2, 2, 2)
    x5, w5 = yg.ones(1, 2, 6, 6, 6), yg.ones(2, 2, 2, 2, 2)
    with pytest.raises(RuntimeError) as theirs:
        torch.ops.aten.slow_conv_dilated2d(
            torch.ones(1, 2, 6, 6), torch.ones(3, 2, 2, 2), [3, 3]
        )
    with pytest.raises(RuntimeError) as ours:
        VariableType.slow_conv_dilated2d(x4, w4, [3, 3])
    assert str(ours.value) == str(theirs.value)
    for call in (
        lambda: VariableType.slow_conv_dilated2d(x4, w4, [3, 3]),
        lambda: VariableType.slow_conv_transpose2d(x4, w4.transpose(0, 1), [3, 2]),
        lambda: VariableType.slow_conv_dilated3d(x5, w5, [2, 3, 2]),
        lambda: VariableType.slow_conv_transpose3d(x5, w5, [3, 3, 3]),
        lambda: VariableType.slow_conv3d_forward(x5, w5, [2, 2, 1], None, 1, 0),
    ):
        with pytest.raises(RuntimeError, match=r"^weight\[2:\] shape \[2, 2"):
            call()
    assert VariableType.slow_conv_dilated2d(x4, w4, [2, 2]).shape == (1, 3, 5, 5)


def test_argument_errors_name_the_op_as_it_is_called() -> None:
    for call in (
        "lib.add(lib.ones(2), lib.ones(2), beta=2)",
        "lib.ones(2).add(lib.ones(2), beta=2)",
    ):
        assert outcome(call, yg) == outcome(call, torch)
    with pytest.raises(TypeError, match=r"^add\(\) takes 2 positional arguments but 5"):
        yg.add(yg.ones(2), yg.ones(2), 1, 2, 3)
    with pytest.raises(TypeError, match=r"^exp\(\) takes 1 positional argument"):
        yg.exp(yg.ones(2), 3)


# -- wrong argument counts, keywords and types, for every public op --------------------

OPS = sorted(
    n for n in VariableType.__all__ if hasattr(torch, n) and callable(getattr(torch, n))
)
# Bad calls: (args built from one 2x2 tensor, kwargs).
KINDS: dict[str, tuple[Callable[[Any], tuple[Any, ...]], dict[str, Any]]] = {
    "too many positional": (lambda t: (t,) * 6, {}),
    "missing arguments": (lambda t: (), {}),
    "unknown keyword": (lambda t: (t,), {"foo": 1}),
    "str for the second": (lambda t: (t, "abc"), {}),
    "str for the first": (lambda t: ("abc",), {}),
}
# torch.einsum and torch.norm are Python functions in torch/functional.py: bad
# calls fail inside them with whatever their code hits first.
DIFFERENT_TYPE = {
    ("einsum", "too many positional"),
    ("einsum", "missing arguments"),
    ("einsum", "str for the first"),
    ("einsum", "str for the second"),
    ("norm", "str for the second"),
    ("norm", "str for the first"),
}


def failure(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict) -> Any:
    try:
        fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the exception is the result
        return type(e), str(e)
    return None


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("name", OPS)
def test_bad_call_raises_torchs_exception_type(name: str, kind: str) -> None:
    make, kwargs = KINDS[kind]
    ours = failure(getattr(yg, name), make(yg.ones(2, 2)), kwargs)
    theirs = failure(getattr(torch, name), make(torch.ones(2, 2)), kwargs)
    if theirs is None or (name, kind) in DIFFERENT_TYPE:
        return  # torch accepts the call, or fails from Python code (see above)
    assert ours is not None, f"{name}: torch raises {theirs}, yamlgrad does not"
    assert ours[0] is theirs[0], (ours, theirs)
    prefix = f"{name}(): argument "
    if theirs[1].startswith(prefix) and ours[1].startswith(prefix):
        assert ours[1] == theirs[1]


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("name", OPS)
def test_a_failed_call_changes_no_input(name: str, kind: str) -> None:
    make, kwargs = KINDS[kind]
    x = yg.ones(2, 2, requires_grad=True) * 1.0
    before = (x.detach().numpy().copy(), x._version, x.grad_fn)
    args = make(x)
    if failure(getattr(yg, name), args, kwargs) is None:
        return
    assert (x.detach().numpy() == before[0]).all()
    assert (x._version, x.grad_fn) == before[1:]


def test_a_str_for_a_tensor_names_the_argument_without_torch() -> None:
    with pytest.raises(TypeError, match=r"^abs\(\): argument 'input' \(position 1\) "):
        yg.abs("abc")
    with pytest.raises(TypeError, match=r"^flatten\(\): argument 'input' .* not str$"):
        yg.flatten("abc")
    with pytest.raises(
        TypeError, match=r"^hstack\(\): argument 'tensors' .* of Tensors"
    ):
        yg.hstack("abc")


METHODS = sorted(n for n in VariableType.METHODS if hasattr(torch.Tensor, n))
METHOD_KINDS: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "too many positional": ((1,) * 6, {}),
    "unknown keyword": ((), {"foo": 1}),
    "str for the first": (("abc",), {}),
}


@pytest.mark.parametrize("kind", list(METHOD_KINDS))
@pytest.mark.parametrize("name", METHODS)
def test_bad_method_call_raises_torchs_exception_type(name: str, kind: str) -> None:
    """Tensor methods: the types match; the texts differ as for the functions
    (torch says "Tensor.abs() takes no arguments (6 given)")."""
    args, kwargs = METHOD_KINDS[kind]
    x = yg.ones(2, 2)
    ours = failure(getattr(x, name), args, kwargs)
    theirs = failure(getattr(torch.ones(2, 2), name), args, kwargs)
    if theirs is None or (name, kind) == ("norm", "str for the first"):
        return  # accepted by torch, or Tensor.norm's Python code fails first
    assert ours is not None, f"Tensor.{name}: torch raises {theirs}, yamlgrad not"
    assert ours[0] is theirs[0], (ours, theirs)
    assert x._version == 0 and (x.numpy() == 1).all()
