"""The Engine: runs a backward pass over the graph, as PyTorch's autograd engine.

Decisions, each PyTorch's:

* No recursion anywhere. Dependencies are counted with an explicit stack, and nodes
  run from a ready queue, so a graph a million nodes deep is fine.
* Dependency counting: a node runs once every edge into it has delivered (or
  skipped) its gradient, so each node runs exactly once with the summed gradient.
* Order: among ready nodes the highest `sequence_nr` runs first (the most recently
  created op); AccumulateGrad has the largest number, so a ready leaf is written
  first. Ties keep insertion order (a heap of `(-sequence_nr, counter)`).
* Gradients arriving at one input are summed (InputBuffer): the first sum is out
  of place, so a gradient array that is also held elsewhere is never mutated; the
  array that sum creates belongs to the engine until its node runs, so later
  gradients are added into it in place (no new array per extra use of a tensor).
  Nothing outside the engine sees a buffer before it is complete.
* `validate_outputs`: each gradient a node returns is checked against the input
  metadata of the node it flows to. A broadcast is undone here (`sum_to`), so
  formulas never reduce; a dtype is cast; any other shape is an error.
* Grad mode equals `create_graph` while the engine runs. Without it, gradients are
  plain ndarrays end to end (`raw`); with it they are Tensors and every formula is
  recorded.
* `inputs` (autograd.grad, backward(inputs=...)) prune the graph to the nodes that
  lead to them (`exec_info`); nodes outside it do not run.
"""

from __future__ import annotations

import heapq
import itertools
import sys
from typing import Any

import numpy as np

from yamlgrad.runtime import anomaly_mode, formulas, hooks
from yamlgrad.runtime.accumulate_grad import AccumulateGrad
from yamlgrad.runtime.errors import invalid_gradient_shape, invalid_number_of_gradients
from yamlgrad.runtime.grad_mode import _state as _grad_mode
from yamlgrad.runtime.node import Edge, Grad, Node, task_state
from yamlgrad.runtime.tensor import Tensor

# numpy's module has a `__getattr__`, which keeps CPython from specializing a
# read of `np.ndarray`; a global of our own is read at full speed, on every
# gradient the engine handles.
_ndarray = np.ndarray


class GraphRoot(Node):
    """The root of a backward with several outputs: hands out their gradients."""

    __slots__ = ("_grads",)

    def __init__(self, edges: tuple[Edge, ...], grads: list[Grad]) -> None:
        super().__init__()
        self.set_next_edges(edges)
        self._grads = grads

    def apply(self, grads: list[Grad], raw: bool = False) -> list[Grad | None]:
        return list(self._grads)


def _is_expandable_to(shape: tuple[int, ...], desired: tuple[int, ...]) -> bool:
    if len(shape) > len(desired):
        return False
    for s, d in zip(reversed(shape), reversed(desired)):
        if s != d and s != 1:
            return False
    return True


