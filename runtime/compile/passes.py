"""Whole-graph passes: what a traced graph allows that no single eager node knows.

They run on the Graph after tracing, before code generation (compiler.generate):

* `eliminate_common_subexpressions`: a call of the same entry on the same values
  and arguments as an earlier call is dropped, and its outputs become the
  earlier call's (`exp(x)` written twice is computed once; its gradient flows
  into one value, summed there).
* `detach_row_max`: the log-softmax pattern `z = x - amax(x, d, keepdim=True)`,
  `z - log(sum(exp(z), d, keepdim=True))`. The result does not change when each
  row of `z` is shifted, so the gradient that reaches the maximum is exactly zero
  (`-sum(grad_z, d)` of a softmax's gradient); the maximum is then a constant of
  the backward, as hand-written numpy treats it, and its backward (a mask, a
  count, a division) is never run. The forward is unchanged.

* `pool_before_relu`: `max_pool2d(relu(x))` whose indices nothing reads is
  computed as `relu(max_pool2d(x))`. relu is non-decreasing, so each window's
  maximum is the same; a window whose maximum is not positive may give another
  index, whose gradient relu's backward sets to zero in both orders. relu and
  its backward then run on the pooled array (a quarter of the input for a 2x2
  window), and no array of the input's size is made for relu.

All leave the graph meaning what it meant: replay (double backward) runs the
passed graph's calls. `simplify` rewrites one backward formula once its names are
the graph's (runtime/compile/backward.py).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from yamlgrad.runtime.compile.graph import OP, Call, Const, Graph, Value


def optimize(graph: Graph) -> None:
    """Every pass, in place."""
    eliminate_common_subexpressions(graph)
    detach_row_max(graph)
    pool_before_relu(graph)


# -- common subexpressions ---------------------------------------------------------


def eliminate_common_subexpressions(graph: Graph) -> None:
    """Drop each call that repeats an earlier one (see the module docstring).

    A repeated call whose output the function returns or writes back is kept:
    two outputs stay two tensors, as eager gives them."""
    visible = {id(v) for v in graph.outputs}
    visible |= {id(final) for _, final in graph.writebacks}
    same: dict[Value, Value] = {}
    seen: dict[tuple[Any, ...], Call] = {}
    kept: list[Call] = []
    for call in graph.calls:
        if same:
            call.args = {k: _renamed(a, same) for k, a in call.args.items()}
        key = _call_key(call)
        first = seen.get(key) if key is not None else None
        if first is None or any(id(o) in visible for o in call.outputs if o):
            if key is not None:
                seen.setdefault(key, call)
            kept.append(call)
            continue
        for mine, theirs in zip(call.outputs, first.outputs):
            if mine is not None and theirs is not None:
                same[mine] = theirs
    graph.calls = kept


def _renamed(arg: Any, same: dict[Value, Value]) -> Any:
    if isinstance(arg, Value):
        return same.get(arg, arg)
    if isinstance(arg, list):
        return [_renamed(a, same) for a in arg]
    return arg


def _call_key(call: Call) -> tuple[Any, ...] | None:
    """What makes two calls the same computation; None: never merged (in-place
    calls, whose replay differs, and calls with an output the graph does not
    follow). A detach step has no entry (`info` is None): two detaches of one
    value are one value."""
    if (not call.detach and call.info.inplace) or None in call.outputs:
        return None
    try:
        args = tuple((k, _arg_key(a)) for k, a in call.args.items())
        casts = tuple(sorted((k, str(d)) for k, d in call.casts.items()))
        key = (id(call.info), id(call.node_info), call.detach, args, casts)
        hash(key)
    except TypeError:
        return None
    return key


def _arg_key(arg: Any) -> Any:
    if isinstance(arg, Value):
        return ("value", id(arg))
    if isinstance(arg, list):
        return ("list", tuple(_arg_key(a) for a in arg))
    value = arg.value if isinstance(arg, Const) else arg
    return ("const", _value_key(value))


def _value_key(value: Any) -> Any:
    """Equal keys only for equal values of one type (`-0.0` is not `0.0`, `1`
    is not `True`); an array by identity."""
    kind = type(value)
    if kind is float:
        return (kind, repr(value))
    if kind in (list, tuple):
        return (kind, tuple(_value_key(v) for v in value))
    if value is None or kind in (bool, int, str, complex):
        return (kind, value)
    return ("id", id(value))


# -- the log-softmax pattern -------------------------------------------------------


def detach_row_max(graph: Graph) -> None:
    """Make the row maximum of each log-softmax a constant of the backward."""
    users = _users(graph)
    outputs = {id(v) for v in graph.outputs}
    for call in graph.calls:
        if _name(call) != "amax" or not _const(call, "keepdim"):
            continue
        row_max = call.outputs[0]
        if row_max is None or not row_max.requires_grad or id(row_max) in outputs:
            continue
        if _log_softmax_of(call, users, outputs) is not None:
            row_max.requires_grad = False


def _log_softmax_of(
    amax: Call, users: dict[int, list[tuple[Call, str]]], outputs: set[int]
) -> Call | None:
    """The final `sub` of `x - amax(x)` ... `z - log(sum(exp(z)))`, or None."""
    x, row_max = amax.args["self"], amax.outputs[0]
    dims = _dims(amax.args["dim"], len(x.shape)) if isinstance(x, Value) else None
    shift = _only_user(row_max, users, outputs)
    if (
        dims is None
        or shift is None
        or shift[1] != "other"
        or _name(shift[0]) != "sub"
        or shift[0].args["self"] is not x
        or not _alpha_one(shift[0])
    ):
        return None
    z = shift[0].outputs[0]
    uses = users.get(id(z), [])
    if z is None or id(z) in outputs or len(uses) != 2:
        return None
    exp = next((c for c, name in uses if _name(c) == "exp"), None)
    final = next((c for c, n in uses if _name(c) == "sub" and n == "self"), None)
    if exp is None or final is None or not _alpha_one(final):
        return None
    total = _only_user(exp.outputs[0], users, outputs)
    if total is None or _name(total[0]) != "sum" or "dim" not in total[0].args:
        return None
    if _dims(total[0].args["dim"], len(z.shape)) != dims:
        return None
    if not _const(total[0], "keepdim") or _const(total[0], "dtype") is not None:
        return None
    log = _only_user(total[0].outputs[0], users, outputs)
    if log is None or _name(log[0]) != "log":
        return None
    last = _only_user(log[0].outputs[0], users, outputs)
    if last is None or last[0] is not final or last[1] != "other":
        return None
    return final


# -- max pooling of a relu ---------------------------------------------------------


def pool_before_relu(graph: Graph) -> None:
    """Swap each relu and the max_pool2d that alone reads it (see the module
    docstring): the pooling takes relu's input, relu the pooling's values."""
    users = _users(graph)
    visible = {id(v) for v in graph.outputs}
    visible |= {id(v) for pair in graph.writebacks for v in pair}
    taken = {v.name for v in graph.sources + graph.constants}
    taken |= {v.name for call in graph.calls for v in call.outputs if v is not None}
    for relu in list(graph.calls):
        x = relu.args.get("self")
        if _name(relu) != "relu" or not isinstance(x, Value):
            continue
        use = _only_user(relu.outputs[0], users, visible)
        if use is None:
            continue
        pool, argument = use
        if _name(pool) != "max_pool2d_with_indices" or argument != "self":
            continue
        values, indices = pool.outputs
        if values is None or indices is None or id(indices) in visible:
            continue
        if users.get(id(indices)) or x.dtype.kind != "f":
            continue
        name = f"{values.name}_of_{x.name}"
        while name in taken:
            name += "_"
        taken.add(name)
        unrectified = Value(
            name, OP, values.shape, values.dtype, values.requires_grad, values.example
        )
        pool.args["self"] = x
        pool.outputs = [unrectified, indices]
        relu.args["self"] = unrectified
        relu.outputs = [values]
        graph.calls.remove(relu)
        graph.calls.insert(graph.calls.index(pool) + 1, relu)


def _users(graph: Graph) -> dict[int, list[tuple[Call, str]]]:
    """Each value's readers: (call, argument name), by the value's id."""
    users: dict[int, list[tuple[Call, str]]] = {}
    for call in graph.calls:
        for name, arg in call.args.items():
            for v in _values(arg):
                users.setdefault(id(v), []).append((call, name))
    return users


def _values(arg: Any) -> Iterator[Value]:
    if isinstance(arg, Value):
        yield arg
    elif isinstance(arg, list):
        for a in arg:
            yield from _values(a)


def _only_user(
    value: Value | None, users: dict[int, list[tuple[Call, str]]], outputs: set[int]
) -> tuple[Call, str] | None:
    if value is None or id(value) in outputs:
        return None
    uses = users.get(id(value), [])
    return uses[0] if len(uses) == 1 else None


def _name(call: Call) -> str:
    return "" if call.detach or call.info.inplace else call.info.func.name


def _const(call: Call, name: str) -> Any:
    arg = call.args.get(name)
    return arg.value if isinstance(arg, Const) else None


def _alpha_one(call: Call) -> bool:
    alpha = _const(call, "alpha")
    return alpha is None or (type(alpha) in (int, float) and alpha == 1)


def _dims(arg: Any, ndim: int) -> tuple[int, ...] | None:
    value = arg.value if isinstance(arg, Const) else None
    if value is None or ndim == 0:
        return None
    dims = [value] if type(value) is int else list(value)
    if not dims or any(type(d) is not int or not -ndim <= d < ndim for d in dims):
        return None
    return tuple(sorted(d % ndim for d in dims))


# -- formulas ----------------------------------------------------------------------


def simplify(tree: ast.expr, real: bool = False) -> ast.expr:
    """A backward formula, as the graph's literals let it be written, for the
    same values bit for bit:

    * `maybe_multiply(g, 1)` is `g` (the helper's own rule, decided once).
    * in a call whose values are all real (`real`), `conj(x)` and
      `conj_physical(x)` are `x` and `handle_r_to_c(dtype, g)` is `g`: the
      helpers' own rules on real values, decided once at trace time.

    (backward.py's static reductions move a negation out of the sum the same
    way: `-np.add.reduce(g)` is `np.add.reduce(-g)` on the smaller array.)
    """
    kind = type(tree)
    if kind is ast.Call:
        func = tree.func  # type: ignore[attr-defined]
        args = [simplify(a, real) for a in tree.args]  # type: ignore[attr-defined]
        name = func.id if type(func) is ast.Name else None
        plain = not tree.keywords  # type: ignore[attr-defined]
        if name == "maybe_multiply" and len(args) == 2 and plain and _is_one(args[1]):
            return args[0]
        if (
            real
            and plain
            and name in _REAL_IDENTITIES
            and len(args) == _REAL_IDENTITIES[name] + 1
        ):
            return args[_REAL_IDENTITIES[name]]
        return ast.Call(func, args, tree.keywords)  # type: ignore[attr-defined]
    if kind is ast.UnaryOp:
        return ast.UnaryOp(tree.op, simplify(tree.operand, real))  # type: ignore
    if kind is ast.BinOp:
        left = simplify(tree.left, real)  # type: ignore[attr-defined]
        right = simplify(tree.right, real)  # type: ignore[attr-defined]
        return ast.BinOp(left, tree.op, right)  # type: ignore[attr-defined]
    return tree


# The formula helpers that return one of their arguments on real values: name ->
# the index of the argument returned.
_REAL_IDENTITIES = {"conj": 0, "conj_physical": 0, "handle_r_to_c": 1}


def _is_one(node: ast.expr) -> bool:
    return (
        type(node) is ast.Constant
        and type(node.value) in (int, float)
        and node.value == 1
    )
