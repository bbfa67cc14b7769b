"""derivatives.yaml -> a tuple of checked DifferentiabilityInfo (torchgen's load_derivatives).

Every problem is a GenError naming `file:line: op: what is wrong`, at the line of the
key or value at fault. Node classes are numbered here, once, per CamelCase prefix in
file order over the entries that have a differentiable input, as PyTorch numbers
them (`sum` -> SumBackward0, `sum.dim_IntList` -> SumBackward1).
"""

from __future__ import annotations

import ast
import difflib
import re
import builtins
import dataclasses
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from typing import Any, NoReturn

from yamlgrad.tools.expressions import (
    ExpressionError,
    canonical,
    check_composite,
    check_formula,
    check_forward,
    check_forward_formula,
    element_wise_forward,
    helper_names,
    output_names,
    render_forward_formula,
)
from yamlgrad.tools.batch_rules import load_batch_rule
from yamlgrad.tools.catalog import (
    PACK_MODULE,
    Catalog,
    CatalogError,
    Declared,
    runtime_catalog,
)
from yamlgrad.tools.model import (
    Argument,
    Derivative,
    DifferentiabilityInfo,
    ForwardDerivative,
    FunctionSchema,
    GenError,
    Location,
    NotCovered,
    Sample,
    SampleArg,
    SchemaError,
    python_bindings,
)
from yamlgrad.tools.yaml_loader import YamlList, YamlMap, load_yaml

RUNTIME_DIR = Path(__file__).resolve().parent.parent / "runtime"
NON_DIFFERENTIABLE = "non_differentiable"
ENTRY_KEYS = frozenset(
    {"name", "forward", "composite", "samples", "domain", "variants", "python_binding"}
    | {"type_promotion", "output_differentiability", "structure", "batch_rule"}
    | {"backends", "numpy_only_reason", "view_copy"}
)
# The kernel that turns a view entry's forward into its `_copy` twin's.
VIEW_COPY_KERNEL = "copy_of_view"
DEFAULT_DOMAIN = ((-2.0, 2.0),)
# An argument's sampling intervals, and how a sample check reports a problem.
Domains = dict[str, tuple[tuple[float, float], ...]]
Fail = Callable[[str], NoReturn]
# Python's builtins that are also PyTorch ops or argument names. Every other builtin
# (len, print, isinstance, super, type, object, ...) is refused as a name: the
# generated code calls some of them, and a module-level op or a parameter of that
# name would silently replace them.
BUILTIN_OP_NAMES = frozenset(
    {"abs", "all", "any", "complex", "max", "min", "pow", "round", "slice", "sum"}
)
BUILTIN_ARGUMENT_NAMES = frozenset({"abs", "input", "max", "min", "ord", "sorted"})
MAX_NAME_LENGTH = 64  # PyTorch's longest op name has about 50 characters
# Names the Tensor class itself or the facade installs on it (runtime/facade.py's
# _install_tensor_methods); a generated method of that name would replace them.
FACADE_TENSOR_METHODS = frozenset(
    {"copy_", "T", "float", "double", "half", "long", "int", "bool"}
    | {"unique", "unique_consecutive"}
)


def facade_names(runtime_dir: Path = RUNTIME_DIR) -> frozenset[str]:
    """The public names of `yamlgrad` that are not generated ops: the literal
    entries of runtime/facade.py's `__all__` (a string, a `*module.__all__` of a
    runtime module it imports, or a `*NAMES` tuple of strings it defines) and
    runtime/factories.py's `__all__`, read with ast (the generator never imports
    the runtime)."""
    tree = ast.parse((runtime_dir / "facade.py").read_text(encoding="utf-8"))
    modules = _imported_modules(tree, runtime_dir)
    tuples = _string_tuples(tree)
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            for element in getattr(node.value, "elts", ()):
                if isinstance(element, ast.Constant) and isinstance(element.value, str):
                    names.add(element.value)
                elif isinstance(element, ast.Starred):
                    names |= _starred_names(element.value, modules, tuples)
    return frozenset(names) | helper_names(runtime_dir / "factories.py")


def _imported_modules(tree: ast.Module, runtime_dir: Path) -> dict[str, Path]:
    """name -> file of each runtime module the facade imports by name
    (`from yamlgrad.runtime.nn import functional_aten`)."""
    found: dict[str, Path] = {}
    prefix = "yamlgrad.runtime"
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or node.module is None:
            continue
        if node.module != prefix and not node.module.startswith(prefix + "."):
            continue
        folder = runtime_dir.joinpath(*node.module.split(".")[2:])
        for alias in node.names:
            path = folder / f"{alias.name}.py"
            if path.exists():
                found[alias.asname or alias.name] = path
    return found


def _string_tuples(tree: ast.Module) -> dict[str, frozenset[str]]:
    """The facade's top-level `NAME = ("a", "b", ...)` tuples of strings."""
    found: dict[str, frozenset[str]] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Tuple)
            and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str)
                for e in node.value.elts
            )
        ):
            found[node.targets[0].id] = frozenset(e.value for e in node.value.elts)
    return found


def _starred_names(
    value: ast.expr, modules: dict[str, Path], tuples: dict[str, frozenset[str]]
) -> frozenset[str]:
    """The names of a `*module.__all__` or `*NAMES` entry of `__all__`."""
    if isinstance(value, ast.Name):
        return tuples.get(value.id, frozenset())
    if (
        isinstance(value, ast.Attribute)
        and value.attr == "__all__"
        and isinstance(value.value, ast.Name)
        and value.value.id in modules
    ):
        return helper_names(modules[value.value.id])
    return frozenset()


# The modules whose literal dicts of Tensor methods the facade installs, and the
# names of those dicts (keys read with ast).
TENSOR_METHOD_TABLES = {
    "tensor_methods.py": ("METHODS", "PROPERTIES"),
    "sampling.py": ("METHODS",),
}


