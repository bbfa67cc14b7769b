"""The transformer layers, stacks and nn.Transformer against torch: with the same
weights, outputs and the gradients of inputs and every parameter, for the
options and masks, in float64 and float32; dropout in training (dropout=0) and in
evaluation; defaults, init, warnings and error texts."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
import yamlgrad.nn as nn
from support import torch_text

torch = pytest.importorskip("torch")

# Both libraries warn alike for a float mask beside a bool one; torch's nested
# tensors warn that they are a prototype.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Support for mismatched"),
    pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors"),
]

D, HEADS, FF, L, S, N = 8, 2, 16, 5, 4, 3
TOLERANCE = {"float64": (1e-10, 1e-11), "float32": (1e-4, 1e-5)}


def _close(ours: Any, theirs: Any, dtype: str, where: str) -> None:
    rtol, atol = TOLERANCE[dtype]
    got, want = ours.detach().numpy(), theirs.detach().numpy()
    assert got.shape == want.shape and got.dtype == want.dtype, where
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=where)


def _pair(build: Any, dtype: str, training: bool) -> tuple[nn.Module, Any]:
    """The module in both libraries with torch's weights; training mode with
    dropout=0 (or given), else evaluation mode."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # enable_nested_tensor: both warn alike
        reference = build(torch).to(getattr(torch, dtype))
        module = build(yg).to(getattr(yg, dtype))
    state = {k: v.detach().numpy() for k, v in reference.state_dict().items()}
    module.load_state_dict(state)
    module.train(training)
    reference.train(training)
    return module, reference


def _compare(
    build: Any, inputs: dict[str, Any], dtype: str, training: bool = True
) -> None:
    """Forward both with the same inputs (arrays; float ones require grad),
    backward a random cotangent, compare everything."""
    module, reference = _pair(build, dtype, training)
    ours, theirs, leaves = {}, {}, []
    for name, value in inputs.items():
        if isinstance(value, np.ndarray):
            grad = value.dtype.kind == "f" and not name.endswith("mask")
            value = value.astype(dtype) if value.dtype.kind == "f" else value
            ours[name] = yg.tensor(value, requires_grad=grad)
            theirs[name] = torch.tensor(value, requires_grad=grad)
            if grad:
                leaves.append(name)
        else:
            ours[name] = theirs[name] = value
    out, ref = module(**ours), reference(**theirs)
    _close(out, ref, dtype, "output")
    if not ref.requires_grad:
        return
    cotangent = np.random.default_rng(5).standard_normal(tuple(ref.shape)).astype(dtype)
    out.backward(yg.tensor(cotangent))
    ref.backward(torch.tensor(cotangent))
    for name in leaves:
        _close(ours[name].grad, theirs[name].grad, dtype, f"grad of {name}")
    params = dict(module.named_parameters())
    assert list(params) == [n for n, _ in reference.named_parameters()]
    for name, p in reference.named_parameters():
        _close(params[name].grad, p.grad, dtype, f"grad of {name}")


RNG = np.random.default_rng(0)
SRC = RNG.standard_normal((L, N, D))
TGT = RNG.standard_normal((S, N, D))
PADDING = np.zeros((N, L), dtype=bool)
PADDING[0, 3:] = PADDING[2, 4:] = True  # left aligned
CAUSAL = np.triu(np.full((L, L), -np.inf), 1)

LAYER_OPTIONS = {
    "default": {},
    "norm_first": {"norm_first": True},
    "gelu": {"activation": "gelu"},
    "callable": {"activation": "tanh"},
    "batch_first": {"batch_first": True},
    "no_bias": {"bias": False},
    "eps": {"layer_norm_eps": 1e-3},
}


def _layer_kwargs(lib: Any, options: dict, dropout: float) -> dict:
    kwargs = {"dim_feedforward": FF, "dropout": dropout, **options}
    if options.get("activation") == "tanh":
        kwargs["activation"] = lib.tanh
    return kwargs


def _batched(array: np.ndarray, options: dict) -> np.ndarray:
    return array.transpose(1, 0, 2) if options.get("batch_first") else array


ENCODER_MASKS = {
    "none": {},
    "causal": {"src_mask": CAUSAL},
    "causal_hint": {"src_mask": CAUSAL, "is_causal": True},
    "padding": {"src_key_padding_mask": PADDING},
    "both": {"src_mask": CAUSAL, "src_key_padding_mask": PADDING},
}


