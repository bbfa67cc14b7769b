"""`yamlgrad.compile`: one generated forward and backward per traced graph.

    >>> @yg.compile
    ... def step(x, w):
    ...     return (x @ w).relu().sum()
    >>> loss = step(x, w)        # traced, generated and run; later calls just run
    >>> loss.backward()          # one CompiledFunctionBackward node
    >>> print(step.code)         # the generated source

The first call with a given signature (each tensor argument's shape, dtype and
requires_grad; every other argument by value; grad mode) traces the function
(runtime/compile/tracer.py), generates its code from the recorded entries' YAML
(runtime/compile/compiler.py) and runs it (runtime/compile/compiled_function.py).
A later call with the same signature checks the guards of the tensors the
function read from outside (same object, shape, dtype, requires_grad) and runs
the code. Another signature traces again, up to `cache_size_limit` graphs per
function (PyTorch's `torch._dynamo.config.cache_size_limit`); past it, a warning
says why the function would have recompiled, and it runs eagerly.
"""

from __future__ import annotations

import functools
import gc
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any, TextIO

import numpy as np

from yamlgrad.runtime.autograd.grad_mode import _state as _grad_mode
from yamlgrad.runtime.autograd.grad_mode import no_grad
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.compile.compiled_function import (
    CompiledFunctionBackward,
    CompiledGraph,
)
from yamlgrad.runtime.compile.compiler import generate
from yamlgrad.runtime.compile.tracer import TraceError, Tracer, user_line
from yamlgrad.runtime.wrappers.interposition import tracing

__all__ = [
    "compile",
    "CompiledFunction",
    "CompiledFunctionBackward",
    "TraceError",
    "InvalidBackend",
    "BACKENDS",
    "MODES",
    "cache_size_limit",
]

# How many graphs one compiled function keeps (PyTorch's default is 8).
cache_size_limit = 8

_EAGER = "eager"  # a signature whose trace failed under fallback=True


def _signature(args: tuple, kwargs: dict) -> tuple[tuple[Any, ...], list[Tensor]]:
    """The cache key of a call, and its tensors in the order the graph takes them.

    Each tensor adds its shape, dtype and requires_grad to the key; this runs on
    every call, so the common case (a Tensor argument) is spelled out inline."""
    parts: list[Any] = [_grad_mode.enabled]
    tensors: list[Tensor] = []
    append = parts.append
    for v in args:
        if type(v) is Tensor:
            data = v._data
            append(data.shape)
            append(data.dtype)
            append(v._requires_grad)
            tensors.append(v)
        else:
            _add_other(v, parts, tensors)
    if kwargs:
        for name in sorted(kwargs):
            append(name)
            _add_other(kwargs[name], parts, tensors)
    return tuple(parts), tensors


def _add_other(v: Any, parts: list[Any], tensors: list[Tensor]) -> None:
    kind = type(v)
    if isinstance(v, Tensor):
        tensors.append(v)
        parts += (v._data.shape, v._data.dtype, v._requires_grad)
    elif kind is list or kind is tuple:
        parts.append((kind, len(v)))
        for item in v:
            _add_other(item, parts, tensors)
    elif kind in (int, float, bool, str) or v is None:
        parts.append((kind, v))
    else:
        parts.append((kind, id(v)))


def _replace_tensors(value: Any, replace: Callable[[Tensor], Any]) -> Any:
    """`value` with each tensor replaced, in _signature's order."""
    if isinstance(value, Tensor):
        return replace(value)
    if type(value) in (list, tuple):
        return type(value)(_replace_tensors(v, replace) for v in value)
    return value


def _build(spec: Any, outputs: list[Tensor]) -> Any:
    kind, content = spec
    if kind == "tensor":
        return outputs[content]
    if kind in ("tuple", "list"):
        items = [_build(s, outputs) for s in content]
        return tuple(items) if kind == "tuple" else items
    if kind == "dict":
        return {k: _build(s, outputs) for k, s in content.items()}
    return content