def _installed_methods(runtime_dir: Path) -> set[str]:
    """The keys of the facade-installed method tables, and sampling's names."""
    names = set(helper_names(runtime_dir / "sampling.py"))
    for file, tables in TENSOR_METHOD_TABLES.items():
        tree = ast.parse((runtime_dir / file).read_text(encoding="utf-8"))
        for node in tree.body:
            target = (
                getattr(node, "target", None)
                or (getattr(node, "targets", None) or [None])[0]
            )
            if isinstance(target, ast.Name) and target.id in tables:
                keys = getattr(node.value, "keys", ())
                names.update(k.value for k in keys if isinstance(k, ast.Constant))
    return names


def tensor_attribute_names(runtime_dir: Path = RUNTIME_DIR) -> frozenset[str]:
    """What class Tensor defines by hand (runtime/autograd/tensor.py), read with ast, plus
    the methods the facade installs; a generated Tensor method may take none."""
    tree = ast.parse(
        (runtime_dir / "autograd" / "tensor.py").read_text(encoding="utf-8")
    )
    names: set[str] = set(FACADE_TENSOR_METHODS) | _installed_methods(runtime_dir)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Tensor":
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(item.name)
                elif isinstance(item, ast.Assign):
                    names.update(t.id for t in item.targets if isinstance(t, ast.Name))
                elif isinstance(item, ast.AnnAssign) and isinstance(
                    item.target, ast.Name
                ):
                    names.add(item.target.id)
    return frozenset(names)


def public_name_problem(
    info: DifferentiabilityInfo,
    public: frozenset[str],
    tensor_attributes: frozenset[str],
) -> str | None:
    """Why an op's name would hide a hand-written public name, or None."""
    name = info.func.name
    if not info.python_binding:  # reachable only as yamlgrad.ops.<name>.<overload>
        return None
    if info.function and name in public:
        return (
            f"the op name {name!r} shadows yamlgrad.{name}, a public name of "
            "runtime/facade.py that is not a generated op"
        )
    if info.method and name in tensor_attributes:
        return (
            f"the op name {name!r} shadows Tensor.{name}, which runtime/autograd/tensor.py "
            "or runtime/facade.py defines by hand"
        )
    return None


def name_problem(name: str, allowed_builtins: frozenset[str]) -> str | None:
    """Why `name` may not be an op or argument name, or None when it may."""
    if len(name) > MAX_NAME_LENGTH:
        return f"is {len(name)} characters long; the limit is {MAX_NAME_LENGTH}"
    if name.startswith("__"):
        return "starts with '__', which Python reserves (dunders, name mangling)"
    if hasattr(builtins, name) and name not in allowed_builtins:
        return f"shadows Python's builtin {name!r}, which the generated code may call"
    return None


def create_op_prefix(name: str) -> str:
    """`mul` -> MulBackward, `_to_copy` -> ToCopyBackward (load_derivatives.py)."""
    camel_case = "".join(part.title() for part in name.split("_"))
    return (camel_case + "Backward").replace("ForwardBackward", "Backward")


def helper_catalog(extra_helpers: Declared | None = None) -> Catalog:
    """The runtime's helpers by module, plus an op pack's (`helpers`)."""
    try:
        catalog = runtime_catalog()
        if extra_helpers:
            catalog = catalog.with_module(PACK_MODULE, extra_helpers)
    except CatalogError as e:
        raise GenError(Location("runtime/ops", 1), "(helpers)", str(e)) from None
    return catalog


def load_derivatives(
    path: Path, display: str | None = None, extra_helpers: Declared | None = None
) -> tuple[DifferentiabilityInfo, ...]:
    """Parse and check a whole derivatives.yaml. Raises GenError on the first problem.

    `extra_helpers`: what an op pack's own helper module (`--helpers`) declares
    (tools/catalog.py), which its kernels and formulas may call besides the
    runtime's helpers.
    """
    display = display or path.name
    entries = load_yaml(path, display)
    catalog = helper_catalog(extra_helpers)
    formula_helpers = frozenset(catalog.backward_helpers)
    kernel_helpers = catalog.kernels
    infos: list[DifferentiabilityInfo] = []
    seen: dict[str, int] = {}
    counter: Counter[str] = Counter()
    public = facade_names()
    tensor_attributes = tensor_attribute_names()
    for index, entry in enumerate(entries):
        line = entries.lines[index]
        if not isinstance(entry, YamlMap):
            raise GenError(
                Location(display, line), "(entry)", "an entry must be a mapping"
            )
        if _reuses_functional(entry):
            loaded = [_load_inplace(entry, display, infos)]
        else:
            info = _load_entry(entry, display, formula_helpers, kernel_helpers, counter)
            loaded = [info]
            if _has_view_copy(entry, display, info):
                twin = _view_copy_entry(entry)
                loaded.append(
                    _load_entry(
                        twin,
                        display,
                        formula_helpers,
                        kernel_helpers,
                        counter,
                        op=f"{info.op}_copy",
                    )
                )
        for info in loaded:
            problem = public_name_problem(info, public, tensor_attributes)
            if problem is not None:
                raise GenError(info.loc, str(info.func), problem)
            key = f"{info.func.name}.{info.func.overload}"
            if key in seen:
                message = (
                    f"duplicate op {key.rstrip('.')!r} "
                    f"(first defined at line {seen[key]})"
                )
                raise GenError(info.loc, str(info.func), message)
            seen[key] = info.loc.line
            infos.append(info)
    # A composite calls public names (`view`) or, for an overload or an op
    # without one, its wrapper (`slice_Tensor`, `alias`).
    op_names = frozenset(i.func.name for i in infos if i.python_binding) | frozenset(
        i.func.cpp_name for i in infos if i.func.overload or not i.python_binding
    )
    composite_helpers = catalog.composite_helpers
    infos = [
        _check_composite(info, op_names, kernel_helpers, composite_helpers)
        for info in infos
    ]
    return _postprocess_forward_derivatives(
        _name_wrappers(tuple(infos)), catalog.backward_helpers
    )


