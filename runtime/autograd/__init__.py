"""`yamlgrad.autograd`: backward() and grad(), with torch.autograd's arguments.

This is torch/autograd/__init__.py: it checks the arguments, makes the implicit
gradient of a scalar output (`_make_grads`), finds the root edges, and hands all of
it to the engine. `retain_graph` defaults to `create_graph`, as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import warnings

from yamlgrad.runtime import backend
from yamlgrad.runtime.autograd import engine
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.errors import (
    ERR_EMPTY_BACKWARD_INPUTS,
    ERR_EMPTY_GRAD_INPUTS,
    ERR_GRADIENT_COUNT,
    ERR_IMPLICIT_GRAD,
    ERR_IMPLICIT_GRAD_COMPLEX,
    ERR_MISMATCH_COMPLEX,
    ERR_INDEX_ZERO_DIM,
    ERR_INPUT_NO_GRAD,
    ERR_MATERIALIZE_UNUSED,
    ERR_MISMATCH_SHAPE,
    ERR_NO_GRAD_FN,
    ERR_UNUSED_INPUT,
    WARN_ONLY_INPUTS,
)
from yamlgrad.runtime.autograd.grad_mode import enable_grad, no_grad, set_grad_enabled
from yamlgrad.runtime.autograd.node import Edge
from yamlgrad.runtime.autograd.tensor import Size, Tensor, active_tracing
from yamlgrad.runtime.autograd.accumulate_grad import gradient_edge

from yamlgrad.runtime.autograd import function  # noqa: E402 - `yg.autograd.function`
from yamlgrad.runtime.autograd import (
    forward_ad,
)  # noqa: E402 - `yg.autograd.forward_ad`
from yamlgrad.runtime.autograd.function import (
    Function,
    once_differentiable,
)  # noqa: E402

__all__ = [
    "backward",
    "grad",
    "Function",
    "function",
    "forward_ad",
    "once_differentiable",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
]

TensorOrTensors = Tensor | Sequence[Tensor]


def _as_tuple(value: Any) -> tuple[Any, ...]:
    if isinstance(value, Tensor) or value is None:
        return (value,)
    return tuple(value)


def _make_grads(
    outputs: tuple[Tensor, ...], grads: tuple[Tensor | None, ...], create_graph: bool
) -> list[Any]:
    """The seed gradient of each output: ones for a scalar, else the one given.

    As in PyTorch, extra gradients are ignored (they are zipped with the outputs)
    and missing ones are an error.
    """
    if len(grads) < len(outputs):
        raise RuntimeError(
            ERR_GRADIENT_COUNT.format(tensors=len(outputs), gradients=len(grads))
        )
    seeds: list[Any] = []
    for index, (out, g) in enumerate(zip(outputs, grads)):
        if g is None:
            data = out._data
            if data.size != 1:
                raise RuntimeError(ERR_IMPLICIT_GRAD)
            if backend.dtype_kind(data.dtype) == "c":
                raise RuntimeError(ERR_IMPLICIT_GRAD_COMPLEX.format(dtype=out.dtype))
            if type(data) is np.ndarray and not create_graph:  # (most backwards)
                # (a 0-d one by np.array: a fifth of ones_like's time)
                dtype = data.dtype
                seeds.append(
                    np.ones(data.shape, dtype) if data.ndim else np.array(1, dtype)
                )
                continue
            g = Tensor._make(backend.namespace_of(data).ones_like(data))
        elif not isinstance(g, Tensor):
            g = Tensor._make(np.asarray(g, dtype=out._data.dtype))
        elif g.shape != out.shape:
            raise RuntimeError(
                ERR_MISMATCH_SHAPE.format(
                    index=index, grad_shape=Size(g.shape), out_shape=Size(out.shape)
                )
            )
        elif (
            g._data.dtype is not out._data.dtype and g.is_complex() != out.is_complex()
        ):
            raise RuntimeError(
                ERR_MISMATCH_COMPLEX.format(
                    index=index, grad_dtype=g.dtype, out_dtype=out.dtype
                )
            )
        # A seed carrying a tangent keeps it (forward-over-reverse), and so does
        # one without storage of its own (a vmap's batch of seeds).
        keep = (
            create_graph
            or g._fw_grad is not None
            or not (type(g._data) is np.ndarray or backend.is_foreign(g._data))
        )
        seeds.append(g if keep else g._data)
    return seeds


def _root_edges(outputs: tuple[Tensor, ...]) -> list[Edge]:
    edges = []
    for index, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            raise TypeError(f"expected a Tensor, got {type(out).__name__}")
        edge = gradient_edge(out)
        if edge.node is None:
            raise RuntimeError(ERR_NO_GRAD_FN.format(index=index))
        edges.append(edge)
    return edges


def backward(
    tensors: TensorOrTensors,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: TensorOrTensors | None = None,
) -> None:
    """Accumulate the gradients of `tensors` into the `.grad` of the leaves.

    >>> x = yg.tensor([1.0, 2.0], requires_grad=True)
    >>> yg.autograd.backward((x * x).sum())
    >>> x.grad
    tensor([2., 4.])
    """
    if active_tracing[0] is not None:  # inside yg.compile's trace: raises
        active_tracing[0].unsupported("backward()")
    outputs = _as_tuple(tensors)
    grads = (
        _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(outputs)
    )
    if retain_graph is None:
        retain_graph = create_graph
    input_edges = None
    input_tensors: tuple[Tensor, ...] = ()
    if inputs is not None:
        input_tensors = _as_tuple(inputs)
        if not input_tensors:
            raise RuntimeError(ERR_EMPTY_BACKWARD_INPUTS)
        input_edges = [_input_edge(t) for t in input_tensors]
    roots = _root_edges(outputs)
    seeds = _make_grads(outputs, grads, create_graph)
    captured = engine.execute(
        roots,
        seeds,
        keep_graph=retain_graph,
        create_graph=create_graph,
        accumulate_grad=True,
        outputs=input_edges,
    )
    # A non-leaf named in `inputs` gets its gradient in `.grad`, as PyTorch does.
    for t, g in zip(input_tensors, captured):
        if g is not None and t.grad_fn is not None:
            g = _to_tensor(g)
            t._grad = g if t._grad is None else t._grad + g


def _input_edge(t: Tensor) -> Edge:
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a Tensor in inputs, got {type(t).__name__}")
    if not t._requires_grad:
        raise RuntimeError(ERR_INPUT_NO_GRAD)
    return gradient_edge(t)


def _to_tensor(g: Any) -> Tensor:
    if isinstance(g, Tensor):
        return g
    if not g.flags.writeable:  # a broadcast view: hand out an array of its own
        g = g.copy()
    return Tensor._make(g)


def grad(
    outputs: TensorOrTensors,
    inputs: TensorOrTensors,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """The gradients of `outputs` with respect to `inputs`; `.grad` is left alone.

    `is_grads_batched`: the first dimension of every `grad_outputs` tensor is a
    batch of cotangents; each gradient gets the same leading dimension (one
    vector-Jacobian product per row, as PyTorch's vmap over them gives).

    >>> x = yg.tensor(3.0, requires_grad=True)
    >>> yg.autograd.grad(x * x, x)
    (tensor(6.),)
    """
    if active_tracing[0] is not None:  # inside yg.compile's trace: raises
        active_tracing[0].unsupported("autograd.grad()")
    if not only_inputs:
        warnings.warn(WARN_ONLY_INPUTS, FutureWarning, stacklevel=2)
    if materialize_grads and allow_unused is False:
        raise ValueError(ERR_MATERIALIZE_UNUSED)
    if allow_unused is None:
        allow_unused = materialize_grads
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if not ins:
        raise RuntimeError(ERR_EMPTY_GRAD_INPUTS)
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outs)
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _grad_batched(
            outs,
            ins,
            grads,
            retain_graph,
            create_graph,
            allow_unused,
            materialize_grads,
        )
    # PyTorch's order of checks: the gradients, the outputs, then the inputs.
    seeds = _make_grads(outs, grads, create_graph)
    roots = _root_edges(outs)
    input_edges = [_input_edge(t) for t in ins]
    captured = engine.execute(
        roots,
        seeds,
        keep_graph=retain_graph,
        create_graph=create_graph,
        accumulate_grad=False,
        outputs=input_edges,
    )
    result: list[Tensor | None] = []
    for index, (t, g) in enumerate(zip(ins, captured)):
        if g is None:
            if materialize_grads:
                zeros = Tensor._make(backend.namespace_of(t._data).zeros_like(t._data))
                result.append(zeros.requires_grad_(create_graph))
                continue
            if not allow_unused:
                raise RuntimeError(ERR_UNUSED_INPUT.format(index=index))
            result.append(None)
            continue
        result.append(_captured(g))
    return tuple(result)


def _captured(g: Any) -> Tensor:
    """A gradient `grad` hands out: an expanded gradient (a sum's) stays the
    expanded view, as PyTorch's does, so an in-place op on it raises; any other
    read-only array is copied. Another backend's array is handed out as it
    is (it has no strides; a lazy one stays lazy)."""
    if (
        isinstance(g, Tensor)
        or type(g) is not np.ndarray
        or any(stride == 0 and size > 1 for stride, size in zip(g.strides, g.shape))
    ):
        return g if isinstance(g, Tensor) else Tensor._make(g)
    return _to_tensor(g)


def _grad_batched(
    outs: tuple[Tensor, ...],
    ins: tuple[Tensor, ...],
    grads: tuple[Any, ...],
    retain_graph: bool,
    create_graph: bool,
    allow_unused: bool,
    materialize_grads: bool,
) -> tuple[Tensor | None, ...]:
    """grad() once per row of the batched `grads`, stacked along a new dim 0."""
    if any(g is None or g.ndim == 0 for g in grads):
        raise IndexError(ERR_INDEX_ZERO_DIM)
    size = grads[0].shape[0]
    rows = [
        grad(
            outs,
            ins,
            [g[i] for g in grads],
            retain_graph=retain_graph or i < size - 1,
            create_graph=create_graph,
            allow_unused=allow_unused,
            materialize_grads=materialize_grads,
        )
        for i in range(size)
    ]
    result: list[Tensor | None] = []
    for index, t in enumerate(ins):
        column = [row[index] for row in rows]
        if size == 0 or column[0] is None:
            result.append(None)
        else:
            result.append(ops.stack(column))
    return tuple(result)


from yamlgrad.runtime.autograd.gradcheck import (  # noqa: E402 - uses grad() above
    GradcheckError,
    gradcheck,
    gradgradcheck,
)

# PyTorch's submodules, under their names: `yg.autograd.graph`, `.grad_mode`,
# `.anomaly_mode`, `.function`, `.gradcheck` (as an attribute, `gradcheck` is
# the function, as in torch; `from yamlgrad.autograd.gradcheck import gradcheck`
# reads the module).
from yamlgrad.runtime.autograd import anomaly_mode, grad_mode, graph  # noqa: E402
from yamlgrad.runtime.autograd.anomaly_mode import (  # noqa: E402
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from yamlgrad.runtime.autograd.grad_mode import inference_mode  # noqa: E402

__all__ += ["gradcheck", "gradgradcheck", "GradcheckError"]
__all__ += ["detect_anomaly", "set_detect_anomaly", "graph", "grad_mode"]
from yamlgrad.runtime.autograd import variable  # noqa: E402
from yamlgrad.runtime.autograd.variable import Variable  # noqa: E402

__all__ += ["anomaly_mode", "inference_mode", "variable", "Variable"]
