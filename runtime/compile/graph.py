"""The traced graph: what `yg.compile` recorded a function doing, before codegen.

A `Value` is one array the function computed or read: an input (an argument of
the function), an external (a tensor it read without receiving it, such as a
module's parameter, read fresh on every call), a constant (a tensor it made for
itself, whose data is part of the graph) or the output of a `Call`. A `Call` is
one derivatives.yaml entry that ran: its entry (whose `forward:` kernel runs), the
entry whose formulas give its backward (the same one, or the functional entry of
an in-place op), and its arguments: a Value for each tensor, the value itself
(a `Const`) for everything else. Shapes and dtypes are the ones seen while
tracing; the guards make them facts for every call the graph serves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

INPUT = "input"
EXTERNAL = "external"
CONSTANT = "constant"
OP = "op"


@dataclass(eq=False)
class Value:
    """One array of the graph, named as the generated code names it."""

    name: str
    kind: str  # INPUT, EXTERNAL, CONSTANT or OP
    shape: tuple[int, ...]
    dtype: np.dtype
    requires_grad: bool
    # The array seen while tracing: codegen runs each formula on it once to
    # learn its gradient's shape and dtype; dropped after codegen.
    example: Any = None

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Const:
    """A non-tensor argument (or a Python number given for a tensor), by value."""

    value: Any


Arg = Value | Const | list  # a list: a Tensor[] or Tensor?[] argument


@dataclass(eq=False)
class Call:
    """One recorded derivatives.yaml entry."""

    info: Any  # the entry that ran (tools.model.DifferentiabilityInfo)
    node_info: Any  # whose formulas are its backward (the functional entry)
    wrapper: Any  # its generated function, for replaying it on Tensors
    args: dict[str, Arg]  # by schema name
    outputs: list[Value | None]  # None: an output that is not floating
    casts: dict[str, np.dtype]  # type promotion of tensor operands
    where: str  # the user's line that called it
    detach: bool = False  # `Tensor.detach()`: the value, without a gradient

    @property
    def title(self) -> str:
        return "detach" if self.detach else _schema_text(self.info.func)


@dataclass(eq=False)
class Graph:
    """A traced function: its values, calls and outputs."""

    inputs: list[Value] = field(default_factory=list)  # the function's tensors
    externals: list[Value] = field(default_factory=list)
    constants: list[Value] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    outputs: list[Value] = field(default_factory=list)  # flat, in output order
    # An input or external changed in place: its final value is written back.
    writebacks: list[tuple[Value, Value]] = field(default_factory=list)

    @property
    def sources(self) -> list[Value]:
        """What the forward receives: the inputs, then the externals."""
        return self.inputs + self.externals

    @property
    def requires_grad(self) -> bool:
        return any(v.requires_grad for v in self.outputs)

    def describe(self) -> str:
        """The graph as text, one line per call (for explain())."""
        lines = []
        for v in self.inputs:
            lines.append(f"input    {v.name}: {_meta(v)}")
        for v in self.externals:
            lines.append(f"external {v.name}: {_meta(v)}")
        for v in self.constants:
            lines.append(f"constant {v.name}: {_meta(v)}")
        for call in self.calls:
            outs = ", ".join(str(o) for o in call.outputs if o is not None) or "_"
            args = ", ".join(f"{k}={_arg_text(a)}" for k, a in call.args.items())
            lines.append(f"{outs} = {call.title}  ({args})  # {call.where}")
        lines.append(f"outputs  {', '.join(v.name for v in self.outputs)}")
        for target, value in self.writebacks:
            lines.append(f"writeback {target.name} <- {value.name}")
        return "\n".join(lines)


_SCHEMA_TEXT: dict[int, str] = {}


def _schema_text(schema: Any) -> str:
    """str(schema), once per schema (the schemas live as long as the process)."""
    text = _SCHEMA_TEXT.get(id(schema))
    if text is None:
        text = _SCHEMA_TEXT[id(schema)] = str(schema)
    return text


def _meta(v: Value) -> str:
    grad = ", requires_grad" if v.requires_grad else ""
    return f"{list(v.shape)} {v.dtype}{grad}"


def _arg_text(arg: Arg) -> str:
    if isinstance(arg, Value):
        return arg.name
    if isinstance(arg, Const):
        return repr(arg.value)
    return "[" + ", ".join(_arg_text(a) for a in arg) + "]"