def _has_view_copy(entry: YamlMap, display: str, info: DifferentiabilityInfo) -> bool:
    """Whether a view entry asks for its `_copy` twin (`view_copy: true`)."""
    value = entry.get("view_copy", False)
    e = _Entry(entry, display, str(info.func))
    if isinstance(value, dict) and set(value) == {"forward"}:
        value = True
    if not isinstance(value, bool):
        message = "'view_copy' must be true, false or a mapping with 'forward'"
        raise e.error("view_copy", message)
    if value and (info.op is None or "forward" not in entry or not info.is_view):
        message = "'view_copy' needs a view entry (a `Tensor(a)` output) with formulas"
        raise e.error("view_copy", message)
    return value


def _view_copy_entry(entry: YamlMap) -> YamlMap:
    """The `_copy` twin of a view entry, as torchgen derives view_copy ops: the
    schema without its alias annotations and named `<op>_copy`, a forward that
    copies the view (or the result of `view_copy: {forward: ...}`, for a view
    whose kernel refuses a layout the copy takes), the same formulas and
    samples, a function only and always bound (alias_copy is public although
    alias is not)."""
    name, _, rest = entry["name"].partition("(")
    base, dot, overload = name.partition(".")
    schema = (
        f"{base}_copy{dot}{overload}({re.sub(r'Tensor[(][^)]*[)]', 'Tensor', rest)}"
    )
    twin = YamlMap(
        (key, value)
        for key, value in entry.items()
        if key not in ("view_copy", "variants", "python_binding")
    )
    twin["name"] = schema
    copy = entry["view_copy"]
    forward = copy["forward"] if isinstance(copy, dict) else entry["forward"]
    twin["forward"] = f"{VIEW_COPY_KERNEL}({forward})"
    twin["variants"] = "function"
    twin.line = entry.line
    twin.lines = dict(entry.lines)
    return twin


def _name_wrappers(
    infos: tuple[DifferentiabilityInfo, ...],
) -> tuple[DifferentiabilityInfo, ...]:
    dispatched = {b.name for b in python_bindings(infos) if b.dispatcher}
    named = []
    for info in infos:
        name = info.func.cpp_name
        # A dispatcher takes the public name; so does an argument of the same
        # name (threshold's `threshold`), which would hide the wrapper from the
        # calls it makes of itself (vmap's rule, tracing, a derived JVP).
        arguments = {a.name for a in info.func.arguments}
        if not info.func.overload and (
            info.func.name in dispatched or name in arguments
        ):
            name = f"{info.func.name}_default"
        named.append(dataclasses.replace(info, wrapper_name=name))
    return tuple(named)


INPLACE_ONLY_KEYS = frozenset(
    {"name", "samples", "domain", "variants", "type_promotion", "batch_rule"}
)


def _reuses_functional(entry: YamlMap) -> bool:
    """An in-place entry with nothing but a schema (and samples)."""
    name = entry.get("name")
    if not isinstance(name, str):
        return False
    head = name.partition("(")[0].partition(".")[0]
    return head.endswith("_") and set(entry) <= INPLACE_ONLY_KEYS


def _load_inplace(
    entry: YamlMap, display: str, infos: list[DifferentiabilityInfo]
) -> DifferentiabilityInfo:
    """`mul_.Tensor`: the functional entry with the same signature, in place."""
    loc = Location(display, entry.lines.get("name", entry.line))
    try:
        func = FunctionSchema.parse(entry["name"])
    except SchemaError as e:
        raise GenError(loc, entry["name"], str(e)) from None
    op_text = str(func)
    self_arg = func.arguments[0] if func.arguments else None
    if self_arg is None or self_arg.name != "self" or self_arg.type.annotation != "a!":
        message = "an in-place op takes `Tensor(a!) self` first and returns it"
        raise GenError(loc, op_text, message)
    key = func.signature_key()
    matches = [i for i in infos if not i.inplace and i.func.signature_key() == key]
    if not matches:
        message = (
            "an in-place entry without formulas needs a functional entry above it with "
            f"the same signature ({func.name.rstrip('_')}(...))"
        )
        raise GenError(loc, op_text, message)
    functional = matches[0]
    if functional.composite is not None or functional.output_kind != "single":
        raise GenError(
            loc, op_text, "its functional entry must have a forward and one output"
        )
    # The functional's samples where `self` already has the result's shape.
    samples = tuple(x for x in functional.samples if _fits_inplace(x))
    if not samples and "samples" not in entry:
        message = "none of the functional entry's samples fit in place: give 'samples'"
        raise GenError(loc, op_text, message)
    if "samples" in entry:
        samples = _load_samples(entry, loc, op_text, func, {}, display)
    variants = _load_variants(entry, loc, op_text, True, default="method")
    e = _Entry(entry, display, op_text)
    batch_rule = functional.explicit_batch_rule
    if "batch_rule" in entry:
        batch_rule = load_batch_rule(entry["batch_rule"], func, _failing(e))
    return dataclasses.replace(
        functional,
        explicit_batch_rule=batch_rule,
        func=func,
        inplace=True,
        reuses_node=functional.op is not None,
        method="method" in variants,
        function="function" in variants,
        python_binding=True,
        samples=samples,
        loc=loc,
    )


def _fits_inplace(sample: Sample) -> bool:
    """Whether every tensor argument broadcasts into `self`'s shape."""
    shapes = {a.name: a.shape for a in sample.args if a.shape is not None}
    target = shapes.get("self")
    if target is None:
        return False
    for shape in shapes.values():
        if len(shape) > len(target):
            return False
        tail = target[len(target) - len(shape) :]
        if any(s not in (1, t) for s, t in zip(shape, tail)):
            return False
    return True


def _check_composite(
    info: DifferentiabilityInfo,
    op_names: frozenset[str],
    kernel_helpers: Mapping[str, str],
    composite_helpers: Mapping[str, str],
) -> DifferentiabilityInfo:
    if info.composite is None:
        return info
    try:
        body = check_composite(
            info.composite,
            info.func,
            op_names - {info.func.name, info.func.cpp_name},
            kernel_helpers,
            composite_helpers,
        )
    except ExpressionError as e:
        raise GenError(info.loc, str(info.func), str(e)) from None
    return dataclasses.replace(info, composite=body)


