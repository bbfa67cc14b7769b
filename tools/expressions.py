"""Check the Python expressions of derivatives.yaml with `ast`, and rewrite them.

Formulas are checked, not trusted. Every `forward` and every
backward formula is parsed as one Python expression; only the node types and names
listed here may appear. Anything else (`__import__`, dunder attributes, lambdas,
comprehensions, walrus, f-strings, starred calls, strings) is refused with the
offending text. The rewrite then renames arguments to the locals of the generated
code, and the generated code only ever contains the rewritten, checked tree
(`ast.unparse`), never the raw YAML text.

Saved values come from the same walk (PyTorch's REPLACEMENTS table, done on the
tree instead of with regexes): `x.shape`, `x.ndim` and `x.dtype` of a tensor input
save just that attribute; any other use of a tensor saves the tensor; `result`
saves the output; non-tensor arguments are saved by value.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from yamlgrad.tools.model import FunctionSchema, SavedAttribute

_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.MatMult, ast.FloorDiv)
_BINOPS += (ast.Mod,)
_UNARYOPS = (ast.USub, ast.UAdd, ast.Not, ast.Invert)
_CMPOPS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot)
_STRUCTURAL = (
    (
        ast.Expression,
        ast.BinOp,
        ast.UnaryOp,
        ast.Compare,
        ast.BoolOp,
        ast.And,
        ast.Or,
        ast.IfExp,
        ast.Call,
        ast.keyword,
        ast.Attribute,
        ast.Subscript,
        ast.Slice,
        ast.Name,
        ast.Constant,
        ast.Tuple,
        ast.List,
        ast.Load,
    )
    + _BINOPS
    + _UNARYOPS
    + _CMPOPS
)

# Attributes a formula may read off a tensor; each works on an ndarray and on a
# Tensor alike, which is what lets one formula run in both modes.
TENSOR_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "T"})

# `x.shape` saves PyTorch's `x_sym_sizes`; `x.ndim` its `x_dim`; `x.dtype` its
# `x_scalar_type`.
SAVED_ATTRIBUTE_SUFFIX = {"shape": "sym_sizes", "ndim": "dim", "dtype": "scalar_type"}
# How the wrapper reads each of them off an input's raw value (an ndarray, or the
# Python number a Tensor argument may be given); see runtime/wrappers/variable_type_utils.py.
ATTRIBUTE_READERS = {"shape": "sizes_of", "ndim": "ndim_of", "dtype": "dtype_of"}


class ExpressionError(ValueError):
    """A refused expression; the loader adds file, line and op."""


def helper_names(module: Path) -> frozenset[str]:
    """The `__all__` of a runtime module, read with ast and without importing it."""
    tree = ast.parse(module.read_text(encoding="utf-8"), str(module))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            return frozenset(value)
    raise RuntimeError(f"{module} defines no literal __all__")


# No real formula comes near these; they keep every later ast walk (and black's)
# far from Python's recursion limit, and a pathological input fast to refuse.
MAX_EXPRESSION_LENGTH = 2000
MAX_EXPRESSION_DEPTH = 100
# Characters an expression never needs: a comment (ast never sees it, and the text
# is repeated in a docstring), a backslash, anything outside printable ASCII
# (Python would NFKC-normalize a look-alike letter to a name that passed the check).
# Quotes need no rule here: any string literal is refused by the ast check.
_FORBIDDEN_CHARACTERS = frozenset("#\\")


def _parse(text: str, what: str) -> ast.Expression:
    if not isinstance(text, str):
        raise ExpressionError(f"{what} must be a string, got {text!r}")
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise ExpressionError(
            f"{what} is {len(text)} characters long; the limit is "
            f"{MAX_EXPRESSION_LENGTH}: {text[:60]!r}..."
        )
    for ch in text:
        if ch in _FORBIDDEN_CHARACTERS or not (" " <= ch <= "~"):
            raise ExpressionError(
                f"{what} contains the character {ch!r}, which is not allowed: {text!r}"
            )
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise ExpressionError(f"{what} is not a Python expression ({e.msg}): {text!r}")
    except (RecursionError, MemoryError):
        raise ExpressionError(
            f"{what} is nested too deeply: {text[:60]!r}..."
        ) from None
    depth = 0
    stack = [(tree.body, 1)]
    while stack:  # iterative: the depth check must not recurse itself
        node, level = stack.pop()
        depth = max(depth, level)
        stack.extend((child, level + 1) for child in ast.iter_child_nodes(node))
    if depth > MAX_EXPRESSION_DEPTH:
        raise ExpressionError(
            f"{what} is nested {depth} levels deep; the limit is "
            f"{MAX_EXPRESSION_DEPTH}: {text[:60]!r}"
        )
    return tree


# PyTorch's placeholder formula, `not_implemented("igamma: input")`: the one call
# that takes a string, its message; the helper raises at backward time.
NOT_IMPLEMENTED = "not_implemented"


def _messages(tree: ast.Expression) -> set[int]:
    """The string arguments of the `not_implemented("...")` calls in a formula."""
    return {
        id(node.args[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == NOT_IMPLEMENTED
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    }


def _check_shape(
    tree: ast.Expression, text: str, what: str, messages: set[int] | None = None
) -> None:
    """Refuse every node type and form outside the allowed set (`messages`: the
    string constants allowed, by id). A dunder name or a private attribute is
    reported before anything else in the expression: `__import__('os').system('ls')`
    is refused for `__import__`, not its string."""
    nodes = list(ast.walk(tree))
    for node in nodes:
        if isinstance(node, ast.Name) and node.id.startswith("__"):
            raise ExpressionError(f"{what} uses the name {node.id!r}: {text!r}")
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise ExpressionError(
                f"{what} reads the private attribute {node.attr!r}: {text!r}"
            )
    for node in nodes:
        if not isinstance(node, _STRUCTURAL):
            kind = type(node).__name__
            raise ExpressionError(
                f"{what} uses a {kind}, which is not allowed: {text!r}"
            )
        if isinstance(node, ast.Constant) and not (
            node.value is None
            or type(node.value) in (bool, int, float)
            or (messages is not None and id(node) in messages)
        ):
            raise ExpressionError(
                f"{what} uses the constant {node.value!r}, which is not allowed: {text!r}"
            )
        if isinstance(node, ast.keyword) and node.arg is None:
            raise ExpressionError(f"{what} uses '**' in a call: {text!r}")


def _attribute_chain(node: ast.Attribute) -> list[str] | None:
    """`np.linalg.inv` -> ["np", "linalg", "inv"]; None when not a plain chain."""
    parts: list[str] = []
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        parts.append(current.attr)
        current = current.value
    if not isinstance(current, ast.Name):
        return None
    parts.append(current.id)
    return parts[::-1]


class _Renamer(ast.NodeTransformer):
    def __init__(self, renames: dict[str, str], attrs: dict[tuple[str, str], str]):
        self.renames = renames
        self.attrs = attrs

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name):
            key = (node.value.id, node.attr)
            if key in self.attrs:
                return ast.copy_location(ast.Name(self.attrs[key], ast.Load()), node)
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.renames:
            return ast.copy_location(ast.Name(self.renames[node.id], ast.Load()), node)
        return node


def _unparse(tree: ast.AST) -> str:
    return ast.unparse(ast.fix_missing_locations(tree))


def canonical(text: str) -> str:
    """An expression that passed a check, as ast prints it (for docstrings)."""
    return _unparse(ast.parse(text.strip(), mode="eval"))


def check_forward(
    text: str,
    schema: FunctionSchema,
    kernel_helpers: Mapping[str, str],
    numpy_only: bool = False,
) -> str:
    """Check a forward kernel; return it with tensor arguments as `<name>_`.
    `kernel_helpers`: each callable helper's module (tools/catalog.py). It names
    the array namespace `xp` (standard names), or numpy as `np` when the entry is
    `numpy_only` (`backends: [numpy]`)."""
    what = "forward"
    tree = _parse(text, what)
    _check_shape(tree, text, what)
    args = {a.safe_name: a for a in schema.arguments}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain = _attribute_chain(node)
            if chain is not None and chain[0] in NAMESPACES:
                _check_namespace_name(chain, text, what, numpy_only)
                continue
            if node.attr not in TENSOR_ATTRIBUTES:
                raise ExpressionError(
                    f"{what} reads '.{node.attr}'; only xp.* and "
                    f"{sorted(TENSOR_ATTRIBUTES)} are allowed: {text!r}"
                )
        if isinstance(node, ast.Call) and not _callable_ok(node.func, kernel_helpers):
            callee = ast.unparse(node.func)
            raise ExpressionError(
                f"{what} calls {callee!r}; only xp.* and the kernel helpers "
                f"may be called: {text!r}"
            )
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id in NAMESPACES or node.id in args or node.id in kernel_helpers:
                continue
            raise ExpressionError(f"{what} uses the unknown name {node.id!r}: {text!r}")
    renames = {a.safe_name: a.local for a in schema.arguments if a.local != a.safe_name}
    tree = _Renamer(renames, {}).visit(tree)
    # Helpers are called through their module, so an op may share a helper's name
    # (the `sigmoid` wrapper calls `elementwise.sigmoid`).
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            module = kernel_helpers[node.func.id]
            node.func = ast.Attribute(
                ast.Name(module, ast.Load()), node.func.id, ast.Load()
            )
    return _unparse(tree)


# A kernel computes; it never reads or writes files, loads pickles, or reaches
# numpy's internals. `np.<name>` and `np.linalg.<name>` only, minus these.
NUMPY_SUBMODULES = frozenset({"linalg"})
NUMPY_DENIED = frozenset(
    {"load", "save", "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt"}
    | {"fromfile", "fromregex", "frombuffer", "memmap", "tofile", "fromstring"}
    | {"lib", "ctypeslib", "testing", "f2py", "distutils", "rec", "char", "core"}
    | {"random", "fft", "ma", "polynomial", "strings", "typing"}
    | {"set_printoptions", "seterr", "setbufsize", "seterrcall", "show_config"}
    | {"info", "source", "who", "get_include", "DataSource", "frompyfunc"}
    | {"vectorize", "apply_along_axis", "apply_over_axes", "piecewise", "exec"}
    | {"ndarray", "bytes_", "str_", "void", "object_", "dtype", "random"}
)


# The names a forward's namespace goes by: `xp`, the inputs' array namespace
# (numpy, Dask, CuPy, ...), and `np`, numpy itself, in numpy-only entries.
NAMESPACES = frozenset({"xp", "np"})


@functools.cache
def _standard_names() -> tuple[frozenset[str], frozenset[str]]:
    """The names `xp.<name>` and `xp.linalg.<name>` may use: what array-api-compat's
    numpy namespace provides (the standard's names, and the aliases it adds)."""
    import array_api_compat.numpy as compat

    return frozenset(compat.__all__), frozenset(compat.linalg.__all__)


def _check_namespace_name(
    chain: list[str], text: str, what: str, numpy_only: bool
) -> None:
    import numpy  # noqa: PLC0415 - only the generator's checks need it

    names = chain[1:]
    # np.<name> of numpy's public names (`__all__`: what the generated code's
    # `np`, runtime/wrappers/numpy_namespace.py, holds).
    public = chain[0] != "np" or names[0] in numpy.__all__
    if chain[0] == "np" and not numpy_only:
        raise ExpressionError(
            f"{what} uses {'.'.join(chain)!r}; a kernel names the array namespace "
            f"`xp` (xp.{'.'.join(names)}), or its entry says `backends: [numpy]`: "
            f"{text!r}"
        )
    if len(names) == 2 and names[0] in NUMPY_SUBMODULES:
        names = names[1:]
    if (
        not public
        or len(names) != 1
        or names[0] in NUMPY_DENIED
        or names[0].startswith("_")
    ):
        raise ExpressionError(
            f"{what} uses {'.'.join(chain)!r}; kernels may use xp.<name> and "
            f"xp.linalg.<name>, without file access or numpy internals: {text!r}"
        )
    if chain[0] == "xp":
        top, linalg = _standard_names()
        if names[0] not in (linalg if len(chain) == 3 else top):
            raise ExpressionError(
                f"{what} uses {'.'.join(chain)!r}, which is not a name of the "
                f"array API (array-api-compat): {text!r}"
            )


def _callable_ok(func: ast.expr, helpers: Mapping[str, str]) -> bool:
    if isinstance(func, ast.Name):
        return func.id in helpers
    if isinstance(func, ast.Attribute):
        chain = _attribute_chain(func)
        return chain is not None and chain[0] in NAMESPACES
    return False


def check_composite(
    text: str,
    schema: FunctionSchema,
    op_names: frozenset[str],
    kernel_helpers: Mapping[str, str] = MappingProxyType({}),
    composite_helpers: Mapping[str, str] = MappingProxyType({}),
) -> str:
    """Check a composite's body: calls to op names over the arguments, and to the
    kernel helpers for shape arithmetic (called through their module, on plain
    values: `flatten_shape(self.shape, start_dim, end_dim)`). The helper maps
    give each name's module (tools/catalog.py)."""
    what = "composite"
    tree = _parse(text, what)
    _check_shape(tree, text, what)
    args = {a.safe_name for a in schema.arguments}
    tensor_helpers = set(composite_helpers) - op_names - args
    helpers = (set(kernel_helpers) - op_names - args) | tensor_helpers
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr not in TENSOR_ATTRIBUTES:
            raise ExpressionError(f"{what} reads '.{node.attr}': {text!r}")
        if isinstance(node, ast.Call) and not (
            isinstance(node.func, ast.Name)
            and (node.func.id in op_names or node.func.id in helpers)
        ):
            callee = ast.unparse(node.func)
            raise ExpressionError(
                f"{what} calls {callee!r}, which is not an op: {text!r}"
            )
        if (
            isinstance(node, ast.Name)
            and node.id not in args
            and node.id not in op_names
            and node.id not in helpers
        ):
            raise ExpressionError(f"{what} uses the unknown name {node.id!r}: {text!r}")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in helpers
        ):
            name = node.func.id
            table = composite_helpers if name in tensor_helpers else kernel_helpers
            module = table[name]
            node.func = ast.Attribute(
                ast.Name(module, ast.Load()), node.func.id, ast.Load()
            )
    return _unparse(tree)


