"""The reparameterised random ops: `_standard_gamma`, `_sample_dirichlet`,
`binomial`, and the implicit derivatives behind Gamma, Beta and Dirichlet
samples (`_standard_gamma_grad`, `_dirichlet_grad`), with `igamma`.

A Gamma(alpha) draw x is differentiable in alpha by implicit reparameterisation:
holding the uniform noise u = P(alpha, x) fixed (P the regularised lower
incomplete gamma function),

    dx/dalpha = -(dP/dalpha)(alpha, x) / p(x; alpha),

which `_standard_gamma_grad` computes. Two decisions:

* The draw is made by inversion, x = P^-1(alpha, u), from a uniform u of the op's
  generator. A fixed seed then makes the draw a smooth function of alpha whose
  derivative is the formula's, so the generated finite-difference checks verify
  the gradient exactly as they verify a deterministic op.
* The derivative is summed as a series, not read from a fitted approximation:
  dividing the series of dP/dalpha by the density leaves
  dx/dalpha = -x sum_n c_n (log x - digamma(alpha + n + 1)), with
  c_0 = 1/alpha and c_n = c_{n-1} x / (alpha + n), which has no overflow and
  little cancellation below x ~ alpha + 5 sqrt(alpha). Beyond it (the far upper
  tail) the complementary integral dx/dalpha = int_0^inf (1 + t/x)^(alpha-1)
  e^-t (log(x + t) - digamma(alpha)) dt is taken by Gauss-Laguerre quadrature.

`_dirichlet_grad` is the same derivative (over 1 - x) for a Beta(alpha,
total - alpha) marginal with beta held fixed, from the hypergeometric series of the regularised
incomplete beta function (or of its complement, past the mean), each divided by
the density. As in PyTorch, none of these has a derivative of its own (PyTorch's
`not_implemented`): here they are constants to autograd.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime.generator import Generator
from yamlgrad.runtime.ops.common import _constant_like, _raw, _special
from yamlgrad.runtime.ops.random_draws import _not_implemented_for
from yamlgrad.runtime.wrappers.randomness import draw_rng

KERNELS = (
    "standard_gamma_draw",
    "_standard_gamma_grad",
    "sample_dirichlet_draw",
    "_dirichlet_grad",
    "binomial_draw",
)
BACKWARD_HELPERS = ("_standard_gamma_grad",)

# Series terms are added until they fall below this fraction of the sum.
_TOLERANCE = 1e-15
_MAX_TERMS = 200_000
_LAGUERRE_NODES = 64


def _float_dtype(x: np.ndarray, kernel: str) -> np.dtype:
    if x.dtype.kind != "f":
        raise _not_implemented_for(kernel, x.dtype)
    return x.dtype


def _gamma_inverse(alpha: np.ndarray, u: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """P^-1(alpha, u) in `dtype`, never below its smallest normal number (as
    PyTorch clamps its samples, so that log x stays finite)."""
    with np.errstate(all="ignore"):
        x = _special().gammaincinv(alpha, u)
    # Gamma(0) is a point mass at 0; a concentration below it draws 0 too (as
    # PyTorch's sampler does), and either is clamped.
    x = np.where(alpha <= 0, 0.0, x)
    return np.maximum(x, np.finfo(dtype).tiny).astype(dtype, copy=False)


def standard_gamma_draw(self: np.ndarray, generator: Generator) -> np.ndarray:
    """A Gamma(self, 1) sample of each concentration, in self's dtype."""
    dtype = _float_dtype(np.asarray(self), "gamma_cpu")
    alpha = np.asarray(self, dtype=np.float64)
    u = draw_rng(generator).random(alpha.shape)
    return _gamma_inverse(alpha, u, dtype)


def sample_dirichlet_draw(self: np.ndarray, generator: Generator) -> np.ndarray:
    """A Dirichlet sample along the last dim of each concentration vector:
    independent Gamma draws, normalised."""
    dtype = _float_dtype(np.asarray(self), "dirichlet")
    alpha = np.asarray(self, dtype=np.float64)
    u = draw_rng(generator).random(alpha.shape)
    gammas = _gamma_inverse(alpha, u, np.dtype(np.float64))
    total = gammas.sum(axis=-1, keepdims=True)
    x = gammas / total
    return np.maximum(x, np.finfo(dtype).tiny).astype(dtype, copy=False)


def binomial_draw(count: np.ndarray, prob: np.ndarray, generator: Generator) -> Any:
    """Successes of `count` trials of probability `prob`, in count's dtype (a
    probability outside [0, 1] counts as the nearer end, as in PyTorch; nan
    gives nan)."""
    count, prob = np.broadcast_arrays(np.asarray(count), np.asarray(prob))
    dtype = _float_dtype(count, "binomial_cpu")
    p = np.nan_to_num(np.clip(prob, 0.0, 1.0), nan=0.0)
    draws = draw_rng(generator).binomial(count.astype(np.int64), p)
    return np.where(np.isnan(prob), np.nan, draws).astype(dtype)


def _standard_gamma_grad(self: Any, output: Any) -> Any:
    """d output / d self for Gamma(self) samples `output` at fixed noise (the
    implicit derivative; a constant on Tensors, as PyTorch's has no gradient)."""
    alpha = np.asarray(_raw(self), dtype=np.float64)
    x = np.asarray(_raw(output), dtype=np.float64)
    alpha, x = np.broadcast_arrays(alpha, x)
    grad = np.zeros(alpha.shape)
    tail = x > alpha + 5 * np.sqrt(alpha) + 10
    grad[~tail] = _gamma_series(alpha[~tail], x[~tail])
    grad[tail] = _gamma_upper_tail(alpha[tail], x[tail])
    dtype = np.result_type(_raw(self), _raw(output))
    return _constant_like(self, grad.astype(dtype, copy=False))


