"""Every op in derivatives.yaml: backward and double backward vs. central differences.

Driven by the YAML's own `samples`, so a new entry is covered with no test code. A
random cotangent per output (not `.sum()`) keeps a transposed or wrongly broadcast
gradient from hiding; inputs are float64 and drawn inside each entry's `domain`.
"""

from __future__ import annotations

import numpy as np
import pytest

import yamlgrad as yg
from conftest import (
    DIFFERENTIABLE,
    call,
    float_outputs,
    numerical_vjp,
    op_id,
    sample_inputs,
    slot_array,
)
from yamlgrad.tools.model import DifferentiabilityInfo


def _flat(outputs: list[yg.Tensor]) -> np.ndarray:
    return np.concatenate([o.detach().numpy().reshape(-1) for o in outputs])


@pytest.mark.parametrize("info", DIFFERENTIABLE, ids=op_id)
def test_backward_matches_finite_differences(info: DifferentiabilityInfo) -> None:
    rng = np.random.default_rng(0)
    for sample in info.samples:
        kwargs, slots = sample_inputs(info, sample, rng, np.float64)
        assert slots, f"{sample.loc}: a sample needs a differentiable float input"
        leaves = {
            s: yg.tensor(slot_array(kwargs, s), requires_grad=True) for s in slots
        }
        outputs = float_outputs(call(info, kwargs, leaves), info)
        assert outputs[0].grad_fn is not None
        assert outputs[0].grad_fn.name() == info.op
        cotangents = [rng.standard_normal(o.shape) for o in outputs]
        yg.autograd.backward(outputs, [yg.tensor(c) for c in cotangents])

        def f(*xs: np.ndarray) -> np.ndarray:
            tensors = {s: yg.tensor(x) for s, x in zip(slots, xs)}
            return _flat(float_outputs(call(info, kwargs, tensors), info))

        arrays = [slot_array(kwargs, s).copy() for s in slots]
        expected = numerical_vjp(f, arrays, _flat([yg.tensor(c) for c in cotangents]))
        for slot, want in zip(slots, expected):
            got = leaves[slot].grad
            assert got is not None, f"{sample.loc}: no gradient for {slot}"
            assert got.dtype == yg.float64 and got.shape == leaves[slot].shape
            np.testing.assert_allclose(
                got.numpy(), want, rtol=1e-5, atol=1e-7, err_msg=f"{sample.loc}: {slot}"
            )


@pytest.mark.parametrize("info", DIFFERENTIABLE, ids=op_id)
def test_double_backward_matches_finite_differences(
    info: DifferentiabilityInfo,
) -> None:
    """The first-order gradient, computed with create_graph=True, differentiated again."""
    rng = np.random.default_rng(1)
    for sample in info.samples:
        kwargs, slots = sample_inputs(info, sample, rng, np.float64)
        shapes = [o.shape for o in float_outputs(call(info, kwargs, {}), info)]
        cotangents = [yg.tensor(rng.standard_normal(shape)) for shape in shapes]
        # A second random direction for the vjp of the gradient itself.
        directions = [rng.standard_normal(slot_array(kwargs, s).shape) for s in slots]

        def first_order(tensors: dict[str, yg.Tensor]) -> tuple:
            outputs = float_outputs(call(info, kwargs, tensors), info)
            return yg.autograd.grad(
                outputs,
                [tensors[s] for s in slots],
                cotangents,
                create_graph=True,
                allow_unused=True,
            )

        leaves = {
            s: yg.tensor(slot_array(kwargs, s), requires_grad=True) for s in slots
        }
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
            tensors = {s: yg.tensor(x, requires_grad=True) for s, x in zip(slots, xs)}
            value = 0.0
            for g, d in zip(first_order(tensors), directions):
                if g is not None:
                    value += float(np.vdot(g.detach().numpy(), d))
            return np.asarray(value)

        arrays = [slot_array(kwargs, s).copy() for s in slots]
        expected = numerical_vjp(f, arrays, np.asarray(1.0))
        for slot, got, want in zip(slots, second, expected):
            got_array = np.zeros_like(want) if got is None else got.numpy()
            np.testing.assert_allclose(
                got_array, want, rtol=1e-4, atol=1e-6, err_msg=f"{sample.loc}: {slot}"
            )
