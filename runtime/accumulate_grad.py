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

import threading
import weakref

import numpy as np

from yamlgrad.runtime.node import UINT64_MAX, Grad, Node
from yamlgrad.runtime.tensor import Tensor

# Reentrant: a gradient recorded with create_graph=True runs ops while it holds it.
_GRAD_LOCK = threading.RLock()


class AccumulateGrad(Node):
    """Writes the gradient that reaches a leaf into `variable.grad`."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        super().__init__()
        self._seq = UINT64_MAX
        self.variable = variable
        self._input_metadata = ((variable._data.shape, variable._data.dtype),)

    def apply(self, grads: list[Grad], raw: bool = False) -> list[Grad | None]:
        new_grad = grads[0]
        if new_grad is None:
            return []
        variable = self.variable
        with _GRAD_LOCK:
            self._accumulate(variable, new_grad, raw)
        if variable._post_accumulate_hooks:
            for hook in list(variable._post_accumulate_hooks.values()):
                hook(variable)
        return []

    @staticmethod
    def _accumulate(variable: Tensor, new_grad: Grad, raw: bool) -> None:
        old = variable._grad
        if raw:
            if old is None:
                variable._grad = Tensor._make(np.array(new_grad, copy=True))
            elif old._data.flags.writeable:
                old._data += new_grad
            else:
                old._data = old._data + new_grad
        elif old is None:
            # A copy, as PyTorch's clone_obey_contract: the incoming Tensor may be
            # the user's gradient or flow to other leaves too, and a later
            # backward adds into `.grad` in place. The copy is a recorded copy_
            # into a fresh tensor (CopyBackwards, as PyTorch shows), so the
            # gradient's graph survives for a further derivative.
            from yamlgrad.runtime.inplace_ops import copy_

            copy = Tensor._make(np.empty_like(new_grad._data))
            variable._grad = copy_(copy, new_grad)
        else:
            variable._grad = old + new_grad


def grad_accumulator(tensor: Tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, made on first use and cached weakly."""
    ref = tensor._grad_accumulator
    node = ref() if ref is not None else None
    if node is None:
        with _GRAD_LOCK:  # two threads reaching a new leaf at once share one node
            ref = tensor._grad_accumulator
            node = ref() if ref is not None else None
            if node is None:
                node = AccumulateGrad(tensor)
                tensor._grad_accumulator = weakref.ref(node)
    return node
