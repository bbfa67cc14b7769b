"""yamlgrad's dtypes: thin names over numpy dtypes, printed as PyTorch prints its own.

`yg.float32` is a `dtype` whose `.np` is `numpy.dtype('float32')`. A Python float
makes a float32 tensor, as in PyTorch (`get_default_dtype`); an int makes int64; a
Python complex the complex dtype of the default float dtype (complex64 beside
float32, complex128 beside float64), as PyTorch's default complex dtype follows it.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np


class dtype:
    """A tensor element type: `yamlgrad.float32`, `yamlgrad.int64`, ..."""

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "itemsize")

    def __init__(self, name: str, np_dtype: np.dtype) -> None:
        self.name = name
        self.np = np_dtype
        self.is_floating_point = np_dtype.kind == "f"
        self.is_complex = np_dtype.kind == "c"
        self.itemsize = np_dtype.itemsize

    def to_real(self) -> dtype:
        """The real dtype of a complex one's parts (complex64 -> float32); a real
        dtype itself, as `torch.dtype.to_real`."""
        return _REAL_OF.get(self, self)

    def to_complex(self) -> dtype:
        """The complex dtype with this float dtype's parts (float64 -> complex128),
        as `torch.dtype.to_complex`; a complex dtype itself."""
        if self.is_complex:
            return self
        try:
            return _COMPLEX_OF[self]
        except KeyError:
            raise RuntimeError(
                f"Unsupported ScalarType {CPP_NAMES[self.name]}"
            ) from None

    def __repr__(self) -> str:
        return f"yamlgrad.{self.name}"

    def __reduce__(self) -> str:
        return self.name


float16 = dtype("float16", np.dtype(np.float16))
float32 = dtype("float32", np.dtype(np.float32))
float64 = dtype("float64", np.dtype(np.float64))
int8 = dtype("int8", np.dtype(np.int8))
int16 = dtype("int16", np.dtype(np.int16))
int32 = dtype("int32", np.dtype(np.int32))
int64 = dtype("int64", np.dtype(np.int64))
uint8 = dtype("uint8", np.dtype(np.uint8))
bool_ = dtype("bool", np.dtype(np.bool_))
complex64 = dtype("complex64", np.dtype(np.complex64))
complex128 = dtype("complex128", np.dtype(np.complex128))
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool_)
ALL += (complex64, complex128)
_REAL_OF = {complex64: float32, complex128: float64}
# numpy has no complex32: yamlgrad's complex dtypes start at complex64, and a
# float16 tensor's complex dtype is refused as PyTorch refuses ComplexHalf ops.
_COMPLEX_OF = {float32: complex64, float64: complex128}
# PyTorch's C++ scalar type names, as its errors print them.
CPP_NAMES = {
    "float16": "Half",
    "float32": "Float",
    "float64": "Double",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "uint8": "Byte",
    "bool": "Bool",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}
ERR_COMPLEX_HALF = (
    "not implemented for 'ComplexHalf': numpy has no complex type of two float16 "
    "parts, so yamlgrad's complex dtypes are complex64 and complex128"
)


class _ComplexHalf(dtype):
    """`complex32` (`chalf`): named, so programs that spell it import, and refused
    wherever a tensor would be made of it."""

    def __init__(self) -> None:
        self.name = "complex32"
        self.np = None  # type: ignore[assignment]
        self.is_floating_point = False
        self.is_complex = True
        self.itemsize = 4


complex32 = chalf = _ComplexHalf()
_BY_NUMPY: dict[np.dtype, dtype] = {d.np: d for d in ALL}

# What a Python float becomes (`get_default_dtype`); `set_default_dtype` changes
# it, so read it as `dtypes.DEFAULT_FLOAT` when it is needed, never bind it.
DEFAULT_FLOAT = float32

ERR_DEFAULT_DTYPE = "only floating-point types are supported as the default type"


def set_default_dtype(d: dtype) -> None:
    """The dtype of a float tensor made from Python floats, of the float factories
    (`zeros`, `rand`, ...) and of an integer tensor's result with a Python float
    or true division, as torch.set_default_dtype: a floating dtype only."""
    global DEFAULT_FLOAT
    if not isinstance(d, dtype):
        raise TypeError(f"invalid dtype object: {ERR_DEFAULT_DTYPE}")
    if not d.is_floating_point:
        raise TypeError(ERR_DEFAULT_DTYPE)
    DEFAULT_FLOAT = d


def get_default_dtype() -> dtype:
    """What a Python float becomes: float32 unless `set_default_dtype` said otherwise."""
    return DEFAULT_FLOAT


def default_complex() -> dtype:
    """What a Python complex becomes: the complex dtype of the default float dtype
    (complex64 beside float32, complex128 beside float64; complex64 beside
    float16, as PyTorch's complex32 is not a default)."""
    return complex128 if DEFAULT_FLOAT is float64 else complex64


class layout:
    """A tensor's memory layout, as `torch.layout`: yamlgrad has only `strided`
    (dense ndarrays), which a `Layout? layout` argument accepts besides None."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"yamlgrad.{self.name}"

    def __reduce__(self) -> str:
        return self.name


strided = layout("strided")


class memory_format:
    """How a tensor's elements are ordered in memory, as `torch.memory_format`:
    row-major (`contiguous_format`), the channels innermost (`channels_last`
    for 4-d, `channels_last_3d` for 5-d tensors), or the input's own order
    (`preserve_format`). Values never depend on it; yamlgrad honours it in the
    strides of the copies it asks for (clone, contiguous, to, *_like).
    `rank`: the only rank a channels-last format applies to (None: any)."""

    __slots__ = ("name", "rank")

    def __init__(self, name: str, rank: int | None = None) -> None:
        self.name, self.rank = name, rank

    def __repr__(self) -> str:
        return f"yamlgrad.{self.name}"

    def __reduce__(self) -> str:
        return self.name


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last", 4)
channels_last_3d = memory_format("channels_last_3d", 5)
MEMORY_FORMATS = {
    f.name: f
    for f in (contiguous_format, preserve_format, channels_last, channels_last_3d)
}


def memory_format_of(value: object) -> memory_format | None:
    """A `memory_format` argument as yamlgrad's: its own objects, the 0 the
    ops' schemas default to (contiguous_format), or a `torch.memory_format`
    known by its name (torch is not imported); None for anything else."""
    if isinstance(value, memory_format):
        return value
    if type(value) is builtins.int and value == 0:
        return contiguous_format
    if type(value).__name__ == "memory_format":
        return MEMORY_FORMATS.get(str(value).rpartition(".")[2])
    return None


def from_numpy(np_dtype: np.dtype) -> dtype:
    """The yamlgrad dtype of a numpy dtype, or of another array library's dtype
    by its name (array_api_strict's `array_api_strict.float64`); TypeError for
    one yamlgrad does not have."""
    if not isinstance(np_dtype, np.dtype):
        np_dtype = _numpy_dtype_named(str(np_dtype).rsplit(".", 1)[-1])
    try:
        return _BY_NUMPY[np_dtype]
    except KeyError:
        raise TypeError(f"yamlgrad has no dtype for numpy {np_dtype}") from None


def _numpy_dtype_named(name: str) -> Any:
    try:
        return np.dtype(name)
    except TypeError:
        return name  # not a numpy name: from_numpy's TypeError says so


def to_numpy(value: object) -> np.dtype:
    """A yamlgrad dtype, a numpy dtype or a numpy scalar type -> numpy dtype."""
    if isinstance(value, dtype):
        if value.np is None:
            raise RuntimeError(ERR_COMPLEX_HALF)
        return value.np
    np_dtype = np.dtype(value)  # type: ignore[call-overload]
    from_numpy(np_dtype)  # refuse what yamlgrad cannot represent
    return np_dtype


# -- finfo, iinfo, promote_types, can_cast ----------------------------------------


# (`float` and `int` are dtypes in this module: the builtins are spelled out.)


class finfo:
    """`torch.finfo(dtype)`: the limits of a floating dtype (numpy's finfo, with
    PyTorch's attribute names and repr)."""

    def __init__(self, type: dtype | None = None) -> None:  # noqa: A002
        type = DEFAULT_FLOAT if type is None else type
        # A complex dtype's limits are those of its parts (finfo(cfloat) is
        # float32's), as PyTorch's finfo gives them.
        type = type.to_real()
        if not type.is_floating_point:
            raise TypeError(
                "torch.finfo() requires a floating point input type. Use torch.iinfo "
                "to handle 'torch.finfo'"
            )
        info = np.finfo(type.np)
        self.bits = info.bits
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.resolution = 10.0**-info.precision
        self.dtype = type.name

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, "
            f"max={self.max:g}, eps={self.eps:g}, "
            f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


class iinfo:
    """`torch.iinfo(dtype)`: the limits of an integer dtype."""

    def __init__(self, type: dtype) -> None:  # noqa: A002
        if type.np.kind not in "iu":
            raise TypeError(
                "torch.iinfo() requires an integer input type. Use torch.finfo to "
                "handle 'torch.iinfo'"
            )
        info = np.iinfo(type.np)
        self.bits = info.bits
        self.max = builtins.int(info.max)
        self.min = builtins.int(info.min)
        self.dtype = type.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def _category(d: dtype) -> int:
    return {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}[d.np.kind]


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both cast to without loss (a float beats any integer, a
    complex any real: float64 with complex64 is complex128)."""
    return from_numpy(promote_numpy(type1.np, type2.np))


def promote_numpy(a: np.dtype, b: np.dtype) -> np.dtype:
    """promote_types over numpy dtypes. numpy lifts an integer with a float (or a
    complex) to a wider float; PyTorch keeps the floating operand's dtype."""
    if a.kind in "fc" and b.kind not in "fc":
        return a
    if b.kind in "fc" and a.kind not in "fc":
        return b
    return np.promote_types(a, b)


def can_cast(from_: dtype, to: dtype) -> bool:
    """PyTorch's casting rule: never to a lower kind (float to int, int to bool)."""
    return _category(from_) <= _category(to)
