"""`yg.nn.Module` and the containers Sequential, ModuleList and ModuleDict.

A Module is PyTorch's: attributes that are Parameters, Modules or registered
buffers are kept in three ordered dicts, so that `parameters()`, `state_dict()`,
`train()`, `zero_grad()` and `repr` walk the tree of submodules in the order the
attributes were assigned.

>>> class Net(Module):
...     def __init__(self):
...         super().__init__()
...         self.fc = Linear(4, 2)
...     def forward(self, x):
...         return self.fc(x)
>>> [name for name, _ in Net().named_parameters()]
['fc.weight', 'fc.bias']
"""

from __future__ import annotations

import operator
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.backend import dtype_kind
from yamlgrad.runtime.autograd.grad_mode import is_grad_enabled, no_grad
from yamlgrad.runtime.autograd.hooks import HookDict, RemovableHandle
from yamlgrad.runtime.nn.backward_hooks import BackwardHook, attach_non_full_hooks
from yamlgrad.runtime.nn.module_hooks import ModuleHooks, _add
from yamlgrad.runtime.nn.parameter import Parameter
from yamlgrad.runtime.autograd.tensor import Tensor

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict"]


class _IncompatibleKeys(
    namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])
):
    """What `load_state_dict` returns: the keys it missed and the ones it did not know."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _typename(value: Any) -> str:
    if isinstance(value, Tensor):
        return "yamlgrad.Tensor"
    return type(value).__name__


def _addindent(text: str, spaces: int) -> str:
    """Indent every line of `text` but the first by `spaces`."""
    first, *rest = text.split("\n")
    if not rest:
        return text
    pad = " " * spaces
    return "\n".join([first, *(pad + line for line in rest)])


class Module(ModuleHooks):
    """The base class of every layer and model; subclasses define `forward`."""

    training: bool

    def __init__(self) -> None:
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", OrderedDict())
        setattr_("_buffers", OrderedDict())
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_modules", OrderedDict())
        setattr_("_forward_pre_hooks", HookDict())
        setattr_("_forward_hooks", HookDict())
        setattr_("_backward_pre_hooks", HookDict())
        setattr_("_backward_hooks", HookDict())
        setattr_("_is_full_backward_hook", None)
        setattr_("_state_dict_pre_hooks", HookDict())
        setattr_("_state_dict_hooks", HookDict())
        setattr_("_load_state_dict_pre_hooks", HookDict())
        setattr_("_load_state_dict_post_hooks", HookDict())

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # -- calling -----------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        compiled = self.__dict__.get("_compiled_call_impl")  # set by compile()
        if compiled is not None:
            return compiled(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        """A call: the forward pre-hooks, `forward`, the forward hooks, and the
        backward hooks' identity nodes around it (runtime/nn/backward_hooks.py)."""
        for hook in tuple(self._forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        full = self._is_full_backward_hook and (
            self._backward_hooks or self._backward_pre_hooks
        )
        if full and is_grad_enabled():
            bw_hook = BackwardHook(
                self,
                list(self._backward_hooks.values()),
                list(self._backward_pre_hooks.values()),
            )
            args = bw_hook.setup_input_hook(args)
        output = self.forward(*args, **kwargs)
        for hook in tuple(self._forward_hooks.values()):
            result = hook(self, args, output)
            if result is not None:
                output = result
        if full and is_grad_enabled():
            output = bw_hook.setup_output_hook(output)
        elif self._backward_hooks and self._is_full_backward_hook is False:
            hooks = list(self._backward_hooks.values())
            attach_non_full_hooks(self, hooks, args, output)
        return output

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile this module's calls in place: `yg.compile` of its call, the
        arguments passed as they are (PyTorch's `Module.compile`)."""
        from yamlgrad.runtime.compile import compile

        wrapped = compile(self, *args, **kwargs)  # self itself with disable=True
        if wrapped is not self:
            self.__dict__["_compiled_call_impl"] = wrapped._compiled_call_impl

    def _as_compiled(self, calls: Any) -> Module:
        """What `yg.compile(module)` returns, its calls made by `calls`."""
        from yamlgrad.runtime.nn.compiled import OptimizedModule

        return OptimizedModule(self, calls)

    def register_forward_pre_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False
    ) -> RemovableHandle:
        """`hook(module, args)` runs before `forward`; a value it returns replaces
        the positional arguments (a non-tuple is wrapped in one)."""
        return _add(self._forward_pre_hooks, hook, prepend)

    def register_forward_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False
    ) -> RemovableHandle:
        """`hook(module, args, output)` runs after `forward`; a value it returns
        replaces the output."""
        return _add(self._forward_hooks, hook, prepend)

    # -- registration --------------------------------------------------------------------

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or a None placeholder) under `name`."""
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                "cannot assign parameter before Module.__init__() call"
            )
        _check_name(self, name, "parameter", self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(yamlgrad.nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                f"parameters must be created explicitly. To express '{name}' as a "
                "function of another Tensor, compute the value in the forward() method."
            )
        self._parameters[name] = param

    def register_buffer(
        self, name: str, tensor: Tensor | None, persistent: bool = True
    ) -> None:
        """Add a tensor that is state but not a parameter (running statistics);
        a persistent one is in `state_dict`."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(yamlgrad Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under `name`."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError(
                    "cannot assign parameters before Module.__init__() call"
                )
            self._forget(name)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(yamlgrad.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if "_modules" not in self.__dict__:
                raise AttributeError(
                    "cannot assign module before Module.__init__() call"
                )
            self._forget(name)
            self._modules[name] = value
        elif "_modules" in self.__dict__ and name in self._modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' "
                    "(yamlgrad.nn.Module or None expected)"
                )
            self._modules[name] = value
        elif "_buffers" in self.__dict__ and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' "
                    "(yamlgrad.Tensor or None expected)"
                )
            self._buffers[name] = value
        else:
            super().__setattr__(name, value)

    def _forget(self, name: str) -> None:
        """Drop `name` from every place an attribute can live."""
        self.__dict__.pop(name, None)
        for table in (self._parameters, self._buffers, self._modules):
            table.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: the three tables.
        for table in ("_parameters", "_buffers", "_modules"):
            entries = self.__dict__.get(table)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(
            f"'{type(self).__name__}' object has no attribute '{name}'"
        )

    def __delattr__(self, name: str) -> None:
        for table in (self._parameters, self._buffers, self._modules):
            if name in table:
                del table[name]
                self._non_persistent_buffers_set.discard(name)
                return
        super().__delattr__(name)

    def __dir__(self) -> list[str]:
        keys = [*dir(type(self)), *self.__dict__]
        keys += [*self._parameters, *self._modules, *self._buffers]
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def get_submodule(self, target: str) -> Module:
        """The submodule at a dotted path ("" is the module itself)."""
        module = self
        for item in target.split(".") if target else []:
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    # -- walking the tree ----------------------------------------------------------------

    def named_modules(
        self,
        memo: set[Module] | None = None,
        prefix: str = "",
        remove_duplicate: bool = True,
    ) -> Iterator[tuple[str, Module]]:
        """This module and every submodule (each once), depth first, with dotted names."""
        memo = set() if memo is None else memo
        stack: list[tuple[str, Module]] = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if remove_duplicate:
                if module in memo:
                    continue
                memo.add(module)
            yield name, module
            children = [
                (name + ("." if name else "") + child_name, child)
                for child_name, child in module._modules.items()
                if child is not None
            ]
            stack.extend(reversed(children))

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[Module] = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def _named_members(
        self, table: str, prefix: str, recurse: bool, remove_duplicate: bool
    ) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for name, value in getattr(module, table).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """Every parameter with its dotted name; a shared one once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call `fn` on every submodule (children first), then on this module."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- modes, gradients, dtypes -------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        """Training mode (dropout drops, batch norm uses batch statistics) or not."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's `.grad`: to None, or to zeros in place."""
        for param in self.parameters():
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                grad = param.grad
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad.zero_()

    def _apply(self, fn: Callable[[np.ndarray], np.ndarray]) -> Module:
        """Replace the data of every parameter, gradient and buffer by `fn(data)`,
        keeping the Parameter objects (so optimisers still hold them)."""
        for module in self.modules():
            for param in module._parameters.values():
                if param is not None:
                    _replace_data(param, fn)
                    if param.grad is not None:
                        _replace_data(param.grad, fn)
            for buffer in module._buffers.values():
                if buffer is not None:
                    _replace_data(buffer, fn)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """`to(device)`, `to(dtype)`, `to(device, dtype)`, `to(tensor)`: moves the
        parameters, gradients and buffers to a backend (`"dask"`,
        `"array_api_strict"`, `"cuda"` with CuPy, `"cpu"`: numpy) and casts the
        floating-point ones, keeping the Parameter objects."""
        from yamlgrad.runtime import array_backends, devices, dtypes
        from yamlgrad.runtime.tensor_methods import parse_to

        dtype, device, _, _ = parse_to(args, dict(kwargs))
        if device is not None:
            if not array_backends.moves_to(device):
                devices.usable(device)
            else:
                self._apply(lambda a: array_backends.move(a, device))
        if dtype is None:
            return self
        target = dtypes.to_numpy(dtype)
        if target.kind not in "fc":
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got "
                f"desired dtype={dtype}"
            )
        return self._apply(_cast_floating(target, "fc"))

    def cpu(self) -> Module:
        """The parameters and buffers as numpy arrays (from any backend)."""
        return self.to("cpu")

    def cuda(self, device: Any = None) -> Module:
        """On the GPU, as CuPy arrays (PyTorch's error where CuPy is absent)."""
        return self.to("cuda" if device is None else device)

    def double(self) -> Module:
        return self._apply(_cast_floating(np.dtype(np.float64), "f"))

    def float(self) -> Module:
        return self._apply(_cast_floating(np.dtype(np.float32), "f"))

    def half(self) -> Module:
        return self._apply(_cast_floating(np.dtype(np.float16), "f"))

    # -- state -------------------------------------------------------------------------

    def state_dict(
        self,
        *,
        destination: dict[str, Any] | None = None,
        prefix: str = "",
        keep_vars: bool = False,
    ) -> dict[str, Any]:
        """Parameters and persistent buffers by dotted name (detached unless
        `keep_vars`)."""
        destination = OrderedDict() if destination is None else destination
        for hook in tuple(self._state_dict_pre_hooks.values()):
            hook(self, prefix, keep_vars)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buffer if keep_vars else buffer.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(
                    destination=destination,
                    prefix=prefix + name + ".",
                    keep_vars=keep_vars,
                )
        for hook in tuple(self._state_dict_hooks.values()):
            result = hook(self, destination, prefix, {})
            if result is not None:
                destination = result
        return destination

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True
    ) -> _IncompatibleKeys:
        """Copy values into the parameters and buffers in place (so optimisers
        keep theirs). With `strict`, missing and unexpected keys are errors."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(
                f"Expected state_dict to be dict-like, got {type(state_dict)}."
            )
        own = self._own_state()
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        if any(m._load_state_dict_pre_hooks for m in self.modules()):
            state_dict = self._run_load_pre_hooks(
                OrderedDict(state_dict), strict, missing, unexpected, errors
            )
        missing += [key for key in own if key not in state_dict]
        unexpected += [key for key in state_dict if key not in own]
        copies = []
        for key, target in own.items():
            if key not in state_dict:
                continue
            source = state_dict[key]
            array = source._data if isinstance(source, Tensor) else np.asarray(source)
            if array.shape != target._data.shape:
                errors.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{_size(array.shape)} from checkpoint, the shape in current "
                    f"model is {_size(target._data.shape)}."
                )
                continue
            copies.append((target, array))
        incompatible = _IncompatibleKeys(missing, unexpected)
        for module in self.modules():
            for hook in tuple(module._load_state_dict_post_hooks.values()):
                if hook(module, incompatible) is not None:
                    raise RuntimeError(
                        "load_state_dict post hooks should return None, but got "
                        "a value"
                    )
        if strict:
            if unexpected:
                keys = ", ".join(f'"{k}"' for k in unexpected)
                errors.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
            if missing:
                keys = ", ".join(f'"{k}"' for k in missing)
                errors.insert(0, f"Missing key(s) in state_dict: {keys}. ")
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        with no_grad():
            for target, array in copies:
                if backend.is_foreign(target._data) or backend.is_foreign(array):
                    target.copy_(Tensor._make(array))  # across backends
                    continue
                target._data[...] = array
                target.version_counter.bump()
        return incompatible

    # -- repr ----------------------------------------------------------------------------

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The layer's own settings, shown inside its repr's parentheses."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            f"({name}): " + _addindent(repr(module), 2)
            for name, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


def _size(shape: tuple[int, ...]) -> str:
    return f"yamlgrad.Size({list(shape)})"


def _check_name(module: Module, name: str, kind: str, table: dict) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(module, name) and name not in table:
        raise KeyError(f"attribute '{name}' already exists")


def _cast_floating(target: np.dtype, kinds: str) -> Callable[[Any], Any]:
    """The cast of `Module.to(dtype)`, `.float()`, ...: an array of a kind in
    `kinds` to `target`, in its own backend; any other as it is."""

    def cast(array: Any) -> Any:
        if dtype_kind(array.dtype) not in kinds:
            return array
        if type(array) is np.ndarray:
            return array.astype(target)
        xp = backend.namespace_of(array)
        return xp.astype(array, backend.dtype_in(xp, target))

    return cast


def _replace_data(tensor: Tensor, fn: Callable[[np.ndarray], np.ndarray]) -> None:
    new = fn(tensor._data)
    if new is not tensor._data:
        tensor._set_data(new)
        tensor.version_counter.bump()


# -- containers --------------------------------------------------------------------------


class Sequential(Module):
    """Modules called one after the other, each on the previous one's output.

    >>> Sequential(Linear(4, 8), ReLU(), Linear(8, 2))
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for index, module in enumerate(args):
                self.add_module(str(index), module)

    def _index(self, idx: int) -> str:
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        return list(self._modules)[idx % size]

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[self._index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._index(idx), module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)
        for key in keys[idx] if isinstance(idx, slice) else [self._index(idx)]:
            delattr(self, key)
        # Renumber, as PyTorch does, so indices stay 0..n-1.
        items = list(self._modules.values())
        self._modules.clear()
        for index, module in enumerate(items):
            self._modules[str(index)] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def forward(self, input: Any) -> Any:
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered so their parameters are the owner's."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _key(self, idx: int) -> str:
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        return str(idx % len(self))

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[self._key(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._key(idx), module)

    def __delitem__(self, idx: int | slice) -> None:
        items = list(self._modules.values())
        del items[idx]
        self._modules.clear()
        self.extend(items)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        if not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleList.extend should be called with an iterable, but got "
                + type(modules).__name__
            )
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        self.extend(items)

    def __repr__(self) -> str:
        return Module.__repr__(self)


class ModuleDict(Module):
    """A dict of modules, registered so their parameters are the owner's."""

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        module = self[key]
        del self[key]
        return module

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Module]]:
        return self._modules.items()

    def values(self) -> Iterable[Module]:
        return self._modules.values()

    def update(self, modules: Mapping[str, Module] | Iterable[Any]) -> None:
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for pair in pairs:
            key, module = pair
            self[key] = module
