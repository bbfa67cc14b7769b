"""Tracing: run a function once and record the derivatives.yaml entries it calls.

The function runs eagerly, in the caller's grad mode, on copies of its tensor arguments
(`TracerTensor`s, so an in-place op on an argument changes nothing yet). Each
generated wrapper hands its call to `Tracer.record` (runtime/wrappers/interposition.py),
which runs it and notes the entry, a graph Value for each tensor argument, the
other arguments by value, and the outputs. Because every op really runs, Python
control flow over shapes, dtypes and arguments just happens; only a value read
back into Python (`.item()`, `bool(t)`, `.numpy()`, `.tolist()` of any tensor,
checked in Tensor itself while a thread traces; a random draw) cannot be a
graph, nor can a backward inside the function: they raise `TraceError` naming
the user's line.

A tensor that the function reads without receiving it becomes an external
input. When the trace is over, an external that is still alive (a module's
parameter, a global) stays one: the compiled function reads its current data on
each call, after checking it is the same object with the same shape and dtype.
One that died with the trace was made inside the function (`yg.ones(3)`): its
data becomes a constant of the graph.

In-place ops are recorded as their functional form: the tensor's value in the
graph becomes the new one. An argument or external changed in place is written
back after each call, as eager mode would have changed it. An external the trace
may change (in place, or through a kernel that updates an argument, as batch
norm's running statistics) is put back when the trace ends or fails, so the
first call changes it once, as the later ones do.
"""

from __future__ import annotations

import functools
import keyword
import os
import sys
import sysconfig
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.backend import dtype_kind
from yamlgrad.runtime.autograd.grad_mode import _state as _grad_mode
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.compile.graph import (
    CONSTANT,
    EXTERNAL,
    INPUT,
    OP,
    Arg,
    Call,
    Const,
    Graph,
    Value,
)
from yamlgrad.runtime.errors import ERR_LEAF_INPLACE
from yamlgrad.runtime.wrappers.interposition import tracing
from yamlgrad.runtime.wrappers import variable_type_utils
from yamlgrad.runtime.wrappers.variable_type_utils import promote_operands

_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Frames in these folders are yamlgrad's own; the first other one is the user's.
_INTERNAL = tuple(
    os.path.join(_PACKAGE, folder) + os.sep for folder in ("runtime", "generated")
)
_GENERATED_MODULE = "yamlgrad.generated.VariableType"
# The standard library's own folder (copy.deepcopy, pickle): a call the user's
# line made through it is named at that line (not the library's).
_STDLIB = os.path.join(sysconfig.get_paths()["stdlib"], "")


ERR_FOREIGN_BACKEND = (
    "yamlgrad.compile cannot trace a tensor on {device} (at {line}): compiled "
    "graphs run on numpy arrays. Use yg.compile(fn, fallback=True) to run the "
    "function eagerly on {device}, or call .numpy() on its tensors first."
)


class TraceError(RuntimeError):
    """A function that yg.compile cannot turn into one graph."""


