"""PyTorch's OpInfo samples against yamlgrad: the first few samples of each OpInfo.

harness.py holds the checks (forward, backward, forward AD, gradgrad) and
benchmarks/opinfo.py runs every sample into benchmarks/opinfo.md; here each
OpInfo with a yamlgrad callable runs its first SAMPLES[dtype] samples per dtype
(complex128 where PyTorch tests the OpInfo's gradients in complex numbers), a
failure not listed in known_differences.yaml fails the test, and the table's
mapped/missing column is checked against the names yamlgrad has now.
"""

from __future__ import annotations

import re
import warnings
from collections import defaultdict
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")  # torch's OpInfo database needs it

import harness  # noqa: E402 - tests/opinfo, beside this file

import yamlgrad as yg  # noqa: E402
from yamlgrad.generated import Functions  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
TABLE = REPO_ROOT / "benchmarks" / "opinfo.md"
#: samples per OpInfo and dtype; benchmarks/opinfo.py runs them all.
SAMPLES = {"float64": 3, "float32": 3, "complex128": 2}

OPINFOS = harness.autograd_opinfos()
KNOWN = harness.load_known_differences()
MAPPED = [
    (op, dtype)
    for op in OPINFOS
    if harness.resolve(op) is not None
    for dtype in harness.backward_dtypes(op)
]


def opinfo(full_name: str) -> harness.OpInfo:
    return next(op for op in OPINFOS if op.full_name == full_name)


@pytest.mark.parametrize(
    ("op", "dtype"), MAPPED, ids=[f"{op.full_name}-{dtype}" for op, dtype in MAPPED]
)
def test_opinfo_samples_match_torch(op: harness.OpInfo, dtype: str) -> None:
    unexpected, known = [], set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for index, case in enumerate(harness.cases(op, dtype, SAMPLES[dtype])):
            for check in harness.applicable_checks(op):
                try:
                    failure = harness.run_check(case, check)
                except harness.TorchRaised:
                    continue  # torch fails its own sample: nothing to compare
                if failure is None:
                    continue
                difference = harness.known_difference(KNOWN, op.full_name, check, dtype)
                if difference is None:
                    unexpected.append(f"sample {index} {check}: {failure}")
                else:
                    known.add(difference.reason)
    assert not unexpected, "\n".join(unexpected)
    if known:
        pytest.xfail("known difference: " + "; ".join(sorted(known)))


def test_opinfos_without_a_yamlgrad_callable_are_reported() -> None:
    """Not a silent gap: the OpInfos yamlgrad has no callable for, by family."""
    missing = defaultdict(list)
    for op in OPINFOS:
        if harness.resolve(op) is None:
            missing[harness.family(op)].append(op.full_name)
    if missing:
        count = sum(map(len, missing.values()))
        families = ", ".join(f"{k} {len(v)}" for k, v in sorted(missing.items()))
        pytest.skip(
            f"{count} OpInfos missing in yamlgrad ({families}); "
            "benchmarks/opinfo.md lists them"
        )


def _table_targets() -> dict[str, str | None]:
    rows = {}
    for line in TABLE.read_text().splitlines():
        match = re.match(r"\| `([^`]+)` \| (`([^`]+)`|missing) \|", line)
        if match:
            rows[match.group(1)] = match.group(3)
    return rows


def test_the_table_maps_every_opinfo_as_yamlgrad_does_now() -> None:
    """benchmarks/opinfo.md's mapped/missing column is current (no sample runs):
    after adding an op, `python benchmarks/opinfo.py` rewrites it."""
    now = {op.full_name: harness.resolve(op) for op in OPINFOS}
    assert _table_targets() == now, "run `python benchmarks/opinfo.py`"


def test_every_missing_opinfo_has_a_reason() -> None:
    """unmapped.yaml gives each OpInfo without a callable its kind and reason, and
    names only real OpInfos."""
    unmapped = harness.load_unmapped()
    names = {op.full_name for op in OPINFOS}
    missing = {op.full_name for op in OPINFOS if harness.resolve(op) is None}
    assert sorted(missing - set(unmapped)) == []
    for entry in unmapped.values():
        assert entry.opinfo in names, entry
        assert entry.kind in harness.UNMAPPED_KINDS, entry
        assert len(entry.reason) > 20, entry


def test_known_differences_name_real_opinfos_checks_and_dtypes() -> None:
    names = {op.full_name for op in OPINFOS}
    for known in KNOWN:
        assert known.opinfo in names, known
        assert known.check in (*harness.CHECKS, "all"), known
        assert known.dtype in (None, *harness.DTYPES), known
        assert len(known.reason) > 20, known


def test_a_wrong_gradient_fails_the_backward_check(monkeypatch) -> None:
    """The harness is not vacuous: SinBackward0 returning 1.01 times its formula's
    gradient is a mismatch, and the forward stays a match."""
    case = next(harness.cases(opinfo("sin"), "float64", 1))
    assert harness.run_check(case, "backward") is None
    apply = Functions.SinBackward0.apply

    def wrong(self, grads, raw=False):
        return [None if g is None else 1.01 * g for g in apply(self, grads, raw)]

    monkeypatch.setattr(Functions.SinBackward0, "apply", wrong)
    failure = harness.run_check(case, "backward")
    assert failure is not None and failure.startswith("Mismatch: gradient of input 0")
    assert harness.run_check(case, "forward") is None


def test_a_conjugated_gradient_fails_the_complex_backward_check(monkeypatch) -> None:
    """In complex128 the convention is checked too: SinBackward0 returning the
    conjugate of its gradient (cos(z) instead of conj(cos(z))) is a mismatch."""
    case = next(harness.cases(opinfo("sin"), "complex128", 1))
    assert harness.run_check(case, "backward") is None
    apply = Functions.SinBackward0.apply

    def conjugated(self, grads, raw=False):
        return [None if g is None else g.conj() for g in apply(self, grads, raw)]

    monkeypatch.setattr(Functions.SinBackward0, "apply", conjugated)
    failure = harness.run_check(case, "backward")
    assert failure is not None and failure.startswith("Mismatch: gradient of input 0")


def test_a_wrong_output_fails_the_forward_check(monkeypatch) -> None:
    case = next(harness.cases(opinfo("sin"), "float32", 1))
    monkeypatch.setattr(yg, "sin", lambda x: yg.cos(x))
    failure = harness.run_check(case, "forward")
    assert failure is not None and failure.startswith("Mismatch: output 0")


def test_port_binds_torch_to_yamlgrad_in_pytorch_lambdas() -> None:
    """mH's OpInfo is `lambda x: x.mH`; einsum's reorders its arguments."""
    einsum = harness.port(opinfo("einsum").op)
    a, b = yg.ones(2, 3), yg.ones(3, 4)
    assert isinstance(einsum([a, b], "ij,jk->ik"), yg.Tensor)
    assert einsum.__globals__["torch"] is yg
    assert opinfo("einsum").op.__globals__["torch"] is torch  # PyTorch's untouched
