"""PyTorch's checkpoint format (`torch.save`'s zip), read and written safely.

The file is a zip of uncompressed records under one folder (`archive/`):
`data.pkl`, a pickle of the object in which each tensor is a call of
`torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
hooks)` and each storage a persistent id `("storage", torch.FloatStorage, key,
location, numel)` naming the record `data/<key>` that holds its raw bytes; then
`version`, `byteorder`, `.format_version` and `.storage_alignment`.

Reading never runs the pickle's code: `WeightsUnpickler.find_class` answers
only the names PyTorch's `weights_only=True` allows by default (its tensor and
parameter rebuilders, storage types, dtypes, `torch.device`, `torch.Size`,
`OrderedDict` and a few builtins), each with yamlgrad's own object; any other
global raises PyTorch's "Weights only load failed" error before anything is
called, and so does an opcode that would build an object another way.

Writing uses pickle's pure-Python Pickler, whose dispatch table lets a torch
name be written as a GLOBAL opcode without torch being importable; each tensor
gets a storage of its own, stored contiguous, so real torch loads the file.
"""

from __future__ import annotations

import io
import os
import pickle
import zipfile
from collections import OrderedDict
from typing import IO, Any

import numpy as np

from yamlgrad.runtime import backend, dtypes
from yamlgrad.runtime.autograd.tensor import Size, Tensor
from yamlgrad.runtime.devices import device

