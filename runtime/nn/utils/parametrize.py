"""`yg.nn.utils.parametrize`: a parameter computed from others on every access.

    register_parametrization(linear, "weight", Symmetric())
    linear.weight        # Symmetric()(linear.parametrizations.weight.original)

As PyTorch's: the parameter moves to `module.parametrizations[name].original`
(or `original0, original1, ...` when the parametrization's `right_inverse`
returns a sequence), the module's class is swapped for a subclass named
`Parametrized<Class>` that carries a property `name`, whose getter runs the
chain of parametrizations (once per `cached()` block, or on every access) and
whose setter runs their `right_inverse`s backwards into the originals.
`remove_parametrizations` undoes it, leaving the parametrized value in the
parameter or the original one.

Setting an original to a new value keeps its Parameter object and gives it the
value's storage, as PyTorch's `set_` does, so optimisers holding the original
keep working.
"""

from __future__ import annotations

import collections.abc
import copy
import copyreg
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from yamlgrad.runtime.autograd.grad_mode import no_grad
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.nn.module import Module, ModuleDict, ModuleList
from yamlgrad.runtime.nn.parameter import Parameter

__all__ = [
    "register_parametrization",
    "remove_parametrizations",
    "is_parametrized",
    "cached",
    "type_before_parametrizations",
    "transfer_parametrizations_and_params",
    "ParametrizationList",
]

# The `cached()` blocks open (they nest), and the values computed inside them,
# by (id(module), tensor name).
_open_blocks = 0
_memo: dict[tuple[int, str], Tensor] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Inside the block each parametrized tensor is computed once, on first access."""
    global _open_blocks
    _open_blocks += 1
    try:
        yield
    finally:
        _open_blocks -= 1
        if _open_blocks == 0:
            _memo.clear()


def _adopt(owner: Module, name: str, tensor: Tensor) -> None:
    """Register `tensor` on `owner` as a parameter if it is one, else a buffer."""
    if isinstance(tensor, Parameter):
        owner.register_parameter(name, tensor)
    else:
        owner.register_buffer(name, tensor)


def _point_at(dest: Tensor, src: Tensor) -> None:
    """`dest` now holds `src`'s storage (PyTorch's `dest.set_(src)`)."""
    dest.data = src
    dest.version_counter.bump()


def _type_name(value: Any) -> str:
    return type(value).__name__


def _invert(modules: Sequence[Module], value: Any, strict: bool) -> Any:
    """Run the `right_inverse`s of `modules`, last first. At registration
    (`strict` False) a parametrization without one, or whose one raises
    NotImplementedError, passes the value through; when assigning, a missing
    one is an error."""
    for step in reversed(list(modules)):
        inverse = getattr(step, "right_inverse", None)
        if inverse is None:
            if strict:
                raise RuntimeError(
                    f"parametrization {_type_name(step)} does not implement "
                    "right_inverse."
                )
            continue
        if strict:
            value = inverse(value)
            continue
        try:
            value = inverse(value)
        except NotImplementedError:
            pass
    return value


def _check_like(made: Any, shape: Any, dtype: Any, how: str) -> None:
    """A parametrization's output must keep the tensor's shape and dtype
    (unless `unsafe`); `how` is the start of PyTorch's message."""
    if not isinstance(made, Tensor):
        raise ValueError(
            f"A parametrization must return a tensor. Got {_type_name(made)}."
        )
    if made.dtype != dtype:
        raise ValueError(
            f"{how} dtype of the tensor, unless `unsafe` flag is enabled.\n"
            f"unparametrized dtype: {dtype}\n"
            f"parametrized dtype: {made.dtype}"
        )
    if made.shape != shape:
        raise ValueError(
            f"{how} shape of the tensor, unless `unsafe` flag is enabled.\n"
            f"unparametrized shape: {shape}\n"
            f"parametrized shape: {made.shape}"
        )


