"""The generator's data model: derivatives.yaml, parsed once into frozen dataclasses.

Names follow torchgen's (`FunctionSchema`, `Argument`, `Derivative`,
`SavedAttribute`, `DifferentiabilityInfo`) so the two can be read side by side.
Everything after loading (formula checks, saved-value inference, rendering) reads
these objects and never the raw YAML. A parsed schema prints back to the exact text
it came from: `FunctionSchema.parse` refuses any text that does not round-trip.
"""

from __future__ import annotations

import ast
import keyword
import re
from dataclasses import dataclass
from typing import Any

# The base types of the signature grammar that yamlgrad's runtime binds.
BASE_TYPES = frozenset(
    {"Tensor", "int", "SymInt", "float", "bool", "str", "Scalar", "ScalarType"}
    | {"MemoryFormat", "Generator", "Layout", "Device"}
)

# Defaults that name one of PyTorch's enum constants, by the Python value its
# binding passes for them (at::Reduction for `int reduction=Mean`).
ENUM_DEFAULTS = {"Mean": "1", "Sum": "2"}

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
_OPNAME_RE = re.compile(
    r"^(?P<base>[a-z_][a-z0-9_]*)(\.(?P<overload>[A-Za-z0-9_]+))?\Z"
)
_ANNOTATION_RE = re.compile(r"^([a-z])(\|[a-z])*(!?)( -> (\*|[a-z](\|[a-z])*))?\Z")
# Defaults are raw text, as in PyTorch, limited to what has a Python literal:
# numbers, True/False/None, int lists (`[]`, `[0, 1]`, `[0,1]`), strings in
# either quotes (`'none'`, `"L"`) and the ENUM_DEFAULTS names.
_DEFAULT_RE = re.compile(
    r"^(True|False|None|-?\d+(\.\d+)?(e-?\d+)?|\[(-?\d+(, ?-?\d+)*)?\]"
    r"|\"[A-Za-z0-9_]*\"|'[A-Za-z0-9_]*'|" + "|".join(ENUM_DEFAULTS) + r")\Z"
)
_TYPE_RE = re.compile(
    r"^(?P<base>[A-Za-z]+)(\((?P<annotation>[^)]*)\))?"
    r"(?P<suffix>\??(\[\d*\])?\??)\Z"
)


@dataclass(frozen=True)
class Location:
    """Where a value came from in derivatives.yaml. Every GenError names one."""

    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


class GenError(Exception):
    """Bad input to the generator, reported as `path:line: op: message`."""

    def __init__(self, loc: Location, op: str, message: str) -> None:
        # One line, of bounded length, whatever the input held: a newline or a
        # control character is shown escaped, a huge name cut.
        shown = op if op.isprintable() else repr(op)
        if len(shown) > 200:
            shown = shown[:200] + "..."
        super().__init__(f"{loc}: {shown}: {message}")
        self.loc = loc
        self.op = op
        self.message = message


class SchemaError(ValueError):
    """A schema string that does not parse; the loader adds file, line and op."""


@dataclass(frozen=True)
class Type:
    """`Tensor`, `Tensor(a!)`, `int[1]?`, `Scalar?`, `SymInt[]`, `Tensor?[]`: a parsed
    type."""

    base: str
    annotation: str | None  # "a", "a!", "a -> *"; only on Tensor
    is_list: bool
    size: int | None  # the N of `int[N]`
    optional: bool
    elem_optional: bool = False  # `Tensor?[]`: a list whose items may be None

    @staticmethod
    def parse(text: str) -> Type:
        m = _TYPE_RE.match(text)
        if m is None:
            raise SchemaError(f"type does not parse: {text!r}")
        base, annotation, suffix = m["base"], m["annotation"], m["suffix"]
        if base not in BASE_TYPES:
            raise SchemaError(f"unknown type {base!r} in {text!r}")
        if annotation is not None:
            if base != "Tensor":
                raise SchemaError(f"only Tensor takes an alias annotation: {text!r}")
            if _ANNOTATION_RE.match(annotation) is None:
                raise SchemaError(f"bad alias annotation {annotation!r} in {text!r}")
        is_list = "[" in suffix
        elem_optional = is_list and suffix.startswith("?")
        if elem_optional and base != "Tensor":
            raise SchemaError(f"only Tensor?[] has optional items: {text!r}")
        size_text = suffix[suffix.index("[") + 1 : suffix.index("]")] if is_list else ""
        return Type(
            base=base,
            annotation=annotation,
            is_list=is_list,
            size=int(size_text) if size_text else None,
            optional=suffix.endswith("?"),
            elem_optional=elem_optional,
        )

    @property
    def is_tensor(self) -> bool:
        """A single (possibly optional) tensor: one gradient edge."""
        return self.base == "Tensor" and not self.is_list

    def __str__(self) -> str:
        text = self.base
        if self.annotation is not None:
            text += f"({self.annotation})"
        if self.elem_optional:
            text += "?"
        if self.is_list:
            text += f"[{'' if self.size is None else self.size}]"
        if self.optional:
            text += "?"
        return text


