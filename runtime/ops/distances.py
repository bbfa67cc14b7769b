"""Pairwise distances: _cdist_forward (every row of x1 against every row of x2, by
batch), _euclidean_dist (the matrix-product form of the 2-norm case), and
_pdist_forward (the rows of one matrix against each other, the upper triangle
in row-major order), each kernel beside its backward helper, with PyTorch's
checks; and the composite `cdist`, which picks between the first two as
at::cdist does.

The gradients are PyTorch's (_cdist_backward, _euclidean_dist_backward,
_pdist_backward): for p-norms d = (sum |x - y|^p)^(1/p) the derivative with
respect to x is sign(x - y) |x - y|^(p-1) / d^(p-1), with p = 1 and p = inf
(the coordinates that reach the maximum) as their limits and 0 where d is 0.
They are written against array_namespace, so a double backward is recorded.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime import dispatch
from yamlgrad.runtime.errors import scalar_type_name
from yamlgrad.runtime.ops.common import _constant, _raw, _zeros
from yamlgrad.runtime.ops.namespace import array_namespace, register_numpy_kernels

KERNELS = (
    "cdist_kernel",
    "cdist_backward_kernel",
    "euclidean_dist_kernel",
    "pdist_kernel",
    "pdist_backward_kernel",
)
BACKWARD_HELPERS = ("cdist_backward", "euclidean_dist_backward", "pdist_backward")
COMPOSITE_HELPERS = ("cdist_by_mode",)


def _check_cdist(x1: Any, x2: Any, p: float) -> None:
    for name, x in (("X1", x1), ("X2", x2)):
        if np.ndim(x) < 2:
            raise RuntimeError(
                f"cdist only supports at least 2D tensors, {name} got: {np.ndim(x)}D"
            )
    for name, x in (("X1", x1), ("X2", x2)):
        dtype = _raw(x).dtype
        if dtype.kind != "f":
            raise RuntimeError(
                "cdist only supports floating-point dtypes, "
                f"{name} got: {scalar_type_name(dtype)}"
            )
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            "X1 and X2 must have the same number of columns. X1: "
            f"{x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")


def _p_norms(diff: np.ndarray, p: float) -> np.ndarray:
    """The p-norm of diff over its last dim (p = 0 counts the nonzeros)."""
    magnitude = np.abs(diff)
    if p == 0:
        return np.count_nonzero(diff, axis=-1).astype(diff.dtype)
    if p == math.inf:
        return magnitude.max(axis=-1, initial=0.0)
    if p == 1:
        return magnitude.sum(axis=-1)
    if p == 2:
        return np.sqrt(np.einsum("...i,...i->...", diff, diff))
    return (magnitude**p).sum(axis=-1) ** (1.0 / p)


def cdist_kernel(x1: Any, x2: Any, p: float, compute_mode: int | None) -> np.ndarray:
    """[..., r1, r2]: the p-distance of each row of x1 to each row of x2."""
    x1, x2 = np.asarray(x1), np.asarray(x2)
    _check_cdist(x1, x2, p)
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    return np.ascontiguousarray(_p_norms(diff, p).astype(x1.dtype, copy=False))


def _unsqueezed(x: Any, dim: int) -> Any:
    """x with a dim of size 1 inserted at `dim` (negative), as a reshape."""
    shape = list(x.shape)
    shape.insert(len(shape) + dim + 1, 1)
    return array_namespace(x).reshape(x, tuple(shape))


def _mT(x: Any) -> Any:
    return array_namespace(x).transpose(x, -1, -2)


def cdist_backward_kernel(grad: Any, x1: Any, x2: Any, p: float, dist: Any) -> Any:
    """_cdist_backward: the gradient with respect to x1 of dist = cdist(x1, x2)
    (x2's is this with the two swapped and grad and dist transposed)."""
    dtype = _raw(x1).dtype  # the others must have x1's, as in PyTorch's kernel
    for other in (grad, x2, dist):
        if _raw(other).dtype != dtype:
            raise RuntimeError(
                f"expected scalar type {scalar_type_name(dtype)} but found "
                f"{scalar_type_name(_raw(other).dtype)}"
            )
    xp = array_namespace(grad, x1, x2, dist)
    if p == 0 or 0 in tuple(x1.shape) or 0 in tuple(x2.shape):
        return _zeros(tuple(x1.shape), grad)
    diff = _unsqueezed(x1, -2) - _unsqueezed(x2, -3)  # [..., r1, r2, m]
    g = _unsqueezed(grad, -1)
    d = _unsqueezed(dist, -1)
    nonzero = _constant(np.asarray(_raw(dist))[..., None] != 0, grad)
    if p == 1:
        term = xp.sign(diff) * g
    elif p == math.inf:
        at_max = _constant(
            np.abs(np.asarray(_raw(diff))) == np.asarray(_raw(dist))[..., None], grad
        )
        term = xp.where(at_max & nonzero, xp.sign(diff) * g, 0.0)
    else:
        safe = xp.where(nonzero, d, 1.0)
        if p == 2:
            scaled = diff / safe
        elif p < 2:
            scaled = xp.sign(diff) * xp.abs(diff) ** (p - 1) / safe ** (p - 1)
        else:
            scaled = diff * xp.abs(diff) ** (p - 2) / safe ** (p - 1)
        term = xp.where(nonzero, scaled * g, 0.0)
    return xp.sum(term, axis=-2)


def euclidean_dist_kernel(x1: Any, x2: Any) -> np.ndarray:
    """sqrt(max(0, |x1|^2 - 2 x1.x2 + |x2|^2)) by one matrix product, as ATen's
    _euclidean_dist."""
    x1, x2 = np.asarray(x1), np.asarray(x2)
    norm1 = np.einsum("...i,...i->...", x1, x1)[..., :, None]
    norm2 = np.einsum("...i,...i->...", x2, x2)[..., None, :]
    square = norm1 - 2 * (x1 @ np.swapaxes(x2, -1, -2)) + norm2
    return np.sqrt(np.maximum(square, 0)).astype(x1.dtype, copy=False)


def euclidean_dist_backward(
    grad: Any, x1: Any, x2: Any, result: Any, grad_input_mask: tuple[bool, ...]
) -> tuple[Any, Any]:
    """ATen's _euclidean_dist_backward: ratio = grad / dist (0 where dist is 0),
    x1 * sum_j ratio - ratio @ x2, and the same for x2."""
    xp = array_namespace(grad, x1, x2, result)
    nonzero = _constant(np.asarray(_raw(result)) != 0, grad)
    ratio = xp.where(nonzero, grad / xp.where(nonzero, result, 1.0), 0.0)
    grad1 = grad2 = None
    if grad_input_mask[0]:
        grad1 = x1 * xp.sum(ratio, axis=-1, keepdims=True) - xp.matmul(ratio, x2)
    if grad_input_mask[1]:
        column = _unsqueezed(xp.sum(ratio, axis=-2), -1)
        grad2 = x2 * column - xp.matmul(_mT(ratio), x1)
    return grad1, grad2


def cdist_by_mode(x1: Any, x2: Any, p: float, compute_mode: int | None) -> Any:
    """at::cdist: for p = 2 with more than 25 rows on a side (compute_mode None
    or 0), or compute_mode 1, _euclidean_dist on the batch-expanded inputs,
    viewed to the output (ViewBackward0 over EuclideanDistBackward0); else
    _cdist_forward (CdistBackward0)."""
    ops = dispatch.ops
    _check_cdist(x1, x2, p)
    mode = 0 if compute_mode is None else compute_mode
    r1, r2 = x1.shape[-2], x2.shape[-2]
    if x1.numel() == 0 or x2.numel() == 0:
        return ops._cdist_forward(x1, x2, p, compute_mode)
    if not (p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))):
        return ops._cdist_forward(x1, x2, p, compute_mode)
    batch = np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    out_shape = batch + (r1, r2)
    if math.prod(batch) == 1:
        return ops.view(ops._euclidean_dist(x1, x2), out_shape)
    a = ops.expand(x1, batch + tuple(x1.shape[-2:]))
    b = ops.expand(x2, batch + tuple(x2.shape[-2:]))
    return ops.view(ops._euclidean_dist(a, b), out_shape)


