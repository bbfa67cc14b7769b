"""Every derivatives.yaml entry against PyTorch: values, node names and gradients.

Driven by the YAML's own `samples` (float64), so a new entry is compared with torch
with no test code. Both libraries are called the way a user calls them: the public
function (`torch.rsub(x, 2.0)`, `torch.pow(2.5, x)`, `torch.where(c, x, y)`), else
the Tensor method (`x.view(...)`), else `torch.ops.aten.<name>.<overload>` for an
overload without a Python binding (`mul.Scalar`) or a private op (`_to_copy`).
Which overload a call reaches is part of what is compared: the node class name.

torch is imported inside each test (`pytest.importorskip`), so without torch these
tests are skipped and the rest of the suite still runs.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from support import (
    random_like,
    DIFFERENTIABLE,
    INFOS,
    REFUSING,
    align_gauge,
    as_outputs,
    build_args,
    call_torch,
    call_yamlgrad,
    dtype_name,
    float_outputs,
    op_id,
    sample_inputs,
    second_order,
    slot_array,
    yamlgrad_routes,
)
from yamlgrad.runtime.testing import differentiable_once
from yamlgrad.tools.model import DifferentiabilityInfo, Sample

RTOL = 1e-10
ATOL = 1e-12

# Entries with no backward node of their own: comparisons (two tensors, bool
# results) and index/truth reductions (argmax, all, ...: one tensor).
NON_DIFFERENTIABLE = tuple(i for i in INFOS if i.op is None and i.composite is None)
# floor_divide: PyTorch records a NotImplemented node; yamlgrad records none (below).
FLOOR_DIVIDE = tuple(i for i in NON_DIFFERENTIABLE if i.func.name == "floor_divide")
# bernoulli.p: random, and PyTorch records a NotImplemented node; here none.
RANDOM_NO_NODE = tuple(i for i in NON_DIFFERENTIABLE if i.random)
# Float functions PyTorch does not differentiate (torch.special's Bessel functions
# and polynomials): float results, compared as values rather than bit for bit.
FLOAT_NO_GRADIENT = tuple(
    i for i in NON_DIFFERENTIABLE if i.type_promotion == "int_to_float"
)
# The implicit derivatives of Gamma and Beta draws: PyTorch's values are fitted
# approximations (relative error up to about 1e-3), yamlgrad's summed series, and
# PyTorch records a NotImplemented node for them; here none.
IMPLICIT_DERIVATIVES = tuple(
    i
    for i in NON_DIFFERENTIABLE
    if i.func.name in ("_standard_gamma_grad", "_dirichlet_grad")
)
IMPLICIT_DERIVATIVE_RTOL = 2e-3
NON_DIFFERENTIABLE = tuple(
    i
    for i in NON_DIFFERENTIABLE
    if i not in FLOOR_DIVIDE
    and i not in RANDOM_NO_NODE
    and i not in FLOAT_NO_GRADIENT
    and i not in IMPLICIT_DERIVATIVES
)
COMPARISON_ENTRIES = tuple(
    i for i in NON_DIFFERENTIABLE if len(i.func.tensor_arguments) == 2
)
# The unique ops: three outputs, and PyTorch records a NotImplemented-style node.
UNIQUE_ENTRIES = tuple(i for i in NON_DIFFERENTIABLE if i.output_kind == "tuple")
INDEX_REDUCTIONS = tuple(
    i
    for i in NON_DIFFERENTIABLE
    if i not in COMPARISON_ENTRIES and i not in UNIQUE_ENTRIES
)
# Every entry whose output has a grad_fn: the differentiable ones and the composites.
# (Not the nodes whose every formula is not_implemented: tests/ops/test_gradients.py
# pins their refusal.)
RECORDED = tuple(
    i
    for i in INFOS
    if (i.op is not None or i.composite is not None) and i not in REFUSING
)

# Node names that differ from PyTorch's because the generator cannot express the
# op PyTorch routes through (a tuple return): op -> (yamlgrad's, PyTorch's). Pinned
# on both sides, so that either one changing is noticed.
KNOWN_NAME_DIFFERENCES: dict[str, tuple[str, str]] = {}

# Ops whose backward PyTorch cannot differentiate ("derivative for
# aten::hardsigmoid_backward is not implemented"): their double backward is checked
# against finite differences (tests/ops/test_gradients.py) and PyTorch's refusal pinned.
NO_DOUBLE_BACKWARD_IN_TORCH = (
    "_scaled_dot_product_flash_attention_for_cpu",
    "hardsigmoid",
    "hardsigmoid_",
    "multi_margin_loss",
    "multilabel_margin_loss_forward",
    "_masked_softmax",
)
# Ops whose backward PyTorch 2.13 cannot run: its composite changes in place a
# value its own backward saved ("modified by an inplace operation"): cond's
# masked_fill_ of the inverse (ords other than +-2 and 'nuc'), vander's cumprod
# into its input. yamlgrad's records the same nodes out of place; their
# gradients are checked against finite differences (tests/ops/test_gradients.py),
# and PyTorch's failure is pinned here.
TORCH_BACKWARD_FAILS = ("linalg_cond", "vander")

# Gradients PyTorch gets wrong, by op and input: they fail PyTorch's own gradcheck
# (its OpInfo skips test_fn_grad) and are checked against finite differences in
# tests/ops/test_gradients.py instead. as_strided_scatter's `self` gradient keeps
# the positions src overwrites and zeroes the others.
TORCH_GRADIENT_WRONG = {"as_strided_scatter": ("self",)}

TWICE_DIFFERENTIABLE = tuple(
    i
    for i in DIFFERENTIABLE
    if i.func.name not in NO_DOUBLE_BACKWARD_IN_TORCH
    and i.func.name not in TORCH_GRADIENT_WRONG
    and not differentiable_once(i)  # a second backward raises in both
    # A reparameterised draw (_standard_gamma) is not torch's draw: its gradient
    # is compared with torch's formula at yamlgrad's draw (tests/distributions/).
    and (not i.random or i.draw_is_constant)
)

# A random op whose gradient depends on its draw (rrelu_with_noise's slopes): torch
# draws other numbers, so its gradients are checked against finite differences at
# one draw (tests/ops/test_gradients.py) and against torch where nothing is drawn
# (tests/nn/test_nn_ops_opinfo.py), not here.
DRAW_DEPENDENT = "its gradient depends on a draw torch makes differently"


def skip_if_draw_dependent(info: DifferentiabilityInfo) -> None:
    if info.random and not info.draw_is_constant:
        pytest.skip(DRAW_DEPENDENT)


def _name_param(info: DifferentiabilityInfo) -> Any:
    """The entry as a test parameter, named after its overload."""
    return pytest.param(info, id=op_id(info))


class Case:
    """One sample, as leaves of both libraries (float arrays shared bit for bit)."""

    def __init__(
        self,
        torch: ModuleType,
        info: DifferentiabilityInfo,
        sample: Sample,
        rng: np.random.Generator,
    ) -> None:
        kwargs, names = sample_inputs(info, sample, rng, np.float64)
        self.names = names
        self.our_leaves = {
            n: yg.tensor(slot_array(kwargs, n), requires_grad=True) for n in names
        }
        self.their_leaves = {
            n: torch.tensor(slot_array(kwargs, n), requires_grad=True) for n in names
        }
        self.ours = build_args(kwargs, self.our_leaves, yg.tensor)
        self.theirs = build_args(kwargs, self.their_leaves, torch.tensor)

    def leaves(self) -> tuple[list[yg.Tensor], list[Any]]:
        return (
            [self.our_leaves[n] for n in self.names],
            [self.their_leaves[n] for n in self.names],
        )


def _samples(info: DifferentiabilityInfo, seed: int) -> Any:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    for sample in info.samples:
        yield torch, sample, rng, Case(torch, info, sample, rng)


# PyTorch's trigamma and polygamma series are accurate to about 1e-9 relative,
# scipy's (yamlgrad's kernel) to about 1e-15: values or gradients that go through
# polygamma are compared at this tolerance.
POLYGAMMA_RTOL = 1e-8
THROUGH_POLYGAMMA = ("polygamma", "special_polygamma", "digamma", "special_digamma")
THROUGH_POLYGAMMA += ("special_psi", "igamma", "special_gammainc")


def rtol_of(info: DifferentiabilityInfo) -> float:
    return POLYGAMMA_RTOL if info.func.name in THROUGH_POLYGAMMA else RTOL


def assert_same_values(
    ours: yg.Tensor, theirs: Any, where: str, rtol: float = RTOL
) -> None:
    got = ours.detach().numpy()
    want = theirs.detach().numpy(force=True)  # force: torch's conj view resolved
    assert got.shape == want.shape, f"{where}: shape {got.shape} != {want.shape}"
    assert dtype_name(ours.dtype) == dtype_name(theirs.dtype), where
    np.testing.assert_allclose(got, want, rtol=rtol, atol=ATOL, err_msg=where)


def assert_same_outputs(
    info: DifferentiabilityInfo, ours: yg.Tensor, theirs: Any, where: str
) -> None:
    """Values as torch's; a random op's only in shape and dtype (its draws are
    not torch's: one seed giving one draw is tests/ops/test_gradients.py's)."""
    if not info.random:
        assert_same_values(ours, theirs, where, rtol_of(info))
        return
    assert ours.shape == tuple(theirs.shape), where
    assert dtype_name(ours.dtype) == dtype_name(theirs.dtype), where


def _grad_array(grad: Any, like: np.ndarray) -> np.ndarray:
    """A gradient as an ndarray; None (unused input) as zeros."""
    if grad is None:
        return np.zeros_like(like)
    if isinstance(grad, yg.Tensor):
        return grad.detach().numpy()
    return grad.detach().numpy(force=True)  # torch: a ZeroTensor needs force


# -- every entry ----------------------------------------------------------------------


@pytest.mark.parametrize("info", RECORDED, ids=op_id)
def test_forward_and_gradients_match_torch(info: DifferentiabilityInfo) -> None:
    skip_if_draw_dependent(info)
    for torch, sample, rng, case in _samples(info, seed=0):
        where = str(sample.loc)
        out = call_yamlgrad(info, case.ours)
        ref = align_gauge(info, out, call_torch(torch, info, case.theirs))
        assert len(as_outputs(out)) == len(as_outputs(ref)), where
        for o, r in zip(as_outputs(out), as_outputs(ref)):
            assert_same_outputs(info, o, r, where)
            assert o.requires_grad == r.requires_grad, where
        outs, refs = float_outputs(out, info), float_outputs(ref, info)
        cotangents = [random_like(rng, r) for r in refs]
        yg.autograd.backward(outs, [yg.tensor(c) for c in cotangents])
        if info.func.name in TORCH_BACKWARD_FAILS:
            try:
                torch.autograd.backward(refs, [torch.tensor(c) for c in cotangents])
            except RuntimeError as error:
                assert "modified by an inplace operation" in str(error), where
                assert all(x.grad is not None for x in case.leaves()[0]), where
                continue
        else:
            torch.autograd.backward(refs, [torch.tensor(c) for c in cotangents])
        for name, x, t in zip(case.names, *case.leaves()):
            assert x.grad is not None and t.grad is not None, f"{where}: {name}"
            assert x.grad.shape == x.shape, f"{where}: {name}"
            if (
                info.random and not info.draw_is_constant
            ) or name in TORCH_GRADIENT_WRONG.get(info.func.name, ()):
                continue
            assert_same_values(
                x.grad, t.grad, f"{where}: grad of {name}", rtol_of(info)
            )


@pytest.mark.parametrize("info", [_name_param(i) for i in RECORDED])
def test_grad_fn_name_matches_torch(info: DifferentiabilityInfo) -> None:
    for torch, sample, _, case in _samples(info, seed=0):
        out = float_outputs(call_yamlgrad(info, case.ours), info)[0]
        ref = float_outputs(call_torch(torch, info, case.theirs), info)[0]
        ours, theirs = type(out.grad_fn).__name__, type(ref.grad_fn).__name__
        if ref.grad_fn is None:  # `contiguous` of a leaf: the leaf itself
            assert out.grad_fn is None and out is case.ours["self"], sample.loc
            continue
        assert out.grad_fn.name() == ours, sample.loc
        if info.func.name in KNOWN_NAME_DIFFERENCES:
            assert (ours, theirs) == KNOWN_NAME_DIFFERENCES[info.func.name], sample.loc
        else:
            assert ours == theirs, sample.loc


@pytest.mark.parametrize("info", RECORDED, ids=op_id)
def test_every_public_route_reaches_the_same_overload(
    info: DifferentiabilityInfo,
) -> None:
    """yg.<name>, Tensor.<name> and yg.ops.<name>.<overload> all record one node."""
    for torch, sample, _, case in _samples(info, seed=0):
        theirs = call_torch(torch, info, case.theirs)
        want = type(float_outputs(theirs, info)[0].grad_fn).__name__
        for route in yamlgrad_routes(info):
            ours = call_yamlgrad(info, case.ours, route)
            out = float_outputs(ours, info)[0]
            ref = float_outputs(align_gauge(info, ours, theirs), info)[0]
            assert_same_outputs(info, out, ref, f"{sample.loc}: {route}")
            if info.op is not None:
                assert out.grad_fn.name() == info.op, f"{sample.loc}: {route}"
            elif ref.grad_fn is None:
                assert out.grad_fn is None, f"{sample.loc}: {route}"
            elif info.func.name != "matmul":
                assert out.grad_fn.name() == want, f"{sample.loc}: {route}"


@pytest.mark.parametrize("info", TWICE_DIFFERENTIABLE, ids=op_id)
def test_double_backward_matches_torch(info: DifferentiabilityInfo) -> None:
    """d<v, grad(out, x, u, create_graph=True)>/dx in both libraries."""
    skip_if_draw_dependent(info)
    for torch, sample, rng, case in _samples(info, seed=1):
        where = str(sample.loc)
        ours = call_yamlgrad(info, case.ours)
        outs = float_outputs(ours, info)
        refs = float_outputs(
            align_gauge(info, ours, call_torch(torch, info, case.theirs)), info
        )
        cotangents = [random_like(rng, r) for r in refs]
        xs, ts = case.leaves()
        directions = [random_like(rng, t) for t in ts]
        first = yg.autograd.grad(
            outs,
            xs,
            [yg.tensor(c) for c in cotangents],
            create_graph=True,
            allow_unused=True,
        )
        first_ref = torch.autograd.grad(
            refs,
            ts,
            [torch.tensor(c) for c in cotangents],
            create_graph=True,
            allow_unused=True,
        )
        for name, x, g, r in zip(case.names, xs, first, first_ref):
            want = _grad_array(r, x.detach().numpy())
            np.testing.assert_allclose(
                _grad_array(g, want), want, rtol=rtol_of(info), atol=ATOL, err_msg=where
            )
        second = second_order(yg, first, xs, directions)
        second_ref = second_order(torch, first_ref, ts, directions)
        for name, x, g, r in zip(case.names, xs, second, second_ref):
            want = _grad_array(r, x.detach().numpy())
            got = _grad_array(g, want)
            assert got.shape == tuple(x.shape), f"{where}: {name}"
            np.testing.assert_allclose(
                got, want, rtol=1e-9, atol=1e-11, err_msg=f"{where}: {name}"
            )


@pytest.mark.parametrize(
    "info",
    [i for i in DIFFERENTIABLE if i.func.name in NO_DOUBLE_BACKWARD_IN_TORCH],
    ids=op_id,
)
def test_torch_has_no_double_backward_for(info: DifferentiabilityInfo) -> None:
    """The exclusions above are real: PyTorch still refuses a second derivative."""
    for torch, _, rng, case in _samples(info, seed=1):
        ref = float_outputs(call_torch(torch, info, case.theirs), info)[0]
        _, ts = case.leaves()
        first = torch.autograd.grad(ref.sum(), ts, create_graph=True)
        with pytest.raises(RuntimeError, match="not implemented"):
            sum(g.sum() for g in first).backward()


@pytest.mark.parametrize("info", COMPARISON_ENTRIES, ids=op_id)
def test_comparison_values_and_dtypes_match_torch(info: DifferentiabilityInfo) -> None:
    """Bool results (integer ones for bitwise ops and floor_divide), no history
    even from float inputs that require grad."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    for sample in info.samples:
        where = str(sample.loc)
        kwargs, _ = sample_inputs(info, sample, rng, np.float64)
        first, second = (kwargs[a.name] for a in info.func.tensor_arguments)
        # Some ties, so that == and <= are not decided by random floats alone.
        np.copyto(first, second, where=rng.random(first.shape) < 0.5)
        ours, theirs = {}, {}
        for n, v in kwargs.items():
            if not isinstance(v, np.ndarray):  # a number given for a Tensor
                ours[n] = theirs[n] = v
                continue
            ours[n] = yg.tensor(v, requires_grad=v.dtype.kind == "f")
            theirs[n] = torch.tensor(v, requires_grad=v.dtype.kind == "f")
        out = call_yamlgrad(info, ours)
        ref = call_torch(torch, info, theirs)
        assert dtype_name(out.dtype) == dtype_name(ref.dtype), where
        if info.func.name in ("eq", "ne", "lt", "le", "gt", "ge"):
            assert dtype_name(out.dtype) == "bool", where
        np.testing.assert_array_equal(out.numpy(), ref.numpy(), err_msg=where)
        assert out.grad_fn is None and ref.grad_fn is None, where
        assert not out.requires_grad and not ref.requires_grad, where
        assert out.is_leaf and ref.is_leaf, where