@dataclass(frozen=True)
class _Entry:
    """One YAML entry being loaded, with where each of its keys is."""

    entry: YamlMap
    display: str
    op_text: str = "(entry)"

    @property
    def loc_entry(self) -> Location:
        return Location(self.display, self.entry.line)

    def loc(self, key: str) -> Location:
        return Location(self.display, self.entry.lines.get(key, self.entry.line))

    def error(self, key: str | None, message: str) -> GenError:
        where = self.loc_entry if key is None else self.loc(key)
        return GenError(where, self.op_text, message)


def called_names(entry: Mapping[str, Any]) -> set[str]:
    """The names an entry's expressions (forward, composite, formulas) call."""
    called: set[str] = set()
    for key, value in entry.items():
        if key in ("name", "samples", "domain", "structure") or not isinstance(
            value, str
        ):
            continue
        try:
            tree = ast.parse(value.strip(), mode="eval")
        except SyntaxError:
            continue  # reported where the expression itself is checked
        called |= {
            n.func.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
    return called


def _failing(e: _Entry) -> Fail:
    """Raise a GenError at the entry's `batch_rule:` key."""

    def fail(message: str) -> NoReturn:
        raise e.error("batch_rule", message)

    return fail


def _load_schema(
    e: _Entry, formula_helpers: frozenset[str], kernel_helpers: Mapping[str, str]
) -> FunctionSchema:
    """The entry's `name:`, parsed, with its op and argument names checked."""
    if "name" not in e.entry:
        raise GenError(e.loc_entry, "(entry)", "missing 'name'")
    name_text = e.entry["name"]
    if not isinstance(name_text, str):
        raise GenError(e.loc("name"), repr(name_text), "'name' must be a schema string")
    try:
        func = FunctionSchema.parse(name_text)
    except SchemaError as err:
        raise GenError(e.loc("name"), name_text, str(err)) from None
    e = _Entry(e.entry, e.display, str(func))
    problem = name_problem(func.name, BUILTIN_OP_NAMES)
    if problem is not None:
        raise e.error("name", f"the op name {func.name!r} {problem}")
    for a in func.arguments:
        problem = name_problem(a.name, BUILTIN_ARGUMENT_NAMES)
        if problem is not None:
            raise e.error("name", f"argument {a.name!r} {problem}")
    if {"self", "input"} <= {a.name for a in func.arguments}:
        message = "arguments 'self' and 'input' together: Python calls 'self' 'input'"
        raise e.error("name", message)
    for a in func.arguments:
        if a.type.is_list and a.binding_kind not in ("int[]", "Tensor[]", "Tensor?[]"):
            raise e.error("name", f"argument type {str(a.type)!r} is not supported yet")
        # A parameter named as a helper hides it from the formulas and kernels
        # of its entry: refused when they call it (PyTorch's `bool transpose`
        # beside the `transpose` helper is fine where no formula calls it).
        # (The names the generated code binds itself are checked once it is
        # rendered: tools/reserved.py.)
        helper = a.safe_name in formula_helpers or a.safe_name in kernel_helpers
        if helper and a.safe_name in called_names(e.entry):
            message = f"argument {a.name!r} shadows a name the generated code uses"
            raise e.error("name", message)
    _check_returns(func, e.loc("name"), e.op_text)
    return func


def _tensor_inputs(func: FunctionSchema) -> dict[str, Argument]:
    return {a.name: a for a in func.arguments if a.is_tensor or a.is_tensor_list}


def _unknown_key(key: str, name: str, func: FunctionSchema) -> str:
    """What is wrong with a key that is neither an entry key nor an argument:
    the entry key it misspells (`smaples`), else the argument or output it does."""
    close = difflib.get_close_matches(key, sorted(ENTRY_KEYS), n=1, cutoff=0.75)
    if close:
        return f"unknown key {key!r}; did you mean {close[0]!r}?"
    names = [a.name for a in func.arguments] + sorted(output_names(func))
    close = difflib.get_close_matches(name, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"formula for {name!r}, which is not an argument{hint}"


def _load_covered(e: _Entry, func: FunctionSchema) -> dict[str, str]:
    """Each tensor input that has a formula key, and that key (`self, other`)."""
    args = {a.name for a in func.arguments}
    tensor_inputs = _tensor_inputs(func)
    covered: dict[str, str] = {}
    forward_keys = _forward_keys(e.entry, func)
    for key in (k for k in e.entry if k not in ENTRY_KEYS and k not in forward_keys):
        for name in (n.strip() for n in key.split(",")):
            if name not in args:
                raise e.error(key, _unknown_key(key, name, func))
            if name not in tensor_inputs:
                raise e.error(key, f"formula for {name!r}, which is not a Tensor")
            if name in covered:
                message = (
                    f"{name!r} has two formulas (keys {covered[name]!r} and {key!r})"
                )
                raise e.error(key, message)
            covered[name] = key
    return covered


def _load_forward(
    e: _Entry,
    func: FunctionSchema,
    covered: dict[str, str],
    kernel_helpers: Mapping[str, str],
    numpy_only: bool = False,
) -> str:
    """The checked forward kernel ("" for a composite, which has none)."""
    if e.entry.get("composite") is not None:
        if "forward" in e.entry or any(k not in ENTRY_KEYS for k in e.entry):
            message = "a composite has no 'forward' and no formulas of its own"
            raise e.error("composite", message)
        return ""
    if not covered:
        message = f"no tensor input has a formula; give one or '{NON_DIFFERENTIABLE}'"
        raise e.error(None, message)
    if "forward" not in e.entry:
        raise e.error(None, "missing 'forward'")
    try:
        return check_forward(e.entry["forward"], func, kernel_helpers, numpy_only)
    except ExpressionError as err:
        raise e.error("forward", str(err)) from None


def _load_formulas(
    e: _Entry,
    func: FunctionSchema,
    covered: dict[str, str],
    formula_helpers: frozenset[str],
) -> tuple[list[Derivative], list[str]]:
    """The checked backward formulas, in the order of their inputs' edges, and the
    keys declared non_differentiable."""
    keys = (
        []
        if e.entry.get("composite") is not None
        else list(dict.fromkeys(covered.values()))
    )
    non_differentiable = [k for k in keys if e.entry[k] == NON_DIFFERENTIABLE]
    for key in non_differentiable:
        if "," in key:
            raise e.error(key, f"'{NON_DIFFERENTIABLE}' takes one input: {key!r}")
    formula_keys = [k for k in keys if k not in non_differentiable]
    tensor_inputs = _tensor_inputs(func)
    # Edges follow the schema's order of the differentiable inputs.
    differentiable = [
        a.name for a in func.arguments if covered.get(a.name) in formula_keys
    ]
    if len(differentiable) > 1 and any(
        tensor_inputs[n].is_tensor_list for n in differentiable
    ):
        raise e.error(None, "a Tensor[] input must be the only differentiable input")
    derivatives: list[Derivative] = []
    for key in sorted(
        formula_keys, key=lambda k: differentiable.index(k.split(",")[0].strip())
    ):
        names = tuple(n.strip() for n in key.split(","))
        text = e.entry[key]
        try:
            checked = check_formula(text, func, formula_helpers, multi=len(names) > 1)
        except ExpressionError as err:
            raise e.error(key, str(err)) from None
        derivatives.append(
            Derivative(
                var_names=names,
                indices=tuple(differentiable.index(n) for n in names),
                original_formula=canonical(text),
                formula=checked.formula,
                saved=checked.saved,
                uses_grads=checked.uses_grads,
                is_list=tensor_inputs[names[0]].is_tensor_list,
                loc=e.loc(key),
            )
        )
    if any(d.uses_grads for d in derivatives) and any(
        "grad" in _names_in(d.formula) for d in derivatives
    ):
        message = (
            "illegally mixes use of 'grad' and 'grads'. Consider replacing occurrences "
            "of 'grad' with 'grads[0]'"
        )
        raise e.error(None, message)
    return derivatives, [k.strip() for k in non_differentiable]


AUTO_ELEMENT_WISE = "auto_element_wise"
AUTO_LINEAR = "auto_linear"
# `result: not_implemented`: no JVP at all (forward AD raises PyTorch's refusal),
# for an entry whose backward is differentiable only once, so that the
# double-backward trick cannot derive one (_cdist_forward, as PyTorch's).
NO_JVP = "not_implemented"


def _forward_keys(entry: YamlMap, func: FunctionSchema) -> list[str]:
    """The keys naming an output (`result`, `result0`, a return's name) rather
    than an input: forward-mode formulas (PyTorch's
    is_forward_derivative_definition)."""
    args = {a.name for a in func.arguments}
    outputs = output_names(func)
    return [k for k in entry if k in outputs and k not in args]


def _load_forward_derivatives(
    e: _Entry,
    func: FunctionSchema,
    derivatives: list[Derivative],
    helpers: frozenset[str],
) -> tuple[ForwardDerivative, ...]:
    """The entry's forward formulas, checked; `auto_element_wise` expanded here
    (`auto_linear` once the wrappers are named)."""
    keys = _forward_keys(e.entry, func)
    if keys and not derivatives:
        raise e.error(keys[0], "a forward formula needs a differentiable input")
    differentiable = tuple(n for d in derivatives for n in d.var_names)
    found = []
    for key in keys:
        text = e.entry[key]
        if text == AUTO_ELEMENT_WISE:
            formula = _element_wise(e, key, func, derivatives)
        elif text == AUTO_LINEAR:
            formula = ""
        elif text == NO_JVP:
            formula = f"no_forward_derivative({func.name!r})"
        else:
            try:
                formula = check_forward_formula(text, func, helpers, differentiable)
            except ExpressionError as err:
                raise e.error(key, str(err)) from None
        kind = text if text in (AUTO_ELEMENT_WISE, AUTO_LINEAR, NO_JVP) else "formula"
        original = canonical(text) if kind == "formula" else text
        found.append(ForwardDerivative(key, kind, original, formula, e.loc(key)))
    return tuple(found)


def _element_wise(
    e: _Entry, key: str, func: FunctionSchema, derivatives: list[Derivative]
) -> str:
    """`auto_element_wise`, allowed only for one differentiable input and output."""
    if len(func.returns) != 1 or len(derivatives) != 1 or derivatives[0].is_multi:
        message = (
            "defines the forward definition of gradient as element_wise but this "
            "only works for functions with a single differentiable input and a "
            "single differentiable output"
        )
        raise e.error(key, message)
    d = derivatives[0]
    text = e.entry[d.var_name]
    return element_wise_forward(canonical(text), d.var_names[0], func)


def _postprocess_forward_derivatives(
    infos: tuple[DifferentiabilityInfo, ...], helpers: Mapping[str, str]
) -> tuple[DifferentiabilityInfo, ...]:
    """Every differentiable entry's forward derivatives, in the wrapper's names
    (torchgen's postprocess_forward_derivatives): `auto_linear` calls the op on
    the tangents; an entry without forward formulas gets a "derived" one. An
    in-place entry uses its functional entry's op."""
    functional = {
        i.func.signature_key(): i.wrapper_name for i in infos if not i.inplace
    }
    done = []
    for info in infos:
        if info.op is None or info.composite:
            done.append(info)
            continue
        op = functional.get(info.func.signature_key(), info.wrapper_name)
        fds = info.forward_derivatives or (
            ForwardDerivative("", "derived", "", "", info.loc),
        )
        if len(info.func.returns) == 1 and fds[0].kind == "derived":
            fds = (dataclasses.replace(fds[0], output="result"),)
        rendered = []
        for f in fds:
            formula, modules = f.formula, helpers
            if f.kind == AUTO_LINEAR:
                formula, modules = _call_text(op, info, tangents=True), {}
            elif f.kind == "derived":
                formula, modules = _derived_text(op, info), {}
            elif f.kind == NO_JVP:
                modules = {}
            text = render_forward_formula(formula, info.func, info.inplace, modules)
            rendered.append(dataclasses.replace(f, formula=formula, rendered=text))
        done.append(dataclasses.replace(info, forward_derivatives=tuple(rendered)))
    return tuple(done)


def _call_text(op: str, info: DifferentiabilityInfo, tangents: bool) -> str:
    """`op(input=self_t, other=other_t, alpha=alpha)`: the op on the tangents of
    its differentiable inputs, every other argument as given."""
    differentiable = {a.name for a in info.differentiable_inputs}
    parts = []
    for a in info.func.arguments:
        value = a.safe_name
        if a.is_tensor or a.is_tensor_list:
            value = (
                f"{a.name}_t"
                if tangents and a.name in differentiable
                else f"{a.name}_p"
            )
        elif a.type.elem_optional:
            value = f"index_tensors({a.name})"
        parts.append(f"{a.parameter}={value}")
    return f"{op}({', '.join(parts)})"


def _derived_text(op: str, info: DifferentiabilityInfo) -> str:
    """`derived_jvp(op, {"input": self_p, ...}, {"input": self_t})`; for an entry
    with a not_implemented backward formula, PyTorch's refusal."""
    if any(d.not_implemented for d in info.derivatives):
        return f"no_forward_derivative({info.func.name!r})"
    args = []
    for a in info.func.arguments:
        value = f"{a.name}_p" if a.is_tensor or a.is_tensor_list else a.safe_name
        if a.type.elem_optional:
            value = f"index_tensors({a.name})"
        args.append(f"{a.parameter!r}: {value}")
    tangents = [f"{a.parameter!r}: {a.name}_t" for a in info.differentiable_inputs]
    return f"derived_jvp({op}, {{{', '.join(args)}}}, {{{', '.join(tangents)}}})"


def _load_output_differentiability(
    e: _Entry, func: FunctionSchema
) -> tuple[bool, ...] | None:
    value = e.entry.get("output_differentiability")
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or len(value) != len(func.returns)
        or len(func.returns) < 2
        or not all(isinstance(v, bool) for v in value)
    ):
        message = (
            "'output_differentiability' must be a list of true/false, one per "
            "output of a tuple return"
        )
        raise e.error("output_differentiability", message)
    return tuple(value)


def _load_python_binding(e: _Entry) -> bool:
    python_binding = e.entry.get("python_binding", True)
    if not isinstance(python_binding, bool):
        raise e.error("python_binding", "'python_binding' must be true or false")
    return python_binding


def _load_entry(
    entry: YamlMap,
    display: str,
    formula_helpers: frozenset[str],
    kernel_helpers: Mapping[str, str],
    counter: Counter[str],
    op: str | None = None,
) -> DifferentiabilityInfo:
    func = _load_schema(_Entry(entry, display), formula_helpers, kernel_helpers)
    e = _Entry(entry, display, str(func))
    covered = _load_covered(e, func)
    composite = entry.get("composite")
    numpy_only, backends = _load_backends(e)
    forward = _load_forward(e, func, covered, kernel_helpers, bool(numpy_only))
    derivatives, non_differentiable = _load_formulas(e, func, covered, formula_helpers)
    # PyTorch's rule: a tensor input with no key at all is not differentiable and
    # may not require grad (check_no_requires_grad), except one named `output`.
    no_requires_grad = tuple(
        n
        for n in _tensor_inputs(func)
        if composite is None and n not in covered and n != "output"
    )
    if op is None and derivatives:
        prefix = create_op_prefix(func.name)
        op = f"{prefix}{counter[prefix]}"
        counter[prefix] += 1
    first = func.arguments[0] if func.arguments else None
    has_self = first is not None and first.name == "self" and first.is_tensor
    inplace = has_self and first.type.annotation == "a!" and func.name.endswith("_")
    variants = _load_variants(
        entry, e.loc("variants"), e.op_text, has_self, "method" if inplace else None
    )
    python_binding = _load_python_binding(e)
    promotion, operands = _load_type_promotion(
        entry, e.loc("type_promotion"), e.op_text, func
    )
    output_differentiability = _load_output_differentiability(e, func)
    forward_derivatives = _load_forward_derivatives(
        e, func, derivatives, formula_helpers
    )
    domains = _load_domains(entry, e.loc("domain"), e.op_text, func)
    samples = _load_samples(entry, e.loc("samples"), e.op_text, func, domains, display)
    structure = _load_structure(entry, e.loc("structure"), e.op_text, func)
    samples = tuple(_structured(s, structure, func) for s in samples)
    batch_rule = ""
    if "batch_rule" in entry:
        batch_rule = load_batch_rule(entry["batch_rule"], func, _failing(e))
    return DifferentiabilityInfo(
        explicit_batch_rule=batch_rule,
        func=func,
        forward=forward,
        composite=composite,
        derivatives=tuple(derivatives),
        non_differentiable=tuple(non_differentiable),
        no_requires_grad=no_requires_grad,
        op=op,
        method="method" in variants,
        function="function" in variants,
        python_binding=python_binding,
        samples=samples,
        loc=e.loc("name"),
        type_promotion=promotion,
        promotion_operands=operands,
        inplace=inplace,
        output_differentiability=output_differentiability,
        forward_derivatives=forward_derivatives,
        structure=tuple(structure.items()),
        numpy_only=numpy_only,
        backends=backends,
    )


# What `backends:` may say: numpy only, or numpy and Dask (its chunks run the
# numpy kernel one by one, through runtime/backend.py's `blockwise`).
_RESTRICTED_BACKENDS = (("numpy",), ("numpy", "dask"))


def _load_backends(e: _Entry) -> tuple[str, tuple[str, ...]]:
    """`backends: [numpy]` (or `[numpy, dask]`) with its `numpy_only_reason:`:
    the reason and the backends (("", ()) for an entry that runs on every
    array API backend)."""
    backends = e.entry.get("backends")
    reason = e.entry.get("numpy_only_reason")
    if backends is None:
        if reason is not None:
            raise e.error("numpy_only_reason", "a reason without 'backends: [numpy]'")
        return "", ()
    if not isinstance(backends, list) or tuple(backends) not in _RESTRICTED_BACKENDS:
        message = (
            "'backends' takes [numpy], for an op that runs on numpy only, or "
            "[numpy, dask], for one whose numpy kernel also runs on Dask's chunks"
        )
        raise e.error("backends", message)
    if not isinstance(reason, str) or not reason.strip():
        message = "'backends: [numpy]' needs 'numpy_only_reason': why, in a few words"
        raise e.error("backends", message)
    return reason.strip(), tuple(backends)


def _names_in(expression: str) -> set[str]:
    return {
        n.id
        for n in ast.walk(ast.parse(expression, mode="eval"))
        if isinstance(n, ast.Name)
    }


def _check_returns(func: FunctionSchema, loc: Location, op: str) -> None:
    """One Tensor, a Tensor[] (split, unbind), or a tuple of Tensors (max.dim)."""
    returns = func.returns
    ok = all(r.type.base == "Tensor" and not r.type.optional for r in returns) and (
        len(returns) == 1 or not any(r.type.is_list for r in returns)
    )
    if not ok:
        text = op.partition(") -> ")[2]
        message = (
            f"returns must be Tensors, a Tensor[], or a tuple of Tensors, got {text!r}"
        )
        raise GenError(loc, op, message)


PROMOTION_KINDS = ("default", "int_to_float")


def _load_type_promotion(
    entry: YamlMap, loc: Location, op: str, func: FunctionSchema
) -> tuple[str, tuple[str, ...]]:
    """`type_promotion: default`, or `{kind: default, operands: [self, other]}`."""
    raw = entry.get("type_promotion")
    if raw is None:
        return "none", ()
    candidates = [
        a.name for a in func.arguments if a.is_tensor or a.binding_kind == "Scalar"
    ]
    if isinstance(raw, str):
        kind, operands = raw, candidates
    elif isinstance(raw, dict) and set(raw) == {"kind", "operands"}:
        kind, operands = raw["kind"], raw["operands"]
    else:
        raise GenError(loc, op, f"bad type_promotion {raw!r}")
    if kind not in PROMOTION_KINDS:
        raise GenError(
            loc, op, f"type_promotion must be one of {PROMOTION_KINDS}: {kind!r}"
        )
    if not isinstance(operands, list) or any(o not in candidates for o in operands):
        message = (
            f"type_promotion operands must be Tensor or Scalar arguments: {operands!r}"
        )
        raise GenError(loc, op, message)
    if not any(
        func.arguments[[a.name for a in func.arguments].index(o)].is_tensor
        for o in operands
    ):
        raise GenError(loc, op, "type_promotion needs a Tensor operand")
    return kind, tuple(operands)


def _load_variants(
    entry: YamlMap, loc: Location, op: str, has_self: bool, default: str | None = None
) -> set[str]:
    if default is None:
        default = "function, method" if has_self else "function"
    text = entry.get("variants", default)
    if not isinstance(text, str):
        raise GenError(loc, op, "'variants' must be a string like 'function, method'")
    variants = {v.strip() for v in text.split(",")}
    unknown = variants - {"function", "method"}
    if unknown or not variants:
        raise GenError(loc, op, f"unknown variants {sorted(unknown)!r} in {text!r}")
    if "method" in variants and not has_self:
        raise GenError(
            loc, op, "a method variant needs 'Tensor self' as first argument"
        )
    return variants


def _interval(value: Any) -> tuple[float, float] | None:
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        and value[0] < value[1]
    ):
        return (float(value[0]), float(value[1]))
    return None


