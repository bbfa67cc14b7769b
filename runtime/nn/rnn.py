"""Recurrent layers: nn.RNN, nn.LSTM, nn.GRU and their cells, as torch.nn's.

Parameter names, shapes, order (`_flat_weights`, `all_weights`), initialisation
U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) from yamlgrad's default generator,
reprs and error texts are PyTorch's. A layer runs its time steps in Python,
recording ops as it goes, so `backward` goes through time by itself.

How a time step is recorded (the choice that decides speed):

* The input half of every gate, x W_ih^T + b, is one matmul over all time steps
  of a layer (as PyTorch's CPU path does), split into steps by one unbind (or,
  for a PackedSequence, one split by batch size).
* Per step there remain the hidden half h W_hh^T (one mm) and the element-wise
  rest. For LSTM and GRU that rest is PyTorch's fused cell entry
  (`_thnn_fused_lstm_cell`, `_thnn_fused_gru_cell`, runtime/ops/recurrent.py):
  one node per step, whose backward is a few numpy passes over the saved
  activated gates. PyTorch's CPU path instead records the composite cell
  (chunk, three sigmoids, two tanhs, the products: about a dozen nodes per
  step), which costs yamlgrad a Python node each; the fused entry gives the same
  gradients (both are checked against torch's) with a fraction of the nodes
  (benchmarks/rnn.py measures it). The cells record what PyTorch's CUDA path
  records (ThnnFusedLstmCellBackward0); RNN's tanh/relu step is small and stays
  a composite, as in PyTorch.
* An LSTM's two biases enter once per layer as their sum (folded into the input
  half); a GRU's hidden bias stays with the hidden half, where its n part is
  gated by r.

A PackedSequence runs the same loop with a batch that shrinks over time
(forward direction: the rows of sequences that ended are set aside as their
final state) or grows (reverse direction: rows join from the initial state),
as PyTorch's packed layers do.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from yamlgrad.generated import VariableType
from yamlgrad.runtime import factories
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.nn import functional as F
from yamlgrad.runtime.nn.functional_cells import (
    gru_cell,
    lstm_cell,
    rnn_relu_cell,
    rnn_tanh_cell,
)
from yamlgrad.runtime.nn import init
from yamlgrad.runtime.nn.module import Module
from yamlgrad.runtime.nn.parameter import Parameter
from yamlgrad.runtime.nn.utils.rnn import PackedSequence

__all__ = [
    "RNNBase",
    "RNN",
    "LSTM",
    "GRU",
    "RNNCellBase",
    "RNNCell",
    "LSTMCell",
    "GRUCell",
]

GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _empty(*shape: int, dtype: Any) -> Parameter:
    return Parameter(factories.empty(*shape, dtype=dtype))


def _apply_permutation(tensor: Tensor, permutation: Tensor, dim: int = 1) -> Tensor:
    return tensor.index_select(dim, permutation)


# -- one time step -----------------------------------------------------------------
#
# A step function takes the input half of the gates for this step (`gates_in`),
# the state (a tuple: (h,) or (h, c)) and the layer's prepared weights, and
# returns the new state.


class _LayerWeights:
    """One direction of one layer, prepared once per forward: W_hh^T, W_hr^T and
    the biases as each step function uses them."""

    __slots__ = ("w_ih", "input_bias", "w_hh_t", "hidden_bias", "w_hr_t")

    def __init__(self, mode: str, weights: Sequence[Tensor], bias: bool) -> None:
        w_ih, w_hh = weights[0], weights[1]
        b_ih, b_hh = (weights[2], weights[3]) if bias else (None, None)
        w_hr = weights[-1] if len(weights) in (3, 5) else None
        self.w_ih = w_ih
        self.w_hh_t = w_hh.t()
        self.w_hr_t = None if w_hr is None else w_hr.t()
        if mode == "GRU" or b_ih is None:
            self.input_bias, self.hidden_bias = b_ih, b_hh
        else:
            self.input_bias, self.hidden_bias = b_ih + b_hh, None


def _hidden_half(h: Tensor, weights: _LayerWeights) -> Tensor:
    if weights.hidden_bias is None:
        return VariableType.mm(h, weights.w_hh_t)
    return VariableType.addmm(weights.hidden_bias, h, weights.w_hh_t)


def _rnn_tanh_step(gates_in: Tensor, state: tuple, weights: _LayerWeights) -> tuple:
    (h,) = state
    return (VariableType.addmm(gates_in, h, weights.w_hh_t).tanh(),)


def _rnn_relu_step(gates_in: Tensor, state: tuple, weights: _LayerWeights) -> tuple:
    (h,) = state
    return (VariableType.addmm(gates_in, h, weights.w_hh_t).relu(),)


def _lstm_step(gates_in: Tensor, state: tuple, weights: _LayerWeights) -> tuple:
    h, c = state
    h, c, _ = VariableType._thnn_fused_lstm_cell(gates_in, _hidden_half(h, weights), c)
    if weights.w_hr_t is not None:
        h = VariableType.mm(h, weights.w_hr_t)
    return h, c


def _gru_step(gates_in: Tensor, state: tuple, weights: _LayerWeights) -> tuple:
    (h,) = state
    h, _ = VariableType._thnn_fused_gru_cell(gates_in, _hidden_half(h, weights), h)
    return (h,)


STEPS: dict[str, Callable[[Tensor, tuple, _LayerWeights], tuple]] = {
    "RNN_TANH": _rnn_tanh_step,
    "RNN_RELU": _rnn_relu_step,
    "LSTM": _lstm_step,
    "GRU": _gru_step,
}


# -- one direction of one layer ----------------------------------------------------


def _direction(
    mode: str,
    input: Tensor,
    batch_sizes: list[int] | None,
    state: tuple,
    weights: _LayerWeights,
    reverse: bool,
) -> tuple[Tensor, tuple]:
    """(output, final state) of one direction: `input` is (T, N, I), or a packed
    sequence's data (sum of batch_sizes, I)."""
    step = STEPS[mode]
    gates = F.linear(input, weights.w_ih, weights.input_bias)
    if batch_sizes is None:
        steps = gates.unbind(0)
        sizes = [input.shape[1]] * len(steps)
    else:
        steps = VariableType.split_with_sizes(gates, batch_sizes, 0)
        sizes = batch_sizes
    outputs: list[Tensor] = [None] * len(steps)  # type: ignore[list-item]
    if not reverse:
        ended: list[tuple] = []  # final states of sequences that have ended
        for t, gates_in in enumerate(steps):
            size = sizes[t]
            if size < state[0].shape[0]:
                ended.append(tuple(s[size:] for s in state))
                state = tuple(s[:size] for s in state)
            state = step(gates_in, state, weights)
            outputs[t] = state[0]
        if ended:
            parts = [state, *reversed(ended)]
            state = tuple(VariableType.cat(list(p), 0) for p in zip(*parts))
    else:
        initial = state
        state = tuple(s[: sizes[-1]] for s in initial) if batch_sizes else state
        for t in range(len(steps) - 1, -1, -1):
            size, current = sizes[t], state[0].shape[0]
            if size > current:
                state = tuple(
                    VariableType.cat([s, s0[current:size]], 0)
                    for s, s0 in zip(state, initial)
                )
            state = step(steps[t], state, weights)
            outputs[t] = state[0]
    if batch_sizes is None:
        return VariableType.stack(outputs, 0), state
    return VariableType.cat(outputs, 0), state


