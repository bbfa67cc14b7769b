"""Array backends: which array library holds a tensor's data, and its namespace.

A Tensor holds a numpy array, or any array of the array API standard: a Dask
array (lazy, chunked, out of core or on a cluster), a CuPy array (a GPU), an
`array_api_strict` array (the standard's reference implementation). A forward
wrapper asks for its inputs' namespace once, as

    xp = np if type(self_) in NUMPY and type(other_) in NUMPY else xp_of(self_, other_)

so the numpy path pays a set lookup per argument and nothing else; every other array
reaches `array_namespace`, which finds the namespace once per array type (a
cache) and refuses arrays of two backends with PyTorch's same-device error.
An op whose entries are all numpy-only (`backends: [numpy]` in derivatives.yaml)
is refused on any other backend by `numpy_only`, with the entry's reason, when
`tensor_arg` unpacks such an array for it.

Dask's arrays are lazy: nothing here computes one. `is_lazy` tells the runtime
where a check that reads values (a bound, a NaN) must be skipped, and `compute`
evaluates several lazy arrays in one pass over their shared graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_ndarray = np.ndarray
# The namespace of each non-numpy array type seen, and its backend's name.
_NAMESPACES: dict[type, Any] = {}
_NAMES: dict[type, str] = {}
# Kernel results that are numpy values, not arrays: a numpy scalar, a Python number.
_SCALARS = (np.generic, int, float, bool, complex)
# The numpy scalar types (np.float64, np.int64, ...): what numpy's ufuncs and
# operators return for 0-d operands. One set lookup tells a caller on a hot path
# (Tensor._make) that `np.asarray` makes the 0-d array `adopt` would, without the
# call to `adopt`.
NUMPY_SCALARS = frozenset(np.sctypeDict.values())
# The types of the tensor arguments a wrapper's numpy path sees: an ndarray, a
# Python number given for a Tensor, None for an absent Tensor?. One set lookup
# per argument decides `xp = np` without a call.
NUMPY = frozenset({_ndarray, float, int, bool, type(None)})

ERR_DEVICES = (
    "Expected all tensors to be on the same device, but found at least two "
    "devices, {0} and {1}!"
)
ERR_NUMPY_ONLY = (
    "{op}: not implemented for the {backend} backend: this op runs on {backends} "
    "arrays only ({reason}). Call .numpy() on its inputs first."
)


def _backend_name(array: Any) -> str:
    """'numpy', 'dask', 'cupy', 'array_api_strict', ...: the array's top module."""
    kind = type(array)
    name = _NAMES.get(kind)
    if name is None:
        name = "numpy" if kind is _ndarray else kind.__module__.split(".")[0]
        _NAMES[kind] = name
    return name


def _is_array(value: Any) -> bool:
    return value is not None and not isinstance(value, _SCALARS + (list, tuple))


def _namespace_of_type(array: Any) -> Any:
    kind = type(array)
    xp = _NAMESPACES.get(kind)
    if xp is None:
        if issubclass(kind, _ndarray):
            xp = np
        else:
            import array_api_compat

            xp = array_api_compat.array_namespace(array)
            if is_lazy(array):
                xp = _LazyNamespace(xp)
        _NAMESPACES[kind] = xp
    return xp


class _LazyNamespace:
    """Dask's namespace (array-api-compat's), with `broadcast_to` chunking the
    dims it creates or stretches by Dask's chunk size (`array.chunk-size`)
    where Dask's own makes each one chunk, of whatever size. A mean's gradient
    broadcast over the rows of a 40 GiB X is then computed chunk by chunk, not
    as one array of 8 bytes per row."""

    def __init__(self, xp: Any) -> None:
        self._xp = xp

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._xp, name)
        setattr(self, name, value)
        return value

    def broadcast_to(self, x: Any, shape: tuple[int, ...]) -> Any:
        from dask.array.core import normalize_chunks

        shape = tuple(shape)
        lead = len(shape) - x.ndim
        if lead < 0:
            return self._xp.broadcast_to(x, shape)  # (its error)
        chunks = ("auto",) * lead + tuple(
            "auto" if size == 1 and want != 1 else chunk
            for chunk, size, want in zip(x.chunks, x.shape, shape[lead:])
        )
        chunks = normalize_chunks(chunks, shape, dtype=x.dtype)
        return self._xp.broadcast_to(x, shape, chunks=chunks)


def device_name(array: Any) -> str:
    """The device an array lives on, as the same-device error names it: 'cpu'
    for numpy, 'cuda:N' for CuPy, the backend's name for the others."""
    backend = _backend_name(array)
    if backend == "numpy":
        return "cpu"
    if backend == "cupy":
        return f"cuda:{array.device.id}"
    return backend


def array_namespace(*values: Any) -> Any:
    """The namespace of the arrays among `values` (Python numbers, None and
    lists are looked through; a list's arrays count). Arrays of two backends
    raise PyTorch's same-device error."""
    first = None
    for value in values:
        items = value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            if not _is_array(item):
                continue
            if first is None:
                first = item
            elif device_name(item) != device_name(first):
                raise RuntimeError(
                    ERR_DEVICES.format(device_name(first), device_name(item))
                )
    return np if first is None else _namespace_of_type(first)


