"""The nn ops at the top level (`yg.dropout`, `yg.batch_norm`, `yg.kl_div`, ...)
with the signatures PyTorch's top-level functions have, which are the ATen
operators', not nn.functional's: the dropouts take (input, p, train), the losses
their reduction as PyTorch's enum (0 none, 1 mean, 2 sum), batch_norm its weight
and bias before the running statistics, the pools no return_indices. Each calls
the nn.functional code of the same op, so it records what that records. (The
losses' reduction defaults to 0 there, as PyTorch's top-level bindings have it.) (Where
PyTorch's torch.X is nn.functional's X, the facade binds that function itself.)
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from yamlgrad.generated import VariableType
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.errors import warn_at_caller
from yamlgrad.runtime.nn import functional as F
from yamlgrad.runtime.nn.functional_activations import _rrelu
from yamlgrad.runtime.nn.functional_layers import _dropout_impl

__all__ = [
    "dropout",
    "dropout_",
    "alpha_dropout",
    "alpha_dropout_",
    "feature_dropout",
    "feature_dropout_",
    "feature_alpha_dropout",
    "feature_alpha_dropout_",
    "layer_norm",
    "batch_norm",
    "group_norm",
    "embedding_bag",
    "binary_cross_entropy_with_logits",
    "cosine_embedding_loss",
    "hinge_embedding_loss",
    "margin_ranking_loss",
    "triplet_margin_loss",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool3d",
    "adaptive_max_pool1d",
    "rrelu",
    "grid_sampler",
    "frobenius_norm",
    "nuclear_norm",
    "norm_except_dim",
]

# -- dropout ---------------------------------------------------------------------


def _dropout(name: str, feature: bool, alpha: bool, inplace: bool) -> Callable:
    def op(input: Tensor, p: float, train: bool) -> Tensor:
        if p < 0 or p > 1:
            raise RuntimeError(
                f"dropout probability has to be between 0 and 1, but got {p}"
            )
        return _dropout_impl(input, p, train, feature, alpha, inplace)

    op.__name__ = op.__qualname__ = name
    kind = "whole channels of " if feature else ""
    op.__doc__ = (
        f"`{name}(input, p, train)`: dropout of {kind}`input` with probability "
        f"`p` when `train`{' (SELU-preserving)' if alpha else ''}"
        f"{', in place' if inplace else ''}."
    )
    return op


dropout = _dropout("dropout", False, False, False)
dropout_ = _dropout("dropout_", False, False, True)
alpha_dropout = _dropout("alpha_dropout", False, True, False)
alpha_dropout_ = _dropout("alpha_dropout_", False, True, True)
feature_dropout = _dropout("feature_dropout", True, False, False)
feature_dropout_ = _dropout("feature_dropout_", True, False, True)
feature_alpha_dropout = _dropout("feature_alpha_dropout", True, True, False)
feature_alpha_dropout_ = _dropout("feature_alpha_dropout_", True, True, True)

# -- normalisation and embedding --------------------------------------------------------


def layer_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-05,
    cudnn_enable: bool = True,
) -> Tensor:
    """nn.functional.layer_norm (NativeLayerNormBackward0)."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def batch_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> Tensor:
    """native_batch_norm's output (NativeBatchNormBackward0), in ATen's order."""
    return VariableType.native_batch_norm(
        input, weight, bias, running_mean, running_var, training, momentum, eps
    )[0]


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-05,
    cudnn_enabled: bool = True,
) -> Tensor:
    """nn.functional.group_norm (NativeGroupNormBackward0)."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def embedding_bag(
    weight: Tensor,
    indices: Tensor,
    offsets: Tensor,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """_embedding_bag's four outputs (the bags; offset2bag, bag_size and
    max_indices), mode 0 sum, 1 mean, 2 max (EmbeddingBagBackward0)."""
    return VariableType._embedding_bag(
        weight,
        indices,
        offsets,
        scale_grad_by_freq,
        mode,
        sparse,
        per_sample_weights,
        include_last_offset,
        -1 if padding_idx is None else padding_idx,
    )


# -- losses with the reduction as an int --------------------------------------------------


def _schema_op(overload: Callable[..., Any], name: str) -> Callable[..., Any]:
    """An overload of yg.ops under its Python spelling (its `self` is `input`).
    PyTorch's top-level binding of these losses leaves the input unreduced (0)
    unless a reduction is given, whatever the schema's default says."""
    position = list(inspect.signature(overload).parameters).index("reduction")

    @functools.wraps(overload)
    def op(*args: Any, **kwargs: Any) -> Any:
        if "input" in kwargs:
            kwargs["self"] = kwargs.pop("input")
        if len(args) <= position:
            kwargs.setdefault("reduction", 0)
        return overload(*args, **kwargs)

    op.__name__ = op.__qualname__ = name
    return op