def _run(
    mode: str,
    input: Tensor,
    batch_sizes: list[int] | None,
    hx: tuple[Tensor, ...],
    flat_weights: list[Tensor],
    bias: bool,
    num_layers: int,
    dropout: float,
    training: bool,
    bidirectional: bool,
) -> tuple[Tensor, tuple[Tensor, ...]]:
    """PyTorch's aten::rnn_tanh / lstm / gru on a (T, N, I) input or packed data:
    (output, final states stacked as hx is)."""
    directions = 2 if bidirectional else 1
    per_layer = len(flat_weights) // (num_layers * directions)
    initial = [h.unbind(0) for h in hx]
    finals: list[list[Tensor]] = [[] for _ in hx]
    layer_input = input
    for layer in range(num_layers):
        outputs = []
        for direction in range(directions):
            index = layer * directions + direction
            weights = _LayerWeights(
                mode, flat_weights[index * per_layer : (index + 1) * per_layer], bias
            )
            state = tuple(h[index] for h in initial)
            output, state = _direction(
                mode, layer_input, batch_sizes, state, weights, direction == 1
            )
            outputs.append(output)
            for kept, s in zip(finals, state):
                kept.append(s)
        layer_input = outputs[0] if directions == 1 else VariableType.cat(outputs, -1)
        if dropout and training and layer < num_layers - 1:
            layer_input = F.dropout(layer_input, dropout, True)
    return layer_input, tuple(VariableType.stack(kept, 0) for kept in finals)


