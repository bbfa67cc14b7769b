"""autograd.grad(..., is_grads_batched=True): a batch of cotangents along the
first dimension of each grad_output gives gradients with that leading dimension,
as PyTorch's, in both libraries (first order and with create_graph)."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from support import libraries_under_test

ROWS = np.random.default_rng(0).standard_normal((4, 3, 2))


def _batched_grads(lib: ModuleType, create_graph: bool) -> list[np.ndarray]:
    x = lib.tensor([[1.0, -2.0], [0.5, 3.0], [2.0, 1.5]], dtype=lib.float64)
    w = lib.tensor([0.3, -0.7], dtype=lib.float64, requires_grad=True)
    x.requires_grad_(True)
    y = (x * w).sin() * x
    cotangents = lib.tensor(ROWS)
    gx, gw = lib.autograd.grad(
        y, (x, w), cotangents, create_graph=create_graph, is_grads_batched=True
    )
    out = [gx.detach().numpy(), gw.detach().numpy()]
    if create_graph:
        (second,) = lib.autograd.grad((gx * gx).sum() + gw.sum(), w)
        out.append(second.detach().numpy())
    return out


@pytest.mark.parametrize("create_graph", [False, True])
def test_batched_grad_outputs_match_torch_and_rows(create_graph: bool) -> None:
    results = [_batched_grads(lib, create_graph) for lib in libraries_under_test()]
    ours = results[0]
    assert ours[0].shape == (4, 3, 2) and ours[1].shape == (4, 2)
    for theirs in results[1:]:
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("lib", libraries_under_test(), ids=lambda m: m.__name__)
def test_a_0_dim_batched_grad_output_is_refused(lib: ModuleType) -> None:
    x = lib.ones(3, requires_grad=True)
    with pytest.raises(IndexError, match="^invalid index of a 0-dim tensor"):
        lib.autograd.grad(x * 2, x, lib.tensor(1.0), is_grads_batched=True)
