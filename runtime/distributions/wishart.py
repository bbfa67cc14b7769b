"""Wishart: distributions over positive-definite matrices, the scatter matrix
of df Gaussian vectors of covariance Sigma.

Parameterised like MultivariateNormal (Sigma given as covariance_matrix,
precision_matrix or scale_tril) plus the degrees of freedom df > p - 1. All
quantities come from the lower Cholesky factor L of Sigma. Draws follow
Bartlett's decomposition, X = (L A)(L A)^T with A lower triangular, A_ii the
square root of a chi-squared draw of df - i degrees (reparameterised through
Gamma draws) and normal entries below the diagonal; a draw that comes out
singular (possible for df close to p - 1) is drawn again, up to
`max_try_correction` times.
"""

from __future__ import annotations

import math
import warnings
from numbers import Number
from typing import Any

import yamlgrad as yg
from yamlgrad.runtime.autograd.tensor import Size, Tensor
from yamlgrad.runtime.distributions import constraints
from yamlgrad.runtime.distributions.exp_family import ExponentialFamily
from yamlgrad.runtime.distributions.gamma_family import Chi2
from yamlgrad.runtime.distributions.utils import lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _multivariate_digamma(x: Tensor, p: int) -> Tensor:
    """d/dx log Gamma_p(x) = sum_{i < p} digamma(x - i / 2)."""
    shifts = yg.arange(p, dtype=x.dtype) / 2
    return yg.digamma(x.unsqueeze(-1) - shifts).sum(-1)


class Wishart(ExponentialFamily):
    """The Wishart distribution W(df, Sigma) over p x p matrices."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:  # type: ignore[override]
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(
        self,
        df: Any,
        covariance_matrix: Tensor | None = None,
        precision_matrix: Tensor | None = None,
        scale_tril: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        given = [
            (name, m)
            for name, m in (
                ("covariance_matrix", covariance_matrix),
                ("precision_matrix", precision_matrix),
                ("scale_tril", scale_tril),
            )
            if m is not None
        ]
        if len(given) != 1:
            raise AssertionError(
                "Exactly one of covariance_matrix or precision_matrix or "
                "scale_tril may be specified."
            )
        name, matrix = given[0]
        if matrix.dim() < 2:
            raise ValueError(
                "scale_tril must be at least two-dimensional, with optional leading "
                "batch dimensions"
            )
        if isinstance(df, Number):
            batch_shape = Size(matrix.shape[:-2])
            self.df = yg.tensor(df, dtype=matrix.dtype)
        else:
            batch_shape = yg.broadcast_shapes(matrix.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = matrix.shape[-2:]
        p = event_shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(
                f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}."
            )
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        if bool((self.df < p).any()):
            warnings.warn(
                "Low df values detected. Singular samples are highly likely to "
                "occur for ndim - 1 < df < ndim.",
                stacklevel=2,
            )
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = yg.linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = yg.linalg.cholesky(yg.linalg.inv(matrix))
        self._chi2 = self._bartlett_chi2(self.df, p, batch_shape)

    @staticmethod
    def _bartlett_chi2(df: Tensor, p: int, batch_shape: Size) -> Chi2:
        """Chi-squared of df, df - 1, ..., df - p + 1 degrees: the squares of
        Bartlett's diagonal."""
        steps = yg.arange(p, dtype=df.dtype).expand(batch_shape + (-1,))
        return Chi2(df.unsqueeze(-1) - steps)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Wishart:
        new = self._expanded(
            Wishart,
            batch_shape,
            _instance,
            ("df", "covariance_matrix", "precision_matrix", "scale_tril"),
        )
        matrix_shape = new.batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(
            matrix_shape
        )
        new._chi2 = self._bartlett_chi2(new.df, self.event_shape[-1], new.batch_shape)
        return new

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(
            self._batch_shape + self._event_shape
        )

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        factor = self._unbroadcasted_scale_tril
        return (factor @ factor.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        inverse = yg.cholesky_inverse(self._unbroadcasted_scale_tril)
        return inverse.expand(self._batch_shape + self._event_shape)

    def _df_as_matrix(self, x: Tensor) -> Tensor:
        return x.reshape(self._batch_shape + (1, 1))

    @property
    def mean(self) -> Tensor:
        return self._df_as_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = yg.where(factor <= 0, yg.full_like(factor, math.nan), factor)
        return self._df_as_matrix(factor) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        cov = self.covariance_matrix
        diagonal = cov.diagonal(dim1=-2, dim2=-1)
        outer = diagonal.unsqueeze(-1) * diagonal.unsqueeze(-2)
        return self._df_as_matrix(self.df) * (cov.pow(2) + outer)

    def _bartlett(self, sample_shape: Size) -> Tensor:
        p = self._event_shape[-1]
        eps = yg.finfo(self.df.dtype).eps
        diagonal = self._chi2.rsample(sample_shape).sqrt().clamp(min=eps)
        below = yg.randn(
            tuple(sample_shape + self._batch_shape) + (p, p), dtype=self.df.dtype
        ).tril(-1)
        factor = self._unbroadcasted_scale_tril @ (yg.diag_embed(diagonal) + below)
        return factor @ factor.mT

    def rsample(
        self, sample_shape: Any = Size(), max_try_correction: int | None = None
    ) -> Tensor:
        tries = 10 if max_try_correction is None else max_try_correction
        sample_shape = Size(sample_shape)
        sample = self._bartlett(sample_shape)
        for _ in range(tries):
            singular = ~self.support.check(sample.detach())
            if not bool(singular.any()):
                break
            warnings.warn("Singular sample detected.", stacklevel=2)
            mask = singular.reshape(singular.shape + (1, 1))
            sample = yg.where(mask, self._bartlett(sample_shape), sample)
        return sample

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        factor = self._unbroadcasted_scale_tril
        log_det_half = factor.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = yg.cholesky_solve(value, factor).diagonal(dim1=-2, dim2=-1).sum(-1)
        log_det_value = yg.linalg.slogdet(value).logabsdet
        return (
            -nu * (p * _LOG_2 / 2 + log_det_half)
            - yg.mvlgamma(nu / 2, p)
            + (nu - p - 1) / 2 * log_det_value
            - trace / 2
        )

    def entropy(self) -> Tensor:
        nu = self.df
        p = self._event_shape[-1]
        factor = self._unbroadcasted_scale_tril
        log_det_half = factor.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (
            (p + 1) * (p * _LOG_2 / 2 + log_det_half)
            + yg.mvlgamma(nu / 2, p)
            - (nu - p - 1) / 2 * _multivariate_digamma(nu / 2, p)
            + nu * p / 2
        )

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        p = self._event_shape[-1]
        shifted = y + (p + 1) / 2
        log_det = yg.linalg.slogdet(-2 * x).logabsdet
        return shifted * (-log_det + _LOG_2 * p) + yg.mvlgamma(shifted, p)