@pytest.mark.parametrize("info", INDEX_REDUCTIONS, ids=op_id)
def test_index_and_truth_reductions_match_torch(info: DifferentiabilityInfo) -> None:
    """argmax/argmin (int64) and all/any (bool): values, dtypes, and no history,
    even for an input that requires grad."""
    for torch, sample, _, case in _samples(info, seed=2):
        where = str(sample.loc)
        for name, value in case.ours.items():
            if isinstance(value, yg.Tensor) and value.dtype == yg.float64:
                value.requires_grad_(True)
                case.theirs[name].requires_grad_(True)
        out = call_yamlgrad(info, case.ours)
        ref = call_torch(torch, info, case.theirs)
        assert dtype_name(out.dtype) == dtype_name(ref.dtype), where
        assert out.shape == tuple(ref.shape), where
        np.testing.assert_array_equal(out.numpy(), ref.numpy(), err_msg=where)
        assert out.grad_fn is None and ref.grad_fn is None, where
        assert not out.requires_grad and not ref.requires_grad, where


@pytest.mark.parametrize("info", FLOAT_NO_GRADIENT, ids=op_id)
def test_functions_without_gradient_match_torch(info: DifferentiabilityInfo) -> None:
    """Values and dtypes as torch's; no history, even for float inputs that
    require grad (PyTorch's `non_differentiable`)."""
    for torch, sample, _, case in _samples(info, seed=2):
        where = str(sample.loc)
        for name, value in case.ours.items():
            if isinstance(value, yg.Tensor) and value.dtype.is_floating_point:
                value.requires_grad_(True)
                case.theirs[name].requires_grad_(True)
        out = call_yamlgrad(info, case.ours)
        ref = call_torch(torch, info, case.theirs)
        assert_same_values(out, ref, where)
        assert out.grad_fn is None and ref.grad_fn is None, where
        assert not out.requires_grad and not ref.requires_grad, where


