"""`yg.save` / `yg.load`: PyTorch's checkpoint format, or a numpy `.npz`.

`save` writes `torch.save`'s zip (runtime/torch_format.py), which real torch
loads, unless the path ends in `.npz` or the object holds numpy arrays (which
PyTorch's format keeps only as a pickle of numpy's own): then the `.npz`
below. `load` reads both, and neither way runs code from the file.

The `.npz` holds one array per tensor (`a0`, `a1`, ...) and `structure`, a JSON text
that describes the nesting: dicts (their keys, strings or integers), lists, tuples,
numbers, strings, booleans and None, with tensors and arrays as references to the
arrays. Loading reads the arrays with `allow_pickle=False` and parses the JSON:
nothing in the file is ever unpickled or evaluated.

>>> yg.save(model.state_dict(), "model.npz")
>>> model.load_state_dict(yg.load("model.npz"))
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections import OrderedDict
from typing import IO, Any

import numpy as np

from yamlgrad.runtime import backend, torch_format
from yamlgrad.runtime.autograd.tensor import Tensor

__all__ = ["save", "load"]

_FORMAT = "yamlgrad.save/1"
_SCALARS = (bool, int, float, str, type(None))


def _encode(obj: Any, path: str, arrays: dict[str, np.ndarray]) -> Any:
    """The JSON description of `obj`, adding its arrays to `arrays`."""
    if isinstance(obj, Tensor) or isinstance(obj, np.ndarray):
        array = obj._data if isinstance(obj, Tensor) else obj
        if backend.is_foreign(array):  # stored as its values (computed, copied)
            array = backend.to_numpy(array)
        if array.dtype.hasobject:
            raise TypeError(f"yg.save cannot store an object array at {path}")
        name = f"a{len(arrays)}"
        arrays[name] = array
        return {"tensor" if isinstance(obj, Tensor) else "ndarray": name}
    if isinstance(obj, np.generic):
        return _encode(obj.item(), path, arrays)
    if isinstance(obj, float) and not np.isfinite(obj):
        return {"float": repr(obj)}
    if isinstance(obj, _SCALARS):
        return obj
    if isinstance(obj, dict):
        items = []
        for key, value in obj.items():
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise TypeError(
                    f"yg.save can only store dict keys that are str or int, got "
                    f"{type(key).__name__} at {path}"
                )
            items.append([key, _encode(value, f"{path}[{key!r}]", arrays)])
        kind = "odict" if isinstance(obj, OrderedDict) else "dict"
        return {kind: items}
    if isinstance(obj, (list, tuple)):
        values = [_encode(v, f"{path}[{i}]", arrays) for i, v in enumerate(obj)]
        return {"tuple" if isinstance(obj, tuple) else "list": values}
    raise TypeError(
        f"yg.save cannot store an object of type {type(obj).__name__} at {path}: "
        "only tensors, ndarrays, numbers, strings, None and dicts/lists/tuples of them"
    )


def save(
    obj: Any,
    f: str | os.PathLike | IO[bytes],
    pickle_module: Any = None,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """Write `obj` (a state dict, or any nesting of tensors, numbers and strings)
    to `f`, a path or a binary file object, in PyTorch's format (see above)."""
    if _holds_arrays(obj) or str(f).endswith(".npz"):
        _save_npz(obj, f)
    else:
        torch_format.save_zip(obj, f)


def _holds_arrays(obj: Any) -> bool:
    if isinstance(obj, np.ndarray):
        return True
    if isinstance(obj, dict):
        return any(_holds_arrays(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return any(_holds_arrays(v) for v in obj)
    return False


def _save_npz(obj: Any, f: str | os.PathLike | IO[bytes]) -> None:
    arrays: dict[str, np.ndarray] = {}
    structure = _encode(obj, "obj", arrays)
    header = json.dumps({"format": _FORMAT, "root": structure})
    arrays["structure"] = np.frombuffer(header.encode("utf-8"), dtype=np.uint8)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as handle:
            np.savez(handle, **arrays)
    else:
        np.savez(f, **arrays)


def _decode(node: Any, arrays: Any) -> Any:
    if isinstance(node, _SCALARS):
        return node
    if isinstance(node, list):
        raise ValueError("yg.load: malformed structure (a bare list)")
    (kind, value), *rest = node.items()
    if rest:
        raise ValueError("yg.load: malformed structure (a node with several kinds)")
    if kind == "tensor":
        return Tensor(np.array(arrays[value]))
    if kind == "ndarray":
        return np.array(arrays[value])
    if kind == "float":
        return float(value)
    if kind in ("dict", "odict"):
        pairs = [(key, _decode(item, arrays)) for key, item in value]
        return OrderedDict(pairs) if kind == "odict" else dict(pairs)
    if kind in ("list", "tuple"):
        items = [_decode(item, arrays) for item in value]
        return tuple(items) if kind == "tuple" else items
    raise ValueError(f"yg.load: unknown node kind {kind!r}")


def load(
    f: str | os.PathLike | IO[bytes],
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """Read a file of `torch.save` or of `save`; tensors come back as yamlgrad
    Tensors, on the CPU whatever `map_location` says (the only device here).
    Only what PyTorch's `weights_only=True` allows is ever built, whatever
    `weights_only` says: a file that needs more is refused, its code unrun."""
    source = f
    if not isinstance(f, (str, os.PathLike)):
        source = io.BytesIO(f.read())
    try:
        with zipfile.ZipFile(source) as archive:
            if torch_format.is_torch_zip(archive.namelist()):
                return torch_format.load_zip(archive)
    except zipfile.BadZipFile:
        pass
    if hasattr(source, "seek"):
        source.seek(0)
    try:
        with np.load(source, allow_pickle=False) as arrays:
            if "structure" not in arrays.files:
                raise ValueError(f"yg.load: {f!r} is not a file written by yg.save")
            header = json.loads(bytes(arrays["structure"]).decode("utf-8"))
            if not isinstance(header, dict) or header.get("format") != _FORMAT:
                raise ValueError(f"yg.load: {f!r} is not a file written by yg.save")
            return _decode(header["root"], arrays)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, KeyError) as error:
        if str(error).startswith("yg.load:"):
            raise
        raise ValueError(
            f"yg.load: {f!r} is not a file written by yg.save ({error})"
        ) from error
