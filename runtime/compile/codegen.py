"""Code generation: a traced Graph into one forward and one backward function.

Both come from the YAML through the generator's own model: the forward calls each
recorded entry's checked `forward:` kernel, the backward evaluates each entry's
checked formulas (the text tools/expressions.py renamed for the nodes), in
reverse order, on ndarrays. What the whole graph knows and an eager node cannot
is used here, once, at trace time:

* names are values, not saved variables: an argument becomes the name of the
  array it is, a shape (`self_sym_sizes`), one size (`self_sym_argsize_0`), a
  dtype or a non-tensor argument its literal, and a branch on a literal (`... if alpha == 1 else ...`) is folded;
* broadcast reductions are static: each formula runs once on the traced arrays,
  so the shape and dtype of every gradient are known; a reduction (`np.add.reduce`
  over the exact axes) or a cast is written only where they differ from the input;
* gradients no input needs are never computed, and forward values nothing reads
  are never computed either;
* a gradient with several contributions is summed in place once the sum is an
  array of the graph's own; every name is deleted after its last use, so saved
  values and temporaries are released as early as the order allows.

The source is rendered from templates/compiled.py.j2 and compiled with `exec`.
"""

from __future__ import annotations

import ast
import functools
import math
import operator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from yamlgrad.runtime.compile.graph import CONSTANT, Call, Const, Value


@dataclass
class Stmt:
    """One line of generated code: `targets = expr`, or `targets += expr`."""

    targets: list[str]
    expr: str
    uses: frozenset[str]
    op: str = "="
    comment: str | None = None  # printed above it: the entry and the user's line
    unpack: bool = False  # the expression gives a sequence: `a, b = ...`
    tree: ast.expr | None = None  # the expression's tree, when built from one
    # Statements merged into this one (runtime/compile/folding.py), as written.
    fused: tuple[str, ...] = ()

    def text(self) -> str:
        target = ", ".join(self.targets)
        if self.unpack and len(self.targets) == 1:
            target += ","
        return f"{target} {self.op} {self.expr}"


@dataclass
class Namespace:
    """The globals of the generated module: numpy, the op families, the formula
    helpers, and each constant that has no literal (dtypes, arrays)."""

    values: dict[str, Any] = field(default_factory=dict)
    by_id: dict[int, str] = field(default_factory=dict)

    def bind(self, value: Any, hint: str) -> str:
        key = id(value)
        if key in self.by_id:
            return self.by_id[key]
        base = hint if hint.isidentifier() else "constant"
        name, n = base, 0
        while name in self.values:
            n += 1
            name = f"{base}_{n}"
        self.values[name] = value
        self.by_id[key] = name
        return name


@functools.lru_cache(maxsize=None)
def base_namespace() -> dict[str, Any]:
    """np (as `np` and as a kernel's `xp`), every runtime/ops module by its name, every backward helper by its.

    The generated code runs on ndarrays only (a replay on Tensors calls the
    wrappers): a helper that only forwards to the array namespace is bound to
    its ndarray side directly."""
    import importlib

    from yamlgrad.tools.load import helper_catalog

    catalog = helper_catalog(None)
    values: dict[str, Any] = {"np": np, "xp": np}  # a kernel's namespace is numpy
    for module in catalog.modules:
        values[module] = importlib.import_module(f"yamlgrad.runtime.ops.{module}")
    for name, module in catalog.backward_helpers.items():
        values[name] = _ndarray_side(name, getattr(values[module], name))
    return values


def _ndarray_side(name: str, helper: Any) -> Any:
    """`NUMPY_NAMESPACE.<name>` for a helper written as exactly
    `def name(a, b): return array_namespace(a, ...).name(a, b)`, which is what it
    calls on ndarrays; the helper itself otherwise."""
    import inspect
    import textwrap

    from yamlgrad.runtime.ops.namespace import NUMPY_NAMESPACE

    code = getattr(helper, "__code__", None)
    if code is None or "array_namespace" not in code.co_names:
        return helper
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(helper))).body[0]
    except (OSError, TypeError, SyntaxError):
        return helper
    if not isinstance(tree, ast.FunctionDef) or tree.decorator_list:
        return helper
    body = [
        s
        for s in tree.body
        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    params = [a.arg for a in tree.args.posonlyargs + tree.args.args]
    arguments = tree.args
    if (
        len(body) != 1
        or not isinstance(body[0], ast.Return)
        or arguments.vararg
        or arguments.kwarg
        or arguments.kwonlyargs
        or arguments.defaults
    ):
        return helper
    call = body[0].value
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == name
        and isinstance(call.func.value, ast.Call)
        and isinstance(call.func.value.func, ast.Name)
        and call.func.value.func.id == "array_namespace"
        and not call.keywords
        and [getattr(a, "id", None) for a in call.args] == params
    ):
        return helper
    kernel = getattr(NUMPY_NAMESPACE, name, None)
    return helper if kernel is None else kernel


