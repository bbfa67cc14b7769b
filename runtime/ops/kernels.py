"""Helpers that forward kernels in derivatives.yaml may call, besides `np.*`.

Each takes and returns ndarrays (or Python numbers) and never sees a Tensor. The
generator reads `__all__` with ast to know which names a `forward:` may use.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime.errors import scalar_type_name as _st
from yamlgrad.runtime.errors import type_meta_name as _tm
from yamlgrad.runtime.errors import warn_at_caller
from yamlgrad.runtime.wrappers.kernel_errors import KernelValueError, broadcast_pair

KERNELS = (
    "c_order",
    "transpose_kernel",
    "vector_norm_input",
    "sum_reduce",
    "view_kernel",
    "alias_kernel",
    "reshape_alias_kernel",
    "chunk_size",
    "diag_rank",
    "flatten_keeps",
    "max_all",
    "min_all",
    "amax_kernel",
    "amin_kernel",
    "cpu_softmax_input",
    "flip_kernel",
    "triangle",
    "outer_column",
    "checked_repeats",
    "clone_kernel",
    "mm_kernel",
    "bmm_kernel",
    "dot_kernel",
    "mv_kernel",
    "addmm_kernel",
    "baddbmm_kernel",
    "linalg_inv_ex",
    "index_add",
    "diagonal_view",
    "reduce_dims",
    "expand_shape",
    "view_shape",
    "sigmoid",
    "relu",
    "cast",
    "transpose_2d",
    "slice_kernel",
    "slice_backward_kernel",
    "select_kernel",
    "select_backward_kernel",
    "max_dim",
    "min_dim",
    "mean_reduce",
    "split_kernel",
    "split_with_sizes_kernel",
    "unbind_kernel",
    "erf",
    "erfc",
    "logit",
    "clamp",
    "lerp",
    "xlogy",
    "divide",
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
    "flatten_shape",
    "unflatten_shape",
    "movedim_dims",
    "squeeze_dims",
    "index_select",
    "gather",
    "scatter",
    "scatter_add",
    "masked_fill",
    "masked_select",
    "roll",
    "repeat",
    "tile_repeats",
    "interleave_sizes",
    "constant_pad_nd",
    "constant_pad_value",
    "index_tensor",
    "narrow_start",
    "interleave_dim",
    "broadcast_shape",
    "expand_param",
    "convolution_kernel",
    "max_pool2d_with_indices_kernel",
    "avg_pool2d_kernel",
    "adaptive_avg_pool2d_kernel",
    "embedding_kernel",
    "native_layer_norm_kernel",
    "native_batch_norm_kernel",
    "native_group_norm_kernel",
    "gelu_kernel",
    "softplus_kernel",
    "mish_kernel",
    "elu_kernel",
    "celu_kernel",
    "leaky_relu_kernel",
    "hardtanh_kernel",
    "hardswish_kernel",
    "hardsigmoid_kernel",
    "log_sigmoid_kernel",
    "apply_loss_reduction",
    "mse_loss_kernel",
    "smooth_l1_loss_kernel",
    "huber_loss_kernel",
    "binary_cross_entropy_kernel",
    "binary_cross_entropy_with_logits_kernel",
    "nll_loss_kernel",
    "nll_loss2d_kernel",
)


def c_order(result: Any) -> Any:
    """A kernel's result (or each of a tuple's) laid out row-major: PyTorch's
    reductions, scans, softmaxes, concatenations, scatters and norms write a
    fresh contiguous tensor whatever the input's layout, where numpy's keep the
    input's order. It decides whether a later `view` works (and whether
    `reshape` records ViewBackward0 or UnsafeViewBackward0)."""
    if type(result) is tuple:
        return tuple(c_order(r) for r in result)
    if type(result) is np.ndarray and not result.flags.c_contiguous:
        return np.array(result, order="C")
    return result


def sum_reduce(
    x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None
) -> Any:
    """np.sum's own ufunc reduction, called from here: numpy's Python wrapper
    would raise its RuntimeWarnings (inf - inf) in numpy's module, where the
    package's warning filter cannot tell them from a user's."""
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
    without a word. Integers and bools average in float64, float16 sums in
    float32, as np.mean does."""
    x = np.asarray(x)
    half = dtype is None and x.dtype == np.float16
    if dtype is None and x.dtype.kind in "biu":
        dtype = np.float64
    total = np.add.reduce(
        x, axis=axis, dtype=np.float32 if half else dtype, keepdims=keepdims
    )
    value = _divide(total, _reduced_count(x, axis))
    return value.astype(np.float16) if half else value


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


