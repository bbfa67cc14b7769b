"""The spectral windows of `torch.stft` and filter design: `yg.hann_window`,
`hamming_window`, `blackman_window`, `bartlett_window`, `kaiser_window`.

Each is a factory (a new leaf, no history), with PyTorch's signature, argument
checks and errors. A window of length N is symmetric over N points; a periodic
one (the default, for spectral analysis) is the symmetric window of N + 1 points
without its last, so that N of them tile a signal. The values are computed in
float64 and rounded once to the dtype asked for (the default float dtype).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime import dtypes
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.factories import _leaf, _np_dtype
from yamlgrad.runtime.wrappers.variable_type_utils import (
    float_arg,
    int_arg,
    layout_arg,
)

__all__ = [
    "hann_window",
    "hamming_window",
    "blackman_window",
    "bartlett_window",
    "kaiser_window",
]


def _positions(op: str, window_length: Any, periodic: Any) -> tuple[np.ndarray, int]:
    """The sample positions 0..N-1 and the symmetric window's length (N, or N + 1
    for a periodic one), after PyTorch's checks of the length."""
    n = int_arg(window_length, op, "window_length", 1)
    if n < 0:
        raise RuntimeError(
            f"{op} requires non-negative window_length, got window_length={n}"
        )
    if not isinstance(periodic, (bool, np.bool_)):
        raise TypeError(
            f"{op}(): argument 'periodic' (position 2) must be bool, not "
            f"{type(periodic).__name__}"
        )
    return np.arange(n, dtype=np.float64), n + 1 if periodic else n


def _window(
    op: str,
    values: Any,
    n: int,
    dtype: Any,
    layout: Any,
    device: Any,
    requires_grad: bool,
) -> Tensor:
    """The leaf of a window's float64 values in `dtype`, which must be floating;
    a window of one point is [1] whatever its formula gives."""
    np_dtype = _np_dtype(dtype)
    if np_dtype.kind != "f":
        raise RuntimeError(
            f"{op} expects floating point dtypes, got: "
            f"{_tensor_options(np_dtype, requires_grad)}"
        )
    if layout is not None:
        layout_arg(layout, op, "layout", 0)
    if n == 1:
        values = np.ones(1)
    return _leaf(np.asarray(values).astype(np_dtype), requires_grad, device)


# The C++ names PyTorch's TensorOptions prints for the dtypes a window refuses.
_CPP_TYPE_NAMES = {
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def _tensor_options(np_dtype: np.dtype, requires_grad: bool) -> str:
    """The options of a refused call as PyTorch prints them."""
    name = _CPP_TYPE_NAMES.get(np_dtype.name, np_dtype.name)
    grad = "true" if requires_grad else "false (default)"
    return (
        f"TensorOptions(dtype={name}, device=cpu, layout=Strided (default), "
        f"requires_grad={grad}, pinned_memory=false, memory_format=(nullopt))"
    )


def _cosine_sum(positions: np.ndarray, length: int, *terms: float) -> np.ndarray:
    """sum_k (-1)^k a_k cos(2 pi k n / (L - 1)): hann, hamming and blackman."""
    phase = 2.0 * np.pi * positions / max(length - 1, 1)
    return sum(
        (-1) ** k * a * np.cos(k * phase) for k, a in enumerate(terms)
    ) + np.zeros_like(positions)


def hann_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: dtypes.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """0.5 - 0.5 cos(2 pi n / (L - 1)).

    >>> yg.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    n, length = _positions("hann_window", window_length, periodic)
    values = _cosine_sum(n, length, 0.5, 0.5)
    return _window("hann_window", values, len(n), dtype, layout, device, requires_grad)


def hamming_window(
    window_length: int,
    periodic: bool = True,
    alpha: float = 0.54,
    beta: float = 0.46,
    *,
    dtype: dtypes.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """alpha - beta cos(2 pi n / (L - 1))."""
    n, length = _positions("hamming_window", window_length, periodic)
    alpha = float_arg(alpha, "hamming_window", "alpha", 3)
    beta = float_arg(beta, "hamming_window", "beta", 4)
    values = _cosine_sum(n, length, alpha, beta)
    return _window(
        "hamming_window", values, len(n), dtype, layout, device, requires_grad
    )


def blackman_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: dtypes.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """0.42 - 0.5 cos(2 pi n / (L - 1)) + 0.08 cos(4 pi n / (L - 1))."""
    n, length = _positions("blackman_window", window_length, periodic)
    values = _cosine_sum(n, length, 0.42, 0.5, 0.08)
    return _window(
        "blackman_window", values, len(n), dtype, layout, device, requires_grad
    )


def bartlett_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: dtypes.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The triangle 1 - |2n / (L - 1) - 1|."""
    n, length = _positions("bartlett_window", window_length, periodic)
    values = 1.0 - np.abs(2.0 * n / max(length - 1, 1) - 1.0)
    return _window(
        "bartlett_window", values, len(n), dtype, layout, device, requires_grad
    )


def kaiser_window(
    window_length: int,
    periodic: bool = True,
    beta: float = 12.0,
    *,
    dtype: dtypes.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """I0(beta sqrt(1 - ((n - c) / c)^2)) / I0(beta), c = (L - 1) / 2."""
    n, length = _positions("kaiser_window", window_length, periodic)
    beta = float_arg(beta, "kaiser_window", "beta", 3)
    centre = max(length - 1, 1) / 2.0
    ratio = np.clip(1.0 - ((n - centre) / centre) ** 2, 0.0, None)
    values = np.i0(beta * np.sqrt(ratio)) / np.i0(beta)
    return _window(
        "kaiser_window", values, len(n), dtype, layout, device, requires_grad
    )
