"""The backward function of a traced graph, from the recorded entries' formulas.

Calls are visited in reverse. For each call whose outputs carry a gradient, each
formula of its entry (tools/expressions.py's checked text, with the node's
locals replaced by the graph's names and literals) gives a contribution to an
input's gradient, for the inputs that require grad and no other. Each
contribution is evaluated once here on the traced arrays (`probe`): its shape and
dtype decide the reduction and the cast written after it, as the engine's
validate_outputs would decide them on every call.
"""

from __future__ import annotations

import ast
import functools
import re
import warnings
from typing import Any

import numpy as np

from yamlgrad.runtime.autograd.input_metadata import sum_to, to_dtype
from yamlgrad.runtime.compile.codegen import (
    Namespace,
    Stmt,
    arg_expr,
    base_namespace,
    literal,
    stmt_of,
    substitute,
    value_expr,
)
from yamlgrad.runtime.compile.folding import BROADCASTS, fold_backward
from yamlgrad.runtime.compile.graph import CONSTANT, Call, Const, Graph, Value
from yamlgrad.runtime.compile.passes import simplify

_SUFFIXES = {"_sym_sizes": "shape", "_dim": "ndim", "_scalar_type": "dtype"}
# One size a formula reads (`x.shape[-1]` saves `x_sym_argsize_minus_1`).
_ARGSIZE = re.compile(r"(?P<base>\w+)_sym_argsize_(?P<minus>minus_)?(?P<dim>\d+)")


