"""Batching rules: how each op runs on BatchedTensors of one vmap level.

A generated wrapper given a BatchedTensor calls `interpose(entry, rule, op,
*args)` (runtime/wrappers/interposition.py), which lands in `handle` below. `handle` finds the vmap level to peel (the highest
among the arguments) and picks the rule:

* the rule the generator chose from derivatives.yaml and passes as `rule`: the
  entry's `batch_rule:` key, else what its schema implies: "elementwise" for
  type-promoting and `auto_element_wise` entries (move each batch dim to the
  front, pad it to the widest operand's rank, call the op: broadcasting does the
  rest) and "dims(dim, ...)" for one Tensor and integer dim arguments (move the
  batch dim to the front and shift the dims past it). The keys name the rest:
  the shape ops (their sizes and dims shifted past the batch dim), matmul, the
  reductions to a scalar, and decompositions into batched ops (addmm and linear
  are matmul plus element-wise ops); generated/OPS.md lists each entry's rule;
* "" is the loop-and-stack fallback, as PyTorch's slow fallback: the op runs once
  per sample and the results are stacked (with a performance warning when
  `set_vmap_fallback_warning_enabled(True)`, off by default as in PyTorch).

A rule runs the op on the values under the wrappers; those may be BatchedTensors
of lower levels, so the op's own check sends them on to the next level down.
Results are wrapped again at the level, with the batch dim in front.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from yamlgrad.runtime import factories
from yamlgrad.runtime.autograd.grad_mode import no_grad
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.errors import ERR_VMAP_FALLBACK, ERR_VMAP_INPLACE
from yamlgrad.runtime.func.batched_tensor import BatchedTensor, is_batched_at
from yamlgrad.runtime.wrappers.kernel_errors import cat_operands
from yamlgrad.runtime.wrappers.randomness import different_batch, rule_levels

Rule = Callable[["Call"], Any]


class Call:
    """One op call at one vmap level: the op, its arguments by Python name."""

    __slots__ = ("entry", "op", "names", "args", "level", "size")

    def __init__(self, entry: str, op: Callable[..., Any], args: tuple) -> None:
        self.entry = entry
        self.op = op
        self.names = _parameter_names(op)
        self.args = dict(zip(self.names, args))
        self.level, self.size = _level_and_size(args)

    @property
    def inplace(self) -> bool:
        return self.entry.split(".")[0].endswith("_")

    def front(self, value: Any) -> Any:
        """`value`'s value with this level's batch dim first; `value` if unbatched."""
        if not is_batched_at(value, self.level):
            return value
        if value._bdim == 0:
            return value._value
        return ops.movedim(value._value, value._bdim, 0)

    def materialize(self, value: Tensor) -> Tensor:
        """`value` with the batch dim first, expanded when it had none."""
        if is_batched_at(value, self.level):
            return self.front(value)
        return ops.expand(ops.unsqueeze(value, 0), (self.size, *value.shape))

    def run(self, **changed: Any) -> Any:
        """The op on the arguments with `changed` ones replaced, wrapped at this
        level with the batch dim first."""
        return self.wrap(self.op(**{**self.args, **changed}))

    def wrap(self, result: Any) -> Any:
        if isinstance(result, Tensor):
            return BatchedTensor(result, 0, self.level)
        if isinstance(result, tuple) and hasattr(type(result), "_fields"):
            return type(result)(*(self.wrap(r) for r in result))
        return type(result)(self.wrap(r) for r in result)


_NAMES: dict[Callable[..., Any], tuple[str, ...]] = {}


def _parameter_names(op: Callable[..., Any]) -> tuple[str, ...]:
    names = _NAMES.get(op)
    if names is None:
        names = _NAMES[op] = tuple(inspect.signature(op).parameters)
    return names


def _batched_leaves(args: tuple) -> list[BatchedTensor]:
    found = []
    for a in args:
        items = a if isinstance(a, (list, tuple)) else (a,)
        found += [t for t in items if isinstance(t, BatchedTensor)]
    return found


def _batched_for_draws(args: tuple, level: int, size: int) -> tuple:
    """`args` with its first Tensor expanded to `size` samples at `level`."""
    i = next(i for i, a in enumerate(args) if isinstance(a, Tensor))
    expanded = ops.expand(ops.unsqueeze(args[i], 0), (size, *args[i].shape))
    return (*args[:i], BatchedTensor(expanded, 0, level), *args[i + 1 :])


def _level_and_size(args: tuple) -> tuple[int, int]:
    top = max(_batched_leaves(args), key=lambda t: t._batch_level)
    return top._batch_level, top._value.shape[top._bdim]


def handle(
    entry: str, rule: str, op: Callable[..., Any], *args: Any, random: bool = False
) -> Any:
    """The handler behind `interpose` for batched arguments, and for a `random`
    op (bernoulli, normal) in a vmap with randomness="different" whose tensors
    that vmap does not batch: as functorch does, its first tensor is expanded
    along the batch, so each sample gets a draw of its own."""
    batch = different_batch() if random else None
    if batch is not None and not any(is_batched_at(a, batch[0]) for a in args):
        args = _batched_for_draws(args, *batch)
    call = Call(entry, op, args)
    chosen = rule_named(rule)
    rule_levels.append(call.level)  # a random draw here is for batched inputs
    try:
        return chosen(call)
    finally:
        rule_levels.pop()


# -- the rules the schema implies --------------------------------------------------


def elementwise(call: Call) -> Any:
    """Operands broadcast: batch dims to the front, each padded with size-1 dims
    to the rank of the widest operand, so they line up from the right."""
    tensors = [a for a in call.args.values() if isinstance(a, Tensor)]
    rank = max(t.ndim for t in tensors)
    changed = {}
    for name, value in call.args.items():
        if is_batched_at(value, call.level):
            moved = call.front(value)
            for _ in range(rank - value.ndim):
                moved = ops.unsqueeze(moved, 1)
            changed[name] = moved
    if not call.inplace:
        result = call.op(**{**call.args, **changed})
        dtype = _sample_dtype(call, tensors)
        if dtype is not None and result.dtype != dtype:
            result = ops._to_copy(result, dtype=dtype)
        return call.wrap(result)
    self_name = call.names[0]
    if self_name not in changed:
        _refuse_unbatched_self(call, tensors)
    call.op(**{**call.args, **changed})
    return call.args[self_name]


def _sample_dtype(call: Call, tensors: list[Tensor]) -> Any:
    """The result dtype of one sample, when batching may have changed it: type
    promotion ranks a 0-d tensor below one with dims, and a 0-d sample is not 0-d
    once batched. None when no batched operand is 0-d next to one with dims."""
    if not any(t.ndim == 0 and is_batched_at(t, call.level) for t in tensors):
        return None
    if not any(t.ndim for t in tensors):
        return None
    with no_grad():
        stand_ins = {
            name: (
                factories.zeros((1,) * value.ndim, dtype=value.dtype)
                if isinstance(value, Tensor)
                else value
            )
            for name, value in call.args.items()
        }
        return call.op(**stand_ins).dtype


def _refuse_unbatched_self(call: Call, tensors: list[Tensor]) -> None:
    """An in-place op cannot write a batch of results into one sample's tensor."""
    self_ = call.args[call.names[0]]
    broadcast = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    raise RuntimeError(
        ERR_VMAP_INPLACE.format(
            shape=list(self_.shape), broadcast=[call.size, *broadcast]
        )
    )


