"""grad, grad_and_value, vjp, jacrev: torch.func's reverse-mode transforms.

Each transform makes its differentiated inputs fresh leaves (an alias when the
input already requires grad, so outer gradients still reach it), runs the
function, and asks the engine for the gradients. Two decisions:

* The engine sees physical tensors only (batched_tensor.py). Under vmap, an input
  is first batched at every open vmap level it is not batched at (expanded), so
  that each sample has its own copy: the gradient of the sum over all samples is
  then every sample's own gradient, batched as the input is. That is how
  `vmap(grad(loss), in_dims=(None, 0, 0))` gives per-sample gradients.
* The backward records a graph (`create_graph`) only when something outside the
  transform can use it: when the output's graph reaches a tensor that requires
  grad and is not one of this transform's own leaves (an outer transform's input,
  a module parameter, an input that required grad). Otherwise the results are
  plain tensors, as torch.func returns them.

A cotangent batched by a vmap the output is not batched by (`vmap(vjp_fn)`, and
so jacrev) runs one backward on the whole batch: the engine gets BatchedTensor
seeds, and each backward formula batches through the rules. Cotangents batched
by several such levels run one backward per sample of the highest (PyTorch's
loop fallback for the engine).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from yamlgrad.runtime import autograd, factories
from yamlgrad.runtime.autograd.accumulate_grad import AccumulateGrad
from yamlgrad.runtime.autograd.forward_ad import attach_tangent
from yamlgrad.runtime.autograd.grad_mode import enable_grad
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.errors import (
    ERR_ARGNUM_RANGE,
    ERR_ARGNUMS_EMPTY,
    ERR_ARGNUMS_TYPE,
    ERR_ARGNUMS_UNIQUE,
    ERR_AUX_TENSORS,
    ERR_CHUNK_SIZE,
    ERR_GRAD_SCALAR,
    ERR_GRAD_TENSOR,
    ERR_HAS_AUX_TUPLE,
    ERR_TRANSFORM_FLOAT,
    ERR_TRANSFORM_INPUT,
    ERR_VJP_OUTPUTS,
)
from yamlgrad.runtime.func import vmap as vmap_module
from yamlgrad.runtime.func.batched_tensor import (
    BatchedTensor,
    is_batched_at,
    rewrap,
    unwrap_physical,
)
from yamlgrad.runtime.func.pytree import tree_flatten, tree_map, tree_unflatten


def batched_at_every_level(value: Tensor) -> tuple[Tensor, list[tuple[int, int]]]:
    """`value`'s physical tensor, expanded along every open vmap level it is not
    batched at (so that each sample has its own copy), and its wrapper chain."""
    physical, chain = unwrap_physical(value)
    for level, size, _ in vmap_module.LEVELS:
        if all(level != lvl for lvl, _ in chain):
            physical = ops.expand(ops.unsqueeze(physical, 0), (size, *physical.shape))
            chain = [(lvl, b + 1 if lvl < level else b) for lvl, b in chain]
            chain = sorted([*chain, (level, 0)])
    return physical, chain


def detach_keeping_tangent(tensor: Tensor) -> Tensor:
    """`tensor.detach()`, still carrying the tangent of an open dual level: a
    transform inside `jvp` cuts the reverse-mode history, never the forward one."""
    physical, chain = unwrap_physical(tensor)
    tangent = physical._fw_grad
    if tangent is None:
        return tensor.detach()
    detached = physical.detach()
    attach_tangent(detached, tangent)
    return rewrap(detached, chain)


class Leaf:
    """One differentiated input: the physical leaf and the wrappers around it."""

    __slots__ = ("physical", "chain", "logical")

    def __init__(self, value: Any) -> None:
        if not isinstance(value, Tensor):
            raise ValueError(ERR_TRANSFORM_INPUT.format(kind=type(value)))
        physical, chain = batched_at_every_level(value)
        if not physical.is_floating_point():
            raise RuntimeError(ERR_TRANSFORM_FLOAT)
        if physical.requires_grad:
            physical = ops.alias(physical)
        else:
            physical = detach_keeping_tangent(physical).requires_grad_()
        self.physical = physical
        self.chain = chain
        self.logical = rewrap(physical, chain)

    @classmethod
    def existing(cls, tensor: Tensor) -> Leaf:
        """A tensor that already is a leaf of this computation (the inputs
        autograd.functional has prepared), with no wrappers."""
        leaf = cls.__new__(cls)
        leaf.physical = leaf.logical = tensor
        leaf.chain = []
        return leaf

    @classmethod
    def wrapping(cls, tensor: Tensor) -> Leaf:
        """A tensor that already is a leaf of this computation, perhaps batched:
        its physical tensor and the wrappers around it."""
        leaf = cls.__new__(cls)
        leaf.physical, leaf.chain = unwrap_physical(tensor)
        leaf.logical = tensor
        return leaf

    def gradient(self, physical_grad: Tensor | None) -> Tensor:
        if physical_grad is None:
            physical_grad = factories.zeros_like(self.physical)
        return rewrap(physical_grad, self.chain)


def _reaches_outside(outputs: list[Tensor], leaves: list[Leaf]) -> bool:
    """Whether the outputs' graph reaches a tensor requiring grad that is not one
    of `leaves` (so the gradients must be recorded for someone else)."""
    own = {id(leaf.physical) for leaf in leaves}
    if any(leaf.physical.grad_fn is not None for leaf in leaves):
        return True  # an alias of an input that requires grad
    seen: set[int] = set()
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            if id(node.variable) not in own:
                return True
            continue
        stack += [n for n, _ in node.next_functions if n is not None]
    return False


def _align(cotangent: Any, output: Any) -> Tensor:
    """`cotangent`'s physical tensor laid out as `output`'s: batched at the same
    levels at the same dims (expanded where it was not batched)."""
    if not isinstance(output, BatchedTensor):
        return cotangent
    level, bdim = output._batch_level, output._bdim
    if is_batched_at(cotangent, level):
        value, dim = cotangent._value, cotangent._bdim
    else:
        size = output._value.shape[bdim]
        value = ops.expand(ops.unsqueeze(cotangent, 0), (size, *cotangent.shape))
        dim = 0
    if dim != bdim:
        value = ops.movedim(value, dim, bdim)
    return _align(value, output._value)


def _levels(t: Any) -> set[int]:
    return (
        {level for level, _ in unwrap_physical(t)[1]}
        if isinstance(t, Tensor)
        else set()
    )


def backward(
    outputs: list[Tensor], cotangents: list[Any], leaves: list[Leaf], create_graph: bool
) -> list[Tensor]:
    """d<cotangents, outputs>/d(leaves), each batched as its input."""
    out_levels = set().union(*(_levels(o) for o in outputs))
    extra = [(t._batch_level, t) for t in cotangents if isinstance(t, BatchedTensor)]
    extra = [(lvl, t) for lvl, t in extra if lvl not in out_levels]
    if extra:
        if len({lvl for lvl, _ in extra}) == 1 and all(
            c is None or isinstance(c, Tensor) for c in cotangents
        ):
            return _backward_batched(outputs, cotangents, leaves, create_graph, extra)
        return _backward_per_sample(outputs, cotangents, leaves, create_graph, extra)
    pairs = [(unwrap_physical(o)[0], c, o) for c, o in zip(cotangents, outputs)]
    pairs = [(p, c, o) for p, c, o in pairs if p.requires_grad]
    if not pairs:  # the outputs do not depend on the inputs
        return [leaf.gradient(None) for leaf in leaves]
    physical_outputs = [p for p, _, _ in pairs]
    physical_cotangents = [_align(c, o) for _, c, o in pairs]
    for c in physical_cotangents:
        if isinstance(c, BatchedTensor):
            raise RuntimeError(
                "vjp: the cotangent is batched by a vmap that is not the outermost "
                "one the output lacks; vmap the cotangents outside the others"
            )
    grads = autograd.grad(
        physical_outputs,
        [leaf.physical for leaf in leaves],
        physical_cotangents,
        retain_graph=True,
        create_graph=create_graph,
        allow_unused=True,
    )
    return [leaf.gradient(g) for leaf, g in zip(leaves, grads)]


def _backward_batched(
    outputs: list[Tensor],
    cotangents: list[Any],
    leaves: list[Leaf],
    create_graph: bool,
    extra: list[tuple[int, BatchedTensor]],
) -> list[Tensor]:
    """One backward for every sample of the level only the cotangents have
    (`vmap(vjp_fn)`, jacrev's rows): the cotangents stay BatchedTensors of that
    level, laid out as the physical outputs, so the backward formulas run through
    the batching rules on the whole batch at once."""
    level = extra[0][0]
    pairs = [(unwrap_physical(o)[0], c, o) for c, o in zip(cotangents, outputs)]
    pairs = [(p, c, o) for p, c, o in pairs if p.requires_grad]
    if not pairs:
        return [leaf.gradient(None) for leaf in leaves]
    grads = autograd.grad(
        [p for p, _, _ in pairs],
        [leaf.physical for leaf in leaves],
        [_align(c, o) for _, c, o in pairs],
        retain_graph=True,
        create_graph=create_graph,
        allow_unused=True,
    )
    results = []
    for leaf, g in zip(leaves, grads):
        if not is_batched_at(g, level):
            results.append(leaf.gradient(g))
            continue
        # The level's dim in front of the physical gradient, under the leaf's
        # wrappers (each of whose dims moves up by one).
        physical = ops.movedim(g._value, g._bdim, 0) if g._bdim else g._value
        chain = [(lvl, b + 1) for lvl, b in leaf.chain]
        results.append(BatchedTensor(rewrap(physical, chain), 0, level))
    return results


def _backward_per_sample(
    outputs: list[Tensor],
    cotangents: list[Any],
    leaves: list[Leaf],
    create_graph: bool,
    extra: list[tuple[int, BatchedTensor]],
) -> list[Tensor]:
    """One backward per sample of the highest level only the cotangents have."""
    level, batched = max(extra, key=lambda pair: pair[0])
    size = batched._value.shape[batched._bdim]
    per_sample = []
    for index in range(size):
        picked = [
            ops.select(c._value, c._bdim, index) if is_batched_at(c, level) else c
            for c in cotangents
        ]
        per_sample.append(backward(outputs, picked, leaves, create_graph))
    return [
        BatchedTensor(ops.stack(list(samples), 0), 0, level)
        for samples in zip(*per_sample)
    ]


# -- argnums ---------------------------------------------------------------------


def _check_argnums(argnums: Any, count: int) -> tuple[int, ...]:
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        picked = (argnums,)
    elif isinstance(argnums, tuple) and all(isinstance(a, int) for a in argnums):
        if not argnums:
            raise RuntimeError(ERR_ARGNUMS_EMPTY)
        if len(set(a % max(count, 1) for a in argnums)) != len(argnums):
            raise RuntimeError(ERR_ARGNUMS_UNIQUE.format(argnums=argnums))
        picked = argnums
    else:
        raise RuntimeError(ERR_ARGNUMS_TYPE.format(kind=type(argnums)))
    for a in picked:
        if not -count <= a < count:
            raise RuntimeError(ERR_ARGNUM_RANGE.format(argnum=a, count=count))
    return tuple(a % count for a in picked)


def _lift_argnums(args: tuple, argnums: Any) -> tuple[tuple, list[Leaf], Any]:
    """`args` with the trees at `argnums` made of fresh leaves, the leaves, and
    how to rebuild the gradients into the shape of `argnums`."""
    picked = _check_argnums(argnums, len(args))
    args = list(args)
    leaves: list[Leaf] = []
    specs = []
    for a in picked:
        flat, spec = tree_flatten(args[a])
        lifted = [Leaf(v) for v in flat]
        leaves += lifted
        specs.append((len(lifted), spec))
        args[a] = tree_unflatten([leaf.logical for leaf in lifted], spec)

    def rebuild(grads: list[Tensor]) -> Any:
        trees, start = [], 0
        for n, spec in specs:
            trees.append(tree_unflatten(grads[start : start + n], spec))
            start += n
        return trees[0] if isinstance(argnums, int) else tuple(trees)

    return tuple(args), leaves, rebuild


def _split_aux(
    output: Any, has_aux: bool, api: str, call: str | None = None
) -> tuple[Any, Any]:
    """`(output, aux)`, checked; `call` is how the error names the call."""
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(ERR_HAS_AUX_TUPLE.format(call=call or f"{api}(f)(*args)"))
    output, aux = output
    for leaf in tree_flatten(aux)[0]:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(ERR_AUX_TENSORS.format(kind=type(leaf)))
    return output, aux


def _release(tree: Any, keep_graph: bool) -> Any:
    """What a transform returns of the function's values: detached unless an
    outer computation differentiates through them."""
    if keep_graph:
        return tree
    return tree_map(
        lambda t: detach_keeping_tangent(t) if isinstance(t, Tensor) else t, tree
    )


# -- the transforms ---------------------------------------------------------------


def grad_and_value(
    func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """`torch.func.grad_and_value`: the gradient of `func`'s scalar output with
    respect to the arguments `argnums`, and the output (with `aux`).

    >>> g, value = yg.func.grad_and_value(lambda x: (x ** 2).sum())(yg.ones(3))
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with enable_grad():
            args, leaves, rebuild = _lift_argnums(args, argnums)
            output, aux = _split_aux(func(*args, **kwargs), has_aux, "grad_and_value")
            if not isinstance(output, Tensor):
                raise RuntimeError(ERR_GRAD_TENSOR.format(kind=type(output)))
            if output.ndim != 0:
                raise RuntimeError(ERR_GRAD_SCALAR.format(ndim=output.ndim))
            keep = _reaches_outside([unwrap_physical(output)[0]], leaves)
            seed = factories.ones_like(unwrap_physical(output)[0])
            grads = backward([output], [_logical_ones(output, seed)], leaves, keep)
        value = _release(output, keep)
        if has_aux:
            return rebuild(grads), (value, _release(aux, keep))
        return rebuild(grads), value

    return wrapper


def _logical_ones(output: Tensor, physical_ones: Tensor) -> Tensor:
    """Ones laid out as `output` (so `_align` leaves them as they are)."""
    return rewrap(physical_ones, unwrap_physical(output)[1])


def grad(
    func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """`torch.func.grad`: the function computing the gradient of `func`.

    >>> yg.func.grad(lambda x: x.sin().sum())(yg.zeros(2))
    tensor([1., 1.])
    """
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        grads, value = both(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple:
    """`torch.func.vjp`: `func(*primals)` and the function that maps cotangents
    of the output to cotangents of the primals.

    >>> out, vjp_fn = yg.func.vjp(yg.sin, yg.zeros(3))
    >>> vjp_fn(yg.ones(3))
    (tensor([1., 1., 1.]),)
    """
    with enable_grad():
        flat, spec = tree_flatten(primals)
        leaves = [Leaf(v) for v in flat]
        lifted = tree_unflatten([leaf.logical for leaf in leaves], spec)
        output, aux = _split_aux(func(*lifted), has_aux, "vjp")
    outputs, out_spec = tree_flatten(output)
    for o in outputs:
        if not isinstance(o, Tensor):
            raise RuntimeError(ERR_VJP_OUTPUTS.format(kind=type(o)))
    keep = _reaches_outside([unwrap_physical(o)[0] for o in outputs], leaves)

    def vjp_fn(
        cotangents: Any, *, retain_graph: bool = True, create_graph: bool | None = None
    ) -> tuple:
        flat_cotangents, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree "
                f"structure of outputs to the function. cotangents: {ct_spec}, "
                f"primal output: {out_spec}"
            )
        with enable_grad():
            grads = backward(
                outputs, flat_cotangents, leaves, keep or bool(create_graph)
            )
        return tree_unflatten(grads, spec)

    result = (_release(output, keep), vjp_fn)
    return (*result, _release(aux, keep)) if has_aux else result


def _basis_jacobian(
    vjp_fn: Callable[..., Any], output: Tensor, chunk_size: int | None
) -> Any:
    """vmap of `vjp_fn` over the rows of the identity, one per output element."""
    n = output.numel()
    eye = ops.reshape(factories.eye(n, dtype=output.dtype), (n, *output.shape))
    return vmap_module.vmap(vjp_fn, chunk_size=chunk_size)(eye)


def jacrev(
    func: Callable[..., Any],
    argnums: Any = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """`torch.func.jacrev`: the Jacobian of `func` by reverse mode, one vjp per
    output element (vmapped): shaped `output.shape + input.shape`.

    >>> yg.func.jacrev(yg.sin)(yg.zeros(2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(ERR_CHUNK_SIZE.format(api="jacrev"))

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        picked = _check_argnums(argnums, len(args))

        def of_picked(*diff: Any) -> Any:
            full = list(args)
            for a, value in zip(picked, diff):
                full[a] = value
            return func(*full, **kwargs)

        diff_args = tuple(args[a] for a in picked)
        out, vjp_fn, *aux = vjp(of_picked, *diff_args, has_aux=has_aux)
        outputs, out_spec = tree_flatten(out)
        rows = []
        for index, o in enumerate(outputs):

            def one_output(ct: Tensor, index: int = index) -> Any:
                cts = [
                    ct if i == index else factories.zeros_like(x)
                    for i, x in enumerate(outputs)
                ]
                return vjp_fn(tree_unflatten(cts, out_spec))

            jac = _basis_jacobian(one_output, o, chunk_size)
            jac = tree_map(lambda j, o=o: ops.reshape(j, (*o.shape, *j.shape[1:])), jac)
            rows.append(jac if isinstance(argnums, tuple) else jac[0])
        result = tree_unflatten(rows, out_spec)
        return (result, aux[0]) if has_aux else result

    return wrapper
