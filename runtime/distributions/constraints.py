"""Constraints: the sets a parameter or a sample may take values in.

A constraint answers `check(value)` with a boolean tensor of the value's batch
shape (the event dimensions, `event_dim` of them, are reduced: a simplex is
checked per vector). The names (`positive`, `simplex`, ...) are instances; the
parameterised ones (`interval(0, 1)`) are classes named as PyTorch's, whose
reprs drop the leading underscore (`GreaterThan(lower_bound=0.0)`).

`dependent` marks a parameter or support that depends on other arguments
(Uniform's support depends on low and high): it is never checked, and a
family declares such a support with `dependent_property`.
"""

from __future__ import annotations

from typing import Any, Callable

import yamlgrad as yg
from yamlgrad.runtime.autograd.tensor import Tensor

__all__ = [
    "boolean",
    "cat",
    "Constraint",
    "corr_cholesky",
    "dependent",
    "dependent_property",
    "greater_than",
    "greater_than_eq",
    "half_open_interval",
    "independent",
    "integer_interval",
    "interval",
    "is_dependent",
    "less_than",
    "lower_cholesky",
    "lower_triangular",
    "MixtureSameFamilyConstraint",
    "multinomial",
    "nonnegative",
    "nonnegative_integer",
    "one_hot",
    "positive",
    "positive_definite",
    "positive_integer",
    "positive_semidefinite",
    "real",
    "real_vector",
    "simplex",
    "square",
    "stack",
    "symmetric",
    "unit_interval",
]


class Constraint:
    """A region of values. `is_discrete` says whether it is countable, and
    `event_dim` how many rightmost dimensions form one point of it."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        """A boolean tensor: whether each point of value lies in the region."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__[1:] + "()"


def _reduce_event(ok: Tensor, dims: int) -> Tensor:
    """ok with its `dims` rightmost dimensions folded by `all`."""
    for _ in range(dims):
        ok = ok.all(-1)
    return ok


class _Dependent(Constraint):
    """A placeholder for a region that depends on other arguments: never
    checked. Called, it makes one with other flags (`dependent(event_dim=1)`).
    A flag left unknown (NotImplemented) raises when it is read."""

    def __init__(
        self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented
    ) -> None:
        self._flags = {"is_discrete": is_discrete, "event_dim": event_dim}
        super().__init__()

    def _flag(self, name: str) -> Any:
        value = self._flags[name]
        if value is NotImplemented:
            raise NotImplementedError(f".{name} cannot be determined statically")
        return value

    is_discrete = property(lambda self: self._flag("is_discrete"))  # type: ignore[assignment]
    event_dim = property(lambda self: self._flag("event_dim"))  # type: ignore[assignment]

    def __call__(
        self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented
    ) -> _Dependent:
        given = {"is_discrete": is_discrete, "event_dim": event_dim}
        flags = {
            k: self._flags[k] if v is NotImplemented else v for k, v in given.items()
        }
        return _Dependent(**flags)

    def check(self, x: Tensor) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    """Whether a constraint is `dependent` (so never checked)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that is also a `dependent` constraint: the class attribute
    reads as a constraint, an instance's as the computed support."""

    def __init__(
        self,
        fn: Callable[..., Any] | None = None,
        *,
        is_discrete: Any = NotImplemented,
        event_dim: Any = NotImplemented,
    ) -> None:
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn: Callable[..., Any]) -> _DependentProperty:  # type: ignore[override]
        return _DependentProperty(fn, **self._flags)


class _IndependentConstraint(Constraint):
    """A constraint whose `reinterpreted_batch_ndims` rightmost batch
    dimensions become event dimensions."""

    def __init__(
        self, base_constraint: Constraint, reinterpreted_batch_ndims: int
    ) -> None:
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"Expected a Constraint, got {type(base_constraint)}")
        if (
            not isinstance(reinterpreted_batch_ndims, int)
            or reinterpreted_batch_ndims < 0
        ):
            raise ValueError("reinterpreted_batch_ndims must be a non-negative int")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        # Fixed at construction: the base's flags, with the moved dimensions.
        self.is_discrete = base_constraint.is_discrete
        self.event_dim = base_constraint.event_dim + reinterpreted_batch_ndims

    def check(self, value: Tensor) -> Tensor:
        ok = self.base_constraint.check(value)
        if ok.dim() < self.reinterpreted_batch_ndims:
            raise ValueError(
                f"Expected value.dim() >= {self.event_dim} but got {value.dim()}"
            )
        return _reduce_event(ok, self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__[1:]}({self.base_constraint!r}, "
            f"{self.reinterpreted_batch_ndims})"
        )


class MixtureSameFamilyConstraint(Constraint):
    """The support of a MixtureSameFamily: its component's, checked after
    folding the component dimension."""

    def __init__(self, base_constraint: Constraint) -> None:
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"Expected a Constraint, got {type(base_constraint)}")
        self.base_constraint = base_constraint
        self.is_discrete = base_constraint.is_discrete
        self.event_dim = base_constraint.event_dim

    def check(self, value: Tensor) -> Tensor:
        # A sample has no component dimension: the component's own check.
        return self.base_constraint.check(value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_constraint!r})"


