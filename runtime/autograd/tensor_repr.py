"""How a tensor prints: PyTorch's repr, with its default print options and
`set_printoptions`; `Tensor.__repr__` and `Parameter.__repr__` call
`format_tensor`."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from yamlgrad.runtime import backend, dtypes

if TYPE_CHECKING:
    from yamlgrad.runtime.autograd.tensor import Tensor

_ndarray = np.ndarray

_PRECISION = 4
_THRESHOLD = 1000  # more elements than this are summarized with "..."
_EDGEITEMS = 3
_LINEWIDTH = 80
_PREFIX = "tensor("
_SCI_MODE: bool | None = None  # None: chosen from the values, as PyTorch's
_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """How tensors print, as `torch.set_printoptions`: a profile ("default",
    "short", "full") first, then each option given."""
    global _PRECISION, _THRESHOLD, _EDGEITEMS, _LINEWIDTH, _SCI_MODE
    if profile is not None:
        _PRECISION, _THRESHOLD, _EDGEITEMS, _LINEWIDTH = _PROFILES[profile]
    _PRECISION = _PRECISION if precision is None else precision
    _THRESHOLD = _THRESHOLD if threshold is None else threshold
    _EDGEITEMS = _EDGEITEMS if edgeitems is None else edgeitems
    _LINEWIDTH = _LINEWIDTH if linewidth is None else linewidth
    _SCI_MODE = sci_mode


_SHOWN_WITHOUT_DTYPE = (np.dtype(np.float32), np.dtype(np.int64), np.dtype(np.bool_))


def _summarized(a: np.ndarray) -> np.ndarray:
    """The elements a summarized repr shows (`get_summarized_data`)."""
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * _EDGEITEMS:
        a = np.concatenate((a[:_EDGEITEMS], a[-_EDGEITEMS:]))
    if a.ndim == 1:
        return a
    return np.stack([_summarized(row) for row in a])


def _formatter(a: np.ndarray) -> tuple[Callable[[Any], str], int]:
    """`_Formatter`: how to print one element, and the width every element gets.

    For floats the mode (integers `2.`, fixed `2.5000`, or scientific `2.5000e+09`)
    and the width come from the nonzero finite values; every element is padded to
    that width, so `[ 1., -2.]` lines up.
    """
    if a.dtype.kind == "c":
        return _complex_formatter(a)
    if a.dtype.kind != "f":
        width = max(len(str(v)) for v in a.reshape(-1).tolist())
        return lambda v: str(v).rjust(width), width
    values = a[np.isfinite(a) & (a != 0)].astype(np.float64)
    if values.size == 0:
        return lambda v: f"{v:.0f}" + ("." if math.isfinite(v) else ""), 1
    magnitudes = np.abs(values)
    low, high = float(magnitudes.min()), float(magnitudes.max())
    int_mode = bool(np.all(values == np.ceil(values)))
    sci_mode = high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4
    if _SCI_MODE is not None:
        sci_mode = _SCI_MODE
    if sci_mode:
        spec, extra = f".{_PRECISION}e", 0
    elif int_mode:
        spec, extra = ".0f", 1  # for the "." appended below
    else:
        spec, extra = f".{_PRECISION}f", 0
    # The longest text is that of an extreme value of either sign.
    positive, negative = values[values > 0], values[values < 0]
    extremes = [
        f(part) for part in (positive, negative) if part.size for f in (np.min, np.max)
    ]
    width = max(len(format(v, spec)) + extra for v in extremes)
    dot = int_mode and not sci_mode

    def format_value(v: Any) -> str:
        text = format(v, spec)
        if dot and math.isfinite(v):
            text += "."
        return text.rjust(width)

    return format_value, width


def _complex_formatter(a: np.ndarray) -> tuple[Callable[[Any], str], int]:
    """A complex element as PyTorch prints it: its parts formatted apart, each
    with the formatter of all the real (or imaginary) parts, joined by the
    imaginary part's sign (`1.+2.0000j`); the width counts both and the `j`."""
    format_real, real_width = _formatter(a.real)
    format_imag, imag_width = _formatter(a.imag)

    def format_value(v: Any) -> str:
        imag = (format_imag(v.imag) + "j").lstrip()
        sign = "" if imag[0] in "+-" else "+"
        return format_real(v.real) + sign + imag

    return format_value, real_width + imag_width + 1


def _format_array(
    a: np.ndarray,
    indent: int,
    summarize: bool,
    format_value: Callable[[Any], str],
    width: int,
) -> str:
    """`_tensor_str_with_formatter`: nested brackets, wrapped at the line width."""
    if a.ndim == 0:
        return format_value(a.item())
    cut = summarize and a.shape[0] > 2 * _EDGEITEMS
    if a.ndim == 1:
        if cut:
            head = [format_value(v) for v in a[:_EDGEITEMS].tolist()]
            tail = [format_value(v) for v in a[-_EDGEITEMS:].tolist()]
            data = [*head, " ...", *tail]
        else:
            data = [format_value(v) for v in a.tolist()]
        per_line = max(1, (_LINEWIDTH - indent) // (width + 2))
        starts = range(0, len(data), per_line)
        lines = [", ".join(data[i : i + per_line]) for i in starts]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"

    def row(i: int) -> str:
        return _format_array(a[i], indent + 1, summarize, format_value, width)

    n = a.shape[0]
    if cut:
        head, tail = range(_EDGEITEMS), range(n - _EDGEITEMS, n)
        slices = [*map(row, head), "...", *map(row, tail)]
    else:
        slices = [row(i) for i in range(n)]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """`, dtype=...` on the last line, or on a new one when it would not fit."""
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > _LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def format_tensor(t: Tensor) -> str:
    """PyTorch's repr: `tensor([1., 2.], dtype=yamlgrad.float64, grad_fn=<...>)`."""
    a = t._data
    indent = len(_PREFIX)
    suffixes = []
    if type(a) is not _ndarray:
        if backend.is_lazy(a):  # printed without computing it
            suffixes.append(f"size={tuple(a.shape)}")
            if a.dtype not in _SHOWN_WITHOUT_DTYPE:
                suffixes.append(f"dtype={t.dtype!r}")
            suffixes.append(f"device={backend.device_name(a)!r}")
            return _add_suffixes(_PREFIX + "<lazy>", suffixes + _meta(t), indent)
        a = backend.to_numpy(a)
        suffixes.append(f"device={backend.device_name(t._data)!r}")
    if a.size == 0:
        text = "[]"
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if a.dtype != dtypes.DEFAULT_FLOAT.np:
            suffixes.append(f"dtype={t.dtype!r}")
    else:
        summarize = a.size > _THRESHOLD
        format_value, width = _formatter(_summarized(a) if summarize else a)
        text = _format_array(a, indent, summarize, format_value, width)
        if a.dtype not in _SHOWN_WITHOUT_DTYPE and a.dtype != _default_complex():
            suffixes.append(f"dtype={t.dtype!r}")
    return _add_suffixes(_PREFIX + text, suffixes + _meta(t), indent)


def _default_complex() -> np.dtype:
    return dtypes.default_complex().np


def _meta(t: Tensor) -> list[str]:
    if t.grad_fn is not None:
        return [f"grad_fn=<{t.grad_fn.name()}>"]
    return ["requires_grad=True"] if t._requires_grad else []
