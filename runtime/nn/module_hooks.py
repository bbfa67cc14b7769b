"""Module's hook registrations beyond the forward ones, as PyTorch's Module has
them: backward hooks (run by runtime/nn/backward_hooks.py) and state-dict
hooks (run by Module.state_dict and load_state_dict), and the walk over a
module's own state that load_state_dict checks keys against.

Module inherits these; each hook dict is made in Module.__init__.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from yamlgrad.runtime.autograd.hooks import HookDict, RemovableHandle, add_hook
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.nn.backward_hooks import ERR_MIXED_HOOKS


def _add(hooks: HookDict, hook: Callable[..., Any], prepend: bool) -> RemovableHandle:
    handle = add_hook(hooks, hook)
    if prepend:
        items = list(hooks.items())
        hooks.clear()
        hooks[items[-1][0]] = items[-1][1]
        hooks.update(items[:-1])
    return handle


class ModuleHooks:
    """The backward and state-dict hook registrations of Module."""

    _backward_pre_hooks: Any
    _backward_hooks: Any
    _is_full_backward_hook: bool | None
    _state_dict_pre_hooks: Any
    _state_dict_hooks: Any
    _load_state_dict_pre_hooks: Any
    _load_state_dict_post_hooks: Any
    named_modules: Callable[..., Any]

    def register_full_backward_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """`hook(module, grad_output)` runs when the gradients of the outputs are
        known; a tuple it returns replaces them."""
        return _add(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """`hook(module, grad_input, grad_output)` runs when the gradients of the
        tensor arguments are known; a tuple it returns replaces grad_input."""
        if self._is_full_backward_hook is False:
            raise RuntimeError(ERR_MIXED_HOOKS)
        super().__setattr__("_is_full_backward_hook", True)
        return _add(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Deprecated: `hook(module, grad_input, grad_output)` on the grad_fn of
        the output, whose inputs need not be the module's."""
        if self._is_full_backward_hook is True:
            raise RuntimeError(ERR_MIXED_HOOKS)
        super().__setattr__("_is_full_backward_hook", False)
        return add_hook(self._backward_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(module, prefix, keep_vars)` before `state_dict` reads this module."""
        return add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(
        self, hook: Callable[..., Any]
    ) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata)` after this module's
        entries are in; it may change `state_dict` in place."""
        return add_hook(self._state_dict_hooks, hook)

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """The older spelling: the hook may also return a new state dict."""
        return add_hook(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(
        self, hook: Callable[..., Any]
    ) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)` before this module's entries are loaded."""
        return add_hook(self._load_state_dict_pre_hooks, hook)

    def _register_load_state_dict_pre_hook(
        self, hook: Callable[..., Any], with_module: bool = False
    ) -> RemovableHandle:
        """The older spelling: without the module unless `with_module`."""
        if not with_module:
            plain = hook
            hook = lambda module, *args: plain(*args)  # noqa: E731
        return add_hook(self._load_state_dict_pre_hooks, hook)

    def register_load_state_dict_post_hook(
        self, hook: Callable[..., Any]
    ) -> RemovableHandle:
        """`hook(module, incompatible_keys)` after loading; it may edit the
        missing and unexpected keys in place before `strict` checks them."""
        return add_hook(self._load_state_dict_post_hooks, hook)

    def _own_state(self) -> dict[str, Tensor]:
        """What `state_dict(keep_vars=True)` holds, without running its hooks."""
        own: dict[str, Tensor] = OrderedDict()
        for name, module in self.named_modules():
            prefix = name + "." if name else ""
            for key, param in module._parameters.items():
                if param is not None:
                    own[prefix + key] = param
            for key, buffer in module._buffers.items():
                if buffer is not None and key not in module._non_persistent_buffers_set:
                    own[prefix + key] = buffer
        return own

    def _run_load_pre_hooks(
        self,
        state_dict: dict[str, Any],
        strict: bool,
        missing: list[str],
        unexpected: list[str],
        errors: list[str],
    ) -> dict[str, Any]:
        """Each module's load pre-hooks on the entries under its prefix (as
        PyTorch's recursive load hands each child its own dict); what a hook
        adds, changes or removes there is what gets loaded."""
        for name, module in self.named_modules():
            if not module._load_state_dict_pre_hooks:
                continue
            prefix = name + "." if name else ""
            local = OrderedDict(
                (k, v) for k, v in state_dict.items() if k.startswith(prefix)
            )
            before = set(local)
            for hook in tuple(module._load_state_dict_pre_hooks.values()):
                hook(module, local, prefix, {}, strict, missing, unexpected, errors)
            for key in before - set(local):
                del state_dict[key]
            state_dict.update(local)
        return state_dict
