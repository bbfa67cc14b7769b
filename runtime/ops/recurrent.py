"""Recurrent cells and sequence packing: PyTorch's fused LSTM and GRU cells and
`_pack_padded_sequence`, each kernel beside its backward helper.

The fused cells are PyTorch's `_thnn_fused_lstm_cell` and `_thnn_fused_gru_cell`
(its CUDA path for nn.LSTM and nn.GRU): the element-wise half of a time step,
given the gate pre-activations `x W_ih^T` and `h W_hh^T`, is one node instead of
a dozen. Their last output, the workspace, holds the activated gates (LSTM:
i, f, g, o; GRU: r, z, n, hx and the hidden half of n), which a first-order
backward reads instead of recomputing them, as PyTorch's
`_thnn_fused_lstm_cell_backward_impl` and `_thnn_fused_gru_cell_backward` do.

Two decisions, both PyTorch's:

* The workspace is not differentiable, so a backward that is itself recorded
  (`create_graph=True`: the helpers receive Tensors) recomputes the gates from
  the inputs with recorded ops, as PyTorch's `_thnn_differentiable_*_backward`
  do under grad mode. The math after that is one code path for both modes.
* The input and hidden gates get the same gradient (LSTM), and a bias gets the
  sum of its gates' gradient over the batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.ops.activations import (
    _sigmoid_into,
    sigmoid,
    sigmoid_backward,
    tanh_backward,
)
from yamlgrad.runtime.ops.common import _raw, _zeros
from yamlgrad.runtime.ops.namespace import array_namespace

KERNELS = (
    "thnn_fused_lstm_cell_kernel",
    "thnn_fused_gru_cell_kernel",
    "pack_padded_sequence_kernel",
)
BACKWARD_HELPERS = (
    "thnn_fused_lstm_cell_backward",
    "thnn_fused_gru_cell_backward",
    "pack_padded_sequence_backward",
)


# -- the fused cells ---------------------------------------------------------------


def _check_cell_sizes(
    input_gates: Any,
    hidden_gates: Any,
    input_bias: Any,
    hidden_bias: Any,
    factor: int,
    prev_hidden: Any,
    prev_name: str,
) -> None:
    """PyTorch's checkSizes for the fused cells (`factor`: 4 for LSTM, 3 for GRU)."""
    if np.ndim(input_gates) != 2:
        raise RuntimeError(
            f"Expected 2-dimensional tensor, but got {np.ndim(input_gates)}-dimensional "
            "tensor for argument #1 'input_gates'"
        )
    if tuple(np.shape(input_gates)) != tuple(np.shape(hidden_gates)):
        raise RuntimeError(
            f"Expected tensor for argument #1 'input_gates' to have the same size as "
            f"tensor for argument #2 'hidden_gates'; but {_size(input_gates)} does not "
            f"equal {_size(hidden_gates)}"
        )
    gates_size = np.shape(input_gates)[1]
    if (input_bias is None) != (hidden_bias is None):
        raise RuntimeError("input_bias and hidden_bias must be given together")
    if input_bias is not None:
        for name, bias in (("input_bias", input_bias), ("hidden_bias", hidden_bias)):
            if np.ndim(bias) != 1 or np.shape(bias)[0] != gates_size:
                raise RuntimeError(
                    f"Expected tensor for argument '{name}' to have size "
                    f"[{gates_size}], but got {_size(bias)}"
                )
    expected = (np.shape(input_gates)[0], gates_size // factor)
    if gates_size % factor or tuple(np.shape(prev_hidden)) != expected:
        raise RuntimeError(
            f"Expected tensor for argument '{prev_name}' to have size "
            f"{list(expected)}, but got {_size(prev_hidden)}"
        )


def _size(x: Any) -> str:
    return str(list(np.shape(x)))


def _gate_sum(
    input_gates: Any, hidden_gates: Any, input_bias: Any, hidden_bias: Any
) -> Any:
    gates = input_gates + hidden_gates
    if input_bias is not None:
        gates = gates + input_bias
        gates = gates + hidden_bias
    return gates


def _lstm_activations(gates: Any, hidden: int) -> Any:
    """sigmoid of the i, f and o quarters and tanh of g: in place for numpy's
    arrays (the kernel's own; the sigmoid runs over the whole contiguous array,
    several times faster than over its column blocks), else as a concatenation."""
    g = slice(2 * hidden, 3 * hidden)
    if type(gates) is np.ndarray:
        tanh_g = np.tanh(gates[:, g])
        _sigmoid_into(gates, gates)
        gates[:, g] = tanh_g
        return gates
    xp = array_namespace(gates)
    return xp.concat(
        [
            _sigmoid_of(gates[:, : 2 * hidden]),
            xp.tanh(gates[:, g]),
            _sigmoid_of(gates[:, 3 * hidden :]),
        ],
        axis=1,
    )


def _sigmoid_of(x: Any) -> Any:
    """sigmoid on an ndarray, another backend's array or a Tensor (recorded)."""
    if isinstance(x, Tensor):
        return x.sigmoid()
    return sigmoid(x)


def thnn_fused_lstm_cell_kernel(
    input_gates: Any, hidden_gates: Any, cx: Any, input_bias: Any, hidden_bias: Any
) -> tuple[Any, Any, Any]:
    """(hy, cy, workspace): c' = f c + i g, h' = o tanh(c'), the gates i, f, g, o
    being the quarters of input_gates + hidden_gates (+ both biases)."""
    _check_cell_sizes(input_gates, hidden_gates, input_bias, hidden_bias, 4, cx, "cx")
    hidden = np.shape(cx)[1]
    xp = backend.namespace_of(input_gates, hidden_gates, cx)
    workspace = _lstm_activations(
        _gate_sum(input_gates, hidden_gates, input_bias, hidden_bias), hidden
    )
    i, f, g, o = (workspace[:, k * hidden : (k + 1) * hidden] for k in range(4))
    cy = f * cx
    cy += i * g
    hy = o * xp.tanh(cy)
    return hy, cy, workspace


def thnn_fused_lstm_cell_backward(
    grad_hy: Any,
    grad_cy: Any,
    input_gates: Any,
    hidden_gates: Any,
    input_bias: Any,
    hidden_bias: Any,
    cx: Any,
    cy: Any,
    workspace: Any,
) -> tuple[Any, Any, Any, Any, Any]:
    """(grad_input_gates, grad_hidden_gates, grad_cx, grad_input_bias,
    grad_hidden_bias); the gates' two gradients are one array, as PyTorch's."""
    xp = array_namespace(grad_hy, grad_cy, cx, cy)
    hidden = cx.shape[1]
    if isinstance(grad_hy, Tensor) or isinstance(cy, Tensor):
        # Recorded: the gates again from the inputs, so that their dependence on
        # them is part of the graph (the workspace has no history).
        workspace = _lstm_activations(
            _gate_sum(input_gates, hidden_gates, input_bias, hidden_bias), hidden
        )
    i, f, g, o = (workspace[:, k * hidden : (k + 1) * hidden] for k in range(4))
    tanh_cy = xp.tanh(cy)
    grad_c = grad_hy * o * (1 - tanh_cy * tanh_cy) + grad_cy
    # The gradient reaching each gate's activation, times the activation's
    # slope from its output: s (1 - s) for the sigmoids, 1 - g^2 for tanh. Both
    # factors are whole (N, 4H) arrays, so numpy runs contiguous loops.
    reaching = xp.concat(
        [grad_c * g, grad_c * cx, grad_c * i, grad_hy * tanh_cy], axis=1
    )
    grad_gates = reaching * _lstm_slopes(workspace, g, hidden)
    grad_cx = grad_c * f
    grad_bias = None if input_bias is None else xp.sum(grad_gates, axis=0)
    return grad_gates, grad_gates, grad_cx, grad_bias, grad_bias


def _lstm_slopes(workspace: Any, g: Any, hidden: int) -> Any:
    """d(activation)/d(pre-activation) of each gate, from the activated gates."""
    slopes = workspace * (1 - workspace)
    tanh_slope = 1 - g * g
    if type(slopes) is np.ndarray:
        slopes[:, 2 * hidden : 3 * hidden] = tanh_slope  # our own array
        return slopes
    xp = array_namespace(slopes)
    return xp.concat(
        [slopes[:, : 2 * hidden], tanh_slope, slopes[:, 3 * hidden :]], axis=1
    )


def _gru_gates(
    input_gates: Any, hidden_gates: Any, input_bias: Any, hidden_bias: Any, hidden: int
) -> tuple[Any, Any, Any, Any]:
    """(r, z, n, hn): the reset and update gates, the new gate and its hidden half
    W_hn h + b_hn, from the pre-activations."""
    if input_bias is not None:
        input_gates = input_gates + input_bias
        hidden_gates = hidden_gates + hidden_bias
    xp = array_namespace(input_gates, hidden_gates)
    input_r, input_z, input_n = _thirds(input_gates, hidden)
    hidden_r, hidden_z, hidden_n = _thirds(hidden_gates, hidden)
    r = _sigmoid_of(input_r + hidden_r)
    z = _sigmoid_of(input_z + hidden_z)
    n = xp.tanh(input_n + r * hidden_n)
    return r, z, n, hidden_n


def _thirds(gates: Any, hidden: int) -> tuple[Any, Any, Any]:
    return gates[:, :hidden], gates[:, hidden : 2 * hidden], gates[:, 2 * hidden :]


def thnn_fused_gru_cell_kernel(
    input_gates: Any, hidden_gates: Any, hx: Any, input_bias: Any, hidden_bias: Any
) -> tuple[Any, Any]:
    """(hy, workspace): h' = (1 - z) n + z h, with n = tanh(i_n + r (h_n + b_hn));
    the workspace is [r, z, n, hx, h_n + b_hn] side by side."""
    _check_cell_sizes(input_gates, hidden_gates, input_bias, hidden_bias, 3, hx, "hx")
    hidden = np.shape(hx)[1]
    xp = backend.namespace_of(input_gates, hidden_gates, hx)
    r, z, n, hidden_n = _gru_gates(
        input_gates, hidden_gates, input_bias, hidden_bias, hidden
    )
    hy = hx - n
    hy *= z
    hy += n
    workspace = xp.concat([r, z, n, xp.astype(hx, n.dtype), hidden_n], axis=1)
    return hy, workspace


def thnn_fused_gru_cell_backward(
    grad_hy: Any,
    input_gates: Any,
    hidden_gates: Any,
    hx: Any,
    input_bias: Any,
    hidden_bias: Any,
    workspace: Any,
) -> tuple[Any, Any, Any, Any, Any]:
    """(grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias,
    grad_hidden_bias)."""
    xp = array_namespace(grad_hy, hx)
    hidden = hx.shape[1]
    if isinstance(grad_hy, Tensor) or isinstance(hx, Tensor):
        r, z, n, hidden_n = _gru_gates(
            input_gates, hidden_gates, input_bias, hidden_bias, hidden
        )
    else:
        r, z, n, _, hidden_n = (
            workspace[:, k * hidden : (k + 1) * hidden] for k in range(5)
        )
    grad_hx = grad_hy * z
    grad_z = sigmoid_backward(grad_hy * (hx - n), z)
    grad_n = tanh_backward(grad_hy * (1 - z), n)
    grad_r = sigmoid_backward(grad_n * hidden_n, r)
    grad_input_gates = xp.concat([grad_r, grad_z, grad_n], axis=1)
    grad_hidden_gates = xp.concat([grad_r, grad_z, grad_n * r], axis=1)
    if input_bias is None:
        return grad_input_gates, grad_hidden_gates, grad_hx, None, None
    return (
        grad_input_gates,
        grad_hidden_gates,
        grad_hx,
        xp.sum(grad_input_gates, axis=0),
        xp.sum(grad_hidden_gates, axis=0),
    )


# -- packing -----------------------------------------------------------------------


def packed_positions(batch_sizes: Any, batch: int) -> np.ndarray:
    """Where each row of a packed sequence sits in its padded (T * B, ...) form:
    time step t holds rows t * B + b for b < batch_sizes[t]."""
    sizes = np.asarray(_raw(batch_sizes), dtype=np.int64)
    starts = np.repeat(np.arange(sizes.size, dtype=np.int64) * batch, sizes)
    offsets = np.arange(starts.size, dtype=np.int64) - np.repeat(
        np.cumsum(sizes) - sizes, sizes
    )
    return starts + offsets


ERR_LENGTHS_SORTED = (
    "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
    "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
    "pack_sequence to sidestep this requirement if you do not need ONNX "
    "exportability."
)


def _check_lengths(lengths: np.ndarray, input: Any, batch: int) -> None:
    """PyTorch's checks of `_pack_padded_sequence`'s lengths, in its order."""
    if lengths.ndim != 1 or lengths.dtype != np.int64:
        kind = "Long" if lengths.dtype == np.int64 else str(lengths.dtype)
        raise RuntimeError(
            "'lengths' argument should be a 1D CPU int64 tensor, but got "
            f"{lengths.ndim}D cpu {kind} tensor"
        )
    if int(np.prod(np.shape(input))) == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if lengths.shape[0] != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got "
            f"{lengths.shape[0]} (batch_size={batch})"
        )
    if lengths[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element "
            "in 'lengths' that is <= 0"
        )
    if np.any(lengths[1:] > lengths[:-1]):
        raise RuntimeError(ERR_LENGTHS_SORTED)
    steps = np.shape(input)[0]
    if lengths[0] > steps:
        # PyTorch reads past the input here; a clear error instead.
        raise RuntimeError(
            f"Expected all lengths to be at most the sequence length {steps}, "
            f"but got a length of {int(lengths[0])}"
        )