@pytest.mark.parametrize("info", IMPLICIT_DERIVATIVES, ids=op_id)
def test_implicit_derivatives_match_torch(info: DifferentiabilityInfo) -> None:
    """Values as torch's within its approximation; no history here, a
    NotImplemented node in PyTorch."""
    for torch, sample, _, case in _samples(info, seed=2):
        where = str(sample.loc)
        out = call_yamlgrad(info, case.ours)
        ref = call_torch(torch, info, case.theirs)
        assert_same_values(out, ref, where, IMPLICIT_DERIVATIVE_RTOL)
        assert out.grad_fn is None, where


@pytest.mark.parametrize("info", RANDOM_NO_NODE, ids=op_id)
def test_random_op_without_derivative_records_no_node(
    info: DifferentiabilityInfo,
) -> None:
    """bernoulli.p: PyTorch records a NotImplemented node (its backward raises);
    multinomial's int64 draw has none in PyTorch either; here a draw has no
    history. Shapes and dtypes as torch's."""
    for torch, sample, _, case in _samples(info, seed=2):
        where = str(sample.loc)
        for name, value in case.ours.items():
            if isinstance(value, yg.Tensor) and value.dtype == yg.float64:
                value.requires_grad_(True)
                case.theirs[name].requires_grad_(True)
        out = call_yamlgrad(info, case.ours)
        ref = call_torch(torch, info, case.theirs)
        assert_same_outputs(info, out, ref, where)
        if ref.dtype.is_floating_point:
            assert type(ref.grad_fn).__name__ == "NotImplemented", where
        else:
            assert ref.grad_fn is None, where
        assert out.grad_fn is None and not out.requires_grad, where