def validate_outputs(
    node: Node, outputs: list[Grad | None], raw: bool
) -> list[Grad | None]:
    """Check and adapt each gradient to the metadata of the input it flows to."""
    edges = node._next_edges
    if 2 * len(outputs) != len(edges):
        raise RuntimeError(
            invalid_number_of_gradients(node.name(), len(edges) // 2, len(outputs))
        )
    for i, grad in enumerate(outputs):
        if grad is None:
            continue
        child, input_nr = edges[2 * i], edges[2 * i + 1]
        if child is None:
            continue
        if raw:
            if type(grad) is not _ndarray:
                grad = np.asarray(grad)
            data = grad
        else:
            data = grad._data
        shape, dtype = child._input_metadata[input_nr]
        if data.shape != shape or data.dtype != dtype:
            grad = _conform(node, i, grad, shape, dtype, raw)
        outputs[i] = grad
    return outputs


def _conform(
    node: Node,
    index: int,
    grad: Grad,
    shape: tuple[int, ...],
    dtype: np.dtype,
    raw: bool,
) -> Grad:
    """Gradient `index` of `node` in its input's shape (undoing a broadcast) and
    dtype; any other shape is an error."""
    grad_shape = tuple(grad.shape if raw else grad._data.shape)
    if grad_shape != shape:
        if not _is_expandable_to(shape, grad_shape):
            raise RuntimeError(
                invalid_gradient_shape(node.name(), index, grad_shape, shape)
            )
        grad = formulas.sum_to(grad, shape)
    grad_dtype = grad.dtype if raw else grad._data.dtype
    if grad_dtype != dtype:
        grad = formulas.to_dtype(grad, dtype)
    return grad


def _compute_dependencies(root: Node) -> dict[Node, int]:
    """How many edges point at each node reachable from `root`."""
    dependencies: dict[Node, int] = {}
    stack = [root]
    while stack:
        for child in stack.pop()._next_edges[::2]:
            if child is None:
                continue
            count = dependencies.get(child)
            if count is None:  # first seen: walk it too
                dependencies[child] = 1
                stack.append(child)
            else:
                dependencies[child] = count + 1
    return dependencies


def _init_to_execute(
    root: Node, capture_nodes: set[Node], needed_targets: set[Node]
) -> set[Node]:
    """The nodes that must run: the targets and every node with a path to one.

    An iterative post-order walk, so children are decided before their parents.
    Nodes that only capture a gradient (autograd.grad's inputs) are not run.
    """
    targets = capture_nodes | needed_targets
    needed = set(needed_targets)
    visited = {root}
    stack: list[tuple[Node, Any]] = [(root, iter(root._next_edges[::2]))]
    while stack:
        fn, children = stack[-1]
        for child in children:
            if child is not None and child not in visited:
                visited.add(child)
                stack.append((child, iter(child._next_edges[::2])))
                break
        else:
            stack.pop()
            if fn not in needed and any(
                child is not None and (child in needed or child in targets)
                for child in fn._next_edges[::2]
            ):
                needed.add(fn)
    return needed


def execute(
    roots: list[Edge],
    grads: list[Grad],
    *,
    keep_graph: bool,
    create_graph: bool,
    accumulate_grad: bool,
    outputs: list[Edge] | None = None,
) -> list[Grad | None]:
    """Run backward from `roots` seeded with `grads` (ndarrays unless create_graph).

    With `outputs` (the gradient edges of autograd.grad's inputs, or of
    backward(inputs=...)) only the nodes leading to them run, and the gradients
    arriving at them are returned in order.
    """
    raw = not create_graph
    grads = [_cast_to_root(edge, grad, raw) for edge, grad in zip(roots, grads)]
    if len(roots) == 1:
        graph_root = roots[0].node
        assert graph_root is not None
        root_buffer: list[Grad | None] = [None] * max(graph_root.num_inputs, 1)
        root_buffer[roots[0].input_nr] = grads[0]
    else:
        graph_root = GraphRoot(tuple(roots), grads)
        root_buffer = []

    dependencies = _compute_dependencies(graph_root)
    captures: dict[Node, list[tuple[int, int]]] = {}
    needed: set[Node] | None = None
    should_execute: set[Node] | None = None
    if outputs is not None:
        needed_targets: set[Node] = set()
        for index, edge in enumerate(outputs):
            assert edge.node is not None
            if accumulate_grad and _is_accumulate_grad(edge.node):
                needed_targets.add(edge.node)
            else:
                captures.setdefault(edge.node, []).append((edge.input_nr, index))
        needed = _init_to_execute(graph_root, set(captures), needed_targets)
        should_execute = needed | set(captures)
    captured: list[Grad | None] = [None] * (len(outputs) if outputs else 0)

    previous_mode, previous_task = _grad_mode.enabled, task_state.should_execute
    _grad_mode.enabled = create_graph
    task_state.should_execute = should_execute
    try:
        task = _GraphTask(dependencies, needed, should_execute, captures, captured)
        task.run(graph_root, root_buffer, keep_graph, raw)
    finally:
        _grad_mode.enabled = previous_mode
        task_state.should_execute = previous_task
    return captured


def _cast_to_root(edge: Edge, grad: Grad, raw: bool) -> Grad:
    """A seed gradient in its root's dtype, as PyTorch validates the root grads.

    Without it a float64 or int64 seed given for a float32 output would reach a
    leaf's `.grad` (or autograd.grad's result) in the seed's dtype.
    """
    assert edge.node is not None
    dtype = edge.node._input_metadata[edge.input_nr][1]
    grad_dtype = grad.dtype if raw else grad._data.dtype
    return grad if grad_dtype == dtype else formulas.to_dtype(grad, dtype)


def _is_accumulate_grad(node: Node) -> bool:
    return isinstance(node, AccumulateGrad)


def _call_function(fn: Node, inputs: list[Grad | None], raw: bool) -> list[Grad | None]:
    """PyTorch's call_function: node pre-hooks, the node, checks, post-hooks."""
    if fn._hooks is not None:
        inputs = hooks.call_pre_hooks(fn, inputs, raw)
    outputs = validate_outputs(fn, fn.apply(inputs, raw), raw)
    if fn._hooks is not None:
        outputs = hooks.call_post_hooks(fn, outputs, inputs, raw)
    return outputs


def _call_with_anomaly_checks(
    fn: Node, inputs: list[Grad | None], raw: bool
) -> list[Grad | None]:
    try:
        outputs = _call_function(fn, inputs, raw)
    except Exception:
        anomaly_mode.warn_failed_node(fn.name(), fn._metadata)
        raise
    if anomaly_mode.state.check_nan:
        for i, g in enumerate(outputs):
            data = g if raw or g is None else g._data
            if data is not None and np.isnan(data).any():
                anomaly_mode.warn_failed_node(fn.name(), fn._metadata)
                raise RuntimeError(anomaly_mode.nan_message(fn.name(), i))
    return outputs


def _references_of_a_buffered_gradient() -> int:
    """What sys.getrefcount says of a gradient nobody else holds, asked as the
    loop asks it: 3 on CPython 3.11 (the buffer, the loop's local and
    getrefcount's own argument). Measured, not written down: an interpreter that
    borrows references on its stack (CPython 3.14) counts fewer, and a constant
    of 3 there would take an array someone else holds as the engine's own."""
    buffer = [np.empty(0)]
    old = buffer[0]
    return sys.getrefcount(old)


_ONLY_THE_BUFFERS = _references_of_a_buffered_gradient()


class _GraphTask:
    """The state of one backward pass (PyTorch's GraphTask), and its loop."""

    __slots__ = ("dependencies", "needed", "should_execute", "captures", "captured")

    def __init__(
        self,
        dependencies: dict[Node, int],
        needed: set[Node] | None,
        should_execute: set[Node] | None,
        captures: dict[Node, list[tuple[int, int]]],
        captured: list[Grad | None],
    ) -> None:
        self.dependencies = dependencies
        self.needed = needed  # None: every node runs
        self.should_execute = should_execute  # needed, plus the capture nodes
        self.captures = captures
        self.captured = captured

    def run(
        self,
        graph_root: Node,
        root_buffer: list[Grad | None],
        keep_graph: bool,
        raw: bool,
    ) -> None:
        dependencies, needed, should_execute = (
            self.dependencies,
            self.needed,
            self.should_execute,
        )
        counter = itertools.count()
        # Input buffers of the nodes that got some of their gradients and wait
        # for the rest, or wait in the ready heap. A node whose only delivery is
        # also its last (each node of a chain) never gets an entry: its inputs
        # go with it.
        buffers: dict[Node, list[Grad | None]] = {}
        owned: set[tuple[Node, int]] = set()  # buffer slots the engine allocated
        # The ready queue: a heap of (-sequence_nr, arrival, node). The ready
        # node that would be popped next waits outside it (`single`, with its
        # inputs and key), so a node that is run as soon as it is ready (each
        # node of a chain, a leaf's AccumulateGrad) costs no heap entry; it goes
        # into the heap only when a later node outranks it. Ties keep arrival
        # order: only AccumulateGrads share a number, and nothing outranks one.
        ready: list[tuple[int, int, Node]] = []
        single: Node | None = graph_root
        single_inputs = root_buffer
        single_key = -graph_root._seq
        anomaly = anomaly_mode.state
        releases = not keep_graph
        while True:
            if single is not None:
                fn, inputs, single = single, single_inputs, None
                single_inputs = None  # type: ignore[assignment]
            elif ready:
                fn = heapq.heappop(ready)[2]
                inputs = buffers.pop(fn)
            else:
                break
            # Tensor hooks run even on a node that only captures (autograd.grad).
            if type(fn) is AccumulateGrad:
                if fn.variable._hooks:  # the leaf's own hooks
                    inputs = hooks.call_tensor_pre_hooks(fn, inputs, raw)
            elif fn._hooks is not None:
                inputs = hooks.call_tensor_pre_hooks(fn, inputs, raw)
            if needed is not None:
                for input_nr, index in self.captures.get(fn, ()):
                    self.captured[index] = inputs[input_nr]
                if fn not in needed:
                    continue
            if anomaly_mode.ever_enabled and anomaly.enabled:
                outputs = _call_with_anomaly_checks(fn, inputs, raw)
            elif fn._hooks is None:
                # _call_function without hooks, inlined; validate_outputs is
                # inlined in the loop below.
                outputs = fn.apply(inputs, raw)
            else:
                outputs = _call_function(fn, inputs, raw)
            if releases and fn._saves:
                fn.release_variables()
            edges = fn._next_edges
            if 2 * len(outputs) != len(edges):
                raise RuntimeError(
                    invalid_number_of_gradients(
                        fn.name(), len(edges) // 2, len(outputs)
                    )
                )
            # Taken off the list as delivered (a buffer then holds the only
            # reference to a fresh gradient; see InputBuffer::add below).
            if type(outputs) is not list:  # a node of one's own may return a tuple
                outputs = list(outputs)
            outputs.reverse()
            pairs = iter(edges)  # node, input_nr, node, ...: two at a time
            for child, slot in zip(pairs, pairs):
                grad = outputs.pop()
                if child is None:
                    continue
                if grad is not None:  # validate_outputs, inlined
                    if raw:
                        if type(grad) is not _ndarray:
                            grad = np.asarray(grad)
                        data = grad
                    else:
                        data = grad._data
                    shape, dtype = child._input_metadata[slot]
                    if data.shape != shape or (
                        data.dtype is not dtype and data.dtype != dtype
                    ):
                        index = len(edges) // 2 - len(outputs) - 1
                        grad = _conform(fn, index, grad, shape, dtype, raw)
                if should_execute is not None and child not in should_execute:
                    continue
                remaining = dependencies[child] - 1
                dependencies[child] = remaining
                buffer = buffers.get(child) if remaining else buffers.pop(child, None)
                if buffer is None:  # its first gradient
                    if remaining == 0 and slot == 0 and len(child._input_metadata) == 1:
                        buffer = [grad]
                    else:
                        buffer = [None] * len(child._input_metadata)
                        buffer[slot] = grad
                        if remaining:
                            buffers[child] = buffer
                elif grad is not None:  # InputBuffer::add
                    old = buffer[slot]
                    if old is None:
                        buffer[slot] = grad
                    elif raw and (
                        (child, slot) in owned
                        or type(old) is _ndarray
                        and old.base is None
                        and old.flags.writeable
                        and sys.getrefcount(old) <= _ONLY_THE_BUFFERS
                    ):
                        # Ours alone: allocated here, or a fresh gradient no one
                        # else holds (PyTorch's InputBuffer::add steals it too).
                        np.add(old, grad, out=old)
                    else:
                        total = old + grad
                        buffer[slot] = total
                        if raw and type(total) is _ndarray:
                            owned.add((child, slot))
                if remaining == 0:
                    key = -child._seq
                    if single is None:
                        if not ready or key < ready[0][0]:  # a tie: the earlier one
                            single, single_inputs, single_key = child, buffer, key
                            continue
                    elif key < single_key:  # outranks the waiting one
                        buffers[single] = single_inputs
                        heapq.heappush(ready, (single_key, next(counter), single))
                        single, single_inputs, single_key = child, buffer, key
                        continue
                    buffers[child] = buffer
                    heapq.heappush(ready, (key, next(counter), child))
            # Hold no gradient past its delivery: a buffer is then the only
            # reference to a fresh one, which AccumulateGrad may take as is.
            outputs = grad = data = inputs = buffer = old = total = None  # type: ignore[assignment]
