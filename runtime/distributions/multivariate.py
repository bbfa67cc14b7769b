"""Multivariate normals: MultivariateNormal (a full covariance given by its
matrix, its inverse or its Cholesky factor) and LowRankMultivariateNormal
(covariance W W^T + diag(D)).

Every quantity is computed from a lower Cholesky factor L of the covariance
(kept without batch broadcasting, `_unbroadcasted_scale_tril`): a draw is
loc + L e, the Mahalanobis term is |L^-1 (x - loc)|^2 by a triangular solve,
and the log-determinant is twice the sum of log diag(L). The low-rank family
applies the Woodbury identity through the Cholesky factor of its capacitance
matrix I + W^T D^-1 W, so no n x n matrix is factored.

LKJCholesky draws Cholesky factors of correlation matrices by the onion
method: row i is a uniform direction in the first i coordinates scaled by the
square root of a Beta draw, and its diagonal entry completes the unit norm.
"""

from __future__ import annotations

import math
from typing import Any

import yamlgrad as yg
from yamlgrad.runtime.autograd.tensor import Size, Tensor
from yamlgrad.runtime.distributions import constraints
from yamlgrad.runtime.distributions.distribution import Distribution
from yamlgrad.runtime.distributions.utils import broadcast_all, lazy_property

__all__ = ["LKJCholesky", "LowRankMultivariateNormal", "MultivariateNormal"]

_LOG_2PI = math.log(2 * math.pi)


def _matvec(matrix: Tensor, vector: Tensor) -> Tensor:
    return (matrix @ vector.unsqueeze(-1)).squeeze(-1)