_OPS = VariableType.OVERLOADS
binary_cross_entropy_with_logits = _schema_op(
    _OPS["binary_cross_entropy_with_logits"]["default"],
    "binary_cross_entropy_with_logits",
)
cosine_embedding_loss = _schema_op(
    _OPS["cosine_embedding_loss"]["default"], "cosine_embedding_loss"
)
hinge_embedding_loss = _schema_op(
    _OPS["hinge_embedding_loss"]["default"], "hinge_embedding_loss"
)
margin_ranking_loss = _schema_op(
    _OPS["margin_ranking_loss"]["default"], "margin_ranking_loss"
)
triplet_margin_loss = _schema_op(
    _OPS["triplet_margin_loss"]["default"], "triplet_margin_loss"
)

# -- pooling ----------------------------------------------------------------------


def _stride(stride: Any) -> Any:
    """ATen's empty stride is the kernel size: nn.functional's None."""
    empty = isinstance(stride, (tuple, list)) and len(stride) == 0
    return None if stride is None or empty else stride


def max_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> Tensor:
    """nn.functional.max_pool1d's values."""
    return F.max_pool1d(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode
    )


def max_pool1d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> tuple[Tensor, Tensor]:
    """nn.functional.max_pool1d's values and indices."""
    return F.max_pool1d(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode, True
    )


def max_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> Tensor:
    """nn.functional.max_pool3d's values (MaxPool3DWithIndicesBackward0)."""
    return F.max_pool3d(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode
    )


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    """nn.functional.adaptive_max_pool1d's values and indices."""
    return F.adaptive_max_pool1d(input, output_size, True)


# -- activations and sampling ----------------------------------------------------------


def rrelu(
    input: Tensor,
    lower: float = 0.125,
    upper: float = 1.0 / 3,
    training: bool = False,
    generator: Any = None,
) -> Tensor:
    """nn.functional.rrelu, its slopes drawn from `generator` in training."""
    return _rrelu(input, lower, upper, training, False, generator)


def grid_sampler(
    input: Tensor,
    grid: Tensor,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,
) -> Tensor:
    """grid_sampler_2d for a 4-d input, grid_sampler_3d for a 5-d one, the modes
    as nn.functional.grid_sample numbers them (bilinear 0, nearest 1, bicubic 2;
    zeros 0, border 1, reflection 2)."""
    op = (
        VariableType.grid_sampler_3d
        if input.ndim == 5
        else VariableType.grid_sampler_2d
    )
    return op(input, grid, interpolation_mode, padding_mode, align_corners)


# -- norms kept for old code -----------------------------------------------------------

_DEPRECATED_NORMS = {
    "frobenius_norm": "linalg.vector_norm(A, 2., dim, keepdim)",
    "nuclear_norm": "linalg.matrix_norm(A, 'nuc', dim, keepdim)",
}
_warned: set[str] = set()


def _deprecated(name: str) -> None:
    """PyTorch's warning, once per process, for a norm left for old code."""
    if name not in _warned:
        _warned.add(name)
        warn_at_caller(
            f"at::{name} is deprecated and it is just left for JIT compatibility. "
            "It will be removed in a future PyTorch release. Please use "
            f"`{_DEPRECATED_NORMS[name]}` instead"
        )


def frobenius_norm(
    input: Tensor, dim: Sequence[int] | int, keepdim: bool = False
) -> Tensor:
    """linalg.vector_norm(input, 2, dim, keepdim), with PyTorch's warning."""
    _deprecated("frobenius_norm")
    dims = [dim] if isinstance(dim, int) else list(dim)
    return VariableType.linalg_vector_norm(input, 2, dims, keepdim)


def nuclear_norm(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """linalg.matrix_norm(input, 'nuc', dim, keepdim), with PyTorch's warning:
    `nuclear_norm(A, keepdim)` over the last two dims, or `nuclear_norm(A, dim)`."""
    _deprecated("nuclear_norm")
    if isinstance(dim, bool):  # the (self, bool keepdim) overload
        dim, keepdim = None, dim
    dims = (-2, -1) if dim is None else tuple(dim)
    return VariableType.linalg_matrix_norm(input, "nuc", dims, keepdim)


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The `pow`-norm over every dim but `dim`, kept as size-1 dims (weight
    norm's); over every dim for dim=-1."""
    if dim == -1:
        return VariableType.linalg_vector_norm(v, pow)
    others = [d for d in range(v.ndim) if d != dim % v.ndim]
    return VariableType.linalg_vector_norm(v, pow, others, True)
