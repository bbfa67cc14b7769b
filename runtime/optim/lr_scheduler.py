"""Learning-rate schedules, as `torch.optim.lr_scheduler`: each `step()` moves
`last_epoch` on and writes the new rate into every parameter group's `lr`.

>>> scheduler = StepLR(optimizer, step_size=30, gamma=0.1)
>>> for epoch in range(100):
...     train(...); scheduler.step()
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from yamlgrad.runtime.optim.optimizer import Optimizer

__all__ = [
    "LRScheduler",
    "LambdaLR",
    "StepLR",
    "MultiStepLR",
    "ExponentialLR",
    "LinearLR",
    "CosineAnnealingLR",
    "ReduceLROnPlateau",
    "OneCycleLR",
]


class LRScheduler:
    """The base: `get_lr()` gives each group's rate for `last_epoch`."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] "
                        "when resuming an optimizer"
                    )
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self.step()

    def get_lr(self) -> list[float]:
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The rates the last `step()` set."""
        return self._last_lr

    def step(self) -> None:
        """Advance one epoch and set every group's learning rate."""
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _groups(self) -> list[dict[str, Any]]:
        return self.optimizer.param_groups

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimiser (and functions, which cannot be saved)."""
        return {
            key: value
            for key, value in self.__dict__.items()
            if key not in ("optimizer", "lr_lambdas")
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(epoch), one function or one per group."""

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        groups = optimizer.param_groups
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(groups)
        else:
            if len(lr_lambda) != len(groups):
                raise ValueError(
                    f"Expected {len(groups)} lr_lambdas, but got {len(lr_lambda)}"
                )
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [
            base * fn(self.last_epoch)
            for fn, base in zip(self.lr_lambdas, self.base_lrs)
        ]


class StepLR(LRScheduler):
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

    def get_lr(self) -> list[float]:
        groups = self._groups()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [group["lr"] for group in groups]
        return [group["lr"] * self.gamma for group in groups]


class MultiStepLR(LRScheduler):
    """lr decays by `gamma` at each epoch listed in `milestones`."""

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Sequence[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        self.milestones = sorted(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        times = self.milestones.count(self.last_epoch)
        return [group["lr"] * self.gamma**times for group in self._groups()]


class ExponentialLR(LRScheduler):
    """lr decays by `gamma` every epoch."""

    def __init__(
        self, optimizer: Optimizer, gamma: float, last_epoch: int = -1
    ) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [group["lr"] for group in self._groups()]
        return [group["lr"] * self.gamma for group in self._groups()]


class LinearLR(LRScheduler):
    """lr scales linearly from start_factor to end_factor over total_iters epochs."""

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and "
                "less or equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError(
                "Ending multiplicative factor expected to be between 0 and 1."
            )
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        groups = self._groups()
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in groups]
        if self.last_epoch > self.total_iters:
            return [group["lr"] for group in groups]
        span = self.end_factor - self.start_factor
        factor = 1.0 + span / (
            self.total_iters * self.start_factor + (self.last_epoch - 1) * span
        )
        return [group["lr"] * factor for group in groups]


