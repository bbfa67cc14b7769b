"""Choosing an overload from Python arguments (PyTorch's PythonArgParser).

A public name with several overloads (`pow`, `sum`, `rsub`) is a generated
dispatcher that hands its arguments here together with each overload's parameter
list. Overloads are tried in derivatives.yaml order, first strictly (a `Tensor`
parameter takes only a Tensor), then letting a Python number stand for a `Tensor`,
as PyTorch's binding does: `torch.add(x, 2)` records AddBackward0 (add.Tensor with
a wrapped number), while `torch.rsub(x, 2)` matches rsub.Scalar (RsubBackward1).

A lone, non-optional `int[]` parameter after `self` also takes its ints
unpacked: `x.view(2, 3)` is `x.view((2, 3))` (`x.std(0, 1)` is not unpacked).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from yamlgrad.runtime import dtypes
from yamlgrad.runtime.errors import argument_type
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.generator import Generator

REQUIRED = object()
_NUMBERS = (int, float, bool, np.integer, np.floating, np.bool_)
_NUMBERS += (complex, np.complexfloating)
_COMPLEX = (complex, np.complexfloating)


@dataclass(frozen=True)
class Param:
    name: str
    kind: (
        str  # "Tensor", "Scalar", "int", "int[]", "float", "bool", "ScalarType", "str"
    )
    optional: bool
    default: Any  # REQUIRED when there is none
    kwarg_only: bool
    text: str  # as the schema writes it, for messages: "int[1]? dim=None"
    # The wrapper's parameter when the keyword is a Python keyword: `from` binds
    # to `from_`, as PyTorch's Python binding takes `**{"from": 1}`.
    parameter: str = ""


@dataclass(frozen=True)
class Overload:
    fn: Callable[..., Any]
    params: tuple[Param, ...]

    @property
    def varargs_list(self) -> bool:
        positional = [p for p in self.params if not p.kwarg_only]
        return (
            len(positional) == 2
            and positional[1].kind == "int[]"
            and not positional[1].optional  # `int[1]? dim` (std, var) takes a list
        )


def _matches(param: Param, value: Any, strict: bool) -> bool:
    if value is None:
        return param.optional
    kind = param.kind
    if kind == "Tensor":
        return isinstance(value, Tensor) or (not strict and isinstance(value, _NUMBERS))
    if kind == "Scalar":
        return isinstance(value, _NUMBERS)
    if kind == "int":
        return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if kind == "int[]":
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return True
        return isinstance(value, (tuple, list)) and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value
        )
    if kind == "Tensor[]":
        return isinstance(value, (tuple, list)) and all(
            isinstance(v, Tensor) for v in value
        )
    if kind == "Tensor?[]":
        return isinstance(value, (tuple, list)) and all(
            v is None or isinstance(v, Tensor) for v in value
        )
    if kind == "MemoryFormat":
        return dtypes.memory_format_of(value) is not None and not isinstance(
            value, bool
        )
    if kind == "float":
        return isinstance(value, _NUMBERS) and not isinstance(value, (bool, *_COMPLEX))
    if kind == "bool":
        return isinstance(value, (bool, np.bool_))
    if kind == "ScalarType":
        return isinstance(value, dtypes.dtype)
    if kind == "str":
        return isinstance(value, str)
    if kind == "Generator":
        return isinstance(value, Generator)
    if kind == "Layout":
        return isinstance(value, dtypes.layout)
    if kind == "Device":
        return isinstance(value, str) or isinstance(getattr(value, "type", None), str)
    return False


def _bind(
    overload: Overload, args: tuple[Any, ...], kwargs: dict[str, Any], strict: bool
) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    params = overload.params
    positional = [p for p in params if not p.kwarg_only]
    if len(args) > len(positional) and overload.varargs_list and len(args) > 2:
        args = (args[0], tuple(args[1:]))
    if len(args) > len(positional):
        return None
    names = {p.name for p in params}
    if any(k not in names for k in kwargs):
        return None
    given = {p.name for p in positional[: len(args)]}
    for p, value in zip(positional, args):
        if p.name in kwargs or not _matches(p, value, strict):
            return None
    for p in params:
        if p.name in given:
            continue
        if p.name in kwargs:
            if not _matches(p, kwargs[p.name], strict):
                return None
        elif p.default is REQUIRED:
            return None
    renamed = [p for p in params if p.parameter and p.name in kwargs]
    if renamed:
        kwargs = dict(kwargs)
        for p in renamed:
            kwargs[p.parameter] = kwargs.pop(p.name)
    return args, kwargs


# The overload chosen for a call, by the call's shape: the name, each argument's
# type, each keyword's name and type. Outside lists and tuples (whose elements
# decide) the choice depends on nothing else, so a call like one seen before
# skips the search. Bounded: ever new shapes start it afresh now and then.
# The keyword spellings of numpy that PyTorch's parser takes for its own:
# `x.sum(axis=0, keepdims=True)` is `x.sum(dim=0, keepdim=True)`.
NUMPY_KEYWORDS = {"axis": "dim", "keepdims": "keepdim"}


def numpy_keywords(kwargs: dict[str, Any]) -> dict[str, Any]:
    """`kwargs` with numpy's spellings (`axis`, `keepdims`) renamed to PyTorch's."""
    renamed = {}
    for key, value in kwargs.items():
        name = NUMPY_KEYWORDS.get(key, key)
        if name in renamed or (name != key and name in kwargs):
            raise TypeError(f"argument '{name}' given twice (as '{key}' too)")
        renamed[name] = value
    return renamed


_CHOSEN: dict[tuple[Any, ...], Overload] = {}
_CHOSEN_LIMIT = 4096


def dispatch(
    name: str,
    overloads: tuple[Overload, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    """Call the first overload that accepts the arguments (see the module doc)."""
    if kwargs and ("keepdims" in kwargs or "axis" in kwargs):
        kwargs = numpy_keywords(kwargs)
    key = (name, *map(type, args), *kwargs, *map(type, kwargs.values()))
    chosen = _CHOSEN.get(key)
    if chosen is not None:
        return chosen.fn(*args, **kwargs)
    for strict in (True, False):
        for overload in overloads:
            bound = _bind(overload, args, kwargs, strict)
            if bound is not None:
                if (
                    bound[0] is args
                    and bound[1] is kwargs
                    and not any(
                        type(v) is tuple or type(v) is list
                        for v in (*args, *kwargs.values())
                    )
                ):
                    if len(_CHOSEN) >= _CHOSEN_LIMIT:
                        _CHOSEN.clear()
                    _CHOSEN[key] = overload
                return overload.fn(*bound[0], **bound[1])
    raise TypeError(_invalid_arguments(name, overloads, args, kwargs))


def _type_name(value: Any) -> str:
    if isinstance(value, Tensor):
        return "Tensor"
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__} of [{', '.join(_type_name(v) for v in value)}]"
    return type(value).__name__


def _invalid_arguments(
    name: str,
    overloads: tuple[Overload, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> str:
    got = [_type_name(a) for a in args] + [
        f"{k}={_type_name(v)}" for k, v in kwargs.items()
    ]
    lines = [
        f"{name}() received an invalid combination of arguments - got "
        f"({', '.join(got)}), but expected one of:"
    ]
    for overload in overloads:
        params = []
        star = False
        for p in overload.params:
            if p.kwarg_only and not star:
                params.append("*")
                star = True
            params.append(p.text)
        lines.append(f" * ({', '.join(params)})")
    return "\n".join(lines)


def check_arguments(op: str, checks: tuple[tuple[str, str, int, Any], ...]) -> None:
    """Raise PyTorch's TypeError for the first Tensor or Tensor[] argument of
    the wrong type. A composite op calls this only after it failed, so a string
    where a Tensor goes names the argument instead of an AttributeError."""
    for name, kind, position, value in checks:
        if kind == "Tensor" and not isinstance(value, (Tensor, *_NUMBERS)):
            raise TypeError(argument_type(op, name, position, "Tensor", value))
        if kind == "Tensor[]" and not (
            isinstance(value, (tuple, list))
            and all(isinstance(v, Tensor) for v in value)
        ):
            expected = "tuple of Tensors"
            raise TypeError(argument_type(op, name, position, expected, value))


def schema_names(
    fn: Callable[..., Any], schema: str, keywords: tuple[tuple[str, str], ...] = ()
) -> Callable[..., Any]:
    """`fn` as `yamlgrad.ops.<name>.<overload>` offers it: called by the schema's
    argument names, as `torch.ops.aten` is. The Python function calls the
    schema's `self` `input` (PyTorch's Python signatures do); here it is `self=`
    again, and `input=` gets PyTorch's error for the missing `self`. `keywords`
    pairs an argument named with a Python keyword with fn's parameter for it
    (`("from", "from_")`)."""

    name = schema.split("(")[0].split(".")[0]

    def op(*args: Any, **kwargs: Any) -> Any:
        for keyword, parameter in keywords:
            if keyword in kwargs:
                kwargs[parameter] = kwargs.pop(keyword)
        if "self" in kwargs:
            kwargs["input"] = kwargs.pop("self")
        elif "input" in kwargs and not args:
            raise RuntimeError(
                f"aten::{name}() is missing value for argument 'self'. "
                f"Declaration: aten::{schema}"
            )
        return fn(*args, **kwargs)

    op.__name__ = fn.__name__
    op.__qualname__ = fn.__qualname__
    op.__doc__ = fn.__doc__
    op.__wrapped__ = fn  # type: ignore[attr-defined]
    return op
