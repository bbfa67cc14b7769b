"""Reductions: sum, mean, var/std, norms, logsumexp, cumulative sums and products,
max/min/argmax and their backward helpers (running extremes, cummax/cummin, are
with the statistics).

A reduction's backward re-expands the gradient over the reduced dims
(`restore_reduced_dims`, `_sum_keepdim`), so one helper serves every `dim` and
`keepdim` combination of an op.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.autograd.input_metadata import sum_to
from yamlgrad.runtime.ops.namespace import (
    array_namespace,
    register_numpy_kernels,
    static,
    take_along_axis,
)
from yamlgrad.runtime.errors import scalar_type_name as _st
from yamlgrad.runtime.errors import ERR_MEAN_DTYPE, warn_at_caller
from yamlgrad.runtime.ops.common import (
    _abs,
    _any_tensor,
    _constant,
    _constant_like,
    _data,
    _dim,
    _distinct,
    _wrap_dim,
    _zero_outside,
    _zeros,
)
from yamlgrad.runtime.ops.complex_numbers import conj
from yamlgrad.runtime.ops.elementwise import cast, exp, sign, where, zeros_like
from yamlgrad.runtime.ops.shapes import expand, flip, reshape, transpose

KERNELS = (
    "count_nonzero_kernel",
    "sum_reduce",
    "mean_reduce",
    "reduce_dims",
    "vector_norm_input",
    "max_dim",
    "min_dim",
    "wrap_dims",
    "var",
    "std_kernel",
    "logsumexp",
    "cumsum",
    "cumprod",
    "argmax",
    "argmin",
    "max_all",
    "min_all",
    "amax_kernel",
    "amin_kernel",
)
BACKWARD_HELPERS = (
    "sum_to",  # the autograd core's, re-exported for formulas
    "sum_backward",
    "mean_backward",
    "value_selecting_reduction_backward",
    "evenly_distribute_backward",
    "prod_backward",
    "prod_dim_backward",
    "var_backward",
    "std_backward",
    "restore_reduced_dims",
    "scale_grad_by_count",
    "logsumexp_backward",
    "cumsum_backward",
    "cumprod_backward",
)


def sum_reduce(
    x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None
) -> Any:
    """np.sum's own ufunc reduction, called from here: numpy's Python wrapper
    would raise its RuntimeWarnings (inf - inf) in numpy's module, where the
    package's warning filter cannot tell them from a user's. Another backend's
    array: its namespace's sum."""
    if type(x) is not np.ndarray and not isinstance(x, np.generic):
        xp = backend.namespace_of(x)
        dtype = backend.dtype_in(xp, dtype)  # a numpy dtype, as the wrappers give
        return xp.sum(x, axis=axis, dtype=dtype, keepdims=keepdims)
    return np.add.reduce(x, axis=axis, dtype=dtype, keepdims=keepdims)


def _reduced_count(x: np.ndarray, axis: Any) -> np.intp:
    """How many elements each result of a reduction over `axis` takes, as a
    numpy integer (numpy's mean and var divide by one: a sum of complex64 is
    then divided in complex128)."""
    if axis is None:
        return np.intp(x.size)
    count = 1
    for a in axis if type(axis) is tuple else (axis,):
        count *= x.shape[a]
    return np.intp(count)


def mean_reduce(
    x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None
) -> Any:
    """np.mean's computation, called from here: numpy's own function warns
    ("Mean of empty slice", 0/0) from numpy's modules, where the package's
    warning filter cannot tell them from a user's, and PyTorch gives nan
    without a word. An integer or bool tensor needs a floating `dtype`, as in
    PyTorch; float16 sums in float32, as np.mean does. Another backend's
    array: its namespace's mean."""
    if dtype is None and backend.dtype_kind(x.dtype) in "biu":
        raise RuntimeError(ERR_MEAN_DTYPE.format(_st(x.dtype)))
    if type(x) is not np.ndarray and not isinstance(x, np.generic):
        xp = backend.namespace_of(x)
        dtype = backend.dtype_in(xp, dtype)
        if dtype is None and not xp.isdtype(x.dtype, "real floating"):
            dtype = xp.float64
        x = x if dtype is None else xp.astype(x, dtype)
        return xp.mean(x, axis=axis, keepdims=keepdims)
    x = np.asarray(x)
    half = dtype is None and x.dtype == np.float16
    total = np.add.reduce(
        x, axis=axis, dtype=np.float32 if half else dtype, keepdims=keepdims
    )
    value = _divide(total, _reduced_count(x, axis))
    return value.astype(np.float16) if half else value


