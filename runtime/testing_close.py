"""`torch.testing.assert_close`: PyTorch's comparison, tolerances and messages.

Pairs are compared as PyTorch's `_comparison` does: sequences and mappings item
by item (the failing item named at the end of the message), tensors by shape,
dtype and then values with `isclose`, Python numbers as scalars. The default
tolerances are PyTorch's per dtype (`rtol, atol`): float16 1e-3, 1e-5; float32
1.3e-6, 1e-5; float64 1e-7, 1e-7; integers and bools exactly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from yamlgrad.runtime import dtypes
from yamlgrad.runtime.autograd.tensor import Tensor

__all__ = ["assert_close"]

_PRECISIONS = {
    np.dtype(np.float16): (0.001, 1e-05),
    np.dtype(np.float32): (1.3e-06, 1e-05),
    np.dtype(np.float64): (1e-07, 1e-07),
    np.dtype(np.complex64): (1.3e-06, 1e-05),
    np.dtype(np.complex128): (1e-07, 1e-07),
}


class _Mismatch(Exception):
    def __init__(self, kind: type[Exception], message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: Any = None,
) -> None:
    """Raise AssertionError unless `actual` and `expected` are close:
    `|actual - expected| <= atol + rtol * |expected|` elementwise.

    >>> yg.testing.assert_close(yg.tensor([1.0, 2.0]), yg.tensor([1.0, 2.0 + 1e-7]))
    """
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueError(
            "Both 'rtol' and 'atol' must be either specified or omitted, but got "
            f"no {missing}."
        )
    try:
        _compare(actual, expected, "", rtol, atol, equal_nan, check_dtype)
    except _Mismatch as error:
        if msg is None:
            raise error.kind(error.message) from None
        text = msg(error.message) if callable(msg) else msg
        raise error.kind(text) from None


def _compare(
    actual: Any,
    expected: Any,
    where: str,
    rtol: float | None,
    atol: float | None,
    equal_nan: bool,
    check_dtype: bool,
) -> None:
    args = (rtol, atol, equal_nan, check_dtype)
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(
                AssertionError,
                _located(
                    "The length of the sequences mismatch: "
                    f"{len(actual)} != {len(expected)}",
                    where,
                ),
            )
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, f"{where}[{i}]", *args)
        return
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            missing = sorted(set(expected) - set(actual), key=repr)
            extra = sorted(set(actual) - set(expected), key=repr)
            raise _Mismatch(
                AssertionError,
                _located(
                    "The keys of the mappings do not match:\n"
                    + (
                        f"Missing keys in the actual mapping: {missing}\n"
                        if missing
                        else ""
                    )
                    + (
                        f"Additional keys in the actual mapping: {extra}"
                        if extra
                        else ""
                    ),
                    where,
                ).replace("\n\n\nThe", "\n\nThe"),
            )
        for key in expected:
            _compare(actual[key], expected[key], f"{where}[{key!r}]", *args)
        return
    tensor_like = (Tensor, np.ndarray)
    if isinstance(actual, tensor_like) and isinstance(expected, tensor_like):
        _compare_tensors(_array(actual), _array(expected), where, *args)
        return
    numbers = (bool, int, float, complex, np.number, np.bool_)
    if isinstance(actual, numbers) and isinstance(expected, numbers):
        _compare_scalars(actual, expected, where, rtol, atol, equal_nan, check_dtype)
        return
    raise _Mismatch(
        TypeError,
        f"No comparison pair was able to handle inputs of type {type(actual)} and "
        f"{type(expected)}.",
    )


def _is_sequence(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str)


def _array(value: Any) -> np.ndarray:
    return value.detach().numpy() if isinstance(value, Tensor) else np.asarray(value)


def _located(message: str, where: str) -> str:
    return (
        message if not where else f"{message}\n\nThe failure occurred for item {where}"
    )


def _tolerances(dtype: np.dtype, rtol: float | None, atol: float | None) -> tuple:
    if rtol is not None and atol is not None:
        return rtol, atol
    return _PRECISIONS.get(dtype, (0.0, 0.0))


def _compare_tensors(
    actual: np.ndarray,
    expected: np.ndarray,
    where: str,
    rtol: float | None,
    atol: float | None,
    equal_nan: bool,
    check_dtype: bool,
) -> None:
    if actual.shape != expected.shape:
        raise _Mismatch(
            AssertionError,
            _located(
                "The values for attribute 'shape' do not match: "
                f"{_size(actual.shape)} != {_size(expected.shape)}.",
                where,
            ),
        )
    if actual.dtype != expected.dtype:
        if check_dtype:
            raise _Mismatch(
                AssertionError,
                _located(
                    "The values for attribute 'dtype' do not match: "
                    f"{dtypes.from_numpy(actual.dtype)} != "
                    f"{dtypes.from_numpy(expected.dtype)}.",
                    where,
                ),
            )
        common = np.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.astype(common), expected.astype(common)
    rtol, atol = _tolerances(actual.dtype, rtol, atol)
    if actual.dtype == np.bool_:
        actual, expected = actual.astype(np.int64), expected.astype(np.int64)
    matches = np.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if matches.all():
        return
    if actual.ndim == 0:
        message = _scalar_message(actual.item(), expected.item(), rtol, atol)
        raise _Mismatch(AssertionError, _located(message, where))
    if actual.dtype.kind in "iub":
        actual, expected = actual.astype(np.int64), expected.astype(np.int64)
    total, mismatched = matches.size, int(matches.size - matches.sum())
    flat_abs = np.abs(actual - expected).reshape(-1)
    flat_abs[matches.reshape(-1)] = 0
    numerator, denominator = flat_abs, np.abs(expected.reshape(-1))
    if actual.dtype.kind in "iub":  # true division of integers: in float32
        numerator = numerator.astype(np.float32)
        denominator = denominator.astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        flat_rel = numerator / denominator
    flat_rel[matches.reshape(-1)] = 0
    abs_at, rel_at = _argmax(flat_abs), _argmax(flat_rel)
    message = _mismatch_message(
        "Tensor-likes",
        f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})",
        flat_abs[abs_at].item(),
        np.unravel_index(abs_at, actual.shape),
        atol,
        flat_rel[rel_at].item(),
        np.unravel_index(rel_at, actual.shape),
        rtol,
    )
    raise _Mismatch(AssertionError, _located(message, where))


def _argmax(values: np.ndarray) -> int:
    """torch.max's index: the first NaN if there is one, else the first maximum."""
    nans = np.flatnonzero(np.isnan(values)) if values.dtype.kind in "fc" else []
    return int(nans[0]) if len(nans) else int(np.argmax(values))