class CompiledFunction:
    """A function with its compiled graphs (see the module docstring)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        fallback: bool,
        format_source: bool,
        state: Callable[[], Any] | None = None,
    ) -> None:
        functools.update_wrapper(self, fn)
        if not hasattr(self, "__qualname__"):  # a callable object (a partial)
            self.__qualname__ = type(fn).__qualname__
        self.fn = fn
        # What else the traced code depends on, in the cache key: a compiled
        # module's training flags (dropout and batch norm trace differently).
        self.state = state
        self.fallback = fallback
        self.format_source = format_source
        self.graphs: dict[tuple[Any, ...], list[CompiledGraph] | str] = {}
        self.recompile_reasons: list[str] = []
        self.trace_seconds: list[float] = []
        self._last: CompiledGraph | None = None
        self._warned = False

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        """A compiled method: bound to its instance like the function it wraps."""
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if tracing.active and tracing.is_recording():
            return self.fn(*args, **kwargs)  # inside another trace: traced inline
        key, tensors = self._signature(args, kwargs)
        found = self._guarded(key, tensors)
        if found is not None:
            return _build(found[0].out_spec, found[0].run(found[1]))
        if self.graphs.get(key) is _EAGER:
            return self.fn(*args, **kwargs)
        return self._compile_and_run(key, tensors, args, kwargs)

    def guard(self, *args: Any, **kwargs: Any) -> CompiledGraph | None:
        """The per-call guard check alone: the graph a call with these arguments
        would run, or None (it would trace, or run eagerly)."""
        found = self._guarded(*self._signature(args, kwargs))
        return found[0] if found is not None else None

    def _signature(
        self, args: tuple, kwargs: dict
    ) -> tuple[tuple[Any, ...], list[Tensor]]:
        """The call's cache key (`_signature`'s, then the state, if any) and
        its tensors."""
        key, tensors = _signature(args, kwargs)
        if self.state is not None:
            key += (self.state(),)
        return key, tensors

    def _guarded(
        self, key: tuple[Any, ...], tensors: list[Tensor]
    ) -> tuple[CompiledGraph, list[Tensor]] | None:
        """The graph whose guards the call passes, and the tensors it takes."""
        graphs = self.graphs.get(key)
        if graphs is None or graphs is _EAGER:
            return None
        for graph in graphs:  # type: ignore[union-attr]
            externals = graph.externals_now(key[0])
            if externals is not None:
                return graph, tensors + externals if externals else tensors
        return None

    @property
    def code(self) -> str:
        """The source of the graph compiled last."""
        if self._last is None:
            raise RuntimeError("yamlgrad.compile: the function has not been called yet")
        return self._last.code.source

    def explain(self, file: TextIO | None = None) -> None:
        """Print every compiled graph: its guards, its calls, its source (to
        `file`, default sys.stdout); explanation() returns the same text."""
        print(self.explanation(), file=sys.stdout if file is None else file)

    def explanation(self) -> str:
        """What explain() prints."""
        parts = []
        for key, graphs in self.graphs.items():
            if graphs is _EAGER:
                parts.append(f"signature {key!r}: runs eagerly (fallback)")
                continue
            for graph in graphs:  # type: ignore[union-attr]
                parts.append(_explain_graph(graph))
        if self.recompile_reasons:
            parts.append(
                "recompiled because:\n  " + "\n  ".join(self.recompile_reasons)
            )
        return "\n\n".join(parts)

    def _compile_and_run(
        self, key: tuple[Any, ...], tensors: list[Tensor], args: tuple, kwargs: dict
    ) -> Any:
        count = sum(len(g) for g in self.graphs.values() if g is not _EAGER)
        reason = self._reason(key) if count else None
        if count >= cache_size_limit:
            if not self._warned:
                self._warned = True
                warnings.warn(
                    f"yamlgrad.compile: {self.__qualname__} hit cache_size_limit "
                    f"({cache_size_limit}); it runs eagerly from now on. Last "
                    f"reason to recompile: {reason}",
                    stacklevel=3,
                )
            return self.fn(*args, **kwargs)
        if reason is not None:
            self.recompile_reasons.append(reason)
        try:
            graph = self._trace(key, args, kwargs)
        except TraceError:
            if not self.fallback:
                raise
            self.graphs[key] = _EAGER
            return self.fn(*args, **kwargs)
        existing = self.graphs.get(key)
        self.graphs[key] = ([] if not isinstance(existing, list) else existing) + [
            graph
        ]
        self._last = graph
        externals = graph.externals_now(key[0]) or []
        return _build(graph.out_spec, graph.run(tensors + externals))

    def _trace(self, key: tuple[Any, ...], args: tuple, kwargs: dict) -> CompiledGraph:
        # Tracing makes many small objects that all live until it ends: the
        # cyclic collector would scan them again and again, for nothing.
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._trace_uncollected(key, args, kwargs)
        finally:
            if enabled:
                gc.enable()

    def _trace_uncollected(
        self, key: tuple[Any, ...], args: tuple, kwargs: dict
    ) -> CompiledGraph:
        start = time.perf_counter()
        tracer = Tracer(grad_enabled=key[0])
        from yamlgrad.runtime.compile.codegen import base_namespace

        tracer.reserved = frozenset(base_namespace()) | {"forward", "backward"}
        tracer.external_names = _external_names(self.fn)
        names = iter(_parameter_names(self.fn, args, kwargs))
        traced_args = _replace_tensors(args, lambda t: tracer.add_input(t, next(names)))
        traced_kwargs = {
            k: _replace_tensors(kwargs[k], lambda t: tracer.add_input(t, next(names)))
            for k in sorted(kwargs)
        }
        tracing.start(tracer)
        try:
            # In the caller's grad mode, recording history as eager mode does, so
            # that a no_grad() block or a detach inside the function gives values
            # that do not require grad (Tracer.output reads it off each result).
            result = self.fn(*traced_args, **traced_kwargs)
            out_spec = tracer.output_spec(result)
        except BaseException:
            tracer.restore()  # a failed trace leaves the externals as they were
            raise
        finally:
            tracing.stop()
        del result, traced_args, traced_kwargs
        refs = tracer.finish()
        graph = tracer.graph
        origin = f"{self.__qualname__} ({user_line()})"
        traced = len(graph.calls)
        code = generate(graph, origin, self.format_source)
        for v in graph.sources + [o for c in graph.calls for o in c.outputs if o]:
            v.example = None
        self.trace_seconds.append(time.perf_counter() - start)
        compiled = CompiledGraph(graph, code, refs, out_spec, key)
        compiled.traced_calls = traced
        return compiled

    def _reason(self, key: tuple[Any, ...]) -> str:
        for graphs in self.graphs.values():
            if graphs is _EAGER:
                continue
            for graph in graphs:  # type: ignore[union-attr]
                if graph.key == key:
                    return graph.failed_guard(key[0])
        old = next((g[0].key for g in self.graphs.values() if g is not _EAGER), None)
        return _key_difference(old, key) if old is not None else "first call"


def _parameter_names(fn: Callable[..., Any], args: tuple, kwargs: dict) -> list[str]:
    """A name for each tensor argument: its parameter's, `x_1` within a list."""
    import inspect

    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    params = []
    for p in parameters:
        if p.kind is p.VAR_POSITIONAL:  # *p: p_0, p_1, ...
            params += [f"{p.name}_{i}" for i in range(len(args) - len(params))]
            break
        params.append(p.name)
    names: list[str] = []

    def collect(value: Any, name: str) -> None:
        if isinstance(value, Tensor):
            names.append(name)
        elif type(value) in (list, tuple):
            for i, v in enumerate(value):
                collect(v, f"{name}_{i}")

    for i, a in enumerate(args):
        collect(a, params[i] if i < len(params) else f"arg{i}")
    for k in sorted(kwargs):
        collect(kwargs[k], k)
    return names


