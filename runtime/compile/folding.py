"""Folding of a generated backward: statements merged into the one that reads them.

Each entry's formulas are written for one node, so a graph's backward strung
from them computes, line by line, what a person writing the whole backward would
write as one expression. Once the statements are built (runtime/compile/
backward.py), before the memory plan, a statement `t = E` whose value one later
statement reads once is merged into that statement where the merge computes the
same values bit for bit:

* a 0-d temporary is computed where it is read: the chain of a mean's or a
  scaled loss's gradient (`g / 64`, `-g`) becomes one expression of numpy
  scalars, one Python statement instead of several;
* a broadcast read by `+ - * /` with an operand of the broadcast's own shape
  is the broadcast's source itself: `expand(x, S) * y` is `x * y` when `y` has
  shape `S`, as numpy broadcasts `x` the same way (`sum_backward` with
  `keepdim`, or of a 0-d gradient, is such a broadcast). The view and its call
  are never made;
* a negation of a product or quotient by a literal goes onto the literal:
  `-(g / 64)` is `g / -64` (IEEE rounding is symmetric in the sign), one
  operation instead of two.

Only statements with nothing between them that could change what the moved
expression reads are merged: no name it reads is bound again and no array is
updated in place (`+=`) in between, and an expression that reads an array
(rather than 0-d values only) moves only into the very next statement, so no
array lives longer than before. The merged statement says in a comment which
statements it took in.
"""

from __future__ import annotations

import ast
import bisect
import copy
from collections.abc import Mapping

import numpy as np

from yamlgrad.runtime.compile.codegen import Stmt, stmt_of

Shape = tuple[int, ...]
Meta = tuple[Shape, np.dtype]

# 0-d arrays and numpy scalars take part in type promotion as arrays of their
# dtype only from numpy 2 on (NEP 50); before, a 0-d float64 times a float32
# array gives float32 where the broadcast view gives float64.
_STRONG_0D = np.lib.NumpyVersion(np.__version__) >= "2.0.0"

_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div)

# The formula helpers that broadcast their first argument to the shape given
# second: `expand(x, size)` (runtime/ops/shapes.py), as numpy broadcasts against
# that shape; `sum_backward(grad, sizes, dim, keepdim)` (runtime/ops/
# reductions.py), the same when keepdim is True or the gradient is 0-d.
BROADCASTS = ("expand", "sum_backward")


def fold_backward(
    stmts: list[Stmt],
    metas: Mapping[str, Meta],
    globals_: Mapping[str, object],
    broadcasts: Mapping[str, object],
    keep: set[str],
) -> list[Stmt]:
    """The statements with each foldable one merged into its reader (see the
    module docstring).

    `metas`: the shape and dtype of the names that stand for one value
    (gradients and forward values); `globals_`: the generated module's names
    (numpy, the helpers), which are no values; `broadcasts`: the helpers that broadcast
    their first argument (`expand`, `sum_backward`) by name, each the object
    the module's name must be bound to; `keep`: the names returned."""
    flow = _Flow(stmts, keep)
    merged: dict[int, Stmt] = {}
    gone: set[int] = set()
    for i, original in enumerate(stmts):
        s = merged.get(i, original)
        j = flow.only_reader(i, s)
        if j is None:
            continue
        reader = merged.get(j, stmts[j])
        target = s.targets[0]
        values = {n for n in s.uses if n not in globals_}
        if _count(reader.tree, target) != 1 or not flow.unchanged(i, j, values):
            continue
        tree = None
        if _shape_of(target, metas) == () and (
            j == i + 1 or all(_shape_of(n, metas) == () for n in values)
        ):
            tree = _replaced(reader.tree, target, s.tree)
        elif j == i + 1 and _STRONG_0D:
            source = _broadcast_source(s.tree, metas, globals_, broadcasts)
            if source is not None:
                tree = _into_operation(reader, target, source, metas)
        if tree is None:
            continue
        tree = _negations_on_literals(tree, metas)
        uses = (reader.uses - {target}) | s.uses
        new = stmt_of(reader.targets, tree, uses, reader.op, reader.comment)
        new.unpack = reader.unpack
        new.fused = s.fused + (original.text(),) + reader.fused
        _move_comment(s, new, stmts, merged, i, j)
        merged[j] = new
        gone.add(i)
    return [merged.get(i, s) for i, s in enumerate(stmts) if i not in gone]


