"""The maps among yamlgrad's transforms: element-wise ones (Exp, Power,
Sigmoid, Softplus, Tanh, Abs, Affine), those onto the simplex (Softmax,
StickBreaking), onto matrices (LowerCholesky, PositiveDefinite,
CorrCholesky) and a distribution's cdf. transforms.py holds the base class and
the transforms made of other transforms, and publishes these.
"""

from __future__ import annotations

import math
from typing import Any

import yamlgrad as yg
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.distributions import constraints
from yamlgrad.runtime.distributions.transforms import Transform
from yamlgrad.runtime.nn import functional as F


class ExpTransform(Transform):
    """y = exp(x)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.exp()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = (
            (exponent,)
            if isinstance(exponent, Tensor)
            else (yg.tensor(float(exponent)),)
        )

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self) -> Any:
        return self.exponent.sign()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PowerTransform) and bool(
            (self.exponent == other.exponent).all()
        )

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.pow(self.exponent)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape: Any) -> Any:
        return yg.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    def inverse_shape(self, shape: Any) -> Any:
        return yg.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))


class SigmoidTransform(Transform):
    """y = 1 / (1 + exp(-x)), kept inside (0, 1) of the dtype."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        info = yg.finfo(x.dtype)
        return yg.sigmoid(x).clamp(min=info.tiny, max=1.0 - info.eps)

    def _inverse(self, y: Tensor) -> Tensor:
        info = yg.finfo(y.dtype)
        y = y.clamp(min=info.tiny, max=1.0 - info.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -F.softplus(-x) - F.softplus(x)


class SoftplusTransform(Transform):
    """y = log(1 + exp(x))."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return F.softplus(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -F.softplus(-x)


class TanhTransform(Transform):
    """y = tanh(x); its log |det J| is 2 (log 2 - x - softplus(-2x)), which
    stays finite for large |x|."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.tanh()

    def _inverse(self, y: Tensor) -> Tensor:
        return yg.atanh(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AbsTransform(Transform):
    """y = |x| (not injective: the inverse picks the positive root)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.abs()

    def _inverse(self, y: Tensor) -> Tensor:
        return y


class AffineTransform(Transform):
    """y = loc + scale * x, on `event_dim` rightmost dimensions."""

    bijective = True

    def __init__(
        self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0
    ) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    def _real_of_event_dim(self) -> constraints.Constraint:
        dims = self._event_dim
        return (
            constraints.independent(constraints.real, dims)
            if dims
            else constraints.real
        )

    # Both the reals of the transform's event dimension (a dependent property:
    # the class attribute reads as a constraint).
    domain = constraints.dependent_property(_real_of_event_dim, is_discrete=False)
    codomain = constraints.dependent_property(_real_of_event_dim, is_discrete=False)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return AffineTransform(
            self.loc, self.scale, self.event_dim, cache_size=cache_size
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        return _same(self.loc, other.loc) and _same(self.scale, other.scale)

    __hash__ = object.__hash__

    @property
    def sign(self) -> Any:
        if isinstance(self.scale, (int, float)):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        shape = x.shape
        scale = self.scale
        if isinstance(scale, (int, float)):
            result = yg.full_like(x, math.log(abs(scale)))
        else:
            result = scale.abs().log()
        if self.event_dim:
            result_size = result.shape[: result.dim() - self.event_dim] + (-1,)
            result = result.reshape(result_size).sum(-1)
            shape = shape[: len(shape) - self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape: Any) -> Any:
        return yg.broadcast_shapes(
            shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ())
        )

    def inverse_shape(self, shape: Any) -> Any:
        return self.forward_shape(shape)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, (int, float)) or isinstance(b, (int, float)):
        tensor = a if isinstance(a, Tensor) else b
        number = b if tensor is a else a
        return bool((tensor == number).all())
    return bool((a == b).all())


class SoftmaxTransform(Transform):
    """y = softmax(x) on the last dimension (not injective: the inverse is
    log y up to a constant)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        shifted = x - x.max(-1, keepdim=True)[0]
        probs = shifted.exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    inverse_shape = forward_shape


class StickBreakingTransform(Transform):
    """The unconstrained R^(K-1) onto the K-simplex by breaking a stick: each
    coordinate takes a sigmoid share (offset so that 0 maps to the centre) of
    what the previous ones left."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    @staticmethod
    def _offset(k: int, like: Tensor) -> Tensor:
        return (k - yg.arange(k, dtype=like.dtype)).log()

    def _call(self, x: Tensor) -> Tensor:
        k = x.shape[-1]
        share = yg.sigmoid(x - self._offset(k, x))
        left = (1 - share).cumprod(-1)
        return F.pad(share, [0, 1], value=1) * F.pad(left, [1, 0], value=1)

    def _inverse(self, y: Tensor) -> Tensor:
        body = y[..., :-1]
        k = body.shape[-1]
        remaining = 1 - body.cumsum(-1)
        info = yg.finfo(y.dtype)
        remaining = remaining.clamp(min=info.tiny)
        return body.log() - remaining.log() + self._offset(k, y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        shifted = x - self._offset(x.shape[-1], x)
        return (-shifted + F.logsigmoid(shifted) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Square matrices onto lower Cholesky factors: the strict lower triangle
    kept, the diagonal exponentiated (not injective)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        diagonal = x.diagonal(dim1=-2, dim2=-1).exp()
        return x.tril(-1) + yg.diag_embed(diagonal)

    def _inverse(self, y: Tensor) -> Tensor:
        diagonal = y.diagonal(dim1=-2, dim2=-1).log()
        return y.tril(-1) + yg.diag_embed(diagonal)


class PositiveDefiniteTransform(Transform):
    """Square matrices onto positive-definite ones: L L^T of the lower
    Cholesky factor LowerCholeskyTransform makes."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        factor = LowerCholeskyTransform()(x)
        return factor @ factor.mT

    def _inverse(self, y: Tensor) -> Tensor:
        return LowerCholeskyTransform().inv(yg.linalg.cholesky(y))


class CorrCholeskyTransform(Transform):
    """Unconstrained vectors of length n (n - 1) / 2 onto Cholesky factors of
    n x n correlation matrices: tanh gives partial correlations, which the
    rows turn into unit vectors one stick break at a time."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        from yamlgrad.runtime.distributions.utils import vec_to_tril_matrix

        info = yg.finfo(x.dtype)
        r = yg.tanh(x).clamp(min=-1 + info.eps, max=1 - info.eps)
        z = vec_to_tril_matrix(r, diag=-1)
        n = z.shape[-1]
        eye = yg.eye(n, dtype=x.dtype)
        # Row i: z_ij sqrt(1 - sum_{k<j} w_ik^2), and the diagonal the rest.
        squared = (1 - z.pow(2)).cumprod(-1)
        padded = F.pad(squared[..., :-1], [1, 0], value=1)
        w = (z + eye) * padded.sqrt()
        return w

    def _inverse(self, y: Tensor) -> Tensor:
        from yamlgrad.runtime.distributions.utils import tril_matrix_to_vec

        remaining = 1 - y.pow(2).cumsum(-1)
        info = yg.finfo(y.dtype)
        padded = F.pad(remaining[..., :-1], [1, 0], value=1).clamp(min=info.tiny)
        z = y / padded.sqrt()
        return yg.atanh(tril_matrix_to_vec(z, diag=-1))

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        from yamlgrad.runtime.distributions.utils import tril_matrix_to_vec

        remaining = 1 - y.pow(2).cumsum(-1)
        info = yg.finfo(y.dtype)
        padded = F.pad(remaining[..., :-1], [1, 0], value=1).clamp(min=info.tiny)
        stick = 0.5 * tril_matrix_to_vec(padded.log(), diag=-1)
        tanh_term = 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))
        return (stick + tanh_term).sum(-1)

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        m = shape[-1]
        n = round((0.25 + 2 * m) ** 0.5 + 0.5)
        if n * (n - 1) // 2 != m:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return tuple(shape[:-1]) + (n, n)

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        return tuple(shape[:-2]) + (n * (n - 1) // 2,)


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x) onto the unit interval."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return self.distribution.support

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size)

    def _call(self, x: Tensor) -> Tensor:
        return self.distribution.cdf(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return self.distribution.log_prob(x)