def _external_names(fn: Callable[..., Any]) -> dict[int, str]:
    """Names for the tensors `fn` can reach without receiving them: its closure's
    and globals' tensors, and the parameters and buffers of the modules among
    them (`model.weight` -> `model_weight`), by the tensor's id."""
    import inspect

    names: dict[int, str] = {}
    found: dict[str, Any] = {}
    target = getattr(fn, "__func__", fn)
    if hasattr(fn, "__self__"):
        found["self"] = fn.__self__
    try:
        variables = inspect.getclosurevars(target)
        found.update(variables.globals)
        found.update(variables.nonlocals)
    except (TypeError, ValueError):
        pass
    for name, value in found.items():
        if isinstance(value, Tensor):
            names.setdefault(id(value), name)
        elif hasattr(value, "named_parameters") and hasattr(value, "named_buffers"):
            for path, t in (*value.named_parameters(), *value.named_buffers()):
                names.setdefault(id(t), f"{name}_{path.replace('.', '_')}")
    return names


def _key_difference(old: tuple[Any, ...], new: tuple[Any, ...]) -> str:
    if old[0] != new[0]:
        return f"grad mode changed ({old[0]} -> {new[0]})"
    if len(old) != len(new):
        return "the number or structure of the arguments changed"
    for i, (a, b) in enumerate(zip(old, new)):
        if a != b and isinstance(a, Training):
            return f"the module's training mode changed ({a.mode()} -> {b.mode()})"
        if a != b:
            what = {tuple: "shape", bool: "requires_grad"}.get(type(a), "value")
            if isinstance(a, np.dtype):
                what = "dtype"
            return f"an argument's {what} changed: {_part(a)} -> {_part(b)}"
    return "an external tensor's guard failed"


