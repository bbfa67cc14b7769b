"""Op coverage: PyTorch's own derivatives.yaml against ours.

PyTorch's public functional ops are read from the installed wheel (torchgen's
packaged copy of derivatives.yaml): an entry's base name counts unless it is an
internal (`_`-prefixed), a backward helper (`*_backward`, `*_backward_*`), an
in-place twin (`*_`), a backend's or a layout's op (cudnn, miopen, mkldnn, mps,
sparse, nested, quantized, foreach), or an op with no CPU meaning (the dispatcher
has neither a CPU kernel nor a composite one for that overload). Every such op has
an entry in derivatives.yaml or a line, with its reason, in tools/not_covered.yaml (the
op table renders both). Run this file to print the report:

    python tests/ops/test_coverage.py
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from yamlgrad.tools.load import (
    NOT_COVERED_FILE,
    NOT_COVERED_PATH,
    load_derivatives,
    load_not_covered,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
BACKENDS = ("cudnn", "miopen", "mkldnn", "mps", "sparse", "nested", "quantized")
BACKENDS += ("foreach",)
CPU_KEYS = (
    "CPU",
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
)


def pytorch_derivatives(torchgen: ModuleType) -> list[str]:
    """The `name:` schemas of the derivatives.yaml packaged with torchgen."""
    path = Path(torchgen.__file__).parent / "packaged" / "autograd" / "derivatives.yaml"
    with open(path, encoding="utf-8") as f:
        return [entry["name"] for entry in yaml.safe_load(f)]


def is_public_functional(base: str) -> bool:
    if base.startswith("_") or base.endswith("_"):
        return False
    if base.endswith("_backward") or "_backward_" in base:
        return False
    return not any(backend in base for backend in BACKENDS)


def has_cpu_meaning(torch: ModuleType, schema: str) -> bool:
    """The dispatcher holds a CPU or a composite kernel for this overload."""
    has_kernel = torch._C._dispatch_has_kernel_for_dispatch_key
    qualified = "aten::" + schema.partition("(")[0]
    return any(has_kernel(qualified, key) for key in CPU_KEYS)


def pytorch_public_ops(torch: ModuleType, torchgen: ModuleType) -> set[str]:
    ops = set()
    for schema in pytorch_derivatives(torchgen):
        base = schema.partition("(")[0].partition(".")[0]
        if is_public_functional(base) and has_cpu_meaning(torch, schema):
            ops.add(base)
    return ops


def ours() -> set[str]:
    return {info.func.name for info in load_derivatives(REPO_ROOT / "derivatives.yaml")}


def listed() -> dict[str, str]:
    return {row.op: row.why for row in load_not_covered(NOT_COVERED_PATH)}


@pytest.fixture(scope="module")
def public() -> set[str]:
    torch = pytest.importorskip("torch")
    torchgen = pytest.importorskip("torchgen")
    return pytorch_public_ops(torch, torchgen)


def test_the_rule_finds_the_ops_it_should(public: set[str]) -> None:
    # A sanity check of the rule itself: plain ops in, internals and twins out.
    assert {"mul", "linalg_qr", "upsample_bilinear2d", "index_put"} <= public
    assert not {"_softmax", "add_", "cudnn_convolution", "softplus_backward"} & public


def test_every_public_op_has_an_entry_or_a_reason(public: set[str]) -> None:
    missing = public - ours()
    unlisted = sorted(missing - set(listed()))
    assert not unlisted, (
        f"PyTorch ops with neither an entry in derivatives.yaml nor a reason in "
        f"{NOT_COVERED_FILE}: {unlisted}"
    )


def test_not_covered_lists_only_missing_public_ops(public: set[str]) -> None:
    covered = sorted(set(listed()) & ours())
    assert not covered, f"{NOT_COVERED_FILE} lists ops that have entries: {covered}"
    unknown = sorted(set(listed()) - public)
    assert (
        not unknown
    ), f"{NOT_COVERED_FILE} lists ops PyTorch does not count: {unknown}"


def report() -> str:
    import torch
    import torchgen

    public = pytorch_public_ops(torch, torchgen)
    covered = public & ours()
    lines = [f"covered {len(covered)} of {len(public)} public PyTorch ops"]
    lines += [f"  {op}: {why}" for op, why in sorted(listed().items())]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
