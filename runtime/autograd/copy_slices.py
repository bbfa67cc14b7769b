"""In-place changes through views: PyTorch's CopySlices, AsStridedBackward0, CopyBackwards.

A view shares its base's memory (a numpy view) and version counter. When an op
writes in place into a view of a tensor that is part of a graph, the base's
history changes too, and PyTorch rewrites it (`rebase_history` on a view, in
torch/csrc/autograd/variable.cpp):

- the base's grad_fn becomes `CopySlices`, which holds the in-place op's node
  (`fn`): the base's gradient passes unchanged outside the view's elements, and
  the view's elements go through `fn`, whose other outputs flow to the op's other
  inputs;
- the view, and every other live view of the same base (they are stale: their
  base changed under them), gets a fresh `AsStridedBackward0`, which scatters its
  gradient back into the base's shape and flows into the base's new history.

Where a view sits in its base is worked out from memory addresses
(`view_index_map`): for each element of the view, the flat index of the base
element at the same address. That covers every numpy view (slices with steps,
transposes, diagonals, reshapes, views of views) without replaying the view ops.

A view of another item size (the real parts of a complex tensor, `view_as_real`;
`view_as_complex` of pairs of reals) is placed among reals: the complex one of the
two is taken as its pairs of reals (a last dim of 2), and its gradient crosses to
and from that form by view_as_real and view_as_complex.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from yamlgrad.runtime.autograd.accumulate_grad import grad_accumulator
from yamlgrad.runtime.autograd.node import INVALID_EDGE, Edge, Grad, Node, flat_edges
from yamlgrad.runtime.autograd.tensor import Tensor

# Compact a base's list of weak references to its views when it grows past this.
_VIEWS_COMPACT_AT = 32


def _edge_of(t: Tensor) -> Edge:
    """Where a gradient for `t` goes now (variable_type_utils.gradient_edge)."""
    if t.grad_fn is not None:
        return Edge(t.grad_fn, t.output_nr)
    if t._requires_grad:
        return Edge(grad_accumulator(t), 0)
    return INVALID_EDGE


def _byte_offsets(a: np.ndarray) -> np.ndarray:
    """The byte offset of every element of `a` from its first element's address."""
    offsets = np.zeros(a.shape, dtype=np.int64)
    for axis, (size, stride) in enumerate(zip(a.shape, a.strides)):
        shape = [1] * a.ndim
        shape[axis] = size
        offsets = offsets + (np.arange(size, dtype=np.int64) * stride).reshape(shape)
    return offsets


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _as_reals(a: np.ndarray) -> np.ndarray:
    """A complex array's memory as its pairs of reals (shape + (2,)), a view."""
    parts = a.real
    return np.lib.stride_tricks.as_strided(
        parts, a.shape + (2,), a.strides + (parts.itemsize,), writeable=False
    )


def crossing(view_dtype: np.dtype, base_dtype: np.dtype) -> str:
    """Which of a view and its base is taken as pairs of reals: "base" (a real
    view of a complex base), "view" (a complex view of a real base) or ""."""
    view_complex, base_complex = view_dtype.kind == "c", base_dtype.kind == "c"
    if view_complex == base_complex:
        return ""
    return "base" if base_complex else "view"


def view_index_map(view: np.ndarray, base: np.ndarray) -> np.ndarray:
    """For every element of `view`, the flat (C-order) index of `base`'s element
    at the same address: the view's geometry inside its base (among reals when
    one of them is complex and the other not: see `crossing`)."""
    side = crossing(view.dtype, base.dtype)
    if side == "base":
        base = _as_reals(base)
    elif side == "view":
        view = _as_reals(view)
    if view.size == 0:
        return np.zeros(view.shape, dtype=np.int64)
    itemsize = base.itemsize
    view_offsets = _byte_offsets(view) + (_address(view) - _address(base))
    if base.flags.c_contiguous:
        index = view_offsets // itemsize
        found = (view_offsets % itemsize == 0) & (index >= 0) & (index < base.size)
    else:
        base_offsets = _byte_offsets(base).ravel()
        order = np.argsort(base_offsets, kind="stable")
        sorted_offsets = base_offsets[order]
        position = np.clip(
            np.searchsorted(sorted_offsets, view_offsets), 0, base.size - 1
        )
        found = sorted_offsets[position] == view_offsets
        index = order[position]
    if not found.all():
        raise RuntimeError(
            "a view's elements do not all lie inside its base's memory, so an "
            "in-place change through it cannot be recorded; clone() the view first"
        )
    return index.astype(np.int64, copy=False)


