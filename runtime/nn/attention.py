"""Attention: `scaled_dot_product_attention`, `multi_head_attention_forward`,
`MultiheadAttention`, and `torch.nn.attention`'s `SDPBackend` and `sdpa_kernel`.

The module is `yamlgrad.nn.attention` too (PyTorch's `torch.nn.attention`, whose
public names are `SDPBackend` and `sdpa_kernel`); `nn.functional` and `nn` export
the functions and the module under PyTorch's names.

`scaled_dot_product_attention` picks a backend as PyTorch's CPU dispatcher does,
so a call records the graph PyTorch records: the fused kernel
(`_scaled_dot_product_flash_attention_for_cpu`, one
ScaledDotProductFlashAttentionForCpuBackward0) for 4-D inputs with equal head
sizes, no dropout and a mask that does not require grad and is 2-D or 4-D in
the shapes the kernel reads; otherwise the math composite (matmuls, an in-place
add of the mask, `_safe_softmax`, dropout), as PyTorch's
`_scaled_dot_product_attention_math`. Both give a fully masked row zeros. The
fused path does not look at strides (yamlgrad's tensors have none to show).

`multi_head_attention_forward` follows PyTorch's Python function step by step
(packed or separate in-projections, bias_k/bias_v, zero attention, masks merged
into one float mask, explicit weights through baddbmm and softmax when
`need_weights`, else scaled_dot_product_attention). PyTorch's fused inference
fast path (`_native_multi_head_attention`) computes the same values and is not
reproduced.
"""

from __future__ import annotations

import contextlib
import enum
import math
import warnings
from collections.abc import Iterator
from typing import Any

from yamlgrad.generated import VariableType
from yamlgrad.runtime import factories
from yamlgrad.runtime.autograd.grad_mode import is_grad_enabled
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dtypes import bool_, float32
from yamlgrad.runtime.errors import type_meta_name
from yamlgrad.runtime.nn import init
from yamlgrad.runtime.nn.layers import Linear, _check_device, _empty_parameter
from yamlgrad.runtime.nn.module import Module

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    """The backends of scaled_dot_product_attention; on the CPU, FLASH_ATTENTION
    (the fused kernel) and MATH run."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


# PyTorch's global flags: every backend but ERROR is enabled until sdpa_kernel says.
_enabled: set[SDPBackend] = {b for b in SDPBackend if b is not SDPBackend.ERROR}


@contextlib.contextmanager
def sdpa_kernel(
    backends: list[SDPBackend] | SDPBackend, set_priority: bool = False
) -> Iterator[dict]:
    """Enable only `backends` for scaled_dot_product_attention inside the block
    (the previous set is restored on exit). The CPU tries the fused kernel, then
    the math one, whatever the priority.

    >>> with sdpa_kernel(SDPBackend.MATH):
    ...     out = F.scaled_dot_product_attention(q, k, v)  # UnsafeViewBackward0
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(
            "Backend must be an instance of SDPBackend or a list of SDPBackend "
            f"instances, got {type(backends).__name__}"
        )
    chosen = [backends] if isinstance(backends, SDPBackend) else backends
    previous = set(_enabled)
    try:
        _enabled.clear()
        _enabled.update(b for b in chosen if b is not SDPBackend.ERROR)
        yield {}
    finally:
        _enabled.clear()
        _enabled.update(previous)


# -- scaled_dot_product_attention ------------------------------------------------


def _validate_sdpa_input(
    query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None
) -> None:
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got "
            f"query.dtype: {type_meta_name(query.dtype.np)} key.dtype: "
            f"{type_meta_name(key.dtype.np)} and value.dtype: "
            f"{type_meta_name(value.dtype.np)} instead."
        )
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but "
            f"got query.dim: {query.ndim} key.dim: {key.ndim} and value.dim: "
            f"{value.ndim} instead."
        )
    if attn_mask is not None and attn_mask.dtype not in (bool_, float32, query.dtype):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, "
            f"but got attn_mask.dtype: {type_meta_name(attn_mask.dtype.np)} and  "
            f"query.dtype: {type_meta_name(query.dtype.np)} instead."
        )


