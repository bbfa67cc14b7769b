"""The helpers the tests share, importable as `support` from every tests/ folder.

* the YAML's own entries and how a user calls them, in yamlgrad and in torch
  (the per-entry tests and the op fuzzer run over these);
* small comparison helpers for tests that run one program in both libraries;
* the generator tests' scratch folders, sentinels and bad-input table.

The sample helpers live in the public yamlgrad.testing (what an op pack runs over
its own YAML, with its finite differences, numerical_vjp); the ones the tests use
are re-exported here.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.generated import VariableType
from yamlgrad import testing
from yamlgrad.testing import (  # noqa: F401 - some are re-exported for the tests
    build_args,
    float_outputs,
    inplace_safe,
    overload_name,
    python_names,
    random_like,
    real_inner_of,
    sample_inputs,
    slot_array,
    split_arguments,
)
from yamlgrad.tools.load import load_derivatives
from yamlgrad.tools.model import DifferentiabilityInfo
import torch_cpu_kernels

#: The repository root (this file is tests/support.py).
REPO_ROOT = Path(__file__).resolve().parents[1]
INFOS = load_derivatives(REPO_ROOT / "derivatives.yaml")


def _refuses_every_input(info: DifferentiabilityInfo) -> bool:
    """Every formula is not_implemented (_cdist_backward): a node whose backward
    raises, with nothing to compare against finite differences."""
    return all(d.not_implemented for d in info.derivatives)


DIFFERENTIABLE = tuple(
    i for i in INFOS if i.op is not None and not _refuses_every_input(i)
)
# Entries whose node's backward always raises PyTorch's NotImplementedError.
REFUSING = tuple(i for i in INFOS if i.op is not None and _refuses_every_input(i))


def call_torch(
    torch: ModuleType,
    info: DifferentiabilityInfo,
    values: dict,
    leaf_safe: bool = True,
) -> Any:
    """yamlgrad.testing.call_torch, with CPU kernels for PyTorch's CUDA-only ops
    registered first (tests/torch_cpu_kernels.py), or a skip naming the op when
    torch has none (an entry of yamlgrad's own: its finite-difference checks
    still run)."""
    torch_cpu_kernels.install(torch)
    reason = testing.torch_lacks(torch, info)
    if reason is not None:
        pytest.skip(reason)
    return testing.call_torch(torch, info, values, leaf_safe)


def op_id(info: DifferentiabilityInfo) -> str:
    return info.func.cpp_name


def wrapper(info: DifferentiabilityInfo) -> Callable[..., yg.Tensor]:
    """The generated function of exactly this overload."""
    return getattr(VariableType, info.wrapper_name)


def call(
    info: DifferentiabilityInfo,
    kwargs: dict[str, object],
    tensors: dict[str, yg.Tensor],
) -> Any:
    """The generated function of this overload on the sample's arguments (a
    random op draws from a Generator seeded alike at every call)."""
    return testing.call(info, kwargs, tensors, VariableType)


# -- calling an entry the way a user would ----------------------------------------


def yamlgrad_routes(info: DifferentiabilityInfo) -> dict[str, Callable[..., Any]]:
    """Every public way to reach this overload in yamlgrad, by route name."""
    name = info.func.name
    routes: dict[str, Callable[..., Any]] = {}
    if info.python_binding and info.function:
        routes["function"] = getattr(yg, name)
    if info.python_binding and info.method:
        routes["method"] = lambda *a, **k: getattr(a[0], name)(*a[1:], **k)
    routes["ops"] = getattr(getattr(yg.ops, name), overload_name(info))
    return routes


def call_yamlgrad(
    info: DifferentiabilityInfo,
    values: dict,
    route: str | None = None,
    leaf_safe: bool = True,
) -> yg.Tensor:
    """The yamlgrad call a user would write (function, else method, else ops)."""
    routes = yamlgrad_routes(info)
    fn = routes[route] if route is not None else next(iter(routes.values()))
    args, kwargs = split_arguments(
        info, inplace_safe(info, values) if leaf_safe else values
    )
    return fn(*args, **kwargs)


# Outputs that are bases of vectors, each determined only up to its sign
# (singular vectors, eigenvectors): numpy's LAPACK and PyTorch's MKL may pick
# either. Named by the schema's returns.
GAUGE_COLUMNS = ("U", "V", "eigenvectors")
GAUGE_ROWS = ("Vh",)


def gauge_factors(
    info: DifferentiabilityInfo, ours: list[np.ndarray], theirs: list[np.ndarray]
) -> list[np.ndarray | None]:
    """Per output, the +-1 factor (broadcastable to it) that flips each of
    torch's vectors to yamlgrad's sign; None for an output without a gauge."""
    names = [r.name for r in info.func.returns]
    factors: list[np.ndarray | None] = [None] * len(theirs)
    if len(names) != len(theirs):
        return factors
    for i, name in enumerate(names):
        if name not in GAUGE_COLUMNS + GAUGE_ROWS or np.ndim(theirs[i]) < 2:
            continue
        axis = -2 if name in GAUGE_COLUMNS else -1  # the axis along one vector
        dot = np.sum(ours[i] * theirs[i], axis=axis, keepdims=True)
        factors[i] = np.where(dot < 0, -1.0, 1.0)
    return factors


def align_gauge(info: DifferentiabilityInfo, ours: Any, theirs: Any) -> Any:
    """torch's outputs with each vector's sign flipped to yamlgrad's, by a
    constant factor (so gradients flow through it), where the entry returns
    sign-ambiguous vectors; `theirs` as it is otherwise."""
    if not {r.name for r in info.func.returns} & set(GAUGE_COLUMNS + GAUGE_ROWS):
        return theirs
    import torch

    outs = list(theirs)
    factors = gauge_factors(
        info,
        [o.detach().numpy() for o in as_outputs(ours)],
        [o.detach().numpy() for o in outs],
    )
    for i, factor in enumerate(factors):
        if factor is not None:
            outs[i] = outs[i] * torch.tensor(factor, dtype=outs[i].dtype)
    return tuple(outs)


# -- one program in both libraries ------------------------------------------------


def libraries_under_test() -> list[ModuleType]:
    """yamlgrad, and torch when it is installed (the oracle)."""
    try:
        import torch
    except ImportError:
        return [yg]
    return [yg, torch]


def error_message(fn: Callable[[], object], kind: type = RuntimeError) -> str:
    """The text of the `kind` error `fn()` must raise."""
    with pytest.raises(kind) as info:
        fn()
    return str(info.value)


def torch_text(error: BaseException) -> str:
    """An error's text without the C++ backtrace PyTorch appends to rewrapped ones."""
    return str(error).split("\nException raised from")[0]


