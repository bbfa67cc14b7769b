"""Helpers that forward kernels in derivatives.yaml may call, besides `np.*`.

Each takes and returns ndarrays (or Python numbers) and never sees a Tensor. The
generator reads `__all__` with ast to know which names a `forward:` may use.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "reduce_dims",
    "expand_shape",
    "view_shape",
    "sigmoid",
    "relu",
    "cast",
    "transpose_2d",
    "wrap_dims",
    "trace",
    "var",
    "std",
    "vector_norm",
    "logsumexp",
    "cumsum",
    "cumprod",
    "softmax",
    "log_softmax",
    "argmax",
    "argmin",
    "addmm",
    "diag_embed",
    "diagonal_backward",
]


def reduce_dims(dim: tuple[int, ...] | None, ndim: int) -> tuple[int, ...] | None:
    """The `axis=` for a reduction: PyTorch reduces every dim for None and for [].

    A 0-d tensor takes dim 0 or -1 (PyTorch treats it as one element), which
    numpy's axis= refuses: there is nothing to reduce, so the axes are ().
    """
    if not dim:
        return None
    if ndim == 0 and all(d in (0, -1) for d in dim):
        return ()
    return dim


def expand_shape(shape: tuple[int, ...], size: tuple[int, ...]) -> tuple[int, ...]:
    """`expand`'s target: -1 keeps the input's size; new leading dims are allowed."""
    lead = len(size) - len(shape)
    if lead < 0:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(size)}) must be greater or "
            f"equal to the number of dimensions in the tensor ({len(shape)})"
        )
    out = []
    for i, s in enumerate(size):
        if s == -1:
            if i < lead:
                raise RuntimeError(
                    "expand: -1 is not allowed in a leading, non-existing dimension"
                )
            s = shape[i - lead]
        out.append(s)
    return tuple(out)


def view_shape(array: Any, size: tuple[int, ...]) -> tuple[int, ...]:
    """`view`/`reshape`'s target, with PyTorch's message for a size that cannot fit."""
    numel = int(np.size(array))
    known = 1
    for s in size:
        if s != -1:
            known *= s
    if size.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    fits = numel == known if -1 not in size else known and numel % known == 0
    if not fits:
        raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")
    return size


def sigmoid(x: Any) -> Any:
    """1 / (1 + exp(-x)), without overflow for large |x|."""
    return np.exp(-np.logaddexp(0, -x))


def relu(x: Any) -> Any:
    return np.maximum(x, 0)


def cast(x: Any, dtype: np.dtype | None) -> Any:
    """A copy of `x` as `dtype` (a copy even when the dtype is unchanged)."""
    return np.array(x, dtype=dtype, copy=True)


def transpose_2d(x: Any) -> Any:
    """`t()`: transpose a matrix; a vector or a 0-d tensor is returned as it is."""
    if np.ndim(x) > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but self is {np.ndim(x)}D"
        )
    return np.transpose(x)


def wrap_dims(
    dim: int | tuple[int, ...] | None, ndim: int
) -> int | tuple[int, ...] | None:
    """The `axis=` for an op where `[]` means "no dim" (all.dims) and None "all dims".

    A 0-d tensor takes dim 0 or -1 as one element: nothing to reduce, axis ().
    """
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if ndim == 0:
        return ()
    return dims


def var(
    x: Any, dim: tuple[int, ...] | None, correction: float | None, keepdim: bool
) -> Any:
    """`var.correction`: None and [] reduce every dim; correction defaults to 1."""
    ddof = 1 if correction is None else correction
    return np.var(x, axis=reduce_dims(dim, np.ndim(x)), ddof=ddof, keepdims=keepdim)


def std(
    x: Any, dim: tuple[int, ...] | None, correction: float | None, keepdim: bool
) -> Any:
    return np.sqrt(var(x, dim, correction, keepdim))


def vector_norm(x: Any, p: float, dim: tuple[int, ...] | None, keepdim: bool) -> Any:
    """`linalg.vector_norm`: sum(|x|**p)**(1/p); max |x| for inf, min for -inf."""
    axis = reduce_dims(dim, np.ndim(x))
    magnitude = np.abs(x)
    if p == math.inf:
        return np.amax(magnitude, axis=axis, keepdims=keepdim)
    if p == -math.inf:
        return np.amin(magnitude, axis=axis, keepdims=keepdim)
    if p == 0:
        count = np.sum(magnitude != 0, axis=axis, keepdims=keepdim)
        return count.astype(np.result_type(x))
    if p == 1:
        return np.sum(magnitude, axis=axis, keepdims=keepdim)
    if p == 2:
        return np.sqrt(np.sum(magnitude * magnitude, axis=axis, keepdims=keepdim))
    total = np.sum(magnitude**p, axis=axis, keepdims=keepdim)
    return total ** (1.0 / p)


def logsumexp(x: Any, dim: tuple[int, ...], keepdim: bool) -> Any:
    """log(sum(exp(x))) over `dim`, shifted by the max so that exp cannot overflow."""
    axis = reduce_dims(dim, np.ndim(x))
    peak = np.amax(x, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0)
    total = np.sum(np.exp(x - peak), axis=axis, keepdims=True)
    out = np.log(total) + peak
    if keepdim:
        return out
    return np.reshape(out, np.shape(np.sum(x, axis=axis)))


def _single_axis(x: Any, dim: int) -> int | None:
    """`dim` as numpy's axis; None for a 0-d tensor (dim 0 or -1 is its one element)."""
    return None if np.ndim(x) == 0 else dim


