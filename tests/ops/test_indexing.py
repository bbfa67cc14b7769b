"""Basic indexing (`x[...]`) against torch: values, gradients, the node recorded."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import yamlgrad as yg

KEYS: list[Any] = [
    1,
    -1,
    (0, 2),
    slice(1, 3),
    slice(None, None, 2),
    (Ellipsis, 2),
    (slice(None), slice(-3, None), 1),
    (-1, Ellipsis, -2),
    (slice(None), None, slice(0, 5, 2)),
]


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_getitem_matches_torch(key: Any) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4, 5))
    x = yg.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    y, r = x[key], t[key]
    assert y.shape == tuple(r.shape)
    np.testing.assert_array_equal(y.detach().numpy(), r.detach().numpy())
    assert y.grad_fn.name() == type(r.grad_fn).__name__
    cotangent = rng.standard_normal(tuple(r.shape))
    y.backward(yg.tensor(cotangent))
    r.backward(torch.tensor(cotangent))
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_getitem_gradient_without_torch() -> None:
    x = yg.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    x[1, 1:3].sum().backward()
    expected = np.zeros((3, 4))
    expected[1, 1:3] = 1.0
    np.testing.assert_array_equal(x.grad.numpy(), expected)


@pytest.mark.parametrize(
    "key, message",
    [
        ((0, 0, 0), "too many indices for tensor of dimension 2"),
        ((Ellipsis, Ellipsis), "single ellipsis"),
        ("a", "only integers, slices"),
        (5, "index 5 out of range for tensor of size [3, 4] at dimension 0"),
    ],
)
def test_bad_index_is_refused(key: Any, message: str) -> None:
    x = yg.ones(3, 4)
    with pytest.raises(
        IndexError, match=message.replace("[", r"\[").replace("]", r"\]")
    ):
        x[key]