@static
def reduce_dims(dim: tuple[int, ...] | None, ndim: int) -> tuple[int, ...] | None:
    """The `axis=` for a reduction: PyTorch reduces every dim for None and for [].

    A 0-d tensor takes dim 0 or -1 (PyTorch treats it as one element), which
    numpy's axis= refuses: there is nothing to reduce, so the axes are ().
    """
    if not dim:
        return None
    if ndim == 0:
        for d in dim:
            _dim(d, 0, "reduce")  # 0 or -1 only, else PyTorch's IndexError
        return ()
    return dim


def vector_norm_input(x: Any, dtype: np.dtype | None) -> Any:
    """linalg.vector_norm's input after its checks: a float (or complex) tensor,
    cast to `dtype` when one is given, which must not narrow it."""
    x_dtype = _numpy_dtype(x)
    if x_dtype.kind not in "fc":
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as "
            f"input. Got {_st(x_dtype)}"
        )
    if dtype is None:
        return x
    if np.promote_types(x_dtype, dtype) != dtype:
        raise RuntimeError(
            f"linalg.vector_norm: the dtype of the input ({_st(x_dtype)}) should be "
            f"convertible without narrowing to the specified dtype ({_st(dtype)})"
        )
    return cast(x, dtype)


def _numpy_dtype(x: Any) -> np.dtype:
    """x's dtype as numpy's (another backend's dtype by its name), for checks
    and messages."""
    if _foreign_namespace(x) is None:
        return np.result_type(x)
    return backend.numpy_dtype(x)


def _no_identity(op: str, x: Any, dims: Any, index_error: bool, wrap: bool) -> None:
    """The checks of PyTorch's reductions without an identity (max, argmax, amax,
    ...) on empty input: a full reduction of an empty tensor, or a reduced dim
    of size 0. `dims` None is a full reduction; `wrap`: the message shows the
    wrapped dim (max, argmax), else the dim as given (amax)."""
    shape = tuple(x.shape) if hasattr(x, "shape") else ()
    if dims is None:
        if math.prod(shape) == 0:
            message = f"{op}(): Expected reduction dim to be specified for input.numel() == 0."
            if index_error:
                raise IndexError(message)
            raise RuntimeError(
                message + " Specify the reduction dim with the 'dim' argument."
            )
        return
    for d in dims:
        wrapped = _dim(d, len(shape), op)
        if shape and shape[wrapped] == 0:
            raise IndexError(
                f"{op}(): Expected reduction dim {wrapped if wrap else d} to have "
                "non-zero size."
            )


def _foreign_namespace(x: Any) -> Any:
    """Another backend's namespace for `x`, or None for numpy's arrays and
    scalars (the kernels' fast path)."""
    if type(x) is np.ndarray or not backend.is_foreign(x):
        return None
    return backend.namespace_of(x)


def _arg_index(xp: Any, x: Any, axis: Any, keepdim: bool, largest: bool) -> Any:
    """argmax/argmin in any namespace, with numpy's and PyTorch's rule that the
    first NaN wins (the standard leaves NaN's index unspecified)."""
    arg = xp.argmax if largest else xp.argmin
    index = arg(x, axis=axis, keepdims=keepdim)
    if xp.isdtype(x.dtype, "real floating"):
        nan = xp.isnan(x)
        first_nan = xp.argmax(xp.astype(nan, xp.int8), axis=axis, keepdims=keepdim)
        index = xp.where(xp.any(nan, axis=axis, keepdims=keepdim), first_nan, index)
    return xp.astype(index, xp.int64)


def _arg_reduce(x: Any, dim: int, keepdim: bool, arg: Any) -> tuple[Any, Any]:
    op = "max" if arg is np.argmax else "min"
    xp = _foreign_namespace(x)
    x = x if xp is not None else np.asarray(x)
    dim = _dim(dim, x.ndim, op)
    _no_identity(op, x, (dim,), True, True)
    if xp is not None:
        if x.ndim == 0:
            return x, xp.zeros((), dtype=xp.int64)
        values = (xp.max if op == "max" else xp.min)(x, axis=dim, keepdims=keepdim)
        return values, _arg_index(xp, x, dim, keepdim, op == "max")
    if x.ndim == 0:
        return x.copy(), np.zeros((), dtype=np.int64)
    indices = np.expand_dims(arg(x, axis=dim), dim)
    values = np.take_along_axis(x, indices, axis=dim)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return values, indices.astype(np.int64)


