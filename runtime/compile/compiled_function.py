"""Running a compiled graph, and its one node in the autograd graph.

`CompiledGraph.run` calls the generated forward on the arrays of the inputs and
externals, writes back what the function changed in place, and, when an output
requires grad, makes one `CompiledFunctionBackward` (PyTorch's name for the node
of a compiled region) with an edge to each input's gradient edge; every
differentiable output gets it as its grad_fn. To the engine it is a node like
any other: hooks, `retain_graph`, `autograd.grad` and AccumulateGrad work as
usual. A first-order backward runs the generated backward on ndarrays; with
`create_graph=True` the node replays the recorded entries on the saved inputs as
ordinary eager ops and differentiates them, so the gradient is itself recorded
and double backward holds.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from yamlgrad.runtime.autograd.grad_mode import enable_grad
from yamlgrad.runtime.autograd.node import Grad, Node
from yamlgrad.runtime.autograd.saved_variable import SavedVariable
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.compile.compiler import CompiledCode
from yamlgrad.runtime.compile.graph import Graph, Value
from yamlgrad.runtime.autograd import anomaly_mode
from yamlgrad.runtime.errors import ERR_BACKWARD_TWICE, modified_by_inplace
from yamlgrad.runtime.autograd.accumulate_grad import leaf_edges, resolved_edges
from yamlgrad.runtime.autograd.node import pruned_tasks
from yamlgrad.runtime.wrappers.variable_type_utils import set_history


class CompiledGraph:
    """One traced graph of a function, with its guards and its code."""

    def __init__(
        self,
        graph: Graph,
        code: CompiledCode,
        externals: list[weakref.ref],
        out_spec: Any,
        key: tuple[Any, ...],
    ) -> None:
        self.graph = graph
        self.code = code
        self.out_spec = out_spec
        self.key = key
        self.externals = externals
        self.traced_calls = len(graph.calls)  # set to the count before the passes
        # (weak ref, shape, dtype, requires_grad) of each external: the guards.
        self.external_guards = [
            (ref, v.shape, v.dtype, v.requires_grad)
            for ref, v in zip(externals, graph.externals)
        ]
        sources = graph.sources
        self.writebacks = [(sources.index(t), f) for t, f in graph.writebacks]

    def externals_now(self, grad_enabled: bool) -> list[Tensor] | None:
        """The externals' tensors, or None when a guard fails."""
        tensors = []
        for ref, shape, dtype, requires_grad in self.external_guards:
            t = ref()
            if t is None:
                return None
            data = t._data
            if data.shape != shape or data.dtype != dtype:
                return None
            if (grad_enabled and t._requires_grad) != requires_grad:
                return None
            tensors.append(t)
        return tensors

    def failed_guard(self, grad_enabled: bool) -> str:
        """Which external's guard fails, in words (for the recompile message)."""
        for (ref, shape, dtype, requires_grad), v in zip(
            self.external_guards, self.graph.externals
        ):
            t = ref()
            if t is None:
                return f"{v.name}: the tensor it read is gone"
            if t._data.shape != shape or t._data.dtype != dtype:
                return f"{v.name}: {list(shape)} {dtype} -> {list(t.shape)} {t._data.dtype}"
            if (grad_enabled and t._requires_grad) != requires_grad:
                return f"{v.name}: requires_grad changed"
        return "unknown"

    def run(self, tensors: list[Tensor]) -> list[Tensor]:
        """Run the forward on `tensors` (the inputs, then the externals)."""
        code = self.code
        results = code.forward(*[t._data for t in tensors])
        n = code.n_outputs
        for index, (source, _) in enumerate(self.writebacks, n):
            target = tensors[source]
            np.copyto(target._data, results[index])
            target.version_counter.bump()
        outputs = [Tensor._make(a) for a in results[:n]]
        if code.backward is not None:
            saved = results[n + code.n_writebacks :]
            node = CompiledFunctionBackward(self, saved, tensors)
            node.hold_edges(leaf_edges(tensors))
            for i in code.grad_outputs:
                set_history(outputs[i], node)
            # An output backward reads, changed in place later, must be caught.
            node._outputs = [
                SavedVariable(outputs[i], True) for i in code.saved_outputs
            ]
        return outputs


