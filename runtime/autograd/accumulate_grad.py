"""AccumulateGrad: the sink node that writes a leaf's `.grad` (accumulate_grad.h).

Rules, PyTorch's:

* The first gradient is stored as the leaf's `.grad` (a copy unless the engine
  hands over a buffer nobody else holds; here always a copy, since one gradient
  may flow to several leaves or be the user's own tensor). With
  `create_graph=True` the copy is recorded (`CopyBackwards`, as PyTorch).
* Later ones are added in place when grad mode is off (an ordinary backward), so
  `.grad` keeps its identity, and out of place with `create_graph=True`, so the
  result records a graph.
* It is created lazily per leaf and cached weakly on the tensor, so every op that
  reads a leaf shares one node.
* Threads that backpropagate into one leaf at once both add their gradient: the
  read-modify-write of `.grad` holds a lock, as PyTorch's AccumulateGrad holds
  its mutex. One lock for all leaves, since two nodes may exist for one leaf
  while a thread is making its first; it is held only for the update, not for
  the post-accumulate hooks.
"""

from __future__ import annotations

import sys
import threading
import weakref
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.autograd import anomaly_mode
from yamlgrad.runtime.errors import ERR_POST_ACCUMULATE_HOOK_RESULT
from yamlgrad.runtime.autograd.node import (
    INVALID_EDGE,
    UINT64_MAX,
    Edge,
    Grad,
    Node,
    output_metadata,
    record_anomaly,
)
from yamlgrad.runtime.autograd.tensor import Tensor

# Reentrant: a gradient recorded with create_graph=True runs ops while it holds it.
_GRAD_LOCK = threading.RLock()
# numpy's module has a `__getattr__`: a global of our own is read faster.
_ndarray = np.ndarray
_weakref = weakref.ref