def max_dim(x: Any, dim: int, keepdim: bool) -> tuple[Any, Any]:
    """(values, indices) of the largest entry along `dim`; NaN wins, as in PyTorch."""
    return _arg_reduce(x, dim, keepdim, np.argmax)


def min_dim(x: Any, dim: int, keepdim: bool) -> tuple[Any, Any]:
    """(values, indices) of the smallest entry along `dim`; NaN wins, as in PyTorch."""
    return _arg_reduce(x, dim, keepdim, np.argmin)


@static
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
        for d in dims:
            _dim(d, 0, "reduce")  # 0 or -1 only, else PyTorch's IndexError
        return ()
    return dims


def var(
    x: Any,
    dim: tuple[int, ...] | None,
    correction: float | None,
    keepdim: bool,
    op: str = "var",
) -> Any:
    """`var.correction`: None and [] reduce every dim; correction defaults to 1.
    With no degrees of freedom left, PyTorch's warning (the values are nan or
    inf, as PyTorch's)."""
    ddof = 1 if correction is None else correction
    xp = _foreign_namespace(x)
    x = x if xp is not None else np.asarray(x)
    axis = reduce_dims(dim, x.ndim)
    if _reduction_factor(x, axis) - ddof <= 0:
        warn_at_caller(
            f"{op}(): degrees of freedom is <= 0. Correction should be strictly "
            "less than the reduction factor (input numel divided by output numel)."
        )
    if xp is not None:
        return _portable_var(xp, x, axis, ddof, keepdim)
    # np.var's computation, step by step, called from here (see mean_reduce):
    # numpy's own function warns "Degrees of freedom <= 0" from numpy's modules.
    dtype = np.float64 if x.dtype.kind in "biu" else None
    total = np.add.reduce(x, axis=axis, dtype=dtype, keepdims=True)  # checks axis
    count = _reduced_count(x, axis)
    mean = _divide(total, count)
    centered = np.asarray(np.subtract(x, mean))
    if centered.dtype.kind == "c":  # |z|**2 as re**2 + im**2
        parts = centered.view(dtype=(centered.real.dtype, (2,)))
        np.multiply(parts, parts, out=parts)
        squares = np.add(parts[..., 0], parts[..., 1], out=centered.real)
    else:
        squares = np.multiply(centered, centered, out=centered)
    total = np.add.reduce(squares, axis=axis, dtype=dtype, keepdims=keepdim)
    return _divide(total, np.maximum(count - ddof, 0))


def _portable_var(xp: Any, x: Any, axis: Any, ddof: float, keepdim: bool) -> Any:
    """var's formula in the standard's names: the mean of |x - mean|**2 over
    max(N - correction, 0) (integers in float64)."""
    if not xp.isdtype(x.dtype, ("real floating", "complex floating")):
        x = xp.astype(x, xp.float64)
    centered = x - xp.mean(x, axis=axis, keepdims=True)
    if xp.isdtype(x.dtype, "complex floating"):
        squares = xp.real(centered) ** 2 + xp.imag(centered) ** 2
    else:
        squares = centered * centered
    count = int(_reduced_count(x, axis))
    total = xp.sum(squares, axis=axis, keepdims=keepdim)
    with np.errstate(divide="ignore", invalid="ignore"):
        return total / max(count - ddof, 0)


def _divide(total: Any, count: Any) -> Any:
    """A reduction's sum divided by its count, in the sum's dtype (as numpy's
    mean and var divide)."""
    if type(total) is np.ndarray:
        return np.true_divide(total, count, out=total, casting="unsafe")
    return total.dtype.type(total / count)


def std_kernel(
    x: Any, dim: tuple[int, ...] | None, correction: float | None, keepdim: bool
) -> Any:
    variance = var(x, dim, correction, keepdim, "std")
    xp = _foreign_namespace(variance)
    return np.sqrt(variance) if xp is None else xp.sqrt(variance)


def _reduction_factor(x: np.ndarray, axis: tuple[int, ...] | None) -> int:
    """Input numel divided by output numel (0 for an empty output), as PyTorch
    counts the elements each result of a reduction takes."""
    if axis is None:
        return x.size
    reduced = {a % x.ndim for a in axis} if x.ndim else set()
    outputs = math.prod(s for i, s in enumerate(x.shape) if i not in reduced)
    return 0 if outputs == 0 else x.size // outputs


