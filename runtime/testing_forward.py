"""Forward-mode checks of a YAML entry, from its samples (yamlgrad.testing's
forward half).

For each sample, inputs are float64, drawn inside the entry's `domain`, with a
random tangent per differentiable input:

* `check_forward`: the JVP from the forward formula (dual tensors through the
  generated wrapper) against a central difference along the tangent.
* `check_adjoint`: <u, J v> from the forward formula against <J^T u, v> from the
  backward formulas: the two derivatives of one entry must be each other's
  transpose, up to rounding (no finite differences).
* `check_linearity`: an `auto_linear` entry is linear in its differentiable
  inputs, f(a x + b y) = a f(x) + b f(y).
* `check_diagonal_jacobian`: an `auto_element_wise` entry's JVP is the
  element-wise product of its JVP along ones with the tangent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from yamlgrad.runtime import autograd
from yamlgrad.runtime.autograd import forward_ad
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.factories import tensor
from yamlgrad.runtime.testing import (
    FIRST_ORDER,
    OpCheckError,
    _compare,
    _flat,
    _where,
    call,
    differentiable_once,
    float_outputs,
    random_like,
    real_inner,
    sample_inputs,
    slot_array,
)

if TYPE_CHECKING:
    from yamlgrad.tools.model import DifferentiabilityInfo

__all__ = [
    "check_adjoint",
    "check_diagonal_jacobian",
    "check_forward",
    "check_linearity",
    "jvp_of",
]

# <u, J v> and <J^T u, v> differ only by rounding.
ADJOINT = {"rtol": 1e-9, "atol": 1e-12}
EXACT = {"rtol": 1e-10, "atol": 1e-12}
EPS = 1e-6


def jvp_of(
    info: DifferentiabilityInfo,
    kwargs: dict[str, object],
    tangents: dict[str, np.ndarray],
    module: Any,
) -> tuple[list[Tensor], list[np.ndarray]]:
    """The outputs and their tangents (zeros for none), through dual tensors."""
    with forward_ad.dual_level():
        duals = {
            s: forward_ad.make_dual(tensor(slot_array(kwargs, s)), tensor(t))
            for s, t in tangents.items()
        }
        outputs = float_outputs(call(info, kwargs, duals, module), info)
        jvps = []
        for o in outputs:
            tangent = forward_ad.unpack_dual(o).tangent
            if tangent is not None and tangent.shape != o.shape:
                raise OpCheckError(
                    f"{info.func}: tangent of shape {tuple(tangent.shape)} for an "
                    f"output of shape {tuple(o.shape)}"
                )
            jvps.append(
                np.zeros(o.shape, o.numpy().dtype)
                if tangent is None
                else tangent.detach().numpy()
            )
    return [o.detach() for o in outputs], jvps


def _directions(
    kwargs: dict[str, object], slots: list[str], rng: np.random.Generator
) -> dict[str, np.ndarray]:
    return {s: random_like(rng, slot_array(kwargs, s)) for s in slots}


def _samples(info: DifferentiabilityInfo, seed: int) -> Any:
    rng = np.random.default_rng(seed)
    for index, sample in enumerate(info.samples):
        where = _where(info, index, sample)
        kwargs, slots = sample_inputs(info, sample, rng, np.float64)
        if not slots:
            raise OpCheckError(f"{where}: a sample needs a differentiable float input")
        yield where, kwargs, slots, rng


def _evaluate(
    info: DifferentiabilityInfo, kwargs: dict[str, object], module: Any
) -> Callable[[dict[str, np.ndarray]], np.ndarray]:
    def f(arrays: dict[str, np.ndarray]) -> np.ndarray:
        tensors = {s: tensor(x) for s, x in arrays.items()}
        return _flat(float_outputs(call(info, kwargs, tensors, module), info))

    return f


def _check_refusal(
    info: DifferentiabilityInfo,
    kwargs: dict[str, object],
    tangents: dict[str, np.ndarray],
    module: Any,
    where: str,
) -> None:
    """An entry with a not_implemented backward formula has no JVP: forward AD
    raises PyTorch's NotImplementedError."""
    try:
        jvp_of(info, kwargs, tangents, module)
    except NotImplementedError as error:
        if "Trying to use forward AD with" in str(error):
            return
        raise
    raise OpCheckError(f"{where}: forward AD should be refused")


def _refuses_forward_ad(info: DifferentiabilityInfo) -> bool:
    """A not_implemented backward formula, or `result: not_implemented`."""
    return any(d.not_implemented for d in info.derivatives) or differentiable_once(info)


