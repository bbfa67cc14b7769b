"""Horizontal packing: many small identical calls of a traced graph as one call.

A graph of size-1 values (micrograd's scalar MLP) records hundreds of calls of
the same few entries, each a numpy call on a one-element array. Here the graph
is level-scheduled (a call's level is one past the deepest of its operands'), and
in each level the element-wise calls (`batch_rule: elementwise` in
derivatives.yaml) of the same entry, on operands of one small shape and dtype,
with the same non-tensor arguments, form a group. A group large enough to pay
(`_pays`: `MIN_GROUP` calls or more, measured) becomes one call of the same
entry on packed operands: each member's value is a row block of one array, its
members concatenated along dim 0 (0-d members, micrograd's and PyTorch's
tutorials' `tensor(2.0)`, are stacked: one row each, as (1,)-shaped ones). The
rewritten graph is made of derivatives.yaml entries only, so the forward
runs each entry's kernel and the backward its formulas, as for any graph:

* `cat` (`stack` for 0-d values) packs the graph's inputs that packed groups
  read, once per call; its backward hands each input a view of the packed
  gradient;
* an operand is the packed value of an earlier group itself, a `slice` of it
  (rows in an arithmetic progression: contiguous or strided, a view), a `cat` of
  unpacked values, or an `index_select` on the `cat` of the packed values it
  reads (precomputed indices; its backward sums the gradients of a value read
  several times; unpacked 0-d values join them as one `stack`);
* a Python number given for a tensor operand that differs between members
  becomes a constant vector, one entry per row, in the operands' dtype;
* a member that an unpacked call, an output or a write-back reads is taken out
  of its packed value again (`split`, or `slice` for one member; `unbind`, or
  `select` for one, of 0-d members).

Values that are not small (more than `MAX_ELEMENTS` elements), or read by
calls that do not pack are left alone: a graph of big arrays is unchanged.
Replay (double backward) runs the rewritten graph's calls as eager ops.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from yamlgrad.runtime.compile.backward import live_calls
from yamlgrad.runtime.compile.graph import CONSTANT, OP, Call, Const, Graph, Value

# Where packing pays, measured on one compiled forward and backward of k values
# each through three entries (thread CPU time, packed / unpacked): on size-1
# values 0.99 at k=2, 0.72 at k=3, 0.37 at k=8; on 64 elements 0.93 at k=3 and
# 0.74 at k=4; on 1024 elements 0.86 at k=4; on 4096 0.98 at k=4 and k=8.
# So a group of MIN_GROUP calls packs when its values have at most
# SMALL_ELEMENTS elements, of one call more up to MAX_ELEMENTS, and not beyond.
MIN_GROUP = 3
SMALL_ELEMENTS = 16
MAX_ELEMENTS = 1024
# How many member names a packed call's comment lists.
_LISTED = 6


@dataclass
class _Rewrite:
    """The state of one rewrite: the new calls and where each member lives."""

    graph: Graph
    used: set[str]
    calls: list[Call] = field(default_factory=list)
    # A member value -> (its packed value, its row block).
    where: dict[Value, tuple[Value, int]] = field(default_factory=dict)
    unpacked: set[Value] = field(default_factory=set)  # needed as itself
    # Each member's readers among the packed groups' operands (see _partition).
    readers: dict[Value, list[tuple[int, str]]] = field(default_factory=dict)
    operands: dict[tuple[int, str], list[Value]] = field(default_factory=dict)
    members: dict[Value, list[Value]] = field(default_factory=dict)
    parts: dict[Value, dict[tuple[int, ...], Value] | None] = field(
        default_factory=dict
    )

    def fresh(self, base: str) -> str:
        n = 0
        name = base
        while name in self.used:
            n += 1
            name = f"{base}_{n}"
        self.used.add(name)
        return name

    def value(self, base: str, example: np.ndarray, requires_grad: bool) -> Value:
        name = self.fresh(base)
        return Value(
            name, OP, example.shape, example.dtype, requires_grad, example=example
        )


def pack(graph: Graph, reserved: Any = ()) -> set[Value] | None:
    """Pack the graph's groups of small identical calls, in place. Returns the
    sources a gradient reached before (a packed input that no gradient reached
    gets a zero piece of the packed gradient, where eager gives it none), or
    None when no group pays (the graph is then unchanged)."""
    levels = _levels(graph)
    groups = _groups(graph, levels)
    chosen = _choose(graph, groups)
    if not chosen:
        return None
    reached = set(graph.sources) & live_calls(graph)[1]
    used = set(reserved) | {v.name for v in _all_values(graph)}
    rewrite = _Rewrite(graph, used)
    rewrite.unpacked = _needed_unpacked(graph, groups, chosen)
    _find_readers(rewrite, groups, chosen)
    _pack_inputs(rewrite, groups, chosen)
    for group in groups:
        if id(group) in chosen:
            _emit_group(rewrite, group, levels[id(group[0])])
        else:
            rewrite.calls += group
    graph.calls = rewrite.calls
    return reached


# -- scheduling --------------------------------------------------------------------


def _levels(graph: Graph) -> dict[int, int]:
    """Each call's level (by id): one past the deepest producer of its operands."""
    depth: dict[Value, int] = {}
    levels: dict[int, int] = {}
    for call in graph.calls:
        level = 1 + max((depth.get(v, 0) for v in _values(call.args)), default=0)
        levels[id(call)] = level
        for o in call.outputs:
            if o is not None:
                depth[o] = level
    return levels