# dtype name -> PyTorch's legacy storage type of that dtype.
STORAGE_TYPES = {
    "float16": "HalfStorage",
    "float32": "FloatStorage",
    "float64": "DoubleStorage",
    "int8": "CharStorage",
    "int16": "ShortStorage",
    "int32": "IntStorage",
    "int64": "LongStorage",
    "uint8": "ByteStorage",
    "bool": "BoolStorage",
    "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}
_STORAGE_DTYPES = {name: dtype for dtype, name in STORAGE_TYPES.items()}

ERR_WEIGHTS_ONLY = (
    "Weights only load failed. In PyTorch 2.6, we changed the default value of the "
    "`weights_only` argument in `torch.load` from `False` to `True`. Re-running "
    "`torch.load` with `weights_only` set to `False` will likely succeed, but it "
    "can result in arbitrary code execution. Do it only if you got the file from a "
    "trusted source.\n\n\n{reason}\n\nCheck the documentation of torch.load to "
    "learn more about types accepted by default with weights_only "
    "https://pytorch.org/docs/stable/generated/torch.load.html."
)
ERR_UNSUPPORTED_GLOBAL = (
    "Unsupported global: GLOBAL {module}.{name} was not an allowed global by "
    "default; yamlgrad never loads it (its loading would run code from the file)."
)


class _StorageType:
    """What `torch.FloatStorage` stands for inside a persistent id: a dtype."""

    def __init__(self, dtype: str) -> None:
        self.dtype = np.dtype(dtype)


def _rebuild_tensor_v2(
    storage: np.ndarray,
    storage_offset: int,
    size: tuple[int, ...],
    stride: tuple[int, ...],
    requires_grad: bool = False,
    backward_hooks: Any = None,
    metadata: Any = None,
) -> Tensor:
    item = storage.itemsize
    needed = storage_offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
    if any(n == 0 for n in size):
        array = np.zeros(size, dtype=storage.dtype)
    elif needed > storage.size or storage_offset < 0 or min(stride, default=0) < 0:
        raise pickle.UnpicklingError(
            "a tensor's size and stride reach outside its storage"
        )
    else:
        array = np.lib.stride_tricks.as_strided(
            storage[storage_offset:],
            shape=tuple(size),
            strides=tuple(s * item for s in stride),
        ).copy()
    tensor = Tensor._make(array)
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


def _rebuild_tensor(
    storage: np.ndarray, storage_offset: int, size: tuple, stride: tuple
) -> Tensor:
    return _rebuild_tensor_v2(storage, storage_offset, size, stride)


def _rebuild_parameter(
    data: Tensor, requires_grad: bool, backward_hooks: Any, state: Any = None
) -> Any:
    from yamlgrad.runtime.nn.parameter import Parameter

    return Parameter(data.detach(), requires_grad=requires_grad)


def _allowed_globals() -> dict[tuple[str, str], Any]:
    allowed: dict[tuple[str, str], Any] = {
        ("collections", "OrderedDict"): OrderedDict,
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
        ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
        ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
        ("torch", "device"): device,
        ("torch", "Size"): Size,
        ("builtins", "set"): set,
        ("builtins", "frozenset"): frozenset,
        ("builtins", "complex"): complex,
        ("builtins", "bytearray"): bytearray,
        ("builtins", "slice"): slice,
        ("torch", "strided"): dtypes.strided,
    }
    for name, storage in STORAGE_TYPES.items():
        allowed[("torch", storage)] = _StorageType(name)
    for d in dtypes.ALL:
        allowed[("torch", d.name)] = d
    for alias in ("half", "float", "double", "short", "int", "long"):
        allowed[("torch", alias)] = getattr(dtypes, alias)
    return allowed


_ALLOWED = _allowed_globals()


class WeightsUnpickler(pickle._Unpickler):  # type: ignore[name-defined]
    """An unpickler that builds only what `weights_only=True` allows."""

    def __init__(self, file: IO[bytes], storages: Any) -> None:
        super().__init__(file, encoding="utf-8")
        self._storages = storages

    def find_class(self, module: str, name: str) -> Any:
        try:
            return _ALLOWED[(module, name)]
        except KeyError:
            reason = ERR_UNSUPPORTED_GLOBAL.format(module=module, name=name)
            raise pickle.UnpicklingError(ERR_WEIGHTS_ONLY.format(reason=reason))

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            reason = f"Unsupported persistent id {pid!r}"
            raise pickle.UnpicklingError(ERR_WEIGHTS_ONLY.format(reason=reason))
        _, storage_type, key, _location, numel = pid
        if not isinstance(storage_type, _StorageType):
            reason = f"Unsupported storage type in {pid!r}"
            raise pickle.UnpicklingError(ERR_WEIGHTS_ONLY.format(reason=reason))
        return self._storages(str(key), storage_type.dtype, int(numel))

    # Opcodes that would build an object without a call through find_class
    # (`obj.__reduce_ex__` results of other kinds): refused outright.
    dispatch = dict(pickle._Unpickler.dispatch)  # type: ignore[attr-defined]

    def _refuse(self) -> None:
        raise pickle.UnpicklingError(
            ERR_WEIGHTS_ONLY.format(reason="Unsupported operand: building an object")
        )

    for _opcode in (pickle.INST, pickle.OBJ, pickle.EXT1, pickle.EXT2, pickle.EXT4):
        dispatch[_opcode[0]] = _refuse
    del _opcode

    def load_build(self) -> None:
        """BUILD only on an OrderedDict (a state dict's `_metadata`), as plain
        attribute state."""
        state = self.stack.pop()
        inst = self.stack[-1]
        if not isinstance(inst, OrderedDict) or not isinstance(
            state, (dict, type(None))
        ):
            self._refuse()
        if state:
            for key, value in state.items():
                if not isinstance(key, str):
                    self._refuse()
                object.__setattr__(inst, key, value)

    dispatch[pickle.BUILD[0]] = load_build


def is_torch_zip(names: list[str]) -> bool:
    return any(n.endswith("/data.pkl") or n == "data.pkl" for n in names)


def load_zip(archive: zipfile.ZipFile) -> Any:
    names = archive.namelist()
    pkl = next(n for n in names if n.endswith("data.pkl"))
    prefix = pkl[: -len("data.pkl")]
    order = "little"
    if prefix + "byteorder" in names:
        order = archive.read(prefix + "byteorder").decode().strip()
    loaded: dict[str, np.ndarray] = {}

    def storage(key: str, dtype: np.dtype, numel: int) -> np.ndarray:
        if key not in loaded:
            raw = archive.read(f"{prefix}data/{key}")
            typed = dtype.newbyteorder("<" if order == "little" else ">")
            array = np.frombuffer(raw, dtype=typed, count=numel)
            loaded[key] = array.astype(dtype, copy=True)
        return loaded[key]

    return WeightsUnpickler(io.BytesIO(archive.read(pkl)), storage).load()


# -- writing -----------------------------------------------------------------------


class _Global:
    """A name written as a GLOBAL opcode (`torch._utils _rebuild_tensor_v2`)."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def __call__(self, *args: Any) -> Any:
        """Never called: pickle only checks that a reduce's function is callable."""
        raise TypeError(f"{self.module}.{self.name} is a name in a pickle")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_ORDERED_DICT = _Global("collections", "OrderedDict")


class _Storage:
    __slots__ = ("array", "key")

    def __init__(self, array: np.ndarray, key: str) -> None:
        self.array = array
        self.key = key


class _TorchPickler(pickle._Pickler):  # type: ignore[name-defined]
    """Pickles tensors as PyTorch does, collecting their storages."""

    dispatch = dict(pickle._Pickler.dispatch)  # type: ignore[attr-defined]

    def __init__(self, file: IO[bytes]) -> None:
        super().__init__(file, protocol=2)
        self.storages: list[_Storage] = []

    def save_torch_global(self, obj: _Global) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_Global] = save_torch_global

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, _Storage):
            storage_type = _Global("torch", STORAGE_TYPES[obj.array.dtype.name])
            return ("storage", storage_type, obj.key, "cpu", obj.array.size)
        return None

    def save_dtype(self, obj: dtypes.dtype) -> None:
        self.save_torch_global(_Global("torch", obj.name))

    dispatch[dtypes.dtype] = save_dtype

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, device):
            return _Global("torch", "device"), (obj.type, obj.index)
        if isinstance(obj, Size):
            return _Global("torch", "Size"), (tuple(obj),)
        return NotImplemented

    def _reduce_tensor(self, tensor: Tensor) -> Any:
        from yamlgrad.runtime.nn.parameter import Parameter

        array = tensor._data
        if backend.is_foreign(array):
            array = backend.to_numpy(array)
        array = array if array.flags.c_contiguous else array.copy(order="C")
        if array.dtype.name not in STORAGE_TYPES:
            raise TypeError(f"save: no PyTorch storage type for dtype {array.dtype}")
        storage = _Storage(array.astype(array.dtype.newbyteorder("<")), "")
        storage.key = str(len(self.storages))
        self.storages.append(storage)
        stride = tuple(int(np.prod(array.shape[i + 1 :])) for i in range(array.ndim))
        hooks = _EmptyOrderedDict()
        rebuilt = (storage, 0, tuple(array.shape), stride, tensor.requires_grad, hooks)
        if isinstance(tensor, Parameter):
            inner = _Rebuilt(_REBUILD_TENSOR, rebuilt[:4] + (False, hooks))
            return _REBUILD_PARAMETER, (inner, tensor.requires_grad, hooks)
        return _REBUILD_TENSOR, rebuilt