def literal(value: Any, namespace: Namespace) -> ast.expr:
    """A constant as source: a literal when it has one, else a namespace name."""
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return ast.Constant(value)
    if kind is float and math.isfinite(value):
        return ast.Constant(value)
    if kind in (tuple, list) and all(_has_literal(v) for v in value):
        items = [literal(v, namespace) for v in value]
        return (
            ast.Tuple(items, ast.Load())
            if kind is tuple
            else ast.List(items, ast.Load())
        )
    if isinstance(value, np.dtype):
        return ast.Name(namespace.bind(value, value.name), ast.Load())
    if isinstance(value, np.generic):
        return literal(value.item(), namespace)
    return ast.Name(namespace.bind(value, "constant"), ast.Load())


def _has_literal(value: Any) -> bool:
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return True
    if kind is float:
        return math.isfinite(value)
    if kind in (tuple, list):
        return all(_has_literal(v) for v in value)
    return False


class _NotConstant(Exception):
    pass


_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}


def _constant(node: ast.expr) -> Any:
    """The value of an expression made of literals only (an IfExp's test once its
    names are literals: `1 == 1`, `None is None`); _NotConstant otherwise."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_constant(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        value = _constant(node.operand)
        return (not value) if isinstance(node.op, ast.Not) else -value
    if isinstance(node, ast.BoolOp):
        values = [bool(_constant(v)) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Compare):
        left = _constant(node.left)
        for op, right_node in zip(node.ops, node.comparators):
            right = _constant(right_node)
            if type(op) not in _COMPARE or not _COMPARE[type(op)](left, right):
                if type(op) not in _COMPARE:
                    raise _NotConstant
                return False
            left = right
        return True
    raise _NotConstant


@functools.lru_cache(maxsize=8192)
def _parsed(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def _rebuild(node: ast.AST, names: dict[str, ast.expr], uses: set[str]) -> Any:
    """A copy of `node` with names replaced and literal branches folded (the
    cached tree of a formula is never changed); adds the names it reads to
    `uses`."""
    kind = type(node)
    if kind is ast.Name:
        new = names.get(node.id, node)  # type: ignore[attr-defined]
        if type(new) is ast.Name:
            uses.add(new.id)
        else:
            uses.update(n.id for n in ast.walk(new) if type(n) is ast.Name)
        return new
    if kind is ast.IfExp:
        test = _rebuild(node.test, names, uses)  # type: ignore[attr-defined]
        try:
            taken = node.body if _constant(test) else node.orelse  # type: ignore
        except _NotConstant:
            body = _rebuild(node.body, names, uses)  # type: ignore[attr-defined]
            orelse = _rebuild(node.orelse, names, uses)  # type: ignore[attr-defined]
            return ast.IfExp(test, body, orelse)
        return _rebuild(taken, names, uses)
    if kind in _LEAVES:
        return node
    new = kind.__new__(kind)  # a shallow copy (copy.copy is several times slower)
    fields = new.__dict__
    fields.update(node.__dict__)
    for name in node._fields:
        value = fields.get(name)
        if isinstance(value, ast.AST):
            fields[name] = _rebuild(value, names, uses)
        elif type(value) is list:
            fields[name] = [
                _rebuild(v, names, uses) if isinstance(v, ast.AST) else v for v in value
            ]
    return new


_LEAVES = (ast.Constant, ast.Load)


def substitute(text: str, names: dict[str, ast.expr]) -> tuple[ast.expr, set[str]]:
    """A checked expression with its locals replaced by the graph's names, and
    the names it then reads."""
    uses: set[str] = set()
    return _rebuild(_parsed(text), names, uses), uses


def stmt_of(
    targets: list[str],
    tree: ast.expr,
    uses: set[str],
    op: str = "=",
    comment: str | None = None,
) -> Stmt:
    return Stmt(targets, ast.unparse(tree), frozenset(uses), op, comment, tree=tree)


def names_in(text: str) -> frozenset[str]:
    return frozenset(
        n.id for n in ast.walk(ast.parse(text, mode="eval")) if isinstance(n, ast.Name)
    )


def stmt(
    targets: list[str], expr: str, op: str = "=", comment: str | None = None
) -> Stmt:
    return Stmt(targets, expr, names_in(expr), op, comment)


def insert_deletes(stmts: list[Stmt], keep: set[str], params: list[str]) -> list[Any]:
    """The statements with `del` after each name's last use (names in `keep`
    survive: they are returned). A parameter never used is deleted first."""
    last: dict[str, int] = {}
    for i, s in enumerate(stmts):
        for name in (*s.targets, *s.uses):  # `+=` updates: a use too
            last[name] = i
    defined = set(params)
    for s in stmts:
        defined.update(s.targets)
    dies: dict[int, list[str]] = {}
    for name, i in last.items():
        if name in defined and name not in keep:
            dies.setdefault(i, []).append(name)
    out: list[Any] = []
    unused = [p for p in params if p not in last and p not in keep]
    if unused:
        out.append(f"del {', '.join(unused)}")
    for i, s in enumerate(stmts):
        if s.comment:
            out += [("comment", line) for line in s.comment.split("\n")]
        if s.fused:
            out.append(("comment", "fused: " + "; ".join(s.fused)))
        out.append(s.text())
        if i in dies:
            out.append(f"del {', '.join(sorted(dies[i]))}")
    return out


def _asarray(tree: ast.expr, keywords: list[ast.keyword]) -> ast.expr:
    function = ast.Attribute(ast.Name("np", ast.Load()), "asarray", ast.Load())
    return ast.Call(function, [tree], keywords)


def value_expr(value: Value, namespace: Namespace) -> ast.expr:
    if value.kind == CONSTANT:
        return ast.Name(namespace.bind(value.example, value.name), ast.Load())
    return ast.Name(value.name, ast.Load())


def arg_expr(arg: Any, namespace: Namespace, cast: np.dtype | None = None) -> ast.expr:
    """A recorded argument as source: a Value's name (cast when promoted), a
    list of them, or a literal."""
    if isinstance(arg, Value):
        node = value_expr(arg, namespace)
        if cast is not None:
            dtype = literal(cast, namespace)
            node = ast.Call(ast.Attribute(node, "astype", ast.Load()), [dtype], [])
        return node
    if isinstance(arg, Const):
        return literal(arg.value, namespace)
    return ast.List([arg_expr(a, namespace) for a in arg], ast.Load())


def forward_stmts(call: Call, namespace: Namespace, zero_dim: set[str]) -> list[Stmt]:
    """The call, then `np.asarray` for each 0-d output a kernel may have given as
    a numpy scalar (eager wraps every result in an array)."""
    line = forward_stmt(call, namespace, zero_dim)
    if not line.unpack:
        return [line]
    wraps = [o.name for o in call.outputs if o is not None and o.name in zero_dim]
    return [line] + [stmt([n], f"np.asarray({n})") for n in wraps]


def forward_stmt(call: Call, namespace: Namespace, zero_dim: set[str]) -> Stmt:
    """One recorded call as `outputs = kernel(arguments)`."""
    comment = f"{call.title}  ({call.where})"
    targets = [o.name if o is not None else "_" for o in call.outputs]
    if not call.detach and call.info.output_kind == "list":
        targets = [o.name for o in call.outputs]
    if call.detach:
        source = call.args["self"]
        uses = {source.name} if isinstance(source, Value) else set()
        return stmt_of(targets, arg_expr(source, namespace), uses, comment=comment)
    names = {"xp": ast.Name("np", ast.Load())}  # the compiled code runs on numpy
    for a in call.info.func.arguments:
        local = a.local if (a.is_tensor or a.is_tensor_list) else a.name
        names[local] = arg_expr(call.args[a.name], namespace, call.casts.get(a.name))
    tree, uses = substitute(call.info.forward, names)
    if ".ndim" in call.info.forward or ".shape" in call.info.forward:
        tree = _static_folded(tree, call, namespace)
        uses = {n.id for n in ast.walk(tree) if type(n) is ast.Name}
    if call.info.inplace:
        dtype = literal(call.outputs[0].dtype, namespace)
        tree = _asarray(tree, [ast.keyword("dtype", dtype)])
    elif call.info.output_kind == "single" and call.outputs[0].name in zero_dim:
        tree = _asarray(tree, [])
    line = stmt_of(targets, tree, uses, comment=comment)
    line.unpack = call.info.output_kind != "single" and not call.info.inplace
    return line


def _static_folded(tree: ast.expr, call: Call, namespace: Namespace) -> ast.expr:
    """A forward with what the graph fixes written as literals: the `ndim` and
    `shape` of its tensor arguments (the guards make them facts for every call
    the graph serves), and the result of each `static` helper
    (runtime/ops/namespace.py) whose arguments are then all literals
    (`reduce_dims((1,), exp.ndim)` is `(1,)`)."""
    shapes = {
        v.name: v.shape
        for arg in call.args.values()
        for v in (arg if isinstance(arg, list) else [arg])
        if isinstance(v, Value) and v.kind != CONSTANT
    }

    class Fold(ast.NodeTransformer):
        def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
            self.generic_visit(node)
            value = node.value
            if type(value) is ast.Name and value.id in shapes:
                shape = shapes[value.id]
                if node.attr == "ndim":
                    return ast.Constant(len(shape))
                if node.attr == "shape":
                    return literal(shape, namespace)
            return node

        def visit_Call(self, node: ast.Call) -> ast.expr:
            self.generic_visit(node)
            function = _resolved(node.func, namespace.values)
            if not getattr(function, "static", False):
                return node
            try:
                args = [ast.literal_eval(a) for a in node.args]
                kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
                value = function(*args, **kwargs)
            except Exception:  # not literals (or it raises): called at run time
                return node
            return literal(value, namespace) if _has_literal(value) else node

    return Fold().visit(tree)


def _resolved(node: ast.expr, values: dict[str, Any]) -> Any:
    """What a `name` or `module.name` of the generated module is bound to."""
    if type(node) is ast.Name:
        return values.get(node.id)
    if type(node) is ast.Attribute:
        owner = _resolved(node.value, values)
        return None if owner is None else getattr(owner, node.attr, None)
    return None