def _load_domains(
    entry: YamlMap, loc: Location, op: str, func: FunctionSchema
) -> dict[str, tuple[tuple[float, float], ...]]:
    raw = entry.get("domain", {})
    if not isinstance(raw, dict):
        raise GenError(loc, op, "'domain' must map tensor inputs to [low, high]")
    tensors = {a.name for a in func.arguments if a.is_tensor or a.is_tensor_list}
    domains = {}
    for name, value in raw.items():
        if name not in tensors:
            raise GenError(loc, op, f"domain for {name!r}, which is not a tensor input")
        single = _interval(value)
        if single is not None:
            domains[name] = (single,)
            continue
        intervals = [_interval(v) for v in value] if isinstance(value, list) else [None]
        if not intervals or None in intervals:
            message = (
                f"domain of {name!r} must be [low, high] or a list of them: {value!r}"
            )
            raise GenError(loc, op, message)
        domains[name] = tuple(intervals)  # type: ignore[arg-type]
    return domains


STRUCTURES = ("positive_definite", "triangular", "log_probabilities")


def _load_structure(
    entry: YamlMap, loc: Location, op: str, func: FunctionSchema
) -> dict[str, str]:
    """`structure: {A: positive_definite}`: matrix inputs the samples must draw
    symmetric positive definite, or triangular (the triangle the sample's
    `upper` names), or log-probabilities over the last dim (a log_softmax), and
    that the gradient checks see as such."""
    raw = entry.get("structure", {})
    if not isinstance(raw, dict):
        raise GenError(loc, op, "'structure' must map tensor inputs to a structure")
    tensors = {a.name for a in func.arguments if a.is_tensor}
    for name, value in raw.items():
        if name not in tensors:
            message = f"structure for {name!r}, which is not a tensor input"
            raise GenError(loc, op, message)
        if value not in STRUCTURES:
            message = f"structure of {name!r} must be one of {STRUCTURES}: {value!r}"
            raise GenError(loc, op, message)
    return dict(raw)


