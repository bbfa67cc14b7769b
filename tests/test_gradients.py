"""Every op in derivatives.yaml: backward and double backward vs. central differences.

Driven by the YAML's own `samples`, so a new entry is covered with no test code. A
random cotangent (not `.sum()`) keeps a transposed or wrongly broadcast gradient
from hiding; inputs are float64 and drawn inside each entry's `domain`.
"""

from __future__ import annotations

import numpy as np
import pytest

import yamlgrad as yg
from conftest import DIFFERENTIABLE, call, numerical_vjp, op_id, sample_inputs
from yamlgrad.tools.model import DifferentiabilityInfo


@pytest.mark.parametrize("info", DIFFERENTIABLE, ids=op_id)
def test_backward_matches_finite_differences(info: DifferentiabilityInfo) -> None:
    rng = np.random.default_rng(0)
    for sample in info.samples:
        kwargs, names = sample_inputs(info, sample, rng, np.float64)
        assert names, f"{sample.loc}: a sample needs a differentiable float input"
        leaves = {n: yg.tensor(kwargs[n], requires_grad=True) for n in names}
        out = call(info, kwargs, leaves)
        assert out.grad_fn is not None and out.grad_fn.name() == info.op
        cotangent = rng.standard_normal(out.shape)
        out.backward(yg.tensor(cotangent))

        def f(*xs: np.ndarray) -> np.ndarray:
            tensors = {n: yg.tensor(x) for n, x in zip(names, xs)}
            return call(info, kwargs, tensors).numpy()

        expected = numerical_vjp(f, [kwargs[n].copy() for n in names], cotangent)
        for name, want in zip(names, expected):
            got = leaves[name].grad
            assert got is not None, f"{sample.loc}: no gradient for {name}"
            assert got.dtype == yg.float64 and got.shape == leaves[name].shape
            np.testing.assert_allclose(
                got.numpy(), want, rtol=1e-5, atol=1e-7, err_msg=f"{sample.loc}: {name}"
            )


@pytest.mark.parametrize("info", DIFFERENTIABLE, ids=op_id)
def test_double_backward_matches_finite_differences(info: DifferentiabilityInfo) -> None:
    """The first-order gradient, computed with create_graph=True, differentiated again."""
    rng = np.random.default_rng(1)
    for sample in info.samples:
        kwargs, names = sample_inputs(info, sample, rng, np.float64)
        shape = call(info, kwargs, {}).shape
        cotangent = rng.standard_normal(shape)
        # A second random direction for the vjp of the gradient itself.
        directions = [rng.standard_normal(kwargs[n].shape) for n in names]

        def first_order(tensors: dict[str, yg.Tensor]) -> tuple:
            out = call(info, kwargs, tensors)
            return yg.autograd.grad(
                out,
                [tensors[n] for n in names],
                yg.tensor(cotangent),
                create_graph=True,
                allow_unused=True,
            )

        leaves = {n: yg.tensor(kwargs[n], requires_grad=True) for n in names}
        grads = first_order(leaves)
        # <directions, grads> as a scalar, then its gradient.
        total = None
        for g, d in zip(grads, directions):
            if g is None or not g.requires_grad:
                continue
            term = (g * yg.tensor(d)).sum()
            total = term if total is None else total + term
        if total is None:
            continue  # the gradient does not depend on the inputs (a linear op)
        second = yg.autograd.grad(total, list(leaves.values()), allow_unused=True)

        def f(*xs: np.ndarray) -> np.ndarray:
            tensors = {n: yg.tensor(x, requires_grad=True) for n, x in zip(names, xs)}
            value = 0.0
            for g, d in zip(first_order(tensors), directions):
                if g is not None:
                    value += float(np.vdot(g.detach().numpy(), d))
            return np.asarray(value)

        expected = numerical_vjp(f, [kwargs[n].copy() for n in names], np.asarray(1.0))
        for name, got, want in zip(names, second, expected):
            got_array = np.zeros_like(want) if got is None else got.numpy()
            np.testing.assert_allclose(
                got_array, want, rtol=1e-4, atol=1e-6, err_msg=f"{sample.loc}: {name}"
            )
