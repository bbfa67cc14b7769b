"""Pictures of the autograd graph, as torchviz's `make_dot` draws PyTorch's.

    >>> dot = yg.viz.make_dot(Q, params=dict(a=a, b=b))
    >>> print(dot.source)            # DOT text; needs nothing installed
    >>> dot.render("graph.svg")      # runs Graphviz's `dot`

One box per backward node (its grad_fn class name), one light-blue box per leaf
(its name from `params`, and its shape), one green box per output tensor, one orange
box per tensor a node saved for backward (its `_saved_*` name and shape). Edges
follow `next_functions` and point the way the forward pass went: from an input's
node to the node of the op that consumed it. The walk is iterative, so graphs of
any depth can be drawn.

DOT text is built here with no dependency; only `render`/`pipe` need Graphviz's
`dot` executable on PATH.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from yamlgrad.runtime.autograd.accumulate_grad import AccumulateGrad
from yamlgrad.runtime.autograd.node import Node
from yamlgrad.runtime.autograd.saved_variable import UNDEFINED
from yamlgrad.runtime.autograd.tensor import Tensor

__all__ = ["Digraph", "ExecutableNotFound", "make_dot"]

INSTALL_HINT = (
    "install Graphviz (Debian/Ubuntu: `apt-get install graphviz`, macOS: "
    "`brew install graphviz`, conda: `conda install graphviz`) and make sure `dot` "
    "is on PATH; the DOT text is available without it as `.source`"
)
NODE_STYLE = (
    "node [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 "
    "shape=box style=filled]"
)
LEAF_COLOR = "lightblue"
OUTPUT_COLOR = "darkolivegreen1"
SAVED_COLOR = "orange"


class ExecutableNotFound(RuntimeError):
    """Graphviz's `dot` is not on PATH."""


