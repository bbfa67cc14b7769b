"""How accurate yamlgrad's special functions and activations are, against torch's
and scipy's, and whether each fast form earns its place.

    python benchmarks/special_accuracy.py            # writes benchmarks/special_accuracy.md
    python benchmarks/special_accuracy.py --names erf,gelu --points 2000
    python benchmarks/special_accuracy.py --refit erf  # re-derives the erf coefficients
    python benchmarks/special_accuracy.py --refit erfinv  # and erfinv's two

For every function and dtype, the maximum error in ulps of the dtype, over:

* a sample spread over the whole float range in bit-pattern space (both signs,
  subnormals to the largest finite value) and uniformly over the range where the
  function varies, plus +-0, +-inf, nan, the smallest subnormal and the largest
  finite value, with an mpmath reference at 40 significant digits;
* for float32, a dense sweep (every 127th bit pattern of [0, 8] and its negation,
  about 17 million points, against float64 closed forms of the same function,
  whose own error is far below a float32 ulp).

An ulp is the gap between the reference's magnitude, rounded to the dtype, and
the next representable number above it (the smallest subnormal in the
subnormal range). A nan where the reference is not, or a wrong infinity, is an
infinite error; a reference beyond the dtype's range is its infinity. At +-inf
the reference is the defining formula as mpmath evaluates it (gelu, silu and
mish give -inf * 0 = nan at -inf, as torch does). Each function is defined as PyTorch defines it: softplus with
its threshold of 20, gelu's tanh form by its formula.

A fast form of runtime/ops/special_kernels.py (listed in its FAST_FORMS) is
admitted where its error is at most `bound` = max(torch's error, 1 ulp); the
script fails when an admitted form exceeds its bound. Forward times at 1,000,000
elements (one thread, median of 5) show what the form buys over scipy's kernel.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import mpmath  # noqa: E402
import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.special as sc  # noqa: E402
import torch  # noqa: E402

import yamlgrad as yg  # noqa: E402
from yamlgrad.runtime.ops import special_kernels  # noqa: E402

torch.set_num_threads(1)
HERE = Path(__file__).resolve().parent
mp = mpmath.mp
mp.dps = 40


@dataclass(frozen=True)
class Function:
    name: str
    reference: Callable[[Any], Any]  # mpmath, one mpf in, one out
    dense: Callable[[np.ndarray], np.ndarray]  # float64 closed form
    ours: Callable[[Any], Any]  # on a yamlgrad tensor
    theirs: Callable[[Any], Any]  # on a torch tensor
    scipy: Callable[[np.ndarray], np.ndarray] | None
    core: tuple[float, float]  # where the function varies
    domain: tuple[float, float] = (-math.inf, math.inf)


# Past these magnitudes mpmath's erfc series check overflows a float; the
# values are 0 or 2 (and log_ndtr its asymptote) far beyond float64's range.
_HUGE = 1e4


def _erfc(x: Any) -> Any:
    if abs(x) < _HUGE:
        return mp.erfc(x)
    return mp.zero if x > 0 else mp.mpf(2)


def _ncdf(x: Any) -> Any:
    return _erfc(-x / mp.sqrt(2)) / 2


def _log_ndtr(x: Any) -> Any:
    if x > 0:  # log(1 - ncdf(-x)): the 40 digits of ncdf(x) would round to 1
        return mp.log1p(-_ncdf(-x))
    if x > -_HUGE:
        return mp.log(_ncdf(x))
    return -x * x / 2 - mp.log(-x) - mp.log(2 * mp.pi) / 2


def _ndtri_reference(p: Any) -> Any:
    if p <= 0 or p >= 1:
        return mp.ninf if p == 0 else mp.inf if p == 1 else mp.nan
    start = float(sc.ndtri(float(p)))
    if p < 0.5:  # solve in logs: the tail's probabilities span hundreds of decades
        return mp.findroot(lambda x: _log_ndtr(x) - mp.log(p), start)
    return -mp.findroot(lambda x: _log_ndtr(x) - mp.log(1 - p), -start)


def _mish(x: Any) -> Any:
    return x * mp.tanh(mp.log1p(mp.exp(x)))


_GELU_K = math.sqrt(2 / math.pi)
F = yg.nn.functional
T = torch.nn.functional


def _functions() -> list[Function]:
    return _error_functions() + _activations()


def _error_functions() -> list[Function]:
    """erf and the normal distribution's functions."""
    return [
        Function("erf", mp.erf, sc.erf, yg.erf, torch.erf, sc.erf, (-4, 4)),
        Function("erfc", _erfc, sc.erfc, yg.erfc, torch.erfc, sc.erfc, (-4, 11)),
        Function(
            "erfinv",
            lambda x: mp.erfinv(x) if abs(x) < 1 else _ndtri_reference((x + 1) / 2),
            sc.erfinv,
            yg.erfinv,
            torch.erfinv,
            sc.erfinv,
            (-1, 1),
            (-1, 1),
        ),
        Function(
            "special_ndtr",
            _ncdf,
            sc.ndtr,
            yg.special.ndtr,
            torch.special.ndtr,
            sc.ndtr,
            (-14, 9),
        ),
        Function(
            "special_ndtri",
            _ndtri_reference,
            sc.ndtri,
            yg.special.ndtri,
            torch.special.ndtri,
            sc.ndtri,
            (0, 1),
            (0, 1),
        ),
        Function(
            "special_log_ndtr",
            _log_ndtr,
            sc.log_ndtr,
            yg.special.log_ndtr,
            torch.special.log_ndtr,
            sc.log_ndtr,
            (-40, 9),
        ),
    ]


