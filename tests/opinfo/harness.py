"""PyTorch's OpInfo database (`op_db`) run against yamlgrad.

`op_db` lists PyTorch's public ops with sample inputs. For every OpInfo that
supports autograd this module finds yamlgrad's callable of the same name, runs
each sample through both libraries and compares four things, each an ordinary
function below: forward values, dtypes and shapes (`check_forward`); the
vector-Jacobian product of a fixed random cotangent (`check_backward`); the
Jacobian-vector product of a fixed random tangent under forward AD
(`check_forward_ad`); and the gradient of <first-order gradient, random v>
computed with create_graph=True (`check_gradgrad`), in float64, float32 and, for
the OpInfos whose gradients PyTorch tests in complex numbers, complex128. The test suite
(tests/opinfo/test_opinfo.py) runs a few samples per OpInfo; benchmarks/opinfo.py
runs them all and writes benchmarks/opinfo.md.

Decisions a reader would otherwise reverse-engineer:

* Names, not a table. An OpInfo's callable is looked up by the name PyTorch
  gives it (`linalg.svd` is `yamlgrad.linalg.svd`, `nn.functional.relu` is
  `yamlgrad.nn.functional.relu`), then its declared aliases, then its Tensor
  method (`method_variant`, or the name itself for properties such as `mT`).
  `__rsub__`-style operators are Tensor methods; `torch.ops.aten.X.overload`
  is `yamlgrad.ops.X.overload`. A new yamlgrad op is picked up the moment it
  exists under PyTorch's name.
* PyTorch's own glue code runs as written. Where an OpInfo's `op` is a lambda
  (`lambda x: x.mH`, `lambda tensors, equation: torch.einsum(equation,
  tensors)`), and for its `gradcheck_wrapper` and each sample's
  `output_process_fn_grad`, yamlgrad runs the very same Python function with
  its global name `torch` bound to the yamlgrad package (`port`). So argument
  reordering, Hermitian wrapping, svd's phase normalisation (`U.abs()`) and
  output selection are done by PyTorch's code, on yamlgrad tensors.
* Random ops (those PyTorch calls through `wrapper_set_seed`) draw from
  yamlgrad's own generator, whose stream is not torch's, so for them only
  shapes and dtypes are compared, of outputs and of derivatives.
* Complex numbers follow PyTorch's convention: cotangents, tangents and
  directions are complex where the value they pair with is, and the scalar
  gradgrad differentiates is the real inner product Re<g, v> = Re(sum(conj(v) g)),
  which autograd forms itself as the vector-Jacobian product of the first-order
  gradients with `v` (for real dtypes, the plain sum of g * v).
* One source of truth for what differs: known_differences.yaml beside this file
  (OpInfo, check, dtype, reason), read by the tests and by the table.
"""

from __future__ import annotations

import dis
import functools
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from torch.autograd import forward_ad as torch_fwad
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.opinfo.core import OpInfo, SampleInput

import yamlgrad as yg
from yamlgrad.autograd import forward_ad as yg_fwad

KNOWN_DIFFERENCES_PATH = Path(__file__).with_name("known_differences.yaml")

# torch, the reference, runs on one thread so that its values are reproducible:
# a CPU kernel that writes one position from several inputs (max_unpool2d's
# channels-last kernel with the repeated indices of overlapping pooling windows)
# otherwise lands whichever write a thread makes last, a different tangent from
# run to run. On one thread the last input in order wins, as in yamlgrad.
torch.set_num_threads(1)

DTYPES = {
    "float64": torch.float64,
    "float32": torch.float32,
    "complex128": torch.complex128,
}

#: assert_close's defaults for the dtype; one set for every check.
TOLERANCES = {
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}


class Mismatch(AssertionError):
    """A check found yamlgrad's result different from torch's."""


# -- which OpInfos, and yamlgrad's callable for each ---------------------------------


def autograd_opinfos() -> list[OpInfo]:
    """Every OpInfo of op_db that supports autograd, in op_db's order."""
    return [op for op in op_db if op.supports_autograd]


