"""Tensor factories: `yg.tensor`, `yg.zeros`, `yg.arange`, `yg.randn`, ... (torch's).

Signatures, defaults and dtype inference are PyTorch's: a size is varargs or one
tuple (`zeros(2, 3)` or `zeros((2, 3))`); Python floats make float32 tensors and
ints int64; `arange` is int64 when every bound is an int and float32 otherwise;
`full` takes the dtype of its fill value; `requires_grad=True` on an integer
dtype raises PyTorch's error. A factory's result is a leaf.

Random numbers come from the generators of runtime/generator.py: the same seed
gives the same numbers (not torch's numbers), `manual_seed` resets the default
generator, and a `Generator` passed as `generator=` draws from its own stream.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from yamlgrad.runtime import backend, devices, dtypes
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.generator import Generator, default_generator
from yamlgrad.runtime.ops.common import _dense
from yamlgrad.runtime.ops.shapes import laid_out
from yamlgrad.runtime.wrappers.randomness import (
    different_batch,
    draw_rng,
    wrap_batched,
)

__all__ = [
    "tensor",
    "as_tensor",
    "from_numpy",
    "zeros",
    "ones",
    "full",
    "empty",
    "empty_strided",
    "scalar_tensor",
    "eye",
    "arange",
    "linspace",
    "logspace",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand_like",
    "randn_like",
    "randint_like",
    "rand",
    "randn",
    "randint",
    "randperm",
    "manual_seed",
    "initial_seed",
    "seed",
    "Generator",
    "default_generator",
    "get_rng_state",
    "set_rng_state",
]

# -- generators (runtime/generator.py) ---------------------------------------------


def manual_seed(seed: int) -> Generator:
    """Reseed the default generator, as `torch.manual_seed`; returns it."""
    return default_generator.manual_seed(seed)


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state, as `torch.get_rng_state`."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    default_generator.set_state(new_state)


def seed() -> int:
    return default_generator.seed()


_rng = draw_rng


def _random_leaf(
    generator: Generator | None,
    shape: tuple[int, ...],
    draw: Any,
    requires_grad: bool,
    device: Any,
) -> Tensor:
    """A leaf of `draw(rng, shape)`; inside a vmap with randomness='different',
    one draw per sample (the batch dim in front, hidden by a BatchedTensor)."""
    batch = different_batch()
    rng = draw_rng(generator, per_sample=batch is not None)
    if batch is None:
        return _leaf(draw(rng, shape), requires_grad, device)
    level, size = batch
    leaf = _leaf(draw(rng, (size, *shape)), requires_grad, device)
    return wrap_batched[0](leaf, level)


# -- helpers -------------------------------------------------------------------------


def _leaf(array: np.ndarray, requires_grad: bool, device: Any = None) -> Tensor:
    """A new leaf around `array` on the CPU (the only device; another raises
    PyTorch's error); requires_grad refuses integer dtypes (Tensor's)."""
    devices.usable(device)
    out = Tensor._make(array)
    if requires_grad:
        out.requires_grad = True
    return out


def _size(size: tuple[Any, ...], keyword: Any = None) -> tuple[int, ...]:
    """`(2, 3)` from `zeros(2, 3)`, `zeros((2, 3))`, `zeros([2, 3])` or `size=`."""
    if keyword is not None:
        if size:
            raise TypeError("size given both positionally and as size=")
        size = (keyword,)
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    try:
        shape = tuple(operator.index(s) for s in size)
    except TypeError:
        raise TypeError(f"size must be a sequence of ints, got {size!r}") from None
    if any(s < 0 for s in shape):
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {min(shape)}: "
            f"{list(shape)}"
        )
    return shape


def _np_dtype(dtype: Any, default: dtypes.dtype | None = None) -> np.dtype:
    """`dtype` as numpy's; None is `default`, else the default float dtype."""
    if dtype is not None:
        return dtypes.to_numpy(dtype)
    return (default or dtypes.DEFAULT_FLOAT).np


def _scalar_dtype(value: Any) -> dtypes.dtype:
    """The dtype PyTorch gives a tensor made from one Python number."""
    if isinstance(value, (bool, np.bool_)):
        return dtypes.bool_
    if isinstance(value, (int, np.integer)):
        return dtypes.int64
    if isinstance(value, (complex, np.complexfloating)):
        return dtypes.default_complex()
    return dtypes.DEFAULT_FLOAT