def _groups(graph: Graph, levels: dict[int, int]) -> list[list[Call]]:
    """The calls by level; in a level, the packable calls of one key together
    (in the order of their first member), every other call alone."""
    by_level: dict[int, dict[Any, list[Call]]] = {}
    for call in graph.calls:
        key = _key(call) if _packable(call) else None
        bucket = by_level.setdefault(levels[id(call)], {})
        bucket.setdefault(key if key is not None else id(call), []).append(call)
    groups: list[list[Call]] = []
    for level in sorted(by_level):
        groups += by_level[level].values()
    return groups


def _pays(group: list[Call]) -> bool:
    """A group of packable calls large enough to pack (see MIN_GROUP)."""
    if len(group) < MIN_GROUP or not _packable(group[0]):
        return False
    small = math.prod(group[0].outputs[0].shape) <= SMALL_ELEMENTS
    return len(group) >= (MIN_GROUP if small else MIN_GROUP + 1)


def _packable(call: Call) -> bool:
    """An element-wise call of one output on same-shaped small operands."""
    if call.detach or call.info.inplace or call.info.output_kind != "single":
        return False
    out = call.outputs[0]
    if out is None or math.prod(out.shape) > MAX_ELEMENTS:
        return False
    if call.info.batch_rule != "elementwise":
        return False
    tensors = {a.name for a in call.info.func.arguments if a.is_tensor}
    found = False
    for name, arg in call.args.items():
        if isinstance(arg, list):
            return False
        if isinstance(arg, Value):
            if arg.shape != out.shape or arg.dtype.kind != "f":
                return False
            found = True
        elif name in tensors and not _number(arg.value):
            return False
    return found


def _number(value: Any) -> bool:
    return type(value) in (int, float)


def _key(call: Call) -> tuple[Any, ...]:
    """What the members of one group share: the entry, the operands' shapes and
    dtypes, every non-tensor argument; a number for a tensor varies."""
    tensors = {a.name for a in call.info.func.arguments if a.is_tensor}
    parts: list[Any] = [id(call.info), id(call.node_info), call.outputs[0].shape]
    parts.append(tuple(sorted((k, str(d)) for k, d in call.casts.items())))
    for name, arg in call.args.items():
        if isinstance(arg, Value):
            parts.append((name, arg.dtype))
        elif name in tensors:
            parts.append((name, "number"))
        else:
            parts.append((name, repr(arg.value)))
    return tuple(parts)


# -- what stays unpacked -----------------------------------------------------------


def _choose(graph: Graph, groups: list[list[Call]]) -> set[int]:
    """The groups to pack (by id): those that `_pays` lets through and that
    save calls once their operands' gathers and their members' unpacking are
    counted. Each gather and unpacking is one call more (and its backward one
    more), so a group packs when its calls outnumber the packed call with them:
    three `x * c` of one `x` whose results are read one by one are not packed
    (measured 1.8x slower packed, a cat and a split around one multiply); a
    group whose operands are packed groups' values, as in a chain of packed
    groups, is (0.76x). Declining a group can make its operands' groups need
    unpacking: a few rounds settle it."""
    chosen = {id(g) for g in groups if _pays(g)}
    for _ in range(_ROUNDS):
        producer = {c.outputs[0]: id(g) for g in groups if id(g) in chosen for c in g}
        needed = _needed_unpacked(graph, groups, chosen)
        kept = set()
        for group in groups:
            if id(group) not in chosen:
                continue
            extra = any(c.outputs[0] in needed for c in group)
            for name, arg in group[0].args.items():
                if isinstance(arg, Value):
                    made = {producer.get(c.args[name]) for c in group}
                    extra += len(made) != 1 or None in made
            if len(group) > 1 + extra:
                kept.add(id(group))
        if kept == chosen:
            break
        chosen = kept
    return chosen