@pytest.mark.parametrize("info", FLOOR_DIVIDE, ids=op_id)
def test_floor_divide_matches_torch_but_records_no_node(
    info: DifferentiabilityInfo,
) -> None:
    """Values and dtypes as torch's. PyTorch's result requires grad through a
    `NotImplemented` node whose backward raises; yamlgrad's has no history (its
    formulas cannot raise), so the difference is pinned on both sides."""
    for torch, sample, _, case in _samples(info, seed=2):
        where = str(sample.loc)
        for name, value in case.ours.items():
            if isinstance(value, yg.Tensor) and value.dtype == yg.float64:
                value.requires_grad_(True)
                case.theirs[name].requires_grad_(True)
        out = call_yamlgrad(info, case.ours)
        ref = call_torch(torch, info, case.theirs)
        assert dtype_name(out.dtype) == dtype_name(ref.dtype), where
        np.testing.assert_array_equal(
            out.detach().numpy(), ref.detach().numpy(), err_msg=where
        )
        assert out.grad_fn is None and not out.requires_grad, where
        if ref.dtype.is_floating_point:
            assert type(ref.grad_fn).__name__ == "NotImplemented", where
            with pytest.raises(RuntimeError, match="not implemented"):
                ref.sum().backward()


@pytest.mark.parametrize("info", UNIQUE_ENTRIES, ids=op_id)
def test_unique_ops_match_torch_but_record_no_node(
    info: DifferentiabilityInfo,
) -> None:
    """Every output's values and dtype as torch's (the ones not asked for empty).
    PyTorch's float output requires grad through a node whose backward raises
    ("the derivative for '_unique2' is not implemented"); yamlgrad's has none."""
    for torch, sample, _, case in _samples(info, seed=2):
        where = str(sample.loc)
        outs = call_yamlgrad(info, case.ours)
        refs = call_torch(torch, info, case.theirs)
        assert len(outs) == len(refs) == 3, where
        for out, ref in zip(outs, refs):
            assert dtype_name(out.dtype) == dtype_name(ref.dtype), where
            assert out.shape == tuple(ref.shape), where
            np.testing.assert_array_equal(out.numpy(), ref.numpy(), err_msg=where)
            assert out.grad_fn is None and not out.requires_grad, where