def logsumexp(x: Any, dim: tuple[int, ...], keepdim: bool) -> Any:
    """log(sum(exp(x))) over `dim`, shifted by the max so that exp cannot overflow."""
    xp = _foreign_namespace(x)
    if xp is not None:
        return _portable_logsumexp(xp, x, reduce_dims(dim, x.ndim), keepdim)
    axis = reduce_dims(dim, np.ndim(x))
    if np.size(x) == 0:  # an empty sum: log(0) = -inf, or an empty result
        with np.errstate(divide="ignore"):
            return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdim))
    peak = np.amax(x, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0)
    total = np.sum(np.exp(x - peak), axis=axis, keepdims=True)
    out = np.log(total) + peak
    if keepdim:
        return out
    return np.reshape(out, np.shape(np.sum(x, axis=axis)))


def _portable_logsumexp(xp: Any, x: Any, axis: Any, keepdim: bool) -> Any:
    """logsumexp's formula in the standard's names."""
    if math.prod(x.shape) == 0:
        with np.errstate(divide="ignore"):
            return xp.log(xp.sum(xp.exp(x), axis=axis, keepdims=keepdim))
    peak = xp.max(x, axis=axis, keepdims=True)
    peak = xp.where(xp.isfinite(peak), peak, xp.zeros_like(peak))
    out = xp.log(xp.sum(xp.exp(x - peak), axis=axis, keepdims=True)) + peak
    if keepdim:
        return out
    reduced = range(x.ndim) if axis is None else {a % x.ndim for a in axis}
    return xp.reshape(out, tuple(s for i, s in enumerate(x.shape) if i not in reduced))


def _single_axis(x: Any, dim: int) -> int | None:
    """`dim` as numpy's axis; None for a 0-d tensor (dim 0 or -1 is its one
    element; any other is out of range, as in PyTorch)."""
    dim = _dim(dim, np.ndim(x), "dim")
    return None if np.ndim(x) == 0 else dim


def cumsum(x: Any, dim: int, dtype: np.dtype | None) -> Any:
    xp = _foreign_namespace(x)
    if xp is not None:
        return _portable_scan(xp.cumulative_sum, xp, x, dim, dtype)
    return _scan(np.cumsum, x, dim, dtype)


def cumprod(x: Any, dim: int, dtype: np.dtype | None) -> Any:
    xp = _foreign_namespace(x)
    if xp is not None:
        return _portable_scan(xp.cumulative_prod, xp, x, dim, dtype)
    return _scan(np.cumprod, x, dim, dtype)


def _portable_scan(scan: Any, xp: Any, x: Any, dim: int, dtype: Any) -> Any:
    """cumulative_sum/cumulative_prod of another backend along `dim`."""
    _dim(dim, x.ndim, "dim")
    if dtype is not None:
        x = xp.astype(x, getattr(xp, np.dtype(dtype).name))
    if x.ndim == 0:
        return x + xp.zeros_like(x)
    return scan(x, axis=dim % x.ndim)


def _scan(scan: Any, x: Any, dim: int, dtype: np.dtype | None) -> Any:
    """A running sum or product along `dim`; float16 accumulates in float32 and
    rounds each result back, as PyTorch's CPU kernels do."""
    axis = _single_axis(x, dim)
    if axis is None:
        return np.array(x, dtype=dtype)
    out_dtype = np.dtype(dtype) if dtype is not None else np.asarray(x).dtype
    if out_dtype == np.float16:
        return scan(x, axis=axis, dtype=np.float32).astype(np.float16)
    return scan(x, axis=axis, dtype=dtype)


def _arg_reduction(np_fn: Any, x: Any, dim: int | None, keepdim: bool) -> Any:
    op = "argmax" if np_fn is np.argmax else "argmin"
    xp = _foreign_namespace(x)
    if dim is not None:
        dim = _dim(dim, x.ndim if xp is not None else np.ndim(x), op)
    _no_identity(op, x, None if dim is None else (dim,), True, True)
    if xp is not None:
        if dim is not None and x.ndim == 0:
            return xp.zeros((), dtype=xp.int64)
        return _arg_index(xp, x, dim, keepdim, op == "argmax")
    if dim is not None and np.ndim(x) == 0:
        return np.zeros((), dtype=np.int64)
    return np.asarray(np_fn(x, axis=dim, keepdims=keepdim), dtype=np.int64)


