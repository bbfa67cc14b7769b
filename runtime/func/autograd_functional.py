"""`yamlgrad.autograd.functional`: torch.autograd.functional over the engine.

vjp, jvp, jacobian, hessian, vhp and hvp take a function of Tensors and Tensors (or
tuples of them) and return derivatives, with PyTorch's signatures, checks and
error texts. Three decisions, PyTorch's:

* Each input is replaced by a new tensor (a detached leaf, or with
  `create_graph=True` a differentiable alias of an input that requires grad), so
  an input the function also captures from outside is told apart.
* jvp and hvp use the double-backward trick, as PyTorch's do: the backward of a
  backward is linear in its seed, so differentiating `u -> J^T u` at any `u`
  with seed `v` gives `J v`.
* `vectorize=True` maps the vector-Jacobian products over the standard basis with
  vmap instead of a Python loop, and `strategy="forward-mode"` builds the Jacobian
  column by column by forward-mode AD on dual tensors, func.jvp vmapped over the
  basis (it needs `vectorize=True`, as in PyTorch).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from yamlgrad.runtime import autograd, factories
from yamlgrad.runtime.autograd.grad_mode import (
    enable_grad,
    is_grad_enabled,
    set_grad_enabled,
)
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.errors import (
    ERR_FORWARD_CREATE_GRAPH,
    ERR_FORWARD_STRICT,
    ERR_FORWARD_VECTORIZE,
    ERR_FUNCTIONAL_TYPE,
    ERR_FUNCTIONAL_TYPE_AT,
    ERR_HESSIAN_STRATEGY,
    ERR_SINGLE_ELEMENT,
    ERR_SINGLE_TENSOR,
    ERR_STRATEGY,
    ERR_STRICT_CREATE_GRAPH,
    ERR_STRICT_GRAD_INPUTS,
    ERR_STRICT_HESSIAN,
    ERR_STRICT_HESSIAN_INDEPENDENT,
    ERR_STRICT_INDEPENDENT,
    ERR_STRICT_INDEPENDENT_TRICK,
    ERR_STRICT_JACOBIAN,
    ERR_STRICT_JACOBIAN_INDEPENDENT,
    ERR_STRICT_JACOBIAN_OUTPUT,
    ERR_STRICT_OUTPUT,
    ERR_V_LENGTH,
    ERR_V_NONE_INPUT,
    ERR_V_NONE_OUTPUT,
    ERR_V_SINGLE,
    ERR_V_SIZE,
    ERR_VECTORIZE_STRICT,
)
from yamlgrad.runtime.func import eager_transforms
from yamlgrad.runtime.func.batched_tensor import BatchedTensor
from yamlgrad.runtime.func.vmap import vmap as _vmap

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]

Tensors = tuple[Tensor, ...]


def _as_tuple(value: Any, arg: str, fn: str | None) -> tuple[bool, Tensors]:
    """Whether `value` was a tuple, and it as a tuple of Tensors (checked)."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for index, item in enumerate(items):
        if not isinstance(item, Tensor):
            text = ERR_FUNCTIONAL_TYPE_AT if is_tuple else ERR_FUNCTIONAL_TYPE
            raise TypeError(text.format(arg=arg, fn=fn, index=index, kind=type(item)))
    return is_tuple, items


def _untuple(result: Any, keep: bool | tuple[bool, bool]) -> Any:
    """`_as_tuple` undone (for a nested result, on both levels)."""
    if isinstance(keep, tuple):
        if not keep[1]:
            result = tuple(r[0] for r in result)
        keep = keep[0]
    return result if keep else result[0]


def _fresh(inputs: Tensors, create_graph: bool, need_graph: bool) -> Tensors:
    return tuple(
        (
            ops.alias(t)
            if create_graph and t.requires_grad
            else t.detach().requires_grad_(need_graph)
        )
        for t in inputs
    )


def _released(values: Any, create_graph: bool) -> Any:
    if isinstance(values, Tensor):
        return values if create_graph else values.detach()
    return tuple(_released(v, create_graph) for v in values)


def _check_v(v: Tensors, other: Tensors, other_is_tuple: bool) -> None:
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError(ERR_V_LENGTH.format(expected=len(other), got=len(v)))
        raise RuntimeError(ERR_V_SINGLE)
    for index, (given, ref) in enumerate(zip(v, other)):
        if given.shape != ref.shape:
            prefix = f"Entry {index} in " if other_is_tuple else ""
            raise RuntimeError(
                ERR_V_SIZE.format(prefix=prefix, expected=ref.shape, got=given.shape)
            )


