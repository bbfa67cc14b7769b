"""Op packs: ops from another YAML, generated into a package of their own.

examples/op_pack/my_ops.yaml is regenerated into a temporary folder, imported, used
with backward on yamlgrad's engine, and checked by yamlgrad.testing, which must
also catch a deliberately wrong formula.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import torch

import yamlgrad as yg
from support import REPO_ROOT
from yamlgrad.testing import OpCheckError, check_yaml
from yamlgrad.tools.cli import main

PACK_YAML = REPO_ROOT / "examples" / "op_pack" / "my_ops.yaml"
COMMITTED = PACK_YAML.parent / "my_ops"
HELPERS = PACK_YAML.parent / "my_helpers.py"


def generate_pack(yaml_text: str, root: Path, name: str) -> ModuleType:
    yaml_path = root / f"{name}.yaml"
    yaml_path.write_text(yaml_text)
    argv = ["--yaml", str(yaml_path), "--out", str(root / name)]
    assert main([*argv, "--helpers", str(HELPERS)]) == 0
    sys.path.insert(0, str(root))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(root))


@pytest.fixture
def pack_root(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith(("pack_ok", "pack_bad"))]:
        del sys.modules[name]


def test_committed_pack_is_current(pack_root: Path) -> None:
    """examples/op_pack/my_ops is what the generator writes from my_ops.yaml."""
    argv = ["--yaml", str(PACK_YAML), "--out", str(COMMITTED), "--check"]
    argv += ["--helpers", str(HELPERS)]
    assert main(argv) == 0


def test_pack_ops_record_nodes_and_match_torch(pack_root: Path) -> None:
    pack = generate_pack(PACK_YAML.read_text(), pack_root, "pack_ok")
    assert pack.__all__ == ["softsign", "swish", "cubic", "smooth_abs"]
    rng = np.random.default_rng(0)
    x_np, o_np = rng.standard_normal((2, 3)), rng.standard_normal(3)
    x = yg.tensor(x_np, requires_grad=True)
    o = yg.tensor(o_np, requires_grad=True)
    # Pack ops and built-in ops in one graph, on the same engine.
    y = (pack.softsign(x) + pack.swish(x, beta=0.5) * pack.cubic(x, o)).exp().sum()
    y = y + pack.smooth_abs(x, eps=0.1).sum()
    assert y.grad_fn.name() == "AddBackward0"
    smooth = y.grad_fn.next_functions[1][0].next_functions[0][0]
    assert smooth.name() == "SmoothAbsBackward0"
    exp = y.grad_fn.next_functions[0][0].next_functions[0][0]
    mul = exp.next_functions[0][0].next_functions[1][0]
    assert [n.name() for n, _ in mul.next_functions] == [
        "SwishBackward0",
        "CubicBackward0",
    ]
    y.backward()

    tx = torch.tensor(x_np, requires_grad=True)
    to = torch.tensor(o_np, requires_grad=True)
    softsign = torch.nn.functional.softsign(tx)
    swish = tx * torch.sigmoid(0.5 * tx)
    ty = (softsign + swish * (tx**3 + to * tx)).exp().sum()
    ty = ty + (tx * tx + 0.1).sqrt().sum()
    ty.backward()
    np.testing.assert_allclose(y.item(), ty.item(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(o.grad.numpy(), to.grad.numpy(), rtol=1e-10)


def test_testing_checks_every_entry_of_the_pack(pack_root: Path) -> None:
    pack = generate_pack(PACK_YAML.read_text(), pack_root, "pack_ok")
    report = check_yaml(PACK_YAML, pack, helpers=HELPERS)
    assert report.ok
    assert report.checked == [
        f"{op}: {order}"
        for op in ("softsign", "swish", "cubic", "smooth_abs")
        for order in ("backward", "double backward", "forward", "adjoint")
    ]


def test_testing_catches_a_wrong_formula(pack_root: Path) -> None:
    wrong = PACK_YAML.read_text().replace(
        "other: grad * self\n", "other: grad * self * self\n"
    )
    assert wrong != PACK_YAML.read_text()
    pack = generate_pack(wrong, pack_root, "pack_bad")
    yaml_path = pack_root / "pack_bad.yaml"
    with pytest.raises(OpCheckError) as caught:
        check_yaml(yaml_path, pack, helpers=HELPERS)
    message = str(caught.value)
    line = wrong.splitlines().index("  other: grad * self * self") + 1
    samples = [
        i + 1
        for i, text in enumerate(wrong.splitlines())
        if "{self: [" in text and "other" in text
    ]
    assert "cubic(Tensor self, Tensor other) -> Tensor: sample 0" in message
    assert "gradient of other does not match finite differences" in message
    assert f"pack_bad.yaml:{samples[0]}" in message
    assert line < samples[0]
    assert "softsign" not in message and "swish" not in message
    report = check_yaml(yaml_path, pack, helpers=HELPERS, raise_on_failure=False)
    assert not report.ok
    assert all("cubic" in failure for failure in report.failures)
    assert check_yaml(yaml_path, pack, helpers=HELPERS, entries=["swish"]).ok


def test_helpers_are_declared_and_checked(tmp_path: Path) -> None:
    """A pack's formula may call only what its helper module's __all__ declares,
    and the helper module may not take a name yamlgrad already uses."""
    out = str(tmp_path / "out")
    assert main(["--yaml", str(PACK_YAML), "--out", out]) == 1  # no --helpers
    assert not (tmp_path / "out").exists()
    clash = tmp_path / "clash.py"
    clash.write_text('__all__ = ["smooth_abs_grad", "exp"]\n')
    assert main(["--yaml", str(PACK_YAML), "--out", out, "--helpers", str(clash)]) == 1
    undeclared = tmp_path / "undeclared.py"
    undeclared.write_text("__all__ = []\ndef smooth_abs_grad(x, eps): return x\n")
    argv = ["--yaml", str(PACK_YAML), "--out", out, "--helpers", str(undeclared)]
    assert main(argv) == 1
    assert not (tmp_path / "out").exists()