class _EmptyOrderedDict:
    """`collections.OrderedDict()` in the pickle (a tensor's backward hooks)."""

    def __reduce__(self) -> Any:
        return _ORDERED_DICT, ()


class _Rebuilt:
    """A reduce call inside another's arguments (a Parameter's data tensor)."""

    def __init__(self, fn: _Global, args: tuple[Any, ...]) -> None:
        self.fn = fn
        self.args = args

    def __reduce__(self) -> Any:
        return self.fn, self.args


def save_zip(obj: Any, f: str | os.PathLike | IO[bytes]) -> None:
    """Write `obj` in `torch.save`'s format."""
    data = io.BytesIO()
    pickler = _TorchPickler(data)
    pickler.dump(_plain_containers(obj))
    name = "archive"
    if isinstance(f, (str, os.PathLike)):
        name = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    records: list[tuple[str, bytes]] = [
        ("data.pkl", data.getvalue()),
        (".format_version", b"1"),
        (".storage_alignment", b"64"),
        ("byteorder", b"little"),  # the storages are written little-endian
    ]
    records += [(f"data/{s.key}", s.array.tobytes()) for s in pickler.storages]
    records.append(("version", b"3\n"))
    target: Any = f
    if isinstance(f, (str, os.PathLike)):
        target = open(f, "wb")
    try:
        with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as archive:
            for record, payload in records:
                _write_aligned(archive, f"{name}/{record}", payload)
    finally:
        if target is not f:
            target.close()


def _write_aligned(archive: zipfile.ZipFile, name: str, payload: bytes) -> None:
    """A stored record whose data starts at a multiple of 64 bytes, as PyTorch
    writes them (its reader maps storages in place)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    header = 30 + len(name.encode("utf-8"))
    offset = archive.fp.tell() if archive.fp is not None else 0
    padding = (-(offset + header + 4)) % 64
    # An extra field of id 0xFFFF ("FB" padding, as PyTorch's writer uses).
    info.extra = b"FB" + padding.to_bytes(2, "little") + b"Z" * padding
    archive.writestr(info, payload)


def _plain_containers(obj: Any) -> Any:
    """Dict subclasses other than OrderedDict as dicts, so the pickle names only
    what a weights-only loader allows."""
    if isinstance(obj, OrderedDict):
        return OrderedDict((k, _plain_containers(v)) for k, v in obj.items())
    if isinstance(obj, dict):
        return {k: _plain_containers(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain_containers(v) for v in obj]
    if type(obj) is tuple:
        return tuple(_plain_containers(v) for v in obj)
    return obj