class _Boolean(Constraint):
    """{0, 1}."""

    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    """Vectors of zeros with a single one."""

    is_discrete = True
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        binary = ((value == 0) | (value == 1)).all(-1)
        return binary & (value.sum(-1) == 1)


class _IntegerInterval(Constraint):
    """Integers in [lower_bound, upper_bound]."""

    is_discrete = True

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        return (
            (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, "
            f"upper_bound={self.upper_bound})"
        )


class _IntegerLessThan(Constraint):
    """Integers at most upper_bound."""

    is_discrete = True

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}(upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    """Integers at least lower_bound."""

    is_discrete = True

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound})"


class _Real(Constraint):
    """The extended real line, without nan."""

    def check(self, value: Tensor) -> Tensor:
        return value == value


class _GreaterThan(Constraint):
    """(lower_bound, inf)."""

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        return self.lower_bound < value

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    """[lower_bound, inf)."""

    def check(self, value: Tensor) -> Tensor:
        return self.lower_bound <= value


class _LessThan(Constraint):
    """(-inf, upper_bound)."""

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    """[lower_bound, upper_bound]."""

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, "
            f"upper_bound={self.upper_bound})"
        )


class _HalfOpenInterval(_Interval):
    """[lower_bound, upper_bound)."""

    def check(self, value: Tensor) -> Tensor:
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    """Nonnegative vectors summing to one (within 1e-6)."""

    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        nonnegative = (value >= 0).all(-1)
        return nonnegative & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Nonnegative integer vectors summing to at most upper_bound."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: int) -> None:
        self.upper_bound = upper_bound

    def check(self, x: Tensor) -> Tensor:
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


class _LowerTriangular(Constraint):
    """Square lower-triangular matrices."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        return _reduce_event(yg.tril(value) == value, 2)


class _LowerCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        triangular = _reduce_event(yg.tril(value) == value, 2)
        positive_diagonal = (yg.diagonal(value, dim1=-2, dim2=-1) > 0).all(-1)
        return triangular & positive_diagonal


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: rows of unit norm."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        tol = yg.finfo(value.dtype).eps * value.shape[-1] * 10
        row_norm = yg.linalg.norm(value.detach(), dim=-1)
        unit_rows = ((row_norm - 1.0).abs() <= tol).all(-1)
        return _LowerCholesky().check(value) & unit_rows


class _Square(Constraint):
    """Square matrices."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        square = value.shape[-2] == value.shape[-1]
        return yg.full(value.shape[:-2], square, dtype=yg.bool)


class _Symmetric(_Square):
    """Symmetric matrices."""

    def check(self, value: Tensor) -> Tensor:
        square = super().check(value)
        if not bool(square.all()):
            return square
        return _reduce_event(yg.isclose(value, value.mT, atol=1e-6), 2)


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices with nonnegative eigenvalues."""

    def check(self, value: Tensor) -> Tensor:
        symmetric = super().check(value)
        if not bool(symmetric.all()):
            return symmetric
        return (yg.linalg.eigvalsh(value) >= 0).all(-1)


class _PositiveDefinite(_Symmetric):
    """Symmetric matrices with positive eigenvalues (a Cholesky factor exists)."""

    def check(self, value: Tensor) -> Tensor:
        symmetric = super().check(value)
        if not bool(symmetric.all()):
            return symmetric
        return yg.linalg.cholesky_ex(value).info == 0


class _Cat(Constraint):
    """Constraints applied to consecutive pieces of `dim` (lengths given)."""

    def __init__(self, cseq: Any, dim: int = 0, lengths: Any = None) -> None:
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ValueError("lengths and constraints differ in length")
        self.dim = dim
        self.is_discrete = any(c.is_discrete for c in self.cseq)
        self.event_dim = max(c.event_dim for c in self.cseq)

    def check(self, value: Tensor) -> Tensor:
        pieces = []
        start = 0
        for constraint, length in zip(self.cseq, self.lengths):
            pieces.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return yg.cat(pieces, self.dim)


class _Stack(Constraint):
    """Constraints applied to the slices of `dim`, one each."""

    def __init__(self, cseq: Any, dim: int = 0) -> None:
        self.cseq = list(cseq)
        self.dim = dim
        self.is_discrete = any(c.is_discrete for c in self.cseq)
        # A negative dim inside the pieces' events makes it one more event dim.
        inner = max(c.event_dim for c in self.cseq)
        self.event_dim = inner + 1 if dim + inner < 0 else inner

    def check(self, value: Tensor) -> Tensor:
        slices = [value.select(self.dim, i) for i in range(value.shape[self.dim])]
        return yg.stack([c.check(v) for c, v in zip(self.cseq, slices)], self.dim)


# The public names. Fixed regions are instances ...
boolean = _Boolean()
one_hot = _OneHot()
real = _Real()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
unit_interval = _Interval(0.0, 1.0)
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
dependent = _Dependent()

# ... parameterised ones are the classes themselves.
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
interval = _Interval
half_open_interval = _HalfOpenInterval
integer_interval = _IntegerInterval
multinomial = _Multinomial
independent = _IndependentConstraint
cat = _Cat
stack = _Stack
dependent_property = _DependentProperty
real_vector = independent(real, 1)