@pytest.mark.parametrize("dtype", TOLERANCE)
@pytest.mark.parametrize("masks", ENCODER_MASKS)
@pytest.mark.parametrize("options", LAYER_OPTIONS)
def test_encoder_layer_matches_torch(options: str, masks: str, dtype: str) -> None:
    opts = LAYER_OPTIONS[options]

    def build(lib: Any) -> Any:
        return lib.nn.TransformerEncoderLayer(D, HEADS, **_layer_kwargs(lib, opts, 0.0))

    inputs = {"src": _batched(SRC, opts), **ENCODER_MASKS[masks]}
    _compare(build, inputs, dtype)


DECODER_MASKS = {
    "none": {},
    "tgt_causal": {"tgt_mask": CAUSAL[:S, :S], "tgt_is_causal": True},
    "all": {
        "tgt_mask": CAUSAL[:S, :S],
        "memory_mask": RNG.random((S, L)) > 0.8,
        "tgt_key_padding_mask": PADDING[:, :S],
        "memory_key_padding_mask": PADDING,
    },
}


@pytest.mark.parametrize("dtype", TOLERANCE)
@pytest.mark.parametrize("masks", DECODER_MASKS)
@pytest.mark.parametrize("options", LAYER_OPTIONS)
def test_decoder_layer_matches_torch(options: str, masks: str, dtype: str) -> None:
    opts = LAYER_OPTIONS[options]

    def build(lib: Any) -> Any:
        return lib.nn.TransformerDecoderLayer(D, HEADS, **_layer_kwargs(lib, opts, 0.0))

    inputs = {
        "tgt": _batched(TGT, opts),
        "memory": _batched(SRC, opts),
        **DECODER_MASKS[masks],
    }
    _compare(build, inputs, dtype)


@pytest.mark.parametrize("dtype", TOLERANCE)
@pytest.mark.parametrize("masks", ENCODER_MASKS)
@pytest.mark.parametrize("training", [True, False])
def test_encoder_stack_with_norm_matches_torch(
    masks: str, training: bool, dtype: str
) -> None:
    def build(lib: Any) -> Any:
        dropout = 0.0 if training else 0.1
        layer = lib.nn.TransformerEncoderLayer(
            D, HEADS, dim_feedforward=FF, dropout=dropout, batch_first=True
        )
        return lib.nn.TransformerEncoder(layer, 2, lib.nn.LayerNorm(D))

    inputs = {"src": SRC.transpose(1, 0, 2), **ENCODER_MASKS[masks]}
    inputs = {("mask" if k == "src_mask" else k): v for k, v in inputs.items()}
    _compare(build, inputs, dtype, training)


def test_encoder_in_inference_zeroes_padded_positions_as_torch() -> None:
    """torch runs the layers on nested tensors there, padding with zeros."""

    def build(lib: Any) -> Any:
        layer = lib.nn.TransformerEncoderLayer(
            D, HEADS, dim_feedforward=FF, batch_first=True
        )
        return lib.nn.TransformerEncoder(layer, 2)

    module, reference = _pair(build, "float64", False)
    src = SRC.transpose(1, 0, 2)
    with yg.no_grad(), torch.no_grad():
        for padding in (PADDING, PADDING[:, ::-1].copy()):  # left aligned, then not
            out = module(yg.tensor(src), src_key_padding_mask=yg.tensor(padding))
            ref = reference(
                torch.tensor(src), src_key_padding_mask=torch.tensor(padding)
            )
            np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=1e-10)
    assert (out.numpy() != 0).all()


@pytest.mark.parametrize("dtype", TOLERANCE)
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("training", [True, False])
def test_transformer_matches_torch(
    norm_first: bool, training: bool, dtype: str
) -> None:
    def build(lib: Any) -> Any:
        return lib.nn.Transformer(
            D,
            HEADS,
            num_encoder_layers=2,
            num_decoder_layers=2,
            dim_feedforward=FF,
            dropout=0.0 if training else 0.1,
            norm_first=norm_first,
        )

    inputs = {
        "src": SRC,
        "tgt": TGT,
        "tgt_mask": CAUSAL[:S, :S],
        "src_key_padding_mask": PADDING,
        "memory_key_padding_mask": PADDING,
    }
    _compare(build, inputs, dtype, training)