@dataclass(frozen=True)
class Argument:
    name: str
    type: Type
    default: str | None  # raw text, as in PyTorch: "1", "False", "None", "[]"
    kwarg_only: bool

    @property
    def is_tensor(self) -> bool:
        return self.type.is_tensor

    @property
    def is_tensor_list(self) -> bool:
        """A `Tensor[]`: one gradient edge per tensor. (A `Tensor?[]` of indices is
        not differentiable: it is passed and saved as a list of ndarrays.)"""
        return (
            self.type.base == "Tensor"
            and self.type.is_list
            and not self.type.elem_optional
        )

    @property
    def splat(self) -> str:
        """How the wrapper passes it to collect_next_edges: `*tensors` for a list."""
        return f"*{self.safe_name}" if self.is_tensor_list else self.safe_name

    @property
    def binding_kind(self) -> str:
        """How Python values bind to it: runtime/wrappers/binding.py's `Param.kind`."""
        base = "int" if self.type.base == "SymInt" else self.type.base
        if self.type.elem_optional:
            base += "?"
        return f"{base}[]" if self.type.is_list else base

    @property
    def converter(self) -> str:
        """The runtime/wrappers/variable_type_utils.py function that checks and unpacks it."""
        kind = (
            self.binding_kind.replace("[]", "_list")
            .replace("?", "_optional")
            .replace("ScalarType", "scalar_type")
            .replace("MemoryFormat", "memory_format")
        )
        name = f"{kind.lower()}_arg"
        return f"optional_{name}" if self.type.optional else name

    @property
    def python_name(self) -> str:
        """Its keyword in PyTorch's Python signature, also in messages: `self` is
        `input`; a Python keyword stays itself (`x.random_(**{"from": 1})`)."""
        return "input" if self.name == "self" else self.name

    @property
    def safe_name(self) -> str:
        """The name as a Python identifier, which `forward` and formulas use: a
        Python keyword gets a trailing `_` (`from` is `from_`)."""
        return f"{self.name}_" if self.is_keyword else self.name

    @property
    def is_keyword(self) -> bool:
        """Named with a Python keyword (`int from`): its parameter is `from_`."""
        return keyword.iskeyword(self.name)

    @property
    def parameter(self) -> str:
        """The wrapper's parameter: the Python keyword, or its safe name when that
        is a Python keyword (the binding maps `from=` to `from_`)."""
        return "input" if self.name == "self" else self.safe_name

    @property
    def local(self) -> str:
        """Its name inside the wrapper once unpacked: tensors become `<name>_`, as PyTorch names them."""
        tensor = self.is_tensor or self.is_tensor_list
        return f"{self.safe_name}_" if tensor else self.safe_name

    @property
    def py_default(self) -> str | None:
        """The default as a Python literal: `[]` -> `()`, `[0, 1]` -> `(0, 1)`,
        `Mean` -> `1` (ENUM_DEFAULTS)."""
        if self.default is None:
            return None
        if self.default.startswith("["):
            items = self.default[1:-1]
            return f"({items},)" if items and "," not in items else f"({items})"
        return ENUM_DEFAULTS.get(self.default, self.default)

    @property
    def python_text(self) -> str:
        """As PyTorch's Python signature lists it in messages: `Tensor input`."""
        return self._text(self.python_name)

    def _text(self, name: str) -> str:
        default = "" if self.default is None else f"={self.default}"
        return f"{self.type} {name}{default}"

    def __str__(self) -> str:
        return self._text(self.name)


@dataclass(frozen=True)
class Return:
    name: str | None
    type: Type

    def __str__(self) -> str:
        return str(self.type) if self.name is None else f"{self.type} {self.name}"