def dtype_name(dtype: Any) -> str:
    """`float64` for yg.float64 and torch.float64 alike."""
    return str(dtype).rpartition(".")[2]


def as_outputs(result: Any) -> list[Any]:
    """An op's outputs as a list, whether it returned one tensor or several."""
    return list(result) if isinstance(result, (tuple, list)) else [result]


def second_order(
    lib: ModuleType, grads: tuple, leaves: list, directions: list[np.ndarray]
) -> tuple:
    """The gradient of sum_i Re<directions[i], grads[i]>; all None when it is
    constant."""
    total = None
    for g, d in zip(grads, directions):
        if g is None or not g.requires_grad:
            continue  # a gradient that does not depend on the inputs
        term = real_inner_of(g, lib.tensor(d))
        total = term if total is None else total + term
    if total is None:
        return (None,) * len(leaves)
    return lib.autograd.grad(total, leaves, allow_unused=True)


def counting_input(lib: ModuleType, *shape: int) -> Any:
    """0, 1, 2, ... in `shape`, float64: a non-leaf of a leaf that requires grad."""
    data = np.arange(float(np.prod(shape))).reshape(shape)
    return lib.tensor(data, requires_grad=True) * 1


def aten_namespace(lib: ModuleType) -> Any:
    """The op namespace that reaches an overload directly (`.default`, `.Tensor`)."""
    return lib.ops.aten if lib is not yg else yg.ops