_STRICT_TEXTS = {
    "outputs": ERR_STRICT_OUTPUT,
    "grad_inputs": ERR_STRICT_GRAD_INPUTS,
    "jacobian": ERR_STRICT_JACOBIAN,
    "hessian": ERR_STRICT_HESSIAN,
}


def _check_requires_grad(values: Any, kind: str, strict: bool) -> None:
    if not strict:
        return
    for i, value in enumerate(values):
        if value is None:
            raise RuntimeError(ERR_STRICT_INDEPENDENT.format(i=i))
        if not value.requires_grad:
            raise RuntimeError(_STRICT_TEXTS[kind].format(i=i))


def _grad(
    outputs: Any, inputs: Tensors, seeds: Any = None, create_graph: bool = False
) -> tuple:
    """autograd.grad over the outputs that require grad, None where unused."""
    seeds = (None,) * len(outputs) if seeds is None else seeds
    pairs = [
        (o, s) for o, s in zip(outputs, seeds) if o is not None and o.requires_grad
    ]
    if not pairs:
        return (None,) * len(inputs)
    if any(isinstance(t, BatchedTensor) for t in (*inputs, *(o for o, _ in pairs))):
        # Under vmap (a forward-mode Jacobian's columns): through the transforms'
        # backward, which sees the physical tensors.
        leaves = [eager_transforms.Leaf.wrapping(t) for t in inputs]
        cotangents = [factories.ones_like(o) if s is None else s for o, s in pairs]
        outs = [o for o, _ in pairs]
        return tuple(eager_transforms.backward(outs, cotangents, leaves, create_graph))
    return autograd.grad(
        [o for o, _ in pairs],
        inputs,
        [s for _, s in pairs],
        retain_graph=True,
        create_graph=create_graph,
        allow_unused=True,
    )


_ZERO_TEXTS = {
    "back": ERR_STRICT_INDEPENDENT,
    "back_trick": ERR_STRICT_INDEPENDENT_TRICK,
    "double_back": ERR_STRICT_JACOBIAN_INDEPENDENT,
    "double_back_trick": ERR_STRICT_HESSIAN_INDEPENDENT,
}


def _zeros_for_none(
    grads: tuple, refs: Tensors, strict: bool, create_graph: bool, stage: str
) -> Tensors:
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_ZERO_TEXTS[stage].format(i=i))
            g = factories.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(ERR_STRICT_CREATE_GRAPH.format(what=what, i=i))
        out.append(g)
    return tuple(out)


def _seed(
    v: Any, refs: Tensors, refs_tuple: bool, fn: str, create_graph: bool, none_text: str
) -> Any:
    if v is None:
        if len(refs) != 1 or refs[0].numel() != 1:
            raise RuntimeError(none_text)
        return None
    _, v = _as_tuple(v, "v", fn)
    v = _fresh(v, create_graph, False)
    _check_v(v, refs, refs_tuple)
    return v


def _run(
    func: Callable[..., Any], inputs: Tensors, fn: str, strict: bool
) -> tuple[bool, Tensors]:
    is_tuple, outputs = _as_tuple(
        func(*inputs), "outputs of the user-provided function", fn
    )
    _check_requires_grad(outputs, "outputs", strict)
    return is_tuple, outputs


