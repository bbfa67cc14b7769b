"""Tensor methods written in Python, as PyTorch's `_tensor.py` writes some of its
own: the device methods (`to`, `cuda`, `cpu`, `device`), the `new_*` factories,
`view_as` and its siblings, `type`, and the numpy keyword spellings of the
reductions. The facade installs them on Tensor; each records what the op it
calls records (`view_as` is `view`, ViewBackward0; `type_as` is `to`,
ToCopyBackward0).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from yamlgrad.generated import VariableType
from yamlgrad.runtime import array_backends, backend, devices, dtypes, factories
from yamlgrad.runtime.autograd.tensor import Size, Tensor
from yamlgrad.runtime.wrappers.binding import numpy_keywords
from yamlgrad.runtime.wrappers.kernel_errors import broadcast_pair

__all__ = [
    "equal",
    "allclose",
    "isclose",
    "numel",
    "is_floating_point",
    "is_complex",
    "is_conj",
    "is_neg",
    "is_inference",
    "get_device",
    "detach",
    "detach_",
    "is_tensor",
    "meshgrid",
    "broadcast_shapes",
    "broadcast_tensors",
    "broadcast_shapes",
    "broadcast_tensors",
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "LongTensor",
    "IntTensor",
    "ShortTensor",
    "CharTensor",
    "ByteTensor",
    "BoolTensor",
]

# -- devices ---------------------------------------------------------------------------


def parse_to(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, Any, bool, dtypes.memory_format]:
    """`to`'s overloads: (dtype), (device, dtype), (tensor), each with
    non_blocking and copy after, as positionals or keywords, and the
    keyword-only memory_format."""
    dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
    flags = [kwargs.pop("non_blocking", False), kwargs.pop("copy", False)]
    layout = memory_format_of(kwargs.pop("memory_format", None), "to")
    if kwargs:
        raise TypeError(
            f"to() got an unexpected keyword argument '{next(iter(kwargs))}'"
        )
    bools = []
    for arg in args:
        if isinstance(arg, Tensor):
            dtype, device = arg.dtype, arg.device
        elif isinstance(arg, dtypes.dtype):
            dtype = arg
        elif isinstance(arg, bool):
            bools.append(arg)
        elif arg is not None:
            device = arg
    flags[: len(bools)] = bools
    return dtype, device, bool(flags[1]), layout


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """`x.to(dtype)`, `x.to(device, dtype)`, `x.to(other)`: `x` itself when
    nothing changes (unless `copy=True`), else a recorded copy (ToCopyBackward0).

    >>> yg.ones(2).to("cpu", yg.float64)
    tensor([1., 1.], dtype=yamlgrad.float64)
    """
    dtype, device, copy, layout = parse_to(args, dict(kwargs))
    if device is not None and array_backends.moves_to(device):
        self = array_backends.to_backend(self, device)
        device = None
    if device is not None:
        devices.usable(device)
    if dtype is None or self.dtype.np == dtypes.to_numpy(dtype):
        laid_out = layout is dtypes.preserve_format or is_contiguous(
            self, memory_format=layout
        )
        if not copy and laid_out:
            return self
        dtype = self.dtype
    return VariableType._to_copy(self, dtype=dtype, memory_format=layout)


def to_dtype_method(target: dtypes.dtype) -> Any:
    """`x.double()`, `x.float()`, ...: `to(target)`, with the keyword-only
    memory_format PyTorch's methods take."""

    def convert(self: Tensor, *, memory_format: Any = dtypes.preserve_format) -> Tensor:
        return to(self, target, memory_format=memory_format)

    convert.__name__ = convert.__qualname__ = target.name
    return convert


def cuda(self: Tensor, device: Any = None, non_blocking: bool = False) -> Tensor:
    """A CuPy array on the GPU; PyTorch's error where CuPy is absent."""
    return self.to("cuda" if device is None else device)


def cpu(self: Tensor, memory_format: Any = None) -> Tensor:
    """The tensor itself when it holds a numpy array; else its values as one."""
    if backend.is_foreign(self._data):
        return array_backends.to_backend(self, "cpu")
    return self


