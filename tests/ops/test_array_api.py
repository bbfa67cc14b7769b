"""Every entry not marked `backends: [numpy]`, on array_api_strict, against numpy.

array_api_strict is the array API standard's reference implementation: it has
the standard's names and nothing else, so a kernel or a backward helper that
calls anything outside the standard fails here. For each YAML sample (float64),
the arguments are unpacked as the entry's wrapper unpacks them (its converters
and its type promotion), then the entry's checked `forward:` runs with `xp`
bound to array_api_strict and to numpy, and each first-order backward formula
runs on the strict arrays (with the strict forward's result and a random
cotangent) and on the numpy ones: values and gradients must agree, and must be
strict arrays. Random ops (a Generator argument) and composites (which run the
entries they call) are left out.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from support import INFOS, op_id
from yamlgrad.generated import Functions, VariableType
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.wrappers import variable_type_utils
from yamlgrad.testing import random_like, sample_inputs
from yamlgrad.tools.model import DifferentiabilityInfo

xps = pytest.importorskip("array_api_strict")
STRICT_ARRAY = type(xps.asarray(0.0))

PORTABLE = tuple(
    i
    for i in INFOS
    if not i.numpy_only and i.composite is None and not i.inplace and not i.random
)
# Complex samples the strict namespace does not take yet, each with its cause.
COMPLEX_CAUSES = {
    "mean": (TypeError, "the mean casts a complex sum to the real float dtype"),
    "mean_dim": (TypeError, "the mean casts a complex sum to the real float dtype"),
    "var_correction": (TypeError, "var's mean casts a complex sum to a real dtype"),
    "std_correction": (TypeError, "std's mean casts a complex sum to a real dtype"),
    "dot": (AssertionError, "dot's kernel is numpy's np.dot, a numpy scalar"),
    "vdot": (AssertionError, "vdot's kernel is numpy's np.vdot, a numpy scalar"),
}


def _portable() -> list[Any]:
    return [
        (
            pytest.param(
                i,
                marks=pytest.mark.xfail(
                    raises=COMPLEX_CAUSES[op_id(i)][0],
                    reason=COMPLEX_CAUSES[op_id(i)][1],
                ),
            )
            if op_id(i) in COMPLEX_CAUSES
            else i
        )
        for i in PORTABLE
    ]


def _unpacked(info: DifferentiabilityInfo, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The wrapper's locals for these arguments, on numpy arrays."""
    local: dict[str, Any] = {}
    for position, a in enumerate(info.func.arguments, 1):
        if a.name not in kwargs and a.py_default is None:
            continue
        value = kwargs[a.name] if a.name in kwargs else eval(a.py_default)  # noqa: S307
        if isinstance(value, np.ndarray):
            value = Tensor._make(value)
        elif isinstance(value, list) and a.is_tensor_list:
            value = [Tensor._make(v) for v in value]
        convert = getattr(variable_type_utils, a.converter)
        extra = {"size": a.type.size} if a.type.size else {}
        local[a.local] = convert(
            value, info.func.name, a.python_name, position, **extra
        )
    if info.type_promotion != "none":
        names = info.promotion_names
        promoted = variable_type_utils.promote_operands(
            *(local[n] for n in names),
            int_to_float=info.type_promotion == "int_to_float",
        )
        local.update(zip(names, promoted))
    return local


def _strict(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return xps.asarray(value)
    if isinstance(value, list):
        return [_strict(v) for v in value]
    return value


def _numpy(value: Any, what: str) -> Any:
    """A strict result as numpy, after checking it is one (not a numpy array)."""
    if isinstance(value, (tuple, list)):
        return [_numpy(v, what) for v in value]
    if value is None or isinstance(value, (int, float, bool)):
        return value
    assert isinstance(value, STRICT_ARRAY), f"{what} gave a {type(value).__name__}"
    return np.from_dlpack(value)


def _close(got: Any, want: Any, what: str) -> None:
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want), what
        for g, w in zip(got, want):
            _close(g, w, what)
        return
    if want is None:
        assert got is None, what
        return
    np.testing.assert_allclose(
        np.asarray(got, dtype=float) if np.asarray(want).dtype != bool else got,
        np.asarray(want, dtype=float) if np.asarray(want).dtype != bool else want,
        rtol=1e-10,
        atol=1e-12,
        err_msg=what,
    )


def _formula_names(
    info: DifferentiabilityInfo, local: dict[str, Any]
) -> dict[str, Any]:
    """The names a backward formula reads: each argument by its YAML name."""
    return {a.safe_name: local.get(a.local) for a in info.func.arguments}


@pytest.mark.parametrize("info", _portable(), ids=op_id)
def test_entry_on_array_api_strict_matches_numpy(info: DifferentiabilityInfo) -> None:
    rng = np.random.default_rng(0)
    numpy_globals = dict(vars(VariableType), xp=np)
    strict_globals = dict(vars(VariableType), xp=xps)
    for index, sample in enumerate(info.samples):
        where = f"{info.func} sample {index}"
        kwargs, _ = sample_inputs(info, sample, rng, np.float64)
        local = _unpacked(info, kwargs)
        strict_local = {k: _strict(v) for k, v in local.items()}
        want = eval(info.forward, numpy_globals, local)  # noqa: S307
        got = eval(info.forward, strict_globals, strict_local)  # noqa: S307
        got = _numpy(got, f"{where}: forward")
        _close(got, want, f"{where}: forward")
        if info.output_kind != "single" or not info.derivatives:
            continue
        cotangent = random_like(rng, np.asarray(want))
        names = dict(_formula_names(info, local), result=want, grad=cotangent)
        strict_names = dict(
            _formula_names(info, strict_local),
            result=xps.asarray(want),
            grad=xps.asarray(cotangent),
        )
        # An absent Tensor? input, or a Python number given for a Tensor (a
        # wrapped number): no gradient to compute for it.
        absent = {
            a.name
            for a in info.func.arguments
            if local.get(a.local) is None
            or (a.is_tensor and isinstance(local.get(a.local), (int, float)))
        }
        for d in info.derivatives:
            if d.not_implemented or d.uses_grads or d.is_list:
                continue  # PyTorch's placeholder raises; a list: not evaluated here
            if absent.issuperset(d.var_names):
                continue  # an absent Tensor? input has no gradient to compute
            what = f"{where}: {d.var_name}: {d.original_formula}"
            mask = {"grad_input_mask": [True] * len(d.var_names)}
            want_grad = eval(
                d.original_formula, vars(Functions), {**names, **mask}
            )  # noqa: S307
            got_grad = eval(  # noqa: S307
                d.original_formula, vars(Functions), {**strict_names, **mask}
            )
            _close(_numpy(got_grad, what), want_grad, what)