def family(op: OpInfo) -> str:
    """`linalg`, `nn.functional`, `special`, ... or `torch` for torch.<name>."""
    if op.name.startswith("torch.ops."):
        return "torch.ops.aten"
    return op.name.rsplit(".", 1)[0] if "." in op.name else "torch"


def _is_lambda(fn: Any) -> bool:
    return getattr(fn, "__name__", None) == "<lambda>"


def _is_tensor_method(fn: Any) -> bool:
    return getattr(fn, "__qualname__", "").split(".")[0] in ("Tensor", "TensorBase")


def _is_test_glue(fn: Any) -> bool:
    """A Python function of PyTorch's test code (a lambda, max_pool2d_backward)."""
    return isinstance(fn, types.FunctionType) and fn.__module__.startswith(
        "torch.testing"
    )


def candidate_names(op: OpInfo) -> list[str]:
    """The yamlgrad names that would hold `op`'s callable, most specific first."""
    fn = op.op
    if isinstance(fn, torch._ops.OpOverload):
        name = fn._schema.name.split("::")[1]
        return [f"ops.{name}.{fn._overloadname or 'default'}"]
    if isinstance(fn, torch._ops.OpOverloadPacket):
        return [f"ops.{fn._qualified_op_name.split('::')[1]}.default"]
    if _is_tensor_method(fn):
        return [f"Tensor.{fn.__name__}"]
    names = [op.name, *(alias.name for alias in op.aliases)]
    method = op.method_variant
    if method is not None and not _is_lambda(method):
        names.append(f"Tensor.{method.__name__}")
    names.append(f"Tensor.{op.name}")  # properties: T, mH, ...
    if _is_test_glue(fn):  # glue around an op PyTorch has under torch.ops only
        names.append(f"ops.{op.name}.default")
    return names


def lookup(name: str) -> Any:
    """`yamlgrad.<name>` through dots (a Tensor attribute as the class's), or None."""
    found: Any = yg
    for part in name.split("."):
        found = getattr(found, part, None)
        if found is None:
            return None
    return found


def resolve(op: OpInfo) -> str | None:
    """The yamlgrad name of `op`'s callable (`linalg.svd`, `Tensor.mH`), or None."""
    for name in candidate_names(op):
        found = lookup(name)
        # A dtype (`yg.chalf`) shares its name with a method but is no callable.
        if callable(found) or isinstance(found, property):
            return name
    return None


def yamlgrad_callable(op: OpInfo, name: str) -> Callable[..., Any]:
    """What yamlgrad calls for `op`: PyTorch's glue code ported, else the op."""
    if _is_test_glue(op.op):
        return port(op.op)
    return lookup(name)


@functools.cache
def _ported_globals(module_name: str) -> dict[str, Any]:
    import sys

    namespace = dict(vars(sys.modules[module_name]))
    namespace["torch"] = yg
    return namespace


def port(fn: Callable[..., Any]) -> Callable[..., Any]:
    """PyTorch's Python function `fn`, with its global `torch` bound to yamlgrad.

    Closures are ported too, so a sample's `fn_U` still finds a ported
    `uniformize`; functions `fn` reaches through its globals (wrapper_set_seed)
    stay PyTorch's. Anything that is not test glue is returned as it is.
    """
    if not _is_test_glue(fn):
        return fn
    cells = tuple(
        types.CellType(port(cell.cell_contents)) if _cell_full(cell) else cell
        for cell in fn.__closure__ or ()
    )
    ported = types.FunctionType(
        fn.__code__, _ported_globals(fn.__module__), fn.__name__, fn.__defaults__, cells
    )
    ported.__kwdefaults__ = fn.__kwdefaults__
    return ported


def _cell_full(cell: types.CellType) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _calls_wrapper_set_seed(code: types.CodeType) -> bool:
    for instruction in dis.get_instructions(code):
        if instruction.argval == "wrapper_set_seed":
            return True
    return any(
        _calls_wrapper_set_seed(const)
        for const in code.co_consts
        if isinstance(const, types.CodeType)
    )