# -- the modules -------------------------------------------------------------------


def _uniform_by_hidden_size(module: Module, hidden_size: int) -> None:
    """Every parameter drawn from U(-k, k), k = 1 / sqrt(hidden_size)."""
    bound = 0 if hidden_size <= 0 else 1.0 / math.sqrt(hidden_size)
    for parameter in module.parameters():
        init.uniform_(parameter, -bound, bound)


# The options a layer's or a cell's repr shows when not at these defaults
# (a cell shows `nonlinearity` only if it has one).
_LAYER_DEFAULTS: tuple[tuple[str, Any], ...] = (
    ("proj_size", 0),
    ("num_layers", 1),
    ("bias", True),
    ("batch_first", False),
    ("dropout", 0),
    ("bidirectional", False),
)
_CELL_DEFAULTS: tuple[tuple[str, Any], ...] = (("bias", True), ("nonlinearity", "tanh"))


def _options_repr(module: Module, defaults: tuple[tuple[str, Any], ...]) -> str:
    shown = [f"{module.input_size}, {module.hidden_size}"]
    for option, default in defaults:
        if option in module.__dict__ and module.__dict__[option] != default:
            shown.append(f"{option}={module.__dict__[option]}")
    return ", ".join(shown)


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters of every layer and direction,
    their flat list, initialisation, input checks and repr."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        _check_options(
            input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size
        )
        if mode not in GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        # The options, as attributes of PyTorch's names (extra_repr, state).
        for option, value in (
            ("mode", mode),
            ("input_size", input_size),
            ("hidden_size", hidden_size),
            ("num_layers", num_layers),
            ("bias", bias),
            ("batch_first", batch_first),
            ("dropout", float(dropout)),
            ("bidirectional", bidirectional),
            ("proj_size", proj_size),
        ):
            setattr(self, option, value)
        gate_size = GATES[mode] * hidden_size
        directions = 2 if bidirectional else 1
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input_size = (
                    input_size if layer == 0 else real_hidden_size * directions
                )
                shapes = [(gate_size, layer_input_size), (gate_size, real_hidden_size)]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    shapes += [(gate_size,), (gate_size,)]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    shapes += [(proj_size, hidden_size)]
                    names += ["weight_hr_l{}{}"]
                suffix = "_reverse" if direction == 1 else ""
                names = [name.format(layer, suffix) for name in names]
                for name, shape in zip(names, shapes):
                    setattr(self, name, _empty(*shape, dtype=dtype))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self._init_flat_weights()
        self.reset_parameters()

    def _init_flat_weights(self) -> None:
        self._flat_weights = [getattr(self, n, None) for n in self._flat_weights_names]
        self.flatten_parameters()

    def __setattr__(self, attr: str, value: Any) -> None:
        names = self.__dict__.get("_flat_weights_names")
        if names is not None and attr in names and "_flat_weights" in self.__dict__:
            self._flat_weights[names.index(attr)] = value
        super().__setattr__(attr, value)

    def flatten_parameters(self) -> None:
        """PyTorch packs the weights into one buffer for cuDNN; there is no such
        path here, so this is a no-op, as PyTorch's is off the GPU."""

    def _apply(self, fn: Any) -> Module:
        result = super()._apply(fn)
        self._init_flat_weights()
        return result

    def reset_parameters(self) -> None:
        _uniform_by_hidden_size(self, self.hidden_size)

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, w) for w in weights] for weights in self._all_weights]

    def _update_flat_weights(self) -> None:
        current = [getattr(self, n, None) for n in self._flat_weights_names]
        if any(a is not b for a, b in zip(current, self._flat_weights)):
            self._init_flat_weights()

    # -- checks, PyTorch's ---------------------------------------------------------

    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        """The input's dtype (the weights'), rank (2 packed, else 3) and features."""
        wanted, got = self._flat_weights[0].dtype, input.dtype
        if got != wanted:
            raise ValueError(
                f"RNN input dtype ({got}) does not match weight dtype ({wanted}). "
                f"Convert input: input.to({wanted}), or convert model: "
                f"model.to({got})"
            )
        rank = 3 if batch_sizes is None else 2
        if input.dim() != rank:
            raise RuntimeError(f"input must have {rank} dimensions, got {input.dim()}")
        features = input.size(-1)
        if features != self.input_size:
            raise RuntimeError(
                "input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {features}"
            )

    def get_expected_hidden_size(
        self, input: Tensor, batch_sizes: Tensor | None
    ) -> tuple[int, int, int]:
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self._num_states(), self._mini_batch(input, batch_sizes), size)

    def _num_states(self) -> int:
        return self.num_layers * (2 if self.bidirectional else 1)

    def _mini_batch(self, input: Tensor, batch_sizes: Tensor | None) -> int:
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return input.size(0) if self.batch_first else input.size(1)

    def check_hidden_size(
        self,
        hx: Tensor,
        expected_hidden_size: tuple[int, int, int],
        msg: str = "Expected hidden size {}, got {}",
    ) -> None:
        """`msg` names the expected and the actual size when they differ."""
        actual = list(hx.size())
        if actual != list(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, actual))

    def check_forward_args(
        self, input: Tensor, hidden: Tensor, batch_sizes: Tensor | None
    ) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(
            hidden, self.get_expected_hidden_size(input, batch_sizes)
        )

    def permute_hidden(self, hx: Tensor, permutation: Tensor | None) -> Tensor:
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self) -> str:
        return _options_repr(self, _LAYER_DEFAULTS)

    # -- the forward shared by the three -------------------------------------------

    def _forward(self, input: Any, hx: Any, lstm: bool) -> tuple[Any, Any]:
        """Unpack, check, run, pack: PyTorch's three forwards in one. `hx` is a
        Tensor, or (h, c) for an LSTM; None gives zeros."""
        self._update_flat_weights()
        name = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(self.mode, self.mode)
        packed = isinstance(input, PackedSequence)
        is_batched = True
        batch_dim = 0 if self.batch_first else 1
        if packed:
            input, batch_sizes, sorted_indices, unsorted_indices = input
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            if input.dim() not in (2, 3):
                noun = " tensor" if name == "RNN" else ""
                raise ValueError(
                    f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
                    f"{noun} instead"
                )
            is_batched = input.dim() == 3
            if not is_batched:
                input = input.unsqueeze(batch_dim)
            if hx is not None:
                hx = _batched_hidden(hx, is_batched, lstm)
        sizes = self._state_sizes(input, batch_sizes, lstm)
        if hx is None:
            hx = tuple(factories.zeros(*s, dtype=input.dtype) for s in sizes)
            hx = hx if lstm else hx[0]
        elif packed:
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(input, hx, batch_sizes)
        states = hx if lstm else (hx,)
        if not packed and self.batch_first:
            input = input.transpose(0, 1)
        output, finals = _run(
            self.mode,
            input,
            None if batch_sizes is None else batch_sizes.tolist(),
            tuple(states),
            self._flat_weights,
            self.bias,
            self.num_layers,
            self.dropout,
            self.training,
            self.bidirectional,
        )
        hidden = finals if lstm else finals[0]
        if packed:
            output = PackedSequence(
                output, batch_sizes, sorted_indices, unsorted_indices
            )
            return output, self.permute_hidden(hidden, unsorted_indices)
        if self.batch_first:
            output = output.transpose(0, 1)
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = tuple(h.squeeze(1) for h in hidden) if lstm else hidden.squeeze(1)
        return output, self.permute_hidden(hidden, unsorted_indices)

    def _state_sizes(
        self, input: Tensor, batch_sizes: Tensor | None, lstm: bool
    ) -> list[tuple[int, int, int]]:
        h_size = self.get_expected_hidden_size(input, batch_sizes)
        if not lstm:
            return [(h_size[0], h_size[1], self.hidden_size)]
        return [h_size, (h_size[0], h_size[1], self.hidden_size)]


