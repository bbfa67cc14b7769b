"""Every element-wise entry of derivatives.yaml on a large input, against PyTorch.

The per-entry tests run the YAML's samples, a dozen elements each; kernels take
other paths on large arrays (bit-pattern selection instead of np.where, passes
written in place), so each entry with one tensor input and no shape-dependent argument
(and no function of whole matrices) also runs with its largest
sample scaled to about 20,000 elements, in float32 and float64, and its value and
gradient (for a random cotangent) are compared with torch's.
"""

from __future__ import annotations

import ast
import dataclasses
import math

import numpy as np
import pytest

from support import INFOS, call_torch, call_yamlgrad, op_id
from yamlgrad.tools.catalog import runtime_catalog
from yamlgrad.tools.model import DifferentiabilityInfo, Sample

import yamlgrad as yg

ELEMENTS = 20_000
TOLERANCES = {
    np.float32: {"rtol": 2e-5, "atol": 1e-6},
    np.float64: {"rtol": 1e-9, "atol": 1e-12},
}


def _tensor_args(sample: Sample) -> list:
    return [a for a in sample.args if a.shape is not None or a.shapes is not None]


def _largest_unary_sample(info: DifferentiabilityInfo) -> Sample | None:
    """The sample with the most elements, if its one tensor input is a float
    `self` with a dimension above 1."""
    candidates = []
    for sample in info.samples:
        tensors = _tensor_args(sample)
        if len(tensors) != 1 or tensors[0].name != "self":
            continue
        arg = tensors[0]
        if arg.shape is None or arg.dtype is not None or arg.values is not None:
            continue
        if math.prod(arg.shape) > 1:
            candidates.append(sample)
    return max(
        candidates, key=lambda s: math.prod(_tensor_args(s)[0].shape), default=None
    )


def _scaled(sample: Sample) -> Sample:
    """Every dimension above 1 multiplied by one factor (equal sizes stay equal)."""
    arg = _tensor_args(sample)[0]
    grow = sum(d > 1 for d in arg.shape)
    factor = (ELEMENTS / math.prod(arg.shape)) ** (1 / grow)
    shape = tuple(round(d * factor) if d > 1 else d for d in arg.shape)
    args = tuple(
        dataclasses.replace(a, shape=shape) if a is arg else a for a in sample.args
    )
    return dataclasses.replace(sample, args=args)


# Element-wise entries: every argument but `self` a number, a flag or a string
# (no dims, sizes or indices, whose meaning depends on the shape).
ELEMENTWISE_TYPES = {"Scalar", "Scalar?", "float", "float?", "bool", "str"}


def _elementwise(info: DifferentiabilityInfo) -> bool:
    others = [a for a in info.func.arguments if a.name != "self"]
    return all(str(a.type) in ELEMENTWISE_TYPES for a in others) and not _matrix(info)


def _matrix(info: DifferentiabilityInfo) -> bool:
    """A function of whole matrices (a kernel of the linalg families, or a
    composite over such an op): a large one is as ill-conditioned as it is large."""
    return bool(ast_names(info.composite or info.forward) & MATRIX_FUNCTIONS)


def ast_names(expression: str) -> set[str]:
    """The names an expression reads, attributes included (a forward kernel is
    called as `family.kernel(...)`)."""
    nodes = list(ast.walk(ast.parse(expression.strip())))
    names = {n.id for n in nodes if isinstance(n, ast.Name)}
    return names | {n.attr for n in nodes if isinstance(n, ast.Attribute)}


DECOMPOSITIONS = {
    "linalg_decompositions",
    "lu_decomposition",
    "linalg_spectral",
    "linalg_solves",
    "linalg_composites",
}
MATRIX_KERNELS = {
    name
    for name, module in runtime_catalog().kernels.items()
    if module in DECOMPOSITIONS or name.startswith(("linalg_", "_linalg_"))
}
# The entries whose kernel is one, then the composites over those, and so on.
# (a composite calls a family's helpers through the module: its name counts)
MATRIX_FUNCTIONS = set(MATRIX_KERNELS) | DECOMPOSITIONS
while True:
    more = {
        i.func.name
        for i in INFOS
        if ast_names(i.forward or i.composite or "0") & MATRIX_FUNCTIONS
    } - MATRIX_FUNCTIONS
    if not more:
        break
    MATRIX_FUNCTIONS |= more

# Element-wise in form but not in shape: view_as_complex reads pairs along a
# last dim of 2, which a scaled-up sample does not keep.
SHAPE_BOUND = {"view_as_complex"}

CASES = [
    pytest.param(info, _scaled(sample), id=op_id(info))
    for info in INFOS
    if (info.op is not None or info.composite is not None) and not info.inplace
    if _elementwise(info) and info.func.name not in SHAPE_BOUND
    for sample in [_largest_unary_sample(info)]
    if sample is not None
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("info, sample", CASES)
def test_large_input_matches_torch(
    info: DifferentiabilityInfo, sample: Sample, dtype: type
) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    values = sample.materialize(rng, dtype)
    x = values["self"]
    ours_in = yg.tensor(x, requires_grad=True)
    theirs_in = torch.tensor(x, requires_grad=True)
    ours = call_yamlgrad(info, {**values, "self": ours_in})
    theirs = call_torch(torch, info, {**values, "self": theirs_in})
    if isinstance(ours, (tuple, list)):
        ours, theirs = ours[0], theirs[0]
    tolerance = TOLERANCES[dtype]
    np.testing.assert_allclose(
        ours.detach().numpy(), theirs.detach().numpy(), **tolerance
    )
    assert ours.dtype == getattr(yg, str(theirs.dtype).removeprefix("torch."))
    if not ours.requires_grad:
        return
    cotangent = rng.standard_normal(ours.shape).astype(dtype)
    ours.backward(yg.tensor(cotangent))
    theirs.backward(torch.tensor(cotangent))
    np.testing.assert_allclose(
        ours_in.grad.numpy(),
        theirs_in.grad.numpy(force=True),  # sgn's real gradient: a ZeroTensor
        **tolerance,
    )
