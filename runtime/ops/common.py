"""Private helpers shared by the op families: dimension wrapping, the ndarray or
Tensor mode of a value, sizes read off either.

Nothing here is callable from derivatives.yaml (the module declares no KERNELS or
BACKWARD_HELPERS). It imports no family module, so every family may import it
without an import cycle; a helper lands here only when two families need it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.ops.namespace import array_namespace, constant_tensor
from yamlgrad.runtime.wrappers.variable_type_utils import argsize_of


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


def _dim(dim: int, ndim: int, op: str) -> int:
    """A dim wrapped into [0, ndim), with PyTorch's IndexError for one out of range."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
            f"but got {dim})"
        )
    return dim % n


def _distinct(dims: Any) -> None:
    """PyTorch's error for a dim given twice in a list of wrapped dims."""
    _dim_list(dims, None, "")


def _dim_list(dims: Any, ndim: int | None, op: str) -> list[int]:
    """PyTorch's dim_list_to_bitset: each dim wrapped into `ndim` dims (`op`
    names the op in the error for one out of range; None: wrapped already),
    in order, and the error for one given twice at the first repeat."""
    wrapped: list[int] = []
    for d in dims:
        if ndim is not None:
            d = _dim(d, ndim, op)
        if d in wrapped:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        wrapped.append(d)
    return wrapped


def _size_at(x: Any, d: int) -> int:
    """x.size(d), with PyTorch's IndexError for a dim x does not have."""
    return argsize_of(x, d)


def _sizes(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _any_tensor(*values: Any) -> bool:
    return any(isinstance(v, Tensor) for v in values)


def _constant_like(reference: Any, array: np.ndarray) -> Any:
    """`array` in the same mode as `reference`: a Tensor outside any graph, or as is."""
    return Tensor._make(array) if isinstance(reference, Tensor) else array


def _wrap_dim(dim: int, ndim: int) -> int:
    return dim % max(ndim, 1)


def _raw(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else x


# Note [Masks are constants]: a mask (`x == 0`, `|x| == norm`) only selects where a
# gradient goes; it has no derivative. On the Tensor side it is built from the
# data as a plain Tensor with no history, which is what PyTorch's bool results are.


def _constant(x: Any, like: Any) -> Any:
    """An ndarray as a constant operand next to `like` (a Tensor, an ndarray, or
    another backend's array, onto whose backend it is moved)."""
    if isinstance(like, Tensor):
        return Tensor._make(np.asarray(x))
    if type(like) is not np.ndarray and backend.is_foreign(like):
        if backend.is_foreign(x):
            return x
        return backend.namespace_of(like).asarray(np.asarray(x))
    return np.asarray(x)


def _data(x: Any) -> Any:
    """A Tensor's data; another backend's array as is; anything else as an ndarray."""
    if isinstance(x, Tensor):
        return x._data
    if type(x) is not np.ndarray and backend.is_foreign(x):
        return x
    return np.asarray(x)


def _abs(x: Any) -> Any:
    return array_namespace(x).abs(x)


_as_tensor = constant_tensor


def _zeros(sizes: tuple[int, ...], like: Any) -> Any:
    """Zeros of `sizes` in the dtype and mode of `like` (never part of a graph),
    on like's backend."""
    data = _data(like)
    if type(data) is not np.ndarray and backend.is_foreign(data):
        return backend.namespace_of(data).zeros(sizes, dtype=data.dtype)
    return _constant_like(like, np.zeros(sizes, dtype=data.dtype))


# A signed integer as wide as each float type (for `_zero_outside`'s bit mask),
# and the size from which the bit mask beats np.where (measured on this machine:
# 4,096 elements 6.4 us against 4.4; 65,536 elements 35 us against 59).
_SAME_WIDTH = {2: np.int16, 4: np.int32, 8: np.int64}
_BITS_FROM = 16_384


def _zero_outside(value: Any, keep: Any) -> Any:
    """`value` where the raw bool `keep` holds, else 0, by selection (as
    PyTorch's masked backward kernels do): an inf or nan gradient outside
    the region gives 0, not nan."""
    if type(value) is not np.ndarray:
        if isinstance(value, Tensor):
            return ops.where(_constant(np.asarray(keep), value), value, 0)
        value = np.asarray(value)
    keep = np.asarray(keep)
    bits = _SAME_WIDTH.get(value.dtype.itemsize) if value.dtype.kind == "f" else None
    if bits is None or keep.dtype != np.bool_ or value.size < _BITS_FROM:
        return np.where(keep, value, 0).astype(value.dtype, copy=False)
    # The same selection on the bit patterns, up to six times faster than
    # np.where on large arrays (slower on small ones, for its extra calls): the
    # bits times the mask keep a value exactly (inf, nan, -0.0) where it is 1
    # and give +0.0 where it is 0, in one pass.
    return np.multiply(value.view(bits), keep).view(value.dtype)


def _select(keep: Any, a: Any, b: Any) -> Any:
    """`np.where(keep, a, b)` for float arrays of one dtype, by bit patterns
    (a where the mask is all ones, b where it is zero): np.where branches per
    element and is several times slower on masks that change often. `a` may be
    0-d (one value where `keep` holds)."""
    a, b = np.asarray(a), np.asarray(b)
    bits = _SAME_WIDTH.get(b.dtype.itemsize)
    if (
        bits is None
        or b.dtype.kind != "f"
        or a.dtype != b.dtype
        or (a.shape != b.shape and a.ndim)
        or np.shape(keep) != b.shape
        or b.size < _BITS_FROM
    ):
        return np.where(keep, a, b).astype(b.dtype, copy=False)
    a_bits, b_bits = a.view(bits), b.view(bits)
    out = np.bitwise_xor(a_bits, b_bits)
    np.multiply(out, keep, out=out)  # a ^ b where keep, else 0
    out ^= b_bits
    return out.view(b.dtype)


def _xlog(xp: Any, x: Any, y: Any, log: Any) -> Any:
    """x * log(y) with 0 where x is 0 unless y is nan (torch's xlogy, and
    xlog1py with log1p), in the standard's names; x or y may be a number."""
    like = y if isinstance(x, (int, float)) else x
    x, y = (
        v if hasattr(v, "dtype") else xp.asarray(v, dtype=like.dtype) for v in (x, y)
    )
    if x.dtype == xp.bool:  # a mask as the factor (xlog1py's backward)
        x = xp.astype(x, y.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        product = x * log(y)
    return xp.where(xp.isnan(y), math.nan, xp.where(x == 0, 0.0, product))


def _special() -> Any:
    """scipy.special, imported on first use so `import yamlgrad` does not load it."""
    import scipy.special

    return scipy.special


def _lapack(name: str, *arrays: np.ndarray) -> Any:
    """scipy's LAPACK routine `name` for the arrays' dtype (orgqr, potrs, ...)."""
    import scipy.linalg.lapack

    return scipy.linalg.lapack.get_lapack_funcs(name, arrays)