def triangle_of(func: FunctionSchema, values: Mapping[str, Any]) -> str:
    """ "upper_triangular" or "lower_triangular": the call's `upper` argument (its
    default when not given); lower when the op has none."""
    defaults = {a.name: a.default for a in func.arguments}
    upper = values.get("upper", defaults.get("upper") == "True")
    return "upper_triangular" if upper else "lower_triangular"


def _structured(
    sample: Sample, structure: dict[str, str], func: FunctionSchema
) -> Sample:
    if not structure:
        return sample
    values = {a.name: a.value for a in sample.args}
    kinds = {
        name: kind if kind != "triangular" else triangle_of(func, values)
        for name, kind in structure.items()
    }
    args = tuple(
        dataclasses.replace(a, structure=kinds.get(a.name)) for a in sample.args
    )
    return dataclasses.replace(sample, args=args)


def _freeze(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _nested_shape(values: Any) -> list[int] | None:
    """The shape of nested lists of numbers ([[0, 1], [2, 0]] -> [2, 2]); None
    when they are ragged."""
    if not isinstance(values, list):
        return [] if isinstance(values, (int, float)) else None
    shapes = [_nested_shape(v) for v in values]
    if any(s is None or s != shapes[0] for s in shapes):
        return None
    return [len(values)] + (shapes[0] if shapes else [])


def _is_shape(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value
    )


def _sample_list(
    a: Argument, value: Any, domains: Domains, fail: Fail
) -> SampleArg | None:
    """A `Tensor[]` sample (a list of shapes) or a `Tensor?[]` one (index tensors
    or nulls); None for any other argument."""
    if a.is_tensor_list:
        if not isinstance(value, list) or not all(_is_shape(v) for v in value):
            fail(f"sample for {a.name!r} must be a list of shapes: {value!r}")
        return SampleArg(
            name=a.name,
            shape=None,
            value=None,
            dtype=None,
            domain=domains.get(a.name, DEFAULT_DOMAIN),
            shapes=tuple(tuple(v) for v in value),
        )
    if a.binding_kind == "Tensor?[]":
        if not isinstance(value, list) or not value:
            fail(
                f"sample for {a.name!r} must be a list of index tensors "
                f"(nested lists of ints or bools) or nulls: {value!r}"
            )
        return SampleArg(
            name=a.name,
            shape=None,
            value=None,
            dtype=None,
            domain=DEFAULT_DOMAIN,
            index_list=_freeze(value),
        )
    return None


def _sample_value(a: Argument, value: Any, domains: Domains, fail: Fail) -> SampleArg:
    """A tensor sample (a shape, `{shape|values, dtype}` or a number), or a plain
    argument's value."""
    shape, dtype, values = None, None, None
    if a.is_tensor and isinstance(value, dict):
        shape, dtype = value.get("shape"), value.get("dtype")
        values = value.get("values")
        if values is not None:
            shape = _nested_shape(values)
        if (
            set(value) - {"shape", "dtype", "values"}
            or dtype not in (None, "bool", "int64", "int32", "complex")
            or (values is not None and "shape" in value)
        ):
            fail(
                f"tensor sample for {a.name!r} takes shape (or values) and "
                f"dtype: {value!r}"
            )
    elif a.is_tensor and isinstance(value, list):
        shape = value
    elif a.is_tensor and not isinstance(value, (bool, int, float, type(None))):
        fail(
            f"tensor sample for {a.name!r} must be a shape, a mapping or "
            f"a number: {value!r}"
        )
    if shape is not None and not _is_shape(shape):
        fail(f"bad shape for {a.name!r}: {shape!r}")
    return SampleArg(
        name=a.name,
        shape=None if shape is None else tuple(shape),
        value=None if shape is not None else _freeze(value),
        dtype=dtype,
        domain=domains.get(a.name, DEFAULT_DOMAIN),
        values=_freeze(values),
    )


def _load_sample(
    item: Any, item_loc: Location, op: str, func: FunctionSchema, domains: Domains
) -> Sample:
    def fail(message: str) -> NoReturn:
        raise GenError(item_loc, op, message)

    if not isinstance(item, dict):
        fail(f"a sample must be a mapping, got {item!r}")
    args = {a.name for a in func.arguments}
    for name in item:
        if name not in args:
            fail(f"sample gives {name!r}, which is not an argument")
    sample_args = []
    for a in func.arguments:
        if a.name not in item:
            if a.default is None:
                fail(f"sample has no value for {a.name!r}")
            continue
        value = item[a.name]
        arg = _sample_list(a, value, domains, fail)
        sample_args.append(arg or _sample_value(a, value, domains, fail))
    return Sample(tuple(sample_args), item_loc)


def _load_samples(
    entry: YamlMap,
    loc: Location,
    op: str,
    func: FunctionSchema,
    domains: Domains,
    display: str,
) -> tuple[Sample, ...]:
    raw = entry.get("samples")
    if not isinstance(raw, YamlList) or not raw:
        raise GenError(
            loc, op, "'samples' must be a non-empty list of inputs for the tests"
        )
    return tuple(
        _load_sample(item, Location(display, raw.lines[i]), op, func, domains)
        for i, item in enumerate(raw)
    )


# PyTorch's public ops that derivatives.yaml leaves out, each with its reason
# (tests/ops/test_coverage.py computes that set from torch). The op table of a
# file named derivatives.yaml (this project's, or a copy of it) renders it; an op
# pack's YAML has its own name and no such list.
NOT_COVERED_FILE = "not_covered.yaml"
NOT_COVERED_PATH = Path(__file__).with_name(NOT_COVERED_FILE)


def not_covered_for(yaml_path: Path) -> tuple[NotCovered, ...]:
    """The ops left out that the op table of `yaml_path` lists."""
    if yaml_path.name != "derivatives.yaml":
        return ()
    return load_not_covered(NOT_COVERED_PATH, f"tools/{NOT_COVERED_FILE}")


def load_not_covered(path: Path, display: str | None = None) -> tuple[NotCovered, ...]:
    """Parse not_covered.yaml: a list of `{op: name, why: reason}`, sorted by op.
    A missing file is an empty list (an op pack has none)."""
    display = display or path.name
    if not path.exists():
        return ()
    entries = load_yaml(path, display)
    rows: dict[str, NotCovered] = {}
    for index, entry in enumerate(entries):
        loc = Location(display, entries.lines[index])
        op = entry.get("op") if isinstance(entry, YamlMap) else None
        why = entry.get("why") if isinstance(entry, YamlMap) else None
        if not isinstance(entry, YamlMap) or set(entry) != {"op", "why"}:
            raise GenError(loc, "(entry)", "an entry is `{op: name, why: reason}`")
        if not isinstance(op, str) or not isinstance(why, str) or not why.strip():
            raise GenError(loc, str(op), "`op` and `why` must be non-empty text")
        if op in rows:
            message = f"listed twice (first at line {rows[op].loc.line})"
            raise GenError(loc, op, message)
        rows[op] = NotCovered(op, " ".join(why.split()), loc)
    return tuple(rows[op] for op in sorted(rows))
