"""One step of each recurrent cell, as torch.lstm_cell, gru_cell, rnn_tanh_cell
and rnn_relu_cell compute it over batched (N, input_size) inputs; nn.LSTMCell,
GRUCell and RNNCell (runtime/nn/rnn.py) call them. The LSTM and GRU steps are
one fused node each (ThnnFusedLstmCellBackward0, ThnnFusedGruCellBackward0), the
Elman steps two linears and the nonlinearity, as PyTorch's are.
"""

from __future__ import annotations

from collections.abc import Sequence

from yamlgrad.generated import VariableType
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.nn import functional as F

__all__ = ["lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"]


def lstm_cell(
    input: Tensor,
    hx: Sequence[Tensor],
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """(h', c') of one LSTM step from x and hx = (h, c)."""
    h, c = hx
    h, c, _ = VariableType._thnn_fused_lstm_cell(
        F.linear(input, w_ih), F.linear(h, w_hh), c, b_ih, b_hh
    )
    return h, c


def gru_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """h' of one GRU step from x and h."""
    out, _ = VariableType._thnn_fused_gru_cell(
        F.linear(input, w_ih), F.linear(hx, w_hh), hx, b_ih, b_hh
    )
    return out


def _elman(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None,
    b_hh: Tensor | None,
) -> Tensor:
    return F.linear(input, w_ih, b_ih) + F.linear(hx, w_hh, b_hh)


def rnn_tanh_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    return _elman(input, hx, w_ih, w_hh, b_ih, b_hh).tanh()


def rnn_relu_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """relu(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    return _elman(input, hx, w_ih, w_hh, b_ih, b_hh).relu()