def is_random(op: OpInfo) -> bool:
    """PyTorch calls the op through wrapper_set_seed: its values are a draw."""
    return any(
        getattr(fn, "__name__", None) == "wrapper_set_seed"
        or (_is_test_glue(fn) and _calls_wrapper_set_seed(fn.__code__))
        for fn in (op.op, op.gradcheck_wrapper)
    )


def backward_dtypes(op: OpInfo) -> list[str]:
    """The names of DTYPES that PyTorch tests `op`'s gradients in."""
    supported = op.supported_backward_dtypes("cpu")
    return [name for name, dtype in DTYPES.items() if dtype in supported]


def applicable_checks(op: OpInfo) -> list[str]:
    flags = {
        "forward": True,
        "backward": True,
        "forward_ad": op.supports_forward_ad,
        "gradgrad": op.supports_gradgrad,
    }
    return [check for check in CHECKS if flags[check]]


# -- known differences ----------------------------------------------------------------


@dataclass(frozen=True)
class KnownDifference:
    """One line of known_differences.yaml: `check` of `opinfo` differs, why."""

    opinfo: str
    check: str
    reason: str
    dtype: str | None = None  # None: every dtype

    def covers(self, opinfo: str, check: str, dtype: str) -> bool:
        return (
            self.opinfo == opinfo
            and self.check in (check, "all")
            and self.dtype in (None, dtype)
        )


def load_known_differences(
    path: Path = KNOWN_DIFFERENCES_PATH,
) -> list[KnownDifference]:
    return [
        KnownDifference(**entry) for entry in yaml.safe_load(path.read_text()) or []
    ]


UNMAPPED_PATH = Path(__file__).with_name("unmapped.yaml")
#: unmapped.yaml's kinds, in the order the table lists them.
UNMAPPED_KINDS = {
    "no_real_dtype": "no meaning in yamlgrad's real CPU dtypes",
    "complex": "complex-number ops not built yet",
    "not_yet": "real-dtype ops not built yet",
}


@dataclass(frozen=True)
class Unmapped:
    """One line of unmapped.yaml: why `opinfo` has no yamlgrad callable."""

    opinfo: str
    kind: str
    reason: str


def load_unmapped(path: Path = UNMAPPED_PATH) -> dict[str, Unmapped]:
    entries = (Unmapped(**entry) for entry in yaml.safe_load(path.read_text()) or [])
    return {entry.opinfo: entry for entry in entries}


def known_difference(
    known: list[KnownDifference], opinfo: str, check: str, dtype: str
) -> KnownDifference | None:
    return next((k for k in known if k.covers(opinfo, check, dtype)), None)


# -- torch values as yamlgrad values ----------------------------------------------------


class NoEquivalent(Exception):
    """A torch value in a sample that yamlgrad has no counterpart for."""


def tree_map(fn: Callable[[Any], Any], value: Any) -> Any:
    """`fn` applied to every leaf of nested lists, tuples and dicts."""
    if isinstance(value, dict):
        return {key: tree_map(fn, item) for key, item in value.items()}
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        items = [tree_map(fn, item) for item in value]
        if hasattr(value, "_fields"):  # a namedtuple (torch.return_types)
            return tuple(items)
        return type(value)(items)
    return fn(value)


def leaves(value: Any) -> list[Any]:
    found: list[Any] = []
    tree_map(found.append, value)
    return found


def _yamlgrad_attribute(torch_value: Any, name: str) -> Any:
    found = getattr(yg, name, None)
    if found is None:
        raise NoEquivalent(f"yamlgrad has no {name} (torch.{name} in a sample)")
    return found