def conform(grad: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """A gradient in its input's shape and dtype, decided at run time: for a
    contribution whose shape could not be learned while tracing."""
    if np.shape(grad) != shape:
        grad = sum_to(np.asarray(grad), shape)
    if np.asarray(grad).dtype != dtype:
        grad = to_dtype(np.asarray(grad), dtype)
    return grad


def _reduce_dims(grad: tuple[int, ...], shape: tuple[int, ...]) -> list[int] | None:
    """sum_to's axes from `grad` down to `shape`; None when it is no broadcast."""
    lead = len(grad) - len(shape)
    if lead < 0:
        return None
    dims = list(range(lead))
    for i, s in enumerate(shape):
        g = grad[lead + i]
        if s == 1 and g != 1:
            dims.append(lead + i)
        elif s != g:
            return None
    return dims


class BackwardBuilder:
    """Builds the backward's statements; see the module docstring."""

    def __init__(self, graph: Graph, namespace: Namespace) -> None:
        self.graph = graph
        self.ns = namespace
        self.stmts: list[Stmt] = []
        self.grads: dict[Value, str] = {}
        self.owned: set[str] = set()
        self.env: dict[str, Any] = {}
        self.temps = 0
        self.params: list[str] = []
        # Each gradient's last contribution: (the call that gave it, its tree,
        # its statement). The same again from the same call (x * x) is not
        # computed twice (see `twice`).
        self.created: dict[Value, tuple[int, ast.expr, Stmt]] = {}
        self.current = 0
        # The shape and dtype of each gradient name (runtime/compile/memory.py).
        self.metas: dict[str, tuple[tuple[int, ...], np.dtype]] = {}

    # -- the parts -------------------------------------------------------------------

    def build(self) -> None:
        self.env.update(self.ns.values)
        for v in self._forward_values():
            self.env[v.name] = v.example
        self.seed_output_grads()
        live = self.live_calls()
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for call in live:
                self.emit_call(call)
        returned = {self.grads[v] for v in self.graph.sources if v in self.grads}
        helpers = {name: base_namespace()[name] for name in BROADCASTS}
        metas = self.value_metas()
        self.stmts = fold_backward(self.stmts, metas, self.ns.values, helpers, returned)

    def value_metas(self) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
        """The shape and dtype of every name the backward reads or binds that
        stands for one value: the forward's values, the gradients."""
        metas = {
            v.name: (v.shape, v.dtype)
            for v in self._forward_values()
            if v.kind != CONSTANT
        }
        for v in self.graph.outputs:
            if v.requires_grad:
                metas[f"grad_{v.name}"] = (v.shape, v.dtype)
        metas.update(self.metas)
        return metas

    def _forward_values(self) -> list[Value]:
        values = list(self.graph.sources)
        for call in self.graph.calls:
            values += [o for o in call.outputs if o is not None]
        return values

    def seed_output_grads(self) -> None:
        """One parameter per differentiable output; a value given twice sums."""
        for v in self.graph.outputs:
            if not v.requires_grad:
                continue
            name = f"grad_{v.name}"
            if v in self.grads:
                name = self.fresh(f"grad_{v.name}")
                self.params.append(name)
                self.accumulate(v, _name(name), {name}, fresh=False)
            else:
                self.params.append(name)
                self.grads[v] = name
            self.env[name] = _probe_grad(v)

    def live_calls(self) -> list[Call]:
        """The calls with a gradient to pass on, last first."""
        return live_calls(self.graph)[0]

    def _inputs(self, call: Call) -> dict[str, Any]:
        return _differentiable_inputs(call)

    def fresh(self, base: str) -> str:
        self.temps += 1
        return f"{base}_{self.temps}"

    # -- one call --------------------------------------------------------------------

    def emit_call(self, call: Call) -> None:
        info = call.node_info
        names = self.formula_names(call)
        inputs = self._inputs(call)
        comment = f"{call.title}  ({call.where})"
        self.current = id(call)
        for d in info.derivatives:
            specs = [inputs[n] for n in d.var_names]
            need = [any(v.requires_grad for v in _values(s)) for s in specs]
            if not any(need):
                continue
            names["grad_input_mask"] = ast.Tuple(
                [ast.Constant(n) for n in need], ast.Load()
            )
            tree, uses = substitute(d.formula, names)
            real = _all_real(call)
            if "maybe_multiply" in d.formula or real and _reads_conjugates(d.formula):
                tree = simplify(tree, real)
                uses = {n.id for n in ast.walk(tree) if type(n) is ast.Name}
            result = self.probe(d.formula, names)
            if not d.is_multi and not d.is_list:
                self.contribute(tree, uses, result, specs[0], comment)
                comment = None
                continue
            temp = self.fresh("grad_result")
            self.stmts.append(stmt_of([temp], tree, uses, comment=comment))
            comment = None
            if d.is_list:
                targets = list(enumerate(specs[0]))
            else:
                targets = [(i, s) for i, s in enumerate(specs) if need[i]]
            for i, spec in targets:
                if isinstance(spec, Value) and spec.requires_grad:
                    part = _FAILED if result is _FAILED else result[i]
                    item = ast.Subscript(_name(temp), ast.Constant(i), ast.Load())
                    self.contribute(item, {temp}, part, spec, None)

    def formula_names(self, call: Call) -> dict[str, ast.expr]:
        """What each local of the node's apply() is in this graph."""
        from yamlgrad.tools.expressions import output_names

        info = call.node_info
        outputs = output_names(info.func)
        names: dict[str, ast.expr] = {}
        for s in info.all_saved:
            names[s.local] = self.saved_expr(call, s.name, s.is_tensor, outputs)
        grads = [self.grad_or_zeros(o) for o in call.outputs]
        names["grads"] = ast.List(grads, ast.Load())
        names["grad"] = grads[0]
        return names

    def grad_or_zeros(self, value: Value | None) -> ast.expr:
        if value is not None and value in self.grads:
            return ast.Name(self.grads[value], ast.Load())
        if value is None:
            return ast.Constant(None)
        zeros = np.zeros(value.shape, value.dtype)
        zeros.flags.writeable = False
        return ast.Name(self.ns.bind(zeros, f"zeros_{value.name}"), ast.Load())

    def saved_expr(
        self, call: Call, name: str, is_tensor: bool, outputs: dict[str, int]
    ) -> ast.expr:
        if name in outputs:
            return value_expr(call.outputs[outputs[name]], self.ns)
        if name in call.args:
            spec = call.args[name]
            return arg_expr(spec, self.ns)
        if name.endswith("_args_sizes"):
            spec = call.args[name[: -len("_args_sizes")]]
            return literal([_meta(s, "shape") for s in spec], self.ns)
        argsize = _ARGSIZE.fullmatch(name)
        if argsize is not None and argsize["base"] in call.args:
            dim = int(argsize["dim"]) * (-1 if argsize["minus"] else 1)
            shape = _meta(call.args[argsize["base"]], "shape")
            return literal(int(shape[dim]), self.ns)
        for suffix, attribute in _SUFFIXES.items():
            base = name[: -len(suffix)]
            if not name.endswith(suffix):
                continue
            if base in outputs:
                return literal(_meta(call.outputs[outputs[base]], attribute), self.ns)
            if base in call.args:
                cast = call.casts.get(base) if attribute == "dtype" else None
                value = cast if cast is not None else _meta(call.args[base], attribute)
                return literal(value, self.ns)
        raise RuntimeError(f"yamlgrad.compile: unknown saved value {name!r}")

    # -- gradients -------------------------------------------------------------------

    def probe(self, formula: str, names: dict[str, ast.expr]) -> Any:
        """The formula's value on the traced arrays (its locals bound to the
        values they stand for), or _FAILED."""
        try:
            local = {name: self.node_value(node) for name, node in names.items()}
            return eval(_code(formula), self.ns.values, local)  # noqa: S307
        except Exception:
            return _FAILED

    def node_value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Name):
            value = self.env.get(node.id, _FAILED)
            return self.ns.values[node.id] if value is _FAILED else value
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [self.node_value(e) for e in node.elts]
            return items if isinstance(node, ast.List) else tuple(items)
        code = compile(
            ast.fix_missing_locations(ast.Expression(node)), "<probe>", "eval"
        )
        return eval(code, self.ns.values, self.env)  # noqa: S307

    def contribute(
        self,
        tree: ast.expr,
        uses: set[str],
        result: Any,
        value: Value,
        comment: str | None,
    ) -> None:
        if result is None:
            return  # the formula gives no gradient: nothing to add
        tree, fresh = self.conformed(tree, result, value)
        first = self.created.get(value)
        if (
            first is not None
            and first[0] == self.current
            and ast.unparse(first[1]) == ast.unparse(tree)
        ):
            self.twice(value, first[2], comment)
            return
        self.accumulate(value, tree, uses, fresh, comment)
        self.created[value] = (self.current, tree, self.stmts[-1])

    def twice(self, value: Value, earlier: Stmt, comment: str | None) -> None:
        """A call's contribution given a second time (x * x): computed once.

        The gradient's only contribution doubles, `g += g` (c + c is 2c, exact);
        a contribution added to earlier ones goes to a temporary added twice,
        in eager's order."""
        del self.created[value]
        name = self.grads[value]
        if earlier.targets == [name] and earlier.op == "=" and name not in earlier.uses:
            if name in self.owned:
                self.stmts.append(stmt_of([name], _name(name), {name}, "+=", comment))
            else:
                total = ast.BinOp(_name(name), ast.Add(), _name(name))
                self.stmts.append(stmt_of([name], total, {name}, comment=comment))
                self.owned.add(name)
            return
        term = self.fresh("grad_term")
        tree = earlier.tree
        if earlier.op == "=":  # name = name + contribution
            tree = tree.right  # type: ignore[union-attr]
        index = next(i for i, s in enumerate(self.stmts) if s is earlier)
        uses = set(earlier.uses) - ({name} if earlier.op == "=" else set())
        self.stmts[index] = stmt_of([term], tree, uses, comment=earlier.comment)
        again = [_name(term), _name(term)]
        self.stmts.insert(index + 1, self._added(name, again[0], earlier.op))
        self.stmts.append(self._added(name, again[1], "+=", comment))

    def _added(
        self, name: str, term: ast.expr, op: str, comment: str | None = None
    ) -> Stmt:
        if op == "+=":
            return stmt_of([name], term, {term.id}, "+=", comment)  # type: ignore
        total = ast.BinOp(_name(name), ast.Add(), term)
        return stmt_of([name], total, {name, term.id}, comment=comment)  # type: ignore

    def conformed(self, tree: ast.expr, result: Any, value: Value) -> tuple[Any, bool]:
        """`tree` reduced and cast to `value`'s shape and dtype, statically."""
        shape, dtype = value.shape, value.dtype
        dtype_node = literal(dtype, self.ns)
        if result is _FAILED:
            self.ns.values.setdefault("conform", conform)
            args = [tree, literal(shape, self.ns), dtype_node]
            return ast.Call(_name("conform"), args, []), True
        fresh = isinstance(tree, ast.BinOp) or (
            isinstance(tree, ast.UnaryOp) and isinstance(tree.op, ast.USub)
        )
        got_shape, got_dtype = np.shape(result), np.asarray(result).dtype
        if got_shape != shape:
            dims = _reduce_dims(got_shape, shape)
            if dims is None:
                return self.conformed(tree, _FAILED, value)
            only_lead = len(dims) == len(got_shape) - len(shape)
            keywords = [ast.keyword("axis", literal(tuple(dims), self.ns))]
            if not only_lead:
                keywords.append(ast.keyword("keepdims", ast.Constant(True)))
            negated = type(tree) is ast.UnaryOp and type(tree.op) is ast.USub
            if negated:  # -sum(g) is sum(-g), exactly: negate the smaller array
                tree = tree.operand  # type: ignore[attr-defined]
            tree = ast.Call(_attribute("np.add.reduce"), [tree], keywords)
            if negated:
                tree = ast.UnaryOp(ast.USub(), tree)
            if not only_lead and len(got_shape) != len(shape):
                reshape = ast.Attribute(tree, "reshape", ast.Load())
                tree = ast.Call(reshape, [literal(shape, self.ns)], [])
            fresh = True
        if got_dtype != dtype:
            dtype_keyword = [ast.keyword("dtype", dtype_node)]
            tree = ast.Call(_attribute("np.asarray"), [tree], dtype_keyword)
            fresh = True
        return tree, fresh

    def accumulate(
        self,
        value: Value,
        tree: ast.expr,
        uses: set[str],
        fresh: bool,
        comment: str | None = None,
    ) -> None:
        self.created.pop(value, None)
        name = self.grads.get(value)
        if name is None:
            name = self.grads[value] = f"grad_{value.name}"
            self.stmts.append(stmt_of([name], tree, uses, comment=comment))
            if fresh:
                self.owned.add(name)
        elif name in self.owned:
            self.stmts.append(stmt_of([name], tree, uses, op="+=", comment=comment))
        else:
            total = ast.BinOp(_name(name), ast.Add(), tree)
            self.stmts.append(stmt_of([name], total, uses | {name}, comment=comment))
            self.owned.add(name)
        self.env[name] = _probe_grad(value)
        self.metas[name] = (value.shape, value.dtype)