def _floating(np_dtype: np.dtype, name: str) -> None:
    """PyTorch's error for a floating-only kernel called on an integer dtype."""
    if np_dtype.kind not in "fc":
        type_name = dtypes.CPP_NAMES[dtypes.from_numpy(np_dtype).name]
        raise NotImplementedError(f"\"{name}\" not implemented for '{type_name}'")


# -- from data -------------------------------------------------------------------------


def _default_dtype(data: Any, array: np.ndarray) -> np.dtype:
    """PyTorch's inference: Python floats -> float32 (complexes -> complex64, the
    default float dtype's complex); numpy keeps its own dtype."""
    if isinstance(data, (np.ndarray, np.generic)):
        return array.dtype
    if array.dtype == np.float64:
        return dtypes.DEFAULT_FLOAT.np
    if array.dtype == np.complex128:
        return dtypes.default_complex().np
    return array.dtype


def tensor(
    data: Any,
    *,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
) -> Tensor:
    """A new tensor holding a copy of `data` (a number, nested lists, or an ndarray).

    >>> yg.tensor([1.0, 2.0], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    """
    if isinstance(data, Tensor):
        data = data._data
    array = np.array(data, copy=True)
    if type(dtype) is dtypes.dtype:  # (spelled out: a scalar model makes many)
        np_dtype = dtype.np
    elif dtype is not None:
        np_dtype = dtypes.to_numpy(dtype)
    else:
        np_dtype = _default_dtype(data, array)
    if array.dtype is not np_dtype and array.dtype != np_dtype:
        array = array.astype(np_dtype)
    return _leaf(array, requires_grad, device)