def call_outcome(f: Callable[[ModuleType], Any], lib: ModuleType) -> Any:
    """Shapes, values and grad_fn names of f(lib)'s outputs, or the error."""
    try:
        out = f(lib)
    except (RuntimeError, IndexError, ValueError, TypeError) as error:
        return (type(error).__name__, torch_text(error))
    return [
        (
            tuple(o.shape),
            np.round(o.detach().numpy().astype(float), 12).tolist(),
            type(o.grad_fn).__name__ if o.grad_fn is not None else None,
        )
        for o in as_outputs(out)
    ]


# -- generator tests: scratch folders and sentinels ------------------------------

REAL_YAML = REPO_ROOT / "derivatives.yaml"
COMMITTED = REPO_ROOT / "generated"
GENERATED_FILES = (
    "Functions.py",
    "MANIFEST.json",
    "OPS.md",
    "VariableType.py",
    "__init__.py",
)
SENTINELS = {
    "Functions.py": b"# sentinel: Functions.py\n",
    "VariableType.py": b"# sentinel: VariableType.py\n",
    "__init__.py": b"",
    "unrelated.txt": b"not the generator's\r\n",
}


def yamlgrad_gen() -> str:
    """The installed console script of this interpreter's environment."""
    script = Path(sys.executable).with_name("yamlgrad-gen")
    found = str(script) if script.exists() else shutil.which("yamlgrad-gen")
    assert found is not None, "yamlgrad-gen is not installed (pip install -e .)"
    return found


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file in `folder` (hidden ones too) and its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def sentinel_out(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    out.mkdir()
    for name, data in SENTINELS.items():
        (out / name).write_bytes(data)
    return out


def copy_real_yaml(folder: Path) -> Path:
    """A copy of the real derivatives.yaml, keeping its name (it is in the headers,
    and its op table lists tools/not_covered.yaml)."""
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(REAL_YAML, folder / "derivatives.yaml"))


# -- the generator's bad input: each case, and the one line it must give --------

EXP = "exp(Tensor self) -> Tensor"
MUL = "mul.Tensor(Tensor self, Tensor other) -> Tensor"


def entry(
    formula: str = "grad * result",
    forward: str = "xp.exp(self)",
    name: str = EXP,
    samples: str = "{self: [3]}",
    extra: str = "",
) -> str:
    """One entry: name on line 1, forward 2, the formula of `self` 3, samples 4-5."""
    return (
        f"- name: {name}\n"
        f"  forward: {forward}\n"
        f"  self: {formula}\n"
        f"  samples:\n"
        f"    - {samples}\n"
        f"{extra}"
    )


def mul_entry(self_formula: str, other_line: str) -> str:
    return (
        f"- name: {MUL}\n"
        f"  forward: xp.multiply(self, other)\n"
        f"  self: {self_formula}\n"
        f"{other_line}"
        f"  samples:\n"
        f"    - {{self: [3], other: [3]}}\n"
    )


class BadInput(NamedTuple):
    id: str
    text: str  # the whole derivatives.yaml
    line: int
    op: str
    quoted: tuple[str, ...]  # each must appear in the message, as written


def bad_formula(id: str, formula: str, *quoted: str) -> BadInput:
    """A refused formula of `self`: the message quotes it whole, and what is wrong."""
    needs_quotes = ": " in formula or formula.startswith("[")
    text = entry(repr(formula) if needs_quotes else formula)
    return BadInput(id, text, 3, EXP, (*quoted, repr(formula)))


def bad_forward(id: str, forward: str, *quoted: str) -> BadInput:
    return BadInput(id, entry(forward=forward), 2, EXP, (*quoted, repr(forward)))


def bad_schema(id: str, name: str, *quoted: str) -> BadInput:
    """A refused `name:`; the op in the message is the text as written."""
    text = entry(name=repr(name) if name != name.strip() else name)
    return BadInput(id, text, 1, name, quoted)


