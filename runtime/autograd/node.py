"""Node and Edge: the autograd graph, as torch/csrc/autograd/{function,edge}.h.

A Node is the backward of one forward op. Its `next_edges` say where each input's
gradient goes: `Edge(node, input_nr)` is input slot `input_nr` of `node`, and
`Edge(None, 0)` means nowhere (an input that does not require grad, or a Python
number). The node keeps them flat, `_next_edges = (node0, input_nr0, node1,
input_nr1, ...)`: one tuple per node rather than one per edge as well, which on a
long graph is less for Python's cyclic garbage collector to scan over and over. Its input metadata (one `(shape, dtype)` per forward output) is what the
engine checks incoming gradients against and reduces broadcasts to.

`apply(grads, raw)` is generated per op. With `raw=True` (a first-order backward)
gradients and saved values are plain ndarrays and no Tensor is made; with
`raw=False` (`create_graph=True`, or a user calling `grad_fn(...)`) they are Tensors
and the formula is itself recorded, so every op can be differentiated again.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.autograd import anomaly_mode
from yamlgrad.runtime.autograd.hooks import (
    TABLE_LOCK,
    HookDict,
    NodeHooks,
    RemovableHandle,
    add_hook,
)

if TYPE_CHECKING:
    from yamlgrad.runtime.autograd.tensor import Tensor

Grad = Any  # an ndarray in a raw backward, a Tensor otherwise

# PyTorch gives AccumulateGrad the largest sequence number so a ready
# AccumulateGrad runs first (NOTE [ Sequence Number ]).
UINT64_MAX = 2**64 - 1

# Creation order of nodes.
sequence_nr = itertools.count()


_anomaly = anomaly_mode.state


class Edge(NamedTuple):
    """Where a gradient goes: input `input_nr` of `node` (None: nowhere)."""

    node: Node | None
    input_nr: int


INVALID_EDGE = Edge(None, 0)


def flat_edges(edges: Iterable[tuple[Node | None, int]]) -> tuple[Any, ...]:
    """`(node, input_nr)` pairs in a node's flat form (Node.set_next_edges)."""
    return tuple(item for edge in edges for item in edge)


class _TaskState(threading.local):
    """The nodes the running graph task will execute (None: all of them).

    Set by the engine while `autograd.grad` or `backward(inputs=...)` runs, so that
    `task_should_compute_output` can skip gradients nobody asked for.
    """

    should_execute: set[Node] | dict[Node, Any] | None = None
    # The running graph task's number (-1 outside backward), as PyTorch's
    # `_current_graph_task_id`: non-reentrant checkpoint recomputes once per task.
    graph_task_id: int = -1


task_state = _TaskState()
# How many graph tasks with a `should_execute` set are running, in any thread.
# While none is, task_should_compute_output skips the thread-local lookup, which
# costs more than the rest of it, on every gradient of every node.
pruned_tasks = [0]
pruned_tasks_lock = threading.Lock()