def device(self: Tensor) -> devices.device:
    """The CPU for a numpy array; `cuda:N` for CuPy's; the backend's name
    (`dask`) for another array library's."""
    if type(self._data) is np.ndarray:
        return devices.CPU
    return _BackendDevice(backend.device_name(self._data))


class _BackendDevice(devices.device):
    """A device PyTorch has no type for: where another backend keeps its arrays."""

    def __init__(self, name: str) -> None:
        self.type, _, index = name.partition(":")
        self.index = int(index) if index else None


def get_device(self: Tensor) -> int:
    """-1, PyTorch's answer for a CPU tensor."""
    return -1


# -- memory layout ----------------------------------------------------------------------


def memory_format_of(value: Any, op: str) -> dtypes.memory_format:
    """A `memory_format` argument as yamlgrad's (None: preserve_format), or
    PyTorch's TypeError naming `op`."""
    if value is None:
        return dtypes.preserve_format
    found = dtypes.memory_format_of(value)
    if found is None or isinstance(value, bool):
        raise TypeError(
            f"{op}(): argument 'memory_format' must be torch.memory_format, "
            f"not {type(value).__name__}"
        )
    return found


def is_contiguous(self: Tensor, *args: Any, memory_format: Any = 0) -> bool:
    """PyTorch's is_contiguous: whether the elements lie in memory without gaps,
    in row-major order (contiguous_format, preserve_format) or with the channels
    innermost (channels_last for 4-d, channels_last_3d for 5-d tensors). The
    stride of a dimension of size 1 does not matter; an empty tensor is
    contiguous in row-major order.

    >>> yg.ones(2, 3).t().is_contiguous()
    False
    """
    if args:  # memory_format is keyword-only (PyTorch's message)
        given = f"{len(args)} was" if len(args) == 1 else f"{len(args)} were"
        raise TypeError(
            f"is_contiguous() takes 0 positional arguments but {given} given"
        )
    rank = memory_format_of(memory_format, "is_contiguous").rank
    data = self._data
    if rank is None:  # row-major (contiguous_format, preserve_format)
        return bool(data.flags.c_contiguous)
    if data.ndim != rank:
        return False
    # the channels innermost, then the spatial dims last to first, the batch
    order = (1, *range(rank - 1, 1, -1), 0)
    expected = data.itemsize  # numpy's strides count bytes
    for d in order:
        size = data.shape[d]
        if size != 1:
            if data.strides[d] != expected:
                return False
            expected *= size
    return True


# -- dtypes ----------------------------------------------------------------------------

