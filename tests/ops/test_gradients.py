"""Every op in derivatives.yaml: backward and double backward vs. central differences.

Driven by the YAML's own `samples`, so a new entry is covered with no test code. The
checks are the public yamlgrad.testing's (what an op pack runs over its own YAML): a
random cotangent per output (not `.sum()`) keeps a transposed or wrongly broadcast
gradient from hiding; inputs are float64 and drawn inside each entry's `domain`.
A random op (it takes a Generator) draws alike at every call of a check, and its
gradients are those of a constant (zero), as PyTorch defines them.
"""

from __future__ import annotations

import pytest

from support import DIFFERENTIABLE, op_id
from yamlgrad.generated import VariableType
from yamlgrad.testing import check_backward, check_double_backward, check_reproducible
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