def _batched_hidden(hx: Any, is_batched: bool, lstm: bool) -> Any:
    """hx as 3-D states, with PyTorch's errors for the wrong rank."""
    if lstm:
        dims = (hx[0].dim(), hx[1].dim())
        want = 3 if is_batched else 2
        if dims != (want, want):
            kind = "batched 3-D" if is_batched else "unbatched 2-D"
            raise RuntimeError(
                f"For {kind} input, hx and cx should also be {want}-D but got "
                f"({dims[0]}-D, {dims[1]}-D) tensors"
            )
        return hx if is_batched else (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
    if is_batched and hx.dim() != 3:
        raise RuntimeError(
            f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor"
        )
    if not is_batched:
        if hx.dim() != 2:
            raise RuntimeError(
                "For unbatched 2-D input, hx should also be 2-D but got "
                f"{hx.dim()}-D tensor"
            )
        return hx.unsqueeze(1)
    return hx


def _check_options(
    input_size: Any,
    hidden_size: Any,
    num_layers: int,
    bias: Any,
    batch_first: Any,
    dropout: Any,
    proj_size: int,
) -> None:
    """PyTorch's checks of an RNN's constructor arguments, in its order."""
    if (
        not isinstance(dropout, numbers.Number)
        or isinstance(dropout, bool)
        or not 0 <= dropout <= 1
    ):
        raise ValueError(
            "dropout should be a number in range [0, 1] representing the "
            "probability of an element being zeroed"
        )
    if dropout > 0 and num_layers == 1:
        warnings.warn(
            "dropout option adds dropout after all but last recurrent layer, so "
            "non-zero dropout expects num_layers greater than 1, but got "
            f"dropout={dropout} and num_layers={num_layers}",
            stacklevel=4,
        )
    for name, value, kind in (
        ("bias", bias, bool),
        ("batch_first", batch_first, bool),
        ("input_size", input_size, int),
    ):
        if not isinstance(value, kind):
            raise TypeError(
                f"{name} should be of type {kind.__name__}, got: "
                f"{type(value).__name__}"
            )
    if input_size <= 0:
        raise ValueError("input_size must be greater than zero")
    if not isinstance(hidden_size, int):
        raise TypeError(
            f"hidden_size should be of type int, got: {type(hidden_size).__name__}"
        )
    if hidden_size <= 0:
        raise ValueError("hidden_size must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError(
            "proj_size should be a positive integer or zero to disable projections"
        )
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


_RNN_MODES = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}