# -- Python operators ---------------------------------------------------------------

# (id, expression over x and y, yamlgrad's node name). x is drawn in [0.5, 2] so that
# 2 / x, log-based pow gradients and x ** y are all smooth.
OPERATORS: list[tuple[str, Callable[[Any, Any], Any], str]] = [
    ("x + 2", lambda x, y: x + 2, "AddBackward0"),
    ("2 + x", lambda x, y: 2 + x, "AddBackward0"),
    ("x + y", lambda x, y: x + y, "AddBackward0"),
    ("x - 2", lambda x, y: x - 2, "SubBackward0"),
    ("2 - x", lambda x, y: 2 - x, "RsubBackward1"),
    ("x - y", lambda x, y: x - y, "SubBackward0"),
    ("x * 2", lambda x, y: x * 2, "MulBackward0"),
    ("2 * x", lambda x, y: 2 * x, "MulBackward0"),
    ("x * 2.5", lambda x, y: x * 2.5, "MulBackward0"),
    ("x * y", lambda x, y: x * y, "MulBackward0"),
    ("x / 2", lambda x, y: x / 2, "DivBackward0"),
    ("2 / x", lambda x, y: 2 / x, "MulBackward0"),
    ("x / y", lambda x, y: x / y, "DivBackward0"),
    ("x ** 2", lambda x, y: x**2, "PowBackward0"),
    ("x ** 2.5", lambda x, y: x**2.5, "PowBackward0"),
    ("2 ** x", lambda x, y: 2**x, "PowBackward2"),
    ("x ** y", lambda x, y: x**y, "PowBackward1"),
    ("-x", lambda x, y: -x, "NegBackward0"),
    ("abs(x)", lambda x, y: abs(x), "AbsBackward0"),
    ("x.T", lambda x, y: x.T, "PermuteBackward0"),
    ("x.reshape(6)", lambda x, y: x.reshape(6), "ViewBackward0"),
]


def _operand_pair(lib: ModuleType, seed: int) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 2.0, (2, 3))
    y = rng.uniform(0.5, 2.0, (2, 3))
    return (
        lib.tensor(x, requires_grad=True),
        lib.tensor(y, requires_grad=True),
    )