def argmax(x: Any, dim: int | None, keepdim: bool) -> Any:
    """The index of the first maximum, over the flattened tensor when dim is None."""
    return _arg_reduction(np.argmax, x, dim, keepdim)


def argmin(x: Any, dim: int | None, keepdim: bool) -> Any:
    return _arg_reduction(np.argmin, x, dim, keepdim)


def extreme(x: Any, dim: tuple[int, ...] | None, keepdim: bool, op: str) -> Any:
    """max()/min() of everything (dim None), or amax/amin over `dim` (every dim
    for []), with PyTorch's checks of a reduction without an identity."""
    fn = np.maximum.reduce if op in ("max", "amax") else np.minimum.reduce
    if type(x) is np.ndarray and dim is not None and len(dim) == 1:
        # One dim of an ndarray, in range and not empty: PyTorch's checks pass,
        # and nothing but the ufunc's reduce is called.
        d = dim[0]
        if type(d) is int and -x.ndim <= d < x.ndim and x.shape[d]:
            return fn(x, axis=d, keepdims=keepdim)
    full = dim is None or len(dim) == 0
    _no_identity(op, x, None if full else dim, False, False)  # dims in range
    ndim = x.ndim if hasattr(x, "ndim") else np.ndim(x)
    if not full and len(dim) > 1:
        _distinct([d % max(ndim, 1) for d in dim])
    xp = _foreign_namespace(x)
    if xp is not None:
        fn = xp.max if op in ("max", "amax") else xp.min
        axis = None if dim is None else reduce_dims(dim, ndim)
        return fn(x, axis=axis, keepdims=keepdim and dim is not None)
    # The ufunc's own reduce: np.amax's Python wrapper costs as much again
    # on small arrays.
    if dim is None:
        return fn(x, axis=None)
    return fn(x, axis=reduce_dims(dim, ndim), keepdims=keepdim)


def max_all(x: Any) -> Any:
    return extreme(x, None, False, "max")


def min_all(x: Any) -> Any:
    return extreme(x, None, False, "min")


def amax_kernel(x: Any, dim: tuple[int, ...], keepdim: bool) -> Any:
    return extreme(x, dim, keepdim, "amax")


def amin_kernel(x: Any, dim: tuple[int, ...], keepdim: bool) -> Any:
    return extreme(x, dim, keepdim, "amin")


def _keepdim_shape(
    sizes: tuple[int, ...], dim: tuple[int, ...] | None
) -> tuple[int, ...]:
    ndim = len(sizes)
    if not dim:
        return (1,) * ndim
    reduced = {d % ndim for d in dim} if ndim else set()
    return tuple(1 if i in reduced else s for i, s in enumerate(sizes))


def sum_backward(
    grad: Any, sizes: tuple[int, ...], dim: tuple[int, ...] | None, keepdim: bool
) -> Any:
    """Expand the gradient of a sum back over the reduced dims."""
    if not keepdim and sizes:
        grad = reshape(grad, _keepdim_shape(sizes, dim))
    return expand(grad, sizes)


def mean_backward(
    grad: Any, sizes: tuple[int, ...], dim: tuple[int, ...] | None, keepdim: bool
) -> Any:
    """sum_backward of the gradient divided by how many elements each mean
    averaged: divided before it is expanded, so the result stays a broadcast
    view (one division per mean, not per element; on Dask, no array of the
    input's size is formed)."""
    kept = _keepdim_shape(sizes, dim)
    count = math.prod(sizes) // max(math.prod(kept), 1) if sizes else 1
    return sum_backward(grad / count, sizes, dim, keepdim)


