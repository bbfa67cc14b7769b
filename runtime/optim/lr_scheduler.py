"""Learning-rate schedules, as `torch.optim.lr_scheduler`.

>>> scheduler = StepLR(optimizer, step_size=30, gamma=0.1)
>>> for epoch in range(100):
...     train(...); scheduler.step()

How the module is built:

* `LRScheduler` keeps the bookkeeping every schedule shares (the optimiser,
  `last_epoch`, `base_lrs`, the step counter, the rates last written) and, at
  each `step()`, asks the schedule for the rates of the new epoch through one
  method, `_schedule(current)`, `current` being each group's rate now. Its
  public `get_lr()` is that question asked from outside (with PyTorch's
  warning); a user's subclass that overrides `get_lr()` instead still works.
* A schedule that also knows its rate at any epoch from `base_lrs` alone
  overrides `_rates_at_epoch()`; `step(epoch)` (deprecated, but still used) jumps
  with it, as PyTorch's closed forms do. Without one, `step(epoch)` sets
  `last_epoch` and asks `_schedule` as usual.
* Most schedules multiply the current rate by a factor each epoch, so that
  several of them compose (`ChainedScheduler`). `_FactorSchedule` holds that
  shape once: a schedule says by what the new epoch multiplies the rate
  (`_factor_this_epoch`) and by what epoch `last_epoch` has multiplied the
  initial rate (`_factor_since_start`).

The rates are PyTorch's to the last bit: each factor is computed with the same
floating-point operations in the same order as PyTorch's, which is why the
chained factors are not simply ratios of the closed forms. Rates are Python
floats. The cyclic schedules (CyclicLR, CosineAnnealingWarmRestarts,
OneCycleLR) live in `_cyclic_lr.py` and are re-exported here.
"""

from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import wraps
from typing import Any, SupportsFloat
from weakref import ref

from yamlgrad.runtime.optim.optimizer import Optimizer

__all__ = [
    "LRScheduler",
    "LambdaLR",
    "MultiplicativeLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "SequentialLR",
    "CosineAnnealingLR",
    "ChainedScheduler",
    "ReduceLROnPlateau",
    "CyclicLR",
    "CosineAnnealingWarmRestarts",
    "OneCycleLR",
    "PolynomialLR",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)
_HOW_TO = "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
WARN_STEP_REPLACED = (
    "Seems like `optimizer.step()` has been overridden after learning rate "
    "scheduler initialization. Please, make sure to call `optimizer.step()` before "
    f"`lr_scheduler.step()`. See more details at {_HOW_TO}"
)
WARN_STEP_ORDER = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch "
    "1.1.0 and later, you should call them in the opposite order: "
    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will "
    "result in PyTorch skipping the first value of the learning rate schedule. "
    f"See more details at {_HOW_TO}"
)
WARN_GET_LR = (
    "To get the last learning rate computed by the scheduler, please use "
    "`get_last_lr()`."
)
ERR_NO_INITIAL_LR = (
    "param 'initial_lr' is not specified in param_groups[{}] when resuming "
    "scheduler with last_epoch >= 0.\n"
    "This typically happens when:\n"
    "1. You're trying to resume training from a checkpoint but haven't properly "
    "loaded the optimizer state\n"
    "2. You're using last_epoch >= 0 for a fresh training run (not recommended)"
)

# The attribute marking an `optimizer.step` already wrapped to record its calls.
_STEP_MARK = "_wrapped_by_lr_sched"