@pytest.mark.parametrize(
    "expression, name", [pytest.param(e, n, id=i) for i, e, n in OPERATORS]
)
def test_python_operator_matches_torch(
    expression: Callable[[Any, Any], Any], name: str
) -> None:
    torch = pytest.importorskip("torch")
    x, y = _operand_pair(yg, 3)
    tx, ty = _operand_pair(torch, 3)
    out, ref = expression(x, y), expression(tx, ty)
    assert_same_values(out, ref, "forward")
    assert type(out.grad_fn).__name__ == name
    assert type(ref.grad_fn).__name__ == name
    cotangent = np.random.default_rng(4).standard_normal(tuple(ref.shape))
    out.backward(yg.tensor(cotangent))
    ref.backward(torch.tensor(cotangent))
    for ours, theirs in ((x, tx), (y, ty)):
        assert (ours.grad is None) == (theirs.grad is None)
        if theirs.grad is not None:
            assert_same_values(ours.grad, theirs.grad, "grad")


def test_reflected_division_is_reciprocal_times_number() -> None:
    """`2 / x` is `reciprocal(x) * 2`: MulBackward0 over ReciprocalBackward0."""
    torch = pytest.importorskip("torch")
    for lib in (yg, torch):
        x, _ = _operand_pair(lib, 5)
        out = 2 / x
        names = [
            None if fn is None else type(fn).__name__
            for fn, _ in out.grad_fn.next_functions
        ]
        assert names == ["ReciprocalBackward0", None], lib.__name__
        assert out.grad_fn.next_functions[1] == (None, 0)


def test_batched_matmul_folds_into_mm_and_views_back() -> None:
    x = yg.ones(2, 2, 3, requires_grad=True)
    y = yg.ones(3, 4, requires_grad=True)
    out = x @ y
    assert type(out.grad_fn).__name__ == "UnsafeViewBackward0"
    assert type(out.grad_fn.next_functions[0][0]).__name__ == "MmBackward0"


def test_matmul_operator_node_name_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    x, y = _operand_pair(yg, 6)
    tx, ty = _operand_pair(torch, 6)
    assert type((x @ y.T).grad_fn).__name__ == type((tx @ ty.T).grad_fn).__name__


def test_matmul_operator_values_and_gradients_match_torch() -> None:
    torch = pytest.importorskip("torch")
    x, y = _operand_pair(yg, 7)
    tx, ty = _operand_pair(torch, 7)
    w = yg.tensor(np.linspace(-1.0, 1.0, 12).reshape(3, 4), requires_grad=True)
    tw = torch.tensor(np.linspace(-1.0, 1.0, 12).reshape(3, 4), requires_grad=True)
    out, ref = x @ w, tx @ tw
    assert_same_values(out, ref, "forward")
    cotangent = np.random.default_rng(8).standard_normal((2, 4))
    out.backward(yg.tensor(cotangent))
    ref.backward(torch.tensor(cotangent))
    assert_same_values(x.grad, tx.grad, "grad of x")
    assert_same_values(w.grad, tw.grad, "grad of w")


# (shapes, PyTorch's node) for yg.matmul / Tensor.matmul / `@`. Shapes whose node
# yamlgrad does not name as PyTorch yet: strict xfails.
MATMUL_SHAPE_REASONS: dict[str, str] = {}  # none left; a new one gets a reason here
MATMUL_SHAPES: list[tuple[str, tuple[int, ...], tuple[int, ...], str | None]] = [
    ("1D@1D", (4,), (4,), None),
    ("2D@1D", (3, 4), (4,), None),
    ("2D@2D", (3, 4), (4, 5), None),
    ("1D@2D", (4,), (4, 5), None),
    ("3D@2D", (2, 3, 4), (4, 5), None),
    ("3D@1D", (2, 3, 4), (4,), None),
    ("1D@3D", (4,), (2, 4, 3), None),
    ("3D@3D", (2, 3, 4), (2, 4, 5), None),
    ("4D@3D broadcast", (2, 1, 3, 4), (3, 4, 2), None),
    ("2D@3D", (3, 4), (2, 4, 5), None),
]
MATMUL_CALLS: list[tuple[str, Callable[[Any, Any, Any], Any]]] = [
    ("function", lambda lib, a, b: lib.matmul(a, b)),
    ("method", lambda lib, a, b: a.matmul(b)),
    ("operator", lambda lib, a, b: a @ b),
]


def _matmul_leaves(lib: ModuleType, shapes: tuple[tuple[int, ...], ...]) -> list:
    rng = np.random.default_rng(11)
    return [lib.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]


@pytest.mark.parametrize("call", [pytest.param(c, id=i) for i, c in MATMUL_CALLS])
@pytest.mark.parametrize(
    "a_shape, b_shape", [pytest.param(a, b, id=i) for i, a, b, _ in MATMUL_SHAPES]
)
def test_matmul_values_gradients_and_double_backward_match_torch(
    a_shape: tuple[int, ...],
    b_shape: tuple[int, ...],
    call: Callable[[Any, Any, Any], Any],
) -> None:
    torch = pytest.importorskip("torch")
    xs, ts = _matmul_leaves(yg, (a_shape, b_shape)), _matmul_leaves(
        torch, (a_shape, b_shape)
    )
    out, ref = call(yg, *xs), call(torch, *ts)
    assert_same_values(out, ref, "forward")
    rng = np.random.default_rng(12)
    cotangent = rng.standard_normal(tuple(ref.shape))
    first = yg.autograd.grad(out, xs, yg.tensor(cotangent), create_graph=True)
    first_ref = torch.autograd.grad(ref, ts, torch.tensor(cotangent), create_graph=True)
    for g, r in zip(first, first_ref):
        assert_same_values(g, r, "grad")
    directions = [random_like(rng, t) for t in ts]
    second = second_order(yg, first, xs, directions)
    second_ref = second_order(torch, first_ref, ts, directions)
    for x, g, r in zip(xs, second, second_ref):
        want = _grad_array(r, x.detach().numpy())
        np.testing.assert_allclose(_grad_array(g, want), want, rtol=RTOL, atol=ATOL)


