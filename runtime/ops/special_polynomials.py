"""Orthogonal polynomials of torch.special: Chebyshev (T, U, V, W and their
shifted forms on [0, 1]), Hermite (physicists' H, probabilists' He), Laguerre
and Legendre, p_n(x) element-wise over broadcast x and n.

No gradient: PyTorch declares both inputs `non_differentiable`, so these are
kernels only. Each evaluates as PyTorch's CPU kernel does, so the values agree
to the last bits: n is truncated to an integer (a negative, infinite or nan n
gives 0); the points where a closed form is exact (x = +-1, or 0 and 1 for the
shifted forms) are answered first; a Chebyshev polynomial of high degree inside
(-1, 1) is its trigonometric form (cos(n acos x) for T); every other value runs
the three-term recurrence p_k = step(k, p_{k-1}, p_{k-2}) from p_0 = 1 and p_1,
vectorised over the elements (each takes its value at the step k == n).
Computations stay in x's float dtype (the wrapper promotes x and n first).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from yamlgrad.runtime import backend

KERNELS = (
    "special_chebyshev_polynomial_t",
    "special_chebyshev_polynomial_u",
    "special_chebyshev_polynomial_v",
    "special_chebyshev_polynomial_w",
    "special_shifted_chebyshev_polynomial_t",
    "special_shifted_chebyshev_polynomial_u",
    "special_shifted_chebyshev_polynomial_v",
    "special_shifted_chebyshev_polynomial_w",
    "special_hermite_polynomial_h",
    "special_hermite_polynomial_he",
    "special_laguerre_polynomial_l",
    "special_legendre_polynomial_p",
)

Step = Callable[[int, np.ndarray, np.ndarray], np.ndarray]
# (where, value): a point answered before the recurrence; the first match wins.
Edges = Sequence[tuple[Any, Any]]

# The degree past which PyTorch's Hermite kernels return nan, by dtype.
_HERMITE_LIMIT = {np.dtype(np.float32): 128, np.dtype(np.float64): 512}


def _float_dtype(x: Any, n: Any) -> np.dtype:
    """x's dtype when it is a float, else the float type of x and n together."""
    if x.dtype.kind == "f":
        return x.dtype
    return np.result_type(x.dtype, getattr(n, "dtype", np.int64), np.float32)


def _operands(x: Any, n: Any) -> tuple[np.ndarray, np.ndarray]:
    """x as a float array and n as int64 degrees, broadcast to one shape."""
    x = np.asarray(x)
    n = np.asarray(n)
    x, n = np.broadcast_arrays(x.astype(_float_dtype(x, n), copy=False), n)
    with np.errstate(invalid="ignore"):
        n = np.where(np.isfinite(n), np.trunc(n), -1) if n.dtype.kind == "f" else n
        degrees = np.clip(n, -1, 2**62).astype(np.int64)
    return x, degrees


def _evaluate(
    x: np.ndarray,
    n: np.ndarray,
    first: np.ndarray,
    step: Step,
    edges: Edges = (),
) -> np.ndarray:
    """p_n(x): 0 for n < 0, then `edges`, then 1 for n == 0, `first` for n == 1
    and the recurrence for larger n."""
    out = np.zeros_like(x)  # in x's layout, as PyTorch's element-wise result
    done = n < 0
    for where, value in (*edges, (n == 0, 1), (n == 1, first)):
        where = where & ~done
        np.copyto(out, value, casting="unsafe", where=where)
        done = done | where
    todo = ~done
    if todo.any():
        p, q = np.ones_like(x), first
        for k in range(2, int(n[todo].max()) + 1):
            p, q = q, step(k, q, p)
            np.copyto(out, q, where=todo & (n == k))
    return out


def _polynomial(x: Any, n: Any, rule: Callable[..., np.ndarray]) -> np.ndarray:
    """p_n(x) by `rule`; on Dask arrays chunk by chunk (each chunk runs the
    recurrence to its own largest degree)."""
    kernel = functools.partial(_numpy_polynomial, rule=rule)
    return backend.blockwise(kernel, x, n, dtype=_float_dtype(x, n))


def _numpy_polynomial(x: Any, n: Any, rule: Callable[..., np.ndarray]) -> np.ndarray:
    x, n = _operands(x, n)
    with np.errstate(all="ignore"):
        return rule(x, n, n.astype(x.dtype))


def _chebyshev_step(y: np.ndarray) -> Step:
    """Every Chebyshev kind's recurrence: p_k = 2y p_{k-1} - p_{k-2}."""

    def step(k: int, q: np.ndarray, p: np.ndarray) -> np.ndarray:
        return (y + y) * q - p

    return step