def value_selecting_reduction_backward(
    grad: Any, dim: int, indices: Any, sizes: tuple[int, ...], keepdim: bool
) -> Any:
    """max.dim, min.dim, median.dim, kthvalue, mode (one entry per slice along
    `dim`), sort and topk (several, `keepdim` True): each gradient goes to the
    position its value was selected from, zeros elsewhere."""
    if not sizes:
        return grad
    dim = _wrap_dim(dim, len(sizes))
    xp = _foreign_namespace(grad)
    if xp is not None and indices.ndim == len(sizes) - (not keepdim):
        return _portable_selected_backward(xp, grad, dim, indices, sizes, keepdim)
    index = np.asarray(_data(indices))
    if not keepdim:
        index = np.expand_dims(index, dim)
        grad = reshape(grad, tuple(index.shape))
    if isinstance(grad, np.ndarray):
        # Each slice's indices are distinct, so a write into fresh zeros is the
        # scatter (PyTorch's), without scatter_add's copy of its input or a mask
        # over the whole input
        out = np.zeros(sizes, dtype=grad.dtype)
        np.put_along_axis(out, index, grad, dim)
        return out
    if index.shape[dim] != 1:  # sort, topk: scattered into zeros
        return array_namespace(grad).scatter_add(_zeros(sizes, grad), dim, index, grad)
    positions = np.arange(sizes[dim]).reshape((-1,) + (1,) * (len(sizes) - dim - 1))
    mask = (positions == index).astype(_data(grad).dtype)
    return expand(grad, sizes) * _constant_like(grad, mask)


def _portable_selected_backward(
    xp: Any, grad: Any, dim: int, index: Any, sizes: tuple[int, ...], keepdim: bool
) -> Any:
    """value_selecting_reduction_backward in the standard's names: the gradient
    where the position along `dim` is the index. A sort's indices (a
    permutation along `dim`) are inverted by their own argsort, a gather; a
    topk's k indices are compared with every position (k by n per slice)."""
    if not keepdim:
        index = xp.expand_dims(index, axis=dim)
        grad = xp.expand_dims(grad, axis=dim)
    n, k = sizes[dim], index.shape[dim]
    if k == n and k > 1:
        inverse = xp.argsort(index, axis=dim, stable=True)
        return take_along_axis(grad, inverse, dim)
    shape = (1,) * dim + (n,) + (1,) * (len(sizes) - dim - 1)
    positions = xp.reshape(xp.arange(n, dtype=index.dtype), shape)
    zeros = xp.zeros((), dtype=grad.dtype)
    if k == 1:
        return xp.where(positions == index, grad, zeros)
    hits = xp.expand_dims(positions, axis=dim) == xp.expand_dims(index, axis=dim + 1)
    picked = xp.where(hits, xp.expand_dims(grad, axis=dim + 1), zeros)
    return xp.sum(picked, axis=dim)


def evenly_distribute_backward(grad: Any, input: Any, value: Any) -> Any:
    """max()/min() of a whole tensor: ties share the gradient evenly (NaN matches NaN)."""
    xp = _foreign_namespace(input)
    if xp is not None:
        mask = input == value
        if xp.isdtype(input.dtype, "real floating"):
            mask = xp.where(xp.isnan(value), xp.isnan(input), mask)
        share = grad / xp.sum(xp.astype(mask, grad.dtype))
        return xp.where(mask, share, xp.zeros(input.shape, dtype=share.dtype))
    x, v = np.asarray(_data(input)), np.asarray(_data(value))
    mask = x == v if v == v else x != x  # a NaN result matches the NaNs
    count = max(np.count_nonzero(mask), 1)
    # Selected, not multiplied (PyTorch's CPU masked_fill_ into zeros): a nan or
    # inf gradient reaches the extreme elements only.
    share = grad / count
    if _any_tensor(share):
        return _zero_outside(expand(share, x.shape), mask)
    out = np.zeros(x.shape, dtype=np.result_type(share))
    out[mask] = share  # the few selected entries, written into fresh zeros
    return out


def _dims(dim: int | tuple[int, ...] | None, ndim: int) -> tuple[int, ...]:
    """Reduced dims, wrapped; None and [] mean every dim (a 0-d tensor has none)."""
    if dim is None or (not isinstance(dim, int) and not dim) or ndim == 0:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else dim
    return tuple(sorted({d % ndim for d in dims}))


def _sum_keepdim(x: Any, dims: tuple[int, ...]) -> Any:
    """Sum over `dims` (wrapped; () sums nothing), keeping them as size 1."""
    if not dims:
        return x
    return array_namespace(x).sum(x, axis=dims, keepdims=True)


def _mean_keepdim(x: Any, dims: tuple[int, ...]) -> Any:
    return array_namespace(x).mean(x, axis=dims, keepdims=True)


def _cumprod(x: Any, dim: int) -> Any:
    return array_namespace(x).cumprod(x, axis=dim)


def _cumsum(x: Any, dim: int) -> Any:
    xp = _foreign_namespace(x)
    if xp is not None:
        return xp.cumulative_sum(x, axis=dim % x.ndim)
    return array_namespace(x).cumsum(x, axis=dim)


