"""Helpers that backward formulas in derivatives.yaml may call (FunctionsManual.cpp).

Each helper takes either ndarrays (a first-order backward: plain numpy, no Tensor is
made) or Tensors (`create_graph=True`: the helper calls yamlgrad ops, so what it
computes is recorded and can be differentiated again). One formula text therefore
serves both modes. The generator reads `__all__` with ast: a formula may call these
names and nothing else.

The Tensor side calls generated ops through `ops`, which the package facade binds to
generated/VariableType.py (the runtime never imports generated/ itself).
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import numpy as np

from yamlgrad.runtime import kernels
from yamlgrad.runtime.tensor import Tensor

__all__ = [
    "cos",
    "sin",
    "exp",
    "log",
    "sign",
    "zeros_like",
    "ones_like",
    "where",
    "maybe_multiply",
    "expand",
    "sum_to",
    "reshape",
    "transpose",
    "permute_backwards",
    "sum_backward",
    "mean_backward",
    "pow_backward",
    "pow_backward_self",
    "pow_backward_exponent",
    "threshold_backward",
    "to_dtype",
    "mm_mat1_backward",
    "mm_mat2_backward",
    "matmul_backward_self",
    "matmul_backward_other",
    "value_selecting_reduction_backward",
    "evenly_distribute_backward",
    "slice_of",
    "slice_backward",
    "select_of",
    "select_backward",
    "cat_tensors_backward",
    "stack_tensors_backward",
    "split_backward",
    "unbind_backward",
    "sinh",
    "cosh",
    "rsqrt",
    "isnan",
    "isfinite",
    "logical_and",
    "logical_or",
    "xlogy",
    "div_floor",
    "div_trunc",
    "clamp_backward",
    "clamp_backward_min",
    "clamp_backward_max",
    "copysign_tensor_self_backward",
    "logit_backward",
]

ops: Any = ModuleType("ops")  # replaced by the facade with generated/VariableType


def bind_ops(module: Any) -> None:
    """Called once by the package facade: the Tensor side of every helper."""
    global ops
    ops = module


def _unary(np_fn: Any, name: str) -> Any:
    def helper(x: Any) -> Any:
        if isinstance(x, Tensor):
            return getattr(ops, name)(x)
        if isinstance(x, (int, float)):
            # numpy's IEEE results, not math's exceptions: log(0.0) is -inf (the
            # gradient of 0.0 ** y), log(-2.0) nan, exp(800.0) inf, as in PyTorch.
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                return float(np_fn(x))
        return np_fn(x)

    helper.__name__ = helper.__qualname__ = name
    helper.__doc__ = f"`{name}` of an ndarray, a Python number, or a Tensor (recorded)."
    return helper


cos = _unary(np.cos, "cos")
sin = _unary(np.sin, "sin")
exp = _unary(np.exp, "exp")
log = _unary(np.log, "log")
sinh = _unary(np.sinh, "sinh")
cosh = _unary(np.cosh, "cosh")


def _rsqrt(x: Any) -> Any:
    return np.reciprocal(np.sqrt(x))


rsqrt = _unary(_rsqrt, "rsqrt")


def sign(x: Any) -> Any:
    return ops.sign(x) if isinstance(x, Tensor) else np.sign(x)


def zeros_like(x: Any) -> Any:
    """Zeros of x's shape and dtype; never part of a graph."""
    if isinstance(x, Tensor):
        return Tensor._make(np.zeros_like(x._data))
    return np.zeros_like(x)


def ones_like(x: Any) -> Any:
    if isinstance(x, Tensor):
        return Tensor._make(np.ones_like(x._data))
    return np.ones_like(x)


def _any_tensor(*values: Any) -> bool:
    return any(isinstance(v, Tensor) for v in values)


def where(condition: Any, x: Any, y: Any) -> Any:
    if _any_tensor(condition, x, y):
        return ops.where(condition, x, y)
    return np.where(condition, x, y)


def maybe_multiply(grad: Any, alpha: Any) -> Any:
    """`grad * alpha`, skipped when alpha is 1."""
    return grad if alpha == 1 else grad * alpha


def expand(x: Any, shape: tuple[int, ...]) -> Any:
    if isinstance(x, Tensor):
        return ops.expand(x, shape)
    return np.broadcast_to(x, shape)