def infer_size(size: tuple[int, ...], numel: int) -> tuple[int, ...]:
    """PyTorch's infer_size: `size` with its one -1 resolved for `numel` elements,
    checked dim by dim in order."""
    known, inferred = 1, None
    for i, s in enumerate(size):
        if s == -1:
            if inferred is not None:
                raise RuntimeError("only one dimension can be inferred")
            inferred = i
        elif s >= 0:
            known *= s
        else:
            raise RuntimeError(
                f"invalid shape dimension {s} at index {i} of shape {list(size)}"
            )
    if numel == known or (inferred is not None and known > 0 and numel % known == 0):
        if inferred is None:
            return tuple(size)
        if known == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {list(size)} because "
                "the unspecified dimension size -1 can be any value and is ambiguous"
            )
        return tuple(size[:inferred]) + (numel // known,) + tuple(size[inferred + 1 :])
    raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")


def view_shape(array: Any, size: tuple[int, ...]) -> tuple[int, ...]:
    """`view`/`reshape`'s target, with PyTorch's message for a size that cannot fit."""
    infer_size(tuple(size), int(np.size(array)))
    return size


ERR_VIEW_STRIDES = (
    "view size is not compatible with input tensor's size and stride (at least one "
    "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
)


def viewable(x: Any, size: tuple[int, ...]) -> bool:
    """Whether `x` can be seen as `size` without a copy (PyTorch's computeStride)."""
    try:
        np.reshape(np.asarray(x), view_shape(x, size), copy=False)
    except ValueError:
        return False
    return True


def view_kernel(x: Any, size: tuple[int, ...]) -> Any:
    """`view`: the same memory as `size`, or PyTorch's error when the strides
    cannot express it."""
    shape = view_shape(x, size)
    try:
        return np.reshape(np.asarray(x), shape, copy=False)
    except ValueError:
        raise RuntimeError(ERR_VIEW_STRIDES) from None


def alias_kernel(x: Any) -> Any:
    """`alias`: a new array over the same memory."""
    return np.asarray(x).view()


def reshape_alias_kernel(x: Any, size: tuple[int, ...], stride: tuple[int, ...]) -> Any:
    """`_reshape_alias`: `x` seen as `size` with the given element strides. Only
    the strides of a view are accepted (what reshape passes): any others would
    address memory numpy cannot check."""
    out = view_kernel(x, size)
    if out.size > 1 and tuple(s * out.itemsize for s in stride) != out.strides:
        have = [s // out.itemsize for s in out.strides]
        raise RuntimeError(
            f"_reshape_alias: strides {list(stride)} are not those of a view of the "
            f"input as {list(size)} ({have})"
        )
    return out


def element_strides(x: Any, size: tuple[int, ...]) -> tuple[int, ...]:
    """The strides, in elements, of `x` seen as `size` without a copy."""
    out = np.reshape(np.asarray(x), view_shape(x, size), copy=False)
    return tuple(s // out.itemsize for s in out.strides)


def clone_kernel(x: Any, memory_format: int | None) -> Any:
    """`clone`: a copy with the same strides (preserve_format, the default, for
    a tensor whose elements fill its memory once), else row-major."""
    keep = memory_format is None and _dense(x)
    return np.array(x, copy=True, order="K" if keep else "C")


def _dense(x: Any) -> bool:
    """Non-overlapping and dense, in some order of the dims (a permuted tensor),
    as PyTorch's preserve_format asks; an expanded or strided view is not."""
    if type(x) is not np.ndarray:
        return True
    expected = x.itemsize
    for stride, size in sorted(
        (abs(st), n) for st, n in zip(x.strides, x.shape) if n != 1
    ):
        if stride != expected:
            return False
        expected *= size
    return True


def sigmoid(x: Any) -> Any:
    """1 / (1 + exp(-x)), without overflow for large |x|."""
    return np.exp(-np.logaddexp(0, -x))


def relu(x: Any) -> Any:
    return np.maximum(x, 0)


def vector_norm_input(x: Any, dtype: np.dtype | None) -> Any:
    """linalg.vector_norm's input after its checks: a float (or complex) tensor,
    cast to `dtype` when one is given, which must not narrow it."""
    x_dtype = np.result_type(x)
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


def cast(x: Any, dtype: np.dtype | None) -> Any:
    """A copy of `x` as `dtype` (a copy even when the dtype is unchanged)."""
    return np.array(x, dtype=dtype, copy=True)


def transpose_kernel(x: Any, dim0: int, dim1: int) -> Any:
    """`transpose`: a view with two dims swapped; a 0-d tensor takes 0 and -1
    and is returned as a view of itself."""
    ndim = np.ndim(x)
    d0, d1 = _dim(dim0, ndim, "transpose"), _dim(dim1, ndim, "transpose")
    if ndim == 0:
        return np.asarray(x).view()
    return np.swapaxes(x, d0, d1)


def transpose_2d(x: Any) -> Any:
    """`t()`: transpose a matrix; a vector or a 0-d tensor is returned as it is."""
    if np.ndim(x) > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but self is {np.ndim(x)}D"
        )
    return np.transpose(x)


def _dim(dim: int, ndim: int, op: str) -> int:
    """A dim wrapped into [0, ndim), with PyTorch's IndexError for one out of range."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
            f"but got {dim})"
        )
    return dim % n


def _along(dim: int, index: Any) -> tuple[Any, ...]:
    return (slice(None),) * dim + (index,)


def slice_kernel(
    x: Any, dim: int, start: int | None, end: int | None, step: int
) -> Any:
    """`x[..., start:end:step, ...]` along `dim`: a view, as PyTorch's slice."""
    return x[_along(_slice_dim(np.ndim(x), dim, step), slice(start, end, step))]


def _slice_dim(ndim: int, dim: int, step: int) -> int:
    """aten::slice's checks, in its order: a 0-d tensor, the dim, the step."""
    if ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    dim = _dim(dim, ndim, "slice")
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return dim


def slice_backward_kernel(
    grad: Any,
    sizes: tuple[int, ...],
    dim: int,
    start: int | None,
    end: int | None,
    step: int,
) -> Any:
    """Zeros of the input's shape with `grad` written into the slice."""
    out = np.zeros(sizes, dtype=np.result_type(grad))
    out[_along(_slice_dim(len(sizes), dim, step), slice(start, end, step))] = grad
    return out


def select_kernel(x: Any, dim: int, index: int) -> Any:
    """`x` at `index` along `dim` (a view with that dim removed)."""
    dim = _dim(dim, np.ndim(x), "select")
    size = np.shape(x)[dim]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size "
            f"{list(np.shape(x))} at dimension {dim}"
        )
    return x[_along(dim, index)]


def select_backward_kernel(
    grad: Any, sizes: tuple[int, ...], dim: int, index: int
) -> Any:
    out = np.zeros(sizes, dtype=np.result_type(grad))
    out[_along(_dim(dim, len(sizes), "select"), index)] = grad
    return out


def _no_identity(op: str, x: Any, dims: Any, index_error: bool, wrap: bool) -> None:
    """The checks of PyTorch's reductions without an identity (max, argmax, amax,
    ...) on empty input: a full reduction of an empty tensor, or a reduced dim
    of size 0. `dims` None is a full reduction; `wrap`: the message shows the
    wrapped dim (max, argmax), else the dim as given (amax)."""
    shape = x.shape if type(x) is np.ndarray else np.shape(x)
    if dims is None:
        if np.size(x) == 0:
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


def _arg_reduce(x: Any, dim: int, keepdim: bool, arg: Any) -> tuple[Any, Any]:
    x = np.asarray(x)
    op = "max" if arg is np.argmax else "min"
    dim = _dim(dim, x.ndim, op)
    _no_identity(op, x, (dim,), True, True)
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


def split_kernel(x: Any, split_size: int, dim: int) -> list[Any]:
    """Views of `split_size` along `dim`; the last one may be smaller."""
    if np.ndim(x) == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if split_size < 0:
        raise RuntimeError(
            f"split expects split_size be non-negative, but got split_size={split_size}"
        )
    dim = _dim(dim, np.ndim(x), "split")
    size = np.shape(x)[dim]
    if split_size == 0 and size != 0:
        raise RuntimeError(
            "split_size can only be 0 if dimension size is 0, but got dimension size "
            f"of {size}"
        )
    starts = range(0, max(size, 1), max(split_size, 1))
    return [x[_along(dim, slice(s, s + split_size))] for s in starts]


def split_with_sizes_kernel(
    x: Any, split_sizes: tuple[int, ...], dim: int
) -> list[Any]:
    """Views of the given sizes along `dim`, which must add up to its size."""
    if np.ndim(x) == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    wrapped = _dim(dim, np.ndim(x), "split_with_sizes")
    size = np.shape(x)[wrapped]
    pieces, start = [], 0
    for length in split_sizes:
        if length < 0:
            raise RuntimeError(
                "split_with_sizes expects split_sizes have only non-negative entries, "
                f"but got split_sizes={list(split_sizes)}"
            )
        pieces.append(x[_along(wrapped, slice(start, start + length))])
        start += length
    if start != size:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {size} (input "
            f"tensor's size at dimension {dim}), but got split_sizes="
            f"{list(split_sizes)}"
        )
    return pieces


def unbind_kernel(x: Any, dim: int) -> list[Any]:
    dim = _dim(dim, np.ndim(x), "unbind")
    return [x[_along(dim, i)] for i in range(np.shape(x)[dim])]


_ERF = np.frompyfunc(math.erf, 1, 1)
_ERFC = np.frompyfunc(math.erfc, 1, 1)


def _float_dtype(x: Any) -> np.dtype:
    """The dtype of a float result: x's own, or float64 for integers and bools."""
    dtype = np.asarray(x).dtype
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def erf(x: Any) -> Any:
    """The error function, element-wise, to float64 accuracy (numpy has none).

    math.erf per element, cast back to x's float dtype.
    """
    return np.asarray(_ERF(x), dtype=_float_dtype(x))


def erfc(x: Any) -> Any:
    """1 - erf(x), without the cancellation for large x (math.erfc per element)."""
    return np.asarray(_ERFC(x), dtype=_float_dtype(x))


def logit(x: Any, eps: float | None) -> Any:
    """log(z / (1 - z)), z = x clamped to [eps, 1 - eps] (unclamped when eps is None
    or negative, as in PyTorch). logit(1) is inf and logit(x > 1) nan, silently."""
    z = x if eps is None or eps < 0 else np.clip(x, eps, 1 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(z / (1 - z))


def clamp(x: Any, low: Any, high: Any) -> Any:
    """torch.clamp: min(max(x, low), high), skipping a bound that is None.

    With low > high every element becomes high, as in PyTorch.
    """
    if low is None and high is None:
        raise RuntimeError(
            "torch.clamp: At least one of 'min' or 'max' must not be None"
        )
    out = x
    if low is not None:
        out = np.maximum(out, low)
    if high is not None:
        out = np.minimum(out, high)
    return out


def lerp(start: Any, end: Any, weight: Any) -> Any:
    """start + weight * (end - start), in PyTorch's two forms: from `start` for
    |weight| < 0.5 and from `end` otherwise, so that weight 1 gives exactly end.
    No promotion: `end` and a tensor `weight` must have `start`'s dtype (a 0-d
    weight binds as a Scalar, as in PyTorch)."""
    dtype = np.result_type(start)
    for name, value in (("end", end), ("weight", weight)):
        if type(value) is np.ndarray and value.dtype != dtype:
            if name == "weight" and value.ndim == 0:
                weight = value.astype(dtype)
                continue
            raise RuntimeError(
                f"expected dtype {_tm(dtype)} for `{name}` but got dtype "
                f"{_tm(value.dtype)}"
            )
    diff = np.subtract(end, start)
    if isinstance(weight, (int, float)):  # a Scalar weight keeps start's dtype
        return start + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)
    small = np.abs(weight) < 0.5
    return np.where(small, start + weight * diff, end - diff * np.subtract(1, weight))


def xlogy(x: Any, y: Any) -> Any:
    """x * log(y), with 0 where x is 0 (even where log(y) is -inf or nan) unless y
    is nan, as torch.xlogy."""
    dtype = np.result_type(x, y, 0.0)
    x = np.asarray(x, dtype=dtype)
    y = np.asarray(y, dtype=dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x * np.log(y)
    out = np.where(x == 0, np.zeros_like(out), out)
    return np.where(np.isnan(y), np.full_like(out, np.nan), out)


def divide(a: Any, b: Any, rounding_mode: str | None) -> Any:
    """`div` with PyTorch's rounding modes: None (true division), "trunc" (toward
    zero) or "floor" (toward -inf, as Python's `//`)."""
    if rounding_mode is None:
        return np.true_divide(a, b)
    if rounding_mode == "trunc":
        dtype = np.result_type(a, b)
        quotient = np.trunc(np.true_divide(a, b))
        return quotient if dtype.kind == "f" else quotient.astype(dtype)
    if rounding_mode == "floor":
        return np.floor_divide(a, b)
    raise RuntimeError(
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
        f"found '{rounding_mode}'"
    )


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
    x = np.asarray(x)
    axis = reduce_dims(dim, x.ndim)
    if _reduction_factor(x, axis) - ddof <= 0:
        warn_at_caller(
            f"{op}(): degrees of freedom is <= 0. Correction should be strictly "
            "less than the reduction factor (input numel divided by output numel)."
        )
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


def _divide(total: Any, count: Any) -> Any:
    """A reduction's sum divided by its count, in the sum's dtype (as numpy's
    mean and var divide)."""
    if type(total) is np.ndarray:
        return np.true_divide(total, count, out=total, casting="unsafe")
    return total.dtype.type(total / count)


def std(
    x: Any, dim: tuple[int, ...] | None, correction: float | None, keepdim: bool
) -> Any:
    return np.sqrt(var(x, dim, correction, keepdim, "std"))


def _reduction_factor(x: np.ndarray, axis: tuple[int, ...] | None) -> int:
    """Input numel divided by output numel (0 for an empty output), as PyTorch
    counts the elements each result of a reduction takes."""
    if axis is None:
        return x.size
    reduced = {a % x.ndim for a in axis} if x.ndim else set()
    outputs = math.prod(s for i, s in enumerate(x.shape) if i not in reduced)
    return 0 if outputs == 0 else x.size // outputs


def vector_norm(x: Any, p: float, dim: tuple[int, ...] | None, keepdim: bool) -> Any:
    """`linalg.vector_norm`: sum(|x|**p)**(1/p); max |x| for inf, min for -inf."""
    axis = reduce_dims(dim, np.ndim(x))
    magnitude = np.abs(x)
    if abs(p) == math.inf and np.size(x) == 0:
        name = "inf" if p > 0 else "-inf"
        shape = np.shape(x)
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


def _single_axis(x: Any, dim: int) -> int | None:
    """`dim` as numpy's axis; None for a 0-d tensor (dim 0 or -1 is its one
    element; any other is out of range, as in PyTorch)."""
    dim = _dim(dim, np.ndim(x), "dim")
    return None if np.ndim(x) == 0 else dim


def cumsum(x: Any, dim: int, dtype: np.dtype | None) -> Any:
    return _scan(np.cumsum, x, dim, dtype)


def cumprod(x: Any, dim: int, dtype: np.dtype | None) -> Any:
    return _scan(np.cumprod, x, dim, dtype)


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


def softmax(x: Any, dim: int) -> Any:
    """exp(x) / sum(exp(x)) along `dim`, shifted by the max."""
    axis = _single_axis(x, dim)
    if np.size(x) == 0:
        return np.array(x, copy=True)
    shifted = np.exp(x - np.amax(x, axis=axis, keepdims=True))
    return shifted / np.sum(shifted, axis=axis, keepdims=True)


def log_softmax(x: Any, dim: int) -> Any:
    axis = _single_axis(x, dim)
    if np.size(x) == 0:
        return np.array(x, copy=True)
    shifted = x - np.amax(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _arg_reduction(np_fn: Any, x: Any, dim: int | None, keepdim: bool) -> Any:
    op = "argmax" if np_fn is np.argmax else "argmin"
    if dim is not None:
        dim = _dim(dim, np.ndim(x), op)
    _no_identity(op, x, None if dim is None else (dim,), True, True)
    if dim is not None and np.ndim(x) == 0:
        return np.zeros((), dtype=np.int64)
    return np.asarray(np_fn(x, axis=dim, keepdims=keepdim), dtype=np.int64)


def argmax(x: Any, dim: int | None, keepdim: bool) -> Any:
    """The index of the first maximum, over the flattened tensor when dim is None."""
    return _arg_reduction(np.argmax, x, dim, keepdim)


def argmin(x: Any, dim: int | None, keepdim: bool) -> Any:
    return _arg_reduction(np.argmin, x, dim, keepdim)


# -- PyTorch's same-dtype checks of its matrix, convolution and loss kernels ---------
# (element-wise ops promote; these refuse operands of two dtypes, each with its
# own message).


def _size_at(x: Any, d: int) -> int:
    """x.size(d), with PyTorch's IndexError for a dim x does not have."""
    n = np.ndim(x)
    if n == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not -n <= d < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but "
            f"got {d})"
        )
    return int(np.shape(x)[d])


def _check_expands(x: Any, target: tuple[int, ...]) -> None:
    """`self` of addmm/baddbmm must expand to the product's shape."""
    shape = list(np.shape(x))
    if len(shape) > len(target):
        raise RuntimeError(
            f"expand(torch.{_st(np.result_type(x))}Tensor{{{_sizes(tuple(shape))}}}, "
            f"size={list(target)}): the number of sizes provided ({len(target)}) must "
            f"be greater or equal to the number of dimensions in the tensor "
            f"({len(shape)})"
        )
    offset = len(target) - len(shape)
    for i in range(len(shape) - 1, -1, -1):
        want = target[i + offset]
        if shape[i] != 1 and shape[i] != want:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing "
                f"size ({shape[i]}) at non-singleton dimension {i + offset}.  Target "
                f"sizes: {list(target)}.  Tensor sizes: {shape}"
            )


def _check_mm_shapes(a: Any, b: Any) -> None:
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} "
            f"and {b.shape[0]}x{b.shape[1]})"
        )