def cumsum(x: Any, dim: int, dtype: np.dtype | None) -> Any:
    axis = _single_axis(x, dim)
    if axis is None:
        return np.array(x, dtype=dtype)
    return np.cumsum(x, axis=axis, dtype=dtype)


def cumprod(x: Any, dim: int, dtype: np.dtype | None) -> Any:
    axis = _single_axis(x, dim)
    if axis is None:
        return np.array(x, dtype=dtype)
    return np.cumprod(x, axis=axis, dtype=dtype)


def softmax(x: Any, dim: int) -> Any:
    """exp(x) / sum(exp(x)) along `dim`, shifted by the max."""
    axis = _single_axis(x, dim)
    shifted = np.exp(x - np.amax(x, axis=axis, keepdims=True))
    return shifted / np.sum(shifted, axis=axis, keepdims=True)


def log_softmax(x: Any, dim: int) -> Any:
    axis = _single_axis(x, dim)
    shifted = x - np.amax(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _arg_reduction(np_fn: Any, x: Any, dim: int | None, keepdim: bool) -> Any:
    if dim is not None and np.ndim(x) == 0:
        return np.zeros((), dtype=np.int64)
    return np.asarray(np_fn(x, axis=dim, keepdims=keepdim), dtype=np.int64)


def argmax(x: Any, dim: int | None, keepdim: bool) -> Any:
    """The index of the first maximum, over the flattened tensor when dim is None."""
    return _arg_reduction(np.argmax, x, dim, keepdim)


def argmin(x: Any, dim: int | None, keepdim: bool) -> Any:
    return _arg_reduction(np.argmin, x, dim, keepdim)


def addmm(x: Any, mat1: Any, mat2: Any, beta: float, alpha: float) -> Any:
    """beta * x + alpha * (mat1 @ mat2), batched for baddbmm. With beta 0, x is
    ignored (nan and inf in it do not propagate), as in PyTorch."""
    product = np.matmul(mat1, mat2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return np.broadcast_to(
            product, np.broadcast_shapes(np.shape(x), product.shape)
        ).copy()
    if beta != 1:
        x = x * beta
    return x + product


def _diagonal_index(n1: int, n2: int, offset: int) -> tuple[Any, Any]:
    """Row and column indices of the `offset` diagonal of an n1 x n2 matrix."""
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    rows = np.arange(length) + max(-offset, 0)
    return rows, rows + offset


def diag_embed(x: Any, offset: int, dim1: int, dim2: int) -> Any:
    """A tensor whose (dim1, dim2) matrices hold the last dim of `x` on a diagonal."""
    x = np.asarray(x)
    ndim = x.ndim + 1
    size = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (size, size), dtype=x.dtype)
    rows, cols = _diagonal_index(size, size, offset)
    out[..., rows, cols] = x
    return np.moveaxis(out, (-2, -1), (dim1 % ndim, dim2 % ndim))


def diagonal_backward(
    grad: Any, sizes: tuple[int, ...], offset: int, dim1: int, dim2: int
) -> Any:
    """Zeros of `sizes` with `grad` written on the diagonal that `diagonal` reads."""
    grad = np.asarray(grad)
    ndim = len(sizes)
    out = np.zeros(sizes, dtype=grad.dtype)
    matrices = np.moveaxis(out, (dim1 % ndim, dim2 % ndim), (-2, -1))
    rows, cols = _diagonal_index(matrices.shape[-2], matrices.shape[-1], offset)
    matrices[..., rows, cols] = grad
    return out


def trace(x: Any) -> Any:
    """The sum of a matrix's main diagonal (PyTorch accepts matrices only)."""
    if np.ndim(x) != 2:
        raise RuntimeError(
            f"trace: expected a matrix, but got tensor with dim {np.ndim(x)}"
        )
    return np.trace(x)