def _move_comment(
    folded: Stmt,
    new: Stmt,
    stmts: list[Stmt],
    merged: dict[int, Stmt],
    i: int,
    j: int,
) -> None:
    """A folded statement's comment (its call's title, heading the call's
    lines) goes to the next line when that line has none and is not the
    reader; above the reader's own otherwise."""
    if not folded.comment:
        return
    following = merged.get(i + 1, stmts[i + 1])
    if j != i + 1 and not following.comment:
        following.comment = folded.comment
    elif new.comment:
        new.comment = folded.comment + "\n" + new.comment
    else:
        new.comment = folded.comment


class _Flow:
    """Where each binding is read, and where names are bound or updated."""

    def __init__(self, stmts: list[Stmt], keep: set[str]) -> None:
        self.stmts = stmts
        self.readers: list[list[int]] = [[] for _ in stmts]
        self.bound: dict[str, list[int]] = {}  # name -> statements that set it
        self.updates = [0]  # how many in-place statements come before each
        current: dict[str, int] = {}
        for k, s in enumerate(stmts):
            read = set(s.uses) if s.op == "=" else set(s.uses) | set(s.targets)
            for name in read:
                if name in current:
                    self.readers[current[name]].append(k)
            for name in s.targets:
                self.bound.setdefault(name, []).append(k)
                if s.op == "=":
                    current[name] = k
            self.updates.append(self.updates[-1] + (s.op != "="))
        self.returned = {current[name] for name in keep if name in current}

    def only_reader(self, i: int, s: Stmt) -> int | None:
        """The one statement that reads what statement `i` binds, or None."""
        if (
            s.op != "="
            or len(s.targets) != 1
            or s.unpack
            or s.tree is None
            or i in self.returned
        ):
            return None
        readers = self.readers[i]
        if len(readers) != 1:
            return None
        j = readers[0]
        reader = self.stmts[j]
        if reader.tree is None or s.targets[0] in reader.targets:
            return None
        return j

    def unchanged(self, i: int, j: int, names: set[str]) -> bool:
        """No statement strictly between `i` and `j` updates an array in
        place, or binds one of `names` again."""
        if self.updates[j] - self.updates[i + 1]:
            return False
        for name in names:
            at = self.bound.get(name, ())
            k = bisect.bisect_right(at, i)
            if k < len(at) and at[k] < j:
                return False
        return True


def _count(tree: ast.expr, name: str) -> int:
    return sum(1 for n in ast.walk(tree) if type(n) is ast.Name and n.id == name)