def _gamma_series(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """-x sum_n c_n (log x - digamma(alpha + n + 1)), summed until the terms
    past their peak (n > x - alpha) are negligible."""
    log_x = np.log(x)
    coefficient = 1.0 / alpha
    psi = _special().digamma(alpha) + coefficient  # digamma(alpha + 1)
    total = coefficient * (log_x - psi)
    active = np.arange(alpha.size)
    alpha, x, log_x = alpha.ravel(), x.ravel(), log_x.ravel()
    coefficient, psi, total = coefficient.ravel(), psi.ravel(), total.ravel()
    for n in range(1, _MAX_TERMS):
        if active.size == 0:
            break
        a, xs = alpha[active], x[active]
        coefficient[active] *= xs / (a + n)
        psi[active] += 1.0 / (a + n)
        term = coefficient[active] * (log_x[active] - psi[active])
        total[active] += term
        small = np.abs(term) <= _TOLERANCE * np.abs(total[active])
        active = active[~(small & (n > xs - a))]
    return (-x * total).reshape(np.shape(x))


def _gamma_upper_tail(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """int_0^inf (1 + t/x)^(alpha-1) e^-t (log(x + t) - digamma(alpha)) dt, with
    the integrand's own decay rate r = 1 - (alpha - 1)/x taken out (t = v / r)."""
    if alpha.size == 0:
        return np.zeros(alpha.shape)
    nodes, weights = np.polynomial.laguerre.laggauss(_LAGUERRE_NODES)
    a, xs = alpha[..., None], x[..., None]
    rate = 1.0 - (a - 1.0) / xs
    t = nodes / rate
    # e^-t (1 + t/x)^(alpha-1) = e^-v exp((alpha-1)(log1p(t/x) - t/x)).
    factor = np.exp((a - 1.0) * (np.log1p(t / xs) - t / xs))
    values = factor * (np.log(xs + t) - _special().digamma(a))
    return (values * weights).sum(axis=-1) / rate[..., 0]


def _dirichlet_grad(x: Any, alpha: Any, total: Any) -> Any:
    """PyTorch's `_dirichlet_grad`: (dx/dalpha) / (1 - x) for x ~ Beta(alpha,
    total - alpha) at fixed noise, the second parameter held fixed. (The Dirichlet
    backward multiplies it by grad_x - sum_j x_j grad_j, which is (1 - x) grad_x
    for the Beta marginal.)"""
    xs = np.asarray(_raw(x), dtype=np.float64)
    a = np.asarray(_raw(alpha), dtype=np.float64)
    b = np.asarray(_raw(total), dtype=np.float64) - a
    xs, a, b = np.broadcast_arrays(xs, a, b)
    grad = np.zeros(xs.shape)
    lower = xs < (a + 1) / (a + b + 2)
    grad[lower] = _beta_lower(xs[lower], a[lower], b[lower])
    grad[~lower] = _beta_upper(xs[~lower], a[~lower], b[~lower])
    grad /= 1.0 - xs
    dtype = np.result_type(_raw(x), _raw(alpha), _raw(total))
    return _constant_like(x, grad.astype(dtype, copy=False))


def _beta_series(
    y: np.ndarray, first: np.ndarray, second: np.ndarray, shift: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """sum_n T_n and sum_n T_n D_n for the series of I_y(first, second), T_0 = 1,
    T_{n+1} = T_n y (first + second + n) / (first + 1 + n), with D_n the sum over
    k < n of 1/(first + second + k) - shift/(first + 1 + k)."""
    y, first, second, shift = (v.ravel() for v in (y, first, second, shift))
    term = np.ones(y.shape)
    derivative = np.zeros(y.shape)
    series, weighted = term.copy(), np.zeros(y.shape)
    active = np.arange(y.size)
    for n in range(_MAX_TERMS):
        if active.size == 0:
            break
        f, s, yy = first[active], second[active], y[active]
        derivative[active] += 1.0 / (f + s + n) - shift[active] / (f + 1 + n)
        term[active] *= yy * (f + s + n) / (f + 1 + n)
        series[active] += term[active]
        weighted[active] += term[active] * derivative[active]
        small = term[active] * (1 + np.abs(derivative[active])) <= _TOLERANCE * (
            series[active] + np.abs(weighted[active])
        )
        active = active[~small]
    return series, weighted


def _beta_lower(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """From I_x(a, b) = x^a (1-x)^b / (a B(a, b)) sum_n T_n:
    dx/da = -x (1-x) / a [S (log x - 1/a - digamma(a) + digamma(a+b)) + W]."""
    if x.size == 0:
        return np.zeros(x.shape)
    digamma = _special().digamma
    series, weighted = _beta_series(x, a, b, np.ones(x.shape))
    log_term = np.log(x) - 1.0 / a - digamma(a) + digamma(a + b)
    return -x * (1 - x) / a * (series * log_term + weighted)


def _beta_upper(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """From I_x(a, b) = 1 - I_{1-x}(b, a), differentiated in its second parameter:
    dx/da = x (1-x) / b [S (log x - digamma(a) + digamma(a+b)) + W]."""
    if x.size == 0:
        return np.zeros(x.shape)
    digamma = _special().digamma
    y = 1.0 - x
    series, weighted = _beta_series(y, b, a, np.zeros(x.shape))
    log_term = np.log(x) - digamma(a) + digamma(a + b)
    return x * y / b * (series * log_term + weighted)