SCALAR_MUL = "mul.Scalar(Tensor self, Scalar other) -> Tensor"
SCALAR_MUL_ENTRY = {
    "name": SCALAR_MUL,
    "forward": "xp.multiply(self, other)",
    "formula": "grad * other",
    "samples": "{self: [3], other: 2.0}",
}
ALIASED = (
    entry().replace("samples:", "samples: &s")
    + "- name: log(Tensor self) -> Tensor\n"
    + "  forward: xp.log(self)\n"
    + "  self: grad / self\n"
    + "  samples: *s\n"
)
NO_SAMPLES = (
    "- name: exp(Tensor self) -> Tensor\n  forward: xp.exp(self)\n  self: grad\n"
)
BAD_INDENT = "- name: exp(Tensor self) -> Tensor\n  forward: xp.exp(self)\n   self: g\n"
UNCLOSED = "- name: log(Tensor self) -> Tensor\n  forward: [xp.log(self)\n"
SHELL = "!!python/object/apply:os.system ['echo pwned']"
MUL_BOTH = mul_entry("grad * other", "  other: grad * self\n")

BAD_INPUTS = (
    # Formulas.
    bad_formula("misspelled_name", "grad * reslt", "unknown name 'reslt'"),
    bad_formula("not_an_expression", "grad *", "not a Python expression"),
    bad_formula("dunder_import", "__import__('os')", "'__import__'"),
    bad_formula("dunder_attribute", "self.__class__", "'__class__'"),
    bad_formula("lambda", "(lambda: grad)()", "Lambda"),
    bad_formula("list_comprehension", "[g for g in grad]", "ListComp"),
    bad_formula("walrus", "(g := grad)", "NamedExpr"),
    bad_formula("f_string", "f'{grad}'", "JoinedStr"),
    bad_formula("string_constant", "grad * 'x'", "constant 'x'"),
    bad_formula("call_of_eval", "eval(grad)", "calls 'eval'"),
    bad_formula("call_of_numpy", "grad * np.exp(self)", "calls 'np.exp'"),
    bad_formula("method_call", "grad.sum()", "calls 'grad.sum'"),
    BadInput("formula_not_a_string", entry("3"), 3, EXP, ("must be a string, got 3",)),
    # Forward kernels.
    bad_forward("forward_os_system", "os.system(self)", "calls 'os.system'"),
    bad_forward("forward_open", "open(self)", "calls 'open'"),
    bad_forward("forward_dunder", "xp.exp(self).__class__", "'__class__'"),
    bad_forward("forward_unknown_name", "xp.exp(x)", "unknown name 'x'"),
    bad_forward("forward_numpy_outside_numpy_only", "np.exp(self)", "'np.exp'", "`xp`"),
    bad_forward("forward_not_an_array_api_name", "xp.exq(self)", "'xp.exq'"),
    bad_forward("forward_file_access", "xp.load(self)", "'xp.load'"),
    BadInput(
        "backends_without_reason",
        entry(extra="  backends: [numpy]\n"),
        6,
        EXP,
        ("'numpy_only_reason'",),
    ),
    BadInput(
        "backends_not_numpy",
        entry(extra="  backends: [dask]\n  numpy_only_reason: r\n"),
        6,
        EXP,
        ("'backends' takes [numpy]",),
    ),
    # Schemas.
    bad_schema("schema_does_not_parse", "exp(Tensor self) => Tensor", "'exp(Tensor "),
    bad_schema("schema_double_space", "exp(Tensor  self) -> Tensor", "'Tensor '"),
    bad_schema(
        "schema_trailing_space",
        "exp(Tensor self) -> Tensor ",
        "does not round-trip: 'exp(Tensor self) -> Tensor '",
    ),
    bad_schema(
        "schema_missing_space",
        "mul(Tensor self,Tensor other) -> Tensor",
        "does not round-trip: 'mul(Tensor self,Tensor other) -> Tensor'",
    ),
    bad_schema(
        "schema_parenthesized_return",
        "exp(Tensor self) -> (Tensor)",
        "does not round-trip: 'exp(Tensor self) -> (Tensor)'",
    ),
    bad_schema(
        "unknown_enum_default",
        "exp(Tensor self, int reduction=Median) -> Tensor",
        "unsupported default 'Median'",
    ),
    bad_schema(
        "unsupported_list_type",
        "exp(Tensor self, bool[3] mask) -> Tensor",
        "'bool[3]' is not supported",
    ),
    bad_schema(
        "keyword_argument_clash",
        "exp(Tensor self, int from_=0, int from=0) -> Tensor",
        "'from_' and 'from' are both 'from_'",
    ),
    bad_schema("keyword_op_name", "import(Tensor self) -> Tensor", "'import'"),
    bad_schema(
        "argument_shadows_generated_name",
        "exp(Tensor self, int set_history=0) -> Tensor",
        "'set_history' shadows",
    ),
    bad_schema(
        "argument_shadows_converter",
        "exp(Tensor self, int tensor_arg=0) -> Tensor",
        "'tensor_arg' shadows",
    ),
    bad_schema(
        "non_tensor_return",
        "exp(Tensor self) -> (Tensor a, int b)",
        "got '(Tensor a, int b)'",
    ),
    # Entries.
    BadInput("duplicate_op", entry() * 2, 6, EXP, ("'exp' (first defined at line 1)",)),
    BadInput(
        "duplicate_overload", MUL_BOTH * 2, 7, MUL, ("'mul.Tensor' (first defined at",)
    ),
    BadInput(
        "formula_for_missing_input",
        entry(extra="  other: grad\n"),
        6,
        EXP,
        ("formula for 'other', which is not an argument",),
    ),
    BadInput(
        "formula_for_non_tensor",
        entry(**SCALAR_MUL_ENTRY, extra="  other: grad\n"),
        6,
        SCALAR_MUL,
        ("formula for 'other', which is not a Tensor",),
    ),
    BadInput(
        "no_tensor_input_has_a_formula",
        f"- name: {MUL}\n  forward: xp.multiply(self, other)\n",
        1,
        MUL,
        ("no tensor input has a formula",),
    ),
    BadInput(
        "output_differentiability_of_a_single_return",
        entry(extra="  output_differentiability: [true]\n"),
        6,
        EXP,
        ("'output_differentiability' must be a list",),
    ),
    BadInput("missing_samples", NO_SAMPLES, 1, EXP, ("'samples' must be",)),
    BadInput(
        "unknown_sample_argument",
        entry(samples="{self: [3], alpha: 2}"),
        5,
        EXP,
        ("sample gives 'alpha', which is not an argument",),
    ),
    # YAML itself.
    BadInput("yaml_syntax", entry() + UNCLOSED, 7, "(yaml)", ("'forward: [xp.log",)),
    BadInput("yaml_indentation", BAD_INDENT, 3, "(yaml)", ("'self: g'",)),
    BadInput("yaml_python_tag", entry() + f"- {SHELL}\n", 6, "(yaml)", (SHELL,)),
    BadInput("yaml_python_tag_in_value", entry(SHELL), 3, "(yaml)", (SHELL,)),
    BadInput("yaml_alias", ALIASED, 9, "(yaml)", ("aliases", "'samples: *s'")),
    BadInput(
        "yaml_duplicate_key",
        entry(extra="  self: grad\n"),
        6,
        "(yaml)",
        ("duplicate key 'self'",),
    ),
    BadInput("yaml_not_a_list", "name: exp\n", 1, "(yaml)", ("must be a YAML list",)),
)


