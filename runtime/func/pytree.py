"""Nested tuples, lists and dicts of tensors, flattened and rebuilt (a pytree).

torch.func takes and returns any nesting of these containers (torch.utils._pytree):
vmap's in_dims and out_dims follow the structure of the inputs and outputs, and
grad's argnums pick whole subtrees. A `TreeSpec` records the containers and
prints as PyTorch's does in error messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TreeSpec:
    """The shape of a pytree: its container type, dict keys, and children."""

    kind: type | None  # None: a leaf
    context: Any  # a dict's keys, a namedtuple's class; else None
    children: tuple[TreeSpec, ...] = ()

    @property
    def is_leaf(self) -> bool:
        return self.kind is None

    @property
    def num_leaves(self) -> int:
        return 1 if self.is_leaf else sum(c.num_leaves for c in self.children)

    def __str__(self) -> str:
        return self._format(1)

    def _format(self, indent: int) -> str:
        if self.is_leaf:
            return "*"
        context = list(self.context) if isinstance(self.context, tuple) else None
        sep = ",\n" + " " * (indent + 1)
        children = sep.join(c._format(indent + 1) for c in self.children)
        return f"TreeSpec({self.kind.__name__}, {context}, [{children}])"


LEAF = TreeSpec(None, None)


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def tree_flatten(tree: Any) -> tuple[list[Any], TreeSpec]:
    """The leaves of `tree` in order, and its spec."""
    if _is_namedtuple(tree):
        pairs = [tree_flatten(v) for v in tree]
        kind, context = type(tree), None
    elif isinstance(tree, (tuple, list)):
        pairs = [tree_flatten(v) for v in tree]
        kind, context = type(tree), None
    elif isinstance(tree, dict):
        keys = tuple(tree)
        pairs = [tree_flatten(tree[k]) for k in keys]
        kind, context = dict, keys
    else:
        return [tree], LEAF
    leaves = [leaf for sub, _ in pairs for leaf in sub]
    return leaves, TreeSpec(kind, context, tuple(spec for _, spec in pairs))


def tree_unflatten(leaves: list[Any], spec: TreeSpec) -> Any:
    """`tree_flatten` undone."""
    it = iter(leaves)
    return _build(it, spec)


def _build(it: Any, spec: TreeSpec) -> Any:
    if spec.is_leaf:
        return next(it)
    children = [_build(it, c) for c in spec.children]
    if spec.kind is dict:
        return dict(zip(spec.context, children))
    if issubclass(spec.kind, tuple) and spec.kind is not tuple:
        return spec.kind(*children)
    return spec.kind(children)


def tree_map(fn: Any, tree: Any) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)


def broadcast_prefix(prefix: Any, tree_spec: TreeSpec) -> list[Any] | None:
    """`prefix` (an int or None standing for a whole subtree, or a tree of such
    matching `tree_spec` from the top) spread to one value per leaf; None when
    the structures do not match (vmap's in_dims and out_dims)."""
    if not isinstance(prefix, (tuple, list, dict)):
        return [prefix] * tree_spec.num_leaves
    _, prefix_spec = tree_flatten(prefix)
    if tree_spec.is_leaf or prefix_spec.kind is not tree_spec.kind:
        if not (isinstance(prefix, (tuple, list)) and tree_spec.kind in (tuple, list)):
            return None
    if len(prefix_spec.children) != len(tree_spec.children):
        return None
    if isinstance(prefix, dict):
        if tuple(prefix) != tree_spec.context:
            return None
        items = [prefix[k] for k in tree_spec.context]
    else:
        items = list(prefix)
    out: list[Any] = []
    for item, child in zip(items, tree_spec.children):
        sub = broadcast_prefix(item, child)
        if sub is None:
            return None
        out += sub
    return out