def user_line() -> str:
    """`file:line` of the innermost frame outside yamlgrad's runtime and the
    standard library (its installed packages excepted)."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (
            name.startswith(_INTERNAL)
            or name.startswith("<frozen ")
            or name.startswith(_STDLIB)
            and "site-packages" not in name
        ):
            return f"{name}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


@functools.lru_cache(maxsize=None)
def entries() -> tuple[dict[str, Any], dict[str, Any]]:
    """derivatives.yaml's entries by wrapper name, and for each in-place entry
    that reuses a node, the functional entry whose formulas it records."""
    from pathlib import Path

    from yamlgrad.tools.load import load_derivatives

    infos = load_derivatives(Path(_PACKAGE) / "derivatives.yaml")
    by_wrapper = {info.wrapper_name: info for info in infos}
    functional = {}
    for info in infos:
        if info.reuses_node:
            key = info.func.signature_key()
            functional[info.wrapper_name] = next(
                i for i in infos if not i.inplace and i.func.signature_key() == key
            )
    return by_wrapper, functional


class TracerTensor(Tensor):
    """A Tensor of a function being traced: its `detach()` and `detach_()` are
    recorded. (Reading
    any tensor's value into Python raises while the trace runs: the graph would
    depend on this one call's data; see Tensor's `active_tracing`.)"""

    __slots__ = ()

    def detach(self) -> Tensor:
        out = Tensor.detach(self)
        if tracing.active and tracing.is_recording():
            tracing._local.recorder.record_detach(self, out)  # type: ignore[union-attr]
        return out

    def detach_(self) -> Tensor:
        Tensor.detach_(self)
        if tracing.active and tracing.is_recording():
            tracing._local.recorder.record_detach_(self)  # type: ignore[union-attr]
        return self

    @property
    def data(self) -> Tensor:
        return self.detach()


class Tracer:
    """Records one run of a function into a Graph (see the module docstring)."""

    def __init__(self, grad_enabled: bool) -> None:
        self.grad_enabled = grad_enabled
        self.graph = Graph()
        self.by_id: dict[int, Value] = {}
        self.by_data: dict[int, Value] = {}  # id of a bound tensor's ndarray
        self.keep: list[Any] = []  # every tensor seen, so no id is reused
        self.origin: dict[int, tuple[Value, Tensor]] = {}  # inputs and externals
        self.backups: dict[int, tuple[Tensor, np.ndarray, int]] = {}
        self.external_tensors: list[tuple[Value, Tensor]] = []
        self.names: dict[str, int] = {}
        self.used: set[str] = set()
        self.reserved: frozenset[str] = frozenset()
        self.external_names: dict[int, str] = {}  # a name for a closure's tensor

    # -- names ----------------------------------------------------------------------

    def fresh_name(self, base: str) -> str:
        """`mul`, `mul_1`, ...: FX's naming, never a name the namespace binds."""
        if not base.isidentifier() or keyword.iskeyword(base):
            base = "value"
        n = self.names.get(base, 0)
        while True:
            name = base if n == 0 else f"{base}_{n}"
            n += 1
            if name not in self.reserved and name not in self.used:
                self.names[base] = n
                self.used.add(name)
                return name

    def new_value(self, base: str, kind: str, data: Any, requires_grad: bool) -> Value:
        if backend.is_foreign(data):
            raise TraceError(
                ERR_FOREIGN_BACKEND.format(
                    device=backend.device_name(data), line=user_line()
                )
            )
        array = np.asarray(data)
        return Value(
            self.fresh_name(base), kind, array.shape, array.dtype, requires_grad, array
        )

    # -- inputs ---------------------------------------------------------------------

    def add_input(self, tensor: Tensor, name: str) -> TracerTensor:
        """A tensor argument of the function: a copy of it to trace with."""
        requires_grad = self.grad_enabled and tensor._requires_grad
        value = self.new_value(name, INPUT, tensor._data, requires_grad)
        tracer = TracerTensor._make(tensor._data.copy())
        tracer._requires_grad = tensor._requires_grad
        self.graph.inputs.append(value)
        self.bind(tracer, value)
        self.origin[id(tracer)] = (value, tensor)
        return tracer

    def bind(self, tensor: Tensor, value: Value) -> None:
        self.by_id[id(tensor)] = value
        self.by_data[id(tensor._data)] = value
        self.keep.append(tensor)

    def external(self, tensor: Tensor) -> Value:
        requires_grad = self.grad_enabled and tensor._requires_grad
        name = self.external_names.get(id(tensor), "closure")
        if not requires_grad:
            # The trace runs the ops on it, and one may change it in place: an
            # in-place op, or a kernel that updates an argument (batch norm's
            # running statistics). finish() puts it back, so that the first
            # call changes it once, as every later call does.
            self.backups[id(tensor)] = (tensor, tensor._data.copy(), tensor._version)
        value = self.new_value(name, EXTERNAL, tensor._data, requires_grad)
        self.bind(tensor, value)
        self.origin[id(tensor)] = (value, tensor)
        self.external_tensors.append((value, tensor))
        return value

    def tensor_arg(self, v: Any) -> Arg:
        if isinstance(v, Tensor):
            value = self.by_id.get(id(v))
            return value if value is not None else self.external(v)
        if isinstance(v, np.generic):
            return Const(v.item())
        return Const(v)

    def arg_spec(self, argument: Any, v: Any) -> Arg:
        if argument.is_tensor:
            return self.tensor_arg(v)
        if argument.is_tensor_list:
            return [self.tensor_arg(t) for t in v]
        if argument.type.base == "Tensor":  # Tensor?[]: indices, as ndarrays
            return [self.index_arg(a) for a in v]
        return Const(v)

    def index_arg(self, array: np.ndarray | None) -> Arg:
        """An index of a `Tensor?[]`, which the wrapper has unpacked: the graph
        value whose data it is, or a constant."""
        if array is None:
            return Const(None)
        value = self.by_data.get(id(array))
        if value is None:
            return Const(array)
        if array.dtype == np.bool_:
            self.unsupported("indexing with a boolean mask computed in the function")
        return value

    # -- recording (called by the generated wrappers) ---------------------------------

    def record(self, entry: str, wrapper: Callable[..., Any], args: tuple) -> Any:
        info = self.entry_info(entry, wrapper)
        arguments = info.func.arguments
        args = _unpacked(info, args)
        specs = {a.name: self.arg_spec(a, v) for a, v in zip(arguments, args)}
        if info.inplace:
            self.check_inplace(info, args[0], specs["self"])
            if not _grad_mode.enabled and _requires_grad(specs["self"]):
                # Eager mode changes the value and keeps the tensor's history:
                # a value whose gradient is not its own op's, which the graph
                # has no step for.
                self.unsupported(
                    f"{info.func.name} under no_grad on a tensor that requires grad"
                )
        kwargs = {a.python_name: _rewrapped(a, v) for a, v in zip(arguments, args)}
        was = tracing.pause()
        try:
            result = wrapper(**kwargs)
        finally:
            tracing.resume(was)
        node_info = entries()[1].get(entry, info)
        call = Call(info, node_info, wrapper, specs, [], self.casts(info, args), "")
        call.where = user_line()
        needs = (
            self.grad_enabled
            and node_info.op is not None
            and any(
                _requires_grad(specs.get(a.name))
                for a in node_info.differentiable_inputs
            )
        )
        base = info.func.name.rstrip("_")
        if info.inplace:
            call.outputs.append(self.output(result, base, needs))
        elif info.output_kind == "single":
            call.outputs.append(self.output(result, base, needs))
        else:
            flags = info.output_differentiability or (True,) * len(result)
            call.outputs.extend(
                self.output(t, base, needs and flag) for t, flag in zip(result, flags)
            )
        self.graph.calls.append(call)
        return result

    def record_detach(self, source: Tensor, out: Tensor) -> None:
        value = self.by_id[id(source)]
        call = Call(None, None, None, {"self": value}, [], {}, user_line(), True)
        call.outputs.append(self.output(out, "detach", False))
        self.graph.calls.append(call)

    def record_detach_(self, tensor: Tensor) -> None:
        """`t.detach_()`: from here on `t` is a detached value. Of an input or
        external it would change the caller's tensor, which a replay cannot."""
        value = self.by_id[id(tensor)]
        if value.kind in (INPUT, EXTERNAL):
            self.unsupported("detach_ of an input or a tensor from outside")
        call = Call(None, None, None, {"self": value}, [], {}, user_line(), True)
        call.outputs.append(self.output(tensor, "detach", False))
        self.graph.calls.append(call)

    def output(self, tensor: Tensor, base: str, needs: bool) -> Value:
        """The graph value of a recorded call's result. It requires grad when the
        call's inputs do and the op ran recording history (as eager did: a
        `no_grad()` block inside the function gives values that do not)."""
        data = tensor._data
        needs = needs and tensor._requires_grad
        requires_grad = needs and dtype_kind(data.dtype) in "fc"
        value = self.new_value(base, OP, data, requires_grad)
        if type(tensor) is Tensor:
            tensor.__class__ = TracerTensor
        self.bind(tensor, value)
        return value

    def entry_info(self, entry: str, wrapper: Callable[..., Any]) -> Any:
        info = entries()[0].get(entry)
        if info is None or wrapper.__module__ != _GENERATED_MODULE:
            raise TraceError(
                f"yamlgrad.compile traces the ops of derivatives.yaml; "
                f"{wrapper.__module__}.{entry} is not one of them (at {user_line()}). "
                "Use yg.compile(fn, fallback=True) to run such functions eagerly."
            )
        return info

    def casts(self, info: Any, args: tuple) -> dict[str, np.dtype]:
        """The dtypes type promotion gives each tensor operand, where it changes."""
        if info.type_promotion == "none":
            return {}
        names = [a.name for a in info.func.arguments]
        operands = info.promotion_operands
        raws = [_raw(args[names.index(n)]) for n in operands]
        int_to_float = info.type_promotion == "int_to_float"
        promoted = promote_operands(*raws, int_to_float=int_to_float)
        return {
            n: np.asarray(p).dtype
            for n, r, p in zip(operands, raws, promoted)
            if type(r) is np.ndarray and np.asarray(p).dtype != r.dtype
        }

    def check_inplace(self, info: Any, target: Tensor, spec: Arg) -> None:
        """What an in-place op may change inside a trace (see the module docstring)."""
        views = target._version_counter.views if target._version_counter else None
        if target._base is not None or any(ref() is not None for ref in views or ()):
            self.unsupported(f"{info.func.name} in place on a view or a viewed tensor")
        if not isinstance(spec, Value) or spec.kind not in (INPUT, EXTERNAL):
            return
        original = self.origin[id(target)][1]
        if spec.requires_grad:
            if original.grad_fn is None:
                raise RuntimeError(ERR_LEAF_INPLACE)
            self.unsupported(
                f"{info.func.name} in place on an input that requires grad"
            )
        if info.is_inplace_view:
            self.unsupported(f"{info.func.name} on an input")

    def unsupported(self, what: str) -> None:
        raise TraceError(
            f"yamlgrad.compile cannot trace {what} (at {user_line()}). "
            "Use yg.compile(fn, fallback=True) to run such functions eagerly."
        )

    def data_dependent(self, what: str) -> None:
        raise TraceError(
            f"{what} reads a traced tensor's value into Python, which a compiled "
            f"graph cannot depend on (at {user_line()}). Use "
            "yg.compile(fn, fallback=True) to run such functions eagerly."
        )

    # -- the end of the trace -----------------------------------------------------------

    def output_spec(self, result: Any) -> Any:
        """The function's result as a structure of graph outputs and constants:
        `("tensor", i)`, `("tuple", [...])`, `("list", [...])`, `("dict", {...})`
        or `("const", value)`."""
        if isinstance(result, Tensor):
            value = self.tensor_arg(result)
            self.graph.outputs.append(value)  # type: ignore[arg-type]
            return ("tensor", len(self.graph.outputs) - 1)
        if isinstance(result, (tuple, list)):
            kind = "list" if isinstance(result, list) else "tuple"
            return (kind, [self.output_spec(r) for r in result])
        if isinstance(result, dict):
            return ("dict", {k: self.output_spec(v) for k, v in result.items()})
        return ("const", result)

    def restore(self) -> None:
        """Put back the values and versions of the externals the trace read."""
        for tensor, data, version in self.backups.values():
            np.copyto(tensor._data, data)
            tensor.version_counter.value = version
        self.backups.clear()

    def finish(self) -> list[weakref.ref]:
        """Restore the externals changed in place, find the writebacks, and sort
        the externals from the constants; returns the externals' weak refs."""
        self.restore()
        # (A comprehension: a loop variable would keep the last tensor alive.)
        self.graph.writebacks = [
            (pair[0], self.by_id[key])
            for key, pair in self.origin.items()
            if self.by_id[key] is not pair[0]
        ]
        externals = [(v, weakref.ref(t), t._data) for v, t in self.external_tensors]
        self.by_id.clear()
        self.by_data.clear()
        self.keep.clear()
        self.origin.clear()
        self.backups.clear()
        self.external_tensors.clear()
        refs = []
        for value, ref, data in externals:
            if ref() is None:
                value.kind = CONSTANT
                value.name = self.fresh_name("constant")
                value.requires_grad = False
                value.example = data
                self.graph.constants.append(value)
            else:
                self.graph.externals.append(value)
                refs.append(ref)
        return refs