def _matmul_name_param(
    name: str, a: tuple[int, ...], b: tuple[int, ...], reason: str | None
) -> Any:
    if reason is None:
        return pytest.param(a, b, id=name)
    marks = pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=MATMUL_SHAPE_REASONS[reason]
    )
    return pytest.param(a, b, id=name, marks=marks)


@pytest.mark.parametrize("call", [pytest.param(c, id=i) for i, c in MATMUL_CALLS])
@pytest.mark.parametrize(
    "a_shape, b_shape", [_matmul_name_param(*row) for row in MATMUL_SHAPES]
)
def test_matmul_node_name_matches_torch(
    a_shape: tuple[int, ...],
    b_shape: tuple[int, ...],
    call: Callable[[Any, Any, Any], Any],
) -> None:
    torch = pytest.importorskip("torch")
    xs, ts = _matmul_leaves(yg, (a_shape, b_shape)), _matmul_leaves(
        torch, (a_shape, b_shape)
    )
    ours = type(call(yg, *xs).grad_fn).__name__
    theirs = type(call(torch, *ts).grad_fn).__name__
    assert ours == theirs


COMPARISONS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("x == y", lambda x, y: x == y),
    ("x != y", lambda x, y: x != y),
    ("x < y", lambda x, y: x < y),
    ("x <= y", lambda x, y: x <= y),
    ("x > y", lambda x, y: x > y),
    ("x >= y", lambda x, y: x >= y),
    ("x == 1", lambda x, y: x == 1),
    ("x < 1", lambda x, y: x < 1),
    ("x >= 1.0", lambda x, y: x >= 1.0),
    ("1 < x", lambda x, y: 1 < x),
    ("1.5 >= x", lambda x, y: 1.5 >= x),
]


@pytest.mark.parametrize("expression", [pytest.param(e, id=i) for i, e in COMPARISONS])
def test_comparison_operator_matches_torch(
    expression: Callable[[Any, Any], Any],
) -> None:
    torch = pytest.importorskip("torch")
    values = np.array([[0.5, 1.0, 1.5], [2.0, 1.0, 0.25]])
    others = np.array([[0.5, 2.0, 1.0], [2.0, 0.5, 0.25]])
    x = yg.tensor(values, requires_grad=True)
    y = yg.tensor(others)
    tx = torch.tensor(values, requires_grad=True)
    ty = torch.tensor(others)
    out, ref = expression(x, y), expression(tx, ty)
    assert dtype_name(out.dtype) == dtype_name(ref.dtype) == "bool"
    np.testing.assert_array_equal(out.numpy(), ref.numpy())
    assert out.grad_fn is None and not out.requires_grad


# -- dtype rules ------------------------------------------------------------------------


def test_python_floats_make_float32_tensors() -> None:
    torch = pytest.importorskip("torch")
    for data in (1.5, [1.0, 2.0], [[1.0], [2.5]]):
        assert yg.tensor(data).dtype == yg.float32
        assert dtype_name(yg.tensor(data).dtype) == dtype_name(torch.tensor(data).dtype)
    assert yg.ones(2).dtype == yg.float32 and yg.zeros(2, 3).dtype == yg.float32
    assert yg.tensor([1, 2]).dtype == yg.int64
    assert dtype_name(torch.tensor([1, 2]).dtype) == "int64"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "expression",
    [
        pytest.param(lambda x: x * 2.5, id="x * 2.5"),
        pytest.param(lambda x: 2.5 * x, id="2.5 * x"),
        pytest.param(lambda x: x + 2, id="x + 2"),
        pytest.param(lambda x: 2 - x, id="2 - x"),
        pytest.param(lambda x: x / 3, id="x / 3"),
        pytest.param(lambda x: 2 / x, id="2 / x"),
        pytest.param(lambda x: x**2, id="x ** 2"),
        pytest.param(lambda x: 2.5**x, id="2.5 ** x"),
        pytest.param(lambda x: (x * 1.5).sum(), id="sum"),
        pytest.param(lambda x: x.mean(), id="mean"),
    ],
)
def test_python_numbers_keep_the_tensor_dtype(
    expression: Callable[[Any], Any], dtype: str
) -> None:
    """A wrapped number never up-casts: float32 stays float32, float64 float64."""
    torch = pytest.importorskip("torch")
    values = np.array([0.5, 1.25, 2.0], dtype=dtype)
    x = yg.tensor(values, requires_grad=True)
    tx = torch.tensor(values, requires_grad=True)
    out, ref = expression(x), expression(tx)
    assert dtype_name(out.dtype) == dtype_name(ref.dtype) == dtype
    out.sum().backward()
    ref.sum().backward()
    assert dtype_name(x.grad.dtype) == dtype_name(tx.grad.dtype) == dtype
    rtol = 1e-6 if dtype == "float32" else RTOL
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=rtol)


