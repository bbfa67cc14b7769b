"""torch.lstm, gru, rnn_tanh and rnn_relu: the recurrent layers as ATen's
functions over flat weights (w_ih, w_hh[, b_ih, b_hh][, w_hr] per layer and
direction), on a padded input or a packed sequence's data and batch sizes. They
run what nn.LSTM, GRU and RNN run (runtime/nn/rnn.py), so they record the same
nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.nn.rnn import _run

__all__ = ["lstm", "gru", "rnn_tanh", "rnn_relu"]


def _layers(
    mode: str,
    input: Tensor,
    batch_sizes: Tensor | None,
    hx: Sequence[Tensor],
    params: Sequence[Tensor],
    options: tuple[Any, ...],
) -> tuple[Tensor, tuple[Tensor, ...]]:
    """The input overload's options end with batch_first; the data overload's
    do not (its data is already time-major)."""
    has_biases, num_layers, dropout, train, bidirectional = options[:5]
    batch_first = batch_sizes is None and len(options) > 5 and bool(options[5])
    if batch_first:
        input = input.transpose(0, 1)
    output, finals = _run(
        mode,
        input,
        None if batch_sizes is None else batch_sizes.tolist(),
        tuple(hx),
        list(params),
        has_biases,
        num_layers,
        dropout,
        train,
        bidirectional,
    )
    if batch_first:
        output = output.transpose(0, 1)
    return output, finals


def lstm(input: Tensor, *args: Any) -> tuple[Tensor, Tensor, Tensor]:
    """`lstm(input, hx, params, has_biases, num_layers, dropout, train,
    bidirectional, batch_first)` or `lstm(data, batch_sizes, hx, params, ...)`:
    (output, h_n, c_n)."""
    if isinstance(args[0], Tensor):  # the data overload
        batch_sizes, hx, params, *options = args
    else:
        batch_sizes, (hx, params, *options) = None, args
    output, (h, c) = _layers("LSTM", input, batch_sizes, hx, params, tuple(options))
    return output, h, c


def _one_state(mode: str) -> Any:
    def op(input: Tensor, *args: Any) -> tuple[Tensor, Tensor]:
        if isinstance(args[1], Tensor):  # the data overload: (batch_sizes, hx, ...)
            batch_sizes, hx, params, *options = args
        else:
            batch_sizes, (hx, params, *options) = None, args
        output, (h,) = _layers(mode, input, batch_sizes, (hx,), params, tuple(options))
        return output, h

    name = mode.lower()
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (
        f"`{name}(input, hx, params, has_biases, num_layers, dropout, train, "
        f"bidirectional, batch_first)` or `{name}(data, batch_sizes, hx, params, "
        "...)`: (output, h_n)."
    )
    return op


gru = _one_state("GRU")
rnn_tanh = _one_state("RNN_TANH")
rnn_relu = _one_state("RNN_RELU")