def to_yamlgrad_leaf(value: Any) -> Any:
    """One torch leaf of a sample as its yamlgrad counterpart."""
    if isinstance(value, torch.Tensor):
        array = value.detach().resolve_conj().resolve_neg().numpy()
        return yg.tensor(array, requires_grad=value.requires_grad)
    if isinstance(value, torch.dtype):
        return _yamlgrad_attribute(value, str(value).removeprefix("torch."))
    if isinstance(value, torch.Size):
        return yg.Size(value)
    if isinstance(value, torch.Generator):
        return yg.Generator().manual_seed(value.initial_seed())
    if isinstance(value, torch.device):
        return yg.device(str(value))
    if isinstance(value, (torch.memory_format, torch.layout)):
        return _yamlgrad_attribute(value, str(value).removeprefix("torch."))
    if isinstance(value, types.BuiltinFunctionType) and value.__module__ == "torch":
        return _yamlgrad_attribute(value, value.__name__)  # distance_function=...
    if isinstance(value, torch.nn.Module) and not list(value.parameters()):
        return _module_like(value)  # distance_function=nn.PairwiseDistance()
    return value


def _module_like(module: torch.nn.Module) -> Any:
    """yamlgrad's module of the same class, with the same public settings."""
    cls = getattr(yg.nn, type(module).__name__, None)
    if cls is None:
        raise NoEquivalent(f"yamlgrad has no nn.{type(module).__name__}")
    ours = cls()
    for key, value in vars(module).items():
        if not key.startswith("_") and key != "training":
            setattr(ours, key, value)
    return ours.train(module.training)


def as_float64(value: Any) -> Any:
    """A float32 torch leaf of a sample in float64 (the reference's input)."""
    if isinstance(value, torch.Tensor) and value.dtype == torch.float32:
        return value.detach().double().requires_grad_(value.requires_grad)
    return value


# -- one sample on one side: torch, torch in float64, or yamlgrad ---------------------


@dataclass
class Side:
    """A sample ready to run in one library.

    `library` is `torch` or `yamlgrad`: both spell tensor, autograd.grad and
    autograd.forward_ad alike, so every check is one function run on each side.
    """

    library: types.ModuleType
    run: Callable[[Any], Any]  # (input, args, kwargs) -> the op's outputs
    args: tuple[Any, Any, Any]
    inputs: list[Any]  # the tensors that require grad, in the sample's order

    def outputs(self, args: tuple[Any, Any, Any] | None = None) -> list[Any]:
        return leaves(self.run(self.args if args is None else args))


@dataclass
class Case:
    """One OpInfo, one sample, one dtype."""

    op: OpInfo
    name: str  # yamlgrad's name for the op's callable
    sample: SampleInput
    dtype: str
    random: bool = False

    def _side(self, library: Any, run: Callable[..., Any], leaf: Callable) -> Side:
        seen: dict[int, Any] = {}
        inputs: list[Any] = []

        def convert(value: Any) -> Any:
            # one converted tensor per sample tensor: shared stays shared
            if id(value) not in seen:
                seen[id(value)] = leaf(value)
                if isinstance(value, torch.Tensor) and value.requires_grad:
                    inputs.append(seen[id(value)])
            return seen[id(value)]

        sample = self.sample
        args = tree_map(convert, (sample.input, sample.args, sample.kwargs))
        return Side(library, run, args, inputs)

    def torch_side(self, leaf: Callable[[Any], Any] = lambda value: value) -> Side:
        op, process = self.op, self.sample.output_process_fn_grad

        def run(args: tuple[Any, Any, Any]) -> Any:
            input, positional, keywords = args
            out = op.gradcheck_wrapper(op.op, input, *positional, **keywords)
            return process(out)

        return self._side(torch, run, leaf)

    def yamlgrad_side(self) -> Side:
        fn = yamlgrad_callable(self.op, self.name)
        wrapper = port(self.op.gradcheck_wrapper)
        process = port(self.sample.output_process_fn_grad)

        def run(args: tuple[Any, Any, Any]) -> Any:
            input, positional, keywords = args
            yg.manual_seed(0)  # a random op draws alike at every call
            return process(wrapper(fn, input, *positional, **keywords))

        return self._side(yg, run, to_yamlgrad_leaf)