def as_tensor(
    data: Any, dtype: dtypes.dtype | None = None, device: Any = None
) -> Tensor:
    """Like `tensor`, but shares memory with an ndarray or Tensor when it can;
    another backend's array (Dask, CuPy) is kept as it is (a Dask one lazy)."""
    if backend.is_foreign(data):
        data = Tensor._make(data)
    else:
        devices.usable(device)
    if isinstance(data, Tensor) and (
        dtype is None or data._data.dtype == dtypes.to_numpy(dtype)
    ):
        return data
    if isinstance(data, np.ndarray) and (
        dtype is None or data.dtype == dtypes.to_numpy(dtype)
    ):
        return Tensor._make(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with `array`: writes to either show in the other."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dtypes.from_numpy(array.dtype)
    return Tensor._make(array)


# -- filled --------------------------------------------------------------------------


def zeros(
    *size: Any,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
    **kwargs: Any,
) -> Tensor:
    """A tensor of zeros: `yg.zeros(2, 3)` or `yg.zeros((2, 3))` (float32)."""
    shape = _size(size, _size_keyword(kwargs))
    return _leaf(np.zeros(shape, dtype=_np_dtype(dtype)), requires_grad, device)


def ones(
    *size: Any,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
    **kwargs: Any,
) -> Tensor:
    """A tensor of ones: `yg.ones(2, 3)` or `yg.ones((2, 3))` (float32)."""
    shape = _size(size, _size_keyword(kwargs))
    return _leaf(np.ones(shape, dtype=_np_dtype(dtype)), requires_grad, device)


def empty(
    *size: Any,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
    **kwargs: Any,
) -> Tensor:
    """An uninitialized tensor, as `torch.empty`: read it only after writing it."""
    shape = _size(size, _size_keyword(kwargs))
    return _leaf(np.empty(shape, dtype=_np_dtype(dtype)), requires_grad, device)


def empty_strided(
    size: Sequence[int],
    stride: Sequence[int],
    *,
    dtype: dtypes.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """An uninitialized tensor with the given strides (in elements) over a
    storage just large enough, as `torch.empty_strided`.

    >>> yg.empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    shape, steps = _size((size,)), tuple(operator.index(s) for s in stride)
    if len(shape) != len(steps):
        raise RuntimeError(
            f"dimensionality of sizes ({len(shape)}) must match dimensionality of "
            f"strides ({len(steps)})"
        )
    if any(s < 0 for s in steps):
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={list(shape)} and "
            f"strides={list(steps)}"
        )
    np_dtype = _np_dtype(dtype)
    count = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, steps))
    storage = np.empty(count, dtype=np_dtype)
    array = np.lib.stride_tricks.as_strided(
        storage, shape, tuple(s * np_dtype.itemsize for s in steps)
    )
    return _leaf(array, requires_grad, device)


def scalar_tensor(
    s: Any,
    *,
    dtype: dtypes.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """A 0-d tensor of `s`, in the default float dtype unless one is given
    (`scalar_tensor(3)` is tensor(3.))."""
    if isinstance(s, Tensor):
        s = s.item()
    np_dtype = _np_dtype(dtype)
    if isinstance(s, complex) and np_dtype.kind not in "cb":
        # PyTorch converts through the C++ type of the dtype (half through double)
        c_type = _C_TYPES.get(np_dtype.name, "double")
        raise RuntimeError(
            f"value cannot be converted to type {c_type} without overflow"
        )
    return _leaf(np.asarray(s, dtype=np_dtype), requires_grad, device)


_C_TYPES = {
    "float32": "float",
    "int64": "int64_t",
    "int32": "int",
    "int16": "int16_t",
    "int8": "int8_t",
    "uint8": "uint8_t",
}


def _size_keyword(kwargs: dict[str, Any]) -> Any:
    """The `size=` keyword, which torch accepts in place of the varargs."""
    unknown = set(kwargs) - {"size"}
    if unknown:
        raise TypeError(f"unexpected keyword argument {sorted(unknown)[0]!r}")
    return kwargs.get("size")


def full(
    size: Sequence[int],
    fill_value: Any,
    *,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
) -> Tensor:
    """A tensor of `fill_value`, dtype from the value: `yg.full((2, 3), 7)` is int64."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    np_dtype = _np_dtype(dtype, _scalar_dtype(fill_value))
    array = np.full(_size((size,)), fill_value, dtype=np_dtype)
    return _leaf(array, requires_grad, device)


def eye(
    n: int,
    m: int | None = None,
    *,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
) -> Tensor:
    """The n x m identity (m defaults to n)."""
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    if n < 0 or m < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {min(n, m)}")
    return _leaf(np.eye(n, m, dtype=_np_dtype(dtype)), requires_grad, device)


def _is_int(value: Any) -> bool:
    if isinstance(value, Tensor):
        return backend.dtype_kind(value._data.dtype) in "iub"
    return isinstance(value, (int, np.integer, bool, np.bool_))


def _number(value: Any) -> float | int:
    return value.item() if isinstance(value, Tensor) else value


def arange(
    start: Any,
    end: Any = None,
    step: Any = 1,
    *,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
) -> Tensor:
    """`[start, end)` by `step`: `arange(5)`, `arange(1, 4)`, `arange(0, 1, 0.25)`.

    int64 when start, end and step are all ints; float32 when one is a float.
    """
    if end is None:
        start, end = 0, start
    if dtype is None:
        all_ints = all(_is_int(v) for v in (start, end, step))
        dtype = dtypes.int64 if all_ints else dtypes.DEFAULT_FLOAT
    start, end, step = _number(start), _number(end), _number(step)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    # PyTorch: size = ceil((end - start) / step), values start + i * step, both
    # computed in double before the cast.
    length = math.ceil((float(end) - float(start)) / float(step))
    np_dtype = dtypes.to_numpy(dtype)
    if np_dtype.kind in "iu" and all(_is_int(v) for v in (start, end, step)):
        values = start + step * np.arange(length, dtype=np.int64)
    else:
        values = float(start) + float(step) * np.arange(length, dtype=np.float64)
    return _leaf(values.astype(np_dtype), requires_grad, device)


def linspace(
    start: Any,
    end: Any,
    steps: int,
    *,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
) -> Tensor:
    """`steps` evenly spaced values from start to end inclusive (float32 default).

    As PyTorch: the first half counts up from start, the second down from end.
    """
    steps = operator.index(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = float(_number(start)), float(_number(end))
    np_dtype = _np_dtype(dtype)
    i = np.arange(steps, dtype=np.float64)
    if steps == 1:
        values = np.full(1, start)
    else:
        step = (end - start) / (steps - 1)
        halfway = steps // 2
        values = np.where(i < halfway, start + step * i, end - step * (steps - 1 - i))
    if np_dtype.kind in "iu":
        values = np.trunc(values)
    return _leaf(values.astype(np_dtype), requires_grad, device)


def logspace(
    start: Any,
    end: Any,
    steps: int,
    base: float = 10.0,
    *,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
) -> Tensor:
    """`steps` values from base**start to base**end, evenly spaced in exponent."""
    exponents = linspace(start, end, steps, dtype=dtypes.float64)._data
    values = np.power(float(base), exponents)
    return _leaf(values.astype(_np_dtype(dtype)), requires_grad, device)


# -- *_like ------------------------------------------------------------------------------


def _like_dtype(input: Tensor, dtype: dtypes.dtype | None) -> np.dtype:
    return dtypes.to_numpy(dtype) if dtype is not None else input.dtype.np


def _like_leaf(
    input: Tensor,
    array: np.ndarray,
    requires_grad: bool,
    device: Any,
    memory_format: Any = None,
) -> Tensor:
    """A *_like factory's leaf of `array`, on `input`'s backend, laid out in
    `memory_format`: preserve_format (None) takes the strides of a dense
    `input`, as PyTorch's *_like do."""
    layout = dtypes.memory_format_of(memory_format)
    if memory_format is None or layout is dtypes.preserve_format:
        data = input._data
        if type(data) is np.ndarray and not data.flags.c_contiguous and _dense(data):
            shaped = np.empty_like(data, dtype=array.dtype)
            shaped[...] = array
            array = shaped
    elif layout is None:
        raise TypeError(
            "argument 'memory_format' must be torch.memory_format, "
            f"not {type(memory_format).__name__}"
        )
    else:
        array = laid_out(array, layout)
    return _on_backend_of(input, _leaf(array, requires_grad, device), device)


def _on_backend_of(input: Tensor, out: Tensor, device: Any) -> Tensor:
    """A *_like factory's result moved to `input`'s backend (Dask, CuPy, ...),
    as in PyTorch a *_like result is on its input's device, unless one is
    named."""
    if device is None and backend.is_foreign(input._data):
        out._data = backend.like(out._data, input._data)
    return out


def zeros_like(
    input: Tensor,
    *,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
    memory_format: Any = None,
) -> Tensor:
    """Zeros with `input`'s shape (and dtype, unless given)."""
    array = np.zeros(input.shape, _like_dtype(input, dtype))
    return _like_leaf(input, array, requires_grad, device, memory_format)


def ones_like(
    input: Tensor,
    *,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
    memory_format: Any = None,
) -> Tensor:
    """Ones with `input`'s shape (and dtype, unless given)."""
    array = np.ones(input.shape, _like_dtype(input, dtype))
    return _like_leaf(input, array, requires_grad, device, memory_format)


def empty_like(
    input: Tensor,
    *,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
    memory_format: Any = None,
) -> Tensor:
    """An uninitialized tensor with `input`'s shape (and dtype, unless given)."""
    array = np.empty(input.shape, _like_dtype(input, dtype))
    return _like_leaf(input, array, requires_grad, device, memory_format)


def full_like(
    input: Tensor,
    fill_value: Any,
    *,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
    memory_format: Any = None,
) -> Tensor:
    """`fill_value` with `input`'s shape and dtype (not the value's, unlike full)."""
    array = np.full(input.shape, fill_value, _like_dtype(input, dtype))
    return _like_leaf(input, array, requires_grad, device, memory_format)


# -- random --------------------------------------------------------------------------


def _uniform(
    rng: np.random.Generator, shape: tuple[int, ...], np_dtype: np.dtype
) -> np.ndarray:
    _floating(np_dtype, "check_uniform_bounds")
    if np_dtype.kind == "c":  # real and imaginary parts each uniform in [0, 1)
        return _complex_draw(_uniform, rng, shape, np_dtype, 1.0)
    draw_dtype = np_dtype if np_dtype.itemsize >= 4 else np.dtype(np.float32)
    return rng.random(shape, dtype=draw_dtype).astype(np_dtype, copy=False)


def _complex_draw(
    draw: Any,
    rng: np.random.Generator,
    shape: tuple[int, ...],
    np_dtype: np.dtype,
    scale: float,
) -> np.ndarray:
    """A complex draw as interleaved real draws (real, imaginary, real, ...)."""
    part = dtypes.from_numpy(np_dtype).to_real().np
    pairs = draw(rng, (*shape, 2), part)
    if scale != 1.0:
        pairs *= part.type(scale)
    return pairs.view(np_dtype).reshape(shape)


def _normal(
    rng: np.random.Generator, shape: tuple[int, ...], np_dtype: np.dtype
) -> np.ndarray:
    _floating(np_dtype, "normal_kernel_cpu")
    if np_dtype.kind == "c":  # E|z|^2 = 1: each part has variance 1/2, as PyTorch's
        return _complex_draw(_normal, rng, shape, np_dtype, 0.5**0.5)
    draw_dtype = np_dtype if np_dtype.itemsize >= 4 else np.dtype(np.float32)
    return rng.standard_normal(shape, dtype=draw_dtype).astype(np_dtype, copy=False)


def rand(
    *size: Any,
    generator: Generator | None = None,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
    **kwargs: Any,
) -> Tensor:
    """Uniform samples from [0, 1): `yg.rand(2, 3)`."""
    shape = _size(size, _size_keyword(kwargs))
    np_dtype = _np_dtype(dtype)
    draw = functools.partial(_uniform, np_dtype=np_dtype)
    return _random_leaf(generator, shape, draw, requires_grad, device)


def randn(
    *size: Any,
    generator: Generator | None = None,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
    **kwargs: Any,
) -> Tensor:
    """Standard normal samples: `yg.randn(2, 3)`."""
    shape = _size(size, _size_keyword(kwargs))
    draw = functools.partial(_normal, np_dtype=_np_dtype(dtype))
    return _random_leaf(generator, shape, draw, requires_grad, device)


def rand_like(
    input: Tensor,
    *,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
    generator: Generator | None = None,
) -> Tensor:
    """`rand` with `input`'s shape and dtype."""
    draw = functools.partial(_uniform, np_dtype=_like_dtype(input, dtype))
    out = _random_leaf(generator, tuple(input.shape), draw, requires_grad, device)
    return _on_backend_of(input, out, device)


def randn_like(
    input: Tensor,
    *,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
    generator: Generator | None = None,
) -> Tensor:
    """`randn` with `input`'s shape and dtype."""
    draw = functools.partial(_normal, np_dtype=_like_dtype(input, dtype))
    out = _random_leaf(generator, tuple(input.shape), draw, requires_grad, device)
    return _on_backend_of(input, out, device)


def _randint_array(
    rng: np.random.Generator,
    low: int,
    high: int,
    shape: tuple[int, ...],
    np_dtype: np.dtype,
) -> np.ndarray:
    low, high = operator.index(low), operator.index(high)
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} "
            f">= to={high}"
        )
    return rng.integers(low, high, shape, dtype=np.int64).astype(np_dtype)


def randint(
    *args: Any,
    generator: Generator | None = None,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
    **kwargs: Any,
) -> Tensor:
    """Integers uniform in [low, high): `randint(high, size)` or
    `randint(low, high, size)`; int64 unless a dtype is given.

    >>> yg.randint(3, 10, (2, 2))
    """
    names = ("low", "high", "size") if len(args) != 2 else ("high", "size")
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in ("low", "high", "size") or key in bound:
            raise TypeError(f"randint() got an unexpected keyword argument {key!r}")
        bound[key] = value
    if "high" not in bound or "size" not in bound:
        raise TypeError("randint() missing required arguments 'high' and 'size'")
    shape = _size((bound["size"],))
    np_dtype = _np_dtype(dtype, dtypes.int64)
    low, high = bound.get("low", 0), bound["high"]

    def draw(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return _randint_array(rng, low, high, shape, np_dtype)

    return _random_leaf(generator, shape, draw, requires_grad, device)


def randint_like(
    input: Tensor,
    low: int = 0,
    high: int | None = None,
    *,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
    generator: Generator | None = None,
) -> Tensor:
    """`randint_like(x, high)` or `randint_like(x, low, high)`: x's shape and dtype."""
    if high is None:
        low, high = 0, low
    np_dtype = _like_dtype(input, dtype)

    def draw(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return _randint_array(rng, low, high, shape, np_dtype)

    out = _random_leaf(generator, tuple(input.shape), draw, requires_grad, device)
    return _on_backend_of(input, out, device)


def randperm(
    n: int,
    *,
    generator: Generator | None = None,
    dtype: dtypes.dtype | None = None,
    requires_grad: bool = False,
    device: Any = None,
) -> Tensor:
    """A random permutation of 0 .. n-1 (int64 unless a dtype is given)."""
    n = operator.index(n)
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got {n}")
    np_dtype = _np_dtype(dtype, dtypes.int64)

    def draw(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        rows = [rng.permutation(n) for _ in range(math.prod(shape[:-1]))]
        return np.reshape(rows, shape).astype(np_dtype)

    return _random_leaf(generator, (n,), draw, requires_grad, device)