def _shift(dim: Any, ndim: int) -> Any:
    """A logical dim as a dim of the value with the batch dim in front: a
    non-negative one moves up by one, a negative one counts from the end as
    before. An empty list means every dim."""
    if isinstance(dim, (list, tuple)):
        return tuple(_shift(d, ndim) for d in dim) if dim else tuple(range(1, ndim + 1))
    return dim + 1 if dim >= 0 else dim


def shift_dims(*names: str) -> Rule:
    """The rule of a one-Tensor op whose arguments `names` are dims."""

    def rule(call: Call) -> Any:
        self_name = call.names[0]
        self_ = call.args[self_name]
        if not self_.ndim:
            return fallback(call)  # dim 0 of a 0-d sample is the sample itself
        changed = {self_name: call.front(self_)}
        for name in names:
            value = call.args[name]
            if value is None:
                return fallback(call)  # argmax(dim=None) & co. flatten first
            if isinstance(value, (list, tuple)) and not value and not self_.ndim:
                return fallback(call)  # every dim of a 0-d sample: none
            changed[name] = _shift(value, self_.ndim)
        if call.inplace:
            return fallback(call)
        return call.run(**changed)

    return rule


# -- rules by entry ------------------------------------------------------------


def full_reduction(call: Call) -> Any:
    """`sum(x)` & co.: each sample flattened, then the op's `dim` overload over it."""
    self_ = call.front(call.args[call.names[0]])
    flat = ops.reshape(self_, (call.size, -1))
    name = call.entry.split(".")[0]
    rest = {k: v for k, v in call.args.items() if k != call.names[0]}
    if name in ("max", "min"):
        return call.wrap(getattr(ops, "a" + name)(flat, 1))
    if name == "norm":
        return call.wrap(ops.linalg_vector_norm(flat, rest.get("p", 2), (1,)))
    return call.wrap(getattr(ops, name)(flat, 1, **rest))


