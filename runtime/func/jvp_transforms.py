"""jvp and jacfwd: torch.func's Jacobian-vector transforms, by the double-backward trick.

torch.func computes these with forward-mode AD. yamlgrad computes the same values
from two reverse passes, as torch.autograd.functional.jvp does: the vjp
`u -> J^T u` is linear in `u`, so its own vjp at any `u` with seed `v` is `J v`.
Every op here has a double backward, so this holds for every function grad
supports; it costs two backward passes instead of one forward pass. Both passes
run through eager_transforms.backward, so jvp composes with vmap (jacfwd is vmap
of jvp over the standard basis of the inputs) and with grad.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from yamlgrad.runtime import factories
from yamlgrad.runtime.autograd.grad_mode import enable_grad
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.errors import (
    ERR_JVP_OUTPUTS,
    ERR_JVP_PRIMAL_TYPE,
    ERR_JVP_STRUCTURE,
    ERR_JVP_TUPLE,
    ERR_TANGENT_SIZE,
    ERR_VMAP_RANDOMNESS,
)
from yamlgrad.runtime.func.batched_tensor import unwrap_physical
from yamlgrad.runtime.func.eager_transforms import (
    Leaf,
    _check_argnums,
    _reaches_outside,
    _release,
    _split_aux,
    backward,
)
from yamlgrad.runtime.func.pytree import tree_flatten, tree_unflatten
from yamlgrad.runtime.func.vmap import vmap


def _check_jvp_arguments(primals: Any, tangents: Any) -> tuple[list, list, Any]:
    for what, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, tuple):
            raise RuntimeError(ERR_JVP_TUPLE.format(what=what))
    flat_primals, primals_spec = tree_flatten(primals)
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(
            ERR_JVP_STRUCTURE.format(primals=primals_spec, tangents=tangents_spec)
        )
    for p, t in zip(flat_primals, flat_tangents):
        if not isinstance(p, Tensor):
            raise RuntimeError(ERR_JVP_PRIMAL_TYPE.format(kind=type(p)))
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                ERR_TANGENT_SIZE.format(primal=list(p.shape), tangent=list(t.shape))
            )
    return flat_primals, flat_tangents, primals_spec


def jvp(
    func: Callable[..., Any],
    primals: Any,
    tangents: Any,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> tuple:
    """`torch.func.jvp`: `func(*primals)` and its Jacobian-vector product with
    `tangents`.

    >>> yg.func.jvp(yg.sin, (yg.zeros(2),), (yg.ones(2),))
    (tensor([0., 0.]), tensor([1., 1.]))
    """
    flat_primals, flat_tangents, spec = _check_jvp_arguments(primals, tangents)
    with enable_grad():
        leaves = [Leaf(p) for p in flat_primals]
        lifted = tree_unflatten([leaf.logical for leaf in leaves], spec)
        output, aux = _split_aux(func(*lifted), has_aux, "jvp")
        outputs, out_spec = tree_flatten(output)
        for o in outputs:
            if not isinstance(o, Tensor):
                raise RuntimeError(ERR_JVP_OUTPUTS.format(kind=type(o)))
        keep = _reaches_outside([unwrap_physical(o)[0] for o in outputs], leaves)
        # u -> J^T u, recorded so that it can be differentiated in u.
        seeds = [Leaf(factories.zeros_like(o)) for o in outputs]
        pulled = backward(outputs, [s.logical for s in seeds], leaves, True)
        pushed = backward(pulled, flat_tangents, seeds, keep)
    result = (
        _release(output, keep),
        tree_unflatten([_release(t, keep) for t in pushed], out_spec),
    )
    return (*result, _release(aux, keep)) if has_aux else result


def jacfwd(
    func: Callable[..., Any],
    argnums: Any = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable[..., Any]:
    """`torch.func.jacfwd`: the Jacobian of `func` column by column, jvp vmapped
    over the standard basis of each input: shaped `output.shape + input.shape`.

    >>> yg.func.jacfwd(yg.sin)(yg.zeros(2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(ERR_VMAP_RANDOMNESS.format(randomness=randomness))

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        picked = _check_argnums(argnums, len(args))
        diff, diff_spec = tree_flatten(tuple(args[a] for a in picked))

        def of_diff(*flat: Any) -> Any:
            full = list(args)
            for a, value in zip(picked, tree_unflatten(list(flat), diff_spec)):
                full[a] = value
            return func(*full, **kwargs)

        columns, aux, out_spec = [], None, None
        for k, x in enumerate(diff):
            n = x.numel()
            basis = ops.reshape(factories.eye(n, dtype=x.dtype), (n, *x.shape))

            def push(t: Tensor, k: int = k) -> Any:
                tangents = [
                    t if i == k else factories.zeros_like(p) for i, p in enumerate(diff)
                ]
                return jvp(of_diff, tuple(diff), tuple(tangents), has_aux=has_aux)

            out, tangent_out, *extra = vmap(push, randomness=randomness)(basis)
            flat_out, out_spec = tree_flatten(out)
            if has_aux:
                aux = tree_unflatten(
                    [ops.select(a, 0, 0) for a in tree_flatten(extra[0])[0]],
                    tree_flatten(extra[0])[1],
                )
            columns.append(
                [
                    ops.reshape(ops.movedim(c, 0, -1), (*o.shape[1:], *x.shape))
                    for c, o in zip(tree_flatten(tangent_out)[0], flat_out)
                ]
            )
        per_output = []
        for i in range(out_spec.num_leaves):
            per_input = tree_unflatten([col[i] for col in columns], diff_spec)
            per_output.append(per_input if isinstance(argnums, tuple) else per_input[0])
        result = tree_unflatten(per_output, out_spec)
        return (result, aux) if has_aux else result

    return wrapper