def _mahalanobis(scale_tril: Tensor, diff: Tensor) -> Tensor:
    """|L^-1 diff|^2 over the last dimension, L broadcast against diff."""
    n = diff.shape[-1]
    batch = yg.broadcast_shapes(scale_tril.shape[:-2], diff.shape[:-1])
    factor = scale_tril.expand(batch + (n, n))
    column = diff.expand(batch + (n,)).unsqueeze(-1)
    solved = yg.linalg.solve_triangular(factor, column, upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


def _half_log_det(scale_tril: Tensor) -> Tensor:
    return scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _matrix_error(name: str) -> ValueError:
    return ValueError(
        f"{name} must be at least two-dimensional, with optional leading batch "
        "dimensions"
    )


class MultivariateNormal(Distribution):
    """N(loc, Sigma), Sigma given as covariance_matrix, precision_matrix or
    scale_tril (exactly one).

    >>> MultivariateNormal(yg.zeros(2), yg.eye(2)).sample().shape
    yamlgrad.Size([2])
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: Tensor,
        covariance_matrix: Tensor | None = None,
        precision_matrix: Tensor | None = None,
        scale_tril: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
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
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or "
                "scale_tril may be specified."
            )
        name, matrix = given[0]
        if matrix.dim() < 2:
            raise _matrix_error(name)
        batch_shape = yg.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        # Validated before factoring: a matrix that is not positive definite
        # gets the constraint's message, not the factorisation's.
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = yg.linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = yg.linalg.cholesky(yg.linalg.inv(matrix))

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        new = self._expanded(
            MultivariateNormal,
            batch_shape,
            _instance,
            ("loc", "covariance_matrix", "precision_matrix", "scale_tril"),
        )
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    @lazy_property
    def scale_tril(self) -> Tensor:
        n = self._event_shape[0]
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + (n, n))

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        factor = self._unbroadcasted_scale_tril
        n = self._event_shape[0]
        return (factor @ factor.mT).expand(self._batch_shape + (n, n))

    @lazy_property
    def precision_matrix(self) -> Tensor:
        n = self._event_shape[0]
        inverse = yg.cholesky_inverse(self._unbroadcasted_scale_tril)
        return inverse.expand(self._batch_shape + (n, n))

    mean = property(lambda self: self.loc, doc="loc.")
    mode = property(lambda self: self.loc, doc="loc.")

    @property
    def variance(self) -> Tensor:
        row_norms = self._unbroadcasted_scale_tril.pow(2).sum(-1)
        return row_norms.expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        e = yg.randn(tuple(shape), dtype=self.loc.dtype)
        return self.loc + _matvec(self._unbroadcasted_scale_tril, e)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self._event_shape[0]
        distance = _mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        return -0.5 * (n * _LOG_2PI + distance) - half_log_det

    def entropy(self) -> Tensor:
        n = self._event_shape[0]
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        value = 0.5 * n * (1.0 + _LOG_2PI) + half_log_det
        return value.expand(self._batch_shape) if self._batch_shape else value


class LowRankMultivariateNormal(Distribution):
    """N(loc, cov_factor cov_factor^T + diag(cov_diag))."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: Tensor,
        cov_factor: Tensor,
        cov_diag: Tensor,
        validate_args: bool | None = None,
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise _matrix_error("cov_factor")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m"
            )
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(
                f"cov_diag must be a batch of vectors with shape {event_shape}"
            )
        try:
            batch_shape = yg.broadcast_shapes(
                loc.shape[:-1], cov_factor.shape[:-2], cov_diag.shape[:-1]
            )
        except RuntimeError as e:
            raise ValueError(
                f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                f"{cov_factor.shape}, cov_diag {cov_diag.shape}"
            ) from e
        self.loc = loc.expand(batch_shape + (-1,))
        self.cov_factor = cov_factor.expand(batch_shape + (-1, -1))
        self.cov_diag = cov_diag.expand(batch_shape + (-1,))
        self._factor = cov_factor
        self._diag = cov_diag
        self._capacitance_factor = self._capacitance(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    @staticmethod
    def _capacitance(factor: Tensor, diag: Tensor) -> Tensor:
        """The Cholesky factor of I + W^T D^-1 W."""
        scaled = factor / diag.sqrt().unsqueeze(-1)
        rank = factor.shape[-1]
        inner = scaled.mT @ scaled + yg.eye(rank, dtype=factor.dtype)
        return yg.linalg.cholesky(inner)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        new = self._expanded(LowRankMultivariateNormal, batch_shape, _instance)
        new._factor = self._factor
        new._diag = self._diag
        new._capacitance_factor = self._capacitance_factor
        return new

    mean = property(lambda self: self.loc, doc="loc.")
    mode = property(lambda self: self.loc, doc="loc.")

    @lazy_property
    def variance(self) -> Tensor:
        diagonal = self._factor.pow(2).sum(-1)
        return (diagonal + self._diag).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        return yg.linalg.cholesky(self.covariance_matrix)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        factor = self._factor
        cov = factor @ factor.mT + yg.diag_embed(self._diag)
        n = self._event_shape[0]
        return cov.expand(self._batch_shape + (n, n))

    @lazy_property
    def precision_matrix(self) -> Tensor:
        # Woodbury: D^-1 - D^-1 W C^-1 W^T D^-1, C the capacitance matrix.
        factor = self._factor
        inv_diag = self._diag.reciprocal()
        weighted = factor * inv_diag.unsqueeze(-1)
        solved = yg.linalg.solve_triangular(
            self._capacitance_factor, weighted.mT, upper=False
        )
        precision = yg.diag_embed(inv_diag) - solved.mT @ solved
        n = self._event_shape[0]
        return precision.expand(self._batch_shape + (n, n))

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        rank = self.cov_factor.shape[-1]
        e_factor = yg.randn(tuple(shape[:-1]) + (rank,), dtype=self.loc.dtype)
        e_diag = yg.randn(tuple(shape), dtype=self.loc.dtype)
        return self.loc + _matvec(self._factor, e_factor) + self._diag.sqrt() * e_diag

    def _log_det(self) -> Tensor:
        capacitance = 2 * _half_log_det(self._capacitance_factor)
        return capacitance + self._diag.log().sum(-1)

    def _mahalanobis(self, diff: Tensor) -> Tensor:
        factor = self._factor
        diag = self._diag
        direct = (diff.pow(2) / diag).sum(-1)
        projected = _matvec(factor.mT, diff / diag)
        correction = _mahalanobis(self._capacitance_factor, projected)
        return direct - correction

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self._event_shape[0]
        distance = self._mahalanobis(value - self.loc)
        return -0.5 * (n * _LOG_2PI + self._log_det() + distance)

    def entropy(self) -> Tensor:
        n = self._event_shape[0]
        value = 0.5 * (n * (1.0 + _LOG_2PI) + self._log_det())
        return value.expand(self._batch_shape) if self._batch_shape else value


class LKJCholesky(Distribution):
    """Lower Cholesky factors L of dim x dim correlation matrices with density
    proportional to det(L L^T)^(concentration - 1)."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(
        self, dim: int, concentration: Any = 1.0, validate_args: bool | None = None
    ) -> None:
        if dim < 2:
            raise ValueError(
                "Expected dim to be an integer greater than or equal to 2. "
                f"Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.shape
        super().__init__(batch_shape, Size((dim, dim)), validate_args=validate_args)
        self._beta = self._onion_betas(self.concentration, dim)

    @staticmethod
    def _onion_betas(concentration: Tensor, dim: int) -> Any:
        from yamlgrad.runtime.distributions.gamma_family import Beta

        dtype = concentration.dtype
        offsets = yg.cat([yg.zeros(1, dtype=dtype), yg.arange(dim - 1, dtype=dtype)])
        marginal = concentration + 0.5 * (dim - 2)
        first = offsets + 0.5
        second = marginal.unsqueeze(-1) - 0.5 * offsets
        return Beta(first, second)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        new = self._expanded(LKJCholesky, batch_shape, _instance, ("concentration",))
        new.dim = self.dim
        new._beta = self._onion_betas(new.concentration, self.dim)
        return new

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        with yg.no_grad():
            shape = tuple(self._extended_shape(sample_shape))
            radius2 = self._beta.sample(sample_shape).unsqueeze(-1)
            normal = yg.randn(shape, dtype=self.concentration.dtype).tril(-1)
            norms = yg.linalg.norm(normal, dim=-1, keepdim=True)
            directions = normal / yg.where(norms > 0, norms, yg.ones_like(norms))
            w = radius2.sqrt() * directions
            tiny = yg.finfo(w.dtype).tiny
            diagonal = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return w + yg.diag_embed(diagonal)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        dim = self.dim
        diagonal = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        rows = yg.arange(2, dim + 1, dtype=value.dtype)
        powers = 2 * (self.concentration - 1).unsqueeze(-1) + dim - rows
        unnormalised = (powers * diagonal.log()).sum(-1)
        alpha = self.concentration + 0.5 * (dim - 1)
        log_normalizer = (
            0.5 * (dim - 1) * math.log(math.pi)
            + yg.mvlgamma(alpha - 0.5, dim - 1)
            - yg.lgamma(alpha) * (dim - 1)
        )
        return unnormalised - log_normalizer
