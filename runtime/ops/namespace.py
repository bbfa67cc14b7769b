"""The array namespace a backward helper computes in: numpy's names, and PyTorch's.

A backward helper runs on ndarrays in a first-order backward and on Tensors under
`create_graph=True`. Rather than branch on `isinstance(x, Tensor)`, it asks

    xp = array_namespace(grad, x)
    return xp.transpose(xp.where(mask, grad, 0), 0, 1)

and is written once. A namespace offers two kinds of names:

- numpy's, with numpy's signatures (`sum(x, axis=, keepdims=)`, `where`,
  `permute_dims`), the seam for other array libraries (a backend is one more
  namespace object with these names);
- the PyTorch ops numpy has no counterpart for (or none with PyTorch's semantics),
  by the name and signature of the recorded op `ops.<name>` (`transpose(x, dim0,
  dim1)`, `slice_Tensor`, `gather`, `scatter_add`, `rsqrt`).

`NUMPY_NAMESPACE` hands out numpy's own function for a numpy name (fetched once,
then an attribute of the object: no wrapper, no Tensor, no dtype detour on the
performance-critical first-order path) and, for a PyTorch name, the kernel its
family registered with `register_numpy_kernels` at import (this module imports
no family, so no import cycle runs through it; a family's registration replaces
a numpy function of the same name, e.g. `transpose`). `TENSOR_NAMESPACE` hands out
`ops.<name>` for any name, with an adapter where numpy's signature differs from the
op's, or where a constant (an index, a mask) must become a Tensor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops


def static(function: Any) -> Any:
    """Mark a kernel helper that is a function of its arguments alone (shapes,
    dims and other numbers, no arrays, no state): yg.compile calls it once at
    trace time where every argument is a literal, and writes its result in
    place of the call (runtime/compile/codegen.py)."""
    function.static = True
    return function


def array_namespace(x: Any, *others: Any) -> Any:
    """`TENSOR_NAMESPACE` if any value is a Tensor, else `NUMPY_NAMESPACE`.

    The first value is tested before any loop: a helper of one operand (most of
    them) pays about one isinstance, which keeps the numpy path as fast as a
    branch written in the helper."""
    if isinstance(x, Tensor):
        return TENSOR_NAMESPACE
    if others:
        for value in others:
            if isinstance(value, Tensor):
                return TENSOR_NAMESPACE
    if type(x) is _ndarray:
        return NUMPY_NAMESPACE
    return _backend_namespace(x, *others)


def _backend_namespace(*values: Any) -> Any:
    """`NUMPY_NAMESPACE` for numpy arrays and numbers; another backend's
    namespace (runtime/backend.py) for its arrays, one object per backend."""
    xp = backend.array_namespace(*values)
    if xp is np:
        return NUMPY_NAMESPACE
    namespace = _BACKEND_NAMESPACES.get(xp)
    if namespace is None:
        namespace = _BACKEND_NAMESPACES[xp] = _BackendNamespace(xp)
    return namespace


class _NumpyNamespace:
    """numpy's functions by their names, and yamlgrad's kernels by PyTorch's.

    Both are plain attributes of the object once looked up, so `xp.sum` costs
    what `np.sum` does and `xp.sum is np.sum`."""

    def __getattr__(self, name: str) -> Any:
        # Only on a miss: a numpy name seen for the first time, kept.
        value = getattr(np, name)
        setattr(self, name, value)
        return value


NUMPY_NAMESPACE = _NumpyNamespace()
_ndarray = np.ndarray


class _BackendNamespace:
    """Another backend's namespace (Dask, CuPy, array_api_strict) for a helper:
    the standard's names from it; a PyTorch name (a registered kernel) or a
    name it lacks from `NUMPY_NAMESPACE`."""

    def __init__(self, xp: Any) -> None:
        self._xp = xp

    def __getattr__(self, name: str) -> Any:
        if name == "reshape":
            self.reshape = reshaped
            return reshaped
        standard = _STANDARD_NAMES.get(name, name)
        value = None if name in _REGISTERED else getattr(self._xp, standard, None)
        if value is None:
            value = getattr(NUMPY_NAMESPACE, name)
        setattr(self, name, value)
        return value


# numpy's names whose function the standard has under another name.
_STANDARD_NAMES = {"concatenate": "concat"}
_BACKEND_NAMESPACES: dict[Any, _BackendNamespace] = {}
_REGISTERED: set[str] = set()  # the PyTorch names register_numpy_kernels gave


def register_numpy_kernels(**kernels: Any) -> None:
    """Offer each kernel (an ndarray function with the PyTorch op's signature) in
    `NUMPY_NAMESPACE` under the op's name; called by a family at import."""
    for name, kernel in kernels.items():
        setattr(NUMPY_NAMESPACE, name, kernel)
        _REGISTERED.add(name)


def reshaped(x: Any, shape: Sequence[int]) -> Any:
    """The standard's reshape of another backend's array. Dask's only merges or
    splits neighbouring dims ((2, 3, 4) to (6, 4), not to (4, 6)); any other
    reshape is two that it does, through 1-d."""
    xp = backend.namespace_of(x)
    try:
        return xp.reshape(x, tuple(shape))
    except NotImplementedError:
        return xp.reshape(xp.reshape(x, (-1,)), tuple(shape))


def scanned(arrays: tuple[Any, ...], axis: int, combine: Any) -> tuple[Any, ...]:
    """The inclusive scan along `axis` of an associative `combine(earlier,
    later)` over tuples of arrays of one shape (a running extreme and where it
    was reached; a running logaddexp), for backends with no `ufunc.accumulate`:
    log2(n) steps, each combining every entry with the one `shift` before it,
    by slices and concatenation."""
    xp = backend.namespace_of(*arrays)
    n, shift = arrays[0].shape[axis], 1
    lead = (slice(None),) * axis
    while shift < n:
        earlier = tuple(a[lead + (slice(0, n - shift), ...)] for a in arrays)
        later = tuple(a[lead + (slice(shift, n), ...)] for a in arrays)
        combined = combine(earlier, later)
        arrays = tuple(
            xp.concat([a[lead + (slice(0, shift), ...)], c], axis=axis)
            for a, c in zip(arrays, combined)
        )
        shift *= 2
    return arrays


def take_along_axis(x: Any, indices: Any, axis: int) -> Any:
    """The standard's `take_along_axis` (2024.12) in the arrays' namespace, for
    the kernels' portable paths (a sort's values, a selection's entry). Dask's
    namespace lacks it: there `axis` becomes one chunk (a rechunk, lazy: each
    index may point anywhere along it) and numpy's runs block by block."""
    xp = backend.namespace_of(x, indices)
    take = getattr(xp, "take_along_axis", None)
    if take is not None:
        return take(x, indices, axis=axis)
    axis %= x.ndim
    x = x.rechunk({axis: -1})
    chunks = x.chunks[:axis] + ((indices.shape[axis],),) + x.chunks[axis + 1 :]
    return x.map_blocks(
        np.take_along_axis,
        indices.rechunk(chunks),
        axis=axis,
        chunks=chunks,
        dtype=x.dtype,
    )


def per_matrix(
    fn: Any, x: Any, *batched: Any, shape: tuple[int, int], **options: Any
) -> Any:
    """`fn(x, *batched)` for a numpy function of a batch of whole matrices (an
    inverse, a pseudo-inverse), on a Dask array, lazily: Dask's linalg takes one
    2-D matrix, so the last two axes become one chunk each (a rechunk) and `fn`
    runs on each block's matrices, giving matrices of `shape`. A `batched`
    array holds one value per matrix (x's batch shape); None passes as is, and
    `options` as keywords."""
    x = x.rechunk({x.ndim - 2: -1, x.ndim - 1: -1})
    args = [v if v is None else v[..., None, None] for v in batched]
    chunks = x.chunks[:-2] + ((shape[0],), (shape[1],))
    return x.map_blocks(fn, *args, chunks=chunks, dtype=x.dtype, **options)


def constant_tensor(x: Any) -> Any:
    """An ndarray (an index, a mask) as a Tensor outside any graph; a Tensor as is.

    The Tensor side's adapters take an index or a mask as either kind; as a
    constant it has no derivative, as PyTorch's integer and bool tensors have
    none."""
    return x if isinstance(x, Tensor) else Tensor._make(np.asarray(x))


def _axes(axis: int | Sequence[int]) -> tuple[int, ...]:
    return (axis,) if isinstance(axis, int) else tuple(axis)


class _TensorNamespace:
    """The recorded ops: numpy's names with numpy's signatures (the methods
    below), any other name as `ops.<name>` itself."""

    def __getattr__(self, name: str) -> Any:
        return getattr(ops, name)

    @staticmethod
    def sum(
        x: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False
    ) -> Any:
        if axis is None:
            return ops.sum(x)
        return ops.sum(x, _axes(axis), keepdims)

    @staticmethod
    def mean(x: Any, axis: Sequence[int], keepdims: bool = False) -> Any:
        axes = _axes(axis)
        return ops.mean(x, axes, keepdims) if axes else x

    @staticmethod
    def prod(x: Any, axis: int, keepdims: bool = False) -> Any:
        return ops.prod(x, axis, keepdims)

    @staticmethod
    def cumsum(x: Any, axis: int) -> Any:
        return ops.cumsum(x, axis)

    @staticmethod
    def cumprod(x: Any, axis: int) -> Any:
        return ops.cumprod(x, axis)

    @staticmethod
    def where(condition: Any, x: Any, y: Any) -> Any:
        # An ndarray condition is a mask, a constant (never differentiated), as
        # numpy takes any array-like.
        return ops.where(constant_tensor(condition), x, y)

    @staticmethod
    def maximum(x1: Any, x2: Any) -> Any:
        # Against a number, PyTorch's clamp_min (ClampMinBackward0).
        if isinstance(x2, (int, float)):
            return ops.clamp_min(x1, x2)
        return ops.maximum(x1, x2)

    @staticmethod
    def reshape(x: Any, shape: Sequence[int]) -> Any:
        return ops.reshape(x, shape)

    @staticmethod
    def permute_dims(x: Any, axes: Sequence[int]) -> Any:
        return ops.permute(x, axes)

    @staticmethod
    def stack(arrays: Sequence[Any], axis: int = 0) -> Any:
        return ops.stack(list(arrays), axis)

    @staticmethod
    def div(a: Any, b: Any, rounding_mode: str | None = None) -> Any:
        return ops.div(a, b, rounding_mode=rounding_mode)

    @staticmethod
    def concatenate(arrays: Sequence[Any], axis: int = 0) -> Any:
        return ops.cat(list(arrays), axis)

    concat = concatenate  # the standard's name for it

    @staticmethod
    def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        return ops.diagonal(x, offset, axis1, axis2)

    # PyTorch names whose index or mask argument is a constant, taken as an
    # ndarray or a Tensor on either side.

    @staticmethod
    def gather(x: Any, dim: int, index: Any) -> Any:
        return ops.gather(x, dim, constant_tensor(index))

    @staticmethod
    def index_select(x: Any, dim: int, index: Any) -> Any:
        return ops.index_select(x, dim, constant_tensor(index))

    @staticmethod
    def scatter_add(x: Any, dim: int, index: Any, src: Any) -> Any:
        return ops.scatter_add(x, dim, constant_tensor(index), src)

    @staticmethod
    def index_add(x: Any, dim: int, index: Any, source: Any, alpha: Any = 1) -> Any:
        return ops.index_add(x, dim, constant_tensor(index), source, alpha=alpha)

    @staticmethod
    def scatter_value(x: Any, dim: int, index: Any, value: float) -> Any:
        return ops.scatter_value(x, dim, constant_tensor(index), value)

    @staticmethod
    def masked_fill_Scalar(x: Any, mask: Any, value: float) -> Any:
        return ops.masked_fill_Scalar(x, constant_tensor(mask), value)

    @staticmethod
    def convolution(input: Any, weight: Any, bias: Any, *args: Any) -> Any:
        # Either operand may be a saved ndarray next to a Tensor gradient.
        input, weight = constant_tensor(input), constant_tensor(weight)
        return ops.convolution(input, weight, bias, *args)

    @staticmethod
    def slice_backward(
        grad: Any,
        sizes: Sequence[int],
        dim: int,
        start: int | None,
        end: int | None,
        step: int,
    ) -> Any:
        # The op takes concrete bounds, as PyTorch's slice_backward does.
        size = sizes[dim % max(len(sizes), 1)]
        start, end, _ = slice(start, end, step).indices(size)
        return ops.slice_backward(grad, sizes, dim, start, end, step)


TENSOR_NAMESPACE = _TensorNamespace()