def mm_kernel(a: Any, b: Any) -> Any:
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.dtype != b.dtype:
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{_tm(a.dtype)} != {_tm(b.dtype)}"
        )
    _check_mm_shapes(a, b)
    return np.matmul(a, b)


def bmm_kernel(a: Any, b: Any) -> Any:
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _check_batch2(a, b)
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"expected scalar type {_st(a.dtype)} but found {_st(b.dtype)}"
        )
    return np.matmul(a, b)


def _check_batch2(a: Any, b: Any) -> None:
    if b.shape[:2] != (a.shape[0], a.shape[2]):
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}]."
        )


def dot_kernel(a: Any, b: Any) -> Any:
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors"
        )
    if a.dtype != b.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{_st(a.dtype)} and {_st(b.dtype)}"
        )
    if a.size != b.size:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.size}] and src [{b.size}] "
            f"to have the same number of elements, but got {a.size} and {b.size} "
            "elements respectively"
        )
    return np.dot(a, b)


def mv_kernel(mat: Any, vec: Any) -> Any:
    rows = _size_at(mat, 0)
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {mat.ndim}, {vec.ndim}"
        )
    if mat.dtype != vec.dtype:
        v, m = _st(vec.dtype), _st(mat.dtype)
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got {v}, {m}, and {v}"
        )
    if mat.shape[1] != vec.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({rows}), mat ({rows}x{mat.shape[1]}), vec "
            f"({vec.shape[0]})"
        )
    return np.matmul(mat, vec)


def addmm_kernel(x: Any, mat1: Any, mat2: Any, beta: float, alpha: float) -> Any:
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
    _check_mm_shapes(mat1, mat2)
    _check_expands(x, (mat1.shape[0], mat2.shape[1]))
    for name, a in (("self", x), ("mat1", mat1)):
        if np.result_type(a) != mat2.dtype:
            raise RuntimeError(
                f"{name} and mat2 must have the same dtype, but got "
                f"{_st(np.result_type(a))} and {_st(mat2.dtype)}"
            )
    return addmm(x, mat1, mat2, beta, alpha)


def baddbmm_kernel(x: Any, b1: Any, b2: Any, beta: float, alpha: float) -> Any:
    target = (_size_at(b1, 0), _size_at(b1, 1), _size_at(b2, 2))
    _check_expands(x, target)
    if b1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _check_batch2(b1, b2)
    dtype = np.result_type(x)
    if b1.dtype != dtype:
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {_tm(dtype)}, batch1: "
            f"{_tm(b1.dtype)}, batch2: {_tm(b2.dtype)}"
        )
    if b2.dtype != dtype:
        raise RuntimeError(
            f"expected scalar type {_st(dtype)} but found {_st(b2.dtype)}"
        )
    return addmm(x, b1, b2, beta, alpha)


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
    d1, d2 = _dim(dim1, ndim, "diag_embed"), _dim(dim2, ndim, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    size = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (size, size), dtype=x.dtype)
    rows, cols = _diagonal_index(size, size, offset)
    out[..., rows, cols] = x
    return np.moveaxis(out, (-2, -1), (d1, d2))


def diagonal_view(x: Any, offset: int, dim1: int, dim2: int) -> Any:
    """np.diagonal, writeable when `x` is (numpy hands out a read-only view, but
    an in-place op on a tensor's diagonal writes through it, as in PyTorch)."""
    d1, d2 = _dim(dim1, np.ndim(x), "diagonal"), _dim(dim2, np.ndim(x), "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    out = np.diagonal(x, offset, d1, d2)
    if isinstance(x, np.ndarray) and x.flags.writeable:
        out.flags.writeable = True
    return out


def diagonal_backward(
    grad: Any, sizes: tuple[int, ...], offset: int, dim1: int, dim2: int
) -> Any:
    """Zeros of `sizes` with `grad` written on the diagonal that `diagonal` reads."""
    grad = np.asarray(grad)
    if any(n < 0 for n in sizes):
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    out = np.zeros(sizes, dtype=grad.dtype)
    # PyTorch's order: diagonal's dim checks on the zeros, then copy_'s broadcast
    copy_into(diagonal_view(out, offset, dim1, dim2), grad)
    return out


def copy_into(dst: np.ndarray, src: Any) -> None:
    """`dst.copy_(src)`: src broadcast to dst's shape, with PyTorch's texts for
    shapes that do not broadcast or that broadcast to a larger shape."""
    a = tuple(dst.shape)
    broadcast = broadcast_pair(a, tuple(np.shape(src)))
    if broadcast != a:
        raise RuntimeError(
            f"output with shape {list(a)} doesn't match the broadcast shape "
            f"{list(broadcast)}"
        )
    np.copyto(dst, src)


def trace(x: Any) -> Any:
    """The sum of a matrix's main diagonal (PyTorch accepts matrices only)."""
    if np.ndim(x) != 2:
        raise RuntimeError(
            f"trace: expected a matrix, but got tensor with dim {np.ndim(x)}"
        )
    return np.trace(x)


# -- shape and indexing ------------------------------------------------------------------


def flatten_shape(
    shape: tuple[int, ...], start_dim: int, end_dim: int
) -> tuple[int, ...]:
    """The shape `flatten(start_dim, end_dim)` views to (a 0-d tensor becomes (1,))."""
    start = _dim(start_dim, len(shape), "flatten")
    end = _dim(end_dim, len(shape), "flatten")
    if start > end:
        raise RuntimeError(
            "flatten() has invalid args: start_dim cannot come after end_dim"
        )
    if not shape:
        return (1,)
    return (
        tuple(shape[:start])
        + (math.prod(shape[start : end + 1]),)
        + tuple(shape[end + 1 :])
    )


def flatten_keeps(shape: tuple[int, ...], start_dim: int, end_dim: int) -> bool:
    """Whether `flatten` returns its input itself (one dim flattened, not 0-d)."""
    flatten_shape(shape, start_dim, end_dim)  # PyTorch's checks
    return bool(shape) and start_dim % len(shape) == end_dim % len(shape)


def unflatten_shape(
    shape: tuple[int, ...], dim: int, sizes: tuple[int, ...]
) -> tuple[int, ...]:
    """The shape `unflatten(dim, sizes)` views to (one -1 in `sizes` is inferred).
    PyTorch rewords infer_size's "is invalid" error and wraps any other."""
    dim = _dim(dim, len(shape), "unflatten")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    sizes = tuple(sizes)
    try:
        if not shape:  # sym_size(0) of a 0-d tensor
            raise IndexError(
                f"Dimension specified as {dim} but tensor has no dimensions"
            )
        inferred = infer_size(sizes, shape[dim])
    except (RuntimeError, IndexError) as error:
        if "is invalid for input of size" in str(error):
            raise RuntimeError(
                f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                f"size of dim {dim} ({shape[dim]}) in the input tensor"
            ) from None
        raise RuntimeError(f"unflatten got an unexpected error:\n{error}") from None
    return tuple(shape[:dim]) + inferred + tuple(shape[dim + 1 :])


def movedim_dims(
    ndim: int, source: int | tuple[int, ...], destination: int | tuple[int, ...]
) -> tuple[int, ...]:
    """The permutation `movedim(source, destination)` applies."""
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            "movedim: Invalid source or destination dims: source "
            f"({list(src)} dims) should contain the same number of dims as "
            f"destination ({list(dst)} dims)"
        )
    src = tuple(_dim(d, ndim, "movedim") for d in src)
    dst = tuple(_dim(d, ndim, "movedim") for d in dst)
    for name, dims, given in (
        ("source", src, source),
        ("destination", dst, destination),
    ):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    if ndim == 0:
        return ()
    order = [d for d in range(ndim) if d not in src]
    perm = [-1] * max(ndim, 0)
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(order)
    return tuple(p if p != -1 else next(rest) for p in perm)


def squeeze_dims(x: Any, dims: int | tuple[int, ...] | None) -> Any:
    """`squeeze`: drop the given dims (every dim for None) that have size 1."""
    shape = np.shape(x)
    if dims is None:
        return np.reshape(x, tuple(s for s in shape if s != 1))
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    wrapped = set()
    for d in dims:
        d = _dim(d, len(shape), "squeeze")
        if d in wrapped:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        wrapped.add(d)
    return np.reshape(
        x, tuple(s for i, s in enumerate(shape) if not (i in wrapped and s == 1))
    )


_TYPE_WORDS = {
    "float64": "Double",
    "float32": "Float",
    "float16": "Half",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
}


def index_add(x: Any, dim: int, index: Any, source: Any, alpha: Any) -> Any:
    """A copy of `x` with `alpha * source` added at `index` along `dim` (repeated
    indices add up), with PyTorch's checks and messages."""
    out = np.array(x, copy=True)
    index = np.asarray(index)
    source = np.asarray(source)
    # index_func_meta_impl's order: the dim, the index, the dtypes, the sizes
    axis = _dim(dim, max(out.ndim, 1), "index_add")
    if index.ndim > 1:
        raise IndexError(
            "index_add_(): Index is supposed to be a vector, but got dim: "
            f"{index.ndim} with type: {_st(index.dtype)} and size: "
            f"{_sizes(index.shape)}"
        )
    if index.dtype.kind not in "iu":
        word = _TYPE_WORDS.get(index.dtype.name, index.dtype.name)
        raise RuntimeError(
            f"index_add_(): Expected dtype int32/int64 for index but got: {word}"
        )
    if source.dtype != out.dtype:
        raise RuntimeError(
            f"index_add_(): self ({_TYPE_WORDS.get(out.dtype.name, out.dtype.name)}) "
            f"and source ({_TYPE_WORDS.get(source.dtype.name, source.dtype.name)}) "
            "must have the same scalar type"
        )
    if not (axis == 0 or axis < source.ndim):
        raise RuntimeError(
            f"index_add_(): Indexing dim {axis} is out of bounds of the source tensor "
            f"with dim {source.ndim}"
        )
    if index.size != (source.shape[axis] if source.ndim else 1):
        if not source.ndim:  # the message reads source.size(dim) of a 0-d source
            raise IndexError(
                f"Dimension specified as {axis} but tensor has no dimensions"
            )
        raise RuntimeError(
            f"index_add_(): Number of indices ({index.size}) should be equal to "
            f"source.size(dim): ({source.shape[axis]}), for dim: {axis}"
        )
    self_sizes, source_sizes = list(out.shape), list(source.shape)
    if out.ndim and source.ndim:
        del self_sizes[axis], source_sizes[axis]
    if self_sizes != source_sizes:
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the "
            f"specified dimension. Got self.shape = {list(out.shape)} source.shape = "
            f"{list(source.shape)}"
        )
    if out.ndim == 0:  # and source too: one index, which must be 0
        if int(index.reshape(())) != 0:
            raise IndexError("index out of range in self")
        return out + alpha * source
    src = source
    size = out.shape[axis]
    if out.ndim > 1 and out.size == 0:  # nothing to add to: PyTorch checks no index
        return out
    bad = index[(index < 0) | (index >= size)].reshape(-1)
    if bad.size:
        # PyTorch's CPU kernel scatters (a RuntimeError naming the index) along
        # the first or last dim of a matrix or more when alpha is 1 and the
        # index int64, and loops over the indices otherwise (an IndexError).
        scatters = alpha == 1 and index.dtype == np.int64
        if out.ndim > 1 and scatters and axis in (0, out.ndim - 1):
            raise RuntimeError(
                f"index {int(bad[0])} is out of bounds for dimension {axis} with "
                f"size {size}"
            )
        raise IndexError("index out of range in self")
    moved = np.moveaxis(out, axis, 0)
    np.add.at(
        moved,
        index.reshape(-1),
        np.moveaxis(src * alpha, axis, 0).astype(out.dtype, copy=False),
    )
    return out