class CosineAnnealingLR(LRScheduler):
    """lr follows a cosine from the initial rate down to `eta_min` over `T_max`
    epochs (PyTorch's recursive form, so the values match its)."""

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

    def get_lr(self) -> list[float]:
        groups, epoch, t_max = self._groups(), self.last_epoch, self.T_max
        if epoch == 0:
            return [group["lr"] for group in groups]
        if epoch == 1 and t_max == 1:
            return [self.eta_min] * len(groups)
        if (epoch - 1 - t_max) % (2 * t_max) == 0:
            return [
                group["lr"]
                + (base - self.eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                for base, group in zip(self.base_lrs, groups)
            ]
        return [
            (1 + math.cos(math.pi * epoch / t_max))
            / (1 + math.cos(math.pi * (epoch - 1) / t_max))
            * (group["lr"] - self.eta_min)
            + self.eta_min
            for group in groups
        ]


class ReduceLROnPlateau(LRScheduler):
    """Multiply each group's rate by `factor` once the metric given to
    `step(metric)` has not improved (by `threshold`, relative or absolute) for
    more than `patience` epochs; then wait `cooldown` epochs; never below
    `min_lr`, and not by less than `eps`."""

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: float | Sequence[float] = 0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.factor = factor
        self.optimizer = optimizer
        groups = optimizer.param_groups
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(groups):
                raise ValueError(f"expected {len(groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(groups)
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in groups]
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics: Any, epoch: int | None = None) -> None:  # type: ignore[override]
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for i, group in enumerate(self.optimizer.param_groups):
                old_lr = float(group["lr"])
                new_lr = max(old_lr * self.factor, self.min_lrs[i])
                if old_lr - new_lr > self.eps:
                    group["lr"] = new_lr
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def is_better(self, a: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold


def _format_param(name: str, optimizer: Optimizer, param: Any) -> list[Any]:
    """One value per parameter group: a list of them, or one for all."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"expected {len(optimizer.param_groups)} values for {name}, got "
                f"{len(param)}"
            )
        return list(param)
    return [param] * len(optimizer.param_groups)


def _positive_int(name: str, value: Any) -> int:
    if not isinstance(value, int) or value <= 0:
        raise ValueError(f"Expected positive integer {name}, but got {value}")
    return value


def _one_cycle_phases(
    total_steps: int, pct_start: float, three_phase: bool
) -> list[dict[str, Any]]:
    """OneCycleLR's phases: the step each ends at, and the group keys of the
    rates and momenta it moves between."""
    ends = [float(pct_start * total_steps) - 1]
    names = [("initial_lr", "max_lr", "max_momentum", "base_momentum")]
    if three_phase:
        ends.append(float(2 * pct_start * total_steps) - 2)
        names.append(("max_lr", "initial_lr", "base_momentum", "max_momentum"))
        names.append(("initial_lr", "min_lr", "max_momentum", "max_momentum"))
    else:
        names.append(("max_lr", "min_lr", "base_momentum", "max_momentum"))
    ends.append(total_steps - 1)
    keys = ("start_lr", "end_lr", "start_momentum", "end_momentum")
    return [
        {"end_step": end, **dict(zip(keys, phase))} for end, phase in zip(ends, names)
    ]


class OneCycleLR(LRScheduler):
    """The 1cycle policy, stepped once per batch: the rate rises from
    max_lr / div_factor to max_lr over `pct_start` of the steps, then anneals
    (cosine or linear) down to initial_lr / final_div_factor, the momentum (or
    Adam's beta1) moving the opposite way; `three_phase` returns to the initial
    rate before the final annealing."""

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | Sequence[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | Sequence[float] = 0.85,
        max_momentum: float | Sequence[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            self.total_steps = _positive_int("total_steps", total_steps)
        elif epochs is not None and steps_per_epoch is not None:
            self.total_steps = _positive_int("epochs", epochs) * _positive_int(
                "steps_per_epoch", steps_per_epoch
            )
        else:
            raise ValueError(
                "You must define either total_steps OR (epochs AND steps_per_epoch)"
            )
        self._schedule_phases = _one_cycle_phases(
            self.total_steps, pct_start, three_phase
        )
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(
                f"Expected float between 0 and 1 pct_start, but got {pct_start}"
            )
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                "anneal_strategy must be one of 'cos' or 'linear', instead got "
                f"{anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for lr, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = lr / div_factor
                group["max_lr"] = lr
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._start_momentum(optimizer, max_momentum, base_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    def _start_momentum(
        self,
        optimizer: Optimizer,
        max_momentum: Any,
        base_momentum: Any,
        last_epoch: int,
    ) -> None:
        defaults = optimizer.defaults
        if "momentum" not in defaults and "betas" not in defaults:
            raise ValueError(
                "optimizer must support momentum or beta1 with `cycle_momentum` "
                "option enabled"
            )
        self.use_beta1 = "betas" in defaults
        highs = _format_param("max_momentum", optimizer, max_momentum)
        lows = _format_param("base_momentum", optimizer, base_momentum)
        if last_epoch == -1:
            for high, low, group in zip(highs, lows, optimizer.param_groups):
                self._set_momentum(group, high)
                group["max_momentum"] = high
                group["base_momentum"] = low

    def _set_momentum(self, group: dict[str, Any], value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(
                f"Tried to step {step_num} times. The specified number of total "
                f"steps is {self.total_steps}"
            )
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lr = self._anneal(
                        group[phase["start_lr"]], group[phase["end_lr"]], pct
                    )
                    if self.cycle_momentum:
                        momentum = self._anneal(
                            group[phase["start_momentum"]],
                            group[phase["end_momentum"]],
                            pct,
                        )
                    break
                start_step = phase["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                self._set_momentum(group, momentum)
        return lrs


class _LRScheduler(LRScheduler):
    """The base class under its pre-2.0 name, which subclasses still use."""
