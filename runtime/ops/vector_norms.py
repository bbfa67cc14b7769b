"""Vector norms: `linalg.vector_norm`'s kernel, sum(|x|**p)**(1/p) with its
inf, -inf and 0 cases, beside its backward and forward-mode helpers (PyTorch's
norm_backward and norm_jvp), which re-expand over the reduced dims as the other
reductions' helpers do (runtime/ops/reductions.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime.ops.common import _abs, _constant, _data, _dim
from yamlgrad.runtime.ops.elementwise import sign, where, zeros_like
from yamlgrad.runtime.ops.reductions import (
    _dims,
    _foreign_namespace,
    _keepdim_shape,
    _sum_keepdim,
    reduce_dims,
)
from yamlgrad.runtime.ops.shapes import reshape

KERNELS = ("vector_norm",)
BACKWARD_HELPERS = ("linalg_vector_norm_backward", "linalg_vector_norm_jvp")


def vector_norm(x: Any, p: float, dim: tuple[int, ...] | None, keepdim: bool) -> Any:
    """`linalg.vector_norm`: sum(|x|**p)**(1/p); max |x| for inf, min for -inf."""
    xp = _foreign_namespace(x)
    shape = tuple(x.shape) if hasattr(x, "shape") else ()
    axis = reduce_dims(dim, len(shape))
    if abs(p) == math.inf and math.prod(shape) == 0:
        name = "inf" if p > 0 else "-inf"
        if axis is None:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {name} norm on an empty "
                "tensor because the operation does not have an identity"
            )
        for d in dim:
            if shape and shape[_dim(d, len(shape), "linalg.vector_norm")] == 0:
                raise RuntimeError(
                    f"linalg.vector_norm cannot compute the {name} norm on the "
                    f"dimension {d}because this dimension is empty and the "
                    "operation does not have an identity"
                )
    if xp is not None:
        return xp.linalg.vector_norm(x, axis=axis, keepdims=keepdim, ord=p)
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


def linalg_vector_norm_backward(
    grad: Any,
    self: Any,
    ord: float,
    result: Any,
    dim: tuple[int, ...] | None,
    keepdim: bool,
) -> Any:
    """PyTorch's norm_backward: one case per ord; 0 where the norm is 0."""
    p = float(ord)
    norm = result
    if not keepdim and self.ndim != 0:
        kept = _keepdim_shape(tuple(self.shape), dim)
        grad = reshape(grad, kept)
        norm = reshape(norm, kept)
    if p == 0.0:
        return zeros_like(self)
    if p == 1.0:
        return sign(self) * grad
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 2.0:
            return grad * where(norm == 0, 0.0, self / norm)
        if math.isinf(p):
            mask = _extreme_mask(self, norm)
            count = _sum_keepdim(mask, _dims(dim, self.ndim))
            return sign(self) * ((grad / count) * mask)
        if p < 1.0:
            powered = where(self == 0, 0.0, _abs(self) ** (p - 1))
            return sign(self) * powered * grad * norm ** (1 - p)
        scale = where(norm == 0, 0.0, grad / norm ** (p - 1))
        if p < 2.0:
            return sign(self) * _abs(self) ** (p - 1) * scale
        return self * _abs(self) ** (p - 2) * scale


def linalg_vector_norm_jvp(
    self_p: Any,
    self_t: Any,
    ord: float,
    result: Any,
    dim: tuple[int, ...] | None,
    keepdim: bool,
) -> Any:
    """PyTorch's norm_jvp: the norm's gradient (the backward's for a cotangent
    of ones, so 0 where the norm is 0 and at the zero entries of an ord below
    1) against the tangent, summed over the reduced dims."""
    slope = linalg_vector_norm_backward(
        zeros_like(result) + 1.0, self_p, ord, result, dim, keepdim
    )
    tangent = _sum_keepdim(slope * self_t, _dims(dim, self_p.ndim))
    return tangent if keepdim else reshape(tangent, tuple(result.shape))


def _extreme_mask(self: Any, norm: Any) -> Any:
    """Where |self| reaches the inf-norm (or is NaN), as a constant in self's
    dtype and mode."""
    xp = _foreign_namespace(self)
    if xp is not None:
        magnitude = xp.abs(self)
        hit = (magnitude == norm) | xp.isnan(magnitude)
        return xp.astype(hit, self.dtype)
    self_abs = _data(np.abs(_data(self)))
    hit = (self_abs == _data(norm)) | np.isnan(self_abs)
    return _constant(hit, self)
