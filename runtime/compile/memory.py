"""Memory planning: the arrays a generated function makes, written into dead ones.

A graph's code knows, for every name, where it is last read; eager mode cannot.
`reuse_buffers` walks the statements of a generated function once and, for each
one that makes a fresh array with an element-wise ufunc (`np.exp(x)`, `a * b`,
`-g`) of at least MIN_SIZE elements, gives it `out=` an array of the same shape
and dtype that the function made itself and that nothing reads any more: no new
allocation, no page faults, and the peak stays at what is live.

Safety is by construction:

* only arrays the function allocated are reused (the result of a ufunc: another
  kernel may return an input itself for a layout the guards do not fix), never
  an argument, a saved value handed in, or anything returned;
* a statement that is not known to make a fresh array may return a view of (or
  the very array of) any name it reads, so its result joins their group, and a
  group's arrays are reused only once every name of the group is dead;
* names are rebound (`g = g + c`): each binding is followed on its own, and an
  array is reused only through a name still bound to it.

Element-wise ufuncs give the same values into any `out=`, overlapping their
inputs or not, so each rewritten line computes what it computed before.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from yamlgrad.runtime.compile.codegen import Stmt

# Smaller arrays come from numpy's own cache of small allocations: an `out=`
# saves nothing there and costs a keyword.
MIN_SIZE = 256

Meta = tuple[tuple[int, ...], np.dtype]

_BINARY = {
    ast.Add: "add",
    ast.Sub: "subtract",
    ast.Mult: "multiply",
    ast.Div: "true_divide",
}


@dataclass
class _Group:
    """Bindings that may share memory, and the arrays among them made fresh."""

    death: int = -1  # the last statement that reads one of them
    pinned: bool = False  # one is returned: never reused
    buffers: list[int] = field(default_factory=list)  # fresh bindings


class _Bindings:
    """Every binding of every name, with union-find groups over them."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.parent: list[int] = []
        self.groups: dict[int, _Group] = {}

    def new(self, name: str) -> int:
        b = len(self.names)
        self.names.append(name)
        self.parent.append(b)
        self.groups[b] = _Group()
        return b

    def find(self, b: int) -> int:
        parent = self.parent
        while parent[b] != b:
            parent[b] = parent[parent[b]]
            b = parent[b]
        return b

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        ga, gb = self.groups.pop(rb), self.groups[ra]
        self.parent[rb] = ra
        gb.death = max(ga.death, gb.death)
        gb.pinned = gb.pinned or ga.pinned
        gb.buffers += ga.buffers

    def read(self, b: int, at: int) -> None:
        group = self.groups[self.find(b)]
        group.death = max(group.death, at)


def writes_out(tree: ast.expr | None) -> bool:
    """Whether `tree` is an element-wise ufunc call that can take `out=`."""
    return tree is not None and _with_out(tree, "_") is not None


def _with_out(tree: ast.expr, buffer: str) -> ast.expr | None:
    out = [ast.keyword("out", ast.Name(buffer, ast.Load()))]
    kind = type(tree)
    if kind is ast.BinOp and type(tree.op) in _BINARY:  # type: ignore[attr-defined]
        ufunc = _np(_BINARY[type(tree.op)])  # type: ignore[attr-defined]
        return ast.Call(ufunc, [tree.left, tree.right], out)  # type: ignore
    if kind is ast.UnaryOp and type(tree.op) is ast.USub:  # type: ignore
        return ast.Call(_np("negative"), [tree.operand], out)  # type: ignore
    if kind is ast.Call and not tree.keywords:  # type: ignore[attr-defined]
        func = tree.func  # type: ignore[attr-defined]
        if (
            type(func) is ast.Attribute
            and type(func.value) is ast.Name
            and func.value.id in ("np", "xp")
        ):
            ufunc = getattr(np, func.attr, None)
            args = tree.args  # type: ignore[attr-defined]
            if (
                isinstance(ufunc, np.ufunc)
                and ufunc.nout == 1
                and len(args) == ufunc.nin
                and not any(type(a) is ast.Starred for a in args)
            ):
                return ast.Call(func, list(args), out)
    return None


def _np(name: str) -> ast.expr:
    return ast.Attribute(ast.Name("np", ast.Load()), name, ast.Load())


def reuse_buffers(
    stmts: list[Stmt],
    metas: dict[str, Meta],
    params: list[str],
    keep: set[str],
    fresh: Callable[[Stmt], bool],
) -> None:
    """Rewrite `stmts` in place to write into dead arrays (module docstring).

    `metas`: the shape and dtype of the names whose arrays may be reused (and
    written into); `fresh(stmt)`: whether a statement (besides a rewritable
    ufunc) makes an array no other name holds."""
    bindings = _Bindings()
    current = {p: bindings.new(p) for p in params}
    defined: list[list[int]] = []  # the bindings each statement makes
    for i, s in enumerate(stmts):
        for name in s.uses:
            b = current.get(name)
            if b is not None:
                bindings.read(b, i)
        made: list[int] = []
        if s.op != "=":
            for name in s.targets:
                if name in current:
                    bindings.read(current[name], i)
            defined.append(made)
            continue
        own = len(s.targets) == 1 and (writes_out(s.tree) or fresh(s))
        for name in s.targets:
            if name == "_":
                continue
            b = bindings.new(name)
            bindings.read(b, i)
            made.append(b)
            if own:
                if _size(metas.get(name)) >= MIN_SIZE:
                    bindings.groups[b].buffers.append(b)
            else:
                for used in s.uses:
                    if used in current:
                        bindings.union(b, current[used])
            current[name] = b
        defined.append(made)
    for name in keep:
        if name in current:
            bindings.groups[bindings.find(current[name])].pinned = True
    _rewrite(stmts, metas, bindings, defined, params)


def _size(meta: Meta | None) -> int:
    if meta is None:
        return 0
    n = 1
    for d in meta[0]:
        n *= d
    return n


def _rewrite(
    stmts: list[Stmt],
    metas: dict[str, Meta],
    bindings: _Bindings,
    defined: list[list[int]],
    params: list[str],
) -> None:
    """The second walk: hand each dead group's arrays to the next statement of
    their shape and dtype that can write into one."""
    by_death: dict[int, list[_Group]] = {}
    for group in bindings.groups.values():
        if group.buffers and not group.pinned:
            by_death.setdefault(group.death, []).append(group)
    free: dict[Meta, list[int]] = {}
    bound = {p: i for i, p in enumerate(params)}  # name -> its binding now
    names = bindings.names
    for i, s in enumerate(stmts):
        for group in by_death.get(i, ()):  # dead from here: this line may reuse it
            for b in group.buffers:
                free.setdefault(metas[names[b]], []).append(b)
        target = s.targets[0] if len(s.targets) == 1 else None
        meta = metas.get(target) if target is not None else None
        pool = free.get(meta) if s.op == "=" and meta is not None else None
        while pool:
            b = pool.pop()  # the one freed last
            buffer = names[b]
            if bound.get(buffer) != b:
                continue  # its name was bound again: the array is gone
            tree = _with_out(s.tree, buffer) if s.tree is not None else None
            if tree is None:
                pool.append(b)
                break
            s.tree = tree
            s.expr = ast.unparse(tree)
            s.uses = s.uses | {buffer}
            break
        for b in defined[i]:
            bound[names[b]] = b