def namespace_of(x: Any, *others: Any) -> Any:
    """A kernel's namespace: numpy for numpy arrays, Python numbers and None (a
    set lookup per value, the numpy path's whole cost), else `array_namespace`
    of every value."""
    if type(x) in NUMPY:
        for other in others:
            if type(other) not in NUMPY:
                return array_namespace(x, *others)
        return np
    return array_namespace(x, *others)


xp_of = array_namespace  # the generated wrappers' name for it


# Why each numpy-only overload runs on numpy only, by its name with the overload
# (`max.dim`; filled by the generated wrappers' module from derivatives.yaml's
# `numpy_only_reason:`).
NUMPY_ONLY_REASONS: dict[str, str] = {}
# The ops among them that run on Dask too, block by block (`backends: [numpy,
# dask]`), by their names with the overload (filled by the same module).
DASK_BLOCKWISE: set[str] = set()


def numpy_only(op: str, *values: Any) -> Any:
    """numpy, when every array among `values` is a numpy array; Dask's (or
    CuPy's) namespace for Dask (or CuPy) arrays given to an op of
    `DASK_BLOCKWISE`; else the error of an op that runs on numpy (and Dask and
    CuPy) only, with its reason."""
    xp = array_namespace(*values)
    if xp is not np:
        first = next(
            item
            for value in values
            for item in (value if isinstance(value, (list, tuple)) else (value,))
            if _is_array(item)
        )
        blockwise_too = op in DASK_BLOCKWISE
        if blockwise_too and (is_lazy(first) or _backend_name(first) == "cupy"):
            return xp
        raise NotImplementedError(
            ERR_NUMPY_ONLY.format(
                op=op,
                backend=_backend_name(first),
                backends="numpy, Dask and CuPy" if blockwise_too else "numpy",
                reason=NUMPY_ONLY_REASONS.get(op),
            )
        )
    return np


# numpy's one-letter kinds of the array API's dtype kinds (`xp.isdtype`), in the
# order they are asked of a foreign dtype; numpy's own dtypes answer `.kind`.
_KIND_NAMES = (
    ("f", "real floating"),
    ("c", "complex floating"),
    ("i", "signed integer"),
    ("u", "unsigned integer"),
    ("b", "bool"),
)
# The kind of each foreign dtype seen (array_api_strict's, PyTorch's, ...).
_FOREIGN_KINDS: dict[Any, str] = {}


def dtype_kind(dtype: Any) -> str:
    """numpy's kind letter of any backend's dtype: 'f' (real floating), 'c'
    (complex), 'i', 'u' (integers), 'b' (bool), or numpy's others ('S', 'U',
    'O', ...). A numpy dtype (numpy's, Dask's, CuPy's) answers `.kind`, as
    cheap as reading it; another library's dtype is asked once, through its
    namespace's `isdtype`, and kept."""
    try:
        return dtype.kind
    except AttributeError:
        kind = _FOREIGN_KINDS.get(dtype)
        if kind is None:
            kind = _FOREIGN_KINDS[dtype] = _foreign_kind(dtype)
        return kind


def _foreign_kind(dtype: Any) -> str:
    import importlib

    module = importlib.import_module(type(dtype).__module__.split(".")[0])
    if not hasattr(module, "isdtype"):  # PyTorch: array-api-compat's wrapper
        import array_api_compat

        module = array_api_compat.array_namespace(module.empty(0, dtype=dtype))
    for letter, name in _KIND_NAMES:
        if module.isdtype(dtype, name):
            return letter
    raise TypeError(f"{dtype}: not a dtype of the array API standard")


def dtype_in(xp: Any, dtype: Any) -> Any:
    """A dtype as namespace `xp` names it: a numpy dtype (what the wrappers
    carry) by its name in `xp`; another backend's dtype as it is."""
    if xp is np or not isinstance(dtype, (np.dtype, type)):
        return dtype
    return getattr(xp, np.dtype(dtype).name)


def numpy_dtype(array: Any) -> np.dtype:
    """An array's dtype as numpy's: numpy's, Dask's and CuPy's are numpy
    dtypes; another library's is read by its name."""
    dtype = array.dtype
    if isinstance(dtype, np.dtype):
        return dtype
    return np.dtype(str(dtype).rsplit(".", 1)[-1].rstrip("'>"))


def blockwise(fn: Any, *args: Any, dtype: Any = None) -> Any:
    """`fn(*args)` for an element-wise numpy function (a scipy.special ufunc, a
    numpy kernel): called as is on numpy arrays and numbers; on Dask arrays,
    called chunk by chunk, lazily (the operands broadcast and their chunks align
    as in any element-wise op), giving `dtype` (by default the arrays' result
    type); on CuPy arrays, `cupy_special(fn)` on the GPU, its result in
    `dtype`. The one place a numpy-only function reaches another backend."""
    arrays = [a for a in args if type(a) is not _ndarray and _is_array(a)]
    if not arrays:
        return fn(*args)
    if dtype is None:
        dtype = np.result_type(*(a.dtype for a in arrays))
    if is_lazy(arrays[0]):
        from dask.array.core import elemwise

        return elemwise(fn, *args, dtype=dtype)
    if _backend_name(arrays[0]) == "cupy":
        return cupy_special(fn)(*args).astype(dtype, copy=False)
    return fn(*args)