def reshape_like(call: Call) -> Any:
    """view, reshape: the new size with the batch size in front."""
    size = call.args[call.names[1]]
    size = (size,) if isinstance(size, int) else tuple(size)
    moved = call.front(call.args[call.names[0]])
    return call.wrap(ops.reshape(moved, (call.size, *size)))


def expand_like(call: Call) -> Any:
    """expand, broadcast_to: pad the sample to the new rank, then expand."""
    self_ = call.args[call.names[0]]
    size = tuple(call.args[call.names[1]])
    moved = call.front(self_)
    for _ in range(len(size) - self_.ndim):
        moved = ops.unsqueeze(moved, 1)
    return call.run(**{call.names[0]: moved, call.names[1]: (call.size, *size)})


def permute(call: Call) -> Any:
    self_ = call.args["input"]
    dims = tuple(_shift(d, self_.ndim) for d in call.args["dims"])
    return call.run(input=call.front(self_), dims=(0, *dims))


def repeat_like(call: Call) -> Any:
    """repeat, tile: the batch dim is repeated once."""
    self_ = call.args[call.names[0]]
    reps = tuple(call.args[call.names[1]])
    moved = call.front(self_)
    for _ in range(len(reps) - self_.ndim):
        moved = ops.unsqueeze(moved, 1)
    return call.run(**{call.names[0]: moved, call.names[1]: (1, *reps)})


def cat_like(call: Call) -> Any:
    """cat, stack: every tensor given the batch dim, then `dim` shifted (cat's
    1-D empty tensors, which take no part, left out first)."""
    dim, tensors = call.args["dim"], call.args["tensors"]
    if call.entry == "cat":
        tensors = cat_operands(tensors)
    moved = [call.materialize(t) for t in tensors]
    return call.run(tensors=moved, dim=dim + 1 if dim >= 0 else dim)


def matmul(call: Call) -> Any:
    """mm, mv, dot, bmm as one matmul of the values: vectors become matrices
    (undone at the end), batch dims go to the front and are padded to the other
    operand's rank, so matmul broadcasts them."""
    a, b = (call.args[name] for name in call.names[:2])
    a_vector, b_vector = a.ndim == 1, b.ndim == 1
    rank = max(a.ndim, b.ndim, 2)

    def prepare(t: Any, vector_dim: int | None) -> Any:
        if not is_batched_at(t, call.level):
            return t if vector_dim is None else ops.unsqueeze(t, vector_dim)
        moved = call.front(t)
        if vector_dim is not None:
            moved = ops.unsqueeze(moved, vector_dim)
        for _ in range(rank - max(t.ndim, 2)):
            moved = ops.unsqueeze(moved, 1)
        return moved

    a_value = prepare(a, -2 if a_vector else None)
    result = ops.matmul(a_value, prepare(b, -1 if b_vector else None))
    if b_vector:
        result = ops.squeeze(result, -1)
    if a_vector:
        result = ops.squeeze(result, -1 if b_vector else -2)
    return call.wrap(result)


def squeeze_all(call: Call) -> Any:
    """squeeze(x): the size-1 dims of a sample, never the batch dim."""
    self_ = call.args["input"]
    dims = tuple(i for i, n in enumerate(self_.shape) if n == 1)
    return ops.squeeze(self_, dims) if dims else ops.alias(self_)


def transpose_2d(call: Call) -> Any:
    self_ = call.args["input"]
    return ops.transpose(self_, 0, 1) if self_.ndim == 2 else ops.alias(self_)


def squeeze_inplace(call: Call) -> Any:
    """squeeze_: the value squeezed in place at the sample's size-1 dims (all of
    them, or those of `dim`), the batch dim kept and its position updated."""
    self_ = call.args["input"]
    if not is_batched_at(self_, call.level):
        return fallback(call)
    dims = call.args.get("dim", tuple(range(self_.ndim)))
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    ndim = max(self_.ndim, 1)
    squeezed = sorted({d % ndim for d in dims if self_.ndim and self_.shape[d] == 1})
    for d in reversed(squeezed):
        physical = d if d < self_._bdim else d + 1
        ops.squeeze_(self_._value, physical)
        if physical < self_._bdim:
            self_._bdim -= 1
    return self_