@dataclass(frozen=True)
class CheckedFormula:
    formula: str  # rewritten to the locals of apply()
    saved: tuple[SavedAttribute, ...]  # in order of first use
    uses_grads: bool  # reads `grads` (every output's gradient), not only `grad`


def local_name(arg: str) -> str:
    """Inside a node's apply(), `self` is the node; the input becomes `self_`."""
    return "self_" if arg == "self" else arg


def output_names(schema: FunctionSchema) -> dict[str, int]:
    """How formulas name the outputs: `result` for one; for a tuple `result0`,
    `result1`, ... and each return's own name (`values`, `indices`)."""
    if len(schema.returns) == 1:
        return {"result": 0}
    names = {f"result{i}": i for i in range(len(schema.returns))}
    names.update({r.name: i for i, r in enumerate(schema.returns) if r.name})
    return names


def _output_data(schema: FunctionSchema, index: int) -> str:
    """The wrapper's local holding output `index` (a Tensor)."""
    return "result" if len(schema.returns) == 1 else f"outputs[{index}]"


@dataclass
class _FormulaSaves:
    """What the walk of one backward formula collects: the values it saves, and
    the subtrees (by identity) that become their locals in apply()."""

    schema: FunctionSchema
    text: str
    saved: dict[str, SavedAttribute] = field(default_factory=dict)
    replacements: dict[int, str] = field(default_factory=dict)
    skip: set[int] = field(default_factory=set)  # names inside a replaced subtree

    def __post_init__(self) -> None:
        returns = self.schema.returns
        self.outputs = output_names(self.schema)
        self.named_grads = {
            f"grad_{r.name}": i for i, r in enumerate(returns) if r.name
        }
        self.list_return = len(returns) == 1 and returns[0].type.is_list
        arguments = self.schema.arguments
        self.tensors = {a.name for a in arguments if a.is_tensor} | set(self.outputs)
        # Tensor[] arguments; a Tensor?[] (indices) is a plain value, saved as is.
        self.lists = {a.name for a in arguments if a.is_tensor_list}

    def save(self, name: str, attribute: SavedAttribute) -> None:
        self.saved.setdefault(name, attribute)