def _size(shape: tuple[int, ...]) -> str:
    return f"yamlgrad.Size({list(shape)})"


def _compare_scalars(
    actual: Any,
    expected: Any,
    where: str,
    rtol: float | None,
    atol: float | None,
    equal_nan: bool,
    check_dtype: bool,
) -> None:
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(
            AssertionError,
            _located(
                "The (d)types do not match: " f"{type(actual)} != {type(expected)}.",
                where,
            ),
        )
    kind = _scalar_dtype(expected)
    rtol, atol = _tolerances(np.dtype(kind), rtol, atol)
    if actual == expected or (equal_nan and _isnan(actual) and _isnan(expected)):
        return
    if not _isnan(actual) and not _isnan(expected):
        if abs(actual - expected) <= atol + rtol * abs(expected):
            return
    message = _scalar_message(actual, expected, rtol, atol)
    raise _Mismatch(AssertionError, _located(message, where))


def _scalar_dtype(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, np.integer)):
        return "int64"
    if isinstance(value, complex):
        return "complex128"
    return "float64"


def _isnan(value: Any) -> bool:
    return isinstance(value, (float, complex, np.floating)) and math.isnan(abs(value))


def _scalar_message(actual: Any, expected: Any, rtol: float, atol: float) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_message(
        "Scalars",
        f"Expected {expected} but got {actual}.",
        abs_diff,
        None,
        atol,
        rel_diff,
        None,
        rtol,
    )


def _mismatch_message(
    identifier: str,
    extra: str,
    abs_diff: float,
    abs_at: tuple[int, ...] | None,
    atol: float,
    rel_diff: float,
    rel_at: tuple[int, ...] | None,
    rtol: float,
) -> str:
    equality = rtol == 0 and atol == 0

    def line(kind: str, diff: float, at: tuple[int, ...] | None, tol: float) -> str:
        if at is None:
            text = f"{kind.title()} difference: {diff}"
        else:
            index = tuple(int(i) for i in at)
            text = f"Greatest {kind} difference: {diff} at index {index}"
        return text + ("" if equality else f" (up to {tol} allowed)")

    verdict = "equal" if equality else "close"
    return (
        f"{identifier} are not {verdict}!\n\n{extra}\n"
        f"{line('absolute', abs_diff, abs_at, atol)}\n"
        f"{line('relative', rel_diff, rel_at, rtol)}"
    )