def _require_optimizer(optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _per_group(name: str, optimizer: Optimizer, value: Any) -> list[Any]:
    """`value` for every parameter group: a list or tuple of one value per
    group (checked), or one value for all."""
    count = len(optimizer.param_groups)
    if not isinstance(value, (list, tuple)):
        return [value] * count
    if len(value) != count:
        raise ValueError(
            f"{name} must have the same length as optimizer.param_groups. {name} "
            f"has {len(value)} values, param_groups has {count}."
        )
    return list(value)


def _rates_of(optimizer: Optimizer) -> list[Any]:
    return [group["lr"] for group in optimizer.param_groups]


def _record_optimizer_steps(optimizer: Optimizer) -> None:
    """Make `optimizer.step` note that it ran (`optimizer._opt_called`), so the
    first `scheduler.step()` can tell whether the two were called in order.
    Wrapped once per optimiser; the wrapper holds the optimiser weakly."""
    if hasattr(optimizer.step, _STEP_MARK):
        return
    unbound = optimizer.step.__func__  # type: ignore[attr-defined]
    owner = ref(optimizer)

    @wraps(unbound)
    def step_and_note(*args: Any, **kwargs: Any) -> Any:
        opt = owner()
        opt._opt_called = True  # type: ignore[union-attr]
        return unbound(opt, *args, **kwargs)

    setattr(step_and_note, _STEP_MARK, True)
    optimizer.step = step_and_note  # type: ignore[method-assign]


class LRScheduler:
    """The base of the schedules: the shared bookkeeping, and `step()` asking
    the schedule's `_schedule` for the new rates (see the module docstring)."""

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False
    # Attributes state_dict() leaves out (beside the ones a schedule saves by hand).
    _unsaved: tuple[str, ...] = ("optimizer",)

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _require_optimizer(optimizer)
        self.optimizer = optimizer
        for index, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError(ERR_NO_INITIAL_LR.format(index))
        self.base_lrs: list[float] = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        _record_optimizer_steps(optimizer)
        self._initial_step()

    # -- what a schedule provides ---------------------------------------------

    def _schedule(self, current: list[float]) -> list[float]:
        """Each group's rate for epoch `last_epoch`, given its rate now."""
        raise NotImplementedError

    def _rates_at_epoch(self) -> list[float] | None:
        """The rates of epoch `last_epoch` from `base_lrs` alone, if the schedule
        has such a closed form (used by `step(epoch)`); None if not."""
        return None

    # -- PyTorch's API ---------------------------------------------------------

    def get_lr(self) -> list[float]:
        """The rates of the current epoch (use `get_last_lr()` outside `step`)."""
        if not self._get_lr_called_within_step:
            warnings.warn(WARN_GET_LR, UserWarning, stacklevel=2)
        return self._schedule(_rates_of(self.optimizer))

    def get_last_lr(self) -> list[float]:
        """The rates the last `step()` set."""
        return self._last_lr

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's attributes, the optimiser's excepted."""
        return {k: v for k, v in self.__dict__.items() if k not in self._unsaved}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)

    def step(self, epoch: int | None = None) -> None:
        """Move to the next epoch (or to `epoch`, deprecated) and write its
        rates into the parameter groups."""
        if self._step_count == 1:
            self._check_called_after_optimizer()
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    # -- the machinery ---------------------------------------------------------

    def _initial_step(self) -> None:
        """The step every constructor ends with: epoch `last_epoch + 1`'s rates."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def _check_called_after_optimizer(self) -> None:
        if not hasattr(self.optimizer.step, _STEP_MARK):
            warnings.warn(WARN_STEP_REPLACED, UserWarning, stacklevel=3)
        elif not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(WARN_STEP_ORDER, UserWarning, stacklevel=3)

    def _update_lr(self, epoch: int | None = None) -> None:
        """Set `last_epoch` (one on, or `epoch`) and write that epoch's rates."""
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        closed = None if epoch is None else self._rates_at_epoch()
        self._write_rates(self._rates_within_step() if closed is None else closed)

    def _rates_within_step(self) -> list[float]:
        """`get_lr()`, asked by the scheduler itself (so without the warning)."""
        self._get_lr_called_within_step = True
        try:
            return self.get_lr()
        finally:
            self._get_lr_called_within_step = False

    def _write_rates(self, rates: Iterable[float]) -> None:
        for group, rate in zip(self.optimizer.param_groups, rates, strict=True):
            group["lr"] = rate
        self._last_lr = _rates_of(self.optimizer)


class _LRScheduler(LRScheduler):
    """The base class under its pre-2.0 name, which subclasses still use."""


class _FactorSchedule(LRScheduler):
    """A schedule whose every epoch multiplies the groups' rates by one factor
    (1.0 leaves them as they are: IEEE multiplication by one is exact)."""

    def _factor_this_epoch(self) -> float:
        """By what epoch `last_epoch` multiplies the rate of the epoch before."""
        raise NotImplementedError

    def _factor_since_start(self) -> float:
        """By what the schedule has multiplied `base_lrs` at epoch `last_epoch`."""
        raise NotImplementedError

    def _schedule(self, current: list[float]) -> list[float]:
        factor = self._factor_this_epoch()
        return [rate * factor for rate in current]

    def _rates_at_epoch(self) -> list[float]:
        factor = self._factor_since_start()
        return [base * factor for base in self.base_lrs]


def _lambdas_per_group(optimizer: Optimizer, lr_lambda: Any) -> list[Any]:
    count = len(optimizer.param_groups)
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * count
    if len(lr_lambda) != count:
        raise ValueError(f"Expected {count} lr_lambdas, but got {len(lr_lambda)}")
    return list(lr_lambda)


class _LambdaSchedule(LRScheduler):
    """LambdaLR and MultiplicativeLR: one user function per group. Functions do
    not go into the state dict; a callable object's `__dict__` does."""

    _unsaved = ("optimizer", "lr_lambdas")
    lr_lambdas: list[Callable[[int], float]]

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
            for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        saved = state_dict.pop("lr_lambdas")
        try:
            super().load_state_dict(state_dict)
        finally:
            state_dict["lr_lambdas"] = saved
        for fn, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                fn.__dict__.update(attributes)


class LambdaLR(_LambdaSchedule):
    """lr = initial_lr * lr_lambda(epoch), one function or one per group."""

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas_per_group(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def _schedule(self, current: list[float]) -> list[float]:
        epoch = self.last_epoch
        return [
            base * fn(epoch)
            for fn, base in zip(self.lr_lambdas, self.base_lrs, strict=True)
        ]


class MultiplicativeLR(_LambdaSchedule):
    """Each epoch after the first multiplies lr by lr_lambda(epoch)."""

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas_per_group(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(
                    f"lr_lambda should be a function, but got {type(fn).__name__}"
                )
        super().__init__(optimizer, last_epoch)

    def _schedule(self, current: list[float]) -> list[float]:
        if self._is_initial:
            return current
        epoch = self.last_epoch
        return [rate * fn(epoch) for fn, rate in zip(self.lr_lambdas, current)]


class StepLR(_FactorSchedule):
    """lr decays by `gamma` every `step_size` epochs."""

    def __init__(
        self,
        optimizer: Optimizer,
        step_size: int,
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _factor_this_epoch(self) -> float:
        epoch = self.last_epoch
        return self.gamma if epoch != 0 and epoch % self.step_size == 0 else 1.0

    def _factor_since_start(self) -> float:
        return self.gamma ** (self.last_epoch // self.step_size)


class MultiStepLR(_FactorSchedule):
    """lr decays by `gamma` at each epoch of `milestones` (once per listing)."""

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Iterable[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _factor_this_epoch(self) -> float:
        times = self.milestones.get(self.last_epoch, 0)
        return self.gamma**times if times else 1.0

    def _factor_since_start(self) -> float:
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return self.gamma**passed


class ConstantLR(_FactorSchedule):
    """lr is scaled by `factor` until epoch `total_iters`, then restored."""

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if not 0 <= factor <= 1.0:
            raise ValueError(
                "Constant multiplicative factor expected to be between 0 and 1."
            )
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def _factor_this_epoch(self) -> float:
        if self.last_epoch == 0:
            return self.factor
        return 1.0 / self.factor if self.last_epoch == self.total_iters else 1.0

    def _factor_since_start(self) -> float:
        restored = self.last_epoch >= self.total_iters
        return self.factor + restored * (1 - self.factor)


class LinearLR(_FactorSchedule):
    """lr scales linearly from start_factor to end_factor over total_iters
    epochs, then stays."""

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if not 0 < start_factor <= 1.0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and "
                "less or equal to 1."
            )
        if not 0 <= end_factor <= 1.0:
            raise ValueError(
                "Ending multiplicative factor expected to be between 0 and 1."
            )
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def _factor_this_epoch(self) -> float:
        epoch, rise = self.last_epoch, self.end_factor - self.start_factor
        if epoch == 0:
            return self.start_factor
        if self._is_initial or epoch > self.total_iters:
            return 1.0
        # factor(epoch) / factor(epoch - 1), the numerator's terms cancelled.
        return 1.0 + rise / (self.total_iters * self.start_factor + (epoch - 1) * rise)

    def _factor_since_start(self) -> float:
        rise = self.end_factor - self.start_factor
        return self.start_factor + rise * min(self.total_iters, self.last_epoch) / (
            self.total_iters
        )


class ExponentialLR(_FactorSchedule):
    """lr decays by `gamma` every epoch."""

    def __init__(
        self, optimizer: Optimizer, gamma: float, last_epoch: int = -1
    ) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _factor_this_epoch(self) -> float:
        return 1.0 if self._is_initial else self.gamma

    def _factor_since_start(self) -> float:
        return self.gamma**self.last_epoch


class PolynomialLR(_FactorSchedule):
    """lr decays as (1 - epoch / total_iters) ** power, then stays."""

    def __init__(
        self,
        optimizer: Optimizer,
        total_iters: int = 5,
        power: float = 1.0,
        last_epoch: int = -1,
    ) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def _factor_this_epoch(self) -> float:
        epoch, total = self.last_epoch, self.total_iters
        if self._is_initial or epoch > total:
            return 1.0
        left_now, left_before = 1.0 - epoch / total, 1.0 - (epoch - 1) / total
        return (left_now / left_before) ** self.power

    def _factor_since_start(self) -> float:
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        return (1.0 - done) ** self.power


class CosineAnnealingLR(LRScheduler):
    """lr follows half a cosine from the initial rate down to `eta_min` over
    `T_max` epochs, then back up (PyTorch's recursive form, so that it chains)."""

    def __init__(
        self,
        optimizer: Optimizer,
        T_max: int,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def _rates_at_epoch(self) -> list[float]:
        wave = 1 + math.cos(math.pi * self.last_epoch / self.T_max)
        low = self.eta_min
        return [low + (base - low) * wave / 2 for base in self.base_lrs]

    def _schedule(self, current: list[float]) -> list[float]:
        epoch, period, low = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return current
        if self._step_count == 1 and epoch > 0:  # resumed at a later epoch
            return self._rates_at_epoch()
        if (epoch - 1 - period) % (2 * period) == 0:  # the bottom: turn back up
            rise = (1 - math.cos(math.pi / period)) / 2
            return [
                rate + (base - low) * rise
                for base, rate in zip(self.base_lrs, current, strict=True)
            ]
        ratio = (1 + math.cos(math.pi * epoch / period)) / (
            1 + math.cos(math.pi * (epoch - 1) / period)
        )
        return [ratio * (rate - low) + low for rate in current]


# -- schedulers made of schedulers ---------------------------------------------


def _check_members(
    owner: LRScheduler, optimizer: Optimizer, schedulers: Sequence[LRScheduler]
) -> None:
    """What SequentialLR and ChainedScheduler require of the schedulers they run."""
    name = type(owner).__name__
    for index, member in enumerate(schedulers):
        if not hasattr(member, "optimizer"):
            raise TypeError(
                f"{name} at index {index} should have `optimizer` as its attribute."
            )
        if isinstance(member, ReduceLROnPlateau):
            raise ValueError(
                f"{name} does not support `ReduceLROnPlateau` scheduler as it "
                "requires additional kwargs to be specified when calling `step`, "
                f"but got one at index {index} in the given schedulers sequence."
            )
        if optimizer != member.optimizer:
            raise ValueError(
                f"{name} expects all schedulers to belong to the same optimizer, but "
                f"got scheduler {type(member).__name__} at index {index} has "
                f"{member.optimizer}, which is different from "
                f"{type(optimizer).__name__}."
            )


class _Composite(LRScheduler):
    """A scheduler running others: its state dict nests theirs under
    `_schedulers`. Its constructor does not run the base's."""

    _unsaved = ("optimizer", "_schedulers")
    _schedulers: Sequence[LRScheduler]

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        state["_schedulers"] = [member.state_dict() for member in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        nested = state_dict.pop("_schedulers")
        try:
            super().load_state_dict(state_dict)
        finally:
            state_dict["_schedulers"] = nested
        for member, saved in zip(self._schedulers, nested):
            member.load_state_dict(saved)


class SequentialLR(_Composite):
    """Runs `schedulers[i]` from `milestones[i - 1]` to `milestones[i]`, each
    one restarting from its epoch 0 when its turn comes."""

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: list[LRScheduler],
        milestones: list[int],
        last_epoch: int = -1,
    ) -> None:
        if len(schedulers) < 1:
            raise ValueError(
                f"{type(self).__name__} expects at least one scheduler, but got no "
                "scheduler."
            )
        _check_members(self, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one "
                "more than the number of milestone points, but got number of "
                f"schedulers {len(schedulers)} and the number of milestones to be "
                f"equal to {len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Each member's constructor took its initial step; take those back and
        # let only the member in charge of epoch 0 take it again.
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self.recursive_undo()
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def recursive_undo(self, sched: Any = None) -> None:
        """Move every member (members' members included) one epoch back."""
        pending = [self if sched is None else sched]
        while pending:
            item = pending.pop()
            if hasattr(item, "_schedulers"):
                pending.extend(item._schedulers)
            elif hasattr(item, "last_epoch"):
                item.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        self.last_epoch += 1
        turn = bisect_right(self._milestones, self.last_epoch)
        member = self._schedulers[turn]
        if turn > 0 and self._milestones[turn - 1] == self.last_epoch:
            member._update_lr(0)  # its first epoch, from its closed form
        else:
            member.step()
        self._last_lr = member.get_last_lr()


class ChainedScheduler(_Composite):
    """Steps every scheduler in turn, each multiplying what the one before set."""

    def __init__(
        self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None
    ) -> None:
        if len(schedulers) < 1:
            raise ValueError(
                f"{type(self).__name__} expects at least one scheduler to be "
                "chained, but got no scheduler."
            )
        optimizer = optimizer or schedulers[0].optimizer
        _check_members(self, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _rates_of(schedulers[-1].optimizer)

    def step(self) -> None:  # type: ignore[override]
        for member in self._schedulers:
            member.step()
        self._last_lr = _rates_of(self._schedulers[-1].optimizer)


# -- the metric-driven schedule ------------------------------------------------

_IMPROVES: dict[tuple[str, str], Callable[[float, float, float], bool]] = {
    ("min", "rel"): lambda a, best, t: a < best * (1.0 - t),
    ("min", "abs"): lambda a, best, t: a < best - t,
    ("max", "rel"): lambda a, best, t: a > best * (t + 1.0),
    ("max", "abs"): lambda a, best, t: a > best + t,
}


class ReduceLROnPlateau(LRScheduler):
    """Multiplies lr by `factor` once the metric given to `step(metric)` has not
    improved (by `threshold`, relative or absolute) for more than `patience`
    epochs, then waits `cooldown` epochs; never below `min_lr`, and not by less
    than `eps`. Its constructor does not run the base's: there is no initial
    step, the rates stay as the optimiser has them."""

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: list[float] | float = 0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _require_optimizer(optimizer)
        self.optimizer = optimizer
        count = len(optimizer.param_groups)
        self.default_min_lr: float | None
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != count:
                raise ValueError(f"expected {count} min_lrs, got {len(min_lr)}")
            self.default_min_lr, self.min_lrs = None, list(min_lr)
        else:
            self.default_min_lr, self.min_lrs = min_lr, [min_lr] * count
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _rates_of(optimizer)
        self._set_comparison(mode, threshold, threshold_mode)
        self._reset()

    def _set_comparison(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        improves = _IMPROVES[(self.mode, self.threshold_mode)]
        return improves(a, best, self.threshold)

    def step(self, metrics: SupportsFloat, epoch: int | None = None) -> None:  # type: ignore[override]
        value = float(metrics)
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._is_better(value, self.best):
            self.best, self.num_bad_epochs = value, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:  # bad epochs while cooling down do not count
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._lower_rates()
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = _rates_of(self.optimizer)

    def _lower_rates(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) "
                    "differs from when `ReduceLROnPlateau` was initialized "
                    f"({len(self.min_lrs)}), usually due to a new param group being "
                    "added to the optimizer. Please modify the `min_lrs` field to "
                    "match the length of the `optimizer` param groups."
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, floor in zip(groups, self.min_lrs):
            before = float(group["lr"])
            after = max(before * self.factor, floor)
            if before - after > self.eps:
                group["lr"] = after

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        super().load_state_dict(state_dict)
        self._set_comparison(self.mode, self.threshold, self.threshold_mode)


# The cyclic schedules build on the base above, in their own module.
from yamlgrad.runtime.optim._cyclic_lr import (  # noqa: E402
    CosineAnnealingWarmRestarts,
    CyclicLR,
    OneCycleLR,
)