def _without_each(x: Any) -> tuple[Any, Any]:
    """x (..., n) as rows (..., n, n) where row k is x with x_k replaced by 1, and
    the (n, n) mask j >= k. Everything after it is products of the inputs and
    nothing is divided, so zeros need no special case (the O(n^2) route that
    PyTorch's cumprod_backward takes under create_graph)."""
    n = x.shape[-1]
    shape = tuple(x.shape)[:-1]
    rows = expand(reshape(x, shape + (1, n)), shape + (n, n))
    eye = _constant(np.eye(n, dtype=bool), x)
    return where(eye, 1.0, rows), _constant(np.triu(np.ones((n, n), dtype=bool)), x)


def _product_of_others(x: Any, dim: int) -> Any:
    """For every element along `dim`, the product of the other elements: exact
    where x has zeros (PyTorch's prod_safe_zeros_backward: the exclusive cumulative
    products from either end, multiplied; nothing is divided)."""
    xp = array_namespace(x)
    n = x.shape[dim]
    dim = _wrap_dim(dim, x.ndim)
    ones_shape = tuple(x.shape)[:dim] + (1,) + tuple(x.shape)[dim + 1 :]
    ones = _constant(np.ones(ones_shape, dtype=_data(x).dtype), x)
    head = xp.slice_Tensor(x, dim, 0, n - 1, 1)
    tail = xp.flip(xp.slice_Tensor(x, dim, 1, n, 1), (dim,))
    before = xp.cumprod(xp.concatenate([ones, head], axis=dim), axis=dim)
    after = xp.cumprod(xp.concatenate([ones, tail], axis=dim), axis=dim)
    return before * xp.flip(after, (dim,))


def _portable_prod_grad(xp: Any, self: Any, result: Any, axis: int | None) -> Any:
    """The product of the others, for each entry (of all, or along `axis`),
    without reading a value (a lazy array's zero test would compute it):
    result / self where self is not 0; where it is, the product of the
    nonzero entries if it is the only zero, else 0."""
    zero = self == 0
    nonzero = xp.where(zero, 1.0, self)
    zeros = xp.sum(xp.astype(zero, xp.int64), axis=axis, keepdims=True)
    at_zero = xp.where(zeros == 1, xp.prod(nonzero, axis=axis, keepdims=True), 0.0)
    return xp.where(zero, at_zero, result / nonzero)


def prod_backward(grad: Any, self: Any, result: Any) -> Any:
    """grad * conj(d prod(self)): result / self, or the product of the others
    where self has zeros."""
    if self.ndim == 0:
        return grad
    xp = _foreign_namespace(self)
    if xp is not None:
        return grad * conj(_portable_prod_grad(xp, self, result, None))
    if not np.any(_data(self) == 0):
        return grad * conj(result / self)
    others = _product_of_others(reshape(self, (-1,)), 0)
    return grad * conj(reshape(others, tuple(self.shape)))


def prod_dim_backward(
    grad: Any, self: Any, result: Any, dim: int, keepdim: bool
) -> Any:
    """grad * conj(d prod(self, dim)): as prod_backward, per slice along `dim`."""
    if self.ndim == 0:
        return grad
    dim = dim % self.ndim
    if not keepdim:
        grad = reshape(grad, _keepdim_shape(tuple(self.shape), (dim,)))
        result = reshape(result, _keepdim_shape(tuple(self.shape), (dim,)))
    xp = _foreign_namespace(self)
    if xp is not None:
        return grad * conj(_portable_prod_grad(xp, self, result, dim))
    if not np.any(_data(self) == 0):
        return grad * conj(result / self)
    return grad * conj(_product_of_others(self, dim))


def var_backward(
    grad: Any,
    self: Any,
    dim: tuple[int, ...] | None,
    correction: float | None,
    keepdim: bool,
) -> Any:
    """2 / (N - correction) * grad * (self - mean), N the reduced element count."""
    correction = 1 if correction is None else correction
    sizes = tuple(self.shape)
    dims = _dims(dim, len(sizes))
    dof = math.prod(sizes[d] for d in dims) - correction
    if dim is None or not sizes:
        if dof <= 0:
            # 2 / 0: inf where self differs from the mean, nan (inf * 0) where not.
            same = _data(self) == _data(_mean_keepdim(self, dims))
            return grad * _constant(np.where(same, math.nan, math.inf), self)
        return (2.0 / dof) * grad * (self - _mean_keepdim(self, dims))
    if not keepdim and len(sizes) > 1:
        grad = reshape(grad, _keepdim_shape(sizes, dims))
    with np.errstate(divide="ignore"):
        factor = float(np.divide(2.0, dof))  # +-inf when dof is 0, as in PyTorch
    return factor * grad * (self - _mean_keepdim(self, dims))