def _quote(text: str) -> str:
    """A DOT double-quoted string; newlines become DOT's `\\n` line breaks."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n") + '"'


def _size(shape: Iterable[int]) -> str:
    """`(2, 3)`, `(3,)` and `()` as Python prints shapes."""
    return str(tuple(shape))


class Digraph:
    """A directed graph as DOT text: what `make_dot` returns.

    Nodes and edges are kept as data (`nodes`: id -> (label, attributes), `edges`:
    (tail, head, attributes)) so that callers and tests can read the graph without
    parsing; `source` is the DOT text.
    """

    def __init__(self) -> None:
        self.nodes: dict[str, tuple[str, dict[str, str]]] = {}
        self.edges: list[tuple[str, str, dict[str, str]]] = []

    def node(self, name: str, label: str, **attrs: str) -> None:
        self.nodes[name] = (label, attrs)

    def edge(self, tail: str, head: str, **attrs: str) -> None:
        self.edges.append((tail, head, attrs))

    @property
    def source(self) -> str:
        lines = ["digraph {", '\tgraph [size="12,12"]', "\t" + NODE_STYLE]
        for name, (label, attrs) in self.nodes.items():
            extra = "".join(f" {k}={_quote(v)}" for k, v in attrs.items())
            lines.append(f"\t{name} [label={_quote(label)}{extra}]")
        for tail, head, attrs in self.edges:
            extra = "".join(f"{k}={_quote(v)}" for k, v in attrs.items())
            lines.append(f"\t{tail} -> {head}" + (f" [{extra}]" if extra else ""))
        lines.append("}")
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.source

    def pipe(self, format: str = "svg") -> bytes:  # noqa: A002 - graphviz's name
        """The picture's bytes, from Graphviz's `dot -T<format>`."""
        executable = shutil.which("dot")
        if executable is None:
            raise ExecutableNotFound(
                f"failed to execute 'dot': Graphviz is not on PATH; {INSTALL_HINT}"
            )
        done = subprocess.run(
            [executable, f"-T{format}"],
            input=self.source.encode("utf-8"),
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", errors="replace").strip()
            raise RuntimeError(f"dot -T{format} failed: {message}")
        return done.stdout

    def render(self, path: str | Path, format: str | None = None) -> Path:  # noqa: A002
        """Write the picture to `path`; the format is `format`, or the suffix of
        `path` (`graph.svg`, `graph.png`). Returns the path written."""
        path = Path(path)
        fmt = format or path.suffix.lstrip(".") or "svg"
        if not path.suffix:
            path = path.with_suffix("." + fmt)
        path.write_bytes(self.pipe(fmt))
        return path

    def _repr_svg_(self) -> str:  # pragma: no cover - Jupyter's display hook
        return self.pipe("svg").decode("utf-8")


def _saved_values(node: Node) -> list[tuple[str, Any]]:
    """A node's saved values, `(name, value)`, in slot order: tensors unpacked
    from `_raw_saved_*`, and plain values of `_saved_*` slots."""
    found = []
    for cls in type(node).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if slot.startswith("_raw_saved_"):
                name = slot[len("_raw") :]
                saved = getattr(node, slot, None)
                if saved is None or saved is UNDEFINED:  # not saved: not needed
                    continue
                try:
                    found.append((name, getattr(node, name)))
                except RuntimeError:  # freed by a backward without retain_graph
                    found.append((name, _FREED))
            elif slot.startswith("_saved_"):
                found.append((slot, getattr(node, slot, None)))
    return found


class _Freed:
    def __repr__(self) -> str:
        return "<freed>"


_FREED = _Freed()


def make_dot(
    var: Tensor | Iterable[Tensor],
    params: Mapping[str, Tensor] | None = None,
    show_attrs: bool = False,
    show_saved: bool = True,
    max_attr_chars: int = 50,
) -> Digraph:
    """The autograd graph that produced `var` (a tensor, or several), as torchviz.

    `params` names leaves (`dict(model.named_parameters())` or `dict(a=a)`); other
    leaves are drawn with their shape only. With `show_saved`, every tensor a node
    saved for backward is an orange box joined to its node; with `show_attrs`, the
    node's other saved values (`exponent=3`) are listed in its box.
    """
    drawing = _Drawing(params, show_attrs, show_saved, max_attr_chars)
    for out in [var] if isinstance(var, Tensor) else list(var):
        drawing.output(out)
    while drawing.stack:
        drawing.node(drawing.stack.pop())
    return drawing.dot


class _Drawing:
    """make_dot's graph as it is drawn: one box per tensor and node, each named
    once, and the nodes still to draw."""

    def __init__(
        self,
        params: Mapping[str, Tensor] | None,
        show_attrs: bool,
        show_saved: bool,
        max_attr_chars: int,
    ) -> None:
        self.names = {id(t): name for name, t in (params or {}).items()}
        self.show_attrs = show_attrs
        self.show_saved = show_saved
        self.max_attr_chars = max_attr_chars
        self.dot = Digraph()
        self.ids: dict[int, str] = {}
        self.stack: list[Node] = []  # nodes with a box name and no box yet
        self.seen: set[int] = set()

    def node_id(self, obj: object) -> str:
        if id(obj) not in self.ids:
            self.ids[id(obj)] = f"n{len(self.ids)}"
        return self.ids[id(obj)]

    def leaf(self, tensor: Tensor) -> str:
        """The box of a leaf tensor (one per tensor)."""
        name = self.node_id(tensor)
        if name not in self.dot.nodes:
            label = _size(tensor.shape)
            if id(tensor) in self.names:
                label = f"{self.names[id(tensor)]}\n {label}"
            self.dot.node(name, label, fillcolor=LEAF_COLOR)
        return name

    def visit(self, fn: Node) -> str:
        """The box name of a node (a leaf's, for an AccumulateGrad); schedules
        the node to be drawn."""
        if isinstance(fn, AccumulateGrad):
            return self.leaf(fn.variable)
        name = self.node_id(fn)
        if id(fn) not in self.seen:
            self.seen.add(id(fn))
            self.stack.append(fn)
        return name

    def output(self, out: Tensor) -> None:
        """An output's box, joined to what produced it."""
        name = f"o{len(self.dot.nodes)}"
        self.dot.node(name, _size(out.shape), fillcolor=OUTPUT_COLOR)
        if out.grad_fn is not None:
            self.dot.edge(self.visit(out.grad_fn), name, style="dashed")
        elif out.requires_grad:
            self.dot.edge(self.leaf(out), name, style="dashed")

    def node(self, fn: Node) -> None:
        """A node's box with its saved values, joined to its inputs' boxes."""
        name = self.node_id(fn)
        label = fn.name()
        for attr, value in _saved_values(fn):
            if isinstance(value, Tensor) or value is _FREED:
                if self.show_saved:
                    self.saved(name, attr, value)
            elif self.show_attrs:
                label += f"\n{attr[len('_saved_') :]}: {self.short(value)}"
        self.dot.node(name, label, fillcolor="lightgrey")
        for next_fn, _ in fn.next_functions:
            if next_fn is not None:
                self.dot.edge(self.visit(next_fn), name)

    def saved(self, name: str, attr: str, value: Any) -> None:
        """The box of a tensor node `name` saved (or freed), joined to it."""
        box = f"{name}_{attr[len('_saved_') :]}"
        shape = "freed" if value is _FREED else _size(value.shape)
        self.dot.node(box, f"{attr}\n {shape}", fillcolor=SAVED_COLOR)
        self.dot.edge(box, name, dir="none")

    def short(self, value: Any) -> str:
        text = repr(value)
        if len(text) > self.max_attr_chars:
            text = text[: self.max_attr_chars - 3] + "..."
        return text
