"""torch's window functions: hann, hamming, blackman, bartlett and kaiser
windows of `window_length` points, periodic (the first `window_length` points of
the symmetric window one longer, as spectral analysis wants) unless
`periodic=False`. Factories: each result is a leaf in the default float dtype
unless one is given.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from yamlgrad.runtime import dtypes, factories
from yamlgrad.runtime.autograd.tensor import Tensor

__all__ = [
    "hann_window",
    "hamming_window",
    "blackman_window",
    "bartlett_window",
    "kaiser_window",
]

# C++'s names of the dtypes, as PyTorch's error prints a TensorOptions.
_C_NAMES = {
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
}


def _window(
    name: str,
    window_length: int,
    periodic: bool,
    dtype: Any,
    requires_grad: bool,
    device: Any,
    shape: Callable[[np.ndarray, int], np.ndarray],
) -> Tensor:
    """`shape(n, N)`: the symmetric window of N points at the points n."""
    if window_length < 0:
        raise RuntimeError(
            f"{name} requires non-negative window_length, got "
            f"window_length={window_length}"
        )
    target = dtypes.DEFAULT_FLOAT if dtype is None else dtype
    np_dtype = dtypes.to_numpy(target)
    if np_dtype.kind != "f":
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype="
            f"{_C_NAMES.get(np_dtype.name, np_dtype.name)}, device=cpu, "
            "layout=Strided (default), requires_grad=false (default), "
            "pinned_memory=false, memory_format=(nullopt))"
        )
    if window_length <= 1:
        values = np.ones(window_length)
    else:
        points = window_length + 1 if periodic else window_length
        values = shape(np.arange(window_length, dtype=np.float64), points)
    return factories._leaf(values.astype(np_dtype), requires_grad, device)


def _cosine_sum(*coefficients: float) -> Callable[[np.ndarray, int], np.ndarray]:
    """sum_k (-1)^k a_k cos(2 pi k n / (N - 1)): hann, hamming, blackman."""

    def shape(n: np.ndarray, points: int) -> np.ndarray:
        phase = 2 * math.pi * n / (points - 1)
        return sum(
            (-1) ** k * a * np.cos(k * phase) for k, a in enumerate(coefficients)
        )

    return shape


def hann_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """0.5 - 0.5 cos(2 pi n / (N - 1)).

    >>> yg.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window(
        "hann_window",
        window_length,
        periodic,
        dtype,
        requires_grad,
        device,
        _cosine_sum(0.5, 0.5),
    )


def hamming_window(
    window_length: int,
    periodic: bool = True,
    alpha: float = 0.54,
    beta: float = 0.46,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """alpha - beta cos(2 pi n / (N - 1))."""
    return _window(
        "hamming_window",
        window_length,
        periodic,
        dtype,
        requires_grad,
        device,
        _cosine_sum(alpha, beta),
    )


def blackman_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    return _window(
        "blackman_window",
        window_length,
        periodic,
        dtype,
        requires_grad,
        device,
        _cosine_sum(0.42, 0.5, 0.08),
    )


def _triangle(n: np.ndarray, points: int) -> np.ndarray:
    return 1 - np.abs(2 * n / (points - 1) - 1)


def bartlett_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The triangle 1 - |2 n / (N - 1) - 1|."""
    return _window(
        "bartlett_window",
        window_length,
        periodic,
        dtype,
        requires_grad,
        device,
        _triangle,
    )


def kaiser_window(
    window_length: int,
    periodic: bool = True,
    beta: float = 12.0,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)."""

    def shape(n: np.ndarray, points: int) -> np.ndarray:
        ratio = 2 * n / (points - 1) - 1
        return np.i0(beta * np.sqrt(np.clip(1 - ratio**2, 0, None))) / np.i0(beta)

    return _window(
        "kaiser_window", window_length, periodic, dtype, requires_grad, device, shape
    )
