"""Transforms: invertible maps y = f(x) with the log |det J| of their Jacobian,
the pieces TransformedDistribution and biject_to are made of.

A Transform maps between a `domain` and a `codomain` constraint and knows how
many rightmost dimensions one point spans on each side (their event_dim).
Calls are cached one deep (`cache_size=1`): the inverse of the last output is
the last input, so that log_prob of a sample needs no numerical inverse.
"""

from __future__ import annotations

import weakref
from typing import Any

import yamlgrad as yg
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.distributions import constraints
from yamlgrad.runtime.distributions.utils import _sum_rightmost

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "CatTransform",
    "ComposeTransform",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "ExpTransform",
    "IndependentTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "TanhTransform",
    "Transform",
    "identity_transform",
]


class Transform:
    """An invertible map with a computable log |det J|."""

    bijective = False
    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._inv: Any = None
        self._last: tuple[Any, Any] | None = None
        super().__init__()

    @property
    def event_dim(self) -> int:
        dims = {self.domain.event_dim, self.codomain.event_dim}
        if len(dims) > 1:
            raise ValueError(
                "Please use either .domain.event_dim or .codomain.event_dim"
            )
        return dims.pop()

    @property
    def inv(self) -> Transform:
        """The inverse map (the same object each time while it lives)."""
        inverse = None if self._inv is None else self._inv()
        if inverse is None:
            inverse = _InverseTransform(self)
            self._inv = weakref.ref(inverse)
        return inverse

    @property
    def sign(self) -> Any:
        """The sign of the Jacobian's determinant (for element-wise maps)."""
        raise NotImplementedError

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This transform with a cache of the given size (itself if it has one)."""
        if cache_size == self._cache_size:
            return self
        if type(self).__init__ is not Transform.__init__:
            raise NotImplementedError(f"{type(self)}.with_cache is not implemented")
        return type(self)(cache_size=cache_size)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x: Tensor) -> Tensor:
        if self._cache_size == 0:
            return self._call(x)
        if self._last is not None and self._last[0] is x:
            return self._last[1]
        y = self._call(x)
        self._last = (x, y)
        return y

    def _inv_call(self, y: Tensor) -> Tensor:
        if self._cache_size == 0:
            return self._inverse(y)
        if self._last is not None and self._last[1] is y:
            return self._last[0]
        x = self._inverse(y)
        self._last = (x, y)
        return x

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """log |dy/dx|, summed over the event dimensions."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__ + "()"

    def forward_shape(self, shape: Any) -> Any:
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        return shape


