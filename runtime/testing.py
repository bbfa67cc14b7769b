"""Check a YAML file's ops against finite differences, as the project's own tests do.

    >>> report = yamlgrad.testing.check_yaml("my_ops.yaml", my_ops,
    ...                                      helpers="my_helpers.py")
    >>> report.checked          # ['my_op: backward', 'my_op: double backward', ...]

For every entry with a backward node and for each of its `samples`: inputs are drawn
in float64 inside the entry's `domain`, the op runs through the generated wrapper,
`backward` with a random cotangent per output (not `.sum()`, which would hide a
transposed or wrongly broadcast gradient) is compared with central differences, and
so is the gradient of `<direction, first-order gradient>` computed with
`create_graph=True` (double backward). A mismatch raises `OpCheckError`, naming the
YAML file and line of the sample, the entry and the input.

A random op (one that takes a Generator: bernoulli, normal) gets a Generator
seeded alike at every call, so it is a function of its inputs; its sample is a
constant to autograd (PyTorch's definition: the draw is not reparameterised), so
its gradients are compared with those of a constant, zero, after checking that
one seed gives one draw. A reparameterised draw (`_standard_gamma`) is a smooth
function of its inputs at a fixed seed: its gradient is compared with finite
differences, as any op's.

The project's tests (tests/ops/test_gradients.py) run exactly these functions over
derivatives.yaml. Loading a YAML file needs the generator's dependencies (pyyaml);
`import yamlgrad` does not load this module's imports of them.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from yamlgrad.runtime import autograd
from yamlgrad.runtime.factories import tensor
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.generator import Generator, default_generator
from yamlgrad.runtime.testing_close import assert_close

if TYPE_CHECKING:
    from yamlgrad.tools.model import DifferentiabilityInfo, Sample

__all__ = [
    "assert_close",
    "OpCheckError",
    "Report",
    "check_backward",
    "check_double_backward",
    "check_reproducible",
    "check_yaml",
    "load_entries",
    "numerical_vjp",
]

# The seed of the Generator a random op gets at every call of a check.
RANDOM_OP_SEED = 0

# Tolerances of the float64 comparisons: first and second order.
FIRST_ORDER = {"rtol": 1e-5, "atol": 1e-7}
SECOND_ORDER = {"rtol": 1e-4, "atol": 1e-6}


class OpCheckError(AssertionError):
    """A gradient of a YAML entry disagrees with finite differences."""


@dataclasses.dataclass
class Report:
    """What `check_yaml` checked (`entry: sample i` per sample and order) and
    what failed (one message per failure)."""

    checked: list[str] = dataclasses.field(default_factory=list)
    failures: list[str] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def __str__(self) -> str:
        lines = [f"{len(self.checked)} checks, {len(self.failures)} failed"]
        return "\n".join(lines + self.failures)


# -- samples -> call arguments -------------------------------------------------------


def load_entries(
    yaml_path: str | Path, helpers: str | Path | None = None
) -> tuple[DifferentiabilityInfo, ...]:
    """The checked entries of a derivatives.yaml-format file; `helpers` is the op
    pack's own helper module, as given to `yamlgrad-gen --helpers`."""
    from yamlgrad.tools.gen import load_pack_helpers
    from yamlgrad.tools.load import load_derivatives

    names = None if helpers is None else load_pack_helpers(Path(helpers))[0]
    return load_derivatives(Path(yaml_path), None, names)


def wrapper(info: DifferentiabilityInfo, module: Any) -> Callable[..., Any]:
    """The generated function of exactly this overload in `module` (a generated
    VariableType module, or a package that has one)."""
    if hasattr(module, "VariableType") and not hasattr(module, info.wrapper_name):
        module = module.VariableType
    return getattr(module, info.wrapper_name)


def sample_inputs(
    info: DifferentiabilityInfo, sample: Sample, rng: np.random.Generator, dtype: type
) -> tuple[dict[str, object], list[str]]:
    """Keyword arguments for one sample (ndarrays for tensors, lists of them for a
    Tensor[]), and the slots of the differentiable float tensors among them: a
    name, or `name[i]` for the i-th tensor of a list. A composite has no formulas:
    every float tensor of it is differentiable."""
    kwargs = sample.materialize(rng, dtype)
    diff = {n for d in info.derivatives if not d.not_implemented for n in d.var_names}
    slots = []
    for name, value in kwargs.items():
        if info.composite is None and name not in diff:
            continue
        if isinstance(value, np.ndarray) and value.dtype.kind in "fc":
            slots.append(name)
        elif isinstance(value, list):
            slots += [
                f"{name}[{i}]"
                for i, v in enumerate(value)
                if v is not None and v.dtype.kind in "fc"
            ]
    return kwargs, slots


