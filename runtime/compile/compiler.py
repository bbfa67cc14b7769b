"""A traced Graph to executable code: render templates/compiled.py.j2 and exec it.

runtime/compile/codegen.py writes the forward's lines, runtime/compile/backward.py
the backward's; this module decides what crosses between them (the values
backward reads are returned by forward, and nothing else is kept), drops forward
calls whose values nothing reads, renders, optionally formats with black, and
compiles the source into a namespace of its own.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from yamlgrad.runtime.compile.backward import BackwardBuilder
from yamlgrad.runtime.compile.codegen import (
    Namespace,
    base_namespace,
    forward_stmts,
    insert_deletes,
    value_expr,
)
from yamlgrad.runtime.compile.graph import Graph, Value
from yamlgrad.runtime.compile.memory import reuse_buffers
from yamlgrad.runtime.compile.packing import pack
from yamlgrad.runtime.compile.passes import optimize

_TEMPLATES = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    "templates",
)
TEMPLATE = "compiled.py.j2"


@dataclass
class CompiledCode:
    """What runs a graph: the source, its two functions, and how to read their
    results."""

    source: str
    forward: Any
    backward: Any  # None when no output requires grad
    n_outputs: int
    n_writebacks: int
    grad_outputs: tuple[int, ...]  # the outputs backward takes a gradient for
    grad_sources: tuple[bool, ...]  # which sources backward returns a gradient for
    saved_outputs: tuple[int, ...] = ()  # outputs backward reads: version-checked
    saved_sources: tuple[int, ...] = ()  # inputs backward reads: version-checked


@functools.lru_cache(maxsize=None)
def _template() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATES),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    return env.get_template(TEMPLATE)


def generate(graph: Graph, origin: str, format_source: bool = False) -> CompiledCode:
    """Render, compile and load the code of `graph` (after the whole-graph
    passes of runtime/compile/passes.py, which change it in place)."""
    optimize(graph)
    namespace = Namespace(values=dict(base_namespace()))
    reached = pack(graph, set(namespace.values) | {"forward", "backward"})
    builder = None
    if graph.requires_grad:
        builder = BackwardBuilder(graph, namespace)
        builder.build()
    saved = _saved_values(graph, builder)
    forward_lines, forward_returns = _forward(graph, namespace, saved)
    context: dict[str, Any] = {
        "origin": origin,
        "summary": f"The compiled graph of {origin}: {len(graph.calls)} calls.",
        "forward_params": [v.name for v in graph.sources],
        "forward_lines": forward_lines,
        "forward_returns": forward_returns,
        "writebacks": [target.name for target, _ in graph.writebacks],
        "saved": [v.name for v in saved],
        "backward_lines": None,
    }
    grad_sources = tuple(False for _ in graph.sources)
    if builder is not None:
        returns = [
            builder.grads.get(v) if reached is None or v in reached else None
            for v in graph.sources
        ]
        keep = {r for r in returns if r is not None}
        params = builder.params + [v.name for v in saved]
        context["backward_params"] = params
        reuse_buffers(builder.stmts, builder.metas, params, keep, _never)
        context["backward_lines"] = insert_deletes(builder.stmts, keep, params)
        context["backward_returns"] = [str(r) for r in returns]
        grad_sources = tuple(r is not None for r in returns)
    source = _template().render(context)
    if format_source:
        from yamlgrad.tools.gen import format_code

        source = format_code(source, TEMPLATE)
    # A module of this package to the warnings machinery, so numpy's log(0) in a
    # compiled graph is silenced as in the eager kernels (silence_numpy_warnings).
    module = {**namespace.values, "__name__": __name__}
    exec(compile(source, f"<yamlgrad.compile {origin}>", "exec"), module)  # noqa: S102
    return CompiledCode(
        source=source,
        forward=module["forward"],
        backward=module.get("backward"),
        n_outputs=len(graph.outputs),
        n_writebacks=len(graph.writebacks),
        grad_outputs=tuple(i for i, v in enumerate(graph.outputs) if v.requires_grad),
        grad_sources=grad_sources,
        saved_outputs=tuple(i for i, v in enumerate(graph.outputs) if v in saved),
        saved_sources=tuple(i for i, v in enumerate(graph.sources) if v in saved),
    )


def _saved_values(graph: Graph, builder: BackwardBuilder | None) -> list[Value]:
    """The forward values backward reads, in forward order."""
    if builder is None:
        return []
    used: set[str] = set()
    defined = set(builder.params)
    for s in builder.stmts:
        used |= s.uses
        defined |= set(s.targets)
    values = list(graph.sources)
    for call in graph.calls:
        values += [o for o in call.outputs if o is not None]
    return [v for v in values if v.name in used and v.name not in defined]


def _forward(
    graph: Graph, namespace: Namespace, saved: list[Value]
) -> tuple[list[Any], list[str]]:
    """The forward's lines, without the calls nothing reads, and its returns."""
    needed: set[Value] = set(graph.outputs) | set(saved)
    needed |= {final for _, final in graph.writebacks}
    kept = []
    for call in reversed(graph.calls):
        if not any(o in needed for o in call.outputs if o is not None):
            continue
        kept.append(call)
        for spec in call.args.values():
            for v in spec if isinstance(spec, list) else [spec]:
                if isinstance(v, Value):
                    needed.add(v)
    zero_dim = {
        o.name for call in kept for o in call.outputs if o is not None and not o.shape
    }
    # Only a ufunc's result is known to be an array of the graph's own: another
    # kernel may return its input itself for some layout the guards let through
    # (`ascontiguousarray` of an already contiguous array).
    stmts = []
    metas: dict[str, tuple[tuple[int, ...], Any]] = {}
    for call in reversed(kept):
        lines = forward_stmts(call, namespace, zero_dim)
        for o in call.outputs:
            if o is not None and _row_major(o.example):
                metas[o.name] = (o.shape, o.dtype)
        stmts += lines
    returns = [value_expr(v, namespace) for v in graph.outputs]
    returns += [value_expr(final, namespace) for _, final in graph.writebacks]
    returns += [value_expr(v, namespace) for v in saved]
    texts = [r.id for r in returns]  # type: ignore[attr-defined]
    params = [v.name for v in graph.sources]
    reuse_buffers(stmts, metas, params, set(texts), _never)
    return insert_deletes(stmts, set(texts), params), texts


def _never(_: Any) -> bool:
    return False


def _row_major(example: Any) -> bool:
    return type(example) is np.ndarray and example.flags.c_contiguous