class Node:
    """The backward of one forward op (PyTorch's `torch::autograd::Node`)."""

    __slots__ = (
        "_next_edges",
        "_input_metadata",
        "_seq",
        "_metadata",
        "_hooks",
        "__weakref__",
    )

    # Whether the class frees saved values in release_variables (the engine calls
    # it only then); set for each subclass from whether it overrides it.
    _saves = False
    # Whether apply's ndarray gradients always have their inputs' shapes and
    # dtypes and are None for edges that lead nowhere (a compiled graph's
    # backward, conformed when generated): the engine then skips checking them.
    _exact_outputs = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._saves = cls.release_variables is not Node.release_variables

    def __init__(self) -> None:
        self._next_edges: tuple[Any, ...] = ()  # flat: node, input_nr, ...
        # A tuple, not a list: once its shapes are known it holds no object the
        # cyclic garbage collector has to scan, on every node of a long graph.
        self._input_metadata: tuple[tuple[tuple[int, ...], np.dtype], ...] = ()
        self._seq = next(sequence_nr)
        self._metadata: dict | None = None
        self._hooks: NodeHooks | None = None
        if anomaly_mode.ever_enabled and _anomaly.enabled:
            # The stack up to the op that made the node: without this frame and,
            # when the class has one, its own __init__.
            record_anomaly(self, skip=1 if type(self).__init__ is Node.__init__ else 2)

    # -- the graph ---------------------------------------------------------------

    def set_next_edges(self, edges: tuple[Any, ...]) -> None:
        """Set the edges, flat: `(node, input_nr, node, input_nr, ...)`, as
        collect_next_edges and flat_edges give them."""
        self._next_edges = edges

    def held_edges(self) -> tuple[Any, ...]:
        """The flat edges as the node holds them, without making anything: a
        node may hold a fresh leaf in place of its AccumulateGrad, made only
        when `_next_edges` is read (a compiled graph's node: see leaf_edges)."""
        return self._next_edges

    @property
    def next_edges(self) -> tuple[Edge, ...]:
        flat = self._next_edges
        return tuple(Edge(flat[i], flat[i + 1]) for i in range(0, len(flat), 2))

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        flat = self._next_edges
        return tuple((flat[i], flat[i + 1]) for i in range(0, len(flat), 2))

    @property
    def num_outputs(self) -> int:
        """How many gradients apply() returns: one per next edge."""
        return len(self._next_edges) // 2

    def add_input_metadata(self, tensor: Tensor) -> int:
        """Record a forward output's shape and dtype; returns its output_nr."""
        metadata = self._input_metadata
        self._input_metadata = (*metadata, (tensor._data.shape, tensor._data.dtype))
        return len(metadata)

    @property
    def num_inputs(self) -> int:
        return len(self._input_metadata)

    def input_metadata(self, index: int) -> tuple[tuple[int, ...], np.dtype]:
        return self._input_metadata[index]

    def should_compute_output(self, index: int) -> bool:
        """Whether input `index` of the forward op needs a gradient at all."""
        return self._next_edges[2 * index] is not None

    def task_should_compute_output(self, index: int) -> bool:
        """should_compute_output, also asking whether the running task needs it."""
        node = self._next_edges[2 * index]
        if node is None:
            return False
        if not pruned_tasks[0]:
            return True
        needed = task_state.should_execute
        return needed is None or node in needed

    # -- introspection -----------------------------------------------------------

    def name(self) -> str:
        return type(self).__name__

    @property
    def sequence_nr(self) -> int:
        """Creation order; the engine runs the highest ready number first."""
        return self._seq

    def _sequence_nr(self) -> int:
        return self._seq

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    # -- hooks (runtime/autograd/hooks.py) ----------------------------------------------------

    def _node_hooks(self) -> NodeHooks:
        if self._hooks is None:
            with TABLE_LOCK:
                if self._hooks is None:
                    self._hooks = NodeHooks()
        return self._hooks

    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """`fn(grad_inputs, grad_outputs) -> tuple | None`, after the node runs."""
        return add_hook(self._node_hooks().post_hooks, fn)

    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """`fn(grad_outputs) -> tuple | None`, before the node runs."""
        return add_hook(self._node_hooks().pre_hooks, fn)

    def _register_tensor_hook(
        self, output_nr: int, fn: Callable[..., Any]
    ) -> RemovableHandle:
        hooks = self._node_hooks().tensor_pre_hooks.setdefault(output_nr, HookDict())
        return add_hook(hooks, fn)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    # -- running -----------------------------------------------------------------

    def apply(self, grads: list[Grad], raw: bool = False) -> list[Grad | None]:
        raise NotImplementedError(f"{self.name()} does not implement apply")

    def materialize_grads(self, grads: list[Grad], raw: bool) -> list[Grad]:
        """Zeros for the outputs that got no gradient, so formulas that read every
        output's gradient (`grads`) need not handle None. Integer outputs stay None."""
        if len(grads) == 1 == len(self._input_metadata) and grads[0] is not None:
            return grads  # one output, with its gradient (most backwards)
        out = list(grads) + [None] * (len(self._input_metadata) - len(grads))
        for i, g in enumerate(out):
            shape, dtype = self._input_metadata[i]
            if g is None and backend.dtype_kind(dtype) in "fc":
                out[i] = _zeros_beside(grads, shape, dtype, raw)
        return out

    def release_variables(self) -> None:
        """Free saved values after a backward without retain_graph."""

    def __call__(self, *grads: Tensor | None) -> Any:
        """Run the node on gradients of its outputs, one per input (PyTorch's)."""
        if len(grads) != self.num_inputs:
            raise TypeError(
                f"expected {self.num_inputs} arguments, got {len(grads)} instead"
            )
        outputs = self.apply(list(grads), False)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


# The input metadata of single-output nodes, shared: `((shape, dtype),)` is the
# same tuple for every node whose output has that shape and dtype, so a node adds
# no tuples of its own for the cyclic garbage collector to track. Bounded: a
# program with ever new shapes starts it afresh now and then.
METADATA_CACHE: dict[tuple[tuple[int, ...], np.dtype], tuple] = {}
_METADATA_CACHE_LIMIT = 4096


def output_metadata(data: np.ndarray) -> tuple:
    """The shared `((shape, dtype),)` for an output array (see METADATA_CACHE);
    another library's dtype (array_api_strict's), which hashes as numpy's and
    warns when compared with it, gets a tuple of its own."""
    key = (data.shape, data.dtype)
    if not isinstance(key[1], np.dtype):
        return (key,)
    metadata = METADATA_CACHE.get(key)
    if metadata is None:
        if len(METADATA_CACHE) >= _METADATA_CACHE_LIMIT:
            METADATA_CACHE.clear()
        metadata = METADATA_CACHE[key] = (key,)
    return metadata


def record_anomaly(node: Node, skip: int = 0) -> None:
    """Anomaly mode: keep the forward call's stack on a node being created,
    without the `skip` frames between the op's code and this call."""
    node._metadata = {}
    anomaly_mode.record_forward_stack(node._metadata, skip + 1)


def _zeros_beside(
    grads: list[Grad], shape: tuple[int, ...], dtype: Any, raw: bool
) -> Grad:
    """Zeros for a missing output gradient, on the backend of the gradients that
    did arrive (a Tensor's under `create_graph`, unless `raw`)."""
    arrays = [g if raw else g._data for g in grads if g is not None]
    zeros = backend.array_namespace(*arrays[:1]).zeros(shape, dtype=dtype)
    return zeros if raw else _tensor_type()._make(zeros)


def _tensor_type() -> type[Tensor]:
    from yamlgrad.runtime.autograd.tensor import Tensor

    return Tensor