def _part(part: Any) -> str:
    return (
        str(list(part))
        if type(part) is tuple and all(type(p) is int for p in part)
        else repr(part)
    )


def _explain_graph(graph: CompiledGraph) -> str:
    guards = [f"grad mode is {graph.key[0]}"]
    guards += [f"arguments match {graph.key[1:]!r}"]
    for (_, shape, dtype, requires_grad), v in zip(
        graph.external_guards, graph.graph.externals
    ):
        guards.append(
            f"{v.name} is the tensor read when traced, {list(shape)} {dtype}"
            f"{', requires_grad' if requires_grad else ''}"
        )
    return (
        "guards:\n  "
        + "\n  ".join(guards)
        + "\ngraph:\n  "
        + graph.graph.describe().replace("\n", "\n  ")
        + "\nsource:\n"
        + graph.code.source
    )


class Training(tuple):
    """The training flags of a compiled module and its submodules (in
    `modules()` order): part of the cache key, so `eval()` traces again."""

    @staticmethod
    def of(module: Any) -> Training:
        return Training(m.training for m in module.modules())

    def mode(self) -> str:
        return "train" if all(self) else "eval" if not any(self) else "mixed"


class InvalidBackend(RuntimeError):
    """A backend name PyTorch's `torch.compile` does not know (its error's name)."""


# The modes torch.compile accepts, and the backends by name that run here: all
# compile to the generated numpy code (yamlgrad has one compiler); the others
# PyTorch knows need software this package does not drive.
MODES = (
    "default",
    "lite",
    "reduce-overhead",
    "max-autotune-no-cudagraphs",
    "max-autotune",
)
BACKENDS = ("inductor", "aot_eager", "eager", "cudagraphs")


def compile(
    model: Callable[..., Any] | None = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str | Callable[..., Any] = "inductor",
    mode: str | None = None,
    options: dict[str, Any] | None = None,
    disable: bool = False,
    fallback: bool = False,
    format_source: bool = False,
) -> Any:
    """Compile `model` (a function, or an `nn.Module`) into one generated forward
    and backward per signature; PyTorch's `torch.compile`.

    `fallback=True`: a function that reads a traced value into Python (`.item()`,
    `bool(t)`, ...) runs eagerly instead of raising (`fullgraph=True`, PyTorch's
    way to ask for the raise, is the default). `format_source=True`: the
    generated source is formatted with black. `disable=True` returns `model`
    itself. `backend`, `mode`, `options` and `dynamic` are checked as PyTorch
    checks them and change nothing: there is one compiler, and it specializes
    on every shape (a new shape traces again, up to `cache_size_limit`). An
    `nn.Module` comes back as an `OptimizedModule` holding it as `_orig_mod`.
    Usable as `@yg.compile` and `@yg.compile(fallback=True)`.
    """
    _check_options(fullgraph, backend, mode, options, fallback)
    if model is None:
        return lambda f: compile(
            f,
            fullgraph=fullgraph,
            dynamic=dynamic,
            backend=backend,
            mode=mode,
            options=options,
            disable=disable,
            fallback=fallback,
            format_source=format_source,
        )
    if not callable(model):
        raise AssertionError(
            f"A callable function is expected, but {type(model)} is provided."
        )
    if disable:
        return model
    as_compiled = getattr(model, "_as_compiled", None)  # an nn.Module
    if as_compiled is not None:
        # (A partial, not a lambda: a deep copy of the module gets its own.)
        state = functools.partial(Training.of, model)
        calls = CompiledFunction(model._call_impl, fallback, format_source, state)
        return as_compiled(calls)
    return CompiledFunction(model, fallback, format_source)


def _check_options(
    fullgraph: bool,
    backend: Any,
    mode: str | None,
    options: dict[str, Any] | None,
    fallback: bool,
) -> None:
    """torch.compile's checks of its options, with its messages."""
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified "
            "at the same time."
        )
    if mode is not None and mode not in MODES:
        raise RuntimeError(
            f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}"
        )
    if callable(backend):
        raise NotImplementedError(
            "yamlgrad.compile: a backend given as a function is not supported; "
            f"yamlgrad compiles to its own generated code (backend={BACKENDS[0]!r})"
        )
    if backend not in BACKENDS:
        raise InvalidBackend(
            f"Invalid backend: {backend!r}, see "
            "`yamlgrad.runtime.compile.BACKENDS` for available backends."
        )
    if fullgraph and fallback:
        raise ValueError(
            "yamlgrad.compile: fullgraph=True asks for an error where the graph "
            "would break, fallback=True for eager execution there; give one"
        )