def _replaced(tree: ast.expr, name: str, value: ast.expr) -> ast.expr:
    """A copy of `tree` with the name `name` replaced by `value`."""

    class Replace(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            return value if node.id == name else node

    return Replace().visit(copy.deepcopy(tree))


def _broadcast_source(
    tree: ast.expr,
    metas: Mapping[str, Meta],
    globals_: Mapping[str, object],
    broadcasts: Mapping[str, object],
) -> tuple[ast.expr, Shape] | None:
    """(x, S) when `tree` is a helper call that broadcasts x to shape S as
    numpy's broadcasting against an array of shape S does, with x's shape
    known and x made of the graph's values (not a bare number, which numpy
    would not promote as an array)."""
    if type(tree) is not ast.Call or tree.keywords:
        return None
    func = tree.func
    if type(func) is not ast.Name or func.id not in broadcasts:
        return None
    if globals_.get(func.id) is not broadcasts[func.id] or len(tree.args) < 2:
        return None
    source, shape = tree.args[0], _literal(tree.args[1])
    source_shape = _shape(source, metas)
    if (
        type(shape) is not tuple
        or source_shape is None
        or not _values_in(source, metas)
    ):
        return None
    if func.id == "sum_backward":  # (grad, sizes, dim, keepdim)
        keepdim = _literal(tree.args[3]) if len(tree.args) == 4 else None
        if keepdim is not True and source_shape != ():
            return None
    if len(source_shape) > len(shape) or any(
        type(s) is not int or s < 0 for s in shape
    ):
        return None
    if _broadcast(source_shape, shape) != shape:
        return None
    return source, shape


def _into_operation(
    reader: Stmt, name: str, source: tuple[ast.expr, Shape], metas: Mapping[str, Meta]
) -> ast.expr | None:
    """The reader's tree with the broadcast `name` replaced by its source,
    where `name` is an operand of `+ - * /` whose other operand has the
    broadcast's shape (or the target of `+=` has it); None elsewhere."""
    x, shape = source
    tree = reader.tree
    if reader.op == "+=":
        ok = type(tree) is ast.Name and _shape_of(reader.targets[0], metas) == shape
        return x if ok else None
    for node in ast.walk(tree):
        if type(node) is not ast.BinOp or type(node.op) not in _ARITHMETIC:
            continue
        for mine, other in ((node.left, node.right), (node.right, node.left)):
            if type(mine) is ast.Name and mine.id == name:
                if _shape(other, metas) == shape:
                    return _replaced(tree, name, x)
    return None


def _shape_of(name: str, metas: Mapping[str, Meta]) -> Shape | None:
    meta = metas.get(name)
    return None if meta is None else meta[0]


def _shape(tree: ast.expr, metas: Mapping[str, Meta]) -> Shape | None:
    """The shape of an arithmetic expression of known names and numbers."""
    kind = type(tree)
    if kind is ast.Name:
        return _shape_of(tree.id, metas)
    if kind is ast.Constant:
        return () if type(tree.value) in (int, float) else None
    if kind is ast.UnaryOp and type(tree.op) is ast.USub:
        return _shape(tree.operand, metas)
    if kind is ast.BinOp and type(tree.op) in _ARITHMETIC:
        left, right = _shape(tree.left, metas), _shape(tree.right, metas)
        return None if left is None or right is None else _broadcast(left, right)
    return None


def _broadcast(a: Shape, b: Shape) -> Shape | None:
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


def _values_in(tree: ast.expr, metas: Mapping[str, Meta]) -> bool:
    return any(type(n) is ast.Name and n.id in metas for n in ast.walk(tree))


def _floating(tree: ast.expr, metas: Mapping[str, Meta]) -> bool:
    """Whether `tree` is arithmetic of known floating values and numbers, with
    one value at least: its result is a floating array or numpy scalar."""
    names = [n.id for n in ast.walk(tree) if type(n) is ast.Name]
    return (
        bool(names)
        and _shape(tree, metas) is not None
        and all(metas[n][1].kind in "fc" for n in names)
    )


def _literal(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _negations_on_literals(tree: ast.expr, metas: Mapping[str, Meta]) -> ast.expr:
    """`-(a / c)` as `a / -c`, `-(a * c)` as `a * -c`, `-(c * a)` as `-c * a`
    and `-(c / a)` as `-c / a`, for a number literal `c` (not an integer 0,
    whose negation is itself) and a floating `a`: the same value (IEEE
    rounding is symmetric in the sign), one operation fewer."""

    class Negate(ast.NodeTransformer):
        def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
            self.generic_visit(node)
            inner = node.operand
            if type(node.op) is not ast.USub or type(inner) is not ast.BinOp:
                return node
            if type(inner.op) not in (ast.Mult, ast.Div):
                return node
            left, right = inner.left, inner.right
            if _negatable(right) and _floating(left, metas):
                return ast.BinOp(left, inner.op, ast.Constant(-right.value))
            if _negatable(left) and _floating(right, metas):
                return ast.BinOp(ast.Constant(-left.value), inner.op, right)
            return node

    return Negate().visit(tree)


def _negatable(node: ast.expr) -> bool:
    if type(node) is not ast.Constant:
        return False
    value = node.value
    return type(value) is float or (type(value) is int and value != 0)
