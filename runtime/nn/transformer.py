"""The transformer of "Attention Is All You Need": encoder and decoder layers,
their stacks, and `Transformer`, with PyTorch's parameters, defaults and masks.

A layer is attention and a feed-forward block, each with a residual connection
and a LayerNorm, after it (post-norm, the default) or before it (`norm_first`).
A stack holds deep copies of the layer it is given (so its layers start equal),
and an optional final norm.

PyTorch's fused inference paths (`_transformer_encoder_layer_fwd`, nested
tensors) compute the same values as the layers' own code, which is what runs
here; the one visible effect of the nested-tensor path is kept: in evaluation
without gradients, a TransformerEncoder given a left-aligned
`src_key_padding_mask` returns zeros at the padded positions (before its norm).
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

from yamlgrad.generated import VariableType
from yamlgrad.runtime import factories
from yamlgrad.runtime.autograd.grad_mode import is_grad_enabled
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.nn import functional as F
from yamlgrad.runtime.nn import init
from yamlgrad.runtime.nn.activation import GELU, ReLU
from yamlgrad.runtime.nn.attention import MultiheadAttention, _canonical_mask
from yamlgrad.runtime.nn.layers import Dropout, LayerNorm, Linear, _check_device
from yamlgrad.runtime.nn.module import Module, ModuleList

__all__ = [
    "Transformer",
    "TransformerEncoder",
    "TransformerDecoder",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
]

Activation = str | Callable[[Tensor], Tensor]


def _generate_square_subsequent_mask(
    sz: int, device: Any = None, dtype: Any = None
) -> Tensor:
    _check_device(device)
    return VariableType.triu(factories.full((sz, sz), float("-inf"), dtype=dtype), 1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int:
    if src.ndim == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(
    mask: Tensor | None, is_causal: bool | None = None, size: int | None = None
) -> bool:
    """`is_causal` if given; else whether `mask` is the square subsequent mask."""
    if is_causal is not None or mask is None:
        return is_causal is True
    sz = size if size is not None else mask.shape[-2]
    causal = _generate_square_subsequent_mask(sz, dtype=mask.dtype)
    return mask.shape == causal.shape and bool((mask == causal).all())


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward block (linear1, activation, dropout,
    linear2), each with dropout, a residual connection and a LayerNorm.

    >>> layer = TransformerEncoderLayer(d_model=16, nhead=4, batch_first=True)
    >>> layer(yg.randn(2, 5, 16)).shape
    yamlgrad.Size([2, 5, 16])
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(
            d_model,
            nhead,
            dropout=dropout,
            bias=bias,
            batch_first=batch_first,
            **factory,
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask,
            "src_key_padding_mask",
            None if src_mask is None else src_mask.dtype,
            "src_mask",
            src.dtype,
        )
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(
                self.norm1(x), src_mask, src_key_padding_mask, is_causal
            )
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(
        self,
        x: Tensor,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        is_causal: bool = False,
    ) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's output (`memory`) and a
    feed-forward block, each with dropout, a residual connection and a LayerNorm.
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        attention = {"dropout": dropout, "batch_first": batch_first, "bias": bias}
        self.self_attn = MultiheadAttention(d_model, nhead, **attention, **factory)
        self.multihead_attn = MultiheadAttention(d_model, nhead, **attention, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation = activation

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        x = tgt
        self_masks = (tgt_mask, tgt_key_padding_mask, tgt_is_causal)
        memory_masks = (memory_mask, memory_key_padding_mask, memory_is_causal)
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), *self_masks)
            x = x + self._mha_block(self.norm2(x), memory, *memory_masks)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, *self_masks))
        x = self.norm2(x + self._mha_block(x, memory, *memory_masks))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(
        self,
        x: Tensor,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        is_causal: bool = False,
    ) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout1(x)

    def _mha_block(
        self,
        x: Tensor,
        mem: Tensor,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        is_causal: bool = False,
    ) -> Tensor:
        x = self.multihead_attn(
            x,
            mem,
            mem,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


def _why_not_nested(layer: Module) -> str:
    """Why PyTorch's TransformerEncoder cannot use nested tensors with `layer`
    ("" if it can)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attn = layer.self_attn
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not attn.batch_first:
        return (
            f"{name}.self_attn.batch_first was not True(use batch_first for better "
            "inference performance)"
        )
    if not attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


