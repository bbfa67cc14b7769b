"""Recurrent, attention and transformer modules against torch's with torch's
weights: each torch module's state_dict is loaded into the yamlgrad module of
the same construction, both run on the same inputs (float64), and the outputs
and the gradients of a weighted sum of them with respect to every input and
every parameter must agree."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg

torch = pytest.importorskip("torch")

RTOL, ATOL = 1e-9, 1e-10


def _leaves(value: Any) -> list[Any]:
    """The tensors of a module's output (a PackedSequence gives its data)."""
    if value is None:
        return []
    if hasattr(value, "batch_sizes") and hasattr(value, "data"):
        return [value.data]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _leaves(item)]
    return [value]


def _numpy(t: Any) -> np.ndarray:
    return t.detach().numpy()


def check(
    build: Callable[[Any], Any],
    inputs: Callable[[Any, list[np.ndarray]], tuple[list[Any], Callable]],
    arrays: list[np.ndarray],
) -> None:
    """`build(lib)` makes the module; `inputs(lib, arrays)` gives the leaf
    tensors (requiring grad) and a function calling the module on them."""
    torch.manual_seed(0)
    theirs = build(torch).double().train()
    mine = build(yg).double().train()
    mine.load_state_dict(
        {k: yg.tensor(_numpy(v)) for k, v in theirs.state_dict().items()}
    )
    results = []
    for lib, module in ((torch, theirs), (yg, mine)):
        leaves, call = inputs(lib, arrays)
        outputs = _leaves(call(module, *leaves))
        rng = np.random.default_rng(1)
        loss = sum(
            (o * lib.tensor(rng.standard_normal(tuple(o.shape)))).sum() for o in outputs
        )
        loss.backward()
        grads = [leaf.grad for leaf in leaves] + [
            p.grad for _, p in sorted(module.named_parameters())
        ]
        names = [n for n, _ in sorted(module.named_parameters())]
        results.append((outputs, grads, names))
    (t_out, t_grads, t_names), (y_out, y_grads, y_names) = results
    assert t_names == y_names
    assert len(t_out) == len(y_out)
    for a, b in zip(t_out, y_out):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(_numpy(b), _numpy(a), rtol=RTOL, atol=ATOL)
    for name, a, b in zip(["input"] * 9 + t_names, t_grads, y_grads):
        assert (a is None) == (b is None), name
        if a is not None:
            np.testing.assert_allclose(
                _numpy(b), _numpy(a), rtol=RTOL, atol=ATOL, err_msg=name
            )