def cases(op: OpInfo, dtype: str, limit: int | None = None) -> Iterator[Case]:
    """The first `limit` samples of `op` in `dtype` (all of them for None)."""
    name = resolve(op)
    assert name is not None, f"{op.full_name} has no yamlgrad callable"
    samples = op.sample_inputs("cpu", DTYPES[dtype], requires_grad=True)
    for index, sample in enumerate(samples):
        if limit is not None and index >= limit:
            return
        yield Case(op, name, sample, dtype, random=is_random(op))


# -- the four checks: each returns labelled values, computed alike on every side --------

Values = list[tuple[str, Any]]


def _draw(seed: int, like: list[Any]) -> list[np.ndarray]:
    """Standard normal arrays shaped and typed as `like`, the same on every side
    (float32 sides get the float64 draws rounded; a complex value's real and
    imaginary parts are independent draws)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for value in like:
        dtype = _array(value).dtype
        array = rng.standard_normal(tuple(value.shape))
        if dtype.kind == "c":
            array = array + 1j * rng.standard_normal(tuple(value.shape))
        arrays.append(array.astype(dtype))
    return arrays


def _differentiable(outputs: list[Any]) -> list[int]:
    return [i for i, value in enumerate(outputs) if getattr(value, "requires_grad", 0)]


def forward(side: Side) -> Values:
    """The op's outputs."""
    return [(f"output {i}", value) for i, value in enumerate(side.outputs())]


def backward(side: Side) -> Values:
    """autograd.grad of the differentiable outputs, one random cotangent each."""
    outputs = side.outputs()
    positions = _differentiable(outputs)
    values: Values = [("differentiable outputs", positions)]
    if not positions or not side.inputs:
        return values
    differentiable = [outputs[i] for i in positions]
    cotangents = [side.library.tensor(c) for c in _draw(0, differentiable)]
    grads = side.library.autograd.grad(
        differentiable, side.inputs, cotangents, allow_unused=True
    )
    return values + [(f"gradient of input {i}", g) for i, g in enumerate(grads)]


def forward_ad(side: Side) -> Values:
    """The outputs' tangents, one random tangent per input that requires grad."""
    fwad = side.library.autograd.forward_ad
    tangents = [side.library.tensor(t) for t in _draw(1, side.inputs)]
    with fwad.dual_level():
        duals = {
            id(x): fwad.make_dual(x.detach(), t) for x, t in zip(side.inputs, tangents)
        }
        outputs = side.outputs(tree_map(lambda v: duals.get(id(v), v), side.args))
        return [
            (f"tangent of output {i}", fwad.unpack_dual(value).tangent)
            for i, value in enumerate(outputs)
            if isinstance(value, side.library.Tensor)
        ]


def gradgrad(side: Side) -> Values:
    """dRe<first-order gradient, v>/d(inputs), the first order with create_graph.

    The real inner product is the vector-Jacobian product of the first-order
    gradients with `v`, so no complex scalar is ever differentiated.
    """
    outputs = side.outputs()
    differentiable = [outputs[i] for i in _differentiable(outputs)]
    if not differentiable or not side.inputs:
        return []
    tensor, grad = side.library.tensor, side.library.autograd.grad
    cotangents = [tensor(c) for c in _draw(0, differentiable)]
    directions = [tensor(v) for v in _draw(2, side.inputs)]
    grads = grad(
        differentiable, side.inputs, cotangents, create_graph=True, allow_unused=True
    )
    pairs = [
        (g, v) for g, v in zip(grads, directions) if g is not None and g.requires_grad
    ]
    if not pairs:  # the first-order gradient does not depend on the inputs
        return [(f"second derivative of input {i}", None) for i in range(len(grads))]
    first, weights = zip(*pairs)
    second = grad(list(first), side.inputs, list(weights), allow_unused=True)
    return [(f"second derivative of input {i}", g) for i, g in enumerate(second)]


CHECKS: dict[str, Callable[[Side], Values]] = {
    "forward": forward,
    "backward": backward,
    "forward_ad": forward_ad,
    "gradgrad": gradgrad,
}


# -- comparing yamlgrad's values with torch's ------------------------------------------


