"""The forward-mode AD steps of the generated wrappers (PyTorch's isFwGradDefined,
toNonOptFwGrad and _set_fw_grad paths of VariableType).

A wrapper asks `forward_ad_state.active and any_has_forward_grad(...)`: outside a
dual level that is one attribute read, and no call. When an input carries a tangent, the wrapper evaluates the op's
forward formula inside `formula_mode()` (forward AD paused, so the formula's own
ops see plain primals), reading each input's tangent with `tangent_of` (zeros when
it has none, as PyTorch's `_efficientzerotensor`), and attaches the result with
`set_fw_grad`. An entry whose forward derivative is derived from its backward
formulas calls `derived_jvp`: the double-backward trick, J v = d/du <J^T u, v>,
which holds because a backward formula is linear in the output's gradient u.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from yamlgrad.runtime.backend import dtype_kind
from yamlgrad.runtime import backend, dispatch
from yamlgrad.runtime.autograd.forward_ad import STATE as forward_ad_state
from yamlgrad.runtime.autograd.forward_ad import attach_tangent, formula_mode
from yamlgrad.runtime.autograd.grad_mode import enable_grad
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.errors import no_forward_formula

__all__ = [
    "forward_ad_state",
    "any_has_forward_grad",
    "tangent_of",
    "tangents_of",
    "formula_mode",
    "set_fw_grad",
    "set_fw_grads",
    "set_fw_grad_inplace",
    "derived_jvp",
    "no_forward_derivative",
    "index_tensors",
]


def any_has_forward_grad(*args: Any) -> bool:
    """Whether forward AD is on and an argument carries a tangent."""
    if not forward_ad_state.active:
        return False
    for a in args:
        if isinstance(a, Tensor) and a._fw_grad is not None:
            return True
    return False


def tangent_of(value: Any) -> Any:
    """An argument's tangent: its own, or zeros of its shape and dtype (a Python
    number's tangent is a 0-d zero); None for a missing optional tensor."""
    if value is None:
        return None
    if isinstance(value, Tensor):
        tangent = value._fw_grad
        if tangent is not None:
            return tangent
        data = value._data
        if type(data) is np.ndarray:
            return Tensor._make(np.zeros(data.shape, data.dtype))
        xp = backend.namespace_of(data)
        return Tensor._make(xp.zeros(data.shape, dtype=data.dtype))
    return Tensor._make(np.zeros((), np.result_type(value)))


def tangents_of(values: list[Any]) -> list[Any]:
    """The tangents of a Tensor[] argument, one per tensor."""
    return [tangent_of(v) for v in values]


def index_tensors(indices: list[Any]) -> list[Any]:
    """A `Tensor?[]` argument, unpacked to ndarrays by the wrapper, as Tensors
    again: what the op takes when a forward formula calls it."""
    return [None if i is None else Tensor._make(i) for i in indices]


def _fit(result: Tensor, tangent: Any) -> Tensor | None:
    """The tangent as a Tensor of the result's shape and dtype: a formula may
    give a Python number, or a value that still broadcasts (an input's zeros)."""
    if tangent is None:
        return None
    data = result._data
    xp = backend.namespace_of(data)
    if not isinstance(tangent, Tensor):
        tangent = Tensor._make(xp.asarray(tangent))
    if tangent._data.shape != data.shape:
        if tangent._requires_grad:
            tangent = dispatch.ops.expand(tangent, data.shape).clone()
        else:
            expanded = xp.broadcast_to(tangent._data, data.shape)
            tangent = Tensor._make(backend.copy(expanded))
    if tangent._data.dtype != data.dtype:
        if tangent._requires_grad:
            tangent = dispatch.ops._to_copy(tangent, dtype=data.dtype)
        else:
            tangent = Tensor._make(xp.astype(tangent._data, data.dtype))
    return tangent


def set_fw_grad(result: Tensor, tangent: Any) -> None:
    """Attach the forward formula's value as `result`'s tangent (PyTorch's
    `result._set_fw_grad(...)`); integer and bool results get none."""
    if dtype_kind(result._data.dtype) not in "fc":
        return
    tangent = _fit(result, tangent)
    if tangent is not None:
        attach_tangent(result, tangent)


def set_fw_grads(outputs: list[Tensor], tangents: Any) -> None:
    """The tangents of a tuple or list return, one per output (None: none)."""
    for output, tangent in zip(outputs, tangents):
        set_fw_grad(output, tangent)


def set_fw_grad_inplace(self: Tensor, tangent: Any) -> None:
    """An in-place op's new tangent for `self`. It is written into the tangent
    `self` has, so a view's tangent (a view of its base's tangent) updates the
    base's too, as PyTorch updates tangents in place; a view without one first
    gets its part of its base's tangent (zeros for a base without one)."""
    if dtype_kind(self._data.dtype) not in "fc":
        return
    tangent = _fit(self, tangent)
    if tangent is None:
        return
    current = self._fw_grad
    if current is None and self._base is not None:
        current = _tangent_view_of_base(self)
    if (
        current is None
        or current._requires_grad
        or tangent._requires_grad
        or not current._data.flags.writeable
        or current._data.shape != tangent._data.shape
    ):
        attach_tangent(self, tangent)
        return
    np.copyto(current._data, tangent._data)
    current.version_counter.bump()


