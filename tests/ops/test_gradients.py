"""Every op in derivatives.yaml: backward and double backward vs. central differences.

Driven by the YAML's own `samples`, so a new entry is covered with no test code. The
checks are the public yamlgrad.testing's (what an op pack runs over its own YAML): a
random cotangent per output (not `.sum()`) keeps a transposed or wrongly broadcast
gradient from hiding; inputs are float64 and drawn inside each entry's `domain`.
A random op (it takes a Generator) draws alike at every call of a check, and its
gradients are those of a constant (zero), as PyTorch defines them.
"""

from __future__ import annotations

import numpy as np
import pytest

from support import DIFFERENTIABLE, REFUSING, op_id, refused_node
from yamlgrad import autograd, tensor
from yamlgrad.generated import VariableType
from yamlgrad.testing import (
    call,
    check_backward,
    check_double_backward,
    check_reproducible,
    float_outputs,
)
from yamlgrad.tools.model import DifferentiabilityInfo


@pytest.mark.parametrize("info", DIFFERENTIABLE, ids=op_id)
def test_backward_matches_finite_differences(info: DifferentiabilityInfo) -> None:
    assert check_backward(info, VariableType) == len(info.samples)


@pytest.mark.parametrize("info", DIFFERENTIABLE, ids=op_id)
def test_double_backward_matches_finite_differences(
    info: DifferentiabilityInfo,
) -> None:
    """The first-order gradient, computed with create_graph=True, differentiated again."""
    assert check_double_backward(info, VariableType) == len(info.samples)


@pytest.mark.parametrize("info", [i for i in DIFFERENTIABLE if i.random], ids=op_id)
def test_random_op_gives_one_draw_per_seed(info: DifferentiabilityInfo) -> None:
    assert check_reproducible(info, VariableType) == len(info.samples)


@pytest.mark.parametrize("info", REFUSING, ids=op_id)
def test_a_node_without_derivatives_raises_at_backward(
    info: DifferentiabilityInfo,
) -> None:
    """Every formula not_implemented (_cdist_backward): the result requires grad,
    and its backward raises PyTorch's NotImplementedError."""
    rng = np.random.default_rng(0)
    for sample in info.samples:
        kwargs = sample.materialize(rng, np.float64)
        leaves = {
            name: tensor(value, requires_grad=True)
            for name, value in kwargs.items()
            if isinstance(value, np.ndarray) and value.dtype.kind == "f"
        }
        (output,) = float_outputs(call(info, kwargs, leaves, VariableType), info)
        assert type(output.grad_fn).__name__ == refused_node(info)
        with pytest.raises(NotImplementedError, match="the derivative for '.*' is"):
            autograd.backward([output], [tensor(np.ones(output.shape))])
