"""The base of every optimiser: parameter groups, per-parameter state, zero_grad,
state_dict/load_state_dict in PyTorch's layout.

An optimiser updates its parameters in place, outside the graph (as under
`no_grad`), on their ndarrays; each update bumps the parameter's version, as an
in-place op does.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.autograd.grad_mode import enable_grad
from yamlgrad.runtime.autograd.tensor import Tensor

__all__ = ["Optimizer", "required"]


class _Required:
    """The default of an argument every group must give (SGD's `lr` once was)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()

_SET_MESSAGE = (
    "optimizer parameters need to be organized in ordered collections, but the "
    "ordering of tensors in sets will change between runs. Please use a list instead."
)


def _as_group_list(params: Any) -> list[dict[str, Any]]:
    if isinstance(params, Tensor):
        raise TypeError(
            "params argument given to the optimizer should be an iterable of "
            f"Tensors or dicts, but got {_type_name(params)}"
        )
    groups = list(params)
    if not groups:
        raise ValueError("optimizer got an empty parameter list")
    if not isinstance(groups[0], dict):
        groups = [{"params": groups}]
    return groups


def _type_name(value: Any) -> str:
    return "yamlgrad.Tensor" if isinstance(value, Tensor) else type(value).__name__


class Optimizer:
    """Holds `param_groups` (dicts of params and options) and `state`."""

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        for group in _as_group_list(params):
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (the rest from defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(_SET_MESSAGE)
        else:
            params = list(params)
        for param in params:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + _type_name(param)
                )
            if not param.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group, params=params)
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(
                    "parameter group didn't specify a value of required "
                    f"optimization parameter {name}"
                )
            group.setdefault(name, default)
        if len({id(p) for p in params}) != len(params):
            raise ValueError(
                "some parameters appear more than once in the parameter group"
            )
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if existing & {id(p) for p in params}:
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's `.grad`: to None, or to zeros in place."""
        for group in self.param_groups:
            for param in group["params"]:
                grad = param.grad
                if grad is None:
                    continue
                if set_to_none:
                    param.grad = None
                else:
                    if grad.grad_fn is not None:
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; `closure`, if given,
        recomputes the loss (with grad enabled) and its value is returned."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                grad = param.grad._data
                if backend.is_foreign(param._data) or backend.is_foreign(grad):
                    self._update_elsewhere(param, grad, self.state[param], group)
                    continue
                if grad.dtype != param._data.dtype:
                    grad = grad.astype(param._data.dtype)
                value, grad = _real_views(param._data, grad)
                self._update(value, grad, self.state[param], group)
                param.version_counter.bump()
        return loss

    def _update_elsewhere(
        self, param: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]
    ) -> None:
        """The step of a parameter held by another backend (Dask's arrays are
        immutable): its value and gradient computed in one pass, the rule run on
        them as numpy arrays, and the result put back as an array of that
        backend with no graph behind it (persisted), so the graph a training
        loop builds stays one step long."""
        value, grad = backend.compute(param._data, grad)
        value = np.array(backend.to_numpy(value), copy=True)
        grad = backend.to_numpy(grad).astype(value.dtype, copy=False)
        self._update(*_real_views(value, grad), state, group)
        param._data = backend.like(value, param._data)
        param.version_counter.bump()

    def _update(
        self,
        param: np.ndarray,
        grad: np.ndarray,
        state: dict[str, Any],
        group: dict[str, Any],
    ) -> None:
        """Update `param` in place from `grad`; subclasses define the rule."""
        raise NotImplementedError

    # -- state ---------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """`state` keyed by each parameter's index over all groups, and the groups
        with their parameters as those indices (PyTorch's layout)."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            ids = []
            for param in group["params"]:
                index.setdefault(id(param), len(index))
                ids.append(index[id(param)])
            packed["params"] = ids
            groups.append(packed)
        state = {
            index[id(param)]: {
                k: Tensor(v.copy()) if isinstance(v, np.ndarray) else v
                for k, v in values.items()
            }
            for param, values in self.state.items()
            if id(param) in index
        }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore options and state saved by `state_dict` (same parameter layout)."""
        state_dict = copy.deepcopy(
            {
                "state": {int(k): dict(v) for k, v in state_dict["state"].items()},
                "param_groups": state_dict["param_groups"],
            }
        )
        groups, saved_groups = self.param_groups, state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError(
                "loaded state dict has a different number of parameter groups"
            )
        if any(
            len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)
        ):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match "
                "the size of optimizer's group"
            )
        by_index = {
            i: p
            for g, s in zip(groups, saved_groups)
            for i, p in zip(s["params"], g["params"])
        }
        self.state = defaultdict(dict)
        for key, values in state_dict["state"].items():
            param = by_index.get(key)
            if param is None:
                continue
            self.state[param] = {
                k: _state_array(v, param, k) for k, v in values.items()
            }
        self.param_groups = [
            dict(s, params=g["params"]) for g, s in zip(groups, saved_groups)
        ]

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += "\n" + f"Parameter Group {i}"
            for key in sorted(group):
                if key != "params":
                    text += "\n" + f"    {key}: {group[key]}"
        return text + "\n)"


def _state_array(value: Any, param: Tensor, key: str) -> Any:
    """A saved state value as the ndarray the update rules work on: buffers in the
    parameter's dtype, `step` as a float."""
    if isinstance(value, Tensor):
        value = value._data
    if isinstance(value, np.ndarray):
        if key == "step":
            return float(value)
        return np.array(value, dtype=param._data.dtype)
    return value


def _real_views(value: np.ndarray, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A complex parameter and its gradient as the real views of their parts (a
    trailing dim of 2), as PyTorch's optimizers step one (view_as_real): each
    moment estimate is kept per real component, and the update writes through
    to the parameter. Real ones, or a strided complex parameter (which has no
    such view), as they are."""
    if value.dtype.kind != "c" or not value.flags.c_contiguous:
        return value, grad
    grad = np.ascontiguousarray(grad)
    real = value.real.dtype
    return (
        value.view(real).reshape(*value.shape, 2),
        grad.view(real).reshape(*grad.shape, 2),
    )