class ParametrizationList(ModuleList):
    """The chain of parametrizations of one tensor, and its original(s):
    `original`, or `original0, original1, ...` when the chain's right inverse
    gives a sequence."""

    def __init__(
        self,
        modules: Sequence[Module],
        original: Tensor,
        unsafe: bool = False,
    ) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        with no_grad():
            stored = _invert(self, original, strict=False)
        if not isinstance(stored, (Tensor, Sequence)):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors "
                f"(list, tuple...). Got {_type_name(stored)}"
            )
        self.is_tensor = isinstance(stored, Tensor)
        self.ntensors = 1 if self.is_tensor else len(stored)
        if self.is_tensor:
            self._keep_single(original, stored)
        else:
            self._keep_several(original, stored)
        if not unsafe:
            _check_like(
                self(),
                shape,
                dtype,
                "Registering a parametrization may not change the",
            )

    def _keep_single(self, original: Tensor, stored: Tensor) -> None:
        if stored.dtype != original.dtype:
            raise ValueError(
                "When `right_inverse` outputs one tensor, it may not change the "
                f"dtype.\noriginal.dtype: {original.dtype}\n"
                f"right_inverse(original).dtype: {stored.dtype}"
            )
        if stored is not original:
            with no_grad():
                _point_at(original, stored)
        _adopt(self, "original", original)

    def _keep_several(self, original: Tensor, pieces: Sequence[Any]) -> None:
        trainable = original.requires_grad
        for index, piece in enumerate(pieces):
            if not isinstance(piece, Tensor):
                raise ValueError(
                    "'right_inverse' must return a Tensor or a Sequence of tensors "
                    f"(list, tuple...). Got element {index} of the sequence with type "
                    f"{_type_name(piece)}."
                )
            if isinstance(original, Parameter):
                piece = Parameter(piece, trainable)
            _adopt(self, f"original{index}", piece.requires_grad_(trainable))

    def _originals(self) -> list[Tensor]:
        if self.is_tensor:
            return [self.original]
        return [getattr(self, f"original{i}") for i in range(self.ntensors)]

    def right_inverse(self, value: Tensor) -> None:
        """Set the original(s) so that the parametrized tensor is `value`."""
        with no_grad():
            stored = _invert(self, value, strict=True)
            if self.is_tensor:
                if not isinstance(stored, Tensor):
                    raise ValueError(
                        "`right_inverse` should return a tensor. Got "
                        f"{_type_name(stored)}"
                    )
                if stored.dtype != self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype "
                        f"{stored.dtype} while `original` has dtype "
                        f"{self.original.dtype}"
                    )
                _point_at(self.original, stored)
                return
            self._store_pieces(stored)

    def _store_pieces(self, pieces: Any) -> None:
        if not isinstance(pieces, collections.abc.Sequence):
            raise ValueError(
                "'right_inverse' must return a sequence of tensors. Got "
                f"{_type_name(pieces)}."
            )
        if len(pieces) != self.ntensors:
            raise ValueError(
                "'right_inverse' must return a sequence of tensors of length "
                f"{self.ntensors}. Got a sequence of length {len(pieces)}."
            )
        for index, (target, piece) in enumerate(zip(self._originals(), pieces)):
            if not isinstance(piece, Tensor):
                raise ValueError(
                    "'right_inverse' must return a sequence of tensors or "
                    "reference-type opaques. Got element "
                    f"{index} of type {_type_name(piece)}."
                )
            if piece.dtype != target.dtype:
                raise ValueError(
                    f"Tensor {index} returned by `right_inverse` has dtype "
                    f"{piece.dtype} while `original{index}` has dtype "
                    f"{target.dtype}"
                )
            _point_at(target, piece)

    def forward(self) -> Tensor:  # type: ignore[override]
        steps = iter(self)
        value = next(steps)(*self._originals())
        for step in steps:
            value = step(value)
        return value