def _randn(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def _leaf(lib: Any, array: np.ndarray) -> Any:
    return lib.tensor(array, dtype=lib.float64, requires_grad=True)


# -- recurrent ---------------------------------------------------------------------

RECURRENT = {
    "rnn_tanh_2layers_bidirectional": ("RNN", {"num_layers": 2, "bidirectional": True}),
    "rnn_relu_batch_first": ("RNN", {"nonlinearity": "relu", "batch_first": True}),
    "lstm_proj_2layers": ("LSTM", {"num_layers": 2, "proj_size": 3}),
    "lstm_bidirectional_proj_batch_first": (
        "LSTM",
        {"bidirectional": True, "proj_size": 2, "batch_first": True},
    ),
    "lstm_no_bias_3layers": ("LSTM", {"num_layers": 3, "bias": False}),
    "gru_2layers_bidirectional_batch_first": (
        "GRU",
        {"num_layers": 2, "bidirectional": True, "batch_first": True},
    ),
}


@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("case", list(RECURRENT))
def test_recurrent_layers(case: str, with_state: bool) -> None:
    name, options = RECURRENT[case]
    batch_first = options.get("batch_first", False)
    states = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
    out_size = options.get("proj_size", 0) or 5
    seq = _randn(3, 6, 4) if batch_first else _randn(6, 3, 4)
    arrays = [seq, _randn(states, 3, out_size, seed=2), _randn(states, 3, 5, seed=3)]

    def inputs(lib: Any, arrays: list[np.ndarray]) -> tuple[list[Any], Callable]:
        leaves = [_leaf(lib, arrays[0])]
        if with_state:
            leaves.append(_leaf(lib, arrays[1]))
            if name == "LSTM":
                leaves.append(_leaf(lib, arrays[2]))

        def call(module: Any, x: Any, *state: Any) -> Any:
            if not state:
                return module(x)
            return module(x, tuple(state) if name == "LSTM" else state[0])

        return leaves, call

    check(lambda lib: getattr(lib.nn, name)(4, 5, **options), inputs, arrays)


@pytest.mark.parametrize("case", list(RECURRENT))
def test_recurrent_layers_on_packed_input(case: str) -> None:
    name, options = RECURRENT[case]
    batch_first = options.get("batch_first", False)
    seq = _randn(4, 6, 4) if batch_first else _randn(6, 4, 4)
    lengths = [3, 6, 1, 4]  # unsorted: enforce_sorted=False

    def inputs(lib: Any, arrays: list[np.ndarray]) -> tuple[list[Any], Callable]:
        rnn_utils = lib.nn.utils.rnn

        def call(module: Any, x: Any) -> Any:
            packed = rnn_utils.pack_padded_sequence(
                x, lengths, batch_first=batch_first, enforce_sorted=False
            )
            output, state = module(packed)
            padded, _ = rnn_utils.pad_packed_sequence(output, batch_first=batch_first)
            return padded, state

        return [_leaf(lib, arrays[0])], call

    check(lambda lib: getattr(lib.nn, name)(4, 5, **options), inputs, [seq])


# -- attention -----------------------------------------------------------------------

ATTENTION = {
    "plain": ({}, {}),
    "kdim_vdim": ({"kdim": 3, "vdim": 2}, {}),
    "bias_kv_zero_attn": ({"add_bias_kv": True, "add_zero_attn": True}, {}),
    "no_bias_batch_first": ({"bias": False, "batch_first": True}, {}),
    "bool_masks": ({}, {"attn_mask": "bool", "key_padding_mask": "bool"}),
    "float_masks_per_head": (
        {"kdim": 3, "vdim": 2},
        {"attn_mask": "float", "key_padding_mask": "float", "average": False},
    ),
    "causal_bias_kv": ({"add_bias_kv": True}, {"attn_mask": "causal"}),
}


@pytest.mark.parametrize("case", list(ATTENTION))
def test_multihead_attention(case: str) -> None:
    options, masks = ATTENTION[case]
    batch_first = options.get("batch_first", False)
    kdim, vdim = options.get("kdim", 8), options.get("vdim", 8)
    seq_q, seq_k, batch = 4, 5, 2

    def shaped(length: int, width: int, seed: int) -> np.ndarray:
        if batch_first:
            return _randn(batch, length, width, seed=seed)
        return _randn(length, batch, width, seed=seed)

    arrays = [shaped(seq_q, 8, 0), shaped(seq_k, kdim, 1), shaped(seq_k, vdim, 2)]
    rng = np.random.default_rng(5)
    padding = rng.random((batch, seq_k)) < 0.3
    padding[:, 0] = False  # no row fully masked
    attn = rng.random((seq_q, seq_k)) < 0.3
    attn[:, 0] = False
    if masks.get("attn_mask") == "causal":
        seq_k = seq_q
        arrays = [shaped(seq_q, 8, 0), shaped(seq_q, kdim, 1), shaped(seq_q, vdim, 2)]
        attn = np.triu(np.ones((seq_q, seq_q), dtype=bool), 1)
        padding = padding[:, :seq_q]

    noise = np.random.default_rng(6)

    def mask_array(kind: str | None, mask: np.ndarray) -> np.ndarray | None:
        if kind is None:
            return None
        if kind == "float":
            return np.where(mask, -1e4, 0.5 * noise.standard_normal(mask.shape))
        return mask

    kind = masks.get("attn_mask")
    attn_array = mask_array("bool" if kind == "causal" else kind, attn)
    padding_array = mask_array(masks.get("key_padding_mask"), padding)

    def inputs(lib: Any, arrays: list[np.ndarray]) -> tuple[list[Any], Callable]:
        attn_mask, key_padding_mask = (
            None if m is None else lib.tensor(m) for m in (attn_array, padding_array)
        )

        def call(module: Any, q: Any, k: Any, v: Any) -> Any:
            return module(
                q,
                k,
                v,
                attn_mask=attn_mask,
                key_padding_mask=key_padding_mask,
                average_attn_weights=masks.get("average", True),
            )

        return [_leaf(lib, a) for a in arrays], call

    check(
        lambda lib: lib.nn.MultiheadAttention(8, 2, dropout=0.0, **options),
        inputs,
        arrays,
    )


# -- transformers ----------------------------------------------------------------------

LAYER_OPTIONS = {
    "relu_post_norm": {"activation": "relu", "norm_first": False},
    "gelu_pre_norm": {"activation": "gelu", "norm_first": True},
    "gelu_callable_batch_first": {"activation": "gelu_fn", "batch_first": True},
    "relu_pre_norm_batch_first": {
        "activation": "relu",
        "norm_first": True,
        "batch_first": True,
    },
}


def _layer_options(lib: Any, case: str) -> dict[str, Any]:
    options = dict(LAYER_OPTIONS[case])
    if options["activation"] == "gelu_fn":
        options["activation"] = lib.nn.functional.gelu
    return {"dim_feedforward": 12, "dropout": 0.0, **options}


def _sequence(case: str, length: int, seed: int) -> np.ndarray:
    if LAYER_OPTIONS[case].get("batch_first"):
        return _randn(2, length, 8, seed=seed)
    return _randn(length, 2, 8, seed=seed)


@pytest.mark.parametrize("case", list(LAYER_OPTIONS))
def test_transformer_encoder(case: str) -> None:
    padding = np.array([[False] * 4 + [True], [False] * 5])

    def build(lib: Any) -> Any:
        layer = lib.nn.TransformerEncoderLayer(8, 2, **_layer_options(lib, case))
        return lib.nn.TransformerEncoder(
            layer, 2, norm=lib.nn.LayerNorm(8), enable_nested_tensor=False
        )

    def inputs(lib: Any, arrays: list[np.ndarray]) -> tuple[list[Any], Callable]:
        mask = lib.nn.Transformer.generate_square_subsequent_mask(5, dtype=lib.float64)

        def call(module: Any, src: Any) -> Any:
            return module(src, mask=mask, src_key_padding_mask=lib.tensor(padding))

        return [_leaf(lib, arrays[0])], call

    check(build, inputs, [_sequence(case, 5, 0)])


@pytest.mark.parametrize("case", list(LAYER_OPTIONS))
def test_transformer_decoder(case: str) -> None:
    memory_padding = np.array([[False] * 5, [False] * 3 + [True] * 2])

    def build(lib: Any) -> Any:
        layer = lib.nn.TransformerDecoderLayer(8, 2, **_layer_options(lib, case))
        return lib.nn.TransformerDecoder(layer, 2, norm=lib.nn.LayerNorm(8))

    def inputs(lib: Any, arrays: list[np.ndarray]) -> tuple[list[Any], Callable]:
        tgt_mask = lib.nn.Transformer.generate_square_subsequent_mask(
            4, dtype=lib.float64
        )

        def call(module: Any, tgt: Any, memory: Any) -> Any:
            return module(
                tgt,
                memory,
                tgt_mask=tgt_mask,
                memory_key_padding_mask=lib.tensor(memory_padding),
            )

        return [_leaf(lib, a) for a in arrays], call

    check(build, inputs, [_sequence(case, 4, 0), _sequence(case, 5, 1)])


@pytest.mark.parametrize("case", list(LAYER_OPTIONS))
def test_transformer(case: str) -> None:
    def build(lib: Any) -> Any:
        return lib.nn.Transformer(
            8,
            2,
            num_encoder_layers=2,
            num_decoder_layers=1,
            **_layer_options(lib, case),
        )

    def inputs(lib: Any, arrays: list[np.ndarray]) -> tuple[list[Any], Callable]:
        tgt_mask = lib.nn.Transformer.generate_square_subsequent_mask(
            4, dtype=lib.float64
        )

        def call(module: Any, src: Any, tgt: Any) -> Any:
            return module(src, tgt, tgt_mask=tgt_mask, tgt_is_causal=True)

        return [_leaf(lib, a) for a in arrays], call

    check(build, inputs, [_sequence(case, 5, 0), _sequence(case, 4, 1)])