@dataclass(frozen=True)
class FunctionSchema:
    """`mul.Tensor(Tensor self, Tensor other) -> Tensor`, parsed."""

    name: str  # "mul"
    overload: str  # "Tensor"; "" when there is none
    arguments: tuple[Argument, ...]
    returns: tuple[Return, ...]

    @staticmethod
    def parse(text: str) -> FunctionSchema:
        schema = _parse_schema(text)
        if str(schema) != text:
            raise SchemaError(f"schema does not round-trip: {text!r} -> {schema}")
        return schema

    def signature_key(self) -> tuple[object, ...]:
        """The schema without overload name, in-place `_`, annotations and return
        names: an in-place entry finds its functional entry by it."""
        args = tuple(
            (
                a.name,
                a.type.base,
                a.type.is_list,
                a.type.size,
                a.type.optional,
                a.default,
            )
            for a in self.arguments
        )
        return (self.name.rstrip("_"), args)

    @property
    def qualified_name(self) -> str:
        """The name with its overload, as PyTorch's dispatcher spells it: `max.dim`."""
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def cpp_name(self) -> str:
        """The overload's own name, as PyTorch's C++ API spells it: `sum_dim_IntList`."""
        return f"{self.name}_{self.overload}" if self.overload else self.name

    @property
    def tensor_arguments(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if a.is_tensor)

    @property
    def renames_self(self) -> bool:
        """Whether the Python signature calls `self` `input` (torch.abs(input=x))."""
        return any(a.name == "self" for a in self.arguments)

    @property
    def keyword_parameters(self) -> tuple[tuple[str, str], ...]:
        """(name, wrapper parameter) of each argument named with a Python keyword:
        `(("from", "from_"),)`. The bindings map the keyword to the parameter."""
        return tuple((a.name, a.parameter) for a in self.arguments if a.is_keyword)

    def __str__(self) -> str:
        parts: list[str] = []
        kwarg_only = False
        for a in self.arguments:
            if a.kwarg_only and not kwarg_only:
                parts.append("*")
                kwarg_only = True
            parts.append(str(a))
        name = f"{self.name}.{self.overload}" if self.overload else self.name
        if len(self.returns) == 1:  # `-> Tensor`, `-> Tensor output`
            returns = str(self.returns[0])
        else:
            returns = "(" + ", ".join(str(r) for r in self.returns) + ")"
        return f"{name}({', '.join(parts)}) -> {returns}"


