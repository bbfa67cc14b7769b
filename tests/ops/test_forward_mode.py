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

from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
import yamlgrad.autograd.forward_ad as fwad
from support import (
    random_like,
    DIFFERENTIABLE,
    build_args,
    call_torch,
    call_yamlgrad,
    float_outputs,
    gauge_factors,
    op_id,
    sample_inputs,
    slot_array,
)
from yamlgrad.generated import VariableType
from yamlgrad.runtime.testing_forward import (
    check_adjoint,
    check_diagonal_jacobian,
    check_forward,
    check_linearity,
)
from yamlgrad.tools.model import DifferentiabilityInfo

AUTO_LINEAR = tuple(i for i in DIFFERENTIABLE if "auto_linear" in i.forward_kind)
ELEMENT_WISE = tuple(i for i in DIFFERENTIABLE if "auto_element_wise" in i.forward_kind)


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


# Entries whose torch forward AD is wrong, each with the evidence; their JVP is
# checked against finite differences and their backward formulas above.
TORCH_FORWARD_AD_WRONG = {
    "cholesky_inverse": "torch's cholesky_inverse_jvp fails its own gradcheck "
    "(check_forward_ad=True) against finite differences",
    "triangular_solve": "torch's triangular_solve_jvp reads the whole tangent of A, "
    "where the solve (and finite differences) read one triangle",
}


def _duals(lib: Any, fwad: Any, kwargs: dict, slots: list[str], tangents: dict) -> dict:
    """The sample's arguments in `lib`, each differentiable slot a dual tensor."""
    duals = {
        s: fwad.make_dual(lib.tensor(slot_array(kwargs, s)), lib.tensor(tangents[s]))
        for s in slots
    }
    return build_args(kwargs, duals, lib.tensor)


@pytest.mark.parametrize("info", DIFFERENTIABLE, ids=op_id)
def test_jvp_matches_torch_forward_ad(info: DifferentiabilityInfo) -> None:
    """The tangents of every output, against torch.autograd.forward_ad on the same
    call as a user writes it. An op torch has no forward formula for is skipped,
    with torch's own message; a sample torch computes no tangent at all for
    (scatter_reduce's prod: its scatter_reduce_jvp leaves it undefined) is left
    to the finite differences."""
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as torch_fwad

    if info.func.name in TORCH_FORWARD_AD_WRONG:
        pytest.skip(TORCH_FORWARD_AD_WRONG[info.func.name])
    if info.random and not info.draw_is_constant:
        pytest.skip("its tangent depends on a draw torch makes differently")

    rng = np.random.default_rng(6)
    for sample in info.samples:
        where = str(sample.loc)
        kwargs, slots = sample_inputs(info, sample, rng, np.float64)
        tangents = {s: random_like(rng, slot_array(kwargs, s)) for s in slots}
        with torch_fwad.dual_level():
            values = _duals(torch, torch_fwad, kwargs, slots, tangents)
            try:
                theirs = float_outputs(call_torch(torch, info, values), info)
            except NotImplementedError as error:
                pytest.skip(str(error).splitlines()[0])
            want = [torch_fwad.unpack_dual(o).tangent for o in theirs]
            want = [None if t is None else t.numpy(force=True) for t in want]
            primals = [o.detach().numpy(force=True) for o in theirs]
        with fwad.dual_level():
            values = _duals(yg, fwad, kwargs, slots, tangents)
            ours = float_outputs(call_yamlgrad(info, values), info)
            got = [fwad.unpack_dual(o).tangent for o in ours]
            got = [None if t is None else t.numpy() for t in got]
        # A singular vector's tangent has its vector's sign (numpy's or MKL's).
        factors = gauge_factors(info, [o.detach().numpy() for o in ours], primals)
        want = [w if f is None or w is None else w * f for w, f in zip(want, factors)]
        if all(w is None for w in want) and any(g is not None for g in got):
            continue
        assert len(got) == len(want), where
        for g, w, o in zip(got, want, ours):
            g = np.zeros(o.shape) if g is None else g
            w = np.zeros(o.shape) if w is None else w
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, err_msg=where)
