"""Window arithmetic shared by convolution and pooling: `int[]` parameters
spelled out per spatial dim, PyTorch's pooling output size, a window's flat
positions in its input plane, and each window's maximum and its offset under
PyTorch's max rule (`window_argmax` and `first_zeros`, which every max pooling
uses). Average pooling is separable, one matrix per axis (`avg_pool_matrix`),
used by the 2-d and 3-d poolings alike.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def expand_param(value: tuple[int, ...], n: int) -> tuple[int, ...]:
    """An `int[]` argument spelled out for `n` spatial dims: `(2,)` is `(2, 2)`.
    (A lone int is already a tuple: the wrapper's int_list_arg expands it.)"""
    return tuple(value) * n if len(value) == 1 else tuple(value)


def pool_output_size(
    size: int, kernel: int, stride: int, pad: int, dilation: int, ceil_mode: bool
) -> int:
    """pooling_output_shape: the last window must start inside the input or the
    left padding, also in ceil mode."""
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _lowest(dtype: np.dtype) -> Any:
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _plane_positions(indices: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    """Flat positions in a row-major array of `sizes` of the in-plane indices
    `h * W + w` of a pooling (one plane per leading index)."""
    planes = math.prod(sizes[:-2])
    plane = sizes[-2] * sizes[-1]
    where = np.reshape(indices, (planes, math.prod(np.shape(indices)[-2:])))
    return (where + np.arange(0, planes * plane, plane)[:, None]).reshape(-1)


def window_argmax(views: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Each window's maximum and the offset of its entry (the index in `views`,
    one strided view per kernel offset in row-major order) under PyTorch's rule
    `val > max || isnan(val)`: the first of equal values, the last NaN.

    Without NaN: np.maximum over the offsets, then the first offset equal to it
    (a running "not yet found" mask counts the offsets before it, in the
    smallest integer type that holds them); a NaN is in that maximum, and the
    windows are then scanned in order. A maximum of zero may be the other zero
    than its entry's (np.maximum may return either of -0.0 and 0.0):
    `first_zeros` reads those back once the flat positions are known."""
    if len(views) > 1:
        top = np.array(views[0], copy=True)
        for view in views[1:]:
            np.maximum(top, view, out=top)
        if not (top.dtype.kind in "fc" and bool(np.isnan(top).any())):
            behind = views[0] != top
            arg = behind.astype(np.min_scalar_type(len(views)))
            for view in views[1:-1]:
                behind &= view != top
                arg += behind
            return top, arg
    return _window_max_in_order(views, True)


def first_zeros(
    values: np.ndarray, indices: np.ndarray, x: np.ndarray, dims: int
) -> None:
    """Each maximum of zero made the entry at its index, in place; `indices` are
    flat positions in x's last `dims` dims, one plane per leading index (as
    every max pooling returns them)."""
    flat = np.flatnonzero(values == 0)
    if flat.size:
        lead = math.prod(x.shape[:-dims])
        planes = x.reshape(lead, -1)
        where = indices.reshape(-1)[flat]
        values.reshape(-1)[flat] = planes[flat // (values.size // lead), where]


def _window_max_in_order(views: list[Any], nan: bool) -> tuple[Any, Any]:
    """The maximum and its offset under PyTorch's rule `val > max || isnan(val)`,
    offset by offset: the first of equal values (so -0.0 before 0.0 stays), but
    the last NaN."""
    values = np.array(views[0], copy=True)
    arg = np.zeros(values.shape, dtype=np.int64)
    for offset, view in enumerate(views[1:], 1):
        better = view > values
        if nan:
            better |= np.isnan(view)
        np.copyto(values, view, where=better)
        np.copyto(arg, offset, where=better)
    return values, arg


def avg_pool_matrix(
    size: int,
    kernel: int,
    stride: int,
    pad: int,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
    dtype: np.dtype,
) -> np.ndarray:
    """One axis of an average pooling as a matrix [out, size]: row i holds each
    input's weight in window i. A 2-d pooling is `A_h @ x @ A_w.T`, since PyTorch's
    divisor (window area, clipped to the padded or to the real input) is a product
    of one factor per axis."""
    out = pool_output_size(size, kernel, stride, pad, 1, ceil_mode)
    start = np.arange(out) * stride - pad
    end = np.minimum(start + kernel, size + pad)
    with_pad = end - start
    start, end = np.maximum(start, 0), np.minimum(end, size)
    positions = np.arange(size)
    inside = (positions >= start[:, None]) & (positions < end[:, None])
    if divisor_override is not None:
        return inside.astype(dtype)  # the whole divisor is applied on the other axis
    divisor = with_pad if count_include_pad else np.maximum(end - start, 1)
    return (inside / divisor[:, None]).astype(dtype)