def slot_array(kwargs: dict[str, object], slot: str) -> np.ndarray:
    """The ndarray behind a slot."""
    name, _, index = slot.partition("[")
    value = kwargs[name]
    return value[int(index[:-1])] if index else value  # type: ignore[index,return-value]


def build_args(
    kwargs: dict[str, object],
    leaves: dict[str, Any],
    make: Callable[[np.ndarray], Any],
) -> dict[str, object]:
    """Call arguments: `leaves[slot]` where given, `make(array)` for other arrays."""
    args: dict[str, object] = {}
    for name, value in kwargs.items():
        if isinstance(value, list):
            slots = [f"{name}[{i}]" for i in range(len(value))]
            args[name] = [
                leaves[slot] if slot in leaves else None if v is None else make(v)
                for slot, v in zip(slots, value)
            ]
        elif isinstance(value, np.ndarray):
            args[name] = leaves[name] if name in leaves else make(value)
        else:
            args[name] = value
    return args


def inplace_safe(info: DifferentiabilityInfo, args: dict[str, Any]) -> dict[str, Any]:
    """An in-place op may not write into a leaf that requires grad: give it
    `self * 1` (a non-leaf whose gradient still reaches the leaf), in any library."""
    if info.inplace and getattr(args.get("self"), "requires_grad", False):
        args = {**args, "self": args["self"] * 1}
    return args


def structured(info: DifferentiabilityInfo, args: dict[str, Any]) -> dict[str, Any]:
    """The inputs of a `structure:` entry as its checks pass them, as PyTorch's
    gradcheck wrappers do: a positive definite one as `x + x.mT` (a symmetric
    input, whose perturbations stay symmetric), a triangular one as its triangle
    (whose other half the op does not read), log-probabilities as the
    log_softmax of the drawn values over the last dim (the only inputs on which
    ctc_loss's gradient is the derivative, as PyTorch's). Samples are drawn so that this
    leaves their values as the structure wants them."""
    if not info.structure:
        return args
    from yamlgrad.tools.load import triangle_of

    args = dict(args)
    for name, kind in info.structure:
        x = args.get(name)
        if not isinstance(x, Tensor):
            continue
        if kind == "positive_definite":
            args[name] = x + x.transpose(-2, -1)
        elif kind == "log_probabilities":
            args[name] = x.log_softmax(-1)
        elif triangle_of(info.func, args) == "upper_triangular":
            args[name] = x.triu()
        else:
            args[name] = x.tril()
    return args


def call(
    info: DifferentiabilityInfo,
    kwargs: dict[str, object],
    tensors: dict[str, Tensor],
    module: Any,
) -> Any:
    """The generated function of this overload on the sample's arguments (a
    random op draws from a Generator seeded alike at every call)."""
    args = structured(info, inplace_safe(info, build_args(kwargs, tensors, tensor)))
    if info.random and "generator" not in args:
        args["generator"] = Generator().manual_seed(RANDOM_OP_SEED)
    return wrapper(info, module)(**python_names(args))


def check_reproducible(info: DifferentiabilityInfo, module: Any, seed: int = 0) -> int:
    """A random op: one seed gives one draw, and the default generator is the one
    `manual_seed` reseeds. Returns the number of samples checked."""
    rng = np.random.default_rng(seed)
    for index, sample in enumerate(info.samples):
        where = _where(info, index, sample)
        kwargs, _ = sample_inputs(info, sample, rng, np.float64)
        draws = [call(info, kwargs, {}, module) for _ in range(2)]
        seeded = []
        for _ in range(2):
            default_generator.manual_seed(RANDOM_OP_SEED)
            seeded.append(call(info, {**kwargs, "generator": None}, {}, module))
        for first, second in (draws, seeded):
            if not np.array_equal(first.numpy(), second.numpy(), equal_nan=True):
                raise OpCheckError(f"{where}: one seed gave two different draws")
    return len(info.samples)