def assert_one_error_line(message: str, case: BadInput) -> None:
    prefix = f"derivatives.yaml:{case.line}: {case.op}: "
    assert message.startswith(prefix), f"{message!r} does not start with {prefix!r}"
    assert "\n" not in message
    for quoted in case.quoted:
        assert quoted in message[len(prefix) :], f"{quoted} not in {message!r}"


def no_gpu_reason() -> str | None:
    """Why CuPy tests cannot run here, or None when CuPy and a GPU are present."""
    try:
        import cupy
    except ImportError:
        return "CuPy is not installed"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "no CUDA GPU"
    except Exception as e:  # no driver, no device
        return f"no usable CUDA GPU: {e}"
    return None


def gpu_cupy() -> ModuleType:
    """CuPy with a usable CUDA device, or the calling test is skipped saying why."""
    reason = no_gpu_reason()
    if reason is not None:
        pytest.skip(reason)
    import cupy

    return cupy


def compute_counter() -> Any:
    """A Dask callback, used as a context manager, whose `count` is the number
    of graphs the local scheduler ran inside it."""
    import dask.callbacks

    class Computes(dask.callbacks.Callback):
        def __init__(self) -> None:
            super().__init__()
            self.count = 0

        def _start(self, dsk: object) -> None:
            self.count += 1

    return Computes()