def _activations() -> list[Function]:
    """The activations, and sin and cos."""

    def dense_tanh_gelu(x: np.ndarray) -> np.ndarray:
        # x / (1 + exp(-2z)), not x (1 + tanh(z)) / 2, which is 0 from x = -7
        return x / (1 + np.exp(-2 * _GELU_K * (x + 0.044715 * x**3)))

    return [
        Function(
            "sigmoid",
            lambda x: 1 / (1 + mp.exp(-x)),
            sc.expit,
            yg.sigmoid,
            torch.sigmoid,
            sc.expit,
            (-90, 20),
        ),
        Function(
            "log_sigmoid",
            lambda x: -mp.log1p(mp.exp(-x)),
            sc.log_expit,
            F.logsigmoid,
            T.logsigmoid,
            sc.log_expit,
            (-20, 90),
        ),
        Function(
            "softplus",
            lambda x: x if x > 20 else mp.log1p(mp.exp(x)),
            lambda x: np.where(x > 20, x, np.logaddexp(0, x)),
            F.softplus,
            T.softplus,
            None,
            (-90, 30),
        ),
        Function(
            "gelu",
            lambda x: x * _ncdf(x),
            lambda x: x * sc.ndtr(x),
            F.gelu,
            T.gelu,
            None,
            (-14, 6),
        ),
        Function(
            "gelu_tanh",
            # (1 + tanh(z)) / 2 as 1 / (1 + exp(-2z)): no cancellation for z << 0
            lambda x: x / (1 + mp.exp(-2 * _GELU_K * (x + 0.044715 * x**3))),
            dense_tanh_gelu,
            lambda t: F.gelu(t, approximate="tanh"),
            lambda t: T.gelu(t, approximate="tanh"),
            None,
            (-14, 6),
        ),
        Function(
            "silu",
            lambda x: x / (1 + mp.exp(-x)),
            lambda x: x * sc.expit(x),
            F.silu,
            T.silu,
            None,
            (-90, 20),
        ),
        Function(
            "mish",
            _mish,
            lambda x: x * np.tanh(np.logaddexp(0, x)),
            F.mish,
            T.mish,
            None,
            (-90, 20),
        ),
        Function("sin", mp.sin, np.sin, yg.sin, torch.sin, None, (-10, 10)),
        Function("cos", mp.cos, np.cos, yg.cos, torch.cos, None, (-10, 10)),
    ]