class AccumulateGrad(Node):
    """Writes the gradient that reaches a leaf into `variable.grad`."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        # Node.__init__ without its sequence number: PyTorch builds AccumulateGrad
        # with UINT64_MAX and takes no number from the thread's counter, so the
        # nodes around a leaf's first use are numbered consecutively.
        self._next_edges = ()
        self._seq = UINT64_MAX
        self._metadata = None
        self._hooks = None
        self.variable = variable
        # shared with every node of that (shape, dtype): a compiled graph makes
        # hundreds of AccumulateGrads at once, and tuples of their own would be
        # most of the objects the cyclic garbage collector then scans
        self._input_metadata = output_metadata(variable._data)
        variable._grad_accumulator = _weakref(self)  # the leaf's one node
        if anomaly_mode.ever_enabled and anomaly_mode.state.enabled:
            record_anomaly(self, skip=1)

    def apply(self, grads: list[Grad], raw: bool = False) -> list[Grad | None]:
        new_grad = grads[0]
        if new_grad is None:
            return []
        variable = self.variable
        with _GRAD_LOCK:
            self._accumulate(variable, new_grad, raw)
        if variable._post_accumulate_hooks:
            for hook in list(variable._post_accumulate_hooks.values()):
                if hook(variable) is not None:
                    raise RuntimeError(ERR_POST_ACCUMULATE_HOOK_RESULT)
        return []

    @staticmethod
    def _accumulate(variable: Tensor, new_grad: Grad, raw: bool) -> None:
        old = variable._grad
        if raw:
            if old is None:
                variable._grad = Tensor._make(_owned_or_copy(new_grad, variable._data))
            elif type(old._data) is np.ndarray and old._data.flags.writeable:
                old._data += new_grad
            else:
                old._data = old._data + new_grad
        elif old is None:
            # A copy, as PyTorch's clone_obey_contract: the incoming Tensor may be
            # the user's gradient or flow to other leaves too, and a later
            # backward adds into `.grad` in place. The copy is a recorded copy_
            # into a fresh tensor (CopyBackwards, as PyTorch shows), so the
            # gradient's graph survives for a further derivative.
            if backend.is_foreign(new_grad._data):  # immutable: a recorded clone
                variable._grad = new_grad.clone()
                return
            copy = Tensor._make(_like(new_grad._data, variable._data))
            variable._grad = copy.copy_(new_grad)
        else:
            variable._grad = old + new_grad


def _references_of_an_engines_gradient() -> int:
    """What sys.getrefcount says of a gradient nobody but the engine holds, asked
    through the calls AccumulateGrad makes: 5 on CPython 3.11 (the engine's input
    buffer, apply()'s and _accumulate()'s locals, _owned_or_copy's parameter and
    getrefcount's own argument). Measured, not written down: an interpreter that
    borrows references on its stack (CPython 3.14) counts fewer, and a constant
    there would take a gradient someone else holds as the leaf's own."""

    def owned_or_copy(new_grad: np.ndarray, like: np.ndarray) -> int:
        return sys.getrefcount(new_grad)

    def accumulate(variable: None, new_grad: np.ndarray, raw: bool) -> int:
        return owned_or_copy(new_grad, _LAYOUT_PROBE)

    def apply(grads: list[np.ndarray]) -> int:
        new_grad = grads[0]
        return accumulate(None, new_grad, True)

    return apply([np.empty(0)])


_LAYOUT_PROBE = np.empty(0)  # the leaf's data in the probe: another array
_ONLY_THE_ENGINES = _references_of_an_engines_gradient()


def _owned_or_copy(new_grad: Grad, like: Any) -> np.ndarray:
    """The first gradient of a leaf: the array itself when nothing else can see it
    (PyTorch's AccumulateGrad steals a gradient whose use_count is 1), else a
    copy. Taken only if it owns its memory (not a view of something else's, nor a
    broadcast), is writeable, is laid out as the leaf (`like`) is, and no
    reference to it exists but the engine's buffer: a formula's fresh result, such
    as mm's, is not copied again; a gradient that also flows elsewhere (add's
    `grad`), a user's seed or a saved value is. The copy has the leaf's layout
    (PyTorch's gradient layout contract): the weight gradient of `x @ W.T`,
    Fortran-ordered as mm makes it, is stored row-major as W is, so an update
    `W -= lr * W.grad` walks both arrays in one order."""
    if (
        type(new_grad) is np.ndarray
        and new_grad.base is None
        and new_grad.flags.writeable
        and new_grad.strides == getattr(like, "strides", None)
        and sys.getrefcount(new_grad) <= _ONLY_THE_ENGINES
    ):
        return new_grad
    if backend.is_foreign(new_grad):  # immutable (Dask's) or never shared here
        return new_grad
    return _copy_like(new_grad, like)


def _copy_like(new_grad: np.ndarray, like: Any) -> np.ndarray:
    copy = _like(new_grad, like)
    np.copyto(copy, new_grad)
    return copy


def _like(new_grad: np.ndarray, like: Any) -> np.ndarray:
    """An empty array for a leaf's gradient: the leaf's layout (its strides'
    order, made dense), or row-major when the leaf is not a numpy array of the
    gradient's shape."""
    if type(like) is np.ndarray and like.shape == new_grad.shape:
        return np.empty_like(like, dtype=new_grad.dtype)
    return np.empty(new_grad.shape, dtype=new_grad.dtype)


def accumulated_now(
    node: AccumulateGrad,
    buffer: list[Grad],
    raw: bool,
    batch: list[Any] | None,
) -> bool:
    """Run a leaf's AccumulateGrad as the engine delivers its gradient, when no
    hook watches the leaf (False: it has hooks, and goes through the queue).
    With `batch` (the gradient comes from a node with many leaves, a compiled
    graph's), the leaf and its gradient are added to it instead (flat: leaf,
    gradient, leaf, ...; no pair nor buffer kept per leaf for the cyclic
    collector to scan), for accumulate_leaves once that node's gradients are all
    delivered."""
    leaf = node.variable
    if leaf._hooks or leaf._post_accumulate_hooks:
        return False
    if batch is not None:
        batch += (leaf, buffer[0])
    else:
        node.apply(buffer, raw)
    return True


def accumulate_leaves(batch: list[Any], raw: bool) -> None:
    """Do what the AccumulateGrads of many leaves that no hook watches do, each
    with its gradient (the flat batch leaf, gradient, ... of accumulated_now, or
    of a backward straight into leaves, whose nodes may not even be made: see
    leaf_edges): under one hold of the lock, and a first ndarray gradient stored here by `_owned_or_copy`'s rule
    (taken when fresh and held by nothing but the batch, else copied) without
    apply's calls, which are otherwise most of such a backward's work.

    A view is taken too when it is one of disjoint pieces of an array that
    nothing but those pieces holds, all of them delivered here (a compiled
    graph's packed gradient, split into its leaves' gradients: `_sole_bases`)."""
    pairs = iter(batch)
    if not raw:
        with _GRAD_LOCK:
            for leaf, grad in zip(pairs, pairs):
                if grad is not None:
                    AccumulateGrad._accumulate(leaf, grad, raw)
        return
    bases = None  # _sole_bases(batch), found at the first view (if any)
    make = Tensor._make
    getrefcount = sys.getrefcount
    with _GRAD_LOCK:
        for leaf, grad in zip(pairs, pairs):
            if grad is None:
                continue
            if type(grad) is _ndarray and leaf._grad is None:
                # The reference count first: a gradient that flows to several
                # leaves (most of a scalar graph's) is copied without its flags.
                # A gradient is kept only in the leaf's layout (_owned_or_copy).
                like = leaf._data
                if getrefcount(grad) > _ONLY_THE_BUFFERS:
                    grad = _copy_like(grad, like)
                elif grad.base is not None:
                    if bases is None:
                        bases = _sole_bases(batch) if len(batch) > 2 else _NONE
                    if id(grad.base) not in bases or (
                        grad.size > 1 and grad.strides != like.strides
                    ):
                        grad = _copy_like(grad, like)
                elif not grad.flags.writeable or grad.strides != like.strides:
                    grad = _copy_like(grad, like)
                leaf._grad = make(grad)
            else:
                AccumulateGrad._accumulate(leaf, grad, raw)


_NONE: frozenset[int] = frozenset()


def _sole_bases(batch: list[Any]) -> set[int]:
    """The ids of the arrays whose only references are the views of them that
    `batch` delivers, which together are no bigger than the array (so they do not
    overlap), of an array that owns its writeable, C-ordered memory."""
    found: dict[int, list[Any]] = {}
    entry: list[Any] = [None, 0, 0]  # the last base's: consecutive views share one
    for grad in batch[1::2]:
        if type(grad) is _ndarray:
            base = grad.base
            if base is entry[0]:
                if base is not None:
                    entry[1] += 1
                    entry[2] += grad.size
            else:
                entry = found.get(id(base))  # type: ignore[assignment]
                if entry is None:
                    entry = found[id(base)] = [base, 1, grad.size]
                else:
                    entry[1] += 1
                    entry[2] += grad.size
    found.pop(id(None), None)
    grad = base = entry = None  # type: ignore[assignment]
    sole = set()
    for key, entry in found.items():
        base, count, size = entry
        # (The count before the flags: a flags object holds its array.)
        if sys.getrefcount(base) != count + _THE_ENTRYS:
            continue
        flags = base.flags
        if (
            type(base) is np.ndarray
            and size <= base.size
            and flags.owndata
            and flags.writeable
            and flags.c_contiguous
        ):
            sole.add(key)
    return sole


def _references_of_an_entrys_base() -> int:
    """What sys.getrefcount says in _sole_bases of an array that nothing but its
    entry holds (the entry, the local, getrefcount's argument)."""
    found = {0: [np.empty(0), 0, 0]}
    for entry in found.values():
        base, count, size = entry
        return sys.getrefcount(base)
    return 0


_THE_ENTRYS = _references_of_an_entrys_base()


def _references_of_a_delivered_gradient() -> int:
    """What sys.getrefcount says in accumulate_leaves of a gradient nobody but
    the batch holds (the batch, zip's pair, the local, getrefcount's argument)."""

    def probe(batch: list[Any]) -> int:
        pairs = iter(batch)
        for _, grad in zip(pairs, pairs):
            return sys.getrefcount(grad)
        return 0

    return probe([None, np.empty(0)])


_ONLY_THE_BUFFERS = _references_of_a_delivered_gradient()


def grad_accumulator(tensor: Tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, made on first use and cached weakly."""
    ref = tensor._grad_accumulator
    node = ref() if ref is not None else None
    if node is None:
        with _GRAD_LOCK:  # two threads reaching a new leaf at once share one node
            node = _accumulator_held(tensor)
    return node


def _accumulator_held(tensor: Tensor) -> AccumulateGrad:
    """grad_accumulator's node, made if need be, while _GRAD_LOCK is held."""
    ref = tensor._grad_accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(tensor)
    return node


def leaf_edges(tensors: list[Tensor]) -> tuple[Any, ...]:
    """Each tensor's gradient edge in a node's flat form (node, input_nr, ...),
    except that a leaf whose AccumulateGrad is not made yet stands for it
    itself: `(leaf, 0)`. A node with hundreds of fresh leaves (a compiled
    graph's) then makes their AccumulateGrads only if its edges are read
    (`resolved_edges`); a backward that goes straight into the leaves (the
    engine's `_only_leaves`) needs none, and the cyclic collector has two
    objects fewer per leaf to scan."""
    edges: list[Any] = []
    for t in tensors:
        grad_fn = t.grad_fn
        if grad_fn is not None:
            edges += (grad_fn, t.output_nr)
        elif not t._requires_grad:
            edges += INVALID_EDGE
        else:
            ref = t._grad_accumulator
            node = ref() if ref is not None else None
            edges += (t if node is None else node, 0)
    return tuple(edges)


def resolved_edges(edges: tuple[Any, ...]) -> tuple[Any, ...]:
    """`leaf_edges`' edges with each leaf that stands for its AccumulateGrad
    replaced by that node: the one made since (by another op that read the
    leaf), or a new one. The lock is taken once for all of them."""
    with _GRAD_LOCK:
        return tuple(
            _accumulator_held(e) if isinstance(e, Tensor) else e for e in edges
        )


def gradient_edge(t: Tensor) -> Edge:
    """Where a gradient for `t` goes: its grad_fn, its AccumulateGrad, or nowhere."""
    if t.grad_fn is not None:
        return Edge(t.grad_fn, t.output_nr)
    if t._requires_grad:
        return Edge(grad_accumulator(t), 0)
    return INVALID_EDGE