# PyTorch's legacy tensor type names, as `x.type()` prints them.
_TYPE_NAMES = {
    "float16": "HalfTensor",
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "int8": "CharTensor",
    "int16": "ShortTensor",
    "int32": "IntTensor",
    "int64": "LongTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}


def type_(self: Tensor, dtype: Any = None, non_blocking: bool = False) -> Any:
    """`x.type()` is the type name ('yamlgrad.FloatTensor'); `x.type(dtype)` (a
    dtype, or such a name with PyTorch's prefix or this package's) casts."""
    if dtype is None:
        return f"yamlgrad.{_TYPE_NAMES[self.dtype.name]}"
    if isinstance(dtype, tensortype):
        dtype = dtype.dtype
    elif isinstance(dtype, str):
        prefix, _, name = dtype.rpartition(".")
        by_name = {v: k for k, v in _TYPE_NAMES.items()}
        if prefix not in ("torch", "yamlgrad") or name not in by_name:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = getattr(dtypes, by_name[name].replace("bool", "bool_"))
    return to(self, dtype)


def type_as(self: Tensor, other: Tensor) -> Tensor:
    """`self.to(other.dtype)`."""
    return to(self, other.dtype)


# -- new_* -----------------------------------------------------------------------------


def _like(self: Tensor, dtype: Any) -> Any:
    return self.dtype if dtype is None else dtype


def new_tensor(
    self: Tensor,
    data: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """A new leaf holding a copy of `data`, in this tensor's dtype unless given."""
    return factories.tensor(
        data, dtype=_like(self, dtype), device=device, requires_grad=requires_grad
    )


def _new_filled(make: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def method(
        self: Tensor,
        *size: Any,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
    ) -> Tensor:
        return make(
            *size, dtype=_like(self, dtype), device=device, requires_grad=requires_grad
        )

    method.__name__ = f"new_{make.__name__}"
    method.__doc__ = f"`{make.__name__}` in this tensor's dtype unless one is given."
    return method


new_zeros = _new_filled(factories.zeros)
new_ones = _new_filled(factories.ones)
new_empty = _new_filled(factories.empty)


def new_full(
    self: Tensor,
    size: Any,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """`full` in this tensor's dtype unless one is given."""
    return factories.full(
        size,
        fill_value,
        dtype=_like(self, dtype),
        device=device,
        requires_grad=requires_grad,
    )


def new(self: Tensor, *args: Any, device: Any = None) -> Tensor:
    """The legacy constructor, in this tensor's dtype: `x.new(2, 3)` and
    `x.new(size)` are uninitialized, `x.new([1, 2])` holds the data, `x.new()` is
    empty."""
    devices.usable(device)
    if not args:
        return factories.empty(0, dtype=self.dtype)
    first = args[0]
    sizes = isinstance(first, Size) or all(
        isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args
    )
    if sizes:
        return factories.empty(*args, dtype=self.dtype)
    if len(args) > 1:
        raise TypeError("new(): expected a size or one sequence of data")
    return factories.tensor(first, dtype=self.dtype)


# -- shapes of another tensor -------------------------------------------------------------


def view_as(self: Tensor, other: Tensor) -> Tensor:
    """`self.view(other.size())` (ViewBackward0)."""
    return VariableType.view(self, tuple(other.shape))


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    """`self.reshape(other.size())`."""
    return VariableType.reshape(self, tuple(other.shape))


def where(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    """`x.where(condition, y)` is `where(condition, x, y)`."""
    return VariableType.where(condition, self, other)


def polygamma(self: Tensor, n: int) -> Tensor:
    """`x.polygamma(n)` is `polygamma(n, x)` (the schema's `self` comes second)."""
    return VariableType.polygamma(n, self)


# -- Tensor's own methods as functions, as torch offers them ------------------------


def numel(input: Tensor) -> int:
    return input.numel()


def is_floating_point(input: Tensor) -> bool:
    return input.is_floating_point()


def is_complex(input: Tensor) -> bool:
    return input.is_complex()


def is_conj(input: Tensor) -> bool:
    """False: conjugation is eager, so no tensor holds an unresolved conjugate
    (runtime/ops/complex_numbers.py)."""
    return False


def is_neg(input: Tensor) -> bool:
    """False: no tensor holds an unresolved negation either."""
    return False


def _part(name: str) -> Any:
    """`x.real` / `x.imag`: the view torch.real / torch.imag gives; assigning
    to it copies the value into that part, as PyTorch does."""
    view = getattr(VariableType, name)

    def set_part(self: Tensor, value: Any) -> None:
        view(self).copy_(value)

    return property(view, set_part)


def is_inference(input: Tensor) -> bool:
    return input.is_inference()


def detach(input: Tensor) -> Tensor:
    return input.detach()


def detach_(input: Tensor) -> Tensor:
    return input.detach_()


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


def meshgrid(*tensors: Any, indexing: str = "ij") -> tuple[Tensor, ...]:
    """Coordinate grids of 1-D tensors: each viewed and expanded to the grid
    (ViewBackward0, ExpandBackward0); `indexing="xy"` swaps the first two dims."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
            f"{indexing}"
        )
    swap = indexing == "xy" and len(tensors) >= 2
    order = [1, 0, *range(2, len(tensors))] if swap else list(range(len(tensors)))
    grid = [tensors[i].numel() for i in order]
    out = []
    for i, t in enumerate(tensors):
        shape = [1] * len(tensors)
        shape[order.index(i)] = -1
        out.append(VariableType.expand(VariableType.view(t, shape), grid))
    return tuple(out)


def broadcast_shapes(*shapes: Any) -> Size:
    """The shape the given shapes broadcast to (an int is a 1-d shape), as
    torch.broadcast_shapes: `broadcast_shapes((2, 1), (3,))` is Size([2, 3])."""
    result: list[int] = []
    for index, shape in enumerate(shapes):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        result = [1] * (len(shape) - len(result)) + result
        for k in range(1, len(shape) + 1):
            size, expected = shape[-k], result[-k]
            if expected == 1:
                result[-k] = size
            elif size not in (1, expected):
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {size} at {-k}! "
                    f"Mismatching argument at index {index} had {shape}; but "
                    f"expected shape should be broadcastable to {result}"
                )
    return Size(result)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """Each tensor expanded to the shapes' broadcast (ExpandBackward0), as
    torch.broadcast_tensors; one of that shape already is returned as it is."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape: tuple[int, ...] = ()
    for t in tensors:
        shape = broadcast_pair(shape, tuple(t.shape))
    return tuple(
        t if tuple(t.shape) == shape else VariableType.expand(t, shape) for t in tensors
    )


class tensortype(type):
    """The type of PyTorch's legacy tensor types (`torch.FloatTensor`, ...):
    each is a constructor (`FloatTensor(2, 3)`, `FloatTensor([1, 2])`), a
    dtype for `x.type(FloatTensor)`, and a type for `isinstance(x,
    FloatTensor)`, true of a Tensor of its dtype."""

    dtype: dtypes.dtype

    def __call__(cls, *args: Any) -> Tensor:  # type: ignore[override]
        if len(args) == 1 and isinstance(args[0], np.ndarray):
            return Tensor._make(args[0].astype(cls.dtype.np))
        return Tensor._make(Tensor(*args)._data.astype(cls.dtype.np, copy=False))

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor) and instance.dtype is cls.dtype

    def __repr__(cls) -> str:
        return f"<class 'yamlgrad.{cls.__name__}'>"


def _legacy_type(dtype: dtypes.dtype) -> tensortype:
    name = _TYPE_NAMES[dtype.name]
    doc = f"PyTorch's legacy tensor type: `Tensor(...)` in {dtype.name}."
    return tensortype(name, (), {"dtype": dtype, "__doc__": doc})


FloatTensor = _legacy_type(dtypes.float32)
DoubleTensor = _legacy_type(dtypes.float64)
HalfTensor = _legacy_type(dtypes.float16)
LongTensor = _legacy_type(dtypes.int64)
IntTensor = _legacy_type(dtypes.int32)
ShortTensor = _legacy_type(dtypes.int16)
CharTensor = _legacy_type(dtypes.int8)
ByteTensor = _legacy_type(dtypes.uint8)
BoolTensor = _legacy_type(dtypes.bool_)


def einsum(*args: Any) -> Tensor:
    """`einsum("ij,jk->ik", a, b)`, with the operands as one list too, or in the
    sublist form: `einsum(a, [0, 1], b, [1, 2], [0, 2])` (`...` as Ellipsis)."""
    if len(args) < 1:
        raise TypeError(
            "einsum(): must specify the equation string and at least one operand, or at least one operand and its subscripts list"
        )
    if isinstance(args[0], Tensor):
        equation, operands = _sublist_equation(args)
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return VariableType.einsum(equation, list(operands))


def _sublist_equation(args: tuple[Any, ...]) -> tuple[str, tuple[Tensor, ...]]:
    """The sublist form as an equation: subscript i is the i-th letter of A-Z
    then a-z (so an implicit output sorts as the numbers do)."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

    def spell(sublist: Any) -> str:
        out = []
        for s in sublist:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, int) and 0 <= s < len(letters):
                out.append(letters[s])
            else:
                raise ValueError(
                    "einsum(): expected subscript to be within the range [0, 52), "
                    f"but got {s}"
                )
        return "".join(out)

    pairs = args[: len(args) - len(args) % 2]
    operands = tuple(pairs[0::2])
    equation = ",".join(spell(sub) for sub in pairs[1::2])
    if len(args) % 2:
        equation += "->" + spell(args[-1])
    return equation, operands


def with_unbiased(fn: Callable[..., Any]) -> Callable[..., Any]:
    """std/var also taking PyTorch's `unbiased` (positionally too: `x.std(0,
    False)`, `x.std(False)`), as `correction=1` or `0`."""

    def op(input: Any, *args: Any, **kwargs: Any) -> Any:
        if args and isinstance(args[0], bool):
            kwargs["unbiased"], args = args[0], args[1:]
        elif len(args) >= 2 and isinstance(args[1], bool):
            kwargs["unbiased"] = args[1]
            if len(args) > 2:
                kwargs["keepdim"] = args[2]
            args = args[:1]
        if "unbiased" in kwargs:
            kwargs["correction"] = 1 if kwargs.pop("unbiased") else 0
        return fn(input, *args, **kwargs)

    op.__name__, op.__qualname__, op.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    op.__wrapped__ = fn  # type: ignore[attr-defined]
    return op


# -- comparisons that are not ops: bools, or masks outside any graph -----------------


def _pair(input: Tensor, other: Any) -> tuple[np.ndarray, np.ndarray]:
    theirs = other._data if isinstance(other, Tensor) else np.asarray(other)
    return input._data, theirs


def equal(input: Tensor, other: Tensor) -> bool:
    """Whether both have the same shape and elements (`torch.equal`)."""
    ours, theirs = _pair(input, other)
    return ours.shape == theirs.shape and bool(np.array_equal(ours, theirs))


def isclose(
    input: Tensor,
    other: Any,
    rtol: float = 1e-05,
    atol: float = 1e-08,
    equal_nan: bool = False,
) -> Tensor:
    """|input - other| <= atol + rtol * |other|, elementwise, as a bool tensor."""
    ours, theirs = _pair(input, other)
    return Tensor._make(np.isclose(ours, theirs, rtol, atol, equal_nan))


def allclose(
    input: Tensor,
    other: Any,
    rtol: float = 1e-05,
    atol: float = 1e-08,
    equal_nan: bool = False,
) -> bool:
    """Whether `isclose` holds everywhere."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


# -- numpy's keyword spellings -------------------------------------------------------------


def with_numpy_keywords(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` also taking `axis=` and `keepdims=` (PyTorch's parser takes both)."""

    def op(*args: Any, **kwargs: Any) -> Any:
        if kwargs and ("keepdims" in kwargs or "axis" in kwargs):
            kwargs = numpy_keywords(kwargs)
        return fn(*args, **kwargs)

    op.__name__, op.__qualname__, op.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    op.__wrapped__ = fn  # type: ignore[attr-defined]
    return op


def takes_keepdim(fn: Callable[..., Any]) -> bool:
    """Whether a generated op of one overload is a reduction with `keepdim` (a
    dispatcher of several overloads renames the keywords itself)."""
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "keepdim" in parameters


METHODS: dict[str, Callable[..., Any]] = {
    "to": to,
    "cuda": cuda,
    "cpu": cpu,
    "is_contiguous": is_contiguous,
    "get_device": get_device,
    "type": type_,
    "type_as": type_as,
    "new": new,
    "new_tensor": new_tensor,
    "new_zeros": new_zeros,
    "new_ones": new_ones,
    "new_empty": new_empty,
    "new_full": new_full,
    "view_as": view_as,
    "reshape_as": reshape_as,
    "where": where,
    "polygamma": polygamma,
    "equal": equal,
    "isclose": isclose,
    "allclose": allclose,
    "is_conj": is_conj,
    "is_neg": is_neg,
}
PROPERTIES: dict[str, Callable[[Tensor], Any]] = {
    "device": device,
    "is_cuda": lambda self: False,
    "is_cpu": lambda self: True,
    "is_meta": lambda self: False,
}
# Properties with a setter.
PARTS: dict[str, Any] = {"real": _part("real"), "imag": _part("imag")}