def split_arguments(
    info: DifferentiabilityInfo, values: dict[str, Any]
) -> tuple[list[Any], dict[str, Any]]:
    """Positional arguments in schema order, keywords after a gap or a `*`."""
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    gap = False
    for argument in info.func.arguments:
        if argument.name not in values:
            gap = True
            continue
        if argument.kwarg_only or gap:
            kwargs[argument.name] = values[argument.name]
        else:
            args.append(values[argument.name])
    return args, kwargs


def overload_name(info: DifferentiabilityInfo) -> str:
    """The overload's name as `torch.ops.aten.<name>` spells it."""
    return info.func.overload or "default"


def torch_lacks(torch: types.ModuleType, info: DifferentiabilityInfo) -> str | None:
    """Why PyTorch cannot be the reference for this overload, or None when it can:
    an op of yamlgrad's own (or an op pack's) that torch does not have, which its
    finite-difference checks alone cover."""
    name = info.func.name
    if info.python_binding and (hasattr(torch, name) or hasattr(torch.Tensor, name)):
        return None
    try:
        getattr(getattr(torch.ops.aten, name), overload_name(info))
    except AttributeError:
        spelled = f"aten::{name}" + (
            f".{info.func.overload}" if info.func.overload else ""
        )
        return f"torch has no {spelled}; checked by finite differences only"
    return None


def call_torch(
    torch: types.ModuleType,
    info: DifferentiabilityInfo,
    values: dict,
    leaf_safe: bool = True,
) -> Any:
    """The PyTorch call that reaches exactly this overload, as a user writes it.
    `leaf_safe`: an in-place op gets `self * 1` for a leaf that requires grad."""
    values = inplace_safe(info, values) if leaf_safe else dict(values)
    for argument in info.func.arguments:  # a sample's dtype is given by its name
        if argument.type.base == "ScalarType" and isinstance(
            values.get(argument.name), str
        ):
            values[argument.name] = getattr(torch, values[argument.name])
    args, kwargs = split_arguments(info, values)
    name = info.func.name
    if info.python_binding and hasattr(torch, name):
        return getattr(torch, name)(*args, **kwargs)
    if info.python_binding and hasattr(torch.Tensor, name):
        return getattr(args[0], name)(*args[1:], **kwargs)
    return getattr(getattr(torch.ops.aten, name), overload_name(info))(*args, **kwargs)


