"""The cyclic learning-rate schedules of `optim.lr_scheduler`: CyclicLR,
CosineAnnealingWarmRestarts and OneCycleLR (PyTorch's formulas; CyclicLR and
OneCycleLR also cycle the momentum, or Adam's beta1, the other way)."""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from functools import partial
from typing import Any

from yamlgrad.runtime.optim.lr_scheduler import (
    LRScheduler,
    _format_param,
    _group_values,
    _warn_get_lr_called_within_step,
)
from yamlgrad.runtime.optim.optimizer import Optimizer

__all__ = ["CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR"]


def _set_momentums(
    optimizer: Optimizer, max_momentums: list[float], base_momentums: list[float]
) -> bool:
    """Start every group at its max momentum (or beta1); True if it has betas."""
    use_beta1 = "betas" in optimizer.defaults
    for m_momentum, b_momentum, group in zip(
        max_momentums, base_momentums, optimizer.param_groups, strict=True
    ):
        if use_beta1:
            group["betas"] = (m_momentum, *group["betas"][1:])
        else:
            group["momentum"] = m_momentum
        group["max_momentum"] = m_momentum
        group["base_momentum"] = b_momentum
    return use_beta1


def _check_momentum(optimizer: Optimizer) -> None:
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(
            "optimizer must support momentum or beta1 with `cycle_momentum` option "
            "enabled"
        )


def _write_momentum(group: dict[str, Any], use_beta1: bool, momentum: float) -> None:
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


class CyclicLR(LRScheduler):
    """lr cycles between `base_lr` and `max_lr` (and momentum the other way)."""

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
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                group["lr"] = lr
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_ref: Callable[[float], float]
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _check_momentum(optimizer)
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _format_param(
                "base_momentum", optimizer, base_momentum
            )
            self.max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                _set_momentums(optimizer, self.max_momentums, self.base_momentums)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = self._triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = self._triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(self._exp_range_scale_fn, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x: float) -> float:
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    @staticmethod
    def _triangular_scale_fn(x: float) -> float:
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x: float) -> float:
        return 1 / (2.0 ** (x - 1))

    @staticmethod
    def _exp_range_scale_fn(gamma: float, x: float) -> float:
        return gamma**x

    def get_lr(self) -> list[float]:
        _warn_get_lr_called_within_step(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [
            base + (top - base) * scale_factor * scale
            for base, top in zip(self.base_lrs, self.max_lrs, strict=True)
        ]
        if self.cycle_momentum:
            for group, low, high in zip(
                self.optimizer.param_groups,
                self.base_momentums,
                self.max_momentums,
                strict=True,
            ):
                momentum = high - (high - low) * scale_factor * scale
                _write_momentum(group, self.use_beta1, momentum)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)  # type: ignore[union-attr]
        self._init_scale_fn()


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing restarted every T_i epochs, T_i growing by T_mult."""

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

    def get_lr(self) -> list[float]:
        _warn_get_lr_called_within_step(self)
        return [
            self.eta_min
            + (base - self.eta_min)
            * (1 + math.cos(math.pi * self.T_cur / self.T_i))
            / 2
            for base in self.base_lrs
        ]

    def step(self, epoch: float | None = None) -> None:  # type: ignore[override]
        """Step by one, or go to `epoch` (fractional epochs allowed)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(
                        math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult)
                    )
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (
                        self.T_mult - 1
                    )
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = _group_values(self.optimizer, "lr")


class OneCycleLR(LRScheduler):
    """The 1cycle policy: up to `max_lr`, then down far below the start."""

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
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        self._schedule_phases = _one_cycle_phases(
            self.total_steps, pct_start, three_phase
        )
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(
                f"Expected float between 0 and 1 pct_start, but got {pct_start}"
            )
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                "anneal_strategy must be one of 'cos' or 'linear', instead got "
                f"{anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", self.optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _check_momentum(optimizer)
            self.use_beta1 = "betas" in optimizer.defaults
            max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                _set_momentums(optimizer, max_momentums, base_momentums)
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return self._annealing_cos(start, end, pct)
        return self._annealing_linear(start, end, pct)

    @staticmethod
    def _annealing_cos(start: float, end: float, pct: float) -> float:
        """Cosine from `start` to `end` as pct goes from 0.0 to 1.0."""
        cos_out = math.cos(math.pi * pct) + 1
        return end + (start - end) / 2.0 * cos_out

    @staticmethod
    def _annealing_linear(start: float, end: float, pct: float) -> float:
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        _warn_get_lr_called_within_step(self)
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(
                f"Tried to step {step_num} times. The specified number of total "
                f"steps is {self.total_steps}"
            )
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == last:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lr = self._anneal_func(
                        group[phase["start_lr"]], group[phase["end_lr"]], pct
                    )
                    if self.cycle_momentum:
                        momentum = self._anneal_func(
                            group[phase["start_momentum"]],
                            group[phase["end_momentum"]],
                            pct,
                        )
                    break
                start_step = phase["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                _write_momentum(group, self.use_beta1, momentum)
        return lrs


def _total_steps(
    total_steps: int | None, epochs: int | None, steps_per_epoch: int | None
) -> int:
    """OneCycleLR's number of steps, given directly or as epochs x steps."""
    if total_steps is not None:
        if total_steps <= 0 or not isinstance(total_steps, int):
            raise ValueError(
                f"Expected positive integer total_steps, but got {total_steps}"
            )
        return total_steps
    elif epochs is not None and steps_per_epoch is not None:
        if not isinstance(epochs, int) or epochs <= 0:
            raise ValueError(f"Expected positive integer epochs, but got {epochs}")
        if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
            raise ValueError(
                "Expected positive integer steps_per_epoch, but got "
                f"{steps_per_epoch}"
            )
        return epochs * steps_per_epoch
    else:
        raise ValueError(
            "You must define either total_steps OR (epochs AND steps_per_epoch)"
        )


def _one_cycle_phases(
    total: int, pct_start: float, three_phase: bool
) -> list[dict[str, Any]]:
    """Where each phase of OneCycleLR ends and what it anneals between."""
    up_end = float(pct_start * total) - 1
    if three_phase:
        return [
            _phase(up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
            _phase(
                float(2 * pct_start * total) - 2,
                "max_lr",
                "initial_lr",
                "base_momentum",
                "max_momentum",
            ),
            _phase(
                total - 1,
                "initial_lr",
                "min_lr",
                "max_momentum",
                "max_momentum",
            ),
        ]
    else:
        return [
            _phase(up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
            _phase(
                total - 1,
                "max_lr",
                "min_lr",
                "base_momentum",
                "max_momentum",
            ),
        ]


def _phase(
    end_step: float, start_lr: str, end_lr: str, start_momentum: str, end_momentum: str
) -> dict[str, Any]:
    """One phase of OneCycleLR: where it ends and the group keys it anneals between."""
    return {
        "end_step": end_step,
        "start_lr": start_lr,
        "end_lr": end_lr,
        "start_momentum": start_momentum,
        "end_momentum": end_momentum,
    }