def _gather(grad: Grad, index: np.ndarray, raw: bool) -> Grad:
    """grad.flatten()[index] (shaped as `index`)."""
    if raw:
        return np.take(grad, index)
    from yamlgrad.runtime.dispatch import ops

    flat = ops.reshape(grad, (-1,))
    picked = ops.index_select(flat, 0, Tensor._make(index.ravel()))
    return ops.reshape(picked, index.shape)


def _scatter(
    shape: tuple[int, ...], index: np.ndarray, values: Grad, like: Grad, raw: bool
) -> Grad:
    """A tensor of `shape`, zero except `values` added at the flat `index`es."""
    if raw:
        dtype = np.result_type(like.dtype, values.dtype)
        out = np.zeros(int(np.prod(shape)), dtype=dtype)
        np.add.at(out, index.ravel(), np.broadcast_to(values, index.shape).ravel())
        return out.reshape(shape)
    from yamlgrad.runtime.dispatch import ops

    dtype = np.result_type(like._data.dtype, values._data.dtype)
    zeros = Tensor._make(np.zeros(int(np.prod(shape)), dtype=dtype))
    flat_values = ops.reshape(ops.expand(values, index.shape), (-1,))
    out = ops.scatter_add(zeros, 0, Tensor._make(index.ravel()), flat_values)
    return ops.reshape(out, shape)


def _to_reals(grad: Grad, raw: bool) -> Grad:
    if raw:
        return (
            np.ascontiguousarray(grad).view(grad.real.dtype).reshape(grad.shape + (2,))
        )
    from yamlgrad.runtime.dispatch import ops

    return ops.view_as_real(grad)


def _from_reals(grad: Grad, raw: bool) -> Grad:
    if raw:
        complex_type = np.result_type(grad.dtype, np.complex64)
        return np.ascontiguousarray(grad).view(complex_type).reshape(grad.shape[:-1])
    from yamlgrad.runtime.dispatch import ops

    return ops.view_as_complex(ops.contiguous(grad))


def _shape_among_reals(shape: tuple[int, ...], side: str) -> tuple[int, ...]:
    return shape + (2,) if side == "base" else shape