def reshape(x: Any, shape: tuple[int, ...]) -> Any:
    if isinstance(x, Tensor):
        return ops.reshape(x, shape)
    return np.reshape(x, shape)


def sum_to(x: Any, shape: tuple[int, ...]) -> Any:
    """Sum `x` down to `shape`: leading dims, then dims where `shape` has a 1."""
    x_shape = x.shape
    if tuple(x_shape) == tuple(shape):
        return x
    lead = len(x_shape) - len(shape)
    dims = list(range(lead))
    dims += [lead + i for i, s in enumerate(shape) if s == 1 and x_shape[lead + i] != 1]
    if isinstance(x, Tensor):
        if dims:
            x = ops.sum(x, dims, True)
        return ops.reshape(x, shape) if tuple(x.shape) != tuple(shape) else x
    if dims:
        x = np.sum(x, axis=tuple(dims), keepdims=True)
    return np.reshape(x, shape)


def transpose(x: Any, dim0: int, dim1: int) -> Any:
    if isinstance(x, Tensor):
        return ops.transpose(x, dim0, dim1)
    return np.swapaxes(x, dim0, dim1)


def permute_backwards(grad: Any, dims: tuple[int, ...]) -> Any:
    """Undo `permute(dims)` by permuting with the inverse permutation."""
    ndim = len(dims)
    inverse = [0] * ndim
    for i, d in enumerate(dims):
        inverse[d % ndim] = i
    if isinstance(grad, Tensor):
        return ops.permute(grad, inverse)
    return np.transpose(grad, inverse)


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
    """sum_backward divided by how many elements each mean averaged."""
    kept = _keepdim_shape(sizes, dim)
    count = math.prod(sizes) // max(math.prod(kept), 1) if sizes else 1
    return sum_backward(grad, sizes, dim, keepdim) / count


def pow_backward(grad: Any, self: Any, exponent: float) -> Any:
    """d(self ** exponent): exponent * self ** (exponent - 1); zero for exponent 0."""
    if exponent == 0:
        return zeros_like(self)
    return grad * (exponent * self ** (exponent - 1))


def pow_backward_self(grad: Any, self: Any, exponent: Any) -> Any:
    """d(self ** exponent)/d(self) for a tensor exponent; zero where it is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        value = grad * (exponent * self ** (exponent - 1))
    return where(exponent == 0, zeros_like(value), value)


def pow_backward_exponent(grad: Any, self: Any, exponent: Any, result: Any) -> Any:
    """d(self ** exponent)/d(exponent) = result * log(self); 0 where self is 0 and
    the exponent is >= 0 (the limit PyTorch takes)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        value = grad * (result * log(self))
    if isinstance(self, (int, float)):
        if self != 0:
            return value
        return where(exponent >= 0, zeros_like(value), value)
    mask = where(self == 0, exponent >= 0, False)
    return where(mask, zeros_like(value), value)


def threshold_backward(grad: Any, result: Any, threshold: float) -> Any:
    """relu's backward: the gradient where the output is above the threshold."""
    return grad * (result > threshold)


def to_dtype(x: Any, dtype: np.dtype) -> Any:
    if isinstance(x, Tensor):
        return ops._to_copy(x, dtype=dtype) if x._data.dtype != dtype else x
    return x.astype(dtype, copy=False)


def mm_mat1_backward(grad: Any, mat2: Any) -> Any:
    return grad @ mat2.T


def mm_mat2_backward(grad: Any, mat1: Any) -> Any:
    return mat1.T @ grad


def _swap_last(x: Any) -> Any:
    return transpose(x, -1, -2)


def _unsqueeze_last(x: Any) -> Any:
    return reshape(x, tuple(x.shape) + (1,))


def _squeeze_last(x: Any) -> Any:
    return reshape(x, tuple(x.shape)[:-1])


def matmul_backward_self(grad: Any, self: Any, other: Any) -> Any:
    """d(self @ other)/d(self) for every rank; the engine sums broadcast batch dims."""
    if other.ndim == 1:
        if self.ndim == 1:
            return grad * other
        return _unsqueeze_last(grad) * other
    if self.ndim == 1:
        return _squeeze_last(other @ _unsqueeze_last(grad))
    return grad @ _swap_last(other)