def _odd(n: np.ndarray) -> np.ndarray:
    return n % 2 == 1


def _t(x: np.ndarray, n: np.ndarray, nf: np.ndarray) -> np.ndarray:
    edge = np.abs(x) == 1
    inside = (n > 6) & (np.abs(x) < 1)
    edges = [(edge, np.where((x > 0) | ~_odd(n), 1, -1))]
    edges.append((inside, np.cos(nf * np.arccos(x))))
    return _evaluate(x, n, x, _chebyshev_step(x), edges)


def _u(x: np.ndarray, n: np.ndarray, nf: np.ndarray) -> np.ndarray:
    edge = np.abs(x) == 1
    inside = (n > 8) & (np.abs(x) < 1)
    angle = np.arccos(x)
    trig = np.where(
        np.sin(angle) != 0,
        np.sin((nf + 1) * angle) / np.sin(angle),
        (nf + 1) * np.cos((nf + 1) * angle) / x,
    )
    edges = [(edge, np.where((x > 0) | ~_odd(n), n + 1, -(n + 1))), (inside, trig)]
    return _evaluate(x, n, x + x, _chebyshev_step(x), edges)


def _v(x: np.ndarray, n: np.ndarray, nf: np.ndarray) -> np.ndarray:
    edge = np.abs(x) == 1
    inside = (n > 8) & (np.abs(x) < 1)
    angle = np.arccos(x)
    alternating = np.where(_odd(n), -(n + n + 1), n + n + 1)
    trig = np.where(
        np.sin(angle / 2) != 1,
        np.cos((nf + 0.5) * angle) / np.cos(angle / 2),
        alternating,
    )
    edges = [(edge, np.where(x > 0, 1, alternating)), (inside, trig)]
    return _evaluate(x, n, x + x - 1, _chebyshev_step(x), edges)


def _w(x: np.ndarray, n: np.ndarray, nf: np.ndarray) -> np.ndarray:
    edge = np.abs(x) == 1
    inside = (n > 8) & (np.abs(x) < 1)
    angle = np.arccos(x)
    at_one = np.where(x > 0, n + n + 1, np.where(_odd(n), -1, 1))
    trig = np.where(
        np.cos(angle / 2) != 1,
        np.sin((nf + 0.5) * angle) / np.sin(angle / 2),
        at_one,
    )
    edges = [(edge, at_one), (inside, trig)]
    return _evaluate(x, n, x + x + 1, _chebyshev_step(x), edges)


def _shifted_t(x: np.ndarray, n: np.ndarray, nf: np.ndarray) -> np.ndarray:
    y = x + x - 1
    inside = (n > 6) & (np.abs(y) < 1)
    edges = [(x == 1, 1), (x == 0, np.where(_odd(n), -1, 1))]
    edges.append((inside, np.cos(nf * np.arccos(y))))
    return _evaluate(x, n, y, _chebyshev_step(y), edges)


def _shifted_u(x: np.ndarray, n: np.ndarray, nf: np.ndarray) -> np.ndarray:
    y = x + x - 1
    inside = (n > 6) & (np.abs(y) < 1)
    angle = np.arccos(y)
    trig = np.where(
        np.sin(angle) != 0,
        np.sin((nf + 1) * angle) / np.sin(angle),
        (nf + 1) * np.cos((nf + 1) * angle) / y,
    )
    edges = [(x == 1, n + 1), (x == 0, np.where(_odd(n), -(n + 1), n + 1))]
    edges.append((inside, trig))
    return _evaluate(x, n, y + y, _chebyshev_step(y), edges)


def _shifted_v(x: np.ndarray, n: np.ndarray, nf: np.ndarray) -> np.ndarray:
    y = x + x - 1
    inside = (n > 6) & (np.abs(y) < 1)
    angle = np.arccos(y)
    alternating = np.where(_odd(n), -(n + n + 1), n + n + 1)
    trig = np.where(
        np.sin(angle / 2) != 1,
        np.cos((nf + 0.5) * angle) / np.cos(angle / 2),
        alternating,
    )
    edges = [(x == 1, 1), (x == 0, alternating), (inside, trig)]
    return _evaluate(x, n, y + y - 1, _chebyshev_step(y), edges)