ERR_NO_CUPY_SPECIAL = (
    "not implemented for the cupy backend: this op's kernel computes {name}, "
    "which cupyx.scipy.special does not have. Call .numpy() on its inputs first."
)


def cupy_special(fn: Any) -> Any:
    """The function of cupyx.scipy.special that computes what `fn` does on
    numpy arrays, found by `fn`'s name: a scipy.special ufunc's own name
    (`gammaln`), or that of the scipy.special function a kernel named
    `_<name>` stands for (`_polygamma`). NotImplementedError, naming CuPy,
    where cupyx has none."""
    import functools
    import importlib

    special = importlib.import_module("cupyx.scipy.special")
    while isinstance(fn, functools.partial):
        fn = fn.func
    name = getattr(fn, "__name__", type(fn).__name__).lstrip("_")
    found = getattr(special, name, None)
    if found is None:
        raise NotImplementedError(ERR_NO_CUPY_SPECIAL.format(name=name))
    return found


def adopt(value: Any) -> Any:
    """A kernel's result as a Tensor's data: an array of any backend as is; a
    numpy scalar or a Python value as a numpy array."""
    if isinstance(value, _SCALARS) or isinstance(value, (list, tuple)):
        return np.asarray(value)
    if hasattr(type(value), "__array_namespace__") or hasattr(type(value), "dask"):
        return value
    return np.asarray(value)


def copy(array: Any) -> Any:
    """A copy of `array`, of its own backend (a numpy scalar: a 0-d ndarray)."""
    if type(array) is _ndarray or isinstance(array, _SCALARS):
        return np.array(array, copy=True)
    return _namespace_of_type(array).asarray(array, copy=True)


def is_foreign(value: Any) -> bool:
    """An array of another backend than numpy (Dask, CuPy, array_api_strict):
    the engine carries it as it carries an ndarray, without a Tensor."""
    return (
        type(value) is not _ndarray
        and not isinstance(value, _SCALARS)
        and (
            hasattr(type(value), "__array_namespace__") or hasattr(type(value), "dask")
        )
    )


def is_numpy(array: Any) -> bool:
    return type(array) is _ndarray or _backend_name(array) == "numpy"


def is_lazy(array: Any) -> bool:
    """An array whose values are not computed until asked (Dask's): checks that
    read values (bounds, NaN) are skipped for it."""
    return type(array) is not _ndarray and hasattr(type(array), "dask")


def to_numpy(array: Any) -> np.ndarray:
    """The array's values as a numpy array: a lazy one computed, a GPU one
    copied to the host (the explicit transfer of `Tensor.numpy()`)."""
    if type(array) is _ndarray:
        return array
    backend = _backend_name(array)
    if backend == "cupy":
        return array.get()
    if is_lazy(array):
        return np.asarray(array.compute())
    return np.from_dlpack(array)


def like(value: np.ndarray, template: Any) -> Any:
    """A numpy array moved to `template`'s backend: a Dask array of the same
    chunks (holding the values, no graph behind it), a CuPy array."""
    if is_lazy(template):
        import dask.array as da

        same = tuple(value.shape) == tuple(template.shape)
        return da.from_array(value, chunks=template.chunks if same else "auto")
    return _namespace_of_type(template).asarray(value)


def compute(*arrays: Any) -> tuple[Any, ...]:
    """Every lazy array among `arrays` computed in one pass (shared chunks of
    their graph read once); the others as they are."""
    lazy = [i for i, a in enumerate(arrays) if is_lazy(a)]
    if not lazy:
        return tuple(arrays)
    import dask

    values = dask.compute(*(arrays[i] for i in lazy))
    out = list(arrays)
    for i, value in zip(lazy, values):
        out[i] = np.asarray(value)
    return tuple(out)


def persist(*arrays: Any) -> tuple[Any, ...]:
    """Lazy arrays with their chunks computed and kept (in memory or on the
    cluster's workers), so the graph behind them is dropped; others as is."""
    lazy = [i for i, a in enumerate(arrays) if is_lazy(a)]
    if not lazy:
        return tuple(arrays)
    import dask

    values = dask.persist(*(arrays[i] for i in lazy))
    out = list(arrays)
    for i, value in zip(lazy, values):
        out[i] = value
    return tuple(out)


def _checked_block(block: Any, failed: Any, fail: Any) -> Any:
    if failed(block):
        fail()
    return block


def check_when_computed(array: Any, failed: Any, fail: Any) -> Any:
    """A lazy array with a check of its values that runs on each chunk as it is
    computed: `fail()` (which raises) where `failed(chunk)`. A data-dependent
    check on a lazy backend, deferred rather than computing the array now."""
    return array.map_blocks(_checked_block, failed, fail, dtype=array.dtype)