def _check_formula_calls(tree: ast.AST, text: str, helpers: frozenset[str]) -> None:
    """Only tensor attributes are read, and only formula helpers called."""
    what = "formula"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr not in TENSOR_ATTRIBUTES:
            raise ExpressionError(
                f"{what} reads '.{node.attr}'; only {sorted(TENSOR_ATTRIBUTES)} "
                f"may be read off a value: {text!r}"
            )
        if isinstance(node, ast.Call) and not (
            isinstance(node.func, ast.Name)
            and (node.func.id in helpers or node.func.id == "to_args_sizes")
        ):
            callee = ast.unparse(node.func)
            raise ExpressionError(
                f"{what} calls {callee!r}, which is not a formula helper "
                f"(a BACKWARD_HELPERS name of runtime/ops/): {text!r}"
            )


def _save_tensor_attribute(node: ast.Attribute, walk: _FormulaSaves) -> None:
    """`x.shape` saves only `x_sym_sizes` (`.ndim`: `x_dim`, ...)."""
    assert isinstance(node.value, ast.Name)
    base = node.value.id
    name = f"{base}_{SAVED_ATTRIBUTE_SUFFIX[node.attr]}"
    is_output = base in walk.outputs
    if is_output and walk.list_return:
        raise ExpressionError(
            f"formula reads a list output's {node.attr}: {walk.text!r}"
        )
    data = (
        f"{_output_data(walk.schema, walk.outputs[base])}._data"
        if is_output
        else f"{base}_"
    )
    expr = f"{ATTRIBUTE_READERS[node.attr]}({data})"
    walk.replacements[id(node)] = name
    walk.skip.add(id(node.value))
    walk.save(name, SavedAttribute(name, expr, False, is_output, name))