def _mask_fits_fused_kernel(mask: Tensor | None, query: Tensor, key: Tensor) -> bool:
    """A mask the fused kernel reads: no gradient, 2-D, or 4-D of (1 or B, 1 or
    H), its last two dims (1 or L, 1 or S)."""
    if mask is None:
        return True
    if mask.requires_grad and is_grad_enabled():
        return False
    if mask.ndim < 2 or mask.shape[-2] not in (query.shape[2], 1):
        return False
    if mask.shape[-1] not in (key.shape[2], 1):
        return False
    if mask.ndim == 2:
        return True
    return (
        mask.ndim == 4
        and mask.shape[0] in (1, query.shape[0])
        and (mask.shape[1] in (1, query.shape[1]))
    )


def _fused_kernel_fits(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    enable_gqa: bool,
) -> bool:
    """PyTorch's CPU conditions for the fused kernel (use_flash_attention_cpp)."""
    if dropout_p > 0.0 or not query.ndim == key.ndim == value.ndim == 4:
        return False
    if not query.shape[0] == key.shape[0] == value.shape[0]:
        return False
    heads, key_heads, value_heads = query.shape[1], key.shape[1], value.shape[1]
    if enable_gqa:
        if key_heads != value_heads or heads % key_heads:
            return False
    elif not heads == key_heads == value_heads:
        return False
    if not query.shape[-1] == key.shape[-1] == value.shape[-1]:
        return False
    if query.shape[2] == 0 or key.shape[2] == 0:
        return False
    return _mask_fits_fused_kernel(attn_mask, query, key)


def _select_backend(*args: Any) -> SDPBackend:
    """The fused kernel if it is enabled and fits, else the math one if enabled."""
    if SDPBackend.MATH not in _enabled and SDPBackend.FLASH_ATTENTION not in _enabled:
        raise RuntimeError(
            "No viable backend for scaled_dot_product_attention was found. This is "
            "likely due to turning off both the math kernel and the fused kernels."
        )
    if SDPBackend.FLASH_ATTENTION in _enabled and _fused_kernel_fits(*args):
        return SDPBackend.FLASH_ATTENTION
    if SDPBackend.MATH in _enabled:
        return SDPBackend.MATH
    warnings.warn("Flash attention kernel not used because:", stacklevel=3)
    raise RuntimeError("No available kernel.  Aborting execution.")


def _float_mask(mask: Tensor | None, dtype: Any) -> Tensor | None:
    """A bool mask (True = attend) as 0 and -inf in `dtype`; a float one as is."""
    if mask is None or mask.dtype != bool_:
        return mask
    blocked = factories.full((), -math.inf, dtype=dtype)
    return VariableType.where(mask, factories.zeros((), dtype=dtype), blocked)