class CopySlices(Node):
    """The base's grad_fn after an in-place op on one of its views.

    Output 0 is the base's previous history: the incoming gradient, with the
    view's elements replaced by `fn`'s gradient for the view's old value. Outputs
    1.. are `fn`'s gradients for the op's other inputs.
    """

    __slots__ = ("fn", "index", "_base_shape", "_side")

    def __init__(
        self,
        fn: Node,
        index: np.ndarray,
        base_shape: tuple[int, ...],
        side: str = "",
    ):
        super().__init__()
        self.fn = fn
        self.index = index  # the view's elements, as flat indices into the base
        self._side = side  # which is taken as pairs of reals (`crossing`)
        self._base_shape = _shape_among_reals(base_shape, side)

    def apply(self, grads: list[Grad], raw: bool = False) -> list[Grad | None]:
        grad = grads[0]
        outputs: list[Grad | None] = [None] * (len(self._next_edges) // 2)
        if grad is None:
            return outputs
        side = self._side
        if side == "base":
            grad = _to_reals(grad, raw)
        grad_slice = _gather(grad, self.index, raw)
        if side == "view":
            grad_slice = _from_reals(grad_slice, raw)
        res = self.fn.apply([grad_slice], raw)
        if self.task_should_compute_output(0):
            inside = np.zeros(self._base_shape, dtype=bool)
            inside.reshape(-1)[self.index.ravel()] = True
            if raw:
                result = np.where(inside, 0, grad).astype(grad.dtype, copy=False)
            else:  # by selection: a nan or inf in the region stays out
                from yamlgrad.runtime.dispatch import ops

                result = ops.where(Tensor._make(inside), 0, grad)
            if res[0] is not None:
                region = _to_reals(res[0], raw) if side == "view" else res[0]
                result = result + _scatter(
                    self._base_shape, self.index, region, grad, raw
                )
            outputs[0] = _from_reals(result, raw) if side == "base" else result
        for i in range(1, len(outputs)):
            outputs[i] = res[i]
        return outputs


class AsStridedBackward0(Node):
    """A view's grad_fn once its base changed in place: the view's gradient goes to
    its elements' places in the base (PyTorch regenerates stale views this way)."""

    __slots__ = ("index", "_saved_self_sym_sizes", "_saved_size", "_side")

    def __init__(
        self, index: np.ndarray, base_shape: tuple[int, ...], side: str = ""
    ) -> None:
        super().__init__()
        self.index = index
        self._saved_self_sym_sizes = base_shape
        self._saved_size = tuple(index.shape)
        self._side = side

    def apply(self, grads: list[Grad], raw: bool = False) -> list[Grad | None]:
        grad = grads[0]
        if grad is None or not self.task_should_compute_output(0):
            return [None]
        side = self._side
        if side == "view":
            grad = _to_reals(grad, raw)
        shape = _shape_among_reals(self._saved_self_sym_sizes, side)
        out = _scatter(shape, self.index, grad, grad, raw)
        return [_from_reals(out, raw) if side == "base" else out]


class CopyBackwards(Node):
    """Backward of `self.copy_(src)`: `self`'s old value is gone (zero gradient);
    `src` gets the gradient (the engine sums a broadcast and casts the dtype)."""

    __slots__ = ()

    def apply(self, grads: list[Grad], raw: bool = False) -> list[Grad | None]:
        grad = grads[0]
        outputs: list[Grad | None] = [None, None]
        if grad is None:
            return outputs
        if self.task_should_compute_output(0):
            # Zeros outside any graph, in either mode.
            zeros = np.zeros_like(grad if raw else grad._data)
            outputs[0] = zeros if raw else Tensor._make(zeros)
        if self.task_should_compute_output(1):
            outputs[1] = grad
        return outputs


def register_view(view: Tensor, root: Tensor) -> None:
    """Remember `view` on the version counter it shares with `root`."""
    counter = root.version_counter
    views = counter.views
    if views is None:
        counter.views = [weakref.ref(view)]
        return
    if len(views) >= _VIEWS_COMPACT_AT:
        views[:] = [r for r in views if r() is not None]
    views.append(weakref.ref(view))


def _regenerate_views(root: Tensor) -> None:
    """Give every live view of `root` an AsStridedBackward0 into its new history."""
    views = root.version_counter.views
    if not views:
        return
    edge = _edge_of(root)
    if edge.node is None:
        return
    live = []
    for ref in views:
        view = ref()
        if view is None:
            continue
        live.append(ref)
        if view._base is not root:
            continue
        node = AsStridedBackward0(
            view_index_map(view._data, root._data),
            root._data.shape,
            crossing(view._data.dtype, root._data.dtype),
        )
        node.set_next_edges(flat_edges((edge,)))
        view.output_nr = node.add_input_metadata(view)
        view.grad_fn = node
        view._requires_grad = True
    views[:] = live


def rebase_view_history(view: Tensor, fn: Node) -> None:
    """An in-place op's node `fn` wrote into `view`: the base's grad_fn becomes a
    CopySlices around `fn`, and the views (this one included) are regenerated."""
    base = view._base
    assert base is not None
    fn.add_input_metadata(view)
    rebase_region(base, view_index_map(view._data, base._data), fn)


def rebase_region(
    base: Tensor, index: np.ndarray, fn: Node, node_class: type = CopySlices
) -> None:
    """`fn` wrote the elements of `base` at the flat `index`es (a view of it, or an
    indexed assignment): `base`'s grad_fn becomes a `node_class` around `fn`."""
    # fn's first edge stands for the region's old value, which lives in the base's
    # old history: CopySlices takes both over, so fn asks the same question
    # (should_compute_output) of the same edges.
    edges = (*_edge_of(base), *fn._next_edges[2:])
    fn._next_edges = edges
    side = crossing(fn._input_metadata[0][1], base._data.dtype)
    node = node_class(fn, index, base._data.shape, side)
    node._next_edges = edges
    base.output_nr = node.add_input_metadata(base)
    base.grad_fn = node
    base._requires_grad = True
    _regenerate_views(base)


class IndexPutBackward0(CopySlices):
    """Backward of `x[index] = value` with a tensor, list or mask index
    (PyTorch's index_put_): as CopySlices, over the indexed elements."""

    __slots__ = ()


def regenerate_views(base: Tensor) -> None:
    """After an in-place op on `base` itself: its views are stale."""
    if base._version_counter is not None and base._version_counter.views:
        _regenerate_views(base)