ERR_PROJ_SIZE = "proj_size argument is only supported for LSTM, not RNN or GRU"


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu).

    >>> rnn = RNN(4, 3, num_layers=2)
    >>> output, h_n = rnn(yg.randn(5, 2, 4))
    >>> tuple(output.shape), tuple(h_n.shape)
    ((5, 2, 3), (2, 2, 3))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError(ERR_PROJ_SIZE)
        # `nonlinearity` is the fourth positional argument, after num_layers.
        positional = list(args)
        if len(positional) > 3:
            chosen = positional.pop(3)
        else:
            chosen = kwargs.pop("nonlinearity", "tanh")
        self.nonlinearity = chosen
        mode = _RNN_MODES.get(chosen)
        if mode is None:
            raise ValueError(
                f"Unknown nonlinearity '{chosen}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, *positional, **kwargs)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        return self._forward(input, hx, lstm=False)


class LSTM(RNNBase):
    """Long short-term memory: gates i, f, g, o; c' = f c + i g, h' = o tanh(c'),
    projected by W_hr when proj_size > 0.

    >>> lstm = LSTM(4, 3, batch_first=True)
    >>> output, (h_n, c_n) = lstm(yg.randn(2, 5, 4))
    >>> tuple(output.shape), tuple(h_n.shape), tuple(c_n.shape)
    ((2, 5, 3), (1, 2, 3), (1, 2, 3))
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(
        self, input: Tensor, batch_sizes: Tensor | None
    ) -> tuple[int, int, int]:
        return (
            self._num_states(),
            self._mini_batch(input, batch_sizes),
            self.hidden_size,
        )

    def check_forward_args(  # type: ignore[override]
        self, input: Tensor, hidden: tuple[Tensor, Tensor], batch_sizes: Tensor | None
    ) -> None:
        self.check_input(input, batch_sizes)
        expected = (
            self.get_expected_hidden_size(input, batch_sizes),
            self.get_expected_cell_size(input, batch_sizes),
        )
        for index, (state, size) in enumerate(zip(hidden, expected)):
            self.check_hidden_size(
                state, size, f"Expected hidden[{index}] size {{}}, got {{}}"
            )

    def permute_hidden(  # type: ignore[override]
        self, hx: tuple[Tensor, Tensor], permutation: Tensor | None
    ) -> tuple[Tensor, Tensor]:
        if permutation is None:
            return hx
        h, c = hx
        return _apply_permutation(h, permutation), _apply_permutation(c, permutation)

    def forward(
        self, input: Any, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Any, tuple[Tensor, Tensor]]:
        return self._forward(input, hx, lstm=True)


class GRU(RNNBase):
    """Gated recurrent unit: gates r, z, n; n = tanh(W_in x + b_in + r (W_hn h +
    b_hn)), h' = (1 - z) n + z h."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError(ERR_PROJ_SIZE)
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        return self._forward(input, hx, lstm=False)


# -- cells -------------------------------------------------------------------------


class RNNCellBase(Module):
    """What the cells share: weight_ih, weight_hh, bias_ih, bias_hh and their
    initialisation."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        rows = num_chunks * hidden_size
        self.weight_ih = _empty(rows, input_size, dtype=dtype)
        self.weight_hh = _empty(rows, hidden_size, dtype=dtype)
        for name in ("bias_ih", "bias_hh"):
            self.register_parameter(name, _empty(rows, dtype=dtype) if bias else None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        return _options_repr(self, _CELL_DEFAULTS)

    def reset_parameters(self) -> None:
        _uniform_by_hidden_size(self, self.hidden_size)

    def _batched(
        self, name: str, input: Tensor, hx: Any, count: int
    ) -> tuple[Tensor, tuple[Tensor, ...], bool]:
        """(2-D input, 2-D states, is_batched), with PyTorch's rank errors;
        missing states are zeros."""
        if input.dim() not in (1, 2):
            raise ValueError(
                f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead"
            )
        states = None if hx is None else (tuple(hx) if count == 2 else (hx,))
        for index, value in enumerate(states or ()):
            if value.dim() not in (1, 2):
                which = f"hx[{index}]" if count == 2 else "hidden"
                raise ValueError(
                    f"{name}: Expected {which} to be 1D or 2D, got {value.dim()}D "
                    "instead"
                )
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if states is None:
            zeros = factories.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
            states = (zeros,) * count
        elif not is_batched:
            states = tuple(s.unsqueeze(0) for s in states)
        _check_cell_input(input, self.weight_ih.shape[1])
        for index, state in enumerate(states):
            _check_cell_hidden(input, state, str(index), self.hidden_size)
        return input, states, is_batched


def _check_cell_input(input: Tensor, input_size: int) -> None:
    if input.size(1) != input_size:
        raise RuntimeError(
            f"input has inconsistent input_size: got {input.size(1)} expected "
            f"{input_size}"
        )


def _check_cell_hidden(input: Tensor, hx: Tensor, label: str, hidden_size: int) -> None:
    if input.size(0) != hx.size(0):
        raise RuntimeError(
            f"Input batch size {input.size(0)} doesn't match hidden{label} batch size "
            f"{hx.size(0)}"
        )
    if hx.size(1) != hidden_size:
        raise RuntimeError(
            f"hidden{label} has inconsistent hidden_size: got {hx.size(1)}, expected "
            f"{hidden_size}"
        )


class RNNCell(RNNCellBase):
    """One Elman RNN step: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, (h,), is_batched = self._batched("RNNCell", input, hx, 1)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        cell = rnn_tanh_cell if self.nonlinearity == "tanh" else rnn_relu_cell
        out = cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if is_batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: (h', c') from x and (h, c); one fused cell node."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(
        self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        input, (h, c), is_batched = self._batched("LSTMCell", input, hx, 2)
        h, c = lstm_cell(
            input, (h, c), self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh
        )
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: h' from x and h; one fused cell node."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, (h,), is_batched = self._batched("GRUCell", input, hx, 1)
        out = gru_cell(
            input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh
        )
        return out if is_batched else out.squeeze(0)
