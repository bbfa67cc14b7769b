"""Every derivatives.yaml entry with samples, compiled: the same values and gradients
as eager mode.

Driven by the YAML's own `samples`, as the per-entry gradient tests are: each
sample's call is wrapped in a function, compiled with yg.compile, and run next to
the same call in eager mode. The differentiable float tensors are the compiled
function's arguments; the other tensors (indices, masks) are made inside it, so
they become constants of the graph. A random cotangent per output (not `.sum()`)
keeps a transposed or wrongly reduced gradient from hiding.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from yamlgrad.runtime.compile import TraceError

import yamlgrad as yg
from support import INFOS, REFUSING, op_id
from yamlgrad.runtime.testing import (
    call,
    float_outputs,
    random_like,
    sample_inputs,
    slot_array,
)
from yamlgrad.generated import VariableType
from yamlgrad.tools.model import DifferentiabilityInfo

# A random entry (one that takes a Generator) draws anew in each run, so its
# compiled and eager values cannot agree; its gradients are zero by definition
# and are checked by the eager per-entry tests. A refusing entry's backward
# raises (acosh_): tests/ops/test_gradients.py pins that.
SAMPLED = tuple(i for i in INFOS if i.samples and not i.random and i not in REFUSING)
# float64 throughout: compiled and eager run the same kernels and formulas, so
# they agree far inside PyTorch's float64 tolerances.
TOLERANCE = {"rtol": 1e-7, "atol": 1e-9}


def _outputs(result: Any) -> list[Any]:
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _run(
    info: DifferentiabilityInfo,
    kwargs: dict[str, Any],
    slots: list[str],
    compiled: bool,
    rng_seed: int,
) -> tuple[list[np.ndarray], list[np.ndarray | None]]:
    """Values of every output and gradients of every slot, one way or the other."""
    leaves = [
        yg.tensor(slot_array(kwargs, s).copy(), requires_grad=True) for s in slots
    ]

    def fn(*tensors: Any) -> Any:
        return call(info, kwargs, dict(zip(slots, tensors)), VariableType)

    result = (yg.compile(fn) if compiled else fn)(*leaves)
    values = [o.detach()._data.copy() for o in _outputs(result)]
    differentiable = [o for o in float_outputs(result, info) if o.requires_grad]
    if differentiable:
        rng = np.random.default_rng(rng_seed)
        cotangents = [yg.tensor(random_like(rng, o)) for o in differentiable]
        yg.autograd.backward(differentiable, cotangents)
    return values, [None if t.grad is None else t.grad._data for t in leaves]


@pytest.mark.parametrize("info", SAMPLED, ids=op_id)
def test_compiled_matches_eager(info: DifferentiabilityInfo) -> None:
    rng = np.random.default_rng(0)
    for number, sample in enumerate(info.samples):
        kwargs, slots = sample_inputs(info, sample, rng, np.float64)
        eager = _run(info, kwargs, slots, compiled=False, rng_seed=number)
        where = f"{info.func} sample {number} ({sample.loc})"
        try:
            compiled = _run(info, kwargs, slots, compiled=True, rng_seed=number)
        except TraceError as refused:  # refused by name, never compiled wrong
            pytest.skip(f"{where}: yg.compile refuses it: {refused}")
        for want, got in zip(eager[0], compiled[0]):
            assert got.dtype == want.dtype, where
            np.testing.assert_allclose(got, want, **TOLERANCE, err_msg=where)
        for slot, want, got in zip(slots, eager[1], compiled[1]):
            assert (got is None) == (want is None), f"{where}: {slot}"
            if want is not None:
                np.testing.assert_allclose(
                    got, want, **TOLERANCE, err_msg=f"{where}: {slot}"
                )