# How many times _choose reconsiders its groups.
_ROUNDS = 4


def _needed_unpacked(
    graph: Graph, groups: list[list[Call]], chosen: set[int]
) -> set[Value]:
    """The values some unpacked call, output or write-back reads as themselves."""
    needed = set(graph.outputs) | {final for _, final in graph.writebacks}
    for group in groups:
        if id(group) in chosen:
            continue
        for call in group:
            needed.update(_values(call.args))
    return needed


def _find_readers(
    rewrite: _Rewrite, groups: list[list[Call]], chosen: set[int]
) -> None:
    """Which operand of which packed group reads each value, and in what order."""
    for index, group in enumerate(groups):
        if id(group) not in chosen:
            continue
        for name, arg in group[0].args.items():
            if isinstance(arg, Value):
                operand = [c.args[name] for c in group]
                rewrite.operands[(index, name)] = operand
                for v in operand:
                    rewrite.readers.setdefault(v, []).append((index, name))


def _pack_inputs(rewrite: _Rewrite, groups: list[list[Call]], chosen: set[int]) -> None:
    """One `cat` of the graph's inputs that packed groups read, per shape and
    dtype (in the graph's order)."""
    read: set[Value] = set()
    for group in groups:
        if id(group) in chosen:
            for call in group:
                read.update(v for v in _values(call.args) if v.kind != OP)
    sources = rewrite.graph.sources + rewrite.graph.constants
    kinds: dict[Any, list[Value]] = {}
    for v in sources:
        if v in read:
            kinds.setdefault((v.shape, v.dtype), []).append(v)
    for members in kinds.values():
        if len(members) < MIN_GROUP:
            continue
        packed = _cat(rewrite, members, "packed_inputs", "the inputs packed")
        for i, v in enumerate(members):
            rewrite.where[v] = (packed, i)


# -- one group ----------------------------------------------------------------------


def _emit_group(rewrite: _Rewrite, group: list[Call], level: int) -> None:
    first = group[0]
    tensors = {a.name for a in first.info.func.arguments if a.is_tensor}
    args: dict[str, Any] = {}
    for name, arg in first.args.items():
        if isinstance(arg, Value):
            args[name] = _gather(rewrite, [c.args[name] for c in group], name)
        elif name in tensors and len({repr(c.args[name]) for c in group}) > 1:
            args[name] = _scalars(rewrite, group, name)
        else:
            args[name] = arg
    members = [c.outputs[0] for c in group]
    example = _joined([m.example for m in members])
    base = f"packed_{members[0].name}"
    out = rewrite.value(base, example, any(m.requires_grad for m in members))
    where = f"level {level}, {_listed(members)}; first at {first.where}"
    call = Call(
        first.info, first.node_info, first.wrapper, args, [out], first.casts, where
    )
    rewrite.calls.append(call)
    for i, m in enumerate(members):
        rewrite.where[m] = (out, i)
    rewrite.members[out] = members
    _unpack(rewrite, out, members)


def _listed(members: list[Value]) -> str:
    names = [m.name for m in members]
    if len(names) > _LISTED:
        names = names[: _LISTED - 1] + ["...", names[-1]]
    return f"{len(members)} calls packed: {', '.join(names)}"


def _scalars(rewrite: _Rewrite, group: list[Call], name: str) -> Value:
    """The numbers the members give for a tensor operand, one per row."""
    out = group[0].outputs[0]
    dtype = next(v.dtype for v in _values(group[0].args))
    numbers = np.array([c.args[name].value for c in group], dtype)
    numbers = np.repeat(numbers, _rows(out))
    example = numbers.reshape((-1,) + (1,) * max(len(out.shape) - 1, 0))
    example.flags.writeable = False
    value = Value(
        rewrite.fresh(f"{name}_numbers"), CONSTANT, example.shape, dtype, False
    )
    value.example = example
    rewrite.graph.constants.append(value)
    return value


