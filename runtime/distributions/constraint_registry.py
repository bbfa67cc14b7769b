"""biject_to and transform_to: from a constraint to a Transform whose codomain
it is, for optimising a constrained parameter through an unconstrained one.

`biject_to(c)` gives a bijection (its inverse exact); `transform_to(c)` any
map onto c (SoftmaxTransform for the simplex, LowerCholeskyTransform). Each is
a registry by constraint type or instance; `register` adds a factory.
"""

from __future__ import annotations

from typing import Any, Callable

from yamlgrad.runtime.distributions import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]

Factory = Callable[[Any], transforms.Transform]


class ConstraintRegistry:
    """A table from constraint types to factories of transforms."""

    def __init__(self) -> None:
        self._registry: dict[type, Factory] = {}
        super().__init__()

    def register(self, constraint: Any, factory: Factory | None = None) -> Any:
        """Record `factory` for a constraint type (or an instance's type); as a
        decorator without factory."""
        if factory is None:
            return lambda f: self.register(constraint, f)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(
            constraint, constraints.Constraint
        ):
            raise TypeError(
                "Expected constraint to be either a Constraint subclass or instance, "
                f"but got {constraint}"
            )
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: constraints.Constraint) -> transforms.Transform:
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints"
            ) from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _to_real(constraint: Any) -> transforms.Transform:
    return transforms.identity_transform


def _to_independent_bijection(constraint: Any) -> transforms.Transform:
    inner = biject_to(constraint.base_constraint)
    return transforms.IndependentTransform(inner, constraint.reinterpreted_batch_ndims)


def _to_independent(constraint: Any) -> transforms.Transform:
    inner = transform_to(constraint.base_constraint)
    return transforms.IndependentTransform(inner, constraint.reinterpreted_batch_ndims)


def _to_positive(constraint: Any) -> transforms.Transform:
    return transforms.ExpTransform()


def _to_greater_than(constraint: Any) -> transforms.Transform:
    return transforms.ComposeTransform(
        [
            transforms.ExpTransform(),
            transforms.AffineTransform(constraint.lower_bound, 1),
        ]
    )


def _to_less_than(constraint: Any) -> transforms.Transform:
    return transforms.ComposeTransform(
        [
            transforms.ExpTransform(),
            transforms.AffineTransform(constraint.upper_bound, -1),
        ]
    )


def _to_interval(constraint: Any) -> transforms.Transform:
    low, high = constraint.lower_bound, constraint.upper_bound
    unit = (
        isinstance(low, (int, float))
        and low == 0
        and isinstance(high, (int, float))
        and high == 1
    )
    if unit:
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform(
        [transforms.SigmoidTransform(), transforms.AffineTransform(low, high - low)]
    )


def _to_simplex_bijection(constraint: Any) -> transforms.Transform:
    return transforms.StickBreakingTransform()


def _to_simplex(constraint: Any) -> transforms.Transform:
    return transforms.SoftmaxTransform()


def _to_lower_cholesky(constraint: Any) -> transforms.Transform:
    return transforms.LowerCholeskyTransform()


def _to_positive_definite(constraint: Any) -> transforms.Transform:
    return transforms.PositiveDefiniteTransform()


def _to_corr_cholesky(constraint: Any) -> transforms.Transform:
    return transforms.CorrCholeskyTransform()


def _to_cat(registry: ConstraintRegistry) -> Factory:
    def factory(constraint: Any) -> transforms.Transform:
        parts = [registry(c) for c in constraint.cseq]
        return transforms.CatTransform(parts, constraint.dim, constraint.lengths)

    return factory


def _to_stack(registry: ConstraintRegistry) -> Factory:
    def factory(constraint: Any) -> transforms.Transform:
        parts = [registry(c) for c in constraint.cseq]
        return transforms.StackTransform(parts, constraint.dim)

    return factory


_BOTH: list[tuple[Any, Factory]] = [
    (constraints.real, _to_real),
    (constraints.positive, _to_positive),
    (constraints.greater_than, _to_greater_than),
    (constraints.greater_than_eq, _to_greater_than),
    (constraints.less_than, _to_less_than),
    (constraints.interval, _to_interval),
    (constraints.half_open_interval, _to_interval),
    (constraints.corr_cholesky, _to_corr_cholesky),
]
for _constraint, _factory in _BOTH:
    biject_to.register(_constraint, _factory)
    transform_to.register(_constraint, _factory)

biject_to.register(constraints.independent, _to_independent_bijection)
transform_to.register(constraints.independent, _to_independent)
biject_to.register(constraints.simplex, _to_simplex_bijection)
transform_to.register(constraints.simplex, _to_simplex)
transform_to.register(constraints.lower_cholesky, _to_lower_cholesky)
transform_to.register(constraints.positive_definite, _to_positive_definite)
transform_to.register(constraints.positive_semidefinite, _to_positive_definite)
biject_to.register(constraints.cat, _to_cat(biject_to))
transform_to.register(constraints.cat, _to_cat(transform_to))
biject_to.register(constraints.stack, _to_stack(biject_to))
transform_to.register(constraints.stack, _to_stack(transform_to))