# Decompositions: rules written as the op's logical meaning in other ops, each of
# which then batches by its own rule.
def _outer(call: Call) -> Any:
    return ops.mul(ops.unsqueeze(call.args["input"], -1), call.args["vec2"])


def _scaled_sum(base: Any, product: Any, beta: Any, alpha: Any) -> Any:
    product = product if alpha == 1 else ops.mul(product, alpha)
    if beta == 0:
        return product
    return ops.add(base if beta == 1 else ops.mul(base, beta), product)


def _addmm(call: Call) -> Any:
    args = call.args
    product = ops.matmul(*(args[n] for n in call.names[1:3]))
    return _scaled_sum(args["input"], product, args["beta"], args["alpha"])


def _linear(call: Call) -> Any:
    weight, bias = call.args["weight"], call.args["bias"]
    out = ops.matmul(call.args["input"], ops.transpose(weight, -2, -1))
    return out if bias is None else ops.add(out, bias)


def _trace(call: Call) -> Any:
    return ops.sum(ops.diagonal(call.args["input"]), -1)


# -- the fallback ----------------------------------------------------------------

_fallback_warning = [False]


def set_vmap_fallback_warning_enabled(enabled: bool) -> None:
    """Warn each time an op runs through the loop-and-stack fallback (PyTorch's
    `torch._C._functorch._set_vmap_fallback_warning_enabled`; off by default)."""
    _fallback_warning[0] = bool(enabled)


def _select(value: Any, call: Call, index: int) -> Any:
    if isinstance(value, (list, tuple)) and not isinstance(value, Tensor):
        return type(value)(_select(v, call, index) for v in value)
    if is_batched_at(value, call.level):
        return ops.select(value._value, value._bdim, index)
    return value


def fallback(call: Call) -> Any:
    """PyTorch's slow fallback: the op once per sample, the results stacked."""
    if _fallback_warning[0]:
        warnings.warn(ERR_VMAP_FALLBACK.format(op=f"aten::{call.entry}"), stacklevel=4)
    if call.inplace and not is_batched_at(call.args[call.names[0]], call.level):
        tensors = [a for a in call.args.values() if isinstance(a, Tensor)]
        _refuse_unbatched_self(call, tensors)
    results = []
    for index in range(call.size):
        sample = {name: _select(v, call, index) for name, v in call.args.items()}
        results.append(call.op(**sample))
    if call.inplace:
        return call.args[call.names[0]]
    first = results[0]
    if isinstance(first, Tensor):
        return call.wrap(ops.stack(results, 0))
    stacked = [ops.stack(list(outs), 0) for outs in zip(*results)]
    if hasattr(type(first), "_fields"):
        return call.wrap(type(first)(*stacked))
    return call.wrap(type(first)(stacked))


# -- the rules by name ------------------------------------------------------------

# The rules an entry of derivatives.yaml may name in its `batch_rule:` key (the
# generator reads this literal tuple with ast and refuses any other name), and
# the functions behind them. "elementwise" and "dims(...)" are also what the
# generator derives from a schema; "leading_dims" is the element-wise rule for an
# op that treats its leading dims as batch dims (tril, linalg_inv, clone);
# "fallback" keeps an entry whose schema would imply a rule on the loop.
BATCH_RULES = (
    "elementwise",
    "leading_dims",
    "dims",
    "full_reduction",
    "reshape",
    "expand",
    "permute",
    "repeat",
    "cat",
    "matmul",
    "squeeze",
    "squeeze_inplace",
    "t",
    "outer",
    "addmm",
    "linear",
    "trace",
    "fallback",
)
_BY_NAME: dict[str, Rule] = {
    "elementwise": elementwise,
    "leading_dims": elementwise,
    "full_reduction": full_reduction,
    "reshape": reshape_like,
    "expand": expand_like,
    "permute": permute,
    "repeat": repeat_like,
    "cat": cat_like,
    "matmul": matmul,
    "squeeze": squeeze_all,
    "squeeze_inplace": squeeze_inplace,
    "t": transpose_2d,
    "outer": _outer,
    "addmm": _addmm,
    "linear": _linear,
    "trace": _trace,
    "fallback": fallback,
}
_RESOLVED: dict[str, Rule] = {}


def rule_named(text: str) -> Rule:
    """The rule the generated wrapper names ("" or an unknown one: the fallback)."""
    rule = _RESOLVED.get(text)
    if rule is None:
        name, _, args = text.partition("(")
        if name == "dims":
            rule = shift_dims(*(a.strip() for a in args.rstrip(")").split(",")))
        else:
            rule = _BY_NAME.get(name, fallback)
        _RESOLVED[text] = rule
    return rule
