"""The base class of every distribution: shapes, argument validation, and the
interface (sample, rsample, log_prob, moments) the families fill in.

Shapes follow one rule: a sample of `sample_shape` has shape
`sample_shape + batch_shape + event_shape`; log_prob reduces the event
dimensions. Validation is on by default (as under Python's `__debug__`) and
raises PyTorch's messages; `Distribution.set_default_validate_args(False)`
turns it off for every distribution made afterwards.

A family that can draw differentiably defines `rsample` and sets
`has_rsample`; its `sample` is the same draw made under `no_grad`.
"""

from __future__ import annotations

import warnings
from typing import Any

import yamlgrad as yg
from yamlgrad.runtime.autograd.tensor import Size, Tensor
from yamlgrad.runtime.distributions import constraints
from yamlgrad.runtime.distributions.utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """A probability distribution over tensors of `event_shape`, one per entry
    of `batch_shape`."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument and sample validation on or off for new instances."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(
        self,
        batch_shape: Any = Size(),
        event_shape: Any = Size(),
        validate_args: bool | None = None,
    ) -> None:
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self) -> None:
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(
                f"{self.__class__} does not define `arg_constraints`. "
                "Please set `arg_constraints = {}` or initialize the distribution "
                "with `validate_args=False` to turn off validation."
            )
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            # A parameter not given (logits when probs was) is computed on
            # demand: it is not checked, so not computed.
            if param not in self.__dict__ and isinstance(
                getattr(type(self), param), lazy_property
            ):
                continue
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(
                    f"Expected parameter {param} "
                    f"({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {self!r} "
                    f"to satisfy the constraint {constraint!r}, "
                    f"but found invalid values:\n{value}"
                )

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        """A distribution of the same parameters broadcast to `batch_shape`
        (no copy: the parameters are expanded views)."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of one sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """Each parameter's constraint."""
        raise NotImplementedError

    @property
    def support(self) -> Any:
        """The constraint a sample satisfies."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        """A draw of shape `sample_shape + batch_shape + event_shape`, without
        gradient."""
        with yg.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        """A reparameterised draw: differentiable in the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        """n draws (deprecated: `sample((n,))`)."""
        warnings.warn(
            "`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
            FutureWarning,
            stacklevel=2,
        )
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        """The log density (or mass) of value."""
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        """The cumulative distribution function at value."""
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        """The inverse of cdf."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every value of a discrete support, along a new leftmost dimension."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return yg.exp(self.entropy())

    def _extended_shape(self, sample_shape: Any = Size()) -> Size:
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape = Size(value.shape)
        start = len(shape) - len(self._event_shape)
        if shape[start:] != self._event_shape:
            raise ValueError(
                "The right-most size of value must match event_shape: "
                f"{shape} vs {self._event_shape}."
            )
        expected = self._batch_shape + self._event_shape
        for got, want in zip(reversed(shape), reversed(expected)):
            if got != 1 and want != 1 and got != want:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{shape} vs {expected}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable "
                "sample validation. Please initialize the distribution with "
                "`validate_args=False` to turn off validation."
            )
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) "
                f"of the distribution {self!r}, "
                f"but found invalid values:\n{value}"
            )

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines "
                "a custom __init__ method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def _expanded(
        self, cls: type, batch_shape: Any, _instance: Any, names: Any = None
    ) -> Any:
        """A new `cls` whose tensors (the parameters in `names`, by default
        the constrained ones, and whichever of their lazy twins were computed)
        are this one's expanded to `batch_shape`, keeping their event
        dimensions. The families' `expand` is this call."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        names = list(self.arg_constraints) if names is None else list(names)
        for name in names:
            value = self.__dict__.get(name)
            if isinstance(value, Tensor):
                kept = tuple(value.shape[len(self._batch_shape) :])
                setattr(new, name, value.expand(batch_shape + kept))
            elif value is not None:
                setattr(new, name, value)
        Distribution.__init__(new, batch_shape, self._event_shape, False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self) -> str:
        shown = []
        for name in self.arg_constraints:
            if name not in self.__dict__:
                continue
            value = self.__dict__[name]
            shown.append(f"{name}: {value if value.numel() == 1 else value.size()}")
        return f"{type(self).__name__}({', '.join(shown)})"