def _shifted_w(x: np.ndarray, n: np.ndarray, nf: np.ndarray) -> np.ndarray:
    y = x + x - 1
    inside = (n > 4) & (np.abs(y) < 1)
    angle = np.arccos(y)
    alternating = np.where(_odd(n), -1, 1)
    trig = np.where(
        np.cos(angle / 2) != 1,
        np.sin((nf + 0.5) * angle) / np.sin(angle / 2),
        alternating,
    )
    edges = [(x == 1, n + n + 1), (x == 0, alternating), (inside, trig)]
    return _evaluate(x, n, y + y + 1, _chebyshev_step(y), edges)


def _hermite_h(x: np.ndarray, n: np.ndarray, nf: np.ndarray) -> np.ndarray:
    def step(k: int, q: np.ndarray, p: np.ndarray) -> np.ndarray:
        return (x + x) * q - (2 * k - 2) * p

    edges = [(n > _HERMITE_LIMIT.get(x.dtype, 1024), np.nan)]
    return _evaluate(x, n, x + x, step, edges)


def _hermite_he(x: np.ndarray, n: np.ndarray, nf: np.ndarray) -> np.ndarray:
    def step(k: int, q: np.ndarray, p: np.ndarray) -> np.ndarray:
        return x * q - (k - 1) * p

    edges = [(n > _HERMITE_LIMIT.get(x.dtype, 1024), np.nan)]
    return _evaluate(x, n, x, step, edges)


def _laguerre_l(x: np.ndarray, n: np.ndarray, nf: np.ndarray) -> np.ndarray:
    def step(k: int, q: np.ndarray, p: np.ndarray) -> np.ndarray:
        j = k - 1
        return (((j + j) + (1 - x)) * q - j * p) / (j + 1)

    return _evaluate(x, n, 1 - x, step, [(x == 0, 1)])


def _legendre_p(x: np.ndarray, n: np.ndarray, nf: np.ndarray) -> np.ndarray:
    def step(k: int, q: np.ndarray, p: np.ndarray) -> np.ndarray:
        j = k - 1
        return ((j + j + 1) * x * q - j * p) / (j + 1)

    edge = np.abs(x) == 1
    edges = [(edge, np.where((x > 0) | ~_odd(n), 1, -1))]
    return _evaluate(x, n, x, step, edges)


def special_chebyshev_polynomial_t(x: Any, n: Any) -> np.ndarray:
    """T_n(x), the Chebyshev polynomial of the first kind."""
    return _polynomial(x, n, _t)


def special_chebyshev_polynomial_u(x: Any, n: Any) -> np.ndarray:
    """U_n(x), the Chebyshev polynomial of the second kind."""
    return _polynomial(x, n, _u)


def special_chebyshev_polynomial_v(x: Any, n: Any) -> np.ndarray:
    """V_n(x), the Chebyshev polynomial of the third kind."""
    return _polynomial(x, n, _v)


def special_chebyshev_polynomial_w(x: Any, n: Any) -> np.ndarray:
    """W_n(x), the Chebyshev polynomial of the fourth kind."""
    return _polynomial(x, n, _w)


def special_shifted_chebyshev_polynomial_t(x: Any, n: Any) -> np.ndarray:
    """T_n(2x - 1)."""
    return _polynomial(x, n, _shifted_t)


def special_shifted_chebyshev_polynomial_u(x: Any, n: Any) -> np.ndarray:
    """U_n(2x - 1)."""
    return _polynomial(x, n, _shifted_u)


def special_shifted_chebyshev_polynomial_v(x: Any, n: Any) -> np.ndarray:
    """V_n(2x - 1)."""
    return _polynomial(x, n, _shifted_v)


def special_shifted_chebyshev_polynomial_w(x: Any, n: Any) -> np.ndarray:
    """W_n(2x - 1)."""
    return _polynomial(x, n, _shifted_w)


def special_hermite_polynomial_h(x: Any, n: Any) -> np.ndarray:
    """H_n(x), the physicists' Hermite polynomial (nan past PyTorch's degree limit)."""
    return _polynomial(x, n, _hermite_h)


def special_hermite_polynomial_he(x: Any, n: Any) -> np.ndarray:
    """He_n(x), the probabilists' Hermite polynomial."""
    return _polynomial(x, n, _hermite_he)


def special_laguerre_polynomial_l(x: Any, n: Any) -> np.ndarray:
    """L_n(x), the Laguerre polynomial."""
    return _polynomial(x, n, _laguerre_l)


def special_legendre_polynomial_p(x: Any, n: Any) -> np.ndarray:
    """P_n(x), the Legendre polynomial."""
    return _polynomial(x, n, _legendre_p)