def test_gradient_has_the_input_dtype_across_promotion() -> None:
    """float32 * float64 is float64, but each leaf's grad keeps the leaf's dtype."""
    torch = pytest.importorskip("torch")
    a = np.array([1.0, 2.0], dtype=np.float32)
    b = np.array([3.0, 4.0], dtype=np.float64)
    x, y = yg.tensor(a, requires_grad=True), yg.tensor(b, requires_grad=True)
    tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    out, ref = x * y, tx * ty
    assert dtype_name(out.dtype) == dtype_name(ref.dtype) == "float64"
    out.sum().backward()
    ref.sum().backward()
    assert dtype_name(x.grad.dtype) == dtype_name(tx.grad.dtype) == "float32"
    assert dtype_name(y.grad.dtype) == dtype_name(ty.grad.dtype) == "float64"
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_array_equal(y.grad.numpy(), ty.grad.numpy())


@pytest.mark.parametrize(
    "expression",
    [
        pytest.param(lambda lib: lib.tensor([1, 2]) * 2.5, id="int64 * 2.5"),
        pytest.param(lambda lib: lib.tensor([1, 2]) / lib.tensor([2, 4]), id="int/int"),
        pytest.param(
            lambda lib: lib.ones(2) * lib.tensor(2.0, dtype=lib.float64),
            id="float32 * 0-d float64",
        ),
        pytest.param(lambda lib: lib.ones(2) * lib.tensor(2), id="float32 * 0-d int64"),
        pytest.param(
            lambda lib: lib.tensor([1, 2], dtype=lib.int32)
            * lib.tensor(2.0, dtype=lib.float64),
            id="int32 * 0-d float64",
        ),
        pytest.param(lambda lib: lib.tensor([True, False]) + 2, id="bool + 2"),
        pytest.param(lambda lib: lib.tensor([1, 2]).exp(), id="exp(int64)"),
        pytest.param(lambda lib: lib.tensor([1, 2]) ** 0.5, id="int64 ** 0.5"),
        pytest.param(lambda lib: lib.tensor([1, 2]) > 1.5, id="int64 > 1.5"),
        pytest.param(
            lambda lib: lib.ones(2, dtype=lib.float16) + lib.tensor([1, 2]),
            id="float16 + int64",
        ),
        pytest.param(
            lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1, 2]), 2.5),
            id="where(int64, 2.5)",
        ),
    ],
)
def test_type_promotion_matches_torch(expression: Callable[[Any], Any]) -> None:
    torch = pytest.importorskip("torch")
    assert dtype_name(expression(yg).dtype) == dtype_name(expression(torch).dtype)


# -- edge values ---------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's 0 ** -1 and inf * 0
@pytest.mark.parametrize("base", [0.0, 0, -2.0, 1.0, 2])
def test_number_to_the_power_of_a_tensor_at_edge_bases(base: float) -> None:
    """pow.Scalar where log(base) is -inf or nan: PyTorch's values, no exception."""
    torch = pytest.importorskip("torch")
    exponents = np.array([0.0, 2.0, -1.0, 0.5, 3.0])
    x = yg.tensor(exponents, requires_grad=True)
    t = torch.tensor(exponents, requires_grad=True)
    out, ref = base**x, base**t
    assert type(out.grad_fn).__name__ == type(ref.grad_fn).__name__ == "PowBackward2"
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    cotangent = np.random.default_rng(9).uniform(0.5, 2.0, exponents.shape)
    out.backward(yg.tensor(cotangent))
    ref.backward(torch.tensor(cotangent))
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=RTOL)


# -- inputs PyTorch gives no key: refused when they require grad ---------------------

NO_KEY = tuple(i for i in INFOS if i.no_requires_grad)


@pytest.mark.parametrize("info", NO_KEY, ids=op_id)
def test_an_input_without_a_key_is_refused_as_torch_refuses_it(
    info: DifferentiabilityInfo,
) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    checked = []
    for sample in info.samples:
        kwargs, _ = sample_inputs(info, sample, rng, np.float64)
        for name in info.no_requires_grad:
            if not isinstance(kwargs.get(name), np.ndarray):
                continue
            ours = build_args(kwargs, {}, yg.tensor)
            theirs = build_args(kwargs, {}, torch.tensor)
            ours[name] = yg.tensor(kwargs[name], requires_grad=True)
            theirs[name] = torch.tensor(kwargs[name], requires_grad=True)
            with pytest.raises(RuntimeError) as want:
                call_torch(torch, info, theirs)
            with pytest.raises(RuntimeError) as got:
                call_yamlgrad(info, ours)
            assert str(got.value) == str(want.value)
            with yg.no_grad(), torch.no_grad():  # only in grad mode, as in torch
                call_yamlgrad(info, ours)
                call_torch(torch, info, theirs)
            checked.append(name)
    assert set(checked) == set(info.no_requires_grad), info.loc
