"""scaled_dot_product_attention, multi_head_attention_forward and
MultiheadAttention against torch: values, node names and gradients with respect
to every input and parameter, for the options, in float64 and float32; error
texts; dropout statistically."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
import yamlgrad.nn as nn
import yamlgrad.nn.functional as F
from yamlgrad.nn.attention import SDPBackend, sdpa_kernel
from support import torch_text

torch = pytest.importorskip("torch")
TF = torch.nn.functional

DTYPES = {"float64": (1e-12, 1e-12), "float32": (2e-5, 2e-6)}  # (rtol, atol)


def _pair(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> tuple:
    a = rng.standard_normal(shape).astype(dtype)
    return yg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _close(ours: Any, theirs: Any, dtype: str, where: str = "") -> None:
    rtol, atol = DTYPES[dtype]
    got = ours.detach().numpy() if isinstance(ours, yg.Tensor) else ours.numpy()
    want = theirs.detach().numpy()
    assert got.shape == want.shape, where
    assert got.dtype == want.dtype, where
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=where)


def _mask(value: Any, lib: Any, requires_grad: bool = False) -> Any:
    if value is None:
        return None
    return lib.tensor(value, requires_grad=requires_grad)


# -- scaled_dot_product_attention ---------------------------------------------------

# (query, key, value shapes, keyword arguments; "mask" is drawn: "bool" (with a
# fully masked row), "float", or "float_grad" (a mask that requires grad)).
SDPA_CASES = {
    "fused": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), {}),
    "value_dim_differs": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), {}),
    "three_dims": ((3, 4, 5), (3, 6, 5), (3, 6, 7), {}),
    "two_dims": ((4, 5), (6, 5), (6, 5), {}),
    "five_dims": ((2, 1, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4), {}),
    "causal": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), {"is_causal": True}),
    "causal_longer_query": (
        (1, 2, 6, 4),
        (1, 2, 3, 4),
        (1, 2, 3, 4),
        {"is_causal": True},
    ),
    "causal_math": ((3, 4, 5), (3, 6, 5), (3, 6, 5), {"is_causal": True}),
    "bool_mask": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), {"mask": (4, 6, "bool")}),
    "bool_mask_4d": (
        (2, 3, 4, 5),
        (2, 3, 6, 5),
        (2, 3, 6, 5),
        {"mask": (2, 1, 4, 6, "bool")},
    ),
    "bool_mask_math": ((3, 4, 5), (3, 6, 5), (3, 6, 7), {"mask": (4, 6, "bool")}),
    "float_mask": (
        (2, 3, 4, 5),
        (2, 3, 6, 5),
        (2, 3, 6, 5),
        {"mask": (1, 3, 1, 6, "float")},
    ),
    "float_mask_3d": (
        (2, 3, 4, 5),
        (2, 3, 6, 5),
        (2, 3, 6, 5),
        {"mask": (3, 4, 6, "float")},
    ),
    "mask_requires_grad": (
        (2, 3, 4, 5),
        (2, 3, 6, 5),
        (2, 3, 6, 5),
        {"mask": (4, 6, "float_grad")},
    ),
    "scale": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), {"scale": 0.3}),
    "negative_scale_math": ((3, 4, 5), (3, 6, 5), (3, 6, 5), {"scale": -0.3}),
    "gqa": ((2, 4, 3, 5), (2, 2, 6, 5), (2, 2, 6, 5), {"enable_gqa": True}),
    "gqa_causal": (
        (1, 6, 3, 4),
        (1, 2, 5, 4),
        (1, 2, 5, 4),
        {"enable_gqa": True, "is_causal": True},
    ),
    "gqa_math": ((4, 3, 5), (2, 6, 5), (2, 6, 5), {"enable_gqa": True}),
    "gqa_key_value_heads_differ": (
        (2, 4, 3, 5),
        (2, 1, 6, 5),
        (2, 4, 6, 5),
        {"enable_gqa": True},
    ),
    "broadcast_heads_math": ((2, 3, 4, 5), (2, 1, 6, 5), (2, 1, 6, 5), {}),
    "empty_source": ((1, 2, 3, 4), (1, 2, 0, 4), (1, 2, 0, 4), {}),
}


def _sdpa_inputs(case: str, dtype: str, seed: int = 0) -> tuple[list, list, dict, dict]:
    q_shape, k_shape, v_shape, kwargs = SDPA_CASES[case]
    rng = np.random.default_rng(seed)
    pairs = [_pair(rng, s, dtype) for s in (q_shape, k_shape, v_shape)]
    ours = {k: v for k, v in kwargs.items() if k != "mask"}
    theirs = dict(ours)
    if "mask" in kwargs:
        *shape, kind = kwargs["mask"]
        if kind == "bool":
            mask = rng.random(shape) > 0.3
            mask[..., 1, :] = False  # a row that attends to nothing
        else:
            mask = rng.standard_normal(shape).astype(dtype)
        grad = kind == "float_grad"
        ours["attn_mask"] = _mask(mask, yg, grad)
        theirs["attn_mask"] = _mask(mask, torch, grad)
    return [p[0] for p in pairs], [p[1] for p in pairs], ours, theirs


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", SDPA_CASES)
def test_sdpa_values_node_and_gradients_match_torch(case: str, dtype: str) -> None:
    ours, theirs, our_kw, their_kw = _sdpa_inputs(case, dtype)
    out = F.scaled_dot_product_attention(*ours, **our_kw)
    ref = TF.scaled_dot_product_attention(*theirs, **their_kw)
    _close(out, ref, dtype, "output")
    if ref.numel() and case != "empty_source":  # torch's empty path: a node of its own
        assert type(out.grad_fn).__name__ == type(ref.grad_fn).__name__
    cotangent = np.random.default_rng(1).standard_normal(tuple(ref.shape))
    out.backward(yg.tensor(cotangent.astype(dtype)))
    ref.backward(torch.tensor(cotangent.astype(dtype)))
    leaves = list(zip(ours, theirs))
    if case == "mask_requires_grad":
        leaves.append((our_kw["attn_mask"], their_kw["attn_mask"]))
    for name, (x, t) in zip(("query", "key", "value", "attn_mask"), leaves):
        _close(x.grad, t.grad, dtype, f"grad of {name}")


@pytest.mark.parametrize("case", ["fused", "gqa", "three_dims", "bool_mask"])
def test_sdpa_math_backend_matches_torch_math_backend(case: str) -> None:
    from torch.nn.attention import SDPBackend as TorchBackend
    from torch.nn.attention import sdpa_kernel as torch_kernel

    ours, theirs, our_kw, their_kw = _sdpa_inputs(case, "float64")
    with sdpa_kernel(SDPBackend.MATH):
        out = F.scaled_dot_product_attention(*ours, **our_kw)
    with torch_kernel(TorchBackend.MATH):
        ref = TF.scaled_dot_product_attention(*theirs, **their_kw)
    assert type(out.grad_fn).__name__ == type(ref.grad_fn).__name__
    _close(out, ref, "float64")


def test_sdpa_fully_masked_rows_are_zeros_with_zero_gradients() -> None:
    for shape in ((1, 2, 3, 4), (2, 3, 4)):
        q, k = (yg.randn(*shape, dtype=yg.float64, requires_grad=True) for _ in "qk")
        mask = yg.ones(3, 3, dtype=yg.bool)
        mask[1] = False
        out = F.scaled_dot_product_attention(q, k, k, attn_mask=mask)
        assert (out[..., 1, :] == 0).all()
        out.sum().backward()
        assert (q.grad[..., 1, :] == 0).all()


def test_sdpa_backend_enum_and_kernel_context_match_torch() -> None:
    from torch.nn.attention import SDPBackend as TorchBackend

    assert [(b.name, int(b)) for b in SDPBackend] == [
        (b.name, int(b)) for b in TorchBackend.__members__.values()
    ]
    assert repr(SDPBackend.MATH) == repr(TorchBackend.MATH)
    q = yg.randn(1, 2, 3, 4, requires_grad=True)
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]):
        fused = F.scaled_dot_product_attention(q, q, q)
        with sdpa_kernel(SDPBackend.MATH):
            math_path = F.scaled_dot_product_attention(q, q, q)
    assert (
        type(fused.grad_fn).__name__ == "ScaledDotProductFlashAttentionForCpuBackward0"
    )
    assert type(math_path.grad_fn).__name__ == "UnsafeViewBackward0"


def _errors(ours: Any, theirs: Any, kind: type = RuntimeError) -> tuple[str, str]:
    with pytest.raises(kind) as our_error:
        ours()
    with pytest.raises(kind) as their_error:
        theirs()
    return str(our_error.value), torch_text(their_error.value)


SDPA_ERRORS = {
    "causal_with_mask": (
        ((3, 4), (3, 4), (3, 4)),
        {"is_causal": True, "attn_mask": "bool"},
    ),
    "dtypes_differ": (((1, 3, 4), (1, 3, 4), (1, 3, 4)), {"key_dtype": "float32"}),
    "one_dim": (((4,), (2, 3, 4), (2, 3, 4)), {}),
    "integer_mask": (((1, 3, 4), (1, 3, 4), (1, 3, 4)), {"attn_mask": "int64"}),
    "half_mask": (((1, 3, 4), (1, 3, 4), (1, 3, 4)), {"attn_mask": "float16"}),
    "gqa_heads": (((1, 3, 2, 4), (1, 2, 2, 4), (1, 2, 2, 4)), {"enable_gqa": True}),
    "dropout_above_one": (((3, 4), (3, 4), (3, 4)), {"dropout_p": 1.5}),
    "negative_dropout_fused": (
        ((1, 1, 3, 4), (1, 1, 3, 4), (1, 1, 3, 4)),
        {"dropout_p": -0.5},
    ),
    "mask_shape": (((1, 3, 4), (1, 5, 4), (1, 5, 4)), {"attn_mask": "wrong_shape"}),
}


@pytest.mark.parametrize("case", SDPA_ERRORS)
def test_sdpa_error_texts_match_torch(case: str) -> None:
    shapes, spec = SDPA_ERRORS[case]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    kwargs = {k: v for k, v in spec.items() if k not in ("key_dtype", "attn_mask")}
    if "key_dtype" in spec:
        arrays[1] = arrays[1].astype(spec["key_dtype"])
    mask = spec.get("attn_mask")
    if mask == "bool":
        mask = np.ones((3, 3), dtype=bool)
    elif mask == "wrong_shape":
        mask = np.zeros((3, 4))
    elif mask is not None:
        mask = np.zeros((3, 3), dtype=mask)

    def call(lib: Any, function: Any) -> Any:
        args = [lib.tensor(a) for a in arrays]
        extra = {} if mask is None else {"attn_mask": lib.tensor(mask)}
        return lambda: function(*args, **kwargs, **extra)

    ours, theirs = _errors(
        call(yg, F.scaled_dot_product_attention),
        call(torch, TF.scaled_dot_product_attention),
    )
    assert ours == theirs


def test_sdpa_kernel_errors_match_torch() -> None:
    from torch.nn.attention import SDPBackend as TorchBackend
    from torch.nn.attention import sdpa_kernel as torch_kernel

    q, t = yg.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4)
    pairs = [
        ([], []),
        ([SDPBackend.EFFICIENT_ATTENTION], [TorchBackend.EFFICIENT_ATTENTION]),
    ]
    for ours, theirs in pairs:
        with sdpa_kernel(ours), torch_kernel(theirs):
            texts = _errors(
                lambda: F.scaled_dot_product_attention(q, q, q),
                lambda: TF.scaled_dot_product_attention(t, t, t),
            )
        assert texts[0] == texts[1]
    with (
        sdpa_kernel(SDPBackend.FLASH_ATTENTION),
        torch_kernel(TorchBackend.FLASH_ATTENTION),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            texts = _errors(
                lambda: F.scaled_dot_product_attention(q, q, q, dropout_p=0.5),
                lambda: TF.scaled_dot_product_attention(t, t, t, dropout_p=0.5),
            )
    assert texts[0] == texts[1]
    texts = _errors(
        lambda: sdpa_kernel("math").__enter__(),
        lambda: torch_kernel("math").__enter__(),
        AssertionError,
    )
    assert texts[0] == texts[1]


FUSED_ERRORS = {
    "three_dims": (((2, 3, 4), (2, 3, 4), (2, 3, 4)), {}),
    "dropout": (((1, 1, 3, 4),) * 3, {"dropout_p": 0.1}),
    "head_size": (((1, 1, 3, 4), (1, 1, 3, 4), (1, 1, 3, 2)), {}),
    "mask_dims": (((1, 2, 3, 4),) * 3, {"attn_mask": np.zeros((2, 3, 3))}),
    "mask_dtype": (((1, 2, 3, 4),) * 3, {"attn_mask": np.zeros((3, 3), dtype=bool)}),
}


@pytest.mark.parametrize("case", FUSED_ERRORS)
def test_fused_kernel_error_texts_match_torch(case: str) -> None:
    shapes, kwargs = FUSED_ERRORS[case]
    arrays = [np.zeros(s) for s in shapes]

    def call(lib: Any, function: Any) -> Any:
        extra = {
            k: lib.tensor(v) if isinstance(v, np.ndarray) else v
            for k, v in kwargs.items()
        }
        return lambda: function(*(lib.tensor(a) for a in arrays), **extra)

    ours, theirs = _errors(
        call(yg, yg._scaled_dot_product_flash_attention_for_cpu),
        call(torch, torch.ops.aten._scaled_dot_product_flash_attention_for_cpu),
    )
    assert ours == theirs


def test_sdpa_dropout_is_inverted_dropout_of_the_weights_and_seeded() -> None:
    p, source = 0.3, 50
    q = yg.zeros(1, 1, 400, 4)  # uniform weights 1 / S: the output is the weights
    v = yg.eye(source).reshape(1, 1, source, source)
    k = yg.zeros(1, 1, source, 4)
    yg.manual_seed(3)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
    yg.manual_seed(3)
    again = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
    assert (out == again).all()
    values = out.numpy()
    dropped = np.mean(values == 0)
    assert abs(dropped - p) < 0.01
    kept = values[values != 0]
    np.testing.assert_allclose(kept, 1 / source / (1 - p), rtol=1e-5)


# -- MultiheadAttention -------------------------------------------------------------

MHA_OPTIONS = {
    "default": {},
    "batch_first": {"batch_first": True},
    "kdim_vdim": {"kdim": 3, "vdim": 5},
    "bias_kv_zero_attn": {"add_bias_kv": True, "add_zero_attn": True},
    "no_bias": {"bias": False},
    "dropout_eval": {"dropout": 0.5},
}
MHA_MASKS = {
    "none": {},
    "padding": {"key_padding_mask": "bool"},
    "float_padding": {"key_padding_mask": "float"},
    "attn_2d": {"attn_mask": "bool"},
    "attn_3d_float": {"attn_mask": "float3d"},
    "both": {"key_padding_mask": "bool", "attn_mask": "bool"},
    "causal": {"attn_mask": "causal", "is_causal": True},
}
L, S, N, E, HEADS = 4, 6, 3, 8, 2


def _mha_pair(options: dict, dtype: str) -> tuple[nn.Module, Any]:
    torch.manual_seed(0)
    reference = torch.nn.MultiheadAttention(E, HEADS, **options).to(
        getattr(torch, dtype)
    )
    module = nn.MultiheadAttention(E, HEADS, dtype=getattr(yg, dtype), **options)
    module.load_state_dict(
        {k: v.detach().numpy() for k, v in reference.state_dict().items()}
    )
    if options.get("dropout"):
        module.eval()
        reference.eval()
    return module, reference


def _mha_masks(spec: dict, rng: np.random.Generator, dtype: str, batched: bool) -> dict:
    masks: dict[str, Any] = {}
    source = S if batched else S
    for name, kind in spec.items():
        if name == "is_causal":
            masks[name] = kind
        elif name == "key_padding_mask":
            pad = rng.random((N, source) if batched else (source,)) > 0.7
            pad[..., 0] = False
            masks[name] = (
                pad if kind == "bool" else np.where(pad, -np.inf, 0.0).astype(dtype)
            )
        elif kind == "bool":
            masks[name] = rng.random((L, S)) > 0.8
        elif kind == "causal":
            masks[name] = np.triu(np.full((L, S), -np.inf, dtype=dtype), 1)
        else:
            shape = (N * HEADS, L, S) if batched else (HEADS, L, S)
            masks[name] = rng.standard_normal(shape).astype(dtype)
    return masks


def _run_mha(
    options: dict,
    masks: str,
    dtype: str,
    need_weights: bool,
    average: bool,
    batched: bool,
) -> None:
    module, reference = _mha_pair(options, dtype)
    rng = np.random.default_rng(1)
    kdim, vdim = options.get("kdim", E), options.get("vdim", E)
    lead = (
        (lambda t: (N, t) if options.get("batch_first") else (t, N))
        if batched
        else (lambda t: (t,))
    )
    pairs = [
        _pair(rng, lead(t) + (d,), dtype) for t, d in ((L, E), (S, kdim), (S, vdim))
    ]
    given = _mha_masks(MHA_MASKS[masks], rng, dtype, batched)
    extra = {"need_weights": need_weights, "average_attn_weights": average}
    ours = {k: v if isinstance(v, bool) else yg.tensor(v) for k, v in given.items()}
    theirs = {
        k: v if isinstance(v, bool) else torch.tensor(v) for k, v in given.items()
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mismatched mask types: both warn
        out, weights = module(*(p[0] for p in pairs), **ours, **extra)
        ref, ref_weights = reference(*(p[1] for p in pairs), **theirs, **extra)
    _close(out, ref, dtype, "output")
    assert (weights is None) == (ref_weights is None)
    if weights is not None:
        _close(weights, ref_weights, dtype, "weights")
    cotangent = rng.standard_normal(tuple(ref.shape)).astype(dtype)
    out.backward(yg.tensor(cotangent))
    ref.backward(torch.tensor(cotangent))
    for name, (x, t) in zip(("query", "key", "value"), pairs):
        _close(x.grad, t.grad, dtype, f"grad of {name}")
    params = dict(module.named_parameters())
    assert list(params) == [n for n, _ in reference.named_parameters()]
    for name, p in reference.named_parameters():
        _close(params[name].grad, p.grad, dtype, f"grad of {name}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("masks", MHA_MASKS)
@pytest.mark.parametrize("options", MHA_OPTIONS)
def test_mha_matches_torch(options: str, masks: str, dtype: str) -> None:
    for need_weights in (True, False):
        _run_mha(MHA_OPTIONS[options], masks, dtype, need_weights, True, True)


@pytest.mark.parametrize("options", ["default", "kdim_vdim", "bias_kv_zero_attn"])
@pytest.mark.parametrize("masks", ["none", "padding", "attn_3d_float"])
def test_mha_unbatched_and_per_head_weights_match_torch(
    options: str, masks: str
) -> None:
    _run_mha(MHA_OPTIONS[options], masks, "float64", True, False, False)
    _run_mha(MHA_OPTIONS[options], masks, "float64", True, False, True)


def test_mha_parameters_init_and_repr_match_torch() -> None:
    for options in MHA_OPTIONS.values():
        module = nn.MultiheadAttention(E, HEADS, **options)
        reference = torch.nn.MultiheadAttention(E, HEADS, **options)
        ours = {k: tuple(v.shape) for k, v in module.state_dict().items()}
        assert ours == {k: tuple(v.shape) for k, v in reference.state_dict().items()}
        assert repr(module) == repr(reference)
        if module.in_proj_bias is not None:
            assert (module.in_proj_bias == 0).all() and (
                module.out_proj.bias == 0
            ).all()
    module = nn.MultiheadAttention(64, 4)
    bound = np.sqrt(6 / (64 + 3 * 64))  # xavier_uniform_ of (3E, E)
    weights = module.in_proj_weight.detach().numpy()
    assert 0.9 * bound < np.abs(weights).max() <= bound * (1 + 1e-6)  # float32
    assert type(module.out_proj).__name__ == "NonDynamicallyQuantizableLinear"


def test_mha_dropout_in_training_drops_weights() -> None:
    p = 0.4
    module = nn.MultiheadAttention(E, HEADS, dropout=p)
    x = yg.randn(200, 5, E)
    _, weights = module(x, x, x, average_attn_weights=False)
    values = weights.detach().numpy()
    assert abs(np.mean(values == 0) - p) < 0.02
    np.testing.assert_allclose(values.sum(-1).mean(), 1.0, rtol=0.05)
    module.eval()
    _, weights = module(x, x, x, average_attn_weights=False)
    np.testing.assert_allclose(weights.detach().numpy().sum(-1), 1.0, rtol=1e-5)


MHA_ERRORS = {
    "not_divisible": lambda lib: lib.nn.MultiheadAttention(10, 3),
    "zero_heads": lambda lib: lib.nn.MultiheadAttention(8, 0),
    "attn_mask_2d_shape": lambda lib: _call_mha(lib, attn_mask=lib.zeros(3, 3)),
    "attn_mask_3d_shape": lambda lib: _call_mha(lib, attn_mask=lib.zeros(5, 4, 6)),
    "attn_mask_4d": lambda lib: _call_mha(lib, attn_mask=lib.zeros(1, 1, 4, 6)),
    "padding_dims": lambda lib: _call_mha(lib, key_padding_mask=lib.zeros(3, 6, 1)),
    "padding_shape": lambda lib: _call_mha(lib, key_padding_mask=lib.zeros(2, 6)),
    "integer_mask": lambda lib: _call_mha(
        lib, attn_mask=lib.zeros(4, 6, dtype=lib.int64)
    ),
    "causal_without_mask": lambda lib: _call_mha(lib, is_causal=True),
    "query_dims": lambda lib: lib.nn.MultiheadAttention(8, 2)(
        lib.zeros(8), lib.zeros(8), lib.zeros(8)
    ),
    "embed_dim": lambda lib: lib.nn.MultiheadAttention(8, 2)(
        lib.zeros(4, 3, 6), lib.zeros(6, 3, 6), lib.zeros(6, 3, 6)
    ),
}


def _call_mha(lib: Any, **kwargs: Any) -> Any:
    module = lib.nn.MultiheadAttention(8, 2)
    q, k = lib.zeros(4, 3, 8), lib.zeros(6, 3, 8)
    return module(q, k, k, **kwargs)


@pytest.mark.parametrize("case", MHA_ERRORS)
def test_mha_error_texts_match_torch(case: str) -> None:
    make = MHA_ERRORS[case]
    errors = []
    for lib in (yg, torch):
        with pytest.raises(Exception) as info:
            make(lib)
        errors.append(info.value)
    assert type(errors[0]) is type(errors[1])
    assert str(errors[0]).replace("yamlgrad.", "torch.") == torch_text(errors[1])


def test_functional_mha_is_the_module_path() -> None:
    module, reference = _mha_pair({}, "float64")
    x = np.random.default_rng(0).standard_normal((L, N, E))
    args = (
        E,
        HEADS,
        module.in_proj_weight,
        module.in_proj_bias,
        None,
        None,
        False,
        0.0,
    )
    args += (module.out_proj.weight, module.out_proj.bias)
    out, weights = F.multi_head_attention_forward(*[yg.tensor(x)] * 3, *args)
    ref, ref_weights = reference(*[torch.tensor(x)] * 3)
    _close(out, ref, "float64")
    _close(weights, ref_weights, "float64")


def test_functional_mha_static_key_and_value_match_torch() -> None:
    module, reference = _mha_pair({}, "float64")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((L, N, E))
    statics = [rng.standard_normal((N * HEADS, S, E // HEADS)) for _ in "kv"]
    outputs = []
    for lib, m in ((yg, module), (torch, reference)):
        ins = [lib.tensor(x)] * 3
        sk, sv = (lib.tensor(a, requires_grad=True) for a in statics)
        args = (E, HEADS, m.in_proj_weight, m.in_proj_bias, None, None, False, 0.0)
        args += (m.out_proj.weight, m.out_proj.bias)
        function = F if lib is yg else torch.nn.functional
        out, _ = function.multi_head_attention_forward(
            *ins, *args, static_k=sk, static_v=sv, need_weights=False
        )
        out.sum().backward()
        outputs.append((out, sk.grad, sv.grad))
    for ours, theirs in zip(*outputs):
        _close(ours, theirs, "float64")
