"""The cyclic schedules of `optim.lr_scheduler`: CyclicLR,
CosineAnnealingWarmRestarts and OneCycleLR.

All three compute each rate from scratch (from the groups' stored bounds and
the step number), never from the current rate, so `_schedule` ignores its
argument. CyclicLR and OneCycleLR also move the momentum (Adam's beta1 when the
optimiser has `betas`) against the rate; the bounds of that cycle are started
here once, by `_start_momentum_cycle`. The arithmetic follows PyTorch's
operation by operation, so the values agree to the last bit.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from typing import Any

from yamlgrad.runtime.optim.lr_scheduler import (
    LRScheduler,
    _per_group,
    _require_optimizer,
)
from yamlgrad.runtime.optim.optimizer import Optimizer

__all__ = ["CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR"]

ERR_NO_MOMENTUM = (
    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
)


def _put_momentum(group: dict[str, Any], use_beta1: bool, value: float) -> None:
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


def _start_momentum_cycle(
    optimizer: Optimizer, low: Any, high: Any, fresh: bool
) -> tuple[bool, list[float], list[float]]:
    """Check the optimiser has a momentum to cycle; on a fresh start set every
    group's momentum to its high bound and store both bounds in the group.
    Returns (whether it is Adam's beta1, the low bounds, the high bounds)."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(ERR_NO_MOMENTUM)
    use_beta1 = "betas" in optimizer.defaults
    lows = _per_group("base_momentum", optimizer, low)
    highs = _per_group("max_momentum", optimizer, high)
    if fresh:
        for group, bottom, top in zip(optimizer.param_groups, lows, highs, strict=True):
            _put_momentum(group, use_beta1, top)
            group["max_momentum"] = top
            group["base_momentum"] = bottom
    return use_beta1, lows, highs


# CyclicLR's built-in amplitude policies: what the amplitude depends on (the
# cycle number, or the step number), and the amplitude as a function of it.
_POLICIES: dict[str, tuple[str, Callable[[float, float], float]]] = {
    "triangular": ("cycle", lambda gamma, x: 1.0),
    "triangular2": ("cycle", lambda gamma, x: 1 / (2.0 ** (x - 1))),
    "exp_range": ("iterations", lambda gamma, x: gamma**x),
}


class CyclicLR(LRScheduler):
    """lr goes up from `base_lr` to `max_lr` in `step_size_up` steps and back
    in `step_size_down`, the height of each cycle scaled by the policy `mode`
    (or by `scale_fn`); the momentum cycles the other way."""

    _unsaved = ("optimizer", "_scale_fn_custom")

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | list[float],
        max_lr: float | list[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float = 0.8,
        max_momentum: float = 0.9,
        last_epoch: int = -1,
    ) -> None:
        _require_optimizer(optimizer)
        self.optimizer = optimizer
        lows = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for group, low in zip(optimizer.param_groups, lows, strict=True):
                group["lr"] = low
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        rising = float(step_size_up)
        falling = rising if step_size_down is None else float(step_size_down)
        self.total_size = rising + falling
        self.step_ratio = rising / self.total_size
        if mode not in _POLICIES and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._follow_policy()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1, self.base_momentums, self.max_momentums = (
                _start_momentum_cycle(
                    optimizer, base_momentum, max_momentum, last_epoch == -1
                )
            )
        super().__init__(optimizer, last_epoch)
        self.base_lrs = lows

    def _follow_policy(self) -> None:
        """A built-in policy decides what its amplitude depends on."""
        if self._scale_fn_custom is None:
            self.scale_mode = _POLICIES[self.mode][0]

    def scale_fn(self, x: float) -> float:
        """The amplitude of cycle (or step) `x`, from 0 to 1."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return _POLICIES[self.mode][1](self.gamma, x)

    def _schedule(self, current: list[float]) -> list[float]:
        step = self.last_epoch
        cycle = math.floor(1 + step / self.total_size)
        where = 1.0 + step / self.total_size - cycle  # 0 to 1 within the cycle
        if where <= self.step_ratio:
            height = where / self.step_ratio
        else:
            height = (where - 1) / (self.step_ratio - 1)
        amplitude = self.scale_fn(cycle if self.scale_mode == "cycle" else step)
        rates = [
            low + (high - low) * height * amplitude
            for low, high in zip(self.base_lrs, self.max_lrs, strict=True)
        ]
        if self.cycle_momentum:
            bounds = zip(self.base_momentums, self.max_momentums, strict=True)
            for group, (low, high) in zip(self.optimizer.param_groups, bounds):
                momentum = high - (high - low) * height * amplitude
                _put_momentum(group, self.use_beta1, momentum)
        return rates

    def state_dict(self) -> dict[str, Any]:
        """A plain function `scale_fn` is not saved; a callable object's
        `__dict__` is."""
        state = super().state_dict()
        custom = self._scale_fn_custom
        keep = custom is not None and not isinstance(custom, types.FunctionType)
        state["_scale_fn_custom"] = dict(custom.__dict__) if keep else None
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        custom = state_dict.pop("_scale_fn_custom")
        try:
            super().load_state_dict(state_dict)
        finally:
            state_dict["_scale_fn_custom"] = custom
        if custom is not None:
            self._scale_fn_custom.__dict__.update(custom)  # type: ignore[union-attr]
        self._follow_policy()


def _restart_position(epoch: float, first: int, growth: int) -> tuple[float, int]:
    """Where epoch `epoch` falls among restarts whose periods are `first`,
    `first * growth`, ...: (epochs since the last restart, current period)."""
    if epoch < first:
        return epoch, first
    if growth == 1:
        return epoch % first, first
    restarts = int(math.log(epoch / first * (growth - 1) + 1, growth))
    since = epoch - first * (growth**restarts - 1) / (growth - 1)
    return since, first * growth**restarts


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the initial rate to `eta_min` over T_i epochs,
    restarting each time, T_i growing by `T_mult` (T_0 first). `step(epoch)`
    takes fractional epochs and is not deprecated here."""

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(
                f"Expected float or int eta_min, but got {eta_min} of type "
                f"{type(eta_min)}"
            )
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur: float = last_epoch
        super().__init__(optimizer, last_epoch)

    def _schedule(self, current: list[float]) -> list[float]:
        wave = 1 + math.cos(math.pi * self.T_cur / self.T_i)
        low = self.eta_min
        return [low + (base - low) * wave / 2 for base in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:  # type: ignore[override]
        """One epoch on, or to `epoch` (which may be fractional)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is not None:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            self.T_cur, self.T_i = _restart_position(epoch, self.T_0, self.T_mult)
        else:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:  # a restart
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        self.last_epoch = math.floor(epoch)
        self._write_rates(self._rates_within_step())


def _cosine_between(start: float, end: float, progress: float) -> float:
    return end + (start - end) / 2.0 * (math.cos(math.pi * progress) + 1)


def _line_between(start: float, end: float, progress: float) -> float:
    return (end - start) * progress + start


_ANNEALS: dict[str, Callable[[float, float, float], float]] = {
    "cos": _cosine_between,
    "linear": _line_between,
}

# OneCycleLR's phases as (the group keys holding) the rate and the momentum each
# starts and ends at. Two phases: up to max_lr, then down to min_lr. Three: up,
# back down to initial_lr, then to min_lr with the momentum held high.
_ROUTE_KEYS = ("start_lr", "end_lr", "start_momentum", "end_momentum")
_TWO_PHASES = (
    ("initial_lr", "max_lr", "max_momentum", "base_momentum"),
    ("max_lr", "min_lr", "base_momentum", "max_momentum"),
)
_THREE_PHASES = (
    ("initial_lr", "max_lr", "max_momentum", "base_momentum"),
    ("max_lr", "initial_lr", "base_momentum", "max_momentum"),
    ("initial_lr", "min_lr", "max_momentum", "max_momentum"),
)


def _phases(total: int, pct_start: float, three_phase: bool) -> list[dict[str, Any]]:
    """OneCycleLR's `_schedule_phases`: for each phase the step it ends at and
    the group keys of its route (PyTorch's layout, which its state dict holds)."""
    if three_phase:
        ends = [
            float(pct_start * total) - 1,
            float(2 * pct_start * total) - 2,
            total - 1,
        ]
        routes = _THREE_PHASES
    else:
        ends, routes = [float(pct_start * total) - 1, total - 1], _TWO_PHASES
    return [
        {"end_step": end, **dict(zip(_ROUTE_KEYS, route))}
        for end, route in zip(ends, routes, strict=True)
    ]


def _check_count(name: str, value: Any) -> None:
    if value <= 0 or not isinstance(value, int):
        raise ValueError(f"Expected positive integer {name}, but got {value}")


def _count_steps(
    total_steps: int | None, epochs: int | None, steps_per_epoch: int | None
) -> int:
    """OneCycleLR's length: `total_steps`, or `epochs` x `steps_per_epoch`."""
    if total_steps is not None:
        _check_count("total_steps", total_steps)
        return total_steps
    if epochs is None or steps_per_epoch is None:
        raise ValueError(
            "You must define either total_steps OR (epochs AND steps_per_epoch)"
        )
    for name, value in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
        if not isinstance(value, int) or value <= 0:
            raise ValueError(f"Expected positive integer {name}, but got {value}")
    return epochs * steps_per_epoch


class OneCycleLR(LRScheduler):
    """The 1cycle policy, stepped once per batch: from max_lr / div_factor up to
    max_lr over `pct_start` of the steps, then annealed (cosine or linear) to
    far below the start, the momentum moving the other way."""

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        _require_optimizer(optimizer)
        self.optimizer = optimizer
        self.total_steps = _count_steps(total_steps, epochs, steps_per_epoch)
        self._schedule_phases = _phases(self.total_steps, pct_start, three_phase)
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(
                f"Expected float between 0 and 1 pct_start, but got {pct_start}"
            )
        if anneal_strategy not in _ANNEALS:
            raise ValueError(
                "anneal_strategy must be one of 'cos' or 'linear', instead got "
                f"{anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        peaks = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, peak in zip(optimizer.param_groups, peaks):
                group["initial_lr"] = peak / div_factor
                group["max_lr"] = peak
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _start_momentum_cycle(
                optimizer, base_momentum, max_momentum, last_epoch == -1
            )[0]
        super().__init__(optimizer, last_epoch)

    def _locate(self, step: int) -> tuple[dict[str, Any], float]:
        """The phase step `step` is in, and how far along it (0 to 1)."""
        begins = 0.0
        last = len(self._schedule_phases) - 1
        for index, phase in enumerate(self._schedule_phases):
            ends = phase["end_step"]
            if step <= ends or index == last:
                return phase, (step - begins) / (ends - begins)
            begins = ends
        raise AssertionError("a schedule has at least one phase")

    def _schedule(self, current: list[float]) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"Tried to step {step} times. The specified number of total steps "
                f"is {self.total_steps}"
            )
        anneal = _ANNEALS[self._anneal_func_type]
        phase, progress = self._locate(step)
        rates = []
        for group in self.optimizer.param_groups:
            rates.append(
                anneal(group[phase["start_lr"]], group[phase["end_lr"]], progress)
            )
            if self.cycle_momentum:
                momentum = anneal(
                    group[phase["start_momentum"]],
                    group[phase["end_momentum"]],
                    progress,
                )
                _put_momentum(group, self.use_beta1, momentum)
        return rates