def _save_args_sizes(node: ast.Call, walk: _FormulaSaves) -> None:
    """`to_args_sizes(tensors)` saves only the list's shapes."""
    if (
        len(node.args) != 1
        or node.keywords
        or not (isinstance(node.args[0], ast.Name) and node.args[0].id in walk.lists)
    ):
        raise ExpressionError(
            f"formula: to_args_sizes takes one Tensor[] argument: {walk.text!r}"
        )
    base = node.args[0].id
    name = f"{base}_args_sizes"
    walk.replacements[id(node)] = name
    walk.skip.update({id(node.func), id(node.args[0])})
    expr = f"args_sizes_of({base}_)"
    walk.save(name, SavedAttribute(name, expr, False, False, name))


def _collect_attribute_saves(tree: ast.AST, walk: _FormulaSaves) -> None:
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in walk.tensors
            and node.value.id not in walk.lists
            and node.attr in SAVED_ATTRIBUTE_SUFFIX
        ):
            _save_tensor_attribute(node, walk)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "to_args_sizes"
        ):
            _save_args_sizes(node, walk)


def _collect_name_saves(
    tree: ast.AST, walk: _FormulaSaves, helpers: frozenset[str], multi: bool
) -> bool:
    """Save each argument and output the formula names; True when it reads every
    output's gradient (`grads`, `grad_<name>`)."""
    text = walk.text
    args = {a.safe_name: a for a in walk.schema.arguments}
    uses_grads = False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Name) or id(node) in walk.skip:
            continue
        name = node.id
        if name == "grad":
            continue
        if name == "grads" or name in walk.named_grads:
            uses_grads = True
            if name in walk.named_grads:
                walk.replacements[id(node)] = f"grads[{walk.named_grads[name]}]"
            continue
        if name == "grad_input_mask" and multi:
            continue
        if name in helpers and name not in args:
            continue
        if name in walk.outputs:
            if walk.list_return:
                raise ExpressionError(
                    f"formula reads a list output, which is not saved: {text!r}"
                )
            expr = _output_data(walk.schema, walk.outputs[name])
            walk.save(name, SavedAttribute(name, expr, True, True, name))
        elif name in args:
            lists = walk.lists
            is_tensor = args[name].is_tensor or name in lists
            attr = SavedAttribute(
                name, name, is_tensor, False, local_name(name), is_list=name in lists
            )
            walk.save(name, attr)
        else:
            raise ExpressionError(f"formula uses the unknown name {name!r}: {text!r}")
    return uses_grads


