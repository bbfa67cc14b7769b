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
  recorded. Two more cases run on Tensors without recording: inside a dual level
  (so that tangents flow into the gradients: forward-over-reverse) and for seeds
  without storage (a vmap's batch of cotangents, batched through its rules).
* `inputs` (autograd.grad, backward(inputs=...)) prune the graph to the nodes that
  lead to them (`exec_info`); nodes outside it do not run.

The pieces, under PyTorch's names: `_GraphTask.run` is the loop (thread_main). It
takes a ready node, runs the tensor hooks on its inputs and calls it
(`_call_function`: node pre-hooks, the node, `validate_outputs`, post-hooks), then
`_GraphTask._deliver` checks each gradient (validate_outputs, folded into the
delivery on the path without hooks) and adds it to the input buffer of the node
it flows to (`_add` is InputBuffer::add) and hands on the nodes that became ready: the
first to run goes straight back to the loop, the others wait in `_ReadyQueue`.
A backward whose root sends every gradient to a leaf that no hook watches (a
compiled graph's node) needs none of that: `_run_into_leaves` runs the node and
hands its gradients to the leaves.

The loop runs once per node of every backward, so it is tuned: without hooks or
anomaly mode `_call_function` is inlined; a node that runs as soon as it is ready
(each node of a chain) never enters the queue's heap; a formula's numpy scalar
(its result on 0-d arrays) that fits its 0-d input becomes a 0-d array without a
call; and each attribute of a node is read once and its methods are looked up on
its class. (Node has no `__getattr__`: one would keep CPython from specializing
every attribute read of every node; the `_saved_*` getters are generated
properties instead.)
"""

from __future__ import annotations

import heapq
import itertools
import sys
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.autograd import anomaly_mode, forward_ad, hooks
from yamlgrad.runtime.autograd.input_metadata import sum_to, to_dtype
from yamlgrad.runtime.autograd.accumulate_grad import (
    AccumulateGrad,
    accumulate_leaves,
    accumulated_now,
)
from yamlgrad.runtime.errors import (
    ERR_GRAD_COMPLEXITY,
    invalid_gradient_shape,
    invalid_number_of_gradients,
)
from yamlgrad.runtime.autograd.grad_mode import _set as set_grad_mode
from yamlgrad.runtime.autograd.node import (
    Edge,
    Grad,
    Node,
    flat_edges,
    pruned_tasks,
    pruned_tasks_lock,
    task_state,
)
from yamlgrad.runtime.autograd.tensor import Tensor

# numpy's module has a `__getattr__`, which keeps CPython from specializing a
# read of `np.ndarray`; a global of our own is read at full speed, on every
# gradient the engine handles.
_ndarray = np.ndarray
_asarray = np.asarray
# The dtype of each floating numpy scalar type (np.float64: float64). A formula on
# 0-d arrays gives such a scalar; when it is of its 0-d input's dtype, `np.asarray`
# makes it the gradient `_conform` would, without the call. (Keyed by the type: a
# lookup never compares another library's dtype with numpy's.)
_SCALAR_DTYPES = {np.dtype(c).type: np.dtype(c) for c in np.typecodes["AllFloat"]}


class GraphRoot(Node):
    """The root of a backward with several outputs: hands out their gradients."""

    __slots__ = ("_grads",)

    def __init__(self, edges: tuple[Edge, ...], grads: list[Grad]) -> None:
        super().__init__()
        self.set_next_edges(flat_edges(edges))
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
    edges: tuple[Any, ...],
    outputs: list[Grad | None] | tuple[Grad | None, ...],
    raw: bool,
    node: Node,
) -> list[Grad | None]:
    """PyTorch's validate_outputs: check and adapt the gradients `node` returned
    to the input metadata of the nodes its `edges` lead to.

    `edges` is the node's `_next_edges` (flat: node, input_nr, ...), passed as
    PyTorch passes the edge list: the engine has read it already. `node` is
    named in the errors.

    A gradient in the broadcast shape is summed back to the input's shape and one
    of another dtype is cast; any other shape, or a wrong number of gradients, is
    an error. It runs for every node of every backward: a gradient that already
    fits (nearly all do) costs two comparisons.
    """
    if 2 * len(outputs) != len(edges):
        raise RuntimeError(
            invalid_number_of_gradients(node.name(), len(edges) // 2, len(outputs))
        )
    if type(outputs) is not list:  # a node of one's own may return a tuple
        outputs = list(outputs)
    i = 0  # the gradient's edge in `edges`
    for grad in outputs:
        if grad is not None and edges[i] is not None:
            data = grad if raw else grad._data
            shape, dtype = edges[i]._input_metadata[edges[i + 1]]
            # `is not` first: a dtype is nearly always the very object expected.
            if (
                raw
                and type(data) is not _ndarray
                or data.shape != shape
                or (data.dtype is not dtype and data.dtype != dtype)
            ):
                outputs[i // 2] = _conform(node, i // 2, grad, shape, dtype, raw)
        i += 2
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
    dtype; any other shape is an error. A raw gradient that is no ndarray (a
    number, a numpy scalar) becomes one."""
    if raw and type(grad) is not _ndarray:
        grad = backend.adopt(grad)
    grad_shape = tuple(grad.shape if raw else grad._data.shape)
    if grad_shape != shape:
        if not _is_expandable_to(shape, grad_shape):
            raise RuntimeError(
                invalid_gradient_shape(node.name(), index, grad_shape, shape)
            )
        grad = sum_to(grad, shape)
    grad_dtype = grad.dtype if raw else grad._data.dtype
    if grad_dtype != dtype:
        _check_complexity(grad_dtype, dtype)
        grad = to_dtype(grad, dtype)
    return grad


def _check_complexity(grad_dtype: Any, dtype: Any) -> Any:
    """PyTorch's check before a gradient is cast to its input's dtype: a float
    gradient casts to any input, any other only to an input as complex as it is
    (a complex gradient for a real input is a formula's error: its real part is
    taken with handle_r_to_c)."""
    kind = backend.dtype_kind(grad_dtype)
    if kind != "f" and (kind == "c") != (backend.dtype_kind(dtype) == "c"):
        raise RuntimeError(ERR_GRAD_COMPLEXITY)


def _compute_dependencies(root: Node) -> dict[Node, int]:
    """How many edges point at each node reachable from `root`."""
    dependencies: dict[Node, int] = {}
    stack = [root]
    while stack:
        for child in stack.pop()._next_edges[::2]:
            if child is None:
                continue
            count = dependencies.get(child)
            if count is None:  # first seen: walk it too (a leaf's has no edges)
                dependencies[child] = 1
                if child._next_edges:
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


_graph_task_ids = itertools.count()


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
    previous_id = task_state.graph_task_id
    task_state.graph_task_id = next(_graph_task_ids)
    try:
        return _execute(
            roots,
            grads,
            keep_graph=keep_graph,
            create_graph=create_graph,
            accumulate_grad=accumulate_grad,
            outputs=outputs,
        )
    finally:
        task_state.graph_task_id = previous_id


def _execute(
    roots: list[Edge],
    grads: list[Grad],
    *,
    keep_graph: bool,
    create_graph: bool,
    accumulate_grad: bool,
    outputs: list[Edge] | None = None,
) -> list[Grad | None]:
    # Inside a dual level the formulas run on Tensors, so that tangents of the
    # saved values flow into the gradients (forward-over-reverse).
    # So do they for a batch of seeds under vmap (Tensors without storage).
    raw = (
        not create_graph
        and forward_ad.STATE.level < 0
        and all(type(g) is _ndarray or backend.is_foreign(g) for g in grads)
    )
    if not raw and not create_graph:  # seeds made as ndarrays
        grads = [
            Tensor._make(g) if type(g) is np.ndarray or backend.is_foreign(g) else g
            for g in grads
        ]
    grads = [_cast_to_root(edge, grad, raw) for edge, grad in zip(roots, grads)]
    single = raw and outputs is None and len(roots) == 1
    leaves = _only_leaves(roots[0].node) if single else None
    if leaves is not None:
        _run_into_leaves(roots[0], grads[0], keep_graph, leaves)
        return []
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

    previous_mode = set_grad_mode(create_graph)
    previous_task = task_state.should_execute
    task_state.should_execute = should_execute
    if should_execute is not None:
        with pruned_tasks_lock:
            pruned_tasks[0] += 1
    try:
        task = _GraphTask(dependencies, needed, should_execute, captures, captured)
        task.run(graph_root, root_buffer, keep_graph, raw)
    finally:
        set_grad_mode(previous_mode)
        task_state.should_execute = previous_task
        if should_execute is not None:
            with pruned_tasks_lock:
                pruned_tasks[0] -= 1
    return captured


def _only_leaves(node: Node | None) -> list[Tensor | None] | None:
    """The leaf each gradient of `node` goes to (None: nowhere), in the order
    of its edges, when a backward from it is the node and then those leaves
    alone: no hook watches it, its gradients are exact as they come (a
    compiled graph's), and every edge leads to a leaf that no hook watches,
    through an AccumulateGrad that none watches either, or one not made yet
    (see leaf_edges). Else None. Such a backward needs none of the loop's
    machinery (dependency counts, input buffers, the ready queue):
    `_run_into_leaves` runs it."""
    if (
        node is None
        or node._hooks is not None
        or not type(node)._exact_outputs
        or anomaly_mode.ever_enabled
        and anomaly_mode.state.enabled
    ):
        return None
    leaves: list[Tensor | None] = []
    for child in node.held_edges()[::2]:
        if child is None:
            leaves.append(None)
            continue
        if type(child) is AccumulateGrad:
            accumulator: Node | None = child
            leaf = child.variable
        elif isinstance(child, Tensor):  # its node not made yet, unless since
            leaf = child
            ref = leaf._grad_accumulator
            accumulator = ref() if ref is not None else None
        else:
            return None
        if accumulator is not None and accumulator._hooks is not None:
            return None
        if leaf._hooks or leaf._post_accumulate_hooks:
            return None
        leaves.append(leaf)
    return leaves


def _run_into_leaves(
    root: Edge, grad: Grad, keep_graph: bool, leaves: list[Tensor | None]
) -> None:
    """The backward of a node whose gradients all go to leaves (`leaves`, from
    `_only_leaves`), on ndarrays: the node runs once with its seed, then its
    gradients go to the leaves in one batch, in the order of its edges (a leaf
    reached twice takes the first gradient and adds the second: the sum the
    loop would have buffered). Grad mode is off meanwhile, as in the loop."""
    node = root.node
    assert node is not None
    cls = type(node)
    inputs: list[Grad | None] = [None] * max(node.num_inputs, 1)
    inputs[root.input_nr] = grad
    grad = None
    previous_mode = set_grad_mode(False)
    previous_task = task_state.should_execute
    task_state.should_execute = None
    try:
        grads = cls.apply(node, inputs, True)
        inputs = None  # type: ignore[assignment]
        if not keep_graph and cls._saves:
            cls.release_variables(node)
        if type(grads) is not list or len(grads) != len(leaves):
            grads = validate_outputs(node._next_edges, grads, True, node)  # raises
        batch: list[Any] = []
        grads.reverse()  # popped: the batch then holds the only references
        for leaf in leaves:
            grad = grads.pop()
            if leaf is not None and grad is not None:
                batch += (leaf, grad)
        grad = grads = None  # type: ignore[assignment]
        accumulate_leaves(batch, True)
    finally:
        set_grad_mode(previous_mode)
        task_state.should_execute = previous_task


def _cast_to_root(edge: Edge, grad: Grad, raw: bool) -> Grad:
    """A seed gradient in its root's dtype, as PyTorch validates the root grads.

    Without it a float64 or int64 seed given for a float32 output would reach a
    leaf's `.grad` (or autograd.grad's result) in the seed's dtype.
    """
    assert edge.node is not None
    dtype = edge.node._input_metadata[edge.input_nr][1]
    grad_dtype = grad.dtype if raw else grad._data.dtype
    if grad_dtype == dtype:
        return grad
    _check_complexity(grad_dtype, dtype)
    return to_dtype(grad, dtype)


def _is_accumulate_grad(node: Node) -> bool:
    return isinstance(node, AccumulateGrad)


def _call_function(fn: Node, inputs: list[Grad | None], raw: bool) -> list[Grad | None]:
    """PyTorch's call_function: node pre-hooks, the node, validate_outputs,
    post-hooks."""
    edges = fn._next_edges
    if fn._hooks is None:
        return validate_outputs(edges, fn.apply(inputs, raw), raw, fn)
    inputs = hooks.call_pre_hooks(fn, inputs, raw)
    outputs = validate_outputs(edges, fn.apply(inputs, raw), raw, fn)
    outputs = hooks.call_post_hooks(fn, outputs, inputs, raw)
    # A post-hook may replace the gradients: what it returns must fit as well.
    return validate_outputs(edges, outputs, raw, fn)


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
            if data is None:
                continue
            if backend.is_lazy(data):  # checked as its chunks are computed
                data = anomaly_mode.nan_check_deferred(data, fn, i)
                if raw:
                    outputs[i] = data
                else:
                    g._data = data
            elif np.isnan(data).any():
                anomaly_mode.warn_failed_node(fn.name(), fn._metadata)
                raise RuntimeError(anomaly_mode.nan_message(fn.name(), i))
    return outputs


def _references_of_a_buffered_gradient() -> int:
    """What sys.getrefcount says of a gradient nobody else holds, asked as
    `_GraphTask._add` asks it: 3 on CPython 3.11 (the buffer, the local and
    getrefcount's own argument). Measured, not written down: an interpreter that
    borrows references on its stack (CPython 3.14) counts fewer, and a constant
    of 3 there would take an array someone else holds as the engine's own."""
    buffer = [np.empty(0)]
    old = buffer[0]
    return sys.getrefcount(old)


_ONLY_THE_BUFFERS = _references_of_a_buffered_gradient()


class _ReadyQueue:
    """PyTorch's ReadyQueue: the ready nodes that wait their turn, each with its
    input buffer, popped highest `sequence_nr` first.

    A heap of (-sequence_nr, arrival, node); the buffers wait in `buffers`. Ties
    keep arrival order: only AccumulateGrads share a number. A node that runs as
    soon as it is ready never enters it (see `_GraphTask._deliver`).
    """

    __slots__ = ("heap", "counter", "buffers")

    def __init__(self, buffers: dict[Node, list[Grad | None]]) -> None:
        self.heap: list[tuple[int, int, Node]] = []
        self.counter = itertools.count()
        self.buffers = buffers  # shared with the task's partly filled buffers

    def push(self, node: Node, inputs: list[Grad | None]) -> None:
        """Queue `node` with its complete input buffer."""
        self.buffers[node] = inputs
        heapq.heappush(self.heap, (-node._seq, next(self.counter), node))

    def pop(self) -> tuple[Node, list[Grad | None]] | None:
        """The next node to run and its inputs; None once nothing is ready."""
        if not self.heap:
            return None
        node = heapq.heappop(self.heap)[2]
        return node, self.buffers.pop(node)


class _GraphTask:
    """The state of one backward pass (PyTorch's GraphTask), and its loop.

    `_deliver` takes each gradient off the node's list of outputs as it hands it
    on, so that a buffer then holds the only reference to a fresh gradient (see
    `_add`); a later node that outranks the one it would run next sends that
    one to the queue.
    """

    __slots__ = (
        "dependencies",
        "needed",
        "direct",
        "should_execute",
        "captures",
        "captured",
        "buffers",
        "owned",
        "ready",
    )

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
        # Whether a leaf's AccumulateGrad that no hook watches runs as its
        # last gradient is delivered, rather than through the queue: it would
        # run next anyway (it outranks every other node), and nothing can tell
        # the order of two such leaves apart. A node with many leaves (a
        # compiled graph's) then costs no queue entry per leaf. Decided once
        # per task, not on every delivery.
        self.direct = needed is None and not (
            anomaly_mode.ever_enabled and anomaly_mode.state.enabled
        )
        self.should_execute = should_execute  # needed, plus the capture nodes
        self.captures = captures
        self.captured = captured
        # Input buffers of the nodes that got some of their gradients and wait
        # for the rest, or wait in the ready queue. A node whose only delivery is
        # also its last (each node of a chain) never gets an entry: its inputs
        # go with it.
        self.buffers: dict[Node, list[Grad | None]] = {}
        self.owned: set[tuple[Node, int]] = set()  # buffer slots allocated here
        self.ready = _ReadyQueue(self.buffers)

    def run(
        self,
        graph_root: Node,
        root_buffer: list[Grad | None],
        keep_graph: bool,
        raw: bool,
    ) -> None:
        """PyTorch's thread_main: run ready nodes until none is left."""
        pop = self.ready.pop
        needed = self.needed
        anomaly = anomaly_mode.state
        releases = not keep_graph
        step: tuple[Node, list[Grad | None]] | None = (graph_root, root_buffer)
        # `while True`: only an unconditional jump back warms CPython 3.11's
        # specializing interpreter up, for a graph walked by one long call.
        while True:
            if step is None:
                break
            fn, inputs = step
            # Read once (a Node's attributes are slow to read), and again after
            # any hook, which may have registered one on `fn`.
            node_hooks = fn._hooks
            # The node's methods are looked up on its class, which is quicker
            # than through the node (see the module's docstring).
            cls = type(fn)
            # Tensor hooks run even on a node that only captures (autograd.grad).
            if cls is AccumulateGrad:
                if fn.variable._hooks:  # the leaf's own hooks
                    inputs = hooks.call_tensor_pre_hooks(fn, inputs, raw)
                    node_hooks = fn._hooks
            elif node_hooks is not None:
                inputs = hooks.call_tensor_pre_hooks(fn, inputs, raw)
                node_hooks = fn._hooks
            if needed is not None:
                for input_nr, index in self.captures.get(fn, ()):
                    self.captured[index] = inputs[input_nr]
                if fn not in needed:
                    step = pop()
                    continue
            edges = fn._next_edges
            exact = cls._exact_outputs  # (read once: a class attribute's lookup costs)
            if anomaly_mode.ever_enabled and anomaly.enabled:
                outputs = _call_with_anomaly_checks(fn, inputs, raw)
                valid = True  # (validated there)
            elif node_hooks is None:  # _call_function without hooks, inlined
                outputs = cls.apply(fn, inputs, raw)
                # validate_outputs is left to _deliver, which checks each
                # gradient as it hands it on (an exact node's are right as
                # they come; a leaf's AccumulateGrad returns none).
                valid = raw and exact
            else:
                outputs = _call_function(fn, inputs, raw)
                valid = True
            if releases and cls._saves:
                cls.release_variables(fn)
            if edges:  # not a leaf's AccumulateGrad
                # The node's inputs let go first: a leaf's AccumulateGrad run
                # while delivering may then take a gradient no one else holds.
                step = inputs = None  # type: ignore[assignment]
                step = self._deliver(fn, edges, outputs, raw, exact, valid) or pop()
            else:
                if outputs and not valid:  # a leaf's node has none to return
                    validate_outputs(edges, outputs, raw, fn)
                step = pop()
            # Hold no gradient past its delivery: a buffer is then the only
            # reference to a fresh one, which AccumulateGrad may take as is.
            outputs = inputs = None  # type: ignore[assignment]

    def _deliver(
        self, fn: Node, edges: tuple, grads: list, raw: bool, inline: bool, valid: bool
    ) -> tuple[Node, list[Grad | None]] | None:
        """Add each gradient `grads` of node `fn` to the input buffer of the node
        its edge leads to (PyTorch's InputBuffer), checked as validate_outputs
        does unless `valid`, and queue each node whose last gradient came
        (`inline`: a node with many leaves, see accumulated_now). Returns the one
        to run next when it outranks every queued node: no queue entry."""
        if not valid and (type(grads) is not list or 2 * len(grads) != len(edges)):
            grads = validate_outputs(edges, grads, raw, fn)  # a tuple, or raises
        should_execute = self.should_execute
        dependencies = self.dependencies
        buffers = self.buffers
        ready, direct = self.ready, self.direct
        first: Node | None = None  # the ready node to run next, and its inputs
        first_inputs: list[Grad | None] | None = None
        leaves: list[Any] | None = [] if inline else None
        grads.reverse()  # popped as delivered: see the class docstring
        pairs = iter(edges)  # node, input_nr, node, ...: two at a time
        for child, slot in zip(pairs, pairs):
            grad = grads.pop()
            if child is None:
                continue
            if not valid and grad is not None:  # validate_outputs, folded in
                data = grad if raw else grad._data
                shape, dtype = child._input_metadata[slot]
                if (
                    raw
                    and type(data) is not _ndarray
                    or data.shape != shape
                    or (data.dtype is not dtype and data.dtype != dtype)
                ):
                    if raw and _SCALAR_DTYPES.get(type(data)) is dtype and not shape:
                        grad = _asarray(grad)  # a formula's result on 0-d arrays
                    else:
                        index = len(edges) // 2 - len(grads) - 1
                        grad = _conform(fn, index, grad, shape, dtype, raw)
                data = None  # (a reference AccumulateGrad would count)
            if should_execute is not None and child not in should_execute:
                continue
            remaining = dependencies[child] - 1
            dependencies[child] = remaining
            if not buffers:  # nothing waits (along a chain): nothing to look up
                buffer = None
            elif remaining:
                buffer = buffers.get(child)
            else:
                buffer = buffers.pop(child, None)
            if buffer is None:  # its first gradient
                if remaining == 0 and slot == 0 and len(child._input_metadata) == 1:
                    buffer = [grad]
                else:
                    buffer = [None] * len(child._input_metadata)
                    buffer[slot] = grad
                    if remaining:
                        buffers[child] = buffer
            elif grad is not None:
                self._add(buffer, child, slot, grad, raw)
            if remaining:
                continue
            if direct and type(child) is AccumulateGrad and child._hooks is None:
                grad = None  # the buffer's is then the only reference
                if accumulated_now(child, buffer, raw, leaves):  # type: ignore
                    continue
            # Ready. The highest sequence_nr runs first; a tie, the earlier one.
            if first is None:
                heap = ready.heap
                if not heap or -child._seq < heap[0][0]:
                    first, first_inputs = child, buffer
                else:
                    ready.push(child, buffer)
            elif child._seq > first._seq:  # outranks the one to run next
                ready.push(first, first_inputs)  # type: ignore[arg-type]
                first, first_inputs = child, buffer
            else:
                ready.push(child, buffer)
        if leaves:
            grad = buffer = None  # the batch's are then the only references
            accumulate_leaves(leaves, raw)
        return None if first is None else (first, first_inputs)  # type: ignore

    def _add(
        self, buffer: list[Grad | None], child: Node, slot: int, grad: Grad, raw: bool
    ) -> None:
        """PyTorch's InputBuffer::add: sum a further gradient into a slot."""
        old = buffer[slot]
        if old is None:
            buffer[slot] = grad
        elif raw and (
            (child, slot) in self.owned
            or type(old) is _ndarray
            and old.base is None
            and old.flags.writeable
            and sys.getrefcount(old) <= _ONLY_THE_BUFFERS
        ):
            # Ours alone: allocated here, or a fresh gradient no one else holds
            # (PyTorch's InputBuffer::add steals it too).
            np.add(old, grad, out=old)
        else:
            total = old + grad
            buffer[slot] = total
            if raw and type(total) is _ndarray:
                self.owned.add((child, slot))