def _spread(dtype: np.dtype, points: int, fn: Function) -> np.ndarray:
    """The sample: bit patterns spread over the whole finite range, uniform
    points over the core, and the special values, within the domain."""
    info = np.finfo(dtype)
    ints = np.dtype(f"int{dtype.itemsize * 8}")
    top = np.array(info.max, dtype).view(ints)
    rng = np.random.default_rng(0)
    bits = rng.integers(0, int(top), points // 2, dtype=ints, endpoint=True)
    spread = bits.view(dtype) * rng.choice(np.array([-1, 1], dtype), points // 2)
    core = rng.uniform(*fn.core, points - points // 2).astype(dtype)
    tiny = info.smallest_subnormal
    special = np.array(
        [0.0, -0.0, np.inf, -np.inf, np.nan, tiny, -tiny, info.max, -info.max],
        dtype,
    )
    sample = np.concatenate([special, spread, core])
    low, high = fn.domain
    inside = (sample >= low) & (sample <= high) | np.isnan(sample)
    return sample[inside | ~np.isfinite(sample)]


def _ulps(values: np.ndarray, reference: np.ndarray, dtype: np.dtype) -> float:
    """The largest error of `values` (in `dtype`) from `reference`, in ulps of
    `dtype`. `reference` is float64, or a (2, n) pair of float64 whose sum is
    the reference to about 106 bits (what float64 results are measured
    against: rounding the reference to float64 alone would add half an ulp)."""
    values = values.astype(np.float64)
    head, tail = (reference, 0.0) if reference.ndim == 1 else reference
    nan_ref = np.isnan(head)
    if np.any(np.isnan(values) != nan_ref):
        return math.inf
    keep = ~nan_ref
    values, head = values[keep], head[keep]
    tail = tail if np.ndim(tail) == 0 else tail[keep]
    with np.errstate(over="ignore"):
        rounded = head.astype(dtype)  # the correctly rounded result's magnitude
    infinite = np.isinf(rounded) | np.isinf(values)
    if np.any(values[infinite] != rounded[infinite]):
        return math.inf
    finite = ~infinite
    values, head = values[finite], head[finite]
    tail = tail if np.ndim(tail) == 0 else tail[finite]
    spacing = np.spacing(np.abs(rounded[finite])).astype(np.float64)
    errors = np.abs((values - head) - tail) / spacing
    return float(np.max(errors, initial=0.0))


def _mp_reference(fn: Function, sample: np.ndarray) -> np.ndarray:
    """The mpmath reference (40 digits) as head and tail float64 arrays."""
    out = np.empty((2,) + sample.shape, np.float64)
    for i, value in enumerate(sample.tolist()):
        if math.isnan(value):
            out[:, i] = math.nan
            continue
        exact = fn.reference(mp.mpf(value))
        head = float(exact)
        out[0, i] = head
        out[1, i] = float(exact - head) if math.isfinite(head) else 0.0
    return out


def _dense_sweep() -> np.ndarray:
    top = np.array(8.0, np.float32).view(np.int32)
    positive = np.arange(0, int(top), 127, dtype=np.int32).view(np.float32)
    return np.concatenate([positive, -positive])


def _timed(call: Callable[[], Any]) -> float:
    call()
    times = []
    for _ in range(5):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


@dataclass
class Row:
    name: str
    dtype: str
    ours: float
    torch: float
    scipy: float | None
    fast: bool
    ours_ms: float
    torch_ms: float
    scipy_ms: float | None

    @property
    def bound(self) -> float:
        return max(self.torch, 1.0)

    @property
    def admitted(self) -> bool:
        return self.ours <= self.bound


def _measure(fn: Function, dtype: np.dtype, points: int) -> Row:
    sample = _spread(dtype, points, fn)
    reference = _mp_reference(fn, sample)

    def errors(values: Callable[[np.ndarray], np.ndarray]) -> float:
        worst = _ulps(values(sample), reference, dtype)
        if dtype == np.float32:
            sweep = _dense_sweep()
            low, high = fn.domain
            sweep = sweep[(sweep >= low) & (sweep <= high)]
            with np.errstate(all="ignore"):
                dense_reference = fn.dense(sweep.astype(np.float64))
            worst = max(worst, _ulps(values(sweep), dense_reference, dtype))
        return worst

    def ours(x: np.ndarray) -> np.ndarray:
        return fn.ours(yg.tensor(x)).numpy()

    def theirs(x: np.ndarray) -> np.ndarray:
        return fn.theirs(torch.from_numpy(x)).numpy()

    with np.errstate(all="ignore"):
        scipy_error = None if fn.scipy is None else errors(fn.scipy)
        ours_error, torch_error = errors(ours), errors(theirs)
        low, high = (max(fn.core[0], fn.domain[0]), min(fn.core[1], fn.domain[1]))
        x = np.random.default_rng(1).uniform(low, high, 1_000_000).astype(dtype)
        tx, gx = torch.from_numpy(x), yg.tensor(x)
        scipy_ms = None if fn.scipy is None else _timed(lambda: fn.scipy(x))
        ours_ms, torch_ms = _timed(lambda: fn.ours(gx)), _timed(lambda: fn.theirs(tx))
    return Row(
        fn.name,
        dtype.name,
        ours_error,
        torch_error,
        scipy_error,
        dtype in special_kernels.FAST_FORMS.get(fn.name, ()),
        ours_ms,
        torch_ms,
        scipy_ms,
    )


def _cell(value: float | None, digits: int = 2) -> str:
    if value is None:
        return ""
    if math.isinf(value):
        return "inf"
    return f"{value:.{digits}f}" if value < 1e5 else f"{value:.1e}"


def render(rows: list[Row], points: int) -> str:
    lines = [
        "# Special functions and activations: maximum error in ulps",
        "",
        f"`python benchmarks/special_accuracy.py --points {points}` on "
        f"{platform.machine()}, Python {platform.python_version()}, numpy "
        f"{np.__version__}, scipy {scipy.__version__}, "
        f"torch {torch.__version__}, mpmath {mpmath.__version__}, "
        f"{time.strftime('%Y-%m-%d')}.",
        "",
        "Generated by [special_accuracy.py](special_accuracy.py) (its docstring "
        "says what is sampled). `kernel`: `fast form` where yamlgrad uses a form "
        "of runtime/ops/special_kernels.py, else its numpy or scipy kernel; "
        "`bound` = max(torch, 1 ulp); a fast form is admitted where ours <= bound. "
        "Times: forward at 1,000,000 elements, one thread, milliseconds.",
        "",
        "| function | dtype | kernel | ours ulps | torch ulps | scipy ulps "
        "| bound | admitted | ours ms | torch ms | scipy ms |",
        "|---|---|---|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for row in rows:
        kernel = "fast form" if row.fast else "numpy/scipy"
        admitted = ("yes" if row.admitted else "no") if row.fast else ""
        lines.append(
            f"| {row.name} | {row.dtype} | {kernel} | {_cell(row.ours)} "
            f"| {_cell(row.torch)} | {_cell(row.scipy)} | {_cell(row.bound)} "
            f"| {admitted} | {_cell(row.ours_ms)} | {_cell(row.torch_ms)} "
            f"| {_cell(row.scipy_ms)} |"
        )
    return "\n".join(lines) + "\n"


def refit(degree: int = 10) -> tuple[float, ...]:
    """special_kernels' erf coefficients: atanh(erf(x)) / x as a polynomial in
    t = x**2 on [0, c**2], c the clamp, by a Chebyshev least-squares fit
    weighted by x (1 - erf**2) / erf (how an error in P moves erf, relative to
    erf), converted to powers of t, highest first."""
    from numpy.polynomial import chebyshev, polynomial

    end = special_kernels._ERF_TANH_CLAMP**2
    t = np.linspace(0, end, 200_001)
    x = np.sqrt(t)
    complement = sc.erfc(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        target = 0.5 * np.log((2 - complement) / complement) / x
        weight = x * (1 - sc.erf(x) ** 2) / sc.erf(x)
    target[0], weight[0] = 2 / math.sqrt(math.pi), 1.0
    series = chebyshev.chebfit(2 * t / end - 1, target, degree, w=weight)
    powers = polynomial.Polynomial(chebyshev.cheb2poly(series))
    in_t = powers(polynomial.Polynomial([-1, 2 / end]))
    return tuple(float(c) for c in in_t.coef[::-1])


def refit_erfinv(degree: int = 12) -> list[tuple[float, ...]]:
    """special_kernels' erfinv polynomials: erfinv(x) / x, w = -log(1 - x**2),
    in s = w / 2.5 - 1 on w in [0, 5], then in s mapping sqrt(w) in
    [sqrt(5), sqrt(16.7)] to [-1, 1], by Chebyshev least-squares fits weighted to
    the relative error (scipy's float64 erfinv as the reference, far below a
    float32 ulp), converted to powers of s, highest first."""
    from numpy.polynomial import chebyshev

    split, end = special_kernels._ERFINV_SPLIT, special_kernels._ERFINV_END
    fits = []
    for low, high, root in (
        (0.0, split, False),
        (math.sqrt(split), math.sqrt(end), True),
    ):
        y = np.linspace(low, high, 200_001)
        w = np.maximum(y * y if root else y, 1e-300)
        x = np.sqrt(-np.expm1(-w))  # 1 - x**2 = exp(-w)
        target = sc.erfinv(x) / x
        target[w < 1e-280] = math.sqrt(math.pi) / 2  # the limit at 0
        s = (2 * y - low - high) / (high - low)
        series = chebyshev.chebfit(s, target, degree, w=1 / target)
        fits.append(tuple(float(c) for c in chebyshev.cheb2poly(series)[::-1]))
    return fits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", help="comma-separated functions (nothing written)")
    parser.add_argument("--points", type=int, default=20_000)
    parser.add_argument("--refit", choices=["erf", "erfinv"])
    args = parser.parse_args(argv)
    if args.refit == "erf":
        for coefficient in refit():
            print(repr(coefficient))
        return 0
    if args.refit == "erfinv":
        for polynomial in refit_erfinv():
            print(polynomial)
        return 0
    wanted = None if args.names is None else set(args.names.split(","))
    rows = []
    for fn in _functions():
        if wanted is not None and fn.name not in wanted:
            continue
        for dtype in (np.dtype(np.float32), np.dtype(np.float64)):
            row = _measure(fn, dtype, args.points)
            print(
                f"{row.name} {row.dtype}: ours {row.ours:.3f} torch {row.torch:.3f} "
                f"scipy {_cell(row.scipy, 3)} ulps; {row.ours_ms:.2f} / "
                f"{row.torch_ms:.2f} / {_cell(row.scipy_ms)} ms",
                flush=True,
            )
            rows.append(row)
    failed = [r for r in rows if r.fast and not r.admitted]
    if wanted is None:
        (HERE / "special_accuracy.md").write_text(render(rows, args.points))
    for row in failed:
        print(f"NOT ADMITTED: {row.name} {row.dtype}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