def python_names(args: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments by schema name, renamed as a generated function takes
    them: the schema's `self` is `input` in Python, as in PyTorch."""
    return {("input" if name == "self" else name): v for name, v in args.items()}


def float_outputs(result: Any, info: DifferentiabilityInfo | None = None) -> list[Any]:
    """The floating and complex outputs of an op (a tuple's `indices` are left
    out), and of those only the differentiable ones of `info`
    (native_layer_norm's output, not its mean and rstd)."""
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    if info is not None and info.output_differentiability is not None:
        outputs = [o for o, d in zip(outputs, info.output_differentiability) if d]
    return [o for o in outputs if o.dtype.is_floating_point or o.dtype.is_complex]


def random_like(rng: np.random.Generator, like: Any) -> np.ndarray:
    """Standard normal values of `like`'s shape (an array or tensor of any
    library); complex ones (both parts standard normal) when its dtype is
    complex: a cotangent or a tangent of a complex tensor."""
    shape = tuple(like.shape)
    values = rng.standard_normal(shape)
    flag = getattr(like.dtype, "is_complex", None)
    if flag if isinstance(flag, bool) else np.dtype(like.dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values


def real_inner(u: Any, v: Any) -> float:
    """Re<u, v> = Re(sum(conj(u) * v)): the inner product of real and complex
    arrays as a real vector space, in which a complex gradient is the real
    loss's derivative along the real part plus i times along the imaginary
    part (PyTorch's convention)."""
    return float(np.vdot(u, v).real)


def real_inner_of(g: Any, d: Any) -> Any:
    """Re<d, g> of a recorded g and a constant d, as a recorded 0-d tensor of
    g's library (the real loss whose gradient a double backward takes)."""
    product = g * d.conj()
    return (product.real if product.is_complex() else product).sum()


def numerical_vjp(
    f: Callable[..., np.ndarray],
    arrays: list[np.ndarray],
    cotangent: np.ndarray,
    eps: float = 1e-6,
) -> list[np.ndarray]:
    """d Re<cotangent, f(*arrays)>/d(arrays) by central differences, per element:
    a complex element is moved along its real and its imaginary part, and its
    gradient is d/d(real) + i d/d(imag), as PyTorch's gradcheck perturbs."""
    grads = []
    for x in arrays:
        g = np.zeros_like(x)
        steps = (1.0, 1j) if x.dtype.kind == "c" else (1.0,)
        for i in np.ndindex(x.shape):
            saved = x[i]
            for step in steps:
                x[i] = saved + eps * step
                up = real_inner(cotangent, f(*arrays))
                x[i] = saved - eps * step
                down = real_inner(cotangent, f(*arrays))
                x[i] = saved
                g[i] += step * (up - down) / (2 * eps)
        grads.append(g)
    return grads


# -- the checks ------------------------------------------------------------------------


def _flat(outputs: list[Tensor]) -> np.ndarray:
    return np.concatenate([o.detach().numpy().reshape(-1) for o in outputs])


def _compare(
    got: np.ndarray, want: np.ndarray, where: str, what: str, tolerance: dict
) -> None:
    if got.shape != want.shape:
        raise OpCheckError(
            f"{where}: {what}: gradient has shape {got.shape}, expected {want.shape}"
        )
    if not np.allclose(got, want, **tolerance):
        diff = np.abs(got - want)
        index = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.size else ()
        raise OpCheckError(
            f"{where}: {what} does not match finite differences: max abs difference "
            f"{diff.max():.3g} at index {tuple(int(i) for i in index)} "
            f"(got {got[index].item()!r}, expected {want[index].item()!r}; "
            f"rtol={tolerance['rtol']}, atol={tolerance['atol']})"
        )


def _where(info: DifferentiabilityInfo, index: int, sample: Sample) -> str:
    return f"{sample.loc}: {info.func}: sample {index}"


def check_backward(info: DifferentiabilityInfo, module: Any, seed: int = 0) -> int:
    """First order: each sample's `backward` against central differences.

    `module` holds the generated wrappers (a VariableType module or its package).
    Returns the number of samples checked; raises OpCheckError on a mismatch.
    """
    rng = np.random.default_rng(seed)
    for index, sample in enumerate(info.samples):
        where = _where(info, index, sample)
        kwargs, slots = sample_inputs(info, sample, rng, np.float64)
        if not slots:
            raise OpCheckError(f"{where}: a sample needs a differentiable float input")
        leaves = {s: tensor(slot_array(kwargs, s), requires_grad=True) for s in slots}
        outputs = float_outputs(call(info, kwargs, leaves, module), info)
        node = outputs[0].grad_fn
        if node is None or node.name() != info.op:
            raise OpCheckError(f"{where}: records {node!r}, expected a {info.op}")
        cotangents = [random_like(rng, o) for o in outputs]
        autograd.backward(outputs, [tensor(c) for c in cotangents])

        def f(*xs: np.ndarray) -> np.ndarray:
            tensors = {s: tensor(x) for s, x in zip(slots, xs)}
            return _flat(float_outputs(call(info, kwargs, tensors, module), info))

        arrays = [slot_array(kwargs, s).copy() for s in slots]
        if info.draw_is_constant:  # the draw is a constant to autograd
            expected = [np.zeros_like(a) for a in arrays]
        else:
            expected = numerical_vjp(f, arrays, _flat([tensor(c) for c in cotangents]))
        for slot, want in zip(slots, expected):
            got = leaves[slot].grad
            if got is None:
                raise OpCheckError(f"{where}: no gradient for {slot}")
            if got.dtype != leaves[slot].dtype:
                raise OpCheckError(
                    f"{where}: the gradient of {slot} is {got.dtype}, "
                    f"expected {leaves[slot].dtype}"
                )
            _compare(got.numpy(), want, where, f"gradient of {slot}", FIRST_ORDER)
    return len(info.samples)


def differentiable_once(info: DifferentiabilityInfo) -> bool:
    """`result: not_implemented`: the entry's backward records an op that PyTorch
    gives no derivative, so a second backward raises (and forward AD is refused)."""
    return any(f.kind == "not_implemented" for f in info.forward_derivatives)


def _check_second_order_refused(
    total: Tensor, leaves: list[Tensor], where: str
) -> None:
    try:
        autograd.grad(total, leaves, allow_unused=True)
    except NotImplementedError as error:
        if "the derivative for" in str(error):
            return
        raise
    raise OpCheckError(f"{where}: a second backward should raise NotImplementedError")


def check_double_backward(
    info: DifferentiabilityInfo, module: Any, seed: int = 1
) -> int:
    """Second order: the first-order gradient, computed with create_graph=True,
    differentiated again (along a random direction) against central differences
    of the first-order gradient. Returns the number of samples checked."""
    rng = np.random.default_rng(seed)
    for index, sample in enumerate(info.samples):
        where = _where(info, index, sample)
        kwargs, slots = sample_inputs(info, sample, rng, np.float64)
        outputs = float_outputs(call(info, kwargs, {}, module), info)
        cotangents = [tensor(random_like(rng, o)) for o in outputs]
        # A second random direction for the vjp of the gradient itself.
        directions = [random_like(rng, slot_array(kwargs, s)) for s in slots]

        def first_order(tensors: dict[str, Tensor]) -> tuple:
            outputs = float_outputs(call(info, kwargs, tensors, module), info)
            return autograd.grad(
                outputs,
                [tensors[s] for s in slots],
                cotangents,
                create_graph=True,
                allow_unused=True,
            )

        leaves = {s: tensor(slot_array(kwargs, s), requires_grad=True) for s in slots}
        grads = first_order(leaves)
        # Re<directions, grads> as a scalar, then its gradient.
        total = None
        for g, d in zip(grads, directions):
            if g is None or not g.requires_grad:
                continue
            term = real_inner_of(g, tensor(d))
            total = term if total is None else total + term
        if total is None:
            continue  # the gradient does not depend on the inputs (a linear op)
        if differentiable_once(info):
            _check_second_order_refused(total, list(leaves.values()), where)
            continue
        second = autograd.grad(total, list(leaves.values()), allow_unused=True)

        def f(*xs: np.ndarray) -> np.ndarray:
            tensors = {s: tensor(x, requires_grad=True) for s, x in zip(slots, xs)}
            value = 0.0
            for g, d in zip(first_order(tensors), directions):
                if g is not None:
                    value += real_inner(d, g.detach().numpy())
            return np.asarray(value)

        arrays = [slot_array(kwargs, s).copy() for s in slots]
        expected = numerical_vjp(f, arrays, np.asarray(1.0))
        for slot, got, want in zip(slots, second, expected):
            got_array = np.zeros_like(want) if got is None else got.numpy()
            what = f"double backward (gradient of the gradient) of {slot}"
            _compare(got_array, want, where, what, SECOND_ORDER)
    return len(info.samples)


def check_yaml(
    yaml_path: str | Path,
    module: types.ModuleType | Any,
    *,
    helpers: str | Path | None = None,
    double_backward: bool = True,
    forward: bool = True,
    raise_on_failure: bool = True,
    entries: Iterable[str] | None = None,
) -> Report:
    """Run the first-order (and double-backward) checks over every entry of
    `yaml_path` that has a backward node, calling the wrappers of `module` (the
    package `yamlgrad-gen --out` wrote, or its VariableType module).

    `helpers` is the pack's helper module, if it was generated with one
    (`yamlgrad-gen --helpers`). `entries` limits the check to those op names (`my_op`, or `my_op.overload`).
    With `forward`, each entry's forward-mode JVP is checked too, against finite
    differences and against its backward formulas (yamlgrad/runtime/testing_forward.py).
    Every failure is collected in the Report; with `raise_on_failure` (the
    default) an OpCheckError listing all of them is raised at the end.
    """
    report = Report()
    wanted = None if entries is None else set(entries)
    for info in load_entries(yaml_path, helpers):
        if info.op is None:
            continue
        name = info.func.name
        full = f"{name}.{info.func.overload}" if info.func.overload else name
        if wanted is not None and name not in wanted and full not in wanted:
            continue
        checks = [("backward", check_backward)]
        if info.random:
            checks.append(("reproducible", check_reproducible))
        if double_backward:
            checks.append(("double backward", check_double_backward))
        if forward:
            from yamlgrad.runtime.testing_forward import check_adjoint, check_forward

            checks.append(("forward", check_forward))
            checks.append(("adjoint", check_adjoint))
        for order, check in checks:
            try:
                check(info, module)
            except OpCheckError as e:
                report.failures.append(f"{order}: {e}")
            report.checked.append(f"{full}: {order}")
    if report.failures and raise_on_failure:
        raise OpCheckError(str(report))
    return report