def _split_top_level(text: str) -> list[str]:
    """Split on ", " outside brackets and parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 2 if text[i + 1 : i + 2] == " " else i + 1
    parts.append(text[start:])
    return parts


def _parse_argument(text: str, kwarg_only: bool) -> Argument:
    # Split off the default first: a list default has spaces (`int[2] s=[1, 1]`).
    head, sep, default = text.partition("=")
    if " " not in head:
        raise SchemaError(f"argument needs a type and a name: {text!r}")
    type_text, name = head.rsplit(" ", 1)
    if _NAME_RE.match(name) is None:
        raise SchemaError(f"bad argument name {name!r}")
    if sep and _DEFAULT_RE.match(default) is None:
        raise SchemaError(f"unsupported default {default!r} for argument {name!r}")
    return Argument(name, Type.parse(type_text), default if sep else None, kwarg_only)


def _parse_returns(text: str) -> tuple[Return, ...]:
    if text.startswith("(") and text.endswith(")"):
        items = _split_top_level(text[1:-1])
    else:
        items = [text]
    returns = []
    for item in items:
        type_text, _, name = item.partition(" ")
        if name and _NAME_RE.match(name) is None:
            raise SchemaError(f"bad return name {name!r}")
        returns.append(Return(name or None, Type.parse(type_text)))
    return tuple(returns)


def _parse_schema(text: str) -> FunctionSchema:
    head, arrow, returns_text = text.partition(") -> ")
    if not arrow or "(" not in head:
        raise SchemaError(f"expected 'name(args) -> returns': {text!r}")
    opname, _, args_text = head.partition("(")
    m = _OPNAME_RE.match(opname)
    if m is None:
        raise SchemaError(f"bad operator name {opname!r}")
    if keyword.iskeyword(m["base"]):
        raise SchemaError(f"operator name {m['base']!r} is a Python keyword")
    arguments: list[Argument] = []
    kwarg_only = False
    for item in _split_top_level(args_text) if args_text else []:
        if item == "*":
            if kwarg_only:
                raise SchemaError("'*' appears twice")
            kwarg_only = True
            continue
        arg = _parse_argument(item, kwarg_only)
        if any(a.name == arg.name for a in arguments):
            raise SchemaError(f"argument {arg.name!r} appears twice")
        clash = [a.name for a in arguments if a.safe_name == arg.safe_name]
        if clash:
            raise SchemaError(
                f"arguments {clash[0]!r} and {arg.name!r} are both "
                f"{arg.safe_name!r} in Python (a keyword-named argument gets a "
                "trailing '_')"
            )
        arguments.append(arg)
    return FunctionSchema(
        name=m["base"],
        overload=m["overload"] or "",
        arguments=tuple(arguments),
        returns=_parse_returns(returns_text),
    )


@dataclass(frozen=True)
class SavedAttribute:
    """One value a node keeps for backward."""

    name: str  # PyTorch's name: "self", "self_sym_sizes", "dim", "result"
    expr: str  # what the forward wrapper saves: "self", "self_.shape", "dim"
    is_tensor: bool  # a SavedVariable (version-checked), or a plain value
    is_output: bool  # the op's own result (saved after the kernel runs)
    local: str  # its name inside apply(): "self_", "other", "self_sym_sizes"
    is_list: bool = False  # a Tensor[] argument: a list of SavedVariables

    @property
    def attr(self) -> str:
        if self.name.endswith("_scalar_type"):
            # A saved dtype is no `_saved_` attribute: PyTorch's nodes expose
            # none (`_self_scalar_type`, as the YAML header names it).
            return "_" + self.name
        prefix = "_raw_saved_" if self.is_tensor else "_saved_"
        return prefix + self.name

    @property
    def getter(self) -> str:
        """The property that unpacks a saved tensor: `grad_fn._saved_self`."""
        return "_saved_" + self.name


@dataclass(frozen=True)
class Derivative:
    """The backward formula of one differentiable input, or of several at once.

    A key such as `self, other` gives one formula for both inputs: it returns a
    tuple, and may read `grad_input_mask` (which of them need a gradient). A
    `Tensor[]` input's formula returns one gradient per tensor in the list.
    """

    var_names: tuple[str, ...]  # ("self",); ("self", "other") for a multi-input key
    indices: tuple[int, ...]  # positions among the differentiable inputs: next edges
    original_formula: str  # as written, for messages and the generated docstring
    formula: str  # checked with ast, names rewritten to the locals of apply()
    saved: tuple[SavedAttribute, ...]
    uses_grads: bool  # reads every output's gradient (`grads`, `grad_<name>`)
    is_list: bool  # the input is a Tensor[]: its edges are one per tensor
    loc: Location

    @property
    def var_name(self) -> str:
        return ", ".join(self.var_names)

    @property
    def index(self) -> int:
        return self.indices[0]

    @property
    def is_multi(self) -> bool:
        return len(self.var_names) > 1

    @property
    def not_implemented(self) -> bool:
        """PyTorch's placeholder, `not_implemented("msg")`: the gradient raises at
        backward time, so the checks do not differentiate this input."""
        return self.original_formula.strip().startswith("not_implemented(")


@dataclass(frozen=True)
class ForwardDerivative:
    """The forward-mode (JVP) formula of one output, or of every output at once.

    `kind` says where it comes from: "formula" (written in the YAML),
    "auto_element_wise" (the backward formula with `grad` as the tangent),
    "auto_linear" (the op called on the tangents) or "derived" (from the backward
    formulas by the double-backward trick, for an entry that gives none).
    """

    output: str  # the key: "result", "result0", "values"; "" for every output
    kind: str
    original_formula: str  # as the YAML writes it ("auto_linear" for the macros)
    formula: str  # checked and expanded, in the `x_p` / `x_t` spelling
    loc: Location
    rendered: str = ""  # in the wrapper's names, set once the wrappers are named

    @property
    def target(self) -> str:
        """The wrapper's local that holds the tangent(s) it computes."""
        return f"{self.output}_t" if self.output else "outputs_t"


@dataclass(frozen=True)
class SampleArg:
    """One argument of one test sample: a tensor's shape, or a plain value."""

    name: str
    shape: tuple[int, ...] | None  # for tensors
    value: object  # for everything else (lists arrive as tuples)
    dtype: str | None  # None: the floating dtype under test; "bool" or "int64"
    domain: tuple[tuple[float, float], ...]  # intervals to draw tensor values from
    shapes: tuple[tuple[int, ...], ...] | None = None  # for a Tensor[]: one per tensor
    # Given values instead of random ones: an index tensor's entries (`values`),
    # or a Tensor?[]'s index tensors (nested tuples, None for `:`).
    values: Any = None
    index_list: tuple[Any, ...] | None = None
    # A matrix input's structure (`structure:` in the YAML): "positive_definite",
    # "lower_triangular" or "upper_triangular" (resolved from the sample's `upper`),
    # or "log_probabilities".
    structure: str | None = None

    def draw(self, rng: Any, dtype: Any, shape: tuple[int, ...]) -> Any:
        """Random values of `shape` for this argument, inside its domain."""
        import numpy as np

        if self.values is not None:
            return np.array(self.values, dtype=self.dtype or dtype)
        if self.dtype == "bool":
            return np.asarray(rng.random(shape) < 0.5)
        if self.dtype == "int64":
            return np.asarray(rng.integers(0, 5, shape))
        if (
            self.dtype == "complex"
        ):  # both parts inside the domain, in dtype's precision
            parts = self._uniform(rng, shape + (2,))
            return np.asarray(
                parts[..., 0] + 1j * parts[..., 1], dtype=_complex_of(dtype)
            )
        return np.asarray(self._uniform(rng, shape), dtype=dtype)

    def _uniform(self, rng: Any, shape: tuple[int, ...]) -> Any:
        import numpy as np

        which = rng.integers(0, len(self.domain), shape)
        lows = np.array([lo for lo, _ in self.domain])[which]
        highs = np.array([hi for _, hi in self.domain])[which]
        return lows + (highs - lows) * rng.random(shape)