def vjp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple:
    """The function's output and the vector-Jacobian product `v^T J`.

    >>> out, g = yg.autograd.functional.vjp(lambda x: x ** 2, yg.ones(2), yg.ones(2))
    >>> g
    tensor([2., 2.])
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _fresh(inputs, create_graph, True)
        outputs_tuple, outputs = _run(func, inputs, "vjp", strict)
        v = _seed(v, outputs, outputs_tuple, "vjp", create_graph, ERR_V_NONE_OUTPUT)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(outputs, inputs, v, create_graph)
        grads = _zeros_for_none(grads, inputs, strict, create_graph, "back")
    return (
        _untuple(_released(outputs, create_graph), outputs_tuple),
        _untuple(_released(grads, create_graph), inputs_tuple),
    )


def jvp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple:
    """The function's output and the Jacobian-vector product `J v`, by the
    double-backward trick.

    >>> out, t = yg.autograd.functional.jvp(lambda x: x ** 2, yg.ones(2), yg.ones(2))
    >>> t
    tensor([2., 2.])
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _fresh(inputs, create_graph, True)
        v = _seed(v, inputs, inputs_tuple, "jvp", create_graph, ERR_V_NONE_INPUT)
        outputs_tuple, outputs = _run(func, inputs, "jvp", strict)
        # Any seed works (the backward is linear in it), as long as it is finite.
        seeds = tuple(factories.zeros_like(o).requires_grad_() for o in outputs)
        grad_inputs = _grad(outputs, inputs, seeds, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        tangents = _grad(grad_inputs, seeds, v, create_graph)
        tangents = _zeros_for_none(
            tangents, outputs, strict, create_graph, "back_trick"
        )
    return (
        _untuple(_released(outputs, create_graph), outputs_tuple),
        _untuple(_released(tangents, create_graph), outputs_tuple),
    )


def _jacobian_by_rows(
    outputs: Tensors, inputs: Tensors, create_graph: bool, strict: bool
) -> tuple:
    """One backward per output element: rows of each output's Jacobian."""
    jacobian = []
    for i, out in enumerate(outputs):
        rows: list[list[Tensor]] = [[] for _ in inputs]
        flat = ops.reshape(out, (-1,))
        for j in range(out.numel()):
            grads = _grad((flat[j],), inputs, create_graph=create_graph)
            for k, (g, inp) in enumerate(zip(grads, inputs)):
                if g is None:
                    if strict:
                        raise RuntimeError(ERR_STRICT_JACOBIAN_OUTPUT.format(i=i, j=k))
                    g = factories.zeros_like(inp)
                elif strict and create_graph and not g.requires_grad:
                    raise RuntimeError(
                        ERR_STRICT_CREATE_GRAPH.format(what="jacobian", i=i)
                    )
                rows[k].append(g)
        jacobian.append(
            tuple(
                ops.reshape(ops.stack(r, 0), (*out.shape, *inp.shape))
                for r, inp in zip(rows, inputs)
            )
        )
    return tuple(jacobian)


def _jacobian_vectorized(
    outputs: Tensors, inputs: Tensors, create_graph: bool
) -> tuple:
    """Every row at once: the vector-Jacobian product vmapped over the basis."""
    leaves = [eager_transforms.Leaf.existing(t) for t in inputs]
    jacobian = []
    for i, out in enumerate(outputs):
        eye = ops.reshape(
            factories.eye(out.numel(), dtype=out.dtype), (out.numel(), *out.shape)
        )

        def rows(seed: Tensor, out: Tensor = out) -> tuple:
            return tuple(eager_transforms.backward([out], [seed], leaves, create_graph))

        stacked = _vmap(rows)(eye)
        jacobian.append(
            tuple(
                ops.reshape(s, (*out.shape, *inp.shape))
                for s, inp in zip(stacked, inputs)
            )
        )
    return tuple(jacobian)


def _jacobian_forward(
    func: Callable[..., Any], inputs: Tensors, inputs_tuple: bool
) -> Any:
    """Column by column, by forward-mode AD: func.jvp on dual tensors, vmapped
    over the standard basis of each input (PyTorch's `_jacfwd`)."""
    from yamlgrad.runtime.func.jvp_transforms import jvp as forward_jvp

    primals = tuple(t.detach() for t in inputs)
    outputs_tuple = [False]

    def checked(*args: Tensor) -> Tensors:
        # PyTorch's _jacfwd names neither the argument nor the function here.
        outputs_tuple[0], outputs = _as_tuple(func(*args), "outputs", None)
        return outputs

    columns, outputs = [], ()
    for k, inp in enumerate(primals):
        n = inp.numel()
        eye = ops.reshape(factories.eye(n, dtype=inp.dtype), (n, *inp.shape))

        def push(tangent: Tensor, k: int = k) -> tuple:
            tangents = tuple(
                tangent if i == k else factories.zeros_like(p)
                for i, p in enumerate(primals)
            )
            return forward_jvp(checked, primals, tangents)

        outputs, stacked = _vmap(push)(eye)
        outputs = tuple(ops.select(o, 0, 0) for o in outputs)
        columns.append(
            tuple(
                ops.reshape(ops.movedim(s, 0, -1), (*o.shape, *inp.shape)).detach()
                for s, o in zip(stacked, outputs)
            )
        )
    jacobian = tuple(tuple(col[i] for col in columns) for i in range(len(outputs)))
    return _untuple(jacobian, (outputs_tuple[0], inputs_tuple))


def jacobian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of `func` at `inputs`: for each output and input, a tensor
    shaped `output.shape + input.shape`.

    >>> yg.autograd.functional.jacobian(lambda x: x ** 2, yg.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(ERR_STRATEGY)
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(ERR_FORWARD_CREATE_GRAPH)
        if strict:
            raise RuntimeError(ERR_FORWARD_STRICT)
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        if not vectorize:
            raise NotImplementedError(ERR_FORWARD_VECTORIZE)
        return _jacobian_forward(func, inputs, inputs_tuple)
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _fresh(inputs, create_graph, True)
        outputs_tuple, outputs = _run(func, inputs, "jacobian", strict)
        if vectorize:
            if strict:
                raise RuntimeError(ERR_VECTORIZE_STRICT)
            result = _jacobian_vectorized(outputs, inputs, create_graph)
        else:
            result = _jacobian_by_rows(outputs, inputs, create_graph, strict)
    return _untuple(_released(result, create_graph), (outputs_tuple, inputs_tuple))


def _single_output(
    func: Callable[..., Any], fn: str, strict: bool
) -> Callable[..., Any]:
    """`func`, checked to return one Tensor of one element (squeezed to 0-d)."""

    def checked(*inputs: Tensor) -> Tensor:
        out = func(*inputs)
        is_tuple, outputs = _as_tuple(out, "outputs of the user-provided function", fn)
        _check_requires_grad(outputs, "outputs", strict)
        if is_tuple:
            raise RuntimeError(ERR_SINGLE_TENSOR.format(fn=fn))
        if out.numel() != 1:
            raise RuntimeError(ERR_SINGLE_ELEMENT.format(fn=fn))
        return ops.squeeze(out)

    return checked


def hessian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of a function with one scalar output: the Jacobian of its
    gradient, one tensor `input_i.shape + input_j.shape` per pair of inputs.

    >>> yg.autograd.functional.hessian(lambda x: (x ** 3).sum(), yg.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(ERR_HESSIAN_STRATEGY)
    single = _single_output(func, "hessian", strict)

    def gradient(*inp: Tensor) -> Tensors:
        if outer_jacobian_strategy == "forward-mode":
            # Dual inputs: made to require grad, so that the inner Jacobian
            # aliases them (keeping their tangents) instead of detaching them.
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(single, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(
        gradient,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _untuple(result, (inputs_tuple, inputs_tuple))


def _scalar_output(
    func: Callable[..., Any], inputs: Tensors, fn: str, strict: bool
) -> tuple[bool, Tensors]:
    outputs_tuple, outputs = _run(func, inputs, fn, strict)
    if outputs_tuple:
        raise RuntimeError(ERR_SINGLE_TENSOR.format(fn=fn))
    if outputs[0].numel() != 1:
        raise RuntimeError(ERR_SINGLE_ELEMENT.format(fn=fn))
    return outputs_tuple, outputs


def vhp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple:
    """The output of a scalar function and the vector-Hessian product `v^T H`.

    >>> yg.autograd.functional.vhp(lambda x: (x ** 3).sum(), yg.ones(2), yg.ones(2))[1]
    tensor([6., 6.])
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _fresh(inputs, create_graph, True)
        v = _seed(v, inputs, inputs_tuple, "vhp", create_graph, ERR_V_NONE_INPUT)
        outputs_tuple, outputs = _scalar_output(func, inputs, "vhp", strict)
        jac = _grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        result = _grad(jac, inputs, v, create_graph)
        result = _zeros_for_none(result, inputs, strict, create_graph, "double_back")
    return (
        _untuple(_released(outputs, create_graph), outputs_tuple),
        _untuple(_released(result, create_graph), inputs_tuple),
    )


def hvp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple:
    """The output of a scalar function and the Hessian-vector product `H v`, by
    the double-backward trick (equal to vhp, the Hessian being symmetric).

    >>> yg.autograd.functional.hvp(lambda x: (x ** 3).sum(), yg.ones(2), yg.ones(2))[1]
    tensor([6., 6.])
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _fresh(inputs, create_graph, True)
        v = _seed(v, inputs, inputs_tuple, "hvp", create_graph, ERR_V_NONE_INPUT)
        outputs_tuple, outputs = _scalar_output(func, inputs, "hvp", strict)
        jac = _grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        seeds = tuple(factories.zeros_like(t).requires_grad_() for t in inputs)
        double_back = _grad(jac, inputs, seeds, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        result = _grad(double_back, seeds, v, create_graph)
        result = _zeros_for_none(
            result, inputs, strict, create_graph, "double_back_trick"
        )
    return (
        _untuple(_released(outputs, create_graph), outputs_tuple),
        _untuple(_released(result, create_graph), inputs_tuple),
    )