def check_formula(
    text: str,
    schema: FunctionSchema,
    helpers: frozenset[str],
    *,
    multi: bool = False,
) -> CheckedFormula:
    """Check a backward formula, infer what it saves, rename it for apply().

    `multi`: the formula computes several inputs' gradients at once (a key such as
    `self, other`), may read `grad_input_mask`, and returns a tuple.
    """
    tree = _parse(text, "formula")
    _check_shape(tree, text, "formula", _messages(tree))
    _check_formula_calls(tree, text, helpers)
    walk = _FormulaSaves(schema, text)
    _collect_attribute_saves(tree, walk)
    uses_grads = _collect_name_saves(tree, walk, helpers, multi)
    formula = _unparse(_Replacer(walk.replacements, {"self": "self_"}).visit(tree))
    return CheckedFormula(formula, tuple(walk.saved.values()), uses_grads)


class _Replacer(ast.NodeTransformer):
    """Swap whole subtrees (by identity) for a local's name; rename `self`."""

    def __init__(self, replacements: dict[int, str], renames: dict[str, str]) -> None:
        self.replacements = replacements
        self.renames = renames

    def visit(self, node: ast.AST) -> ast.AST:
        if id(node) in self.replacements:
            text = self.replacements[id(node)]
            new = ast.parse(text, mode="eval").body
            return ast.copy_location(new, node)
        return super().visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.renames:
            return ast.copy_location(ast.Name(self.renames[node.id], ast.Load()), node)
        return node