def _inject_new_class(module: Module) -> None:
    """Swap the module's class for `Parametrized<Class>`, a subclass that holds
    the properties (a per-instance class: properties live on classes)."""
    cls = module.__class__

    def default_deepcopy(self: Module, memo: dict[int, Any]) -> Module:
        obj = memo.get(id(self), None)
        if obj is not None:
            return obj
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = copy.deepcopy(self.__dict__, memo)
        for slot in copyreg._slotnames(self.__class__):  # type: ignore[attr-defined]
            if hasattr(self, slot):
                setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
        return replica

    def getstate(self: Module) -> Any:
        raise RuntimeError(
            "Serialization of parametrized modules is only supported through "
            "state_dict(). See:\nhttps://pytorch.org/tutorials/beginner/"
            "saving_loading_models.html#saving-loading-a-general-checkpoint-for-"
            "inference-and-or-resuming-training"
        )

    namespace: dict[str, Any] = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _parametrized_property(module: Module, tensor_name: str) -> property:
    """The property standing for `tensor_name`: reading runs the chain (once
    per `cached()` block), assigning runs its right inverse."""
    key = (id(module), tensor_name)

    def read(self: Module) -> Tensor:
        chain = self.parametrizations[tensor_name]
        if not _open_blocks:
            return chain()
        if key not in _memo:
            _memo[key] = chain()
        return _memo[key]

    def assign(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    return property(read, assign)


def _check_appended(tensor_name: str, current: Tensor, step: Module) -> None:
    """A parametrization appended to a chain must keep the tensor's shape and
    dtype, and so must its right inverse, if it has one."""
    made = step(current)
    if not isinstance(made, Tensor):
        raise ValueError(
            f"A parametrization must return a tensor. Got {_type_name(made)}."
        )
    for what in ("dtype", "shape"):
        before, after = getattr(current, what), getattr(made, what)
        if before != after:
            raise ValueError(
                f"Registering a parametrization may not change the {what} of the "
                "tensor, unless the `unsafe` flag is enabled.\n"
                f"module.{tensor_name}.{what}: {before}\n"
                f"parametrization(module.{tensor_name}).{what}: {after}"
            )
    inverse = getattr(step, "right_inverse", None)
    if inverse is None:
        return
    try:
        back = inverse(made)
    except NotImplementedError:
        return
    if not isinstance(back, Tensor):
        raise ValueError(
            "parametrization.right_inverse must return a tensor. Got: "
            f"{_type_name(back)}"
        )
    for what in ("dtype", "shape"):
        before, after = getattr(current, what), getattr(back, what)
        if before != after:
            raise ValueError(
                "The tensor returned by parametrization.right_inverse must have the "
                f"same {what} as module.{tensor_name}, unless the `unsafe` flag is "
                f"enabled.\nmodule.{tensor_name}.{what}: {before}\n"
                f"returned {what}: {after}"
            )


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Make `module.<tensor_name>` be `parametrization(original)`; a second call on
    the same name appends to the chain."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        chain = module.parametrizations[tensor_name]
        if not unsafe:
            _check_appended(tensor_name, getattr(module, tensor_name), parametrization)
        chain.append(parametrization)
        chain.unsafe |= unsafe
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a "
            f"parametrized element with name '{tensor_name}'"
        )
    # The chain is built (and checked) first: if that fails, the module is as
    # it was.
    chain = ParametrizationList([parametrization], getattr(module, tensor_name), unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        _inject_new_class(module)
        module.parametrizations = ModuleDict()
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")
    setattr(module.__class__, tensor_name, _parametrized_property(module, tensor_name))
    module.parametrizations[tensor_name] = chain
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether `module` has a parametrization (on `tensor_name`, if given)."""
    chains = getattr(module, "parametrizations", None)
    if not isinstance(chains, ModuleDict):
        return False
    return len(chains) > 0 if tensor_name is None else tensor_name in chains


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Undo `register_parametrization` on `tensor_name`; the parameter keeps the
    parametrized value (`leave_parametrized`) or gets its original back."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(
            f"Module {module} does not have a parametrization on {tensor_name}"
        )
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
                _point_at(original, t)
    elif leave_parametrized:
        t = getattr(module, tensor_name)
        original = Parameter(t.detach()) if t.requires_grad else t
    else:
        raise ValueError(
            "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that "
            "is parametrized in terms of a sequence of tensors."
        )
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _adopt(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class, before `Parametrized<Class>` replaced it."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(
    from_module: Module, to_module: Module, tensor_name: str | None = None
) -> Module:
    """Give `to_module` the parametrizations (and originals) of `from_module`."""
    if is_parametrized(from_module):
        names = from_module.parametrizations if tensor_name is None else [tensor_name]
        for name in names:
            if not hasattr(to_module, name):
                setattr(to_module, name, Parameter(getattr(from_module, name)))
            for param_func in from_module.parametrizations[name]:
                register_parametrization(to_module, name, param_func)
            source = from_module.parametrizations[name]
            target = to_module.parametrizations[name]
            if hasattr(source, "original"):
                target.original = source.original
            else:
                num = 0
                while hasattr(source, f"original{num}"):
                    setattr(target, f"original{num}", getattr(source, f"original{num}"))
                    num += 1
    return to_module