def live_calls(graph: Graph) -> tuple[list[Call], set[Value]]:
    """The calls with a gradient to pass on, last first, and the values a
    gradient reaches."""
    live = {v for v in graph.outputs if v.requires_grad}
    calls = []
    for call in reversed(graph.calls):
        if call.detach or call.node_info.op is None:
            continue
        if not any(o in live for o in call.outputs if o is not None):
            continue
        calls.append(call)
        for spec in _differentiable_inputs(call).values():
            for v in _values(spec):
                if v.requires_grad:
                    live.add(v)
    return calls, live


def _differentiable_inputs(call: Call) -> dict[str, Any]:
    return {a.name: call.args[a.name] for a in call.node_info.differentiable_inputs}


def _probe_grad(value: Value) -> np.ndarray:
    """A gradient to probe formulas with: ones of the value's shape and dtype, as
    a broadcast view, so it costs no memory however large the value is."""
    return np.broadcast_to(np.ones((), value.dtype), value.shape)


def _name(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def _attribute(dotted: str) -> ast.expr:
    parts = dotted.split(".")
    node: ast.expr = _name(parts[0])
    for part in parts[1:]:
        node = ast.Attribute(node, part, ast.Load())
    return node


@functools.lru_cache(maxsize=4096)
def _code(formula: str) -> Any:
    return compile(formula, "<formula>", "eval")


_FAILED = object()


# The helpers simplify() drops from the formulas of a call on real values.
_CONJUGATES = frozenset({"conj", "conj_physical", "handle_r_to_c"})


def _reads_conjugates(formula: str) -> bool:
    return any(name in formula for name in _CONJUGATES)


def _all_real(call: Call) -> bool:
    """Whether every tensor a call reads or makes is real (no complex dtype)."""
    values = [v for a in call.args.values() for v in _values(a)]
    values += [v for v in call.outputs if v is not None]
    return all(np.dtype(v.dtype).kind != "c" for v in values)


def _values(spec: Any) -> list[Value]:
    if isinstance(spec, Value):
        return [spec]
    if isinstance(spec, list):
        return [s for s in spec if isinstance(s, Value)]
    return []


def _meta(spec: Any, attribute: str) -> Any:
    """A shape, ndim or dtype of an argument (a Value, or a Python number)."""
    if isinstance(spec, Value):
        return {"shape": spec.shape, "ndim": len(spec.shape), "dtype": spec.dtype}[
            attribute
        ]
    value = spec.value if isinstance(spec, Const) else spec
    array = np.asarray(value)
    return {"shape": array.shape, "ndim": array.ndim, "dtype": array.dtype}[attribute]