# --- forward-mode (JVP) formulas -------------------------------------------------
#
# A forward formula is keyed by an output (`result`, `result0`, a return's name). It
# reads `<input>_p` (the primal), `<input>_t` (the tangent), the outputs, the other
# arguments and the backward helpers. The loader keeps it in this spelling; the
# wrapper's names replace it only when it is rendered (`render_forward_formula`),
# since an in-place variant reads `self_p` as the value before the op.


def check_forward_formula(
    text: str,
    schema: FunctionSchema,
    helpers: frozenset[str],
    differentiable: tuple[str, ...],
) -> str:
    """Check an explicit forward formula; return it canonical (`_p`/`_t` names)."""
    what = "forward formula"
    tree = _parse(text, what)
    _check_shape(tree, text, what)
    _check_formula_calls(tree, text, helpers)
    args = {a.name: a for a in schema.arguments}
    tensors = {n for n, a in args.items() if a.is_tensor or a.is_tensor_list}
    outputs = output_names(schema)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Name):
            continue
        name = node.id
        if name in tensors:
            raise ExpressionError(
                f"the forward formula is using the base name of the {name} argument "
                f"which is ambiguous. You should use {name}_p to access the primal "
                f"value and {name}_t to access the tangent: {text!r}"
            )
        base, _, suffix = name.rpartition("_")
        if suffix == "p" and base in tensors:
            continue
        if suffix == "t" and base in tensors:
            if base not in differentiable:
                raise ExpressionError(
                    f"forward formula reads the tangent of {base!r}, which is not "
                    f"differentiable: {text!r}"
                )
            continue
        if name in outputs or name in args or name in helpers:
            continue
        raise ExpressionError(
            f"forward formula uses the unknown name {name!r}: {text!r}"
        )
    return _unparse(tree)


# The formula helper that conjugates (runtime/ops/elementwise.py's conj).
CONJ = "conj"


def element_wise_forward(
    backward_formula: str, input_name: str, schema: FunctionSchema
) -> str:
    """`auto_element_wise`: torchgen's rewrite of the backward formula, every
    tensor input as its primal and `grad` as the input's tangent, conjugated as
    PyTorch conjugates it: conj(formula with grad = conj(tangent)). The backward
    multiplies by the conjugate derivative, so in complex numbers the tangent is
    its conjugate; on real values conj returns its argument."""
    tensors = {a.name for a in schema.arguments if a.is_tensor or a.is_tensor_list}
    renames = {name: f"{name}_p" for name in tensors}
    tangent = _conj(ast.Name(f"{input_name}_t", ast.Load()))
    tree = _Renamer(renames, {}).visit(ast.parse(backward_formula, mode="eval"))
    tree = _GradAs(tangent).visit(tree)
    return _unparse(ast.Expression(_conj(tree.body)))


def _conj(node: ast.expr) -> ast.expr:
    return ast.Call(ast.Name(CONJ, ast.Load()), [node], [])


class _GradAs(ast.NodeTransformer):
    """Every `grad` of a formula replaced by an expression."""

    def __init__(self, expression: ast.expr) -> None:
        self.expression = expression

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return self.expression if node.id == "grad" else node


def forward_formula_names(formula: str) -> set[str]:
    return {
        n.id
        for n in ast.walk(ast.parse(formula, mode="eval"))
        if isinstance(n, ast.Name)
    }


def render_forward_formula(
    formula: str,
    schema: FunctionSchema,
    inplace: bool,
    helpers: Mapping[str, str] | None = None,
) -> str:
    """The formula in the wrapper's names: `x_p` is the argument `x` itself
    (`original_self` in place), `x_t` stays the local of its tangent, an output
    is `result` or `outputs[i]`. A call of a backward helper goes through its
    module (`elementwise.where(...)`), since the wrappers' module binds the ops'
    own names (`where`)."""
    renames: dict[str, str] = {}
    for a in schema.arguments:
        if a.is_tensor or a.is_tensor_list:
            renames[f"{a.name}_p"] = a.name
    if inplace:
        renames["self_p"] = "original_self"
    if len(schema.returns) > 1:
        renames.update(
            {name: f"outputs[{i}]" for name, i in output_names(schema).items()}
        )
    tree = ast.parse(formula, mode="eval")
    for node in ast.walk(tree):
        if (
            helpers
            and isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in helpers
        ):
            module = helpers[node.func.id]
            node.func = ast.Attribute(
                ast.Name(module, ast.Load()), node.func.id, ast.Load()
            )
    return _unparse(_Renamer(renames, {}).visit(tree))
