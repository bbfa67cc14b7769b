"""Every differentiable op in derivatives.yaml in forward mode, from its samples.

The JVP from each entry's forward derivative (written, `auto_element_wise`,
`auto_linear`, or derived from the backward formulas) against a central
difference, against the entry's own backward formulas (the adjoint identity
<u, J v> = <J^T u, v>, exact up to rounding), and against torch's forward AD;
`auto_linear` entries are checked to be linear and `auto_element_wise` ones to
have a diagonal Jacobian. Nothing is listed by hand: the YAML says which entry
gets which check.
"""

from __future__ import annotations

import numpy as np
import pytest

from support import DIFFERENTIABLE, op_id
from yamlgrad.generated import VariableType
from yamlgrad.runtime.testing_forward import (
    check_adjoint,
    check_diagonal_jacobian,
    check_forward,
    check_linearity,
)
from yamlgrad.tools.model import DifferentiabilityInfo

AUTO_LINEAR = tuple(i for i in DIFFERENTIABLE if "auto_linear" in i.forward_kind)
ELEMENT_WISE = tuple(
    i for i in DIFFERENTIABLE if "auto_element_wise" in i.forward_kind
)


def test_every_differentiable_entry_has_a_forward_derivative() -> None:
    assert all(info.forward_derivatives for info in DIFFERENTIABLE)


@pytest.mark.parametrize("info", DIFFERENTIABLE, ids=op_id)
def test_jvp_matches_finite_differences(info: DifferentiabilityInfo) -> None:
    assert check_forward(info, VariableType) == len(info.samples)


@pytest.mark.parametrize("info", DIFFERENTIABLE, ids=op_id)
def test_forward_and_backward_formulas_are_adjoint(info: DifferentiabilityInfo) -> None:
    assert check_adjoint(info, VariableType) == len(info.samples)


@pytest.mark.parametrize("info", AUTO_LINEAR, ids=op_id)
def test_auto_linear_entry_is_linear(info: DifferentiabilityInfo) -> None:
    assert check_linearity(info, VariableType) > 0


@pytest.mark.parametrize("info", ELEMENT_WISE, ids=op_id)
def test_auto_element_wise_entry_has_a_diagonal_jacobian(
    info: DifferentiabilityInfo,
) -> None:
    assert check_diagonal_jacobian(info, VariableType) == len(info.samples)