def _grouped_heads(
    query: Tensor, key: Tensor, value: Tensor, enable_gqa: bool
) -> tuple[Tensor, Tensor]:
    """Key and value with each head repeated for its group of query heads."""
    if not enable_gqa:
        return key, value
    heads, key_heads, value_heads = query.shape[-3], key.shape[-3], value.shape[-3]
    if heads == key_heads == value_heads:
        return key, value
    if heads % key_heads or heads % value_heads:
        raise RuntimeError(
            "Number of heads in key and value must divide the number of heads in "
        )
    return (
        VariableType.repeat_interleave(key, heads // key_heads, -3),
        VariableType.repeat_interleave(value, heads // value_heads, -3),
    )


def _scaled_dot_product_attention_math(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    is_causal: bool,
    scale: float | None,
    enable_gqa: bool,
) -> Tensor:
    """PyTorch's math path: q and k each scaled by sqrt(scale), so that the
    product stays in range; the mask added in place; _safe_softmax; dropout."""
    negative = scale is not None and scale < 0.0
    softmax_scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else abs(scale)
    factor = math.sqrt(softmax_scale)
    query = VariableType.mul_Scalar(query, -factor if negative else factor)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError(
                "_scaled_dot_product_attention: Explicit attn_mask should not be "
                "set when is_causal=True"
            )
        length, source = query.shape[-2], key.shape[-2]
        keep = VariableType.tril(factories.ones(length, source, dtype=bool_))
        attn_mask = _float_mask(keep, query.dtype)
    key, value = _grouped_heads(query, key, value, enable_gqa)
    key_t = VariableType.mul_Scalar(VariableType.transpose(key, -2, -1), factor)
    attn = VariableType.matmul(query, key_t)
    if attn_mask is not None:
        attn.add_(attn_mask)
    attn = VariableType._safe_softmax(attn, -1)
    if dropout_p > 0.0:
        if dropout_p > 1.0:
            raise RuntimeError(
                f"dropout probability has to be between 0 and 1, but got {dropout_p}"
            )
        # nn.functional exports this module's functions: imported on first use.
        from yamlgrad.runtime.nn.functional import dropout

        attn = dropout(attn, dropout_p, True)
    return VariableType.matmul(attn, value)


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    *,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(query keyᵀ · scale + bias) value over the last two dims (query
    (N, ..., Hq, L, E), key (N, ..., H, S, E), value (N, ..., H, S, Ev)).

    `attn_mask`: bool (True = take part) or float (added), broadcastable to
    (N, ..., Hq, L, S); `is_causal`: the top-left lower triangle attends;
    `scale`: default 1 / sqrt(E); `dropout_p`: applied whatever the mode;
    `enable_gqa`: H divides Hq, each key/value head serves Hq / H query heads.

    >>> q = yg.randn(2, 4, 3, 8)
    >>> F.scaled_dot_product_attention(q, q, q, is_causal=True).shape
    yamlgrad.Size([2, 4, 3, 8])
    """
    _validate_sdpa_input(query, key, value, attn_mask)
    backend = _select_backend(query, key, value, attn_mask, dropout_p, enable_gqa)
    mask = _float_mask(attn_mask, query.dtype)
    if backend is SDPBackend.FLASH_ATTENTION:
        return VariableType._scaled_dot_product_flash_attention_for_cpu(
            query, key, value, dropout_p, is_causal, attn_mask=mask, scale=scale
        )[0]
    return _scaled_dot_product_attention_math(
        query, key, value, mask, dropout_p, is_causal, scale, enable_gqa
    )


# -- multi_head_attention_forward ---------------------------------------------------


def _mha_shape_check(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    key_padding_mask: Tensor | None,
    attn_mask: Tensor | None,
    num_heads: int,
) -> bool:
    """Whether the input is batched (3-D) rather than unbatched (2-D)."""
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but "
                f"found {key.ndim}-D and {value.ndim}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` "
                f"or 2-D but found {key_padding_mask.ndim}-D tensor instead"
            )
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D "
                f"or 3-D but found {attn_mask.ndim}-D tensor instead"
            )
        return True
    if query.ndim != 2:
        raise AssertionError(
            "query should be unbatched 2D or batched 3D tensor but received "
            f"{query.ndim}-D query tensor"
        )
    if key.ndim != 2 or value.ndim != 2:
        raise AssertionError(
            "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but "
            f"found {key.ndim}-D and {value.ndim}-D tensors respectively"
        )
    if key_padding_mask is not None and key_padding_mask.ndim != 1:
        raise AssertionError(
            "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` "
            f"or 1-D but found {key_padding_mask.ndim}-D tensor instead"
        )
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D "
                f"or 3-D but found {attn_mask.ndim}-D tensor instead"
            )
        expected = (num_heads, query.shape[0], key.shape[0])
        if attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(
                f"Expected `attn_mask` shape to be {expected} but got "
                f"{attn_mask.shape}"
            )
    return False


def _canonical_mask(
    mask: Tensor | None,
    mask_name: str,
    other_type: Any,
    other_name: str,
    target_type: Any,
    check_other: bool = True,
) -> Tensor | None:
    """A bool mask (True = blocked) as 0 and -inf in `target_type`; a float one
    as is."""
    if mask is None:
        return None
    is_float = mask.dtype.is_floating_point
    if mask.dtype != bool_ and not is_float:
        raise AssertionError(
            f"only bool and floating types of {mask_name} are supported"
        )
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
            "same type for both instead.",
            stacklevel=3,
        )
    if is_float:
        return mask
    zeros = factories.zeros(*mask.shape, dtype=target_type)
    return zeros.masked_fill_(mask, -math.inf)


def _in_projection_packed(
    q: Tensor, k: Tensor, v: Tensor, w: Tensor, b: Tensor | None
) -> tuple[Tensor, Tensor, Tensor]:
    """q, k and v projected by the rows of `w` (3E, E): one linear for
    self-attention, two for a key that is the value, else three."""
    embed = q.shape[-1]
    if k is v and q is k:
        proj = VariableType.linear(q, w, b).unflatten(-1, (3, embed))
        proj = proj.unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return proj[0], proj[1], proj[2]
    if k is v:
        w_q, w_kv = w.split([embed, embed * 2])
        b_q, b_kv = (None, None) if b is None else b.split([embed, embed * 2])
        kv = VariableType.linear(k, w_kv, b_kv).unflatten(-1, (2, embed))
        kv = kv.unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return VariableType.linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return (
        VariableType.linear(q, w_q, b_q),
        VariableType.linear(k, w_k, b_k),
        VariableType.linear(v, w_v, b_v),
    )


def _in_projection(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    weights: tuple[Tensor, Tensor, Tensor],
    biases: tuple[Tensor | None, Tensor | None, Tensor | None],
) -> tuple[Tensor, Tensor, Tensor]:
    """q, k and v each projected by its own weight ((E, E), (E, kdim), (E, vdim))."""
    embed = q.shape[-1]
    names = ("query", "key", "value")
    for name, x, w, b in zip(names, (q, k, v), weights, biases):
        if tuple(w.shape) != (embed, x.shape[-1]):
            raise AssertionError(
                f"expecting {name} weights shape of {(embed, x.shape[-1])}, but got "
                f"{w.shape}"
            )
        if b is not None and tuple(b.shape) != (embed,):
            raise AssertionError(
                f"expecting {name} bias shape of {(embed,)}, but got {b.shape}"
            )
    return tuple(  # type: ignore[return-value]
        VariableType.linear(x, w, b) for x, w, b in zip((q, k, v), weights, biases)
    )


def _attn_mask_3d(
    attn_mask: Tensor, tgt_len: int, src_len: int, batch_heads: int
) -> Tensor:
    """A 2-D (L, S) or 3-D (N * heads, L, S) attention mask as 3-D."""
    if attn_mask.ndim == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(
                f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                f"{(tgt_len, src_len)}."
            )
        return attn_mask.unsqueeze(0)
    if attn_mask.ndim == 3:
        if tuple(attn_mask.shape) != (batch_heads, tgt_len, src_len):
            raise RuntimeError(
                f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                f"{(batch_heads, tgt_len, src_len)}."
            )
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")


def _add_bias_kv(
    k: Tensor,
    v: Tensor,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    masks: list[Tensor | None],
    static: tuple[bool, bool],
) -> tuple[Tensor, Tensor]:
    """k and v (S, N, E) with bias_k and bias_v appended along S; each mask gets
    a column of zeros for it."""
    if bias_k is None or bias_v is None:
        if bias_k is not None:
            raise AssertionError("bias_k is set but bias_v is None")
        if bias_v is not None:
            raise AssertionError("bias_v is set but bias_k is None")
        return k, v
    if static[0]:
        raise AssertionError("bias cannot be added to static key.")
    if static[1]:
        raise AssertionError("bias cannot be added to static value.")
    batch = k.shape[1]
    k = VariableType.cat([k, bias_k.repeat(1, batch, 1)])
    v = VariableType.cat([v, bias_v.repeat(1, batch, 1)])
    masks[:] = [None if m is None else VariableType.pad(m, (0, 1)) for m in masks]
    return k, v


def _heads(
    x: Tensor, static: Tensor | None, batch_heads: int, head_dim: int, name: str
) -> Tensor:
    """(T, N, E) as (N * heads, T, head_dim); or the given static (N * heads, S,
    head_dim) key or value."""
    if static is None:
        return x.view(x.shape[0], batch_heads, head_dim).transpose(0, 1)
    if static.shape[0] != batch_heads:
        raise AssertionError(
            f"expecting {name}.size(0) of {batch_heads}, but got {static.shape[0]}"
        )
    if static.shape[2] != head_dim:
        raise AssertionError(
            f"expecting {name}.size(2) of {head_dim}, but got {static.shape[2]}"
        )
    return static


def _add_zero_attn(
    k: Tensor, v: Tensor, masks: list[Tensor | None]
) -> tuple[Tensor, Tensor]:
    """A zero key and value appended along S; each mask gets a column for it."""
    shape = (k.shape[0], 1, k.shape[2])
    k = VariableType.cat([k, factories.zeros(*shape, dtype=k.dtype)], 1)
    v = VariableType.cat([v, factories.zeros(*shape, dtype=v.dtype)], 1)
    masks[:] = [None if m is None else VariableType.pad(m, (0, 1)) for m in masks]
    return k, v


def _merged_mask(
    attn_mask: Tensor | None,
    key_padding_mask: Tensor | None,
    batch: int,
    num_heads: int,
    src_len: int,
) -> Tensor | None:
    """The key padding mask (N, S) folded into the attention mask, (N * heads,
    1 or L, S)."""
    if key_padding_mask is None:
        return attn_mask
    if key_padding_mask.shape[0] != batch:
        raise AssertionError(
            f"Expected key_padded_mask.shape[0] to be {batch}, but got "
            f"{key_padding_mask.shape[0]}"
        )
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(
            f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
            f"{key_padding_mask.shape[1]}"
        )
    padding = key_padding_mask.view(batch, 1, 1, src_len).expand(-1, num_heads, -1, -1)
    padding = padding.reshape(batch * num_heads, 1, src_len)
    return padding if attn_mask is None else attn_mask + padding


def _attention_with_weights(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    is_causal: bool,
) -> tuple[Tensor, Tensor]:
    """(output (N * heads, L, head_dim), weights (N * heads, L, S)) by baddbmm
    and softmax, as PyTorch computes them when the weights are wanted."""
    q_scaled = q * math.sqrt(1.0 / float(q.shape[2]))
    if is_causal and attn_mask is None:
        raise AssertionError("FIXME: is_causal not implemented for need_weights")
    k_t = k.transpose(-2, -1)
    if attn_mask is not None:
        weights = VariableType.baddbmm(attn_mask, q_scaled, k_t)
    else:
        weights = VariableType.bmm(q_scaled, k_t)
    weights = VariableType.softmax(weights, -1)
    if dropout_p > 0.0:
        from yamlgrad.runtime.nn.functional import dropout  # see the math path

        weights = dropout(weights, p=dropout_p)
    return VariableType.bmm(weights, v), weights


def _prepared_masks(
    query: Tensor,
    key_padding_mask: Tensor | None,
    attn_mask: Tensor | None,
    need_weights: bool,
    is_causal: bool,
) -> tuple[Tensor | None, Tensor | None, bool]:
    """Both masks as float masks, and whether is_causal still holds: a causal
    hint without a padding mask or weights leaves the mask to SDPA."""
    key_padding_mask = _canonical_mask(
        key_padding_mask,
        "key_padding_mask",
        None if attn_mask is None else attn_mask.dtype,
        "attn_mask",
        query.dtype,
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the "
            "Transformer module method `generate_square_subsequent_mask` to create "
            "this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        return None, None, True
    attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
    if key_padding_mask is not None:
        is_causal = False  # the merged mask is no longer causal
    return key_padding_mask, attn_mask, is_causal


def _project(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    separate: tuple[Tensor | None, Tensor | None, Tensor | None] | None,
) -> tuple[Tensor, Tensor, Tensor]:
    """The in-projections: packed in_proj_weight, or q/k/v_proj_weight."""
    if separate is None:
        if key.shape != value.shape:
            raise AssertionError(
                f"key shape {key.shape} does not match value shape {value.shape}"
            )
        if in_proj_weight is None:
            raise AssertionError(
                "use_separate_proj_weight is False but in_proj_weight is None"
            )
        return _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    if key.shape[:2] != value.shape[:2]:
        raise AssertionError(
            f"key's sequence and batch dims {key.shape[:2]} do not match value's "
            f"{value.shape[:2]}"
        )
    for name, weight in zip("qkv", separate):
        if weight is None:
            raise AssertionError(
                f"use_separate_proj_weight is True but {name}_proj_weight is None"
            )
    biases = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
    return _in_projection(query, key, value, separate, biases)  # type: ignore[arg-type]


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention of query (L, N, E) over key (S, N, kdim) and value
    (S, N, vdim) (or unbatched (L, E), ...): (output (L, N, E), weights (N, L, S)
    averaged over heads, (N, heads, L, S) if not `average_attn_weights`, None if
    not `need_weights`). Bool masks are True where attention is blocked. See
    MultiheadAttention."""
    batched = _mha_shape_check(
        query, key, value, key_padding_mask, attn_mask, num_heads
    )
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask, attn_mask, is_causal = _prepared_masks(
        query, key_padding_mask, attn_mask, need_weights, is_causal
    )
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got "
            f"{embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(
            f"embed_dim {embed_dim} not divisible by num_heads {num_heads}"
        )
    separate = (
        (q_proj_weight, k_proj_weight, v_proj_weight)
        if use_separate_proj_weight
        else None
    )
    q, k, v = _project(query, key, value, in_proj_weight, in_proj_bias, separate)
    if attn_mask is not None:
        attn_mask = _attn_mask_3d(attn_mask, tgt_len, key.shape[0], bsz * num_heads)
    masks = [attn_mask, key_padding_mask]
    static = (static_k is not None, static_v is not None)
    k, v = _add_bias_kv(k, v, bias_k, bias_v, masks, static)
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, bsz * num_heads, head_dim, "static_k")
    v = _heads(v, static_v, bsz * num_heads, head_dim, "static_v")
    if add_zero_attn:
        k, v = _add_zero_attn(k, v, masks)
    src_len = k.shape[1]
    attn_mask = _merged_mask(*masks, bsz, num_heads, src_len)
    if not training:
        dropout_p = 0.0
    if need_weights:
        out, weights = _attention_with_weights(q, k, v, attn_mask, dropout_p, is_causal)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = VariableType.linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.shape[1])
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.ndim == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = VariableType.linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.shape[1])
    return (out if batched else out.squeeze(1)), None


