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
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import numpy as np

from yamlgrad.runtime.node import UINT64_MAX, Grad, Node

if TYPE_CHECKING:
    from yamlgrad.runtime.tensor import Tensor


class AccumulateGrad(Node):
    """Writes the gradient that reaches a leaf into `variable.grad`."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        super().__init__()
        self._seq = UINT64_MAX
        self.variable = variable
        self._input_metadata = ((variable._data.shape, variable._data.dtype),)

    def apply(self, grads: list[Grad], raw: bool = False) -> list[Grad | None]:
        from yamlgrad.runtime.tensor import Tensor

        new_grad = grads[0]
        if new_grad is None:
            return []
        variable = self.variable
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
        if variable._post_accumulate_hooks:
            for hook in list(variable._post_accumulate_hooks.values()):
                hook(variable)
        return []


def grad_accumulator(tensor: Tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, made on first use and cached weakly."""
    ref = tensor._grad_accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(tensor)
        tensor._grad_accumulator = weakref.ref(node)
    return node