def test_defaults_state_dict_and_init_match_torch() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, reference = nn.Transformer(), torch.nn.Transformer()
    ours = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    assert ours == {k: tuple(v.shape) for k, v in reference.state_dict().items()}
    layer = model.encoder.layers[0]
    assert (layer.linear1.out_features, layer.dropout.p, layer.norm1.eps) == (
        2048,
        0.1,
        1e-5,
    )
    assert layer.activation is yg.nn.functional.relu and not layer.norm_first
    weight = model.encoder.layers[0].linear1.weight.detach().numpy()
    bound = np.sqrt(6 / (512 + 2048))  # xavier_uniform_ over every dim > 1
    assert 0.9 * bound < np.abs(weight).max() <= bound * (1 + 1e-6)  # float32
    assert model.encoder.norm is not None and model.decoder.norm is not None
    stack = model.encoder.layers
    assert stack[0] is not stack[1]
    assert stack[0].linear1.weight is not stack[1].linear1.weight


def test_stack_layers_are_deep_copies_of_the_given_layer() -> None:
    layer = nn.TransformerEncoderLayer(D, HEADS, dim_feedforward=FF)
    encoder = nn.TransformerEncoder(layer, 3, enable_nested_tensor=False)
    for copy in encoder.layers:
        assert copy is not layer
        assert (copy.linear1.weight == layer.linear1.weight).all()
    with yg.no_grad():
        encoder.layers[0].linear1.weight.add_(1.0)
    assert not (
        encoder.layers[1].linear1.weight == encoder.layers[0].linear1.weight
    ).all()


def test_square_subsequent_mask_matches_torch() -> None:
    for dtype in (None, "float64"):
        ours = nn.Transformer.generate_square_subsequent_mask(
            4, dtype=None if dtype is None else getattr(yg, dtype)
        )
        theirs = torch.nn.Transformer.generate_square_subsequent_mask(
            4, dtype=None if dtype is None else getattr(torch, dtype)
        )
        assert (
            str(ours.dtype).rpartition(".")[2] == str(theirs.dtype).rpartition(".")[2]
        )
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def _messages(make: Any, kind: type = Exception) -> list[str]:
    texts = []
    for lib in (yg, torch):
        with pytest.raises(kind) as info:
            make(lib)
        texts.append(torch_text(info.value).replace("yamlgrad.", "torch."))
    return texts


def test_nested_tensor_warning_matches_torch() -> None:
    texts = []
    for lib in (yg, torch):
        layer = lib.nn.TransformerEncoderLayer(D, HEADS, dim_feedforward=FF)
        with pytest.warns(UserWarning) as record:
            lib.nn.TransformerEncoder(layer, 1)
        texts.append(str(record[0].message))
    assert texts[0] == texts[1]


ERRORS = {
    "activation": lambda lib: lib.nn.TransformerEncoderLayer(
        D, HEADS, activation="tanh"
    ),
    "batch": lambda lib: lib.nn.Transformer(D, HEADS, 1, 1, FF)(
        lib.zeros(L, 2, D), lib.zeros(S, 3, D)
    ),
    "features": lambda lib: lib.nn.Transformer(D, HEADS, 1, 1, FF)(
        lib.zeros(L, 2, D), lib.zeros(S, 2, D + 1)
    ),
    "divisible": lambda lib: lib.nn.TransformerEncoderLayer(10, 3),
}


@pytest.mark.parametrize("case", ERRORS)
def test_error_texts_match_torch(case: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _messages(ERRORS[case])
    assert ours == theirs


def test_layer_dropout_in_training_is_seeded_statistical_and_off_in_eval() -> None:
    p = 0.3
    layer = nn.TransformerEncoderLayer(
        D, HEADS, dim_feedforward=64, dropout=p, activation=yg.tanh
    )
    x = yg.randn(40, N, D)
    seen = []
    layer.dropout.register_forward_hook(lambda m, i, out: seen.append((i[0], out)))
    yg.manual_seed(1)
    first = layer(x)
    yg.manual_seed(1)
    second = layer(x)
    assert (first == second).all() and not (first == layer(x)).all()
    hidden, dropped = (t.detach().numpy() for t in seen[0])
    assert abs(np.mean(dropped == 0) - p) < 0.02
    kept = dropped != 0
    np.testing.assert_allclose(dropped[kept], hidden[kept] / (1 - p), rtol=1e-5)
    layer.eval()
    assert (layer(x) == layer(x)).all()


def test_attention_module_is_torch_nn_attention() -> None:
    import yamlgrad.nn.attention as ours
    from torch.nn import attention as theirs

    assert set(ours.__all__) <= set(theirs.__all__)
    assert ours.sdpa_kernel.__name__ == theirs.sdpa_kernel.__name__