class _InverseTransform(Transform):
    """The inverse of a transform, sharing its cache."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform  # a strong reference: the inverse keeps its twin

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.codomain

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.domain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self._inv.bijective

    @property
    def sign(self) -> Any:
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x: Tensor) -> Tensor:
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape: Any) -> Any:
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """parts applied in order: ComposeTransform([f, g])(x) = g(f(x))."""

    def __init__(self, parts: list[Transform], cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        self.parts = list(parts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    def _event_dims(self) -> tuple[int, int]:
        """How many dimensions one point spans at the chain's input and at its
        output: enough for every part on the way (a part with a vector domain
        after an element-wise one makes the whole chain act on vectors)."""
        need = 0
        for part in reversed(self.parts):
            need = max(
                part.domain.event_dim,
                need + part.domain.event_dim - part.codomain.event_dim,
            )
        out = need
        for part in self.parts:
            out += part.codomain.event_dim - part.domain.event_dim
        return need, out

    @staticmethod
    def _spanning(
        constraint: constraints.Constraint, dims: int
    ) -> constraints.Constraint:
        extra = dims - constraint.event_dim
        return constraints.independent(constraint, extra) if extra > 0 else constraint

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        return self._spanning(self.parts[0].domain, self._event_dims()[0])

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        return self._spanning(self.parts[-1].codomain, self._event_dims()[1])

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(part.bijective for part in self.parts)

    @property
    def sign(self) -> Any:
        sign = 1
        for part in self.parts:
            sign = sign * part.sign
        return sign

    @property
    def inv(self) -> Transform:
        inverse = None if self._inv is None else self._inv()
        if inverse is None:
            inverse = ComposeTransform([part.inv for part in reversed(self.parts)])
            self._inv = weakref.ref(inverse)
            inverse._inv = weakref.ref(self)
        return inverse

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x: Tensor) -> Tensor:
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        if not self.parts:
            return yg.zeros_like(x)
        # Each part's term is summed down to the chain's event dimension.
        inputs = [x]
        for part in self.parts[:-1]:
            inputs.append(part(inputs[-1]))
        inputs.append(y)
        total: Any = 0
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, inputs[:-1], inputs[1:]):
            term = part.log_abs_det_jacobian(a, b)
            total = total + _sum_rightmost(term, event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape: Any) -> Any:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        inner = ",\n    ".join(repr(part) for part in self.parts)
        return f"{type(self).__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """base_transform with `reinterpreted_batch_ndims` more event dimensions:
    its log |det J| is summed over them."""

    def __init__(
        self,
        base_transform: Transform,
        reinterpreted_batch_ndims: int,
        cache_size: int = 0,
    ) -> None:
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self.base_transform = base_transform.with_cache(cache_size)
        super().__init__(cache_size=cache_size)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(
            self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size
        )

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(
            self.base_transform.domain, self.reinterpreted_batch_ndims
        )

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(
            self.base_transform.codomain, self.reinterpreted_batch_ndims
        )

    bijective = property(lambda self: self.base_transform.bijective)  # type: ignore[assignment]

    @property
    def sign(self) -> Any:
        return self.base_transform.sign

    def _call(self, x: Tensor) -> Tensor:
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y: Tensor) -> Tensor:
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        term = self.base_transform.log_abs_det_jacobian(x, y)
        return _sum_rightmost(term, self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.base_transform!r}, "
            f"{self.reinterpreted_batch_ndims})"
        )

    def forward_shape(self, shape: Any) -> Any:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """A reshape of the rightmost dimensions from in_shape to out_shape."""

    bijective = True

    def __init__(self, in_shape: Any, out_shape: Any, cache_size: int = 0) -> None:
        self.in_shape = yg.Size(in_shape)
        self.out_shape = yg.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x: Tensor) -> Tensor:
        batch = x.shape[: x.dim() - len(self.in_shape)]
        return x.reshape(batch + self.out_shape)

    def _inverse(self, y: Tensor) -> Tensor:
        batch = y.shape[: y.dim() - len(self.out_shape)]
        return y.reshape(batch + self.in_shape)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        batch = x.shape[: x.dim() - len(self.in_shape)]
        return yg.zeros(batch, dtype=x.dtype)

    def forward_shape(self, shape: Any) -> Any:
        cut = len(shape) - len(self.in_shape)
        return tuple(shape[:cut]) + tuple(self.out_shape)

    def inverse_shape(self, shape: Any) -> Any:
        cut = len(shape) - len(self.out_shape)
        return tuple(shape[:cut]) + tuple(self.in_shape)


class CatTransform(Transform):
    """Transforms applied to consecutive pieces of `dim`."""

    def __init__(
        self, tseq: Any, dim: int = 0, lengths: Any = None, cache_size: int = 0
    ) -> None:
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) for t in tseq]
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        self.dim = dim

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.cat(
            [t.domain for t in self.transforms], self.dim, self.lengths
        )

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.cat(
            [t.codomain for t in self.transforms], self.dim, self.lengths
        )

    def _pieces(self, x: Tensor) -> list[Tensor]:
        out, start = [], 0
        for length in self.lengths:
            out.append(x.narrow(self.dim, start, length))
            start += length
        return out

    def _call(self, x: Tensor) -> Tensor:
        return yg.cat(
            [t(p) for t, p in zip(self.transforms, self._pieces(x))], self.dim
        )

    def _inverse(self, y: Tensor) -> Tensor:
        return yg.cat(
            [t.inv(p) for t, p in zip(self.transforms, self._pieces(y))], self.dim
        )

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        terms = [
            t.log_abs_det_jacobian(a, b)
            for t, a, b in zip(self.transforms, self._pieces(x), self._pieces(y))
        ]
        return yg.cat(terms, self.dim)


class StackTransform(Transform):
    """Transforms applied to the slices of `dim`, one each."""

    def __init__(self, tseq: Any, dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) for t in tseq]
        self.dim = dim

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.stack([t.codomain for t in self.transforms], self.dim)

    def _slices(self, x: Tensor) -> list[Tensor]:
        return [x.select(self.dim, i) for i in range(x.shape[self.dim])]

    def _call(self, x: Tensor) -> Tensor:
        return yg.stack(
            [t(s) for t, s in zip(self.transforms, self._slices(x))], self.dim
        )

    def _inverse(self, y: Tensor) -> Tensor:
        return yg.stack(
            [t.inv(s) for t, s in zip(self.transforms, self._slices(y))], self.dim
        )

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        terms = [
            t.log_abs_det_jacobian(a, b)
            for t, a, b in zip(self.transforms, self._slices(x), self._slices(y))
        ]
        return yg.stack(terms, self.dim)


# The maps live in their own module (they import Transform from this one).
from yamlgrad.runtime.distributions._transform_maps import (  # noqa: E402
    AbsTransform,
    AffineTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StickBreakingTransform,
    TanhTransform,
)