# -- MultiheadAttention -------------------------------------------------------------


class NonDynamicallyQuantizableLinear(Linear):
    """MultiheadAttention's out_proj: a Linear (PyTorch's class name, which its
    quantization tools look for)."""


class MultiheadAttention(Module):
    """Attention of a query over keys and values with `num_heads` heads:
    out_proj(concat(head_1, ..., head_h)), head_i = softmax(q_i k_iᵀ / sqrt(d)) v_i,
    q_i, k_i, v_i the heads of the in-projections.

    Parameters as PyTorch's: `in_proj_weight` (3E, E), or `q_proj_weight`,
    `k_proj_weight`, `v_proj_weight` when kdim or vdim differs from E;
    `in_proj_bias` (3E), `out_proj`, and `bias_k`/`bias_v` (1, 1, E) with
    add_bias_kv. Inputs are (L, N, E), or (N, L, E) with batch_first, or
    unbatched (L, E); bool masks are True where attention is blocked.

    >>> mha = MultiheadAttention(8, 2, batch_first=True)
    >>> x = yg.randn(3, 5, 8)
    >>> out, weights = mha(x, x, x)
    >>> out.shape, weights.shape
    (yamlgrad.Size([3, 5, 8]), yamlgrad.Size([3, 5, 5]))
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                "embed_dim and num_heads must be greater than 0, got "
                f"embed_dim={embed_dim} and num_heads={num_heads} instead"
            )
        super().__init__()
        _check_device(device)
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = _empty_parameter(
                3 * embed_dim, embed_dim, dtype=dtype
            )
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = _empty_parameter(embed_dim, embed_dim, dtype=dtype)
            self.k_proj_weight = _empty_parameter(embed_dim, self.kdim, dtype=dtype)
            self.v_proj_weight = _empty_parameter(embed_dim, self.vdim, dtype=dtype)
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = _empty_parameter(3 * embed_dim, dtype=dtype)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(
            embed_dim, embed_dim, bias=bias, dtype=dtype
        )
        if add_bias_kv:
            self.bias_k = _empty_parameter(1, 1, embed_dim, dtype=dtype)
            self.bias_v = _empty_parameter(1, 1, embed_dim, dtype=dtype)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        batched = query.ndim == 3
        key_padding_mask = _canonical_mask(
            key_padding_mask,
            "key_padding_mask",
            None if attn_mask is None else attn_mask.dtype,
            "attn_mask",
            query.dtype,
        )
        attn_mask = _canonical_mask(
            attn_mask, "attn_mask", None, "", query.dtype, False
        )
        if self.batch_first and batched:
            # Transposed once per distinct tensor, so that `key is value` (and
            # self-attention's `query is key`) still hold for the projections.
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = {}
        if not self._qkv_same_embed_dim:
            separate = {
                "use_separate_proj_weight": True,
                "q_proj_weight": self.q_proj_weight,
                "k_proj_weight": self.k_proj_weight,
                "v_proj_weight": self.v_proj_weight,
            }
        out, weights = multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
            **separate,
        )
        if self.batch_first and batched:
            return out.transpose(1, 0), weights
        return out, weights