def _gather(rewrite: _Rewrite, members: list[Value], what: str) -> Value:
    """One packed operand: the members' rows, in order (see the module docstring)."""
    places = [rewrite.where.get(m, (m, 0)) for m in members]
    sources = list(dict.fromkeys(p for p, _ in places))
    rows = _rows(members[0])
    if len(sources) == 1:
        source = sources[0]
        blocks = [i for _, i in places]
        part = _partition(rewrite, source)
        if part is not None and tuple(blocks) in part:
            return part[tuple(blocks)]
        step = blocks[1] - blocks[0] if len(blocks) > 1 else 1
        if step > 0 and blocks == list(range(blocks[0], blocks[-1] + 1, step)):
            if blocks[0] == 0 and step == 1 and len(blocks) * rows == source.shape[0]:
                return source
            if step == 1 or rows == 1:
                start = blocks[0] * rows
                end = (blocks[-1] + 1) * rows
                return _slice(rewrite, source, start, end, step, what)
    if all(p is m and i == 0 for m, (p, i) in zip(members, places)):
        return _cat(rewrite, members, f"{what}_packed", f"{what} packed")
    if not members[0].shape:  # the 0-d members read as themselves, as one row each
        places = _stacked(rewrite, members, places, what)
        sources = list(dict.fromkeys(p for p, _ in places))
    buffer = sources[0]
    if len(sources) > 1:
        buffer = _cat(rewrite, sources, f"{what}_sources", f"{what}'s sources")
    offsets, start = {}, 0
    for s in sources:
        offsets[s] = start
        start += s.shape[0]
    blocks = np.array([offsets[p] + i * rows for p, i in places], dtype=np.int64)
    index = (blocks[:, None] + np.arange(rows)).reshape(-1)
    index.flags.writeable = False
    return _index_select(rewrite, buffer, index, what)


def _partition(rewrite: _Rewrite, packed: Value) -> dict[tuple[int, ...], Value] | None:
    """When the operands of later groups read every member of `packed` once, in
    blocks of one size that are contiguous (`b*m, ..., b*m + m - 1`) or strided
    (`j, j + s, ...` for each `j < s`): the block of each operand, taken by one
    `split` (or a `view` and `unbind` of its columns) instead of one slice per
    operand, whose backward is then one `cat` (or `stack`) of their gradients,
    not a zero array with a slice of gradient set per operand."""
    if packed in rewrite.parts:
        return rewrite.parts[packed]
    rewrite.parts[packed] = None
    members = rewrite.members.get(packed)
    if members is None or any(
        m in rewrite.unpacked or len(rewrite.readers.get(m, ())) != 1 for m in members
    ):
        return None
    row = {m: i for i, m in enumerate(members)}
    keys = list(dict.fromkeys(rewrite.readers[m][0] for m in members))
    blocks = [tuple(row[m] for m in rewrite.operands[key]) for key in keys]
    size, count = len(blocks[0]), len(blocks)
    if count < 2 or any(len(b) != size for b in blocks):
        return None
    rows = _rows(members[0])
    if sorted(blocks) == [
        tuple(range(b * size, b * size + size)) for b in range(count)
    ]:
        order = sorted(blocks)
        outputs = _split(rewrite, packed, size * rows, count)
    elif rows == 1 and sorted(blocks) == [
        tuple(range(j, len(members), count)) for j in range(count)
    ]:
        order = sorted(blocks)
        outputs = _columns(rewrite, packed, size, count)
    else:
        return None
    rewrite.parts[packed] = dict(zip(order, outputs))
    return rewrite.parts[packed]


def _split(rewrite: _Rewrite, packed: Value, length: int, count: int) -> list[Value]:
    outputs = [
        rewrite.value(
            f"{packed.name}_part",
            packed.example[i * length : (i + 1) * length],
            packed.requires_grad,
        )
        for i in range(count)
    ]
    args = {"self": packed, "split_size": Const(length), "dim": Const(0)}
    _append(rewrite, "split_Tensor", args, outputs, f"{packed.name} in {count} parts")
    return outputs


def _columns(rewrite: _Rewrite, packed: Value, size: int, count: int) -> list[Value]:
    shape = [size, count, *packed.shape[1:]]
    table = rewrite.value(
        f"{packed.name}_table", packed.example.reshape(shape), packed.requires_grad
    )
    args = {"self": packed, "size": Const(shape)}
    _append(rewrite, "view_default", args, [table], f"{packed.name} as {count} columns")
    outputs = [
        rewrite.value(
            f"{packed.name}_column", table.example[:, j], packed.requires_grad
        )
        for j in range(count)
    ]
    args = {"self": table, "dim": Const(1)}
    _append(rewrite, "unbind_int", args, outputs, f"the columns of {table.name}")
    return outputs