def index_select(x: Any, dim: int, index: Any) -> Any:
    """The entries at `index` (a 0-d or 1-d integer tensor) along `dim`."""
    index = np.asarray(index)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if np.ndim(x) == 0:
        if index.size != 1:
            raise IndexError(
                "index_select(): Index to scalar can have only 1 value, got "
                f"{index.size} value(s)"
            )
        return np.array(x, copy=True)
    if index.dtype.kind not in "iu":
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    axis = _dim(dim, np.ndim(x), "index_select")
    size = np.shape(x)[axis]
    if size == 0 and index.size:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    bad = index[(index < 0) | (index >= size)].reshape(-1)
    if bad.size:
        # PyTorch's CPU kernel has two paths, each with its own error: rows of
        # a non-empty tensor (dim 0), and the general one.
        if axis == 0 and np.size(x):
            raise IndexError("index out of range in self")
        raise RuntimeError(
            f"INDICES element is out of DATA bounds, id={int(bad[0])} axis_dim={size}"
        )
    return np.take(x, index.reshape(-1), axis=axis)


def _scatter_positions(index: Any, dim: int) -> tuple[Any, ...]:
    """For gather and scatter: the position in the indexed tensor of each entry of
    `index` (its own coordinates, with `index` itself along `dim`)."""
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


def _as_1d(x: Any) -> Any:
    """A 0-d array as a view of shape (1,); others as they are."""
    x = np.asarray(x)
    return x.reshape(1) if x.ndim == 0 else x


def _index_arg(index: Any, op: str) -> Any:
    index = _as_1d(index)
    if index.dtype != np.int64:
        raise RuntimeError(f"{op}(): Expected dtype int64 for index")
    return index


def _src_part(src: Any, index: Any) -> Any:
    """The leading part of `src` that `index` covers (a number is used as is)."""
    if not np.ndim(src):
        return src
    return _as_1d(src)[tuple(slice(0, n) for n in index.shape)]


def _nonempty(shape: tuple[int, ...]) -> tuple[int, ...]:
    """PyTorch's ensure_nonempty_dim/size: a 0-d tensor counts as shape (1,)."""
    return shape if shape else (1,)


def _check_index_bounds(index: Any, dim: int, size: int) -> None:
    """Every index along `dim` in [0, size), else PyTorch's error for the first."""
    bad = (index < 0) | (index >= size)
    if np.any(bad):
        value = int(index[bad].flat[0])
        raise RuntimeError(
            f"index {value} is out of bounds for dimension {dim} with size {size}"
        )


def _check_gather(x: Any, dim: int, index: Any) -> None:
    """gather_shape_check, then the bounds of every index (nothing to check for
    an empty index)."""
    if np.size(index) == 0:
        return
    shape, ishape = _nonempty(np.shape(x)), _nonempty(np.shape(index))
    if len(shape) != len(ishape):
        raise RuntimeError(
            "Index tensor must have the same number of dimensions as input tensor"
        )
    for d in range(len(shape)):
        if d != dim and ishape[d] > shape[d]:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index "
                f"{_sizes(np.shape(index))} to be no larger than self "
                f"{_sizes(np.shape(x))} apart from dimension {dim}"
            )
    _check_index_bounds(index, dim, shape[dim])


def _check_scatter(x: Any, dim: int, index: Any, src: Any) -> None:
    """scatter_shape_check (src only when it is a tensor), then the bounds."""
    if np.size(index) == 0:
        return
    shape, ishape = _nonempty(np.shape(x)), _nonempty(np.shape(index))
    if len(shape) != len(ishape):
        raise RuntimeError(
            "Index tensor must have the same number of dimensions as self tensor"
        )
    wrong = any(d != dim and ishape[d] > shape[d] for d in range(len(shape)))
    tensor_src = type(src) is np.ndarray
    if tensor_src:
        if not wrong:
            # ensure_nonempty_size(src, d): src.size(d), or 1 for a 0-d src
            wrong = any(
                ishape[d] > (_size_at(src, d) if np.ndim(src) else 1)
                for d in range(len(shape))
            )
        if len(_nonempty(np.shape(src))) != len(ishape):
            raise RuntimeError(
                "Index tensor must have the same number of dimensions as src tensor"
            )
    if wrong:
        extra = f" and to be no larger size than src {_sizes(np.shape(src))}"
        raise RuntimeError(
            f"Expected index {_sizes(np.shape(index))} to be no larger than self "
            f"{_sizes(np.shape(x))} apart from dimension {dim}"
            + (extra if tensor_src else "")
        )
    _check_index_bounds(index, dim, shape[dim])


def gather(x: Any, dim: int, index: Any) -> Any:
    """out[i][j] = x[index[i][j]][j] for dim 0 (index may be smaller than x)."""
    x = np.asarray(x)
    shape = np.shape(index)
    index = _index_arg(index, "gather")
    dim = _dim(dim, x.ndim, "gather")
    _check_gather(x, dim, np.reshape(index, shape))
    if index.size == 0:
        return np.zeros(shape, dtype=x.dtype)
    positions = _scatter_positions(index, dim)
    return np.reshape(_as_1d(x)[positions], shape)


def _scatter_setup(x: Any, dim: int, index: Any, src: Any, op: str) -> tuple:
    """Checks of scatter and scatter_add; (a copy of x, the index, the positions)."""
    if type(src) is np.ndarray and src.dtype != np.result_type(x):
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    out = np.array(x, copy=True)
    raw = np.asarray(index)
    index = _index_arg(index, op)
    dim = _dim(dim, out.ndim, op)
    _check_scatter(out, dim, raw, src)
    return out, index, _scatter_positions(index, dim) if index.size else None


def scatter(x: Any, dim: int, index: Any, src: Any) -> Any:
    """A copy of `x` with `src` (a tensor or a number) written at `index` along `dim`."""
    out, index, positions = _scatter_setup(x, dim, index, src, "scatter")
    if index.size:  # an empty index writes nothing, whatever src is
        _as_1d(out)[positions] = _src_part(src, index)
    return out


def scatter_add(x: Any, dim: int, index: Any, src: Any) -> Any:
    """A copy of `x` with `src` added at `index` along `dim` (duplicates add up)."""
    out, index, positions = _scatter_setup(x, dim, index, src, "scatter_add")
    if index.size:
        np.add.at(_as_1d(out), positions, _src_part(src, index))
    return out


def masked_fill(x: Any, mask: Any, value: Any) -> Any:
    """`x` with `value` where `mask` is True, in x's dtype (mask broadcasts to x)."""
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{mask.dtype}"
        )
    x = np.asarray(x)
    out = np.where(mask, np.asarray(value).astype(x.dtype), x)
    return out.astype(x.dtype, copy=False)


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape the given shapes broadcast to."""
    return tuple(np.broadcast_shapes(*shapes))


def masked_select(x: Any, mask: Any) -> Any:
    """The entries of `x` where `mask` is True, as a 1-d tensor (both broadcast)."""
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise RuntimeError(
            f"masked_select: expected BoolTensor for mask, but got {mask.dtype}"
        )
    shape = broadcast_shape(np.shape(x), mask.shape)
    return np.broadcast_to(x, shape)[np.broadcast_to(mask, shape)]


def roll(x: Any, shifts: tuple[int, ...], dims: tuple[int, ...]) -> Any:
    """`x` rolled by `shifts` along `dims`; with no dims, rolled as a flat tensor."""
    if not dims:
        if len(shifts) != 1:
            raise RuntimeError(
                f"`shifts` required to be of size 1 when `dims` is empty, got {len(shifts)}"
            )
        return np.roll(x, shifts[0])
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    return np.roll(x, shifts, tuple(_dim(d, np.ndim(x), "roll") for d in dims))


def repeat(x: Any, repeats: tuple[int, ...]) -> Any:
    """`x` tiled `repeats` times per dim (leading new dims when there are more)."""
    if len(repeats) < np.ndim(x):
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of "
            "dimensions of tensor"
        )
    return np.tile(x, repeats)


def tile_repeats(ndim: int, dims: tuple[int, ...]) -> tuple[int, ...]:
    """`tile`'s dims as `repeat` takes them: padded with leading 1s to ndim."""
    dims = tuple(dims)
    return (1,) * (ndim - len(dims)) + dims


