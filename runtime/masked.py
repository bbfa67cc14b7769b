"""`torch.masked`: reductions and normalizations that skip masked-out elements.

Each function takes PyTorch's arguments and `mask=` (a bool tensor that
broadcasts to the input; None keeps every element), and is a composite of the
public ops, as torch/masked/_ops.py composes them, so the nodes are PyTorch's:
the masked-out elements are first replaced by the reduction's identity with
`where` (0 for sum, 1 for prod, -inf for amax and logsumexp, +inf for amin,
NaN for median through nanmedian), then the plain op runs (SumBackward1,
AmaxBackward0, SoftmaxBackward0, ...). mean, var and std divide by the count
of kept elements, so a fully masked-out slice gives NaN, as in PyTorch.

Only strided tensors exist here, so the sparse layouts and MaskedTensor inputs
of PyTorch's functions have no counterpart.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime import dtypes
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops

__all__ = [
    "amax",
    "amin",
    "argmax",
    "argmin",
    "cumprod",
    "cumsum",
    "log_softmax",
    "logaddexp",
    "logsumexp",
    "mean",
    "median",
    "norm",
    "normalize",
    "prod",
    "softmax",
    "softmin",
    "std",
    "sum",
    "var",
]

_SMALL_INTEGERS = ("uint8", "bool", "int8", "int16", "int32")


def _dtype_of(t: Tensor) -> dtypes.dtype:
    return dtypes.from_numpy(t._data.dtype)


def _reduction_identity(op: str, input: Tensor, *args: Any) -> Tensor | None:
    """The value that leaves `op`'s result unchanged, as a 0-d tensor of the
    input's dtype (None where there is none: mean, var, std)."""
    data = input._data
    kind = data.dtype.kind
    value: Any
    if op in ("sum", "cumsum"):
        value = 0
    elif op in ("prod", "cumprod"):
        value = 1
    elif op in ("amax", "argmax", "logaddexp", "logsumexp"):
        value = -np.inf if kind == "f" else _integer_bound(data.dtype, "min")
    elif op in ("amin", "argmin"):
        value = np.inf if kind == "f" else _integer_bound(data.dtype, "max")
    elif op == "norm":
        ord = args[0] if args else 2
        value = np.inf if ord == float("-inf") else 0
    elif op == "median":
        dtype = data.dtype if kind == "f" else np.dtype(np.float32)
        return Tensor._make(np.asarray(np.nan, dtype=dtype))
    elif op in ("mean", "var", "std"):
        return None
    else:
        raise NotImplementedError(f"identity of {op} on {_dtype_of(input)} input")
    if value is None:
        raise NotImplementedError(f"identity of {op} on {_dtype_of(input)} input")
    return Tensor._make(np.asarray(value, dtype=data.dtype))


def _integer_bound(dtype: np.dtype, which: str) -> int | None:
    if dtype.kind not in "iu":
        return None
    info = np.iinfo(dtype)
    return int(info.min if which == "min" else info.max)


