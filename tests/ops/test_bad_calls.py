"""Calls numpy refuses raise PyTorch's error for the same call (type and text),
never numpy's; a failed op leaves its inputs, their versions and the graph as
they were."""

from __future__ import annotations

import numpy as np
import pytest

import yamlgrad as yg

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