def _unpack(rewrite: _Rewrite, packed: Value, members: list[Value]) -> None:
    """The members read as themselves, taken out of their packed value."""
    wanted = [i for i, m in enumerate(members) if m in rewrite.unpacked]
    if not wanted:
        return
    if len(wanted) == 1:
        _member(rewrite, packed, wanted[0], members[wanted[0]])
        return
    outputs = [
        (
            m
            if m in rewrite.unpacked
            else rewrite.value(f"{m.name}_unused", m.example, m.requires_grad)
        )
        for m in members
    ]
    what = f"{len(wanted)} members unpacked"
    if not members[0].shape:
        _append(rewrite, "unbind_int", {"self": packed, "dim": Const(0)}, outputs, what)
        return
    args = {"self": packed, "split_size": Const(members[0].shape[0]), "dim": Const(0)}
    _append(rewrite, "split_Tensor", args, outputs, what)


def _member(rewrite: _Rewrite, packed: Value, i: int, member: Value) -> None:
    """Member `i` of `packed` as `member`: its rows (`slice`), or its element
    (`select`) for a 0-d member."""
    what = f"{member.name} unpacked"
    if not member.shape:
        args = {"self": packed, "dim": Const(0), "index": Const(i)}
        _append(rewrite, "select_int", args, [member], what)
        return
    rows = member.shape[0]
    args = {"self": packed, "dim": Const(0), "start": Const(i * rows)}
    args.update(end=Const((i + 1) * rows), step=Const(1))
    _append(rewrite, "slice_Tensor", args, [member], what)


# -- the calls a rewrite adds ---------------------------------------------------------


def _cat(rewrite: _Rewrite, values: list[Value], base: str, what: str) -> Value:
    """The values joined along dim 0: a `cat`, or a `stack` of 0-d values."""
    example = _joined([v.example for v in values])
    out = rewrite.value(base, example, any(v.requires_grad for v in values))
    entry = "cat" if values[0].shape else "stack"
    _append(rewrite, entry, {"tensors": list(values), "dim": Const(0)}, [out], what)
    return out


def _stacked(
    rewrite: _Rewrite,
    members: list[Value],
    places: list[tuple[Value, int]],
    what: str,
) -> list[tuple[Value, int]]:
    """`places` with the 0-d values read as themselves moved into one `stack` of
    them (a packed value is 1-d: they join it as rows)."""
    loose = list(dict.fromkeys(p for p, _ in places if not p.shape))
    if not loose:
        return places
    stacked = _cat(rewrite, loose, f"{what}_loose", f"{what}'s unpacked values")
    row = {v: i for i, v in enumerate(loose)}
    return [(stacked, row[p]) if p in row else (p, i) for p, i in places]


def _slice(
    rewrite: _Rewrite, source: Value, start: int, end: int, step: int, what: str
) -> Value:
    example = source.example[start:end:step]
    out = rewrite.value(f"{what}_rows", example, source.requires_grad)
    args = {"self": source, "dim": Const(0), "start": Const(start)}
    args.update(end=Const(end), step=Const(step))
    _append(rewrite, "slice_Tensor", args, [out], f"{what} of {source.name}")
    return out


def _index_select(
    rewrite: _Rewrite, source: Value, index: np.ndarray, what: str
) -> Value:
    example = np.take(source.example, index, axis=0)
    out = rewrite.value(f"{what}_rows", example, source.requires_grad)
    args = {"self": source, "dim": Const(0), "index": Const(index)}
    _append(rewrite, "index_select", args, [out], f"{what} of {source.name}")
    return out


def _append(
    rewrite: _Rewrite,
    wrapper: str,
    args: dict[str, Any],
    outputs: list[Value],
    what: str,
) -> None:
    from yamlgrad.runtime.compile.tracer import entries
    from yamlgrad.runtime.dispatch import ops

    info = entries()[0][wrapper]
    function = getattr(ops, wrapper)
    call = Call(info, info, function, args, list(outputs), {}, f"packing: {what}")
    rewrite.calls.append(call)


# -- helpers ---------------------------------------------------------------------------


def _rows(value: Value) -> int:
    """The rows one member takes in a packed value (a 0-d member takes one)."""
    return value.shape[0] if value.shape else 1


def _joined(examples: list[np.ndarray]) -> np.ndarray:
    """Examples joined along dim 0, as `_cat` joins their values."""
    if examples[0].shape:
        return np.concatenate(examples)
    return np.stack(examples)


def _values(args: Any) -> Iterator[Value]:
    for arg in args.values() if isinstance(args, dict) else args:
        if isinstance(arg, Value):
            yield arg
        elif isinstance(arg, list):
            yield from (a for a in arg if isinstance(a, Value))


def _all_values(graph: Graph) -> Iterator[Value]:
    yield from graph.sources
    yield from graph.constants
    for call in graph.calls:
        yield from (o for o in call.outputs if o is not None)