def _requires_grad(spec: Arg | None) -> bool:
    if isinstance(spec, Value):
        return spec.requires_grad
    if isinstance(spec, list):
        return any(_requires_grad(s) for s in spec)
    return False


def _unpacked(info: Any, args: tuple) -> tuple:
    """The arguments as the wrapper holds them once it has unpacked them (the
    recorder is called before that): each one the wrapper converts in place
    through its converter (a lone int for an `int[2]` is `(2, 2)`, a `Tensor?[]`
    is its ndarrays), the tensors as given."""
    unpacked = []
    for position, (a, v) in enumerate(zip(info.func.arguments, args), 1):
        if a.local == a.safe_name:  # converted in place by the wrapper
            convert = getattr(variable_type_utils, a.converter)
            size = {"size": a.type.size} if a.type.size else {}
            v = convert(v, info.func.name, a.python_name, position, **size)
        unpacked.append(v)
    return tuple(unpacked)


def _rewrapped(argument: Any, v: Any) -> Any:
    """An argument as the wrapper takes it again: a Tensor?[]'s unpacked
    ndarrays as tensors."""
    if argument.type.base == "Tensor" and argument.type.elem_optional:
        return [None if a is None else Tensor._make(a) for a in v]
    return v


def _raw(v: Any) -> Any:
    if isinstance(v, Tensor):
        return v._data
    return v.item() if isinstance(v, np.generic) else v