def check_forward(info: DifferentiabilityInfo, module: Any, seed: int = 2) -> int:
    """The JVP against a central difference along the tangent (for an entry
    without one, PyTorch's refusal)."""
    for where, kwargs, slots, rng in _samples(info, seed):
        tangents = _directions(kwargs, slots, rng)
        if _refuses_forward_ad(info):
            _check_refusal(info, kwargs, tangents, module, where)
            continue
        _, jvps = jvp_of(info, kwargs, tangents, module)
        f = _evaluate(info, kwargs, module)
        up = {s: slot_array(kwargs, s) + EPS * tangents[s] for s in slots}
        down = {s: slot_array(kwargs, s) - EPS * tangents[s] for s in slots}
        want = (f(up) - f(down)) / (2 * EPS)
        if (
            info.draw_is_constant
        ):  # the draw is a constant to autograd (runtime/testing.py)
            want = np.zeros_like(want)
        got = np.concatenate([j.reshape(-1) for j in jvps]) if jvps else want
        _compare(got, want, where, "forward-mode JVP", FIRST_ORDER)
    return len(info.samples)


def check_adjoint(info: DifferentiabilityInfo, module: Any, seed: int = 3) -> int:
    """<u, J v> (forward formula) equals <J^T u, v> (backward formulas); for an
    entry without a JVP, PyTorch's refusal."""
    for where, kwargs, slots, rng in _samples(info, seed):
        tangents = _directions(kwargs, slots, rng)
        if _refuses_forward_ad(info):
            _check_refusal(info, kwargs, tangents, module, where)
            continue
        _, jvps = jvp_of(info, kwargs, tangents, module)
        cotangents = [random_like(rng, j) for j in jvps]
        forward = sum(real_inner(u, j) for u, j in zip(cotangents, jvps))
        leaves = {s: tensor(slot_array(kwargs, s), requires_grad=True) for s in slots}
        outputs = float_outputs(call(info, kwargs, leaves, module), info)
        grads = autograd.grad(
            outputs,
            list(leaves.values()),
            [tensor(u) for u in cotangents],
            allow_unused=True,
        )
        backward = sum(
            real_inner(g.numpy(), tangents[s])
            for s, g in zip(slots, grads)
            if g is not None
        )
        _compare(
            np.asarray([forward]),
            np.asarray([backward]),
            where,
            "<u, J v> from the forward formula against <J^T u, v> from the backward",
            ADJOINT,
        )
    return len(info.samples)


def check_linearity(info: DifferentiabilityInfo, module: Any, seed: int = 4) -> int:
    """f(a x + b y) = a f(x) + b f(y) in the differentiable inputs. A sample that
    gives one of them as a Python number (a fixed offset) is left out; returns
    the number of samples checked."""
    checked = 0
    differentiable = {n for d in info.derivatives for n in d.var_names}
    for where, kwargs, slots, rng in _samples(info, seed):
        if any(
            not isinstance(kwargs.get(n), (np.ndarray, list)) for n in differentiable
        ):
            continue
        checked += 1
        f = _evaluate(info, kwargs, module)
        x = {s: slot_array(kwargs, s) for s in slots}
        y = _directions(kwargs, slots, rng)
        a, b = 0.7, -1.3
        mixed = f({s: a * x[s] + b * y[s] for s in slots})
        _compare(mixed, a * f(x) + b * f(y), where, "f(a x + b y)", EXACT)
    return checked


def check_diagonal_jacobian(
    info: DifferentiabilityInfo, module: Any, seed: int = 5
) -> int:
    """J v = (J 1) * v: the Jacobian of an element-wise entry is diagonal. On a
    complex input, whose JVP is linear over the reals only (conj, abs),
    J v = (J 1) * Re v + (J i) * Im v."""
    for where, kwargs, slots, rng in _samples(info, seed):
        (slot,) = slots
        v = _directions(kwargs, slots, rng)[slot]
        _, (along_ones,) = jvp_of(info, kwargs, {slot: np.ones_like(v)}, module)
        _, (along_v,) = jvp_of(info, kwargs, {slot: v}, module)
        if along_v.shape != v.shape:
            raise OpCheckError(f"{where}: an element-wise output has another shape")
        want = along_ones * v
        if v.dtype.kind == "c":
            _, (along_i,) = jvp_of(info, kwargs, {slot: np.full_like(v, 1j)}, module)
            want = along_ones * v.real + along_i * v.imag
        _compare(along_v, want, where, "J v against (J 1) * v", EXACT)
    return len(info.samples)