def matmul_backward_other(grad: Any, self: Any, other: Any) -> Any:
    """d(self @ other)/d(other) for every rank; the engine sums broadcast batch dims."""
    if self.ndim == 1:
        if other.ndim == 1:
            return grad * self
        return _unsqueeze_last(self) * reshape(
            grad, tuple(grad.shape)[:-1] + (1,) + tuple(grad.shape)[-1:]
        )
    if other.ndim == 1:
        return _squeeze_last(_swap_last(self) @ _unsqueeze_last(grad))
    return _swap_last(self) @ grad


def _constant_like(reference: Any, array: np.ndarray) -> Any:
    """`array` in the same mode as `reference`: a Tensor outside any graph, or as is."""
    return Tensor._make(array) if isinstance(reference, Tensor) else array


def _data(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else x


def _wrap_dim(dim: int, ndim: int) -> int:
    return dim % max(ndim, 1)


def value_selecting_reduction_backward(
    grad: Any, dim: int, indices: Any, sizes: tuple[int, ...], keepdim: bool
) -> Any:
    """max.dim/min.dim: the gradient goes to the selected entry along `dim` only."""
    if not sizes:
        return grad
    dim = _wrap_dim(dim, len(sizes))
    index = np.asarray(_data(indices))
    if not keepdim:
        index = np.expand_dims(index, dim)
        grad = reshape(grad, tuple(index.shape))
    positions = np.arange(sizes[dim]).reshape((-1,) + (1,) * (len(sizes) - dim - 1))
    mask = (positions == index).astype(_data(grad).dtype)
    return expand(grad, sizes) * _constant_like(grad, mask)


def evenly_distribute_backward(grad: Any, input: Any, value: Any) -> Any:
    """max()/min() of a whole tensor: ties share the gradient evenly (NaN matches NaN)."""
    x, v = np.asarray(_data(input)), np.asarray(_data(value))
    mask = (x == v) | (np.isnan(x) & np.isnan(v))
    count = max(int(mask.sum()), 1)
    weights = mask.astype(_data(grad).dtype) / count
    return expand(grad, x.shape) * _constant_like(grad, weights)


def slice_of(x: Any, dim: int, start: int | None, end: int | None, step: int) -> Any:
    """`x` sliced along `dim` (recorded as SliceBackward0 on a Tensor)."""
    if isinstance(x, Tensor):
        return ops.slice_Tensor(x, dim, start, end, step)
    return kernels.slice_kernel(x, dim, start, end, step)


def slice_backward(
    grad: Any, sizes: tuple[int, ...], dim: int, start: int | None, end: int | None, step: int
) -> Any:
    """Zeros of the input's shape with `grad` in the slice (an op of its own, so
    that it can be differentiated again)."""
    if isinstance(grad, Tensor):
        # The op takes concrete bounds, as PyTorch's slice_backward does.
        size = sizes[_wrap_dim(dim, len(sizes))]
        start, end, _ = slice(start, end, step).indices(size)
        return ops.slice_backward(grad, sizes, dim, start, end, step)
    return kernels.slice_backward_kernel(grad, sizes, dim, start, end, step)


def select_of(x: Any, dim: int, index: int) -> Any:
    if isinstance(x, Tensor):
        return ops.select(x, dim, index)
    return kernels.select_kernel(x, dim, index)


def select_backward(grad: Any, sizes: tuple[int, ...], dim: int, index: int) -> Any:
    if isinstance(grad, Tensor):
        return ops.select_backward(grad, sizes, dim, index)
    return kernels.select_backward_kernel(grad, sizes, dim, index)


def cat_tensors_backward(grad: Any, sizes: list[tuple[int, ...]], dim: int) -> list[Any]:
    """Split the gradient of `cat` back into one piece per input."""
    dim = _wrap_dim(dim, len(grad.shape))
    pieces, start = [], 0
    for size in sizes:
        length = size[dim] if len(size) > dim else 0
        pieces.append(slice_of(grad, dim, start, start + length, 1))
        start += length
    return pieces


def stack_tensors_backward(grad: Any, dim: int, sizes: list[tuple[int, ...]]) -> list[Any]:
    """Unbind the gradient of `stack` into one piece per input."""
    dim = _wrap_dim(dim, len(grad.shape))
    return [select_of(grad, dim, i) for i in range(len(sizes))]


def split_backward(
    grads: list[Any], split_size: int, dim: int, sizes: tuple[int, ...]
) -> Any:
    """Join the pieces' gradients back along `dim`."""
    dim = _wrap_dim(dim, len(sizes))
    if isinstance(grads[0], Tensor):
        return ops.cat(list(grads), dim)
    return np.concatenate(grads, axis=dim)


def unbind_backward(grads: list[Any], dim: int) -> Any:
    """Stack the slices' gradients back along `dim`."""
    if isinstance(grads[0], Tensor):
        return ops.stack(list(grads), dim)
    return np.stack(grads, axis=dim)
# -- masks: piecewise-constant functions of the inputs, never part of a graph ----------


def _raw(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else x


def _mask(np_fn: Any, name: str) -> Any:
    def helper(*values: Any) -> Any:
        out = np_fn(*(_raw(v) for v in values))
        return Tensor._make(out) if _any_tensor(*values) else out

    helper.__name__ = helper.__qualname__ = name
    helper.__doc__ = (
        f"`np.{np_fn.__name__}` as a bool mask; a Tensor one (no grad) if any input "
        "is a Tensor. Its derivative is zero, so nothing is recorded."
    )
    return helper


isnan = _mask(np.isnan, "isnan")
isfinite = _mask(np.isfinite, "isfinite")
logical_and = _mask(np.logical_and, "logical_and")
logical_or = _mask(np.logical_or, "logical_or")


# -- element-wise backward helpers (FunctionsManual.cpp) -------------------------------


def xlogy(x: Any, y: Any) -> Any:
    """x * log(y), 0 where x is 0: `xlogy` of ndarrays, or the recorded op."""
    if _any_tensor(x, y):
        return ops.xlogy(x, y)
    return kernels.xlogy(x, y)


def div_floor(a: Any, b: Any) -> Any:
    """`a.div(b, rounding_mode="floor")`: recorded (DivBackward2) on Tensors."""
    if _any_tensor(a, b):
        return ops.div(a, b, rounding_mode="floor")
    return kernels.divide(a, b, "floor")


def div_trunc(a: Any, b: Any) -> Any:
    """`a.div(b, rounding_mode="trunc")`: recorded (DivBackward2) on Tensors."""
    if _any_tensor(a, b):
        return ops.div(a, b, rounding_mode="trunc")
    return kernels.divide(a, b, "trunc")


def clamp_backward(grad: Any, self: Any, low: Any, high: Any) -> Any:
    """d clamp(self, low, high)/d self: grad where low <= self <= high, else 0.

    A bound that is None is no bound; at a bound the gradient passes (PyTorch's
    subgradient 1).
    """
    if low is not None and high is not None:
        return where(logical_and(self >= low, self <= high), grad, 0)
    if low is not None:
        return where(self >= low, grad, 0)
    if high is not None:
        return where(self <= high, grad, 0)
    return grad


def clamp_backward_min(grad: Any, self: Any, low: Any, high: Any) -> Any:
    """d clamp(self, low, high)/d low: grad where self < low, unless low > high
    (then the output is `high` and `low` has no gradient)."""
    if high is None:
        return where(self < low, grad, 0)
    return where(logical_and(self < low, low < high), grad, 0)


def clamp_backward_max(grad: Any, self: Any, low: Any, high: Any) -> Any:
    """d clamp(self, low, high)/d high: grad where self > high, and everywhere the
    bounds cross (low > high makes the output `high`)."""
    if low is None:
        return where(self > high, grad, 0)
    return where(logical_or(self > high, high < low), grad, 0)


def copysign_tensor_self_backward(grad: Any, self: Any, result: Any) -> Any:
    """d copysign(self, other)/d self: grad * result / self (the sign that was
    applied), 0 where self is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = result / self
    return grad * where(self == 0, 0, ratio)


def logit_backward(grad: Any, self: Any, eps: float | None) -> Any:
    """d logit(self, eps)/d self: grad / (self * (1 - self)) inside [eps, 1 - eps]
    and 0 outside; without eps, inside [0, 1] and nan outside. PyTorch's
    infinitely_differentiable_logit_backward, used in both modes."""
    low, high, outside = (0.0, 1.0, math.nan) if eps is None else (eps, 1 - eps, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = grad / (self * (1 - self))
    return where(logical_and(self >= low, self <= high), value, outside)