def interleave_sizes(
    shape: tuple[int, ...], repeats: int, dim: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """repeat_interleave by an int along `dim` (wrapped): the shape after
    unsqueeze(dim + 1) and expand, and the result's shape."""
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    dim = _dim(dim, len(shape), "repeat_interleave")
    shape = tuple(shape)
    expanded = shape[: dim + 1] + (repeats,) + shape[dim + 1 :]
    return expanded, shape[:dim] + (shape[dim] * repeats,) + shape[dim + 1 :]


def constant_pad_nd(x: Any, pad: tuple[int, ...], value: Any) -> Any:
    """`x` padded with `value` (last dim first, a (before, after) pair per dim);
    negative pads crop."""
    x = np.asarray(x)
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise RuntimeError(
            "Length of pad must be even but instead it equals " f"{len(pad)}"
            if len(pad) % 2
            else "Length of pad should be no more than twice the number of dimensions "
            f"of the input. Pad length is {len(pad)} while the input has {x.ndim} "
            "dimensions."
        )
    pairs = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        pairs[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    _check_pad_sizes(x.shape, pairs)
    crop = tuple(
        slice(max(-before, 0), size - max(-after, 0))
        for (before, after), size in zip(pairs, x.shape)
    )
    widths = [(max(before, 0), max(after, 0)) for before, after in pairs]
    return np.pad(x[crop], widths, constant_values=np.asarray(value).astype(x.dtype))


def _check_pad_sizes(shape: tuple[int, ...], pairs: list[tuple[int, int]]) -> None:
    """PyTorch crops negative pads with narrow, whose checks come first."""
    for dim, ((before, after), size) in enumerate(zip(pairs, shape)):
        if before < 0:
            narrow_start(
                shape[:dim] + (size,) + shape[dim + 1 :], dim, -before, size + before
            )
            size += before
        if after < 0 and size + after < 0:
            raise RuntimeError("narrow(): length must be non-negative.")


def constant_pad_value(mode: str, value: float | None) -> float:
    """`pad`'s fill value; only mode="constant" is supported."""
    if mode != "constant":
        raise NotImplementedError(
            f"pad: mode {mode!r} is not supported (only 'constant')"
        )
    return 0 if value is None else value


def _index_key(indices: list[Any]) -> tuple[Any, ...]:
    """index.Tensor's indices as a numpy key: None is a full slice."""
    key = []
    for i in indices:
        if i is None:
            key.append(slice(None))
            continue
        i = np.asarray(i)
        if i.dtype.kind not in "biu":
            raise IndexError(
                "tensors used as indices must be long, int, byte or bool tensors"
            )
        key.append(i)
    return tuple(key)


def index_tensor(x: Any, indices: list[Any]) -> Any:
    """`x[indices]` for index.Tensor: integer and bool tensors, None for `:`."""
    x = np.asarray(x)
    if len(indices) > max(x.ndim, 1) and not all(
        np.asarray(i).dtype == np.bool_ for i in indices if i is not None
    ):
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    return np.array(x[_index_key(indices)], copy=True)


def narrow_start(shape: tuple[int, ...], dim: int, start: int, length: int) -> int:
    """`narrow`'s start, wrapped once when negative, with PyTorch's checks."""
    if not shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    size = shape[_dim(dim, len(shape), "narrow")]
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but "
            f"got {start})"
        )
    start = start + size if start < 0 else start
    if start > size - length:
        raise RuntimeError(
            f"start ({start}) + length ({length}) exceeds dimension size ({size})."
        )
    return start


def checked_repeats(repeats: Any, shape: tuple[int, ...], dim: int | None) -> Any:
    """repeat_interleave's `repeats`, after PyTorch's checks against the input."""
    counts = repeats._data if hasattr(repeats, "_data") else np.asarray(repeats)
    if counts.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if counts.size and counts.min() < 0:
        raise RuntimeError("repeats can not be negative")
    if dim is None:
        size, where = math.prod(shape), 0
    else:
        size, where = shape[_dim(dim, len(shape), "repeat_interleave")], dim
    if counts.ndim == 1 and counts.size != 1 and counts.size != size:
        raise RuntimeError(
            "repeats must have the same size as input along dim, but got "
            f"repeats.size(0) = {counts.size} and input.size({where}) = {size}"
        )
    if counts.size == 1 and (counts.ndim == 0 or size != 1):
        # One count for every element (0-d, or [n]): expand it (no copy).
        return repeats.reshape((1,)).expand((size,))
    return repeats


def outer_column(self_ndim: int, vec2_ndim: int) -> tuple[int, int]:
    """`outer`'s column shape for `self` (-1, 1), after PyTorch's 1-D checks."""
    for name, n in (("self", self_ndim), ("vec2", vec2_ndim)):
        if n != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {n}-D")
    return (-1, 1)


def flip_kernel(x: Any, dims: tuple[int, ...]) -> Any:
    """`flip`: reversed along `dims` (wrapped, distinct; a 0-d tensor takes 0)."""
    ndim = np.ndim(x)
    wrapped = tuple(_dim(d, ndim, "flip") for d in dims)
    seen = set()
    for d in wrapped:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    if ndim == 0:
        return np.array(x, copy=True)
    return np.flip(x, wrapped).copy(order="K")  # the input's layout, as PyTorch


def triangle(x: Any, diagonal: int, upper: bool) -> Any:
    """`tril`/`triu` of the last two dims, with PyTorch's rank check."""
    if np.ndim(x) < 2:
        name = "triu" if upper else "tril"
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return np.triu(x, diagonal) if upper else np.tril(x, diagonal)


def cpu_softmax_input(x: Any, dim: int, half_to_float: bool) -> Any:
    """`_softmax`/`_log_softmax`'s input, after the dim's range check, refusing
    half_to_float as PyTorch's CPU kernels do."""
    _dim(dim, np.ndim(x), "softmax")
    if half_to_float:
        raise RuntimeError(
            "softmax with half to float conversion is not supported on CPU"
        )
    return x


def extreme(x: Any, dim: tuple[int, ...] | None, keepdim: bool, op: str) -> Any:
    """max()/min() of everything (dim None), or amax/amin over `dim` (every dim
    for []), with PyTorch's checks of a reduction without an identity."""
    full = dim is None or len(dim) == 0
    _no_identity(op, x, None if full else dim, False, False)  # dims in range
    ndim = x.ndim if type(x) is np.ndarray else np.ndim(x)
    if not full and len(dim) > 1:
        seen = set()
        for d in dim:
            w = d % max(ndim, 1)
            if w in seen:
                raise RuntimeError(
                    f"dim {w} appears multiple times in the list of dims"
                )
            seen.add(w)
    # The ufunc's own reduce: np.amax's Python wrapper costs as much again
    # on small arrays.
    fn = np.maximum.reduce if op in ("max", "amax") else np.minimum.reduce
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


def diag_rank(ndim: int) -> int:
    """`diag`'s input rank, 1 or 2, else PyTorch's error."""
    if ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")
    return ndim


def chunk_size(shape: tuple[int, ...], chunks: int, dim: int) -> int:
    """`chunk`'s split size, ceil(size / chunks), with PyTorch's checks."""
    if not shape:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(
            f"chunk expects `chunks` to be greater than 0, got: {chunks}"
        )
    size = shape[_dim(dim, len(shape), "chunk")]
    return -(-size // chunks)


def interleave_dim(dim: int, ndim: int) -> int:
    """repeat_interleave's dim, wrapped."""
    return _dim(dim, ndim, "repeat_interleave")


def linalg_inv_ex(a: Any, check_errors: bool) -> tuple[Any, Any]:
    """(inverse, info) as torch.linalg.inv_ex: info is 0 for each invertible matrix;
    a singular one raises (numpy cannot go on), with PyTorch's message when asked."""
    try:
        inverse = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise RuntimeError(
            "linalg.inv: The diagonal element 1 is zero, the inversion could not be "
            "completed because the input matrix is singular."
        ) from None
    # LAPACK's layout, as PyTorch returns it: each matrix column-major
    inverse = np.swapaxes(np.ascontiguousarray(np.swapaxes(inverse, -1, -2)), -1, -2)
    return inverse, np.zeros(np.shape(a)[:-2], dtype=np.int32)


# -- nn: convolution, pooling, normalisation, embedding, dropout ------------------------


def expand_param(value: tuple[int, ...], n: int) -> tuple[int, ...]:
    """An `int[]` argument spelled out for `n` spatial dims: `(2,)` is `(2, 2)`.
    (A lone int is already a tuple: the wrapper's int_list_arg expands it.)"""
    return tuple(value) * n if len(value) == 1 else tuple(value)


def _sizes(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _check_convolution(
    input: Any,
    weight: Any,
    bias: Any,
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    transposed: bool,
    output_padding: tuple[int, ...],
    groups: int,
) -> None:
    """PyTorch's checks of at::convolution's arguments, with its messages."""
    if input.ndim != weight.ndim:
        raise RuntimeError(
            f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional "
            f"weight {_sizes(weight.shape)}, but got {input.ndim}-dimensional input "
            f"of size {_sizes(input.shape)} instead"
        )
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at "
            f"dimension 0, but got weight of size [{_sizes(weight.shape)}] instead"
        )
    channels = weight.shape[0] if transposed else weight.shape[1] * groups
    if input.shape[1] != channels:
        given = "transposed=1" if transposed else f"groups={groups}"
        raise RuntimeError(
            f"Given {given}, weight of size {_sizes(weight.shape)}, expected "
            f"input{_sizes(input.shape)} to have {channels} channels, but got "
            f"{input.shape[1]} channels instead"
        )
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias is not None and (np.ndim(bias) != 1 or np.shape(bias)[0] != out_channels):
        raise RuntimeError(
            f"Given weight of size {_sizes(weight.shape)}, expected bias to be "
            f"1-dimensional with {out_channels} elements, but got bias of size "
            f"{_sizes(np.shape(bias))} instead"
        )
    kernel = weight.shape[2:]
    if transposed:
        if any(o >= s and o >= d for o, s, d in zip(output_padding, stride, dilation)):
            names = ("height", "width") if len(kernel) == 2 else ("",) * len(kernel)
            parts = [
                " ".join(f"{what}_{n}: {v}" for n, v in zip(names, values))
                for what, values in (
                    ("output_padding", output_padding),
                    ("stride", stride),
                    ("dilation", dilation),
                )
            ]
            raise RuntimeError(
                "output padding must be smaller than either stride or dilation, but "
                "got " + " ".join(parts)
            )
        return
    padded = [n + 2 * p for n, p in zip(input.shape[2:], padding)]
    effective = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    if any(n < k for n, k in zip(padded, effective)):
        raise RuntimeError(
            "Calculated padded input size per channel: ("
            + " x ".join(str(n) for n in padded)
            + "). Kernel size: ("
            + " x ".join(str(k) for k in effective)
            + "). Kernel size can't be greater than actual input size"
        )


def _conv_forward(
    x: np.ndarray,
    w: np.ndarray,
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    groups: int,
) -> np.ndarray:
    """Cross-correlation by strided windows (im2col as a view) and one tensordot
    per group: no loop over output positions."""
    spatial = w.ndim - 2
    axes = tuple(range(2, 2 + spatial))
    if any(padding):
        x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    effective = tuple(d * (k - 1) + 1 for k, d in zip(w.shape[2:], dilation))
    windows = np.lib.stride_tricks.sliding_window_view(x, effective, axis=axes)
    step = tuple(slice(None, None, s) for s in stride)
    step += tuple(slice(None, None, d) for d in dilation)
    windows = windows[(slice(None), slice(None)) + step]  # [N, C, out..., k...]
    in_per_group = w.shape[1]
    out_per_group = w.shape[0] // groups
    n, out_sizes = x.shape[0], tuple(windows.shape[2 : 2 + spatial])
    kernel_axes = tuple(range(2 + spatial, 2 + 2 * spatial))
    rows = in_per_group * math.prod(w.shape[2:])
    positions = math.prod(out_sizes)
    # im2col, copied row-major once, in the order whose innermost run is the
    # longer one: the output's last dim (a kernel smaller than the output, as
    # in a forward) or the kernel's (a weight's gradient, whose "kernel" is the
    # output gradient). Then one batched matmul per group.
    kernel_major = w.shape[-1] <= out_sizes[-1]
    if kernel_major:  # [N, C, k..., out...]: [O, C*k] @ [N, C*k, out]
        columns = np.ascontiguousarray(windows.transpose((0, 1) + kernel_axes + axes))
    else:  # [N, out..., C, k...]: [N, out, C*k] @ [C*k, O]
        columns = np.ascontiguousarray(
            windows.transpose((0,) + axes + (1,) + kernel_axes)
        )
    parts = []
    for g in range(groups):
        wg = w[g * out_per_group : (g + 1) * out_per_group]
        wg = wg.reshape((out_per_group, rows))
        if kernel_major:
            cols = columns[:, g * in_per_group : (g + 1) * in_per_group]
            product = np.matmul(wg, cols.reshape((n, rows, positions)))
        else:
            group = slice(g * in_per_group, (g + 1) * in_per_group)
            cols = columns[(slice(None),) * (1 + spatial) + (group,)]
            cols = cols.reshape((n, positions, rows))
            product = np.matmul(cols, wg.T).transpose(0, 2, 1)
        parts.append(product.reshape((n, out_per_group) + out_sizes))
    return parts[0] if groups == 1 else np.concatenate(parts, axis=1)


def _conv_transpose_forward(
    x: np.ndarray,
    w: np.ndarray,
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    output_padding: tuple[int, ...],
    groups: int,
) -> np.ndarray:
    """The adjoint of `_conv_forward`: each input position scatters its products
    with the kernel; a loop over kernel offsets adds them with strided slices."""
    spatial = w.ndim - 2
    sizes = x.shape[2:]
    kernel = w.shape[2:]
    out = tuple(
        (n - 1) * s - 2 * p + d * (k - 1) + op + 1
        for n, s, p, d, k, op in zip(
            sizes, stride, padding, dilation, kernel, output_padding
        )
    )
    full = tuple(
        max((n - 1) * s + d * (k - 1) + 1, p + o)
        for n, s, d, k, p, o in zip(sizes, stride, dilation, kernel, padding, out)
    )
    in_per_group = x.shape[1] // groups
    out_per_group = w.shape[1]
    dtype = np.result_type(x, w)
    y = np.zeros((x.shape[0], out_per_group * groups) + full, dtype=dtype)
    for g in range(groups):
        xg = x[:, g * in_per_group : (g + 1) * in_per_group]
        wg = w[g * in_per_group : (g + 1) * in_per_group]
        cols = np.tensordot(xg, wg, axes=((1,), (0,)))  # [N, in..., O, k...]
        target = y[:, g * out_per_group : (g + 1) * out_per_group]
        for offset in np.ndindex(*kernel):
            where = tuple(
                slice(o * d, o * d + s * (n - 1) + 1, s)
                for o, d, s, n in zip(offset, dilation, stride, sizes)
            )
            contribution = cols[(Ellipsis,) + offset]  # [N, in..., O]
            target[(slice(None), slice(None)) + where] += np.moveaxis(
                contribution, -1, 1
            )
    crop = tuple(slice(p, p + o) for p, o in zip(padding, out))
    return y[(slice(None), slice(None)) + crop]


def convolution_kernel(
    input: Any,
    weight: Any,
    bias: Any,
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    transposed: bool,
    output_padding: tuple[int, ...],
    groups: int,
) -> np.ndarray:
    """at::convolution: N-d cross-correlation, or its transpose, with groups."""
    input, weight = np.asarray(input), np.asarray(weight)
    if bias is not None and np.result_type(bias) != input.dtype:
        raise RuntimeError(
            f"Input type ({_tm(input.dtype)}) and bias type "
            f"({_tm(np.result_type(bias))}) should be the same"
        )
    spatial = max(weight.ndim - 2, 1)
    stride = expand_param(stride, spatial)
    padding = expand_param(padding, spatial)
    dilation = expand_param(dilation, spatial)
    output_padding = expand_param(output_padding, spatial)
    _check_convolution(
        input,
        weight,
        bias,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
    )
    if weight.dtype != input.dtype:
        raise RuntimeError(
            f"expected scalar type {_st(input.dtype)} but found {_st(weight.dtype)}"
        )
    if transposed:
        result = _conv_transpose_forward(
            input, weight, stride, padding, dilation, output_padding, groups
        )
    else:
        result = _conv_forward(input, weight, stride, padding, dilation, groups)
    if bias is not None:
        result += np.reshape(bias, (-1,) + (1,) * spatial)  # a fresh array
    return np.ascontiguousarray(result, dtype=np.result_type(input, weight))


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


def pool2d_params(
    x: Any,
    kernel_size: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    ceil_mode: bool,
    avg: bool = False,
) -> tuple[tuple[int, ...], ...]:
    """(kernel, stride, padding, dilation, output size) of a 2-d pooling, each a
    pair, after PyTorch's checks (stride defaults to the kernel size). avg_pool2d
    reads the input's last three sizes first (an IndexError for fewer dims)
    where max_pool2d checks the rank."""
    kernel = expand_param(kernel_size, 2)
    stride = expand_param(stride, 2) if len(stride) else kernel
    padding = expand_param(padding, 2)
    dilation = expand_param(dilation, 2)
    if avg:
        for d in (-3, -2, -1):
            _size_at(x, d)
    elif np.ndim(x) not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    # pooling_output_shape's checks, height then width (C++ division truncates)
    for k, s, p, d in zip(kernel, stride, padding, dilation):
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > math.trunc((d * (k - 1) + 1) / 2):
            raise RuntimeError(
                "pad should be at most half of effective kernel size, but got "
                f"pad={p}, kernel_size={k} and dilation={d}"
            )
        if s == 0:
            raise RuntimeError("stride should not be zero")
    # pool2d_shape_check's
    for what, letter, (h, w) in (("kernel size", "k", kernel), ("stride", "d", stride)):
        if h <= 0 or w <= 0:
            raise RuntimeError(
                f"{what} should be greater than zero, but got {letter}H: {h} "
                f"{letter}W: {w}"
            )
    if min(dilation) <= 0:
        raise RuntimeError(
            "dilation should be greater than zero, but got dilationH: "
            f"{dilation[0]} dilationW: {dilation[1]}"
        )
    shape = np.shape(x)
    valid = shape[1] != 0 and shape[2] != 0
    if not (
        (len(shape) == 3 and shape[0] != 0 and valid)
        or (len(shape) == 4 and valid and shape[3] != 0)
    ):
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{_sizes(shape)}"
        )
    sizes = np.shape(x)[-2:]
    out = tuple(
        pool_output_size(n, k, s, p, d, ceil_mode)
        for n, k, s, p, d in zip(sizes, kernel, stride, padding, dilation)
    )
    if min(out) < 1:
        channels = np.shape(x)[-3]
        raise RuntimeError(
            f"Given input size: ({channels}x{sizes[0]}x{sizes[1]}). Calculated output "
            f"size: ({channels}x{out[0]}x{out[1]}). Output size is too small"
        )
    return kernel, stride, padding, dilation, out


def _lowest(dtype: np.dtype) -> Any:
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def max_pool2d_with_indices_kernel(
    x: Any,
    kernel_size: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    ceil_mode: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices): the largest entry of each window (the first one on ties;
    a NaN wins, the last one of several) and its flat position `h * W + w` in the
    input plane, as PyTorch's CPU kernel."""
    x = np.asarray(x)
    kernel, stride, padding, dilation, out = pool2d_params(
        x, kernel_size, stride, padding, dilation, ceil_mode
    )
    sizes = x.shape[-2:]
    effective = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    right = [
        max(0, (o - 1) * s + e - p - n)
        for o, s, e, p, n in zip(out, stride, effective, padding, sizes)
    ]
    if any(padding) or any(right):
        widths = [(0, 0)] * (x.ndim - 2) + [(p, r) for p, r in zip(padding, right)]
        padded = np.pad(x, widths, constant_values=_lowest(x.dtype))
    else:
        padded = x
    # One strided view per kernel offset, each as large as the output: no copy
    # of the windows.
    views = []
    for offset in range(kernel[0] * kernel[1]):
        i, j = divmod(offset, kernel[1])
        r0, c0 = i * dilation[0], j * dilation[1]
        views.append(
            padded[
                ...,
                r0 : r0 + stride[0] * (out[0] - 1) + 1 : stride[0],
                c0 : c0 + stride[1] * (out[1] - 1) + 1 : stride[1],
            ]
        )
    nan = x.dtype.kind in "fc" and bool(np.isnan(x).any())
    if nan or not 1 < len(views) <= _CHOICES:
        values, arg = _window_max_in_order(views, nan)
    else:
        # The maximum, then the first offset that holds it (arg counts the
        # offsets before it, a running "not yet found" mask), then the value at
        # that offset: np.maximum may return either zero of a -0.0/0.0 tie.
        top = np.array(views[0], copy=True)
        for view in views[1:]:
            np.maximum(top, view, out=top)
        behind = views[0] != top
        arg = behind.astype(np.int64)
        for view in views[1:-1]:
            behind &= view != top
            arg += behind
        values = None
    # The flat position h * W + w in the input plane: the window's corner plus
    # the offset's step, one table entry per offset.
    step = np.array(
        [
            (o // kernel[1]) * dilation[0] * sizes[1] + (o % kernel[1]) * dilation[1]
            for o in range(len(views))
        ],
        dtype=np.int64,
    )
    corner = (np.arange(out[0])[:, None] * stride[0] - padding[0]) * sizes[1] + (
        np.arange(out[1])[None, :] * stride[1] - padding[1]
    )
    indices = step.take(arg)
    indices += corner
    if values is None:
        if padded is x:  # every index is in the plane: gather the values by it
            values = np.ravel(x).take(_plane_positions(indices, x.shape))
            values = values.reshape(indices.shape)
        else:
            values = np.choose(arg, views)
    return np.ascontiguousarray(values), indices


def _plane_positions(indices: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    """Flat positions in a row-major array of `sizes` of the in-plane indices
    `h * W + w` of a pooling (one plane per leading index)."""
    planes = math.prod(sizes[:-2])
    plane = sizes[-2] * sizes[-1]
    where = np.reshape(indices, (planes, math.prod(np.shape(indices)[-2:])))
    return (where + np.arange(0, planes * plane, plane)[:, None]).reshape(-1)


# The most arrays np.choose takes (a larger pooling window goes offset by offset).
_CHOICES = 32


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


def max_pool2d_with_indices_backward(
    grad: np.ndarray, indices: np.ndarray, sizes: tuple[int, ...]
) -> np.ndarray:
    """Each window's gradient added at its argmax (windows may share one)."""
    where = _plane_positions(indices, sizes)
    grad = np.asarray(grad)
    size = math.prod(sizes)
    chosen = np.zeros(size, dtype=bool)
    chosen[where] = True
    if np.count_nonzero(chosen) == where.size:
        # No two windows chose one input (always so when windows do not
        # overlap): a scatter, nothing to sum.
        total = np.zeros(sizes, dtype=grad.dtype)
        total.reshape(-1)[where] = np.ravel(grad)
        return total
    total = np.bincount(where, weights=np.ravel(grad), minlength=size)
    return total.astype(grad.dtype, copy=False).reshape(sizes)


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


def avg_pool2d_matrices(
    x: Any,
    kernel_size: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
    dtype: np.dtype,
) -> tuple[np.ndarray, np.ndarray]:
    """(A_h, A_w) of avg_pool2d, after PyTorch's checks."""
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    kernel, stride, padding, _, _ = pool2d_params(
        x, kernel_size, stride, padding, (1,), ceil_mode, avg=True
    )
    sizes = np.shape(x)[-2:]
    a_h, a_w = (
        avg_pool_matrix(
            n, k, s, p, ceil_mode, count_include_pad, divisor_override, dtype
        )
        for n, k, s, p in zip(sizes, kernel, stride, padding)
    )
    if divisor_override is not None:
        a_h = a_h / np.asarray(divisor_override, dtype=dtype)
    return a_h, a_w


def avg_pool2d_kernel(
    x: Any,
    kernel_size: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> np.ndarray:
    """Average of each window, as two matrix products (one per axis)."""
    x = np.asarray(x)
    a_h, a_w = avg_pool2d_matrices(
        x,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
        x.dtype,
    )
    return np.ascontiguousarray(a_h @ x @ a_w.T)


def adaptive_avg_pool_matrix(size: int, out: int, dtype: np.dtype) -> np.ndarray:
    """One axis of adaptive average pooling: window i is [floor(i*n/o), ceil((i+1)*n/o))."""
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    positions = np.arange(size)
    inside = (positions >= start[:, None]) & (positions < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def adaptive_avg_pool2d_matrices(
    x: Any, output_size: tuple[int, ...], dtype: np.dtype
) -> tuple[np.ndarray, np.ndarray]:
    """(A_h, A_w) of adaptive_avg_pool2d, after PyTorch's checks."""
    out = expand_param(output_size, 2)
    shape = np.shape(x)
    if len(shape) not in (3, 4):
        raise RuntimeError(
            f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {_sizes(shape)}"
        )
    for i in (len(shape) - 2, len(shape) - 1):  # the spatial dims; N and C may be 0
        if shape[i] == 0:
            raise RuntimeError(
                "adaptive_avg_pool2d(): Expected input to have non-zero size for "
                f"non-batch dimensions, but input has sizes {_sizes(shape)} with "
                f"dimension {i} being empty"
            )
    if len(out) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    sizes = np.shape(x)[-2:]
    a_h, a_w = (adaptive_avg_pool_matrix(n, o, dtype) for n, o in zip(sizes, out))
    return a_h, a_w


def adaptive_avg_pool2d_kernel(x: Any, output_size: tuple[int, ...]) -> np.ndarray:
    x = np.asarray(x)
    a_h, a_w = adaptive_avg_pool2d_matrices(x, output_size, x.dtype)
    return np.ascontiguousarray(a_h @ x @ a_w.T)


def embedding_kernel(weight: Any, indices: Any) -> np.ndarray:
    """Rows of `weight`, one per index (IndexError as PyTorch's index_select)."""
    indices = np.asarray(indices)
    if indices.dtype.kind not in "iu":
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following "
            "scalar types: Long, Int; but got torch."
            f"{'FloatTensor' if indices.dtype == np.float32 else 'DoubleTensor'} instead "
            "(while checking arguments for embedding)"
        )
    n = np.shape(weight)[0]
    if n == 0 and indices.size:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if indices.size and (indices.min() < -n or indices.max() >= n or indices.min() < 0):
        raise IndexError("index out of range in self")
    return np.take(weight, indices, axis=0)


def embedding_backward(
    grad: np.ndarray,
    indices: np.ndarray,
    num_weights: int,
    padding_idx: int,
    scale_grad_by_freq: bool,
) -> np.ndarray:
    """Each output row's gradient added to the row it came from; none to padding_idx."""
    flat = np.reshape(indices, -1)
    rows = np.reshape(grad, (flat.size, -1))
    keep = (flat != padding_idx).astype(grad.dtype)
    if scale_grad_by_freq:
        counts = np.bincount(flat, minlength=num_weights)
        keep = keep / counts[flat]
    out = np.zeros((num_weights, rows.shape[1]), dtype=grad.dtype)
    np.add.at(out, flat, rows * keep[:, None])
    return out


def native_layer_norm_kernel(
    input: Any,
    normalized_shape: tuple[int, ...],
    weight: Any,
    bias: Any,
    eps: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(output, mean, rstd) over the trailing `normalized_shape` dims; mean and rstd
    keep those dims as size 1, as PyTorch's."""
    x = np.asarray(input)
    _check_norm_dtypes(x, (weight, bias))
    if not normalized_shape:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing "
            "at least one element, but got normalized_shape = []"
        )
    for name, value in (("weight", weight), ("bias", bias)):
        if value is not None and tuple(np.shape(value)) != tuple(normalized_shape):
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got "
                f"{name} of shape {_sizes(np.shape(value))} and normalized_shape = "
                f"{_sizes(normalized_shape)}"
            )
    axis = x.ndim - len(normalized_shape)
    if axis < 0 or tuple(x.shape[axis:]) != tuple(normalized_shape):
        raise RuntimeError(
            f"Given normalized_shape={_sizes(normalized_shape)}, expected input with "
            f"shape [*, {', '.join(str(s) for s in normalized_shape)}], but got "
            f"input of size{_sizes(x.shape)}"
        )
    dims = tuple(range(axis, x.ndim))
    mean = mean_reduce(x, axis=dims, keepdims=True)
    centered = x - mean
    rstd = 1.0 / np.sqrt(
        mean_reduce(centered * centered, axis=dims, keepdims=True) + eps
    )
    out = centered * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out.astype(x.dtype), mean.astype(x.dtype), rstd.astype(x.dtype)


def native_batch_norm_kernel(
    input: Any,
    weight: Any,
    bias: Any,
    running_mean: Any,
    running_var: Any,
    training: bool,
    momentum: float,
    eps: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(output, save_mean, save_invstd). Training normalises by the batch's
    statistics over every dim but the channels (dim 1) and updates the running ones
    in place: `(1 - momentum) * running + momentum * batch`, with the unbiased
    variance. Evaluation uses the running ones and saves nothing (shape [0])."""
    x = np.asarray(input)
    if (running_mean is None) != (running_var is None):
        raise KernelValueError(
            "running_mean and running_var must either both be None or neither be None"
        )
    _check_norm_dtypes(x, (weight, bias, running_mean, running_var))
    channels = x.shape[1] if x.ndim > 1 else 1
    for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
        if stat is not None and np.size(stat) != channels:
            raise RuntimeError(
                f"{name} should contain {channels} elements not {np.size(stat)}"
            )
    dims = (0,) + tuple(range(2, x.ndim))
    shape = (1, channels) + (1,) * (x.ndim - 2)
    if training:
        mean = mean_reduce(x, axis=dims)
        var = mean_reduce((x - mean.reshape(shape)) ** 2, axis=dims)
        invstd = 1.0 / np.sqrt(var + eps)
        count = x.size // channels
        if running_mean is not None:
            running_mean *= 1 - momentum
            running_mean += momentum * mean
        if running_var is not None:
            unbiased = var * count / max(count - 1, 1)
            running_var *= 1 - momentum
            running_var += momentum * unbiased
        save_mean, save_invstd = mean, invstd
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError(
                "running_mean and running_var must be defined in evaluation mode"
            )
        mean = np.asarray(running_mean)
        invstd = 1.0 / np.sqrt(np.asarray(running_var) + eps)
        save_mean = save_invstd = np.zeros((0,), dtype=x.dtype)
    out = (x - mean.reshape(shape)) * invstd.reshape(shape)
    if weight is not None:
        out = out * np.reshape(weight, shape)
    if bias is not None:
        out = out + np.reshape(bias, shape)
    return (
        out.astype(x.dtype),
        np.asarray(save_mean, dtype=x.dtype),
        np.asarray(save_invstd, dtype=x.dtype),
    )


def _check_norm_dtypes(x: Any, params: tuple[Any, ...]) -> None:
    """The CPU norms' dtype rules: parameters whose first one has another dtype
    than the input are a "mixed" call, allowed only as float32 parameters of a
    float16 input; otherwise every parameter must have the input's dtype."""
    defined = [np.result_type(p) for p in params if p is not None]
    if not defined:
        return
    if defined[0] != x.dtype:
        if any(d != np.float32 for d in defined):
            raise RuntimeError(
                "mixed dtype (CPU): expect parameter to have scalar type of Float"
            )
        if x.dtype != np.float16:
            raise RuntimeError(
                "mixed dtype (CPU): all inputs must share same datatype."
            )
        return
    for d in defined:
        if d != x.dtype:
            raise RuntimeError(
                f"expected scalar type {_st(x.dtype)} but found {_st(d)}"
            )


def _check_group_norm(
    x: Any, weight: Any, bias: Any, n: int, c: int, hxw: int, group: int
) -> None:
    """PyTorch's check_group_norm_inputs, then its kernel's size check."""
    shape = _sizes(x.shape)
    if group <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {group}")
    if c % group:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but "
            f"got input of shape {shape} and num_groups={group}"
        )
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (np.ndim(p) != 1 or np.size(p) != c):
            shown = weight if weight is not None else p  # PyTorch prints weight's
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of "
                f"channels in input, but got {name} of shape "
                f"{_sizes(np.shape(shown))} and input of shape {shape}"
            )
    if x.size != n * c * hxw:
        raise RuntimeError(
            "Expected X.numel() == N * C * HxW to be true, but got false.  (Could "
            "this error message be improved?  If so, please report an enhancement "
            "request to PyTorch.)"
        )


def native_group_norm_kernel(
    input: Any,
    weight: Any,
    bias: Any,
    n: int,
    c: int,
    hxw: int,
    group: int,
    eps: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(output, mean, rstd): each sample's channels split into `group` groups,
    each normalised on its own; mean and rstd are [N, group]."""
    x = np.asarray(input)
    _check_norm_dtypes(x, (weight, bias))
    _check_group_norm(x, weight, bias, n, c, hxw, group)
    grouped = x.reshape(n, group, -1)
    mean = mean_reduce(grouped, axis=-1)
    centered = grouped - mean[..., None]
    rstd = 1.0 / np.sqrt(mean_reduce(centered * centered, axis=-1) + eps)
    out = (centered * rstd[..., None]).reshape(n, c, -1)
    if weight is not None:
        out = out * np.reshape(weight, (1, c, 1))
    if bias is not None:
        out = out + np.reshape(bias, (1, c, 1))
    return (
        out.reshape(x.shape).astype(x.dtype),
        mean.astype(x.dtype),
        rstd.astype(x.dtype),
    )


# -- nn: activations, softmax, distances and losses --------------------------------------


def gelu_kernel(x: Any, approximate: str) -> Any:
    """x * Phi(x), Phi the standard normal CDF; "tanh" is PyTorch's approximation
    0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))."""
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + np.tanh(inner))
    if approximate != "none":
        raise RuntimeError("approximate argument must be either none or tanh.")
    return 0.5 * x * (1.0 + erf(x * math.sqrt(0.5)))


def softplus_kernel(x: Any, beta: float, threshold: float) -> Any:
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold."""
    scaled = x * beta
    return np.where(scaled > threshold, x, np.logaddexp(0, scaled) / beta)


def mish_kernel(x: Any) -> Any:
    return x * np.tanh(np.logaddexp(0, x))


def elu_kernel(x: Any, alpha: float, scale: float, input_scale: float) -> Any:
    """scale * x for x > 0, else scale * alpha * (exp(input_scale * x) - 1)."""
    negative = np.expm1(np.minimum(x, 0) * input_scale) * (alpha * scale)
    return np.where(x > 0, x * scale, negative)


def celu_kernel(x: Any, alpha: float) -> Any:
    """elu with scale 1 and input scale 1 / alpha; PyTorch refuses alpha 0."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return elu_kernel(x, alpha, 1.0, 1.0 / alpha)


def leaky_relu_kernel(x: Any, negative_slope: float) -> Any:
    return np.where(x > 0, x, x * negative_slope)


def hardtanh_kernel(x: Any, min_val: float, max_val: float) -> Any:
    return np.minimum(np.maximum(x, min_val), max_val)


def hardswish_kernel(x: Any) -> Any:
    return x * np.minimum(np.maximum(x + 3, 0), 6) / 6


def hardsigmoid_kernel(x: Any) -> Any:
    return np.minimum(np.maximum(x + 3, 0), 6) / 6


def log_sigmoid_kernel(x: Any) -> Any:
    return -np.logaddexp(0, -x)


def _check_reduction(op: str, reduction: int) -> None:
    """mse_loss and smooth_l1_loss refuse a reduction outside PyTorch's enum
    (where PyTorch fails an internal assert); the other losses do not check."""
    if reduction not in (0, 1, 2):
        raise RuntimeError(
            f"{op}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction}"
        )


def apply_loss_reduction(loss: Any, reduction: int) -> Any:
    """PyTorch's apply_loss_reduction: 1 mean, 2 sum, anything else none."""
    if reduction not in (1, 2):
        return loss
    total = mean_reduce(loss) if reduction == 1 else np.sum(loss)
    return np.asarray(total, dtype=loss.dtype)


def mse_loss_kernel(x: Any, target: Any, reduction: int) -> Any:
    _check_reduction("mse_loss", reduction)
    diff = x - target
    return apply_loss_reduction(diff * diff, reduction)


def smooth_l1_loss_kernel(x: Any, target: Any, reduction: int, beta: float) -> Any:
    """0.5 * d**2 / beta where |d| < beta, else |d| - 0.5 * beta (an L1 loss at 0)."""
    _check_reduction("smooth_l1_loss", reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    diff = np.abs(x - target)
    if beta == 0:
        return apply_loss_reduction(diff, reduction)
    loss = np.where(diff < beta, 0.5 * diff * diff / beta, diff - 0.5 * beta)
    return apply_loss_reduction(loss, reduction)


def huber_loss_kernel(x: Any, target: Any, reduction: int, delta: float) -> Any:
    """0.5 * d**2 where |d| <= delta, else delta * (|d| - 0.5 * delta)."""
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    diff = np.abs(x - target)
    loss = np.where(diff <= delta, 0.5 * diff * diff, delta * (diff - 0.5 * delta))
    return apply_loss_reduction(loss.astype(np.result_type(x), copy=False), reduction)


def binary_cross_entropy_kernel(
    x: Any, target: Any, weight: Any, reduction: int
) -> Any:
    """-w * (t * log(x) + (1 - t) * log(1 - x)), each log clamped at -100."""
    if np.result_type(target) != x.dtype:
        raise RuntimeError(
            f"Found dtype {_st(np.result_type(target))} but expected {_st(x.dtype)}"
        )
    if np.shape(target) != np.shape(x):
        # PyTorch's CPU kernel iterates over squeeze(input) and squeeze(target):
        # sizes that broadcast only through a size-1 dim that squeeze drops fail
        broadcast_pair(np.shape(np.squeeze(x)), np.shape(np.squeeze(target)))
    _check_probabilities(x, target)
    with np.errstate(divide="ignore"):
        log_x = np.maximum(np.log(x), -100)
        log_1mx = np.maximum(np.log1p(-x), -100)
    loss = -(target * log_x + (1 - target) * log_1mx)
    if weight is not None:
        loss = loss * weight
    return apply_loss_reduction(loss.astype(x.dtype, copy=False), reduction)


def _check_probabilities(x: Any, target: Any) -> None:
    """PyTorch's CPU kernel checks input then target element by element, so the
    first element out of [0, 1] (or nan) names which one is wrong."""
    inside_x = (x >= 0) & (x <= 1)
    inside_t = (np.asarray(target) >= 0) & (np.asarray(target) <= 1)
    if np.all(inside_x) and np.all(inside_t):
        return
    inside_x, inside_t = np.broadcast_arrays(inside_x, inside_t)
    first = int(np.argmin((inside_x & inside_t).reshape(-1)))
    which = "input" if not inside_x.reshape(-1)[first] else "target"
    raise RuntimeError(f"all elements of {which} should be between 0 and 1")


def binary_cross_entropy_with_logits_kernel(
    x: Any, target: Any, weight: Any, pos_weight: Any, reduction: int
) -> Any:
    """(1 - t) * x + (1 + (pos_weight - 1) * t) * log(1 + exp(-x)), stably.
    PyTorch computes it in place into `log_sigmoid(x)` (with pos_weight) and
    into `1 - t`: their shapes must take the broadcast."""
    if pos_weight is not None:
        _in_place_shape(np.shape(x), np.shape(pos_weight), np.shape(target))
    _in_place_shape(np.shape(target), np.shape(x))
    if weight is not None:
        _in_place_shape(np.shape(target), np.shape(weight))
    softplus_neg = np.logaddexp(0, -x)
    if pos_weight is not None:
        loss = (1 - target) * x + ((pos_weight - 1) * target + 1) * softplus_neg
    else:
        loss = (1 - target) * x + softplus_neg
    if weight is not None:
        loss = loss * weight
    # PyTorch computes it in place into `1 - target`: the target's float dtype.
    dtype = np.result_type(target) if np.result_type(target).kind == "f" else x.dtype
    return apply_loss_reduction(loss.astype(dtype, copy=False), reduction)


def _in_place_shape(out: tuple[int, ...], *others: tuple[int, ...]) -> None:
    """An in-place op into a tensor of shape `out`: the broadcast must be `out`."""
    try:
        shape = np.broadcast_shapes(out, *others)
    except ValueError:
        return  # the out-of-place broadcast error comes from the kernel itself
    if tuple(shape) != tuple(out):
        raise RuntimeError(
            f"output with shape {_sizes(out)} doesn't match the broadcast shape "
            f"{_sizes(shape)}"
        )


def nll_loss_positions(
    x: Any, target: Any, weight: Any, ignore_index: int
) -> tuple[Any, Any, Any]:
    """For nll_loss over input [C], [N, C] or [N, C, d1, ...]: the input with the
    class dim last, the per-position class weights (0 where ignored) and the
    targets with ignored ones replaced by class 0. Checks targets like PyTorch."""
    n_classes = x.shape[0] if x.ndim == 1 else x.shape[1]
    moved = x if x.ndim == 1 else np.moveaxis(x, 1, -1)
    target = np.asarray(target)
    if x.ndim == 1:  # one target, given 0-d or as [t]
        target = target.reshape(())
    keep = target != ignore_index
    bad = keep & ((target < 0) | (target >= n_classes))
    if np.any(bad):
        raise IndexError(f"Target {int(target[bad].flat[0])} is out of bounds.")
    safe = np.where(keep, target, 0)
    w = np.ones(n_classes, dtype=x.dtype) if weight is None else weight
    return moved, np.where(keep, w[safe], 0).astype(x.dtype), safe


def nll_loss_kernel(
    x: Any, target: Any, weight: Any, reduction: int, ignore_index: int
) -> tuple[Any, Any]:
    """nll_loss_forward: (-w[t] * x[..., t, ...] reduced, the total weight)."""
    if x.ndim not in (1, 2):
        raise RuntimeError("input tensor should be 1D or 2D")
    t = np.shape(target)
    if len(t) > 1:
        raise RuntimeError(
            "0D or 1D target tensor expected, multi-target not supported"
        )
    if x.ndim == 1 and len(t) == 1 and t[0] != 1:
        raise KernelValueError(
            f"For 1D input, 1D target must have size 1, but got target size: {t[0]}"
        )
    if x.ndim == 2 and not t:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if x.ndim == 2 and x.shape[0] != t[0]:
        raise RuntimeError(
            f"size mismatch (got input: {_sizes(x.shape)}, target: {_sizes(t)})"
        )
    n_classes = x.shape[-1]
    _check_nll_weight_dtype(x, weight)
    if weight is not None and (np.ndim(weight) != 1 or np.size(weight) != n_classes):
        raise RuntimeError(
            f"weight tensor should be defined either for all {n_classes} classes or "
            f"no classes but got weight tensor of shape: {_sizes(np.shape(weight))}"
        )
    return _nll_loss(x, target, weight, reduction, ignore_index)


def nll_loss2d_kernel(
    x: Any, target: Any, weight: Any, reduction: int, ignore_index: int
) -> tuple[Any, Any]:
    """nll_loss2d_forward: nll_loss over [N, C, H, W] with targets [N, H, W]."""
    if np.ndim(target) != 3:
        raise RuntimeError(
            "only batches of spatial targets supported (3D tensors) but got targets "
            f"of dimension: {np.ndim(target)}"
        )
    if x.ndim != 4:
        raise RuntimeError(
            "only batches of spatial inputs supported (4D tensors), but got input "
            f"of dimension: {x.ndim}"
        )
    _check_nll_weight_dtype(x, weight)
    if weight is not None and np.size(weight) != x.shape[1]:
        raise RuntimeError(
            "weight tensor should be defined either for all or no classes"
        )
    t = np.shape(target)
    if (x.shape[0], x.shape[2], x.shape[3]) != t:
        raise RuntimeError(
            f"size mismatch (got input: {_sizes(x.shape)} , target: {_sizes(t)}"
        )
    return _nll_loss(x, target, weight, reduction, ignore_index)


def _check_nll_weight_dtype(x: Any, weight: Any) -> None:
    if weight is not None and np.result_type(weight) != x.dtype:
        raise RuntimeError(
            f"expected scalar type {_st(x.dtype)} but found {_st(np.result_type(weight))}"
        )


def _nll_loss(
    x: Any, target: Any, weight: Any, reduction: int, ignore_index: int
) -> tuple[Any, Any]:
    moved, w, safe = nll_loss_positions(x, target, weight, ignore_index)
    picked = np.take_along_axis(moved, safe[..., None], axis=-1)[..., 0]
    losses = -w * picked
    total_weight = np.asarray(np.sum(w), dtype=x.dtype)
    if reduction == 0 and x.ndim > 1:
        return losses.astype(x.dtype, copy=False), np.zeros((), dtype=x.dtype)
    if reduction == 0:  # one unbatched target: its loss, and its weight
        return np.asarray(losses, dtype=x.dtype), total_weight
    total = np.sum(losses)
    if reduction == 1:
        with np.errstate(invalid="ignore"):  # 0 / 0: every target ignored, as nan
            total = total / total_weight
    return np.asarray(total, dtype=x.dtype), total_weight
