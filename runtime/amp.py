"""`torch.autocast`, `torch.amp` and `torch.cuda.amp` on a machine without CUDA.

PyTorch's CPU build accepts every one of these, and a program written for a GPU
calls them unconditionally. On CUDA without CUDA they are PyTorch's no-ops, with
its warnings: `autocast("cuda")` disables itself, `GradScaler("cuda")` is
disabled (`scale(loss)` is `loss`, `step(optimizer)` is `optimizer.step()`).
CPU autocast computes in bfloat16 in PyTorch; numpy has no bfloat16, so here
`autocast("cpu")` records its state and computes in the tensors' own dtypes.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

__all__ = ["autocast", "GradScaler", "is_autocast_enabled"]

_enabled: dict[str, bool] = {"cpu": False, "cuda": False}

WARN_NO_CUDA_AUTOCAST = (
    "User provided device_type of 'cuda', but CUDA is not available. Disabling"
)
WARN_NO_CUDA_SCALER = (
    "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling."
)


class autocast:
    """`with autocast("cuda"):` or `@autocast("cpu")`: mixed precision's region
    (see the module docstring for what it does here)."""

    def __init__(
        self,
        device_type: str = "cuda",
        dtype: Any = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        if not isinstance(device_type, str):
            raise ValueError(
                f"Expected `device_type` of type `str`, got: `{type(device_type)}`"
            )
        if device_type == "cuda" and enabled:
            warnings.warn(WARN_NO_CUDA_AUTOCAST, stacklevel=2)
            enabled = False
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = enabled
        self.prev = False

    def __enter__(self) -> autocast:
        self.prev = _enabled.get(self.device, False)
        _enabled[self.device] = self._enabled
        return self

    def __exit__(self, *exc: object) -> None:
        _enabled[self.device] = self.prev

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapped


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether an `autocast` region of `device_type` is open."""
    return _enabled.get(device_type, False)


class GradScaler:
    """Loss scaling for float16 training. Without CUDA a "cuda" scaler is
    disabled, as PyTorch's: every method passes its argument through."""

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        if device == "cuda" and enabled:
            warnings.warn(WARN_NO_CUDA_SCALER, stacklevel=2)
            enabled = False
        self._device = device
        self._enabled = enabled
        self._scale = float(init_scale)
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, outputs: Any) -> Any:
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * self._scale

    def unscale_(self, optimizer: Any) -> None:
        if not self._enabled:
            return
        from yamlgrad.runtime.autograd.grad_mode import no_grad

        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.grad.mul_(1.0 / self._scale)

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        if self._enabled:
            self.unscale_(optimizer)
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: Any = None) -> None:
        if self._enabled and new_scale is not None:
            self._scale = float(new_scale)

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def state_dict(self) -> dict[str, Any]:
        if not self._enabled:
            return {}
        return {
            "scale": self._scale,
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": 0,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._scale = float(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]


def _cuda_autocast(
    enabled: bool = True, dtype: Any = None, cache_enabled: bool = True
) -> autocast:
    warnings.warn(
        "`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
        "`torch.amp.autocast('cuda', args...)` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return autocast("cuda", dtype=dtype, enabled=enabled)


def _cuda_grad_scaler(*args: Any, **kwargs: Any) -> GradScaler:
    warnings.warn(
        "`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
        "`torch.amp.GradScaler('cuda', args...)` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return GradScaler("cuda", *args, **kwargs)


amp = SimpleNamespace(autocast=autocast, GradScaler=GradScaler)
"""`torch.amp`."""

cuda_amp = SimpleNamespace(autocast=_cuda_autocast, GradScaler=_cuda_grad_scaler)
"""`torch.cuda.amp`: the deprecated spellings of `torch.amp`'s, for CUDA."""