class CompiledFunctionBackward(Node):
    """The backward of a compiled graph: one node for all of it."""

    __slots__ = (
        "_graph",
        "_saved",
        "_sources",
        "_versions",
        "_outputs",
        "_held",
        "_unresolved",
    )
    # Its gradients are reduced and cast to each input's shape and dtype when
    # generated, and None for inputs that do not require grad.
    _exact_outputs = True

    # The edges as leaf_edges gives them (a fresh leaf standing for its
    # AccumulateGrad), resolved into nodes the first time anything reads them:
    # a backward straight into the leaves reads `held_edges` and makes none.
    @property  # type: ignore[override]
    def _next_edges(self) -> tuple[Any, ...]:
        if self._unresolved:
            self._held = resolved_edges(self._held)
            self._unresolved = False
        return self._held

    @_next_edges.setter
    def _next_edges(self, edges: tuple[Any, ...]) -> None:
        self._held = edges
        self._unresolved = False

    def hold_edges(self, edges: tuple[Any, ...]) -> None:
        """Set the edges as leaf_edges gives them (see `_next_edges`)."""
        self._held = edges
        self._unresolved = True

    def held_edges(self) -> tuple[Any, ...]:
        return self._held

    def __init__(
        self, graph: CompiledGraph, saved: tuple[Any, ...], sources: list[Tensor]
    ) -> None:
        Node.__init__(self)
        self._graph = graph
        self._saved: tuple[Any, ...] | None = saved
        # The inputs, with their versions: a change in place since forward
        # raises as a saved variable's would, for those backward reads, and for
        # all before a replay (create_graph=True), which recomputes from them.
        self._sources: list[Tensor] | None = sources
        self._versions = _versions(sources)
        self._outputs: list[SavedVariable] = []

    def apply(self, grads: list[Grad], raw: bool = False) -> list[Grad | None]:
        if self._saved is None:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        code = self._graph.code
        grads = self.materialize_grads(grads, raw)
        # The inputs backward reads; a replay recomputes from all of them.
        sources = self._check_versions(
            code.saved_sources if raw else range(len(self._versions))
        )
        for s in self._outputs:
            s.unpack(self, True)
        if not raw:
            return self._replay(grads, sources)
        result = code.backward(*grads, *self._saved)
        if not pruned_tasks[0]:  # no task leaves an edge out
            return list(result)
        return [
            g if self.task_should_compute_output(i) else None
            for i, g in enumerate(result)
        ]

    def _check_versions(self, which: Any) -> list[Tensor]:
        """The inputs, after checking that those at the indices `which` are at
        the versions they had at forward (as a saved variable is checked)."""
        sources = self._sources
        assert sources is not None
        versions = self._versions
        for i in which:
            counter = sources[i]._version_counter  # (_version, inlined: per input)
            if (0 if counter is None else counter.value) != versions[i]:
                raise RuntimeError(_modified(sources[i], versions[i]))
        return sources

    def _replay(self, grads: list[Tensor], sources: list[Tensor]) -> list[Any]:
        """The recorded entries run again as eager ops, and differentiated."""
        from yamlgrad.runtime import autograd

        graph = self._graph.graph
        with enable_grad():
            outputs = replay(graph, sources)
        wanted = [outputs[i] for i in self._graph.code.grad_outputs]
        needs = [i for i, t in enumerate(sources) if self._graph.code.grad_sources[i]]
        found = autograd.grad(
            wanted,
            [sources[i] for i in needs],
            grads,
            retain_graph=True,
            create_graph=True,
            allow_unused=True,
        )
        result: list[Any] = [None] * len(sources)
        for i, g in zip(needs, found):
            result[i] = g
        return result

    def release_variables(self) -> None:
        self._saved = None
        self._sources = None
        for s in self._outputs:
            s.reset_data()


def _modified(t: Tensor, version: int) -> str:
    """A saved variable's message for an input changed in place since forward."""
    op = None
    if t.grad_fn is not None:
        name = t.grad_fn.name()
        op = name[: name.rfind("Backward")] if "Backward" in name else name
    dtype = t._data.dtype
    type_name = {"float32": "FloatTensor", "float64": "DoubleTensor"}.get(
        dtype.name, f"{dtype.name}Tensor"
    )
    return modified_by_inplace(
        type_name,
        t._data.shape,
        t.output_nr,
        op,
        _version(t),
        version,
        anomaly_mode.is_anomaly_enabled(),
    )


def _version(t: Tensor) -> int:
    counter = t._version_counter
    return 0 if counter is None else counter.value


def _versions(tensors: list[Tensor]) -> list[int]:
    """Each tensor's `_version`, without a call per tensor (a compiled graph
    of a scalar model has hundreds of inputs)."""
    return [
        0 if (counter := t._version_counter) is None else counter.value for t in tensors
    ]


def replay(graph: Graph, sources: list[Tensor]) -> list[Tensor]:
    """Run the graph's calls as eager ops on `sources`: its outputs, recorded."""
    from yamlgrad.runtime import dispatch

    env: dict[Value, Tensor] = dict(zip(graph.sources, sources))
    for v in graph.constants:
        env[v] = Tensor._make(v.example)

    def resolve(spec: Any) -> Any:
        if isinstance(spec, Value):
            return env[spec]
        if isinstance(spec, list):
            return [resolve(s) for s in spec]
        if isinstance(spec.value, np.ndarray):  # a constant index of a Tensor?[]
            return Tensor._make(spec.value)
        return spec.value

    for call in graph.calls:
        if call.detach:
            env[call.outputs[0]] = env[call.args["self"]].detach()  # type: ignore[index]
            continue
        kwargs = {
            a.python_name: resolve(call.args[a.name]) for a in call.info.func.arguments
        }
        if call.info.inplace:  # on a copy: the values of the graph stay as they were
            kwargs["input"] = dispatch.ops.clone(kwargs["input"])
        result = call.wrapper(**kwargs)
        results = [result] if call.info.output_kind == "single" else list(result)
        if call.info.inplace:
            results = [kwargs["input"]]
        for value, tensor in zip(call.outputs, results):
            if value is not None:
                env[value] = tensor
    return [env[v] for v in graph.outputs]