def _left_aligned(keep: Tensor) -> bool:
    """Whether each row of `keep` (N, S) is True up to some point, then False."""
    data = keep.numpy()
    return bool((data[:, 1:] <= data[:, :-1]).all())


class TransformerEncoder(Module):
    """`num_layers` copies of `encoder_layer` in sequence, then `norm` if given.

    >>> layer = TransformerEncoderLayer(d_model=16, nhead=4)
    >>> encoder = TransformerEncoder(layer, num_layers=2)
    >>> encoder(yg.randn(5, 2, 16)).shape
    yamlgrad.Size([5, 2, 16])
    """

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_not_nested(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(
                "enable_nested_tensor is True, but self.use_nested_tensor is False "
                f"because {why_not}",
                stacklevel=2,
            )
            self.use_nested_tensor = False

    def _padding_dropped(
        self, src: Tensor, mask: Tensor | None, padding: Tensor | None
    ) -> bool:
        """PyTorch's conditions for running the layers on nested tensors, which
        leave zeros at the padded positions."""
        first = self.layers[0]
        if not self.use_nested_tensor or first.training or src.ndim != 3:
            return False
        if padding is None or mask is not None:
            return False
        if self.mask_check and not _left_aligned(VariableType.logical_not(padding)):
            return False
        attn, norms = first.self_attn, (first.norm1, first.norm2)
        linears = (attn.out_proj, first.linear1, first.linear2, *norms)
        tensors = [src, attn.in_proj_weight, attn.in_proj_bias]
        tensors += [p for m in linears for p in (m.weight, m.bias)]
        return not (is_grad_enabled() and any(t.requires_grad for t in tensors))

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask,
            "src_key_padding_mask",
            None if mask is None else mask.dtype,
            "mask",
            src.dtype,
        )
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, False)
        dropped = None
        if self._padding_dropped(src, mask, src_key_padding_mask):
            dropped = src_key_padding_mask != 0
        batch_first = self.layers[0].self_attn.batch_first
        is_causal = _detect_is_causal_mask(
            mask, is_causal, _get_seq_len(src, batch_first)
        )
        output = src
        for layer in self.layers:
            output = layer(
                output,
                src_mask=mask,
                is_causal=is_causal,
                src_key_padding_mask=src_key_padding_mask,
            )
        if dropped is not None:
            output = output.masked_fill(dropped.unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    """`num_layers` copies of `decoder_layer` in sequence, each attending to
    `memory`, then `norm` if given."""

    def __init__(
        self,
        decoder_layer: TransformerDecoderLayer,
        num_layers: int,
        norm: Module | None = None,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        output = tgt
        for layer in self.layers:
            output = layer(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=tgt_is_causal,
                memory_is_causal=memory_is_causal,
            )
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """An encoder and a decoder (each a stack with a final LayerNorm); every
    parameter of more than one dim re-initialised by xavier_uniform_.

    >>> model = Transformer(d_model=16, nhead=4, num_encoder_layers=1,
    ...                     num_decoder_layers=1, dim_feedforward=32)
    >>> tgt_mask = Transformer.generate_square_subsequent_mask(3)
    >>> model(yg.randn(5, 2, 16), yg.randn(3, 2, 16), tgt_mask=tgt_mask).shape
    yamlgrad.Size([3, 2, 16])
    """

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = F.relu,
        custom_encoder: Any | None = None,
        custom_decoder: Any | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation)
        layer_args += (layer_norm_eps, batch_first, norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(*layer_args, **factory)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(*layer_args, **factory)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(
                "the feature number of src and tgt must be equal to d_model"
            )
        memory = self.encoder(
            src,
            mask=src_mask,
            src_key_padding_mask=src_key_padding_mask,
            is_causal=src_is_causal,
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(
        sz: int, device: Any = None, dtype: Any = None
    ) -> Tensor:
        """(sz, sz): 0 on and below the diagonal, -inf above it (float32 unless
        `dtype`)."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
