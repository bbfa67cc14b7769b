"""Attention: the fused scaled-dot-product attention of PyTorch's CPU path, and
the softmax that gives fully masked rows zeros.

`_scaled_dot_product_flash_attention_for_cpu` is one node
(ScaledDotProductFlashAttentionForCpuBackward0), as on PyTorch's CPU: the
forward computes softmax(q kᵀ · scale + bias) v in one kernel, and the backward
helper recomputes the attention weights from `query` and `key` rather than from
the saved `logsumexp`. Written once against `array_namespace`, the recomputation
is recorded under `create_graph=True`, so a double backward is exact (PyTorch's
backward of this op has no derivative of its own).

Grouped-query attention (fewer key/value heads than query heads) never copies a
key: the query's heads are viewed as (key heads, group) and the key broadcasts
over the group, so the gradient of a key is the sum over its group. The same
layout serves one head per key head (a group of one).

A row whose every score is -inf (every key masked) attends to nothing: its
weights, output and gradients are zeros, and its logsumexp 0, as PyTorch's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime.errors import scalar_type_name
from yamlgrad.runtime.ops.activations import softmax
from yamlgrad.runtime.ops.namespace import (
    NUMPY_NAMESPACE,
    array_namespace,
    register_numpy_kernels,
)

KERNELS = ("safe_softmax_kernel", "scaled_dot_product_flash_attention_kernel")
BACKWARD_HELPERS = ("scaled_dot_product_flash_attention_backward",)

_FLASH = "scaled_dot_product_attention_flash_attention"


def safe_softmax_kernel(x: Any, dim: int, dtype: Any = None) -> Any:
    """softmax along `dim` (of x cast to `dtype`, when given), with zeros for a
    slice whose every element is -inf (softmax alone gives nan there)."""
    if dtype is not None and x.dtype != dtype:
        x = x.astype(dtype)
    with np.errstate(invalid="ignore"):  # -inf - -inf in an empty row
        out = softmax(x, dim)
    empty_rows = np.all(x == -np.inf, axis=dim, keepdims=True)
    if empty_rows.any():
        out = np.where(empty_rows, 0, out).astype(out.dtype, copy=False)
    return out


def _grouped(xp: Any, x: Any, key_heads: int) -> Any:
    """(B, H, T, D) as (B, key_heads, H // key_heads, T, D)."""
    b, h, t, d = x.shape
    return xp.reshape(x, (b, key_heads, h // key_heads, t, d))


def _grouped_mask(xp: Any, mask: Any, query_heads: int, key_heads: int) -> Any:
    """A 2-D or 4-D mask (broadcastable to (B, Hq, L, S)) in the grouped layout."""
    if mask.ndim == 2:
        return mask
    b, heads, length, source = mask.shape
    if heads == 1:
        return xp.reshape(mask, (b, 1, 1, length, source))
    return xp.reshape(mask, (b, key_heads, query_heads // key_heads, length, source))


def _scores(
    xp: Any,
    query: Any,
    key: Any,
    is_causal: bool,
    attn_mask: Any,
    scale: float | None,
) -> tuple[Any, float]:
    """q kᵀ · scale plus the bias, grouped (B, Hk, G, L, S), and the scale used."""
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    key_heads = key.shape[1]
    q = _grouped(xp, query, key_heads)
    k = xp.reshape(key, key.shape[:2] + (1,) + key.shape[2:])
    scores = xp.matmul(q, xp.transpose(k, -2, -1)) * factor
    if is_causal:
        keep = np.tril(np.ones((query.shape[2], key.shape[2]), dtype=bool))
        scores = xp.where(keep, scores, -math.inf)
    if attn_mask is not None:
        scores = scores + _grouped_mask(xp, attn_mask, query.shape[1], key_heads)
    return scores, factor


def _check_flash_inputs(query: Any, key: Any, value: Any, attn_mask: Any) -> None:
    """PyTorch's checks, and the shapes its kernel assumes without checking."""
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        raise RuntimeError(
            f"{_FLASH}: Accept only 4 dims inputs shape of {{B, H, T, K}}"
        )
    if not query.shape[-1] == key.shape[-1] == value.shape[-1]:
        raise RuntimeError(f"{_FLASH}: Q/K/V should have the same head size")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 4):
            raise RuntimeError(f"{_FLASH}: Attention mask dim in {{2, 4}}")
        if attn_mask.dtype not in (np.float32, query.dtype):
            raise RuntimeError(
                f"{_FLASH}: Attention mask is the same data type as query"
            )
    for x in (key, value):
        if x.dtype != query.dtype:
            raise RuntimeError(
                f"expected scalar type {scalar_type_name(query.dtype)} but found "
                f"{scalar_type_name(x.dtype)}"
            )
    heads, key_heads = query.shape[1], key.shape[1]
    if (
        key.shape[:3] != value.shape[:3]
        or key.shape[0] != query.shape[0]
        or heads % key_heads
    ):
        raise RuntimeError(
            f"{_FLASH}: expected key and value of one shape (B, H, S, E), B the "
            f"query's batch and H dividing the query's heads, but got query "
            f"{list(query.shape)}, key {list(key.shape)} and value {list(value.shape)}"
        )


def scaled_dot_product_flash_attention_kernel(
    query: np.ndarray,
    key: np.ndarray,
    value: np.ndarray,
    dropout_p: float,
    is_causal: bool,
    attn_mask: np.ndarray | None,
    scale: float | None,
) -> tuple[np.ndarray, np.ndarray]:
    """(output (B, Hq, L, Ev), logsumexp (B, Hq, L)) of softmax(q kᵀ · scale +
    bias) v, the bias -inf above the diagonal (is_causal) plus `attn_mask`."""
    _check_flash_inputs(query, key, value, attn_mask)
    if dropout_p != 0.0:
        raise RuntimeError(f"{_FLASH}: Currently do not support dropout > 0")
    scores, _ = _scores(NUMPY_NAMESPACE, query, key, is_causal, attn_mask, scale)
    peak = scores.max(axis=-1, keepdims=True)
    peak[peak == -np.inf] = 0.0  # a fully masked row: exp(-inf - 0) = 0 below
    weights = np.exp(scores - peak)
    total = weights.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        weights /= np.where(total > 0, total, 1.0)
        logsumexp = np.where(total > 0, peak + np.log(total), 0.0)
    b, heads, length, _ = query.shape
    v = value.reshape(value.shape[:2] + (1,) + value.shape[2:])
    output = np.matmul(weights, v).reshape((b, heads, length, value.shape[-1]))
    return (
        output.astype(query.dtype, copy=False),
        logsumexp.reshape((b, heads, length)).astype(query.dtype, copy=False),
    )


def scaled_dot_product_flash_attention_backward(
    grad: Any,
    query: Any,
    key: Any,
    value: Any,
    output: Any,
    dropout_p: float,
    is_causal: bool,
    attn_mask: Any,
    scale: float | None,
    grad_input_mask: tuple[bool, ...],
) -> tuple[Any, Any, Any]:
    """(grad_query, grad_key, grad_value): with P the weights and dO the output's
    gradient, dV = Pᵀ dO, dS = P * (dO Vᵀ - rowsum(dO * O)), dQ = dS K · scale,
    dK = dSᵀ Q · scale; a key's and a value's summed over their query group."""
    if grad is None:
        return None, None, None
    xp = array_namespace(grad, query, key, value)
    key_heads = key.shape[1]
    scores, factor = _scores(xp, query, key, is_causal, attn_mask, scale)
    weights = xp._safe_softmax(scores, -1)
    d_out = _grouped(xp, grad, key_heads)
    v = xp.reshape(value, value.shape[:2] + (1,) + value.shape[2:])
    grad_value = None
    if grad_input_mask[2]:
        grad_value = xp.sum(xp.matmul(xp.transpose(weights, -2, -1), d_out), axis=2)
    if not (grad_input_mask[0] or grad_input_mask[1]):
        return None, None, grad_value
    d_weights = xp.matmul(d_out, xp.transpose(v, -2, -1))
    row = xp.sum(d_out * _grouped(xp, output, key_heads), axis=-1, keepdims=True)
    d_scores = weights * (d_weights - row) * factor
    grad_query = grad_key = None
    if grad_input_mask[0]:
        k = xp.reshape(key, key.shape[:2] + (1,) + key.shape[2:])
        grad_query = xp.reshape(xp.matmul(d_scores, k), query.shape)
    if grad_input_mask[1]:
        q = _grouped(xp, query, key_heads)
        grad_key = xp.sum(xp.matmul(xp.transpose(d_scores, -2, -1), q), axis=2)
    return grad_query, grad_key, grad_value


register_numpy_kernels(_safe_softmax=safe_softmax_kernel)
