"""multi_head_attention_forward's inputs made ready: shape checks with PyTorch's
texts, masks as float masks (True = blocked), the in-projections (packed or
separate), bias_k/bias_v and zero attention appended, the heads split, and the
key padding mask folded into the attention mask. runtime/nn/attention.py runs
the attention itself."""

from __future__ import annotations

import math
import warnings
from typing import Any

from yamlgrad.generated import VariableType
from yamlgrad.runtime import factories
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dtypes import bool_


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
