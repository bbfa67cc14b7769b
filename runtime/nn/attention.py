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
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dtypes import bool_, float32
from yamlgrad.runtime.errors import argument_type, type_meta_name
from yamlgrad.runtime.nn import init
from yamlgrad.runtime.nn.attention_inputs import (
    _add_bias_kv,
    _add_zero_attn,
    _attn_mask_3d,
    _canonical_mask,
    _heads,
    _merged_mask,
    _mha_shape_check,
    _prepared_masks,
    _project,
)
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
    for position, (name, x) in enumerate(
        zip(("query", "key", "value"), (query, key, value))
    ):
        if not isinstance(x, Tensor):
            op = "scaled_dot_product_attention"
            raise TypeError(argument_type(op, name, position + 1, "Tensor", x))
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
    if mask.requires_grad:
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


def _head_dim(embed_dim: int, embed_dim_to_check: int, num_heads: int) -> int:
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
    return head_dim


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
    head_dim = _head_dim(embed_dim, embed_dim_to_check, num_heads)
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
    out_proj = (out_proj_weight, out_proj_bias)
    if need_weights:
        out, weights = _attention_with_weights(q, k, v, attn_mask, dropout_p, is_causal)
        out = _out_projection(out.transpose(0, 1), out_proj, tgt_len, bsz)
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    out = _sdpa_heads(q, k, v, attn_mask, dropout_p, is_causal, bsz, num_heads)
    out = _out_projection(out.permute(2, 0, 1, 3), out_proj, tgt_len, bsz)
    return (out if batched else out.squeeze(1)), None


def _sdpa_heads(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    is_causal: bool,
    bsz: int,
    num_heads: int,
) -> Tensor:
    """scaled_dot_product_attention of (N * heads, T, head_dim) inputs, as
    (N, heads, L, head_dim); the mask (1 or N * heads, L, S) made 4-D."""
    tgt_len, src_len, head_dim = q.shape[1], k.shape[1], q.shape[2]
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.ndim == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    return scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)


def _out_projection(
    heads: Tensor, out_proj: tuple[Tensor, Tensor | None], tgt_len: int, bsz: int
) -> Tensor:
    """The heads (L, N, heads..., head_dim) joined and projected: (L, N, E)."""
    out = heads.reshape(tgt_len * bsz, -1)
    out = VariableType.linear(out, *out_proj)
    return out.view(tgt_len, bsz, out.shape[1])


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