def std_backward(
    result: Any,
    grad: Any,
    self: Any,
    dim: tuple[int, ...] | None,
    correction: float | None,
    keepdim: bool,
) -> Any:
    """var_backward of grad / (2 std), with 0 where std is 0 (no nan)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        grad_var = where(result == 0, 0.0, grad / (result * 2))
    return var_backward(grad_var, self, dim, correction, keepdim)


def restore_reduced_dims(output: Any, dim: tuple[int, ...], keepdim: bool) -> Any:
    """Put back the dims a reduction removed, as size 1 (so `output` broadcasts)."""
    if keepdim or not dim:
        return output
    total = output.ndim + len(dim)
    reduced = {d % total for d in dim}
    sizes = iter(tuple(output.shape))
    shape = tuple(1 if i in reduced else next(sizes) for i in range(total))
    return reshape(output, shape)


def scale_grad_by_count(grad: Any, mask: Any, dim: tuple[int, ...]) -> Any:
    """grad split evenly among the positions in `mask` (ties in amax/amin)."""
    # PyTorch divides by the int64 count in the gradient's dtype: a mask in that
    # dtype counts to the same values, without a float64 detour and cast back.
    xp = _foreign_namespace(grad)
    if xp is not None:
        mask = xp.astype(mask, grad.dtype)
        return (grad / xp.sum(mask, axis=_dims(dim, mask.ndim), keepdims=True)) * mask
    mask = _data(mask)
    mask = _constant(mask.astype(_data(grad).dtype, copy=False), grad)
    return (grad / _sum_keepdim(mask, _dims(dim, mask.ndim))) * mask


def logsumexp_backward(
    grad: Any, self: Any, result: Any, dim: tuple[int, ...], keepdim: bool
) -> Any:
    """grad * exp(self - logsumexp(self)): softmax weights along `dim`."""
    if not keepdim and self.ndim != 0:
        kept = _keepdim_shape(tuple(self.shape), dim)
        grad = reshape(grad, kept)
        result = reshape(result, kept)
    return grad * exp(self - result)


def _reversed_cumsum(x: Any, dim: int) -> Any:
    """sum over j >= i along `dim`: flip, cumsum, flip."""
    return flip(_cumsum(flip(x, (dim,)), dim), (dim,))


def cumsum_backward(grad: Any, dim: int) -> Any:
    if grad.ndim == 0 or grad.shape[dim] == 1:
        return grad
    return _reversed_cumsum(grad, dim)


def cumprod_backward(grad: Any, self: Any, dim: int, result: Any) -> Any:
    """d cumprod: reversed_cumsum(grad * result) / self, or, where self has zeros,
    sum over j >= k of grad_j * prod_{i <= j, i != k} self_i."""
    if self.ndim == 0 or self.shape[dim] == 1:
        return grad
    if not np.any(_data(self) == 0):
        return _reversed_cumsum(result * grad, dim) / self
    rows, upper = _without_each(transpose(self, dim, -1))
    moved_grad = transpose(grad, dim, -1)
    n = self.shape[dim]
    weighted = _cumprod(rows, -1) * reshape(
        moved_grad, tuple(moved_grad.shape)[:-1] + (1, n)
    )
    picked = where(upper, weighted, 0.0)
    summed = reshape(_sum_keepdim(picked, (picked.ndim - 1,)), tuple(moved_grad.shape))
    return transpose(summed, dim, -1)


def count_nonzero_kernel(x: Any, dim: tuple[int, ...] | None) -> np.ndarray:
    xp = _foreign_namespace(x)
    if xp is not None:
        axis = reduce_dims(dim, x.ndim)
        return xp.astype(xp.sum(xp.astype(x != 0, xp.int64), axis=axis), xp.int64)
    axis = reduce_dims(dim, np.ndim(x))
    return np.asarray(np.count_nonzero(x, axis=axis), dtype=np.int64)


# numpy's name and signature, with PyTorch's silent nan for an empty mean (see
# mean_reduce).
register_numpy_kernels(mean=mean_reduce)
