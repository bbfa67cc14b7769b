"""SGD, Adam, AdamW, RMSprop and Adagrad: PyTorch's update rules, step by step
as its single-tensor implementations run them, on the parameters' ndarrays.

>>> opt = SGD(model.parameters(), lr=0.1, momentum=0.9)
>>> loss.backward(); opt.step(); opt.zero_grad()
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from yamlgrad.runtime.optim.optimizer import Optimizer, required

__all__ = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"]


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def _check_common(lr: Any, weight_decay: float, eps: float | None = None) -> None:
    if lr is not required:
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
    if eps is not None:
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
    _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")


def _direction(
    param: np.ndarray, grad: np.ndarray, group: dict[str, Any]
) -> np.ndarray:
    """The gradient to descend: negated to maximise, plus L2 weight decay."""
    if group["maximize"]:
        grad = -grad
    if group["weight_decay"] != 0:
        grad = grad + group["weight_decay"] * param
    return grad


class SGD(Optimizer):
    """Stochastic gradient descent with momentum (Nesterov's too) and weight decay."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        _check_common(lr, weight_decay)
        _check(0.0 <= momentum, f"Invalid momentum value: {momentum}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _update(
        self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict
    ) -> None:
        d_p = _direction(param, grad, group)
        momentum = group["momentum"]
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = np.array(d_p, copy=True)
            else:
                buf *= momentum
                buf += (1 - group["dampening"]) * d_p
            d_p = d_p + momentum * buf if group["nesterov"] else buf
        param -= group["lr"] * d_p


class Adam(Optimizer):
    """Adam (Kingma and Ba), with AMSGrad; `weight_decay` is L2, added to the
    gradient (AdamW decouples it)."""

    _decoupled = False

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        _check_common(lr, weight_decay, eps)
        _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _update(
        self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict
    ) -> None:
        if not state:
            state["step"] = 0.0
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = np.zeros_like(param)
        beta1, beta2 = group["betas"]
        lr = group["lr"]
        if group["maximize"]:
            grad = -grad
        if self._decoupled:
            param *= 1 - lr * group["weight_decay"]
        elif group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        state["step"] += 1
        step = state["step"]
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg += (1 - beta1) * (grad - exp_avg)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        step_size = lr / (1 - beta1**step)
        bias_correction2_sqrt = math.sqrt(1 - beta2**step)
        if group["amsgrad"]:
            np.maximum(state["max_exp_avg_sq"], exp_avg_sq, out=state["max_exp_avg_sq"])
            second = state["max_exp_avg_sq"]
        else:
            second = exp_avg_sq
        denom = np.sqrt(second) / bias_correction2_sqrt + group["eps"]
        param -= step_size * (exp_avg / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter): the parameter
    shrinks by lr * weight_decay before the Adam step."""

    _decoupled = True

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        super().__init__(
            params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize
        )


class RMSprop(Optimizer):
    """RMSprop (Hinton): steps scaled by a running RMS of the gradient; centered
    subtracts the running mean; optional momentum."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        _check_common(lr, weight_decay, eps)
        _check(0.0 <= momentum, f"Invalid momentum value: {momentum}")
        _check(0.0 <= alpha, f"Invalid alpha value: {alpha}")
        defaults = dict(
            lr=lr,
            alpha=alpha,
            eps=eps,
            weight_decay=weight_decay,
            momentum=momentum,
            centered=centered,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _update(
        self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict
    ) -> None:
        if not state:
            state["step"] = 0.0
            state["square_avg"] = np.zeros_like(param)
            if group["momentum"] > 0:
                state["momentum_buffer"] = np.zeros_like(param)
            if group["centered"]:
                state["grad_avg"] = np.zeros_like(param)
        grad = _direction(param, grad, group)
        alpha = group["alpha"]
        state["step"] += 1
        square_avg = state["square_avg"]
        square_avg *= alpha
        square_avg += (1 - alpha) * grad * grad
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg += (1 - alpha) * (grad - grad_avg)
            avg = np.sqrt(square_avg - grad_avg * grad_avg)
        else:
            avg = np.sqrt(square_avg)
        avg += group["eps"]
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf *= group["momentum"]
            buf += grad / avg
            param -= group["lr"] * buf
        else:
            param -= group["lr"] * (grad / avg)


class Adagrad(Optimizer):
    """Adagrad (Duchi et al.): steps scaled by the root of the summed squared
    gradients, with a decaying learning rate."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        *,
        maximize: bool = False,
    ) -> None:
        _check_common(lr, weight_decay, eps)
        _check(0.0 <= lr_decay, f"Invalid lr_decay value: {lr_decay}")
        _check(
            0.0 <= initial_accumulator_value,
            f"Invalid initial_accumulator_value value: {initial_accumulator_value}",
        )
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _update(
        self, param: np.ndarray, grad: np.ndarray, state: dict, group: dict
    ) -> None:
        if not state:
            state["step"] = 0.0
            state["sum"] = np.full_like(param, group["initial_accumulator_value"])
        grad = _direction(param, grad, group)
        state["step"] += 1
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        state["sum"] += grad * grad
        param -= clr * (grad / (np.sqrt(state["sum"]) + group["eps"]))