def _check_pdist(x: Any, p: float) -> None:
    if np.ndim(x) != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {np.ndim(x)}D")
    if _raw(x).dtype.kind != "f":
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")


def pdist_kernel(x: Any, p: float) -> np.ndarray:
    """The p-distance of every pair of rows i < j, in row-major order."""
    x = np.asarray(x)
    _check_pdist(x, p)
    i, j = np.triu_indices(x.shape[0], 1)
    return np.ascontiguousarray(_p_norms(x[i] - x[j], p).astype(x.dtype, copy=False))


def pdist_backward_kernel(grad: Any, x: Any, p: float, result: Any) -> Any:
    """_pdist_backward: the upper-triangle gradients and distances laid out as full symmetric
    (n, n) matrices, then cdist's gradient: row i is the first and the second
    argument of its pairs alike."""
    xp = array_namespace(grad, x, result)
    n = x.shape[0]
    i, j = np.triu_indices(n, 1)
    upper, lower = i * n + j, j * n + i

    def symmetric(values: Any) -> Any:
        zeros = _zeros((n * n,), values)
        full = xp.index_add(
            xp.index_add(zeros, 0, upper, values, 1), 0, lower, values, 1
        )
        return xp.reshape(full, (n, n))

    return cdist_backward_kernel(symmetric(grad), x, x, p, symmetric(result))


def cdist_backward(grad: Any, x1: Any, x2: Any, p: float, dist: Any) -> Any:
    """_cdist_forward's backward as the recorded _cdist_backward op: PyTorch gives
    that op no derivative, so a second backward through cdist raises."""
    return array_namespace(grad, x1, x2, dist)._cdist_backward(grad, x1, x2, p, dist)


def pdist_backward(grad: Any, x: Any, p: float, result: Any) -> Any:
    """_pdist_forward's backward as the recorded _pdist_backward op (no derivative
    either, as PyTorch's)."""
    return array_namespace(grad, x, result)._pdist_backward(grad, x, p, result)


register_numpy_kernels(
    _cdist_backward=cdist_backward_kernel, _pdist_backward=pdist_backward_kernel
)