def _complex_of(dtype: Any) -> Any:
    """The complex dtype of a float dtype's precision (float32: complex64)."""
    import numpy as np

    return np.result_type(dtype, np.complex64)


def _index_dtype(values: Any) -> str:
    """bool for a mask given as true/false, int64 otherwise."""
    while isinstance(values, tuple) and values:
        values = values[0]
    return "bool" if isinstance(values, bool) else "int64"


@dataclass(frozen=True)
class Sample:
    """One set of inputs from an entry's `samples`, for the generated tests."""

    args: tuple[SampleArg, ...]
    loc: Location

    def materialize(self, rng: Any, dtype: Any) -> dict[str, object]:
        """Keyword arguments: ndarrays for the tensors, drawn inside their domain."""
        import numpy as np

        kwargs: dict[str, object] = {}
        for a in self.args:
            if a.index_list is not None:
                kwargs[a.name] = [
                    None if i is None else np.array(i, dtype=_index_dtype(i))
                    for i in a.index_list
                ]
            elif a.shapes is not None:
                kwargs[a.name] = [a.draw(rng, dtype, shape) for shape in a.shapes]
            elif a.shape is None:
                kwargs[a.name] = a.value
            else:
                kwargs[a.name] = a.draw(rng, dtype, a.shape)
                if a.structure is not None:
                    kwargs[a.name] = structured_sample(kwargs[a.name], a.structure)
        return kwargs


def structured_sample(x: Any, structure: str) -> Any:
    """A well-conditioned matrix (batch) of `structure` made from random values.

    positive_definite: half of a symmetric positive definite S (S / 2, so that the
    checks' `x + x.mT`, PyTorch's gradcheck_wrapper_hermitian_input, gives S);
    lower/upper_triangular: that triangle, with a positive diagonal (>= 2), as a
    Cholesky factor has; log_probabilities: the values as drawn (the checks take
    their log_softmax)."""
    import numpy as np

    if structure == "log_probabilities":
        return x

    n = x.shape[-1]
    eye = np.eye(n, dtype=x.dtype)
    if structure == "positive_definite":
        return (x @ np.swapaxes(x, -1, -2) / n + eye) / 2
    triangle = np.triu(x) if structure == "upper_triangular" else np.tril(x)
    diagonal = np.abs(np.diagonal(x, 0, -2, -1))[..., None, :] + 2
    return np.where(eye.astype(bool), diagonal, triangle)


# PyTorch's in-place view functions: their wrappers use set_history on a view.
INPLACE_VIEW_OPS = frozenset(
    {"squeeze_", "unsqueeze_", "transpose_", "t_", "swapdims_", "swapaxes_"}
    | {"as_strided_", "detach_"}
)


# Integer arguments that name dims of the one Tensor argument (vmap shifts them).
DIM_ARGUMENTS = frozenset(
    {"dim", "dim0", "dim1", "dim2", "source", "destination", "start_dim", "end_dim"}
)