def _array(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        if value._is_zerotensor():  # torch's lazily zero gradients
            return torch.zeros(value.shape, dtype=value.dtype).numpy()
        return value.detach().resolve_conj().resolve_neg().numpy()
    return value.detach().numpy()


def _dtype_name(dtype: Any) -> str:
    return str(dtype).split(".")[-1]


def _max_error(got: np.ndarray, want: np.ndarray) -> float:
    with np.errstate(invalid="ignore"):
        return float(np.nanmax(np.abs(got - want), initial=0.0))


def compare(
    ours: Values, theirs: Values, case: Case, reference: Callable[[], Values] | None
) -> None:
    """Raise Mismatch unless yamlgrad's labelled values match torch's.

    Tensors match in shape, dtype and values (an absent gradient, None, matches
    zeros). A float32 value that misses torch's float32 at float32 tolerance still
    passes when its error from `reference()` (torch in float64 on the same
    inputs) is at most twice torch's float32 error: as accurate as torch.
    """
    if [label for label, _ in ours] != [label for label, _ in theirs]:
        raise Mismatch(f"{[l for l, _ in ours]} != torch's {[l for l, _ in theirs]}")
    exact: Values | None = None
    rtol, atol = TOLERANCES[DTYPES[case.dtype]]
    for index, ((label, mine), (_, want)) in enumerate(zip(ours, theirs)):
        if not isinstance(want, torch.Tensor) and not isinstance(mine, yg.Tensor):
            if mine != want and not case.random:
                raise Mismatch(f"{label}: {mine!r} != torch's {want!r}")
            continue
        if mine is None or want is None:
            present = _array(mine if mine is not None else want)
            if present.any():
                side = "yamlgrad's" if mine is None else "torch's"
                raise Mismatch(f"{label}: {side} is None, the other's is not zero")
            continue
        if not isinstance(mine, yg.Tensor) or not isinstance(want, torch.Tensor):
            raise Mismatch(
                f"{label}: {type(mine).__name__} != torch's {type(want).__name__}"
            )
        if tuple(mine.shape) != tuple(want.shape):
            raise Mismatch(
                f"{label}: shape {tuple(mine.shape)} != torch's {tuple(want.shape)}"
            )
        if _dtype_name(mine.dtype) != _dtype_name(want.dtype):
            raise Mismatch(f"{label}: dtype {mine.dtype} != torch's {want.dtype}")
        got, expected = _array(mine), _array(want)
        if case.random or np.allclose(got, expected, rtol, atol, equal_nan=True):
            continue
        error = _max_error(got, expected)
        if reference is not None and expected.dtype == np.float32:
            exact = reference() if exact is None else exact
            truth = _array(exact[index][1])
            ours_error, torch_error = _max_error(got, truth), _max_error(
                expected, truth
            )
            if ours_error <= 2 * torch_error:
                continue
            raise Mismatch(
                f"{label}: values differ by {error:.3g}; from float64, yamlgrad's "
                f"error is {ours_error:.3g}, torch's {torch_error:.3g}"
            )
        raise Mismatch(f"{label}: values differ (max abs error {error:.3g})")


class TorchRaised(Exception):
    """torch itself fails the check on this sample: nothing to compare."""


def run_check(case: Case, check: str) -> str | None:
    """None when `check` passes on `case`, else what went wrong, in one line.

    Raises TorchRaised when torch fails the sample itself (native_layer_norm's
    double backward without a weight): not yamlgrad's failure, and not a pass.
    """
    compute = CHECKS[check]
    try:
        theirs = compute(case.torch_side())
    except Exception as error:  # noqa: BLE001
        raise TorchRaised(_one_line(error)) from error
    try:
        ours = compute(case.yamlgrad_side())
        reference = None
        if case.dtype == "float32":
            reference = lambda: compute(case.torch_side(as_float64))  # noqa: E731
        compare(ours, theirs, case, reference)
    except Exception as error:  # noqa: BLE001 - every failure is reported
        return _one_line(error)
    return None


def _one_line(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0] if lines else ''}"[:240]
