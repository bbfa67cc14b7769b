"""jvp, jacfwd and hessian: torch.func's forward-mode transforms, on dual tensors.

`jvp` opens a dual level (runtime/autograd/forward_ad.py), makes each primal a
dual tensor carrying its tangent, runs the function (every generated wrapper
evaluates its entry's forward formula on the tangents) and unpacks the outputs:
one forward pass, as torch.func does. Two decisions:

* Dual tensors are physical. Under vmap a primal is first batched at every open
  level (eager_transforms.batched_at_every_level) and its tangent laid out the
  same way, so the dual tensor underneath the BatchedTensor wrappers carries the
  tangent and the batching rules run the forward formulas on whole batches.
  `jacfwd` is vmap of jvp over the standard basis of each input, so its columns
  come from one batched forward pass. (functorch keeps such a primal unbatched
  and batches only the tangents; here the primal is expanded along the batch, so
  the forward pass runs on physical tensors only, and derived JVPs, which run a
  backward, work under vmap. The cost: the primal is computed once per column,
  and under randomness="same" a random op of a primal counts as one of a
  batched tensor and raises.)
* Dual levels do not nest (one at a time, as PyTorch's Python API has them). A
  jvp inside a jvp (jacfwd of jacfwd, jvp of jvp) computes its own product by the
  double-backward trick instead: the vjp `u -> J^T u` is linear in `u`, so its own
  vjp with seed `v` is `J v`. Those reverse passes run under the outer dual
  level, so the outer tangents flow through them.

`hessian` is jacfwd of jacrev, as PyTorch's: the outer Jacobian by forward mode
over the reverse-mode gradient (forward-over-reverse).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from yamlgrad.runtime.backend import dtype_kind
from yamlgrad.runtime import factories
from yamlgrad.runtime.autograd import forward_ad
from yamlgrad.runtime.autograd.grad_mode import enable_grad
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.errors import (
    ERR_JVP_EMPTY,
    ERR_JVP_OUTPUTS,
    ERR_JVP_PRIMAL_TYPE,
    ERR_JVP_STRUCTURE,
    ERR_JVP_TUPLE,
    ERR_TANGENT_SIZE,
    ERR_VMAP_RANDOMNESS,
    not_floating,
)
from yamlgrad.runtime.func.batched_tensor import rewrap, unwrap_physical
from yamlgrad.runtime.func.eager_transforms import (
    Leaf,
    _align,
    _check_argnums,
    _reaches_outside,
    _release,
    _split_aux,
    backward,
    batched_at_every_level,
    jacrev,
)
from yamlgrad.runtime.func.pytree import tree_flatten, tree_map, tree_unflatten
from yamlgrad.runtime.func.vmap import vmap

JVP_API = "jvp(f, primals, tangents)"


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
    for what, flat in (("primals", flat_primals), ("tangents", flat_tangents)):
        if not flat:
            raise RuntimeError(ERR_JVP_EMPTY.format(what=what))
        for value in flat:
            if not isinstance(value, Tensor):
                raise RuntimeError(ERR_JVP_PRIMAL_TYPE.format(kind=type(value)))
    for p, t in zip(flat_primals, flat_tangents):
        for what, value in (("primal", p), ("tangent", t)):
            if dtype_kind(value._data.dtype) not in "fc":
                raise ValueError(not_floating(what, str(value.dtype)))
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                ERR_TANGENT_SIZE.format(primal=list(p.shape), tangent=list(t.shape))
            )
    return flat_primals, flat_tangents, primals_spec


def _make_dual(primal: Tensor, tangent: Tensor) -> Tensor:
    """A dual tensor for `primal`: the physical tensor, batched at every open vmap
    level, given `tangent` laid out as it, and wrapped again."""
    physical, chain = batched_at_every_level(primal)
    physical_tangent = _align(tangent, rewrap(physical, chain))
    if physical_tangent.dtype != physical.dtype:
        physical_tangent = ops._to_copy(physical_tangent, dtype=physical.dtype)
    return rewrap(forward_ad.make_dual(physical, physical_tangent), chain)


def _unpack_dual(output: Tensor) -> tuple[Tensor, Tensor]:
    """An output's primal and tangent (zeros when it does not depend on the
    primals), each wrapped as the output is."""
    physical, chain = unwrap_physical(output)
    primal, tangent = forward_ad.unpack_dual(physical)
    if tangent is None:
        tangent = factories.zeros_like(physical)
    return rewrap(primal, chain), rewrap(tangent, chain)


def jvp(
    func: Callable[..., Any],
    primals: Any,
    tangents: Any,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> tuple:
    """`torch.func.jvp`: `func(*primals)` and its Jacobian-vector product with
    `tangents`, by forward-mode AD.

    >>> yg.func.jvp(yg.sin, (yg.zeros(2),), (yg.ones(2),))
    (tensor([0., 0.]), tensor([1., 1.]))
    """
    flat_primals, flat_tangents, spec = _check_jvp_arguments(primals, tangents)
    if forward_ad.STATE.level >= 0:
        return _jvp_by_double_backward(func, flat_primals, flat_tangents, spec, has_aux)
    with forward_ad.dual_level():
        duals = [_make_dual(p, t) for p, t in zip(flat_primals, flat_tangents)]
        output, aux = _split_aux(
            func(*tree_unflatten(duals, spec)), has_aux, "jvp", JVP_API
        )
        outputs, out_spec = tree_flatten(output)
        for o in outputs:
            if not isinstance(o, Tensor):
                raise RuntimeError(ERR_JVP_OUTPUTS.format(kind=type(o)))
        pairs = [_unpack_dual(o) for o in outputs]
        aux = _release(aux, True)
    result = (
        tree_unflatten([p for p, _ in pairs], out_spec),
        tree_unflatten([t for _, t in pairs], out_spec),
    )
    return (*result, aux) if has_aux else result


def _jvp_by_double_backward(
    func: Callable[..., Any],
    flat_primals: list,
    flat_tangents: list,
    spec: Any,
    has_aux: bool,
) -> tuple:
    """jvp inside an open dual level: J v as the vjp of `u -> J^T u` with seed v."""
    with enable_grad():
        leaves = [Leaf(p) for p in flat_primals]
        lifted = tree_unflatten([leaf.logical for leaf in leaves], spec)
        output, aux = _split_aux(func(*lifted), has_aux, "jvp", JVP_API)
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
            out, tangent_out, extra = _columns(of_diff, diff, k, has_aux, randomness)
            flat_out, out_spec = tree_flatten(out)
            aux = extra if has_aux else None
            columns.append(
                [
                    ops.reshape(ops.movedim(c, 0, -1), (*o.shape, *x.shape))
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


def _columns(
    of_diff: Callable[..., Any], diff: list, k: int, has_aux: bool, randomness: str
) -> tuple[Any, Any, Any]:
    """The output, the Jacobian's columns for input `k` (batched in front), and
    the aux: jvp vmapped over the basis of input `k`, the others' tangents zero."""
    x = diff[k]
    n = x.numel()
    basis = ops.reshape(factories.eye(n, dtype=x.dtype), (n, *x.shape))

    def push(t: Tensor) -> Any:
        tangents = [
            t if i == k else factories.zeros_like(p) for i, p in enumerate(diff)
        ]
        return jvp(of_diff, tuple(diff), tuple(tangents), has_aux=has_aux)

    out, tangent_out, *extra = vmap(push, randomness=randomness)(basis)
    first = functools.partial(tree_map, lambda a: ops.select(a, 0, 0))
    return first(out), tangent_out, first(extra[0]) if has_aux else None


def hessian(func: Callable[..., Any], argnums: Any = 0) -> Callable[..., Any]:
    """`torch.func.hessian`: jacfwd of jacrev, forward-over-reverse.

    >>> yg.func.hessian(lambda x: (x ** 3).sum())(yg.ones(2))
    tensor([[6., 0.],
            [0., 6.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