@dataclass(frozen=True)
class DifferentiabilityInfo:
    """One derivatives.yaml entry, checked and ready to render."""

    func: FunctionSchema
    forward: str  # checked, with tensor arguments renamed to their ndarray locals
    composite: str | None  # instead of forward: a checked call of other ops
    derivatives: tuple[Derivative, ...]
    non_differentiable: tuple[str, ...]  # tensor inputs declared non_differentiable
    op: str | None  # "MulBackward0"; None when no input is differentiable
    function: bool  # bound as yamlgrad.<name>
    method: bool  # bound as Tensor.<name>
    python_binding: bool  # reachable as yamlgrad.<name>; False: only yamlgrad.ops
    samples: tuple[Sample, ...]
    loc: Location
    # An in-place variant (`mul_.Tensor`): writes its result into `self`. With
    # `reuses_node` it has no formulas of its own and records the node of the
    # functional entry with its signature (PyTorch's match_differentiability_info).
    inplace: bool = False
    reuses_node: bool = False
    # PyTorch's element-wise type promotion: "none", "default" (the operands'
    # common dtype) or "int_to_float" (and an integer result becomes float32).
    type_promotion: str = "none"
    promotion_operands: tuple[str, ...] = ()  # the arguments it looks at
    # The wrapper's name in VariableType.py: PyTorch's C++ name (`sum_dim_IntList`),
    # or `<name>_default` for an overload-less entry whose public name is a
    # dispatcher. Set by the loader once every entry is known.
    wrapper_name: str = ""
    # A tuple return's outputs that get the node as their grad_fn (PyTorch's
    # output_differentiability); None: every floating one.
    output_differentiability: tuple[bool, ...] | None = None
    # Tensor inputs with no key: refused when they require grad (PyTorch's
    # check_no_requires_grad), in grad mode.
    no_requires_grad: tuple[str, ...] = ()
    # Forward-mode formulas (the YAML's `result:` keys, expanded and rendered by the
    # loader; one "derived" entry when the YAML gives none).
    forward_derivatives: tuple[ForwardDerivative, ...] = ()
    # Matrix inputs that must be symmetric positive definite or triangular (the
    # YAML's `structure:`), as (input, "positive_definite" | "triangular" |
    # "log_probabilities").
    structure: tuple[tuple[str, str], ...] = ()
    # The YAML's `batch_rule:` (a rule of runtime/func/batching_rules.py), or "".
    explicit_batch_rule: str = ""
    # Why the op runs on numpy arrays only (`backends: [numpy]`); "" when its
    # kernel names the array namespace `xp` and runs on every backend.
    numpy_only: str = ""
    # The backends such an op runs on: ("numpy",), or ("numpy", "dask") when Dask
    # runs its numpy kernel chunk by chunk; () for every backend.
    backends: tuple[str, ...] = ()

    @property
    def runs_on_dask_blockwise(self) -> bool:
        """`backends: [numpy, dask]`: Dask runs the numpy kernel chunk by chunk."""
        return "dask" in self.backends

    @property
    def forward_kind(self) -> str:
        """How the op's forward derivative is obtained, for the op table."""
        kinds = dict.fromkeys(f.kind for f in self.forward_derivatives)
        return ", ".join(kinds)

    @property
    def random(self) -> bool:
        """The op draws random numbers: it takes a Generator (bernoulli, normal)."""
        return any(a.type.base == "Generator" for a in self.func.arguments)

    @property
    def draw_is_constant(self) -> bool:
        """A random op whose draw is a constant to autograd, so its gradient is
        zero (every formula `zeros_like(...)`: bernoulli, normal), rather than
        the derivative at a fixed draw (rrelu_with_noise's slopes)."""
        return self.random and all(
            d.original_formula.startswith("zeros_like(") for d in self.derivatives
        )

    @property
    def draws_out_of_place(self) -> bool:
        """A random op returning a new tensor: under vmap(randomness="different")
        it draws per sample even when its tensors are unbatched."""
        return self.random and not self.func.name.endswith("_")

    @property
    def tangent_inputs(self) -> tuple[Argument, ...]:
        """The differentiable inputs whose tangents the forward formulas read."""
        names: set[str] = set()
        for f in self.forward_derivatives:
            names |= _names_of(f.rendered)
        return tuple(a for a in self.differentiable_inputs if f"{a.name}_t" in names)

    @property
    def reads_original_self(self) -> bool:
        """An in-place op whose forward formula reads `self` before the op."""
        return self.inplace and any(
            "original_self" in _names_of(f.rendered) for f in self.forward_derivatives
        )

    @property
    def set_fw_grad_call(self) -> str:
        """How the wrapper attaches the tangents it computed to its outputs."""
        fds = self.forward_derivatives
        if self.inplace:
            return f"set_fw_grad_inplace(self, {fds[0].target})"
        if self.output_kind == "single":
            return f"set_fw_grad(result, {fds[0].target})"
        if self.output_kind == "list":
            return f"set_fw_grads(outputs, {fds[0].target})"
        if len(fds) == 1 and not fds[0].output:
            return "set_fw_grads(outputs, outputs_t)"
        from yamlgrad.tools.expressions import output_names

        by_index = {output_names(self.func)[f.output]: f.target for f in fds}
        targets = [by_index.get(i, "None") for i in range(len(self.func.returns))]
        return f"set_fw_grads(outputs, ({', '.join(targets)},))"

    @property
    def array_locals(self) -> tuple[str, ...]:
        """The wrapper's locals that hold arrays (a Tensor[] as a list of them)."""
        return tuple(
            a.local for a in self.func.arguments if a.is_tensor or a.is_tensor_list
        )

    def op_name_for(self, argument: Argument) -> str:
        """The op name the wrapper gives an argument's converter: a numpy-only
        overload's tensors get its name with the overload (`max.dim`), which
        their converter checks against the numpy-only overloads."""
        tensors = argument.is_tensor or argument.type.base == "Tensor"
        return (
            self.func.qualified_name if self.numpy_only and tensors else self.func.name
        )

    @property
    def namespace_expr(self) -> str:
        """The wrapper's `xp`: numpy when every tensor input holds a numpy array
        (a set lookup per argument, so the numpy path makes no call), else
        the inputs' namespace, or the error of a numpy-only op."""
        arrays = ", ".join(self.array_locals)
        call = f"xp_of({arrays})"
        if self.numpy_only:
            call = f"numpy_only({self.func.qualified_name!r}, {arrays})"
        checks = [
            f"type({a.local}) in NUMPY" for a in self.func.arguments if a.is_tensor
        ]
        return f"np if {' and '.join(checks)} else {call}" if checks else call

    @property
    def differentiable_inputs(self) -> tuple[Argument, ...]:
        """The inputs with a next edge, in schema order (PyTorch's next_edges)."""
        names = {n for d in self.derivatives for n in d.var_names}
        return tuple(a for a in self.func.arguments if a.name in names)

    @property
    def is_view(self) -> bool:
        """The output aliases `self` (`Tensor(a)` on the return): a numpy view."""
        annotation = self.func.returns[0].type.annotation
        return annotation is not None and not annotation.endswith("!")

    @property
    def is_inplace_view(self) -> bool:
        """An in-place op that only changes `self`'s metadata (PyTorch's in-place
        view functions: squeeze_, unsqueeze_, transpose_, t_, ...)."""
        return self.inplace and self.func.name in INPLACE_VIEW_OPS

    @property
    def saves_original_self(self) -> bool:
        """An in-place op whose formulas read `self` saves a copy made beforehand."""
        return self.inplace and any(
            s.name == "self" and s.is_tensor for s in self.all_saved
        )

    @property
    def promotion_names(self) -> tuple[str, ...]:
        """The wrapper's locals that type promotion rewrites, in schema order."""
        return tuple(
            a.local for a in self.func.arguments if a.name in self.promotion_operands
        )

    @property
    def promotion_locals(self) -> str:
        """The same as an assignment target: `self_, other_`."""
        names = self.promotion_names
        return ", ".join(names) + ("," if len(names) == 1 else "")

    @property
    def batch_rule(self) -> str:
        """How vmap batches this entry: the rule of runtime/func/batching_rules.py
        its `batch_rule:` key names, else the one its schema implies, else ""
        (the loop-and-stack fallback).

        "elementwise": a type-promoting or `auto_element_wise` entry, whose
        operands broadcast (each batch dim moved to the front and padded to the
        widest operand). "dims(dim, ...)": one Tensor argument and integer
        dim arguments (`dim`, `dim0`, `start_dim`, ...), shifted past the batch
        dim, and no list of sizes (`input_sizes` would need the batch size).
        """
        if self.explicit_batch_rule:
            return self.explicit_batch_rule
        if self.type_promotion != "none" or any(
            f.kind == "auto_element_wise" for f in self.forward_derivatives
        ):
            return "elementwise"
        tensors = [a for a in self.func.arguments if a.is_tensor or a.is_tensor_list]
        dims = [
            a.name
            for a in self.func.arguments
            if a.name in DIM_ARGUMENTS and a.type.base in ("int", "SymInt")
        ]
        sizes = [
            a
            for a in self.func.arguments
            if a.type.is_list
            and a.type.base in ("int", "SymInt")
            and a.name not in DIM_ARGUMENTS
        ]
        if len(tensors) == 1 and not tensors[0].is_tensor_list and dims and not sizes:
            return f"dims({', '.join(dims)})"
        return ""

    @property
    def batched_inputs(self) -> str:
        """The Tensor and Tensor[] arguments, as `interposed` takes them."""
        return ", ".join(
            a.name for a in self.func.arguments if a.is_tensor or a.is_tensor_list
        )

    @property
    def has_list_input(self) -> bool:
        return any(d.is_list for d in self.derivatives)

    @property
    def uses_grads(self) -> bool:
        return any(d.uses_grads for d in self.derivatives)

    @property
    def output_kind(self) -> str:
        """ "single", "tuple" (several returns) or "list" (`Tensor[]`)."""
        if len(self.func.returns) > 1:
            return "tuple"
        return "list" if self.func.returns[0].type.is_list else "single"

    @property
    def return_names(self) -> tuple[str, ...] | None:
        """The names of a tuple return (a named tuple), or None."""
        names = tuple(r.name for r in self.func.returns)
        if self.output_kind == "tuple" and all(names):
            return names  # type: ignore[return-value]
        return None

    @property
    def composite_checks(self) -> str:
        """For a composite: its Tensor and Tensor[] arguments as
        `((python_name, kind, position, name), ...)`, which the wrapper checks
        only after the composite raised AttributeError or TypeError; "" if none."""
        if not self.composite:
            return ""
        checks = [
            f"({a.python_name!r}, {'Tensor[]' if a.is_tensor_list else 'Tensor'!r}, "
            f"{position}, {a.name})"
            for position, a in enumerate(self.func.arguments, 1)
            if (a.is_tensor or a.is_tensor_list) and not a.type.optional
        ]
        return f"({', '.join(checks)},)" if checks else ""

    @property
    def all_saved(self) -> tuple[SavedAttribute, ...]:
        """Every saved value once, sorted by name as PyTorch's codegen emits them."""
        unique = {s.name: s for d in self.derivatives for s in d.saved}
        return tuple(unique[name] for name in sorted(unique))

    @property
    def saved_inputs(self) -> tuple[SavedAttribute, ...]:
        return tuple(s for s in self.all_saved if not s.is_output)

    @property
    def saved_outputs(self) -> tuple[SavedAttribute, ...]:
        return tuple(s for s in self.all_saved if s.is_output)

    @property
    def saved_tensors(self) -> tuple[SavedAttribute, ...]:
        return tuple(s for s in self.all_saved if s.is_tensor)

    @property
    def slot_names(self) -> tuple[str, ...]:
        return tuple(s.attr for s in self.all_saved)

    @property
    def guarded_saves(self) -> tuple[SavedAttribute, ...]:
        """The saved tensors a wrapper may skip (see save_guard): a node starts
        with these undefined."""
        return tuple(s for s in self.saved_inputs if self.save_guard(s))

    def save_guard(self, saved: SavedAttribute) -> tuple[int, ...]:
        """The edges whose formulas read a saved tensor input.

        The wrapper saves it only when one of them is live (PyTorch's
        `should_compute_output` guard). Empty: saved unconditionally, as for
        plain values and for ops with a single differentiable input.
        """
        if not saved.is_tensor or saved.is_output or saved.is_list:
            return ()
        if len(self.differentiable_inputs) < 2:
            return ()
        return tuple(i for d in self.derivatives if saved in d.saved for i in d.indices)