def pack_padded_sequence_kernel(
    input: Any, lengths: Any, batch_first: bool
) -> tuple[Any, np.ndarray]:
    """(data, batch_sizes): the rows of a padded (T, B, *) input (B, T, * with
    batch_first) that lie inside their sequence, time step by time step."""
    xp = backend.namespace_of(input)
    x = xp.permute_dims(input, (1, 0, *range(2, input.ndim))) if batch_first else input
    steps, batch = x.shape[0], x.shape[1]
    lengths = np.asarray(lengths)
    _check_lengths(lengths, x, batch)
    batch_sizes = np.sum(
        lengths[None, :] > np.arange(int(lengths[0]))[:, None], axis=1, dtype=np.int64
    )
    rows = xp.reshape(x, (steps * batch, *x.shape[2:]))
    return xp.take(rows, xp.asarray(packed_positions(batch_sizes, batch)), axis=0), (
        batch_sizes
    )


def pack_padded_sequence_backward(
    grad: Any, input_sizes: tuple[int, ...], batch_sizes: Any, batch_first: bool
) -> Any:
    """Each packed row's gradient back at its padded position; zeros in the padding."""
    xp = array_namespace(grad)
    shape = list(input_sizes)
    if batch_first:
        shape[0], shape[1] = shape[1], shape[0]
    steps, batch = shape[0], shape[1]
    zeros = _zeros((steps * batch, *shape[2:]), grad)
    positions = packed_positions(batch_sizes, batch)
    padded = xp.reshape(xp.index_add(zeros, 0, positions, grad, 1), tuple(shape))
    if batch_first:
        return xp.permute_dims(padded, (1, 0, *range(2, len(shape))))
    return padded
