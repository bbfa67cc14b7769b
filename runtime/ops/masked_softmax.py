"""_masked_softmax, attention's softmax over a boolean mask, with its backward
helper (_safe_softmax, the other, is in attention.py).

_masked_softmax leaves out the positions its boolean mask marks (True =
masked): a mask of the input's shape (mask_type None or 2), one (L, L) mask for
every batch (0), or a (B, L) key-padding mask (1). A row with every position
masked has no softmax: it is NaN, as PyTorch's CPU kernel gives.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime.ops.activations import softmax, softmax_backward_data

KERNELS = ("masked_softmax_kernel",)
BACKWARD_HELPERS = ("masked_softmax_backward",)


def _mask_like(mask: np.ndarray, shape: tuple[int, ...], mask_type: int | None) -> Any:
    """The mask as one bool per input element."""
    if mask_type == 1 or (
        mask_type is None and mask.ndim == 2 and len(shape) > 2 and mask.shape != shape
    ):
        mask = mask.reshape((mask.shape[0],) + (1,) * (len(shape) - 2) + mask.shape[1:])
    elif mask_type == 0:
        mask = mask.reshape((1,) * (len(shape) - mask.ndim) + mask.shape)
    return np.broadcast_to(mask, shape)


def _check_mask(
    mask: tuple[int, ...], shape: tuple[int, ...], mask_type: int | None
) -> None:
    """PyTorch's CPU checks of the mask's layout."""
    if mask == shape:
        return
    if mask_type is None:
        raise RuntimeError("Mask Type should be defined")
    if mask_type == 0 and not (len(mask) == 2 and mask == tuple(shape[-2:])):
        raise RuntimeError("For mask_type == 0 mask shape should be (L, L)")
    if mask_type == 1 and not (
        len(shape) == 4 and len(mask) == 2 and mask == (shape[0], shape[-1])
    ):
        raise RuntimeError("For mask_type == 1 mask shape should be (B, L)")
    if mask_type not in (0, 1):
        raise RuntimeError(
            f"For mask_type == {mask_type} mask shape should match input shape"
        )


def masked_softmax_kernel(
    x: Any, mask: Any, dim: int | None, mask_type: int | None
) -> np.ndarray:
    """softmax along `dim` (the last by default) of x with masked positions -inf."""
    x, mask = np.asarray(x), np.asarray(mask)
    if mask.dtype != np.bool_:
        raise RuntimeError("Mask should be a boolean tensor")
    _check_mask(mask.shape, x.shape, mask_type)
    axis = x.ndim - 1 if dim is None else dim
    filled = np.where(_mask_like(mask, x.shape, mask_type), -np.inf, x).astype(x.dtype)
    with np.errstate(invalid="ignore"):
        return softmax(filled, axis)


def masked_softmax_backward(grad: Any, result: Any, mask: Any, dim: int | None) -> Any:
    """softmax's backward. A masked position's output is 0, so its gradient is
    0 too. As in PyTorch, only a mask of the output's shape is accepted here."""
    if tuple(mask.shape) != tuple(grad.shape):
        raise RuntimeError("Mask shape should match grad shape")
    axis = result.ndim - 1 if dim is None else dim
    return softmax_backward_data(grad, result, axis)