@dataclass(frozen=True)
class NotCovered:
    """A public op of PyTorch's derivatives.yaml that yamlgrad leaves out, and why
    (not_covered.yaml, rendered into the op table)."""

    op: str  # PyTorch's base name: "linalg_eig"
    why: str
    loc: Location


@dataclass(frozen=True)
class PythonBinding:
    """A public name (`pow`) and the overloads it binds to, in file order."""

    name: str
    overloads: tuple[DifferentiabilityInfo, ...]

    @property
    def is_function(self) -> bool:
        return any(i.function for i in self.overloads)

    @property
    def is_method(self) -> bool:
        return any(i.method for i in self.overloads)

    @property
    def dispatcher(self) -> bool:
        """A generated dispatcher, unless one overload can be bound directly.

        One is needed to choose among overloads, for a lone `int[]` argument
        after `self`, which also takes its ints unpacked (`x.view(2, 3)`), and
        for an argument named with a Python keyword (`from=` binds to `from_`).
        """
        if len(self.overloads) > 1 or self.overloads[0].func.keyword_parameters:
            return True
        positional = [a for a in self.overloads[0].func.arguments if not a.kwarg_only]
        return len(positional) == 2 and positional[1].binding_kind == "int[]"

    @property
    def table(self) -> str:
        return f"_{self.name.upper()}_OVERLOADS"


def python_bindings(
    infos: tuple[DifferentiabilityInfo, ...],
) -> tuple[PythonBinding, ...]:
    """The public names: every entry with a Python binding, grouped by base name."""
    groups: dict[str, list[DifferentiabilityInfo]] = {}
    for info in infos:
        if info.python_binding:
            groups.setdefault(info.func.name, []).append(info)
    return tuple(PythonBinding(name, tuple(group)) for name, group in groups.items())


def _names_of(expression: str) -> set[str]:
    if not expression:
        return set()
    tree = ast.parse(expression, mode="eval")
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
