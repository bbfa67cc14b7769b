"""`vmap` over an `autograd.Function`, as functorch's `custom_function_call`.

A Function meets vmap through `Function.apply`, which asks this module first
(runtime/autograd/function.py's `transform_hook`). Only a Function written in
the transforms' style qualifies (forward without ctx, plus `setup_context`);
then its own `vmap` staticmethod batches it, or with `generate_vmap_rule=True`
it runs once per sample and the results are stacked, every step a recorded op
on the physical tensors, so `grad` of a vmapped Function still flows.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from yamlgrad.runtime.autograd import function
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.func.batched_tensor import BatchedTensor, is_batched_at

ERR_SETUP_CONTEXT = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, "
    "jvp, jacrev, ...), it must override the setup_context staticmethod. For more "
    "details, please see https://pytorch.org/docs/main/notes/extending.func.html"
)
ERR_NO_VMAP_RULE = (
    "You tried to vmap over {name}, but it does not have vmap support. Please "
    "override and implement the vmap staticmethod or set generate_vmap_rule=True. "
    "For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html"
)


class VmapInfo(NamedTuple):
    batch_size: int
    randomness: str


def apply_under_vmap(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The Function's result when an argument is batched, else NotImplemented."""
    from yamlgrad.runtime.func.vmap import LEVELS

    batched = [a for a in args if isinstance(a, BatchedTensor)]
    if not batched or not LEVELS:
        return NotImplemented
    if not cls._is_setup_context_defined():
        raise RuntimeError(ERR_SETUP_CONTEXT)
    level = max(a._batch_level for a in batched)
    size, randomness = next((n, r) for lv, n, r in LEVELS if lv == level)
    if cls.vmap is not function.Function.vmap:
        in_dims = tuple(a._bdim if is_batched_at(a, level) else None for a in args)
        values = [a._value if is_batched_at(a, level) else a for a in args]
        output, out_dims = cls.vmap(VmapInfo(size, randomness), in_dims, *values)
        return _wrap(output, out_dims, level)
    if not cls.generate_vmap_rule:
        raise RuntimeError(ERR_NO_VMAP_RULE.format(name=cls.__name__))
    samples = []
    for index in range(size):
        sample = [
            ops.select(a._value, a._bdim, index) if is_batched_at(a, level) else a
            for a in args
        ]
        samples.append(cls.apply(*sample, **kwargs))
    first = samples[0]
    if isinstance(first, Tensor):
        return BatchedTensor(ops.stack(samples, 0), 0, level)
    return tuple(
        (
            BatchedTensor(ops.stack(list(outs), 0), 0, level)
            if isinstance(outs[0], Tensor)
            else outs[0]
        )
        for outs in zip(*samples)
    )


def _wrap(output: Any, out_dims: Any, level: int) -> Any:
    if isinstance(output, tuple):
        dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(output)
        return tuple(_wrap(o, d, level) for o, d in zip(output, dims))
    if isinstance(output, Tensor) and out_dims is not None:
        return BatchedTensor(output, out_dims, level)
    return output


function.transform_hook[0] = apply_under_vmap
