"""`vmap`: a function of one sample made a function of a batch.

As functorch does: each call opens a level, wraps every input mapped over in a
BatchedTensor of that level (the batch dim hidden, so the function sees one
sample), runs the function, whose ops go through the batching rules, and at the
end takes the batch dim of each output out of its wrapper to `out_dims` (an output
that never met a batched input is expanded along it). Levels nest: a vmap inside
a vmap opens the next level, and the rules peel the highest first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.errors import (
    ERR_CHUNK_SIZE,
    ERR_VMAP_IN_DIM_NON_TENSOR,
    ERR_VMAP_IN_DIM_RANGE,
    ERR_VMAP_IN_DIMS_STRUCTURE,
    ERR_VMAP_IN_DIMS_TYPE,
    ERR_VMAP_NO_INPUTS,
    ERR_VMAP_OUT_DIMS_STRUCTURE,
    ERR_VMAP_OUTPUT_TYPE,
    ERR_VMAP_RANDOMNESS,
    ERR_VMAP_SIZES,
)
from yamlgrad.runtime.func import autograd_function  # noqa: F401 - installs its hook
from yamlgrad.runtime.func import batching_rules
from yamlgrad.runtime.func.batched_tensor import BatchedTensor, is_batched_at
from yamlgrad.runtime.func.pytree import broadcast_prefix, tree_flatten, tree_unflatten
from yamlgrad.runtime.wrappers.interposition import vmap_hook
from yamlgrad.runtime.wrappers.randomness import (
    different_batch,
    per_sample,
    vmap_randomness,
    wrap_batched,
)

vmap_hook.handler = batching_rules.handle
vmap_hook.draws_per_sample = lambda: different_batch() is not None
wrap_batched[:] = [lambda value, level: BatchedTensor(value, 0, level)]
per_sample[:] = [batching_rules.handle]

# The open vmap levels, innermost last: (level, batch size, randomness).
LEVELS: list[tuple[int, int, str]] = []


def vmap(
    func: Callable[..., Any],
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """`torch.func.vmap`: map `func` over dim `in_dims` of its inputs.

    >>> x = yg.randn(5, 3)
    >>> yg.func.vmap(yg.dot)(x, x).shape          # five dot products
    yamlgrad.Size([5])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(ERR_VMAP_RANDOMNESS.format(randomness=randomness))
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(ERR_CHUNK_SIZE.format(api="vmap"))

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        name = getattr(func, "__name__", repr(func))
        pairs, spec, size = _batch_inputs(name, args, in_dims)
        level = len(LEVELS) + 1
        batched = [a if d is None else BatchedTensor(a, d, level) for a, d in pairs]
        LEVELS.append((level, size, randomness))
        vmap_randomness.append((randomness, level, size))
        vmap_hook.enter()
        try:
            outputs = func(*tree_unflatten(batched, spec), **kwargs)
        finally:
            vmap_hook.exit()
            vmap_randomness.pop()
            LEVELS.pop()
        return _unbatch_outputs(name, outputs, out_dims, level, size)

    return wrapped


def _batch_inputs(name: str, args: tuple, in_dims: Any) -> tuple[list, Any, int]:
    """Each input leaf with its normalized in_dim, the inputs' spec, and the
    batch size."""
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(
            ERR_VMAP_IN_DIMS_TYPE.format(fn=name, in_dims=in_dims, kind=type(in_dims))
        )
    if not args:
        raise ValueError(ERR_VMAP_NO_INPUTS.format(fn=name))
    leaves, spec = tree_flatten(args)
    dims = broadcast_prefix(in_dims, spec)
    if dims is None:
        _, dims_spec = tree_flatten(in_dims)
        raise ValueError(
            ERR_VMAP_IN_DIMS_STRUCTURE.format(
                fn=name, in_dims=in_dims, dims_spec=dims_spec, inputs_spec=spec
            )
        )
    pairs, sizes = [], []
    for leaf, dim in zip(leaves, dims):
        if dim is None:
            pairs.append((leaf, None))
            continue
        if not isinstance(leaf, Tensor):
            raise ValueError(
                ERR_VMAP_IN_DIM_NON_TENSOR.format(
                    fn=name, in_dims=in_dims, in_dim=dim, kind=type(leaf)
                )
            )
        if not -leaf.ndim <= dim < leaf.ndim:
            raise ValueError(
                ERR_VMAP_IN_DIM_RANGE.format(
                    fn=name, in_dims=in_dims, in_dim=dim, ndim=leaf.ndim
                )
            )
        dim %= leaf.ndim
        pairs.append((leaf, dim))
        sizes.append(leaf.shape[dim])
    if not sizes:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): at least one input "
            "must be a Tensor to vmap over (in_dims are all None or the inputs "
            "have no Tensors)"
        )
    if len(set(sizes)) > 1:
        raise ValueError(ERR_VMAP_SIZES.format(sizes=sizes))
    return pairs, spec, sizes[0]


def _unbatch_outputs(
    name: str, outputs: Any, out_dims: Any, level: int, size: int
) -> Any:
    leaves, spec = tree_flatten(outputs)
    dims = broadcast_prefix(out_dims, spec)
    if dims is None:
        _, dims_spec = tree_flatten(out_dims)
        raise ValueError(
            ERR_VMAP_OUT_DIMS_STRUCTURE.format(
                fn=name, out_dims=out_dims, dims_spec=dims_spec, outputs_spec=spec
            )
        )
    return tree_unflatten(
        [_unbatch(name, leaf, dim, level, size) for leaf, dim in zip(leaves, dims)],
        spec,
    )


def _unbatch(name: str, out: Any, out_dim: int | None, level: int, size: int) -> Any:
    """One output with the batch dim of `level` at `out_dim`."""
    if out_dim is None:
        if is_batched_at(out, level):
            raise ValueError(
                f"vmap({name}, ...): `{name}` can not return a BatchedTensor when "
                "out_dim is None"
            )
        return out
    if not isinstance(out, Tensor):
        raise ValueError(ERR_VMAP_OUTPUT_TYPE.format(fn=name, kind=type(out)))
    if is_batched_at(out, level):
        value, bdim = out._value, out._bdim
    else:
        value, bdim = ops.unsqueeze(out, 0), 0
        value = ops.expand(value, (size, *out.shape))
    ndim = value.ndim
    if not -ndim <= out_dim < ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-ndim}, "
            f"{ndim - 1}], but got {out_dim})"
        )
    return value if bdim == out_dim % ndim else ops.movedim(value, bdim, out_dim)