def _tangent_view_of_base(view: Tensor) -> Tensor | None:
    """The part of the base's tangent under `view`, attached to both (None when
    the base's layout does not allow it: the view keeps a tangent of its own)."""
    base = view._base
    base_tangent = base._fw_grad
    if base_tangent is None:
        base_tangent = Tensor._make(np.zeros_like(base._data))
        if not base_tangent._data.flags.c_contiguous:
            return None
        attach_tangent(base, base_tangent)
    buffer, data = base_tangent._data, view._data
    if (
        base_tangent._requires_grad
        or not buffer.flags.c_contiguous
        or buffer.strides != base._data.strides
        or buffer.dtype != data.dtype
    ):
        return None
    offset = (
        data.__array_interface__["data"][0] - base._data.__array_interface__["data"][0]
    )
    part = np.ndarray(data.shape, data.dtype, buffer, offset, data.strides)
    result = Tensor._make(part)
    attach_tangent(view, result)
    return result


def _input_for(value: Any, keep_graph: bool) -> Any:
    """What the op runs on again for one argument (a list for a Tensor[]): a
    floating tensor becomes a fresh leaf that requires grad, or, when the JVP
    must stay differentiable (forward-over-reverse), an alias of the tensor
    itself, so that the tangent depends on it. Anything else stays as it is."""
    if isinstance(value, list):
        return [_input_for(v, keep_graph) for v in value]
    if not isinstance(value, Tensor) or dtype_kind(value._data.dtype) not in "fc":
        return value
    if keep_graph and value._requires_grad:
        return dispatch.ops.alias(value)  # its own tensor, even for f(x, x)
    leaf = Tensor._make(value._data)
    leaf._requires_grad = True
    return leaf


def _pairs(leaf: Any, tangent: Any) -> list[tuple[Tensor, Any]]:
    if isinstance(leaf, list):
        return [p for lv, t in zip(leaf, tangent) for p in _pairs(lv, t)]
    return [(leaf, tangent)] if isinstance(leaf, Tensor) and leaf._requires_grad else []


def _requires_grad(values: Any) -> bool:
    return any(
        (
            _requires_grad(v)
            if isinstance(v, list)
            else isinstance(v, Tensor) and v._requires_grad
        )
        for v in values
    )


def no_forward_derivative(op: str) -> Any:
    """The JVP of an op none can be derived for (a backward formula is PyTorch's
    not_implemented placeholder, as igamma's): PyTorch's refusal."""
    raise NotImplementedError(no_forward_formula(op))


def derived_jvp(
    op: Callable[..., Any], args: Mapping[str, Any], tangents: Mapping[str, Any]
) -> Any:
    """J v of `op` at `args` for the tangents v, from its backward formulas.

    The op runs again on fresh leaves (on aliases of the inputs when grad mode
    is on and one requires grad, so that J v is recorded as a function of them:
    forward-over-reverse); with a cotangent u that requires grad, g(u) = J^T u is
    built with create_graph=True, and J v is the gradient of Re<g(u), v> with
    respect to u: the vector-Jacobian product of g with v, which holds for
    complex values too (g is only real-linear in u there). Returns one tangent
    per output (a tuple for
    a tuple return), None for an output that is not floating.
    """
    from yamlgrad.runtime import autograd
    from yamlgrad.runtime.autograd.grad_mode import is_grad_enabled

    keep_graph = is_grad_enabled() and _requires_grad(
        [*args.values(), *tangents.values()]
    )
    with enable_grad():
        leaves = {name: _input_for(args[name], keep_graph) for name in tangents}
        pairs = [p for name in leaves for p in _pairs(leaves[name], tangents[name])]
        out = op(**{**args, **leaves})
        outputs = list(out) if isinstance(out, (tuple, list)) else [out]
        live = [
            o for o in outputs if dtype_kind(o._data.dtype) in "fc" and o.requires_grad
        ]
        cotangents = [
            _input_for(Tensor._make(np.zeros_like(o._data)), False) for o in live
        ]
        grads = autograd.grad(
            live,
            [leaf for leaf, _ in pairs],
            cotangents,
            create_graph=True,
            allow_unused=True,
        )
        used = [
            (g, tangent)
            for (_, tangent), g in zip(pairs, grads)
            if g is not None and g.requires_grad
        ]
        jvps: Any = [None] * len(live)
        if used:
            jvps = autograd.grad(
                [g for g, _ in used],
                cotangents,
                [tangent for _, tangent in used],
                allow_unused=True,
                create_graph=keep_graph,
            )
    by_output = {id(o): j for o, j in zip(live, jvps)}
    results = []
    for o in outputs:
        jvp = by_output.get(id(o))
        results.append(_zeros_if_floating(o) if jvp is None else jvp)
    return tuple(results) if isinstance(out, (tuple, list)) else results[0]


def _zeros_if_floating(output: Tensor) -> Tensor | None:
    if dtype_kind(output._data.dtype) not in "fc":
        return None
    return Tensor._make(np.zeros_like(output._data))