def _canonical_dim(dim: Any, ndim: int) -> tuple[int, ...]:
    """`dim` as a sorted tuple of dims (None or (): all of them)."""
    if dim == () or dim is None:
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    dims: list[int] = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-ndim}, "
                f"{ndim - 1}], but got {d})"
            )
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _input_mask(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The mask as a bool tensor of the input's shape (broadcast)."""
    mask = kwargs.get("mask")
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if tuple(mask.shape) != tuple(input.shape):
        if mask.ndim > input.ndim:
            raise IndexError(
                "_input_mask expected broadcastable mask (got mask dimensionality "
                "higher than of the input)"
            )
        mask = ops.broadcast_to(mask.clone(), tuple(input.shape))
    if mask._data.dtype != np.bool_:
        mask = Tensor._make(mask._data.astype(np.bool_))
    return mask


_REDUCTIONS = frozenset(
    {"sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median", "norm"}
    | {"var", "std", "logsumexp"}
)
_NORMALIZATIONS = frozenset(
    {"softmax", "log_softmax", "softmin", "normalize", "cumsum", "cumprod"}
)


def _output_mask(op: Any, input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Where the output of masked `op` on these arguments is defined."""
    name = getattr(op, "__name__", None)
    if name in _REDUCTIONS:
        if name == "norm" and args:
            args = args[1:]
        dim = args[0] if args else kwargs.get("dim")
        outmask = _input_mask(input, *args, **kwargs)
        keepdim = bool(kwargs.get("keepdim", False))
        for d in reversed(_canonical_dim(dim, input.ndim)):
            outmask = ops.any(outmask, d, keepdim)
        return outmask
    if name in _NORMALIZATIONS:
        return _input_mask(input, *args, **kwargs)
    raise ValueError(f"_output_mask expected masked operation (got {op!r})")


def _combine_input_and_mask(op: str, input: Tensor, mask: Any, *args: Any) -> Any:
    """`input` with its masked-out elements replaced by `op`'s identity
    (WhereBackward0); `input` itself without a mask."""
    if mask is None:
        return input
    canonical = _input_mask(input, mask=mask)
    return ops.where(canonical, input, _reduction_identity(op, input, *args))


def _promoted(input: Tensor, dtype: Any) -> Any:
    """sum's and prod's default dtype: int64 for small integers and bool."""
    if dtype is not None:
        return dtype
    if input._data.dtype.name in _SMALL_INTEGERS:
        return dtypes.int64
    return _dtype_of(input)


def _to(t: Any, dtype: Any) -> Any:
    """`t.to(dtype)`: `t` itself when it already has it."""
    target = dtypes.to_numpy(dtype)
    if t._data.dtype == target:
        return t
    return ops._to_copy(t, dtype=target)


def sum(
    input: Tensor,
    dim: Any = None,
    *,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Any:
    """The sum of the kept elements along `dim` (all dims for None).

    >>> x = yg.tensor([[-3.0, -2.0, -1.0], [0.0, 1.0, 2.0]])
    >>> yg.masked.sum(x, 1, mask=yg.tensor([[True, False, True], [False, False, False]]))
    tensor([-4.,  0.])
    """
    dtype = _promoted(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    masked = _combine_input_and_mask("sum", input, mask)
    return ops.sum(masked, list(dims), bool(keepdim), dtype=dtype)


def prod(
    input: Tensor,
    dim: Any = None,
    *,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Any:
    """The product of the kept elements along `dim`, one dim at a time."""
    dtype = _promoted(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    result = _to(_combine_input_and_mask("prod", input, mask), dtype)
    for d in reversed(dims):
        result = ops.prod(result, d, bool(keepdim))
    return result


def cumsum(
    input: Tensor, dim: int, *, dtype: Any = None, mask: Tensor | None = None
) -> Any:
    """The running sum along `dim`, masked-out elements counting as 0."""
    dtype = _dtype_of(input) if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    masked = _combine_input_and_mask("sum", input, mask)
    return _to(ops.cumsum(masked, d, dtype=dtype), dtype)


def cumprod(
    input: Tensor, dim: int, *, dtype: Any = None, mask: Tensor | None = None
) -> Any:
    """The running product along `dim`, masked-out elements counting as 1."""
    dtype = _dtype_of(input) if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    masked = _combine_input_and_mask("prod", input, mask)
    return _to(ops.cumprod(masked, d, dtype=dtype), dtype)


def amax(
    input: Tensor,
    dim: Any = None,
    *,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Any:
    """The largest kept element along `dim` (-inf where none is kept)."""
    dtype = _dtype_of(input) if dtype is None else dtype
    masked = _combine_input_and_mask("amax", input, mask)
    dims = _canonical_dim(dim, masked.ndim)
    return _to(ops.amax(masked, list(dims), bool(keepdim)), dtype)


def amin(
    input: Tensor,
    dim: Any = None,
    *,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Any:
    """The smallest kept element along `dim` (+inf where none is kept)."""
    dtype = _dtype_of(input) if dtype is None else dtype
    masked = _combine_input_and_mask("amin", input, mask)
    dims = _canonical_dim(dim, masked.ndim)
    return _to(ops.amin(masked, list(dims), bool(keepdim)), dtype)


def argmax(
    input: Tensor,
    dim: int | None = None,
    *,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Any:
    """The index of the largest kept element along `dim`."""
    dtype = _dtype_of(input) if dtype is None else dtype
    masked = _combine_input_and_mask("argmax", input, mask)
    return _to(ops.argmax(masked, dim, bool(keepdim)), dtype)


def argmin(
    input: Tensor,
    dim: int | None = None,
    *,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Any:
    """The index of the smallest kept element along `dim`."""
    dtype = _dtype_of(input) if dtype is None else dtype
    masked = _combine_input_and_mask("argmin", input, mask)
    return _to(ops.argmin(masked, dim, bool(keepdim)), dtype)


def _floating(dtype: Any) -> bool:
    return dtypes.to_numpy(dtype).kind in "fc"


def mean(
    input: Tensor,
    dim: Any = None,
    *,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Any:
    """The mean of the kept elements along `dim` (NaN where none is kept)."""
    source = "Optional"
    if dtype is None:
        dtype = _dtype_of(input)
        source = "Input"
    if not _floating(dtype):
        raise ValueError(
            f"mean(): Could not infer output dtype. {source} dtype must be either a "
            f"floating point or complex dtype. Got: {dtypes.from_numpy(dtypes.to_numpy(dtype))}"
        )
    if mask is None:
        ones = Tensor._make(np.ones(tuple(input.shape), dtype=np.int64))
        count = sum(ones, dim, keepdim=keepdim)
        total = sum(input, dim, keepdim=keepdim, dtype=dtype)
    else:
        inmask = _input_mask(input, mask=mask)
        count = _mask_count(inmask, dim, bool(keepdim))
        total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    return ops.div(total, count)


def _mask_count(inmask: Tensor, dim: Any, keepdim: bool) -> Any:
    """`inmask.sum(dim=dim, keepdim=keepdim)`: the kept elements per slice."""
    dims = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    return ops.sum(inmask, dims, keepdim)


def median(
    input: Tensor,
    dim: int = -1,
    *,
    keepdim: bool = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Any:
    """The median of the kept elements along `dim` (nanmedian; NaN where none
    is kept)."""
    dtype = _dtype_of(input) if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    is_float = input._data.dtype.kind == "f"
    if not is_float:
        input = _to(input, dtypes.float32)
    masked = _combine_input_and_mask("median", input, mask)
    output = ops.nanmedian(masked, d, keepdim)[0]
    if is_float:
        return output
    if not np.isnan(output._data).any():
        return _to(output, dtype)
    raise ValueError(
        "masked median expects no fully masked out rows if dtype is not floating "
        "point"
    )


def logsumexp(
    input: Tensor,
    dim: Any = None,
    *,
    keepdim: bool = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Any:
    """log(sum(exp(x))) over the kept elements along `dim`."""
    dtype = _dtype_of(input) if dtype is None else dtype
    dims = _canonical_dim(dim, input.ndim)
    masked = _combine_input_and_mask("logsumexp", input, mask)
    return _to(ops.logsumexp(masked, list(dims), keepdim), dtype)


def logaddexp(
    input: Tensor,
    other: Tensor,
    *,
    dtype: Any = None,
    input_mask: Tensor | None = None,
    other_mask: Tensor | None = None,
) -> Any:
    """log(exp(input) + exp(other)), each operand's masked-out elements -inf.

    >>> x = yg.tensor([-100.0, -200, -300])
    >>> m = yg.tensor([True, False, True])
    >>> yg.masked.logaddexp(x, yg.tensor([-1.0, -2, -3]), input_mask=m, other_mask=m)
    tensor([-1., -inf, -3.])
    """
    dtype = _dtype_of(input) if dtype is None else dtype
    masked_input = _combine_input_and_mask("logaddexp", input, input_mask)
    masked_other = _combine_input_and_mask("logaddexp", other, other_mask)
    return _to(ops.logaddexp(masked_input, masked_other), dtype)


def norm(
    input: Tensor,
    ord: float | None = 2.0,
    dim: Any = None,
    *,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Any:
    """The vector norm of the kept elements along `dim`."""
    dtype = _dtype_of(input) if dtype is None else dtype
    masked = _combine_input_and_mask("norm", input, mask, ord)
    dims = _canonical_dim(dim, input.ndim)
    return ops.linalg_vector_norm(
        masked, ord, list(dims), bool(keepdim), dtype=dtypes.to_numpy(dtype)
    )


def _std_var(
    input: Tensor,
    dim: Any,
    unbiased: bool | None,
    correction_opt: float | None,
    keepdim: bool | None,
    dtype: Any,
    mask: Tensor | None,
    take_sqrt: bool,
) -> Any:
    if unbiased is not None and correction_opt is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    correction = 1.0
    if unbiased is not None:
        correction = 1.0 if unbiased else 0.0
    if correction_opt is not None:
        correction = float(correction_opt)
    if dtype is None:
        dtype = _dtype_of(input)
        if not _floating(dtype):
            dtype = dtypes.float32
    compute_dtype = dtype if _floating(dtype) else dtypes.float32
    if mask is None:
        ones = Tensor._make(np.ones(tuple(input.shape), dtype=np.int64))
        count = sum(ones, dim, keepdim=True)
        sample_total = sum(input, dim, keepdim=True, dtype=dtype)
        inmask = None
    else:
        inmask = _input_mask(input, mask=mask)
        count = _mask_count(inmask, dim, True)
        sample_total = sum(input, dim, keepdim=True, dtype=dtype, mask=inmask)
    x = ops.sub(input, ops.div(sample_total, count))
    total = sum(ops.mul(x, x), dim, keepdim=keepdim, dtype=compute_dtype, mask=inmask)
    if not keepdim:
        count = ops.reshape(count, tuple(total.shape))
    if correction != 0:
        count = _to(count, compute_dtype)
        count = ops.sub(count, correction)
        count = ops.maximum(count, Tensor._make(np.zeros((), count._data.dtype)))
    output = _to(ops.div(total, count), dtype)
    return ops.sqrt(output) if take_sqrt else output


def var(
    input: Tensor,
    dim: Any = None,
    unbiased: bool | None = None,
    *,
    correction: float | None = None,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Any:
    """The variance of the kept elements along `dim` (NaN where none is kept)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(
    input: Tensor,
    dim: Any = None,
    unbiased: bool | None = None,
    *,
    correction: int | None = None,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Any:
    """The standard deviation of the kept elements along `dim`."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def _softmax_operands(
    input: Tensor, dim: int, dtype: Any, mask: Tensor | None, reduction: str
) -> tuple[Tensor, int, Any]:
    """The input with its masked-out elements filled as `reduction` ignores them
    (-inf for amax, +inf for amin), the dim, and the result's numpy dtype."""
    dtype = _dtype_of(input) if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    masked = _combine_input_and_mask(reduction, input, mask)
    return masked, d, dtypes.to_numpy(dtype)


def softmax(
    input: Tensor, dim: int, *, dtype: Any = None, mask: Tensor | None = None
) -> Any:
    """softmax along `dim` with the masked-out elements -inf (probability 0)."""
    masked, d, dtype = _softmax_operands(input, dim, dtype, mask, "amax")
    return ops.softmax(masked, d, dtype)


def log_softmax(
    input: Tensor, dim: int, *, dtype: Any = None, mask: Tensor | None = None
) -> Any:
    """log_softmax along `dim` with the masked-out elements -inf."""
    masked, d, dtype = _softmax_operands(input, dim, dtype, mask, "amax")
    return ops.log_softmax(masked, d, dtype)


def softmin(
    input: Tensor, dim: int, *, dtype: Any = None, mask: Tensor | None = None
) -> Any:
    """softmax(-x) along `dim` with the masked-out elements +inf."""
    masked, d, dtype = _softmax_operands(input, dim, dtype, mask, "amin")
    return ops.softmax(ops.neg(masked), d, dtype)


def normalize(
    input: Tensor,
    ord: float,
    dim: int,
    *,
    eps: float = 1e-12,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Any:
    """The input divided by the masked norm along `dim` (at least `eps`); the
    masked-out elements are 0."""
    dtype = _dtype_of(input) if dtype is None else dtype
    masked = _combine_input_and_mask("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    denom = ops.maximum(nrm, Tensor._make(np.asarray(eps, dtype=nrm._data.dtype)))
    return ops.div(masked, denom)
