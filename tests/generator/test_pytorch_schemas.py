"""The signature grammar takes PyTorch's own schemas, and wrappers bind what they
declare: `Generator?`, `Layout?`, `Device?`, enum and string defaults, argument
names that are Python keywords, a single named return."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.tools.gen import generate
from yamlgrad.tools.model import FunctionSchema, Type


def pytorch_derivatives_yaml() -> Path:
    """derivatives.yaml as the installed torch wheel ships it (torchgen's copy)."""
    pytest.importorskip("torch", reason="PyTorch's schemas come with torch")
    torchgen = pytest.importorskip("torchgen", reason="torchgen ships with torch")
    path = Path(torchgen.__file__).parent / "packaged" / "autograd" / "derivatives.yaml"
    if not path.exists():
        pytest.skip(f"this torch wheel has no {path}")
    return path


def test_every_pytorch_schema_parses_and_round_trips() -> None:
    import yaml

    entries = yaml.safe_load(pytorch_derivatives_yaml().read_text(encoding="utf-8"))
    texts = [e["name"] for e in entries]
    failures = []
    for text in texts:
        try:
            if str(FunctionSchema.parse(text)) != text:
                failures.append(text)
        except ValueError as error:
            failures.append(f"{text}: {error}")
    assert not failures, "\n".join(failures)
    assert len(texts) > 600  # the whole file was read (687 in PyTorch 2.13)


@pytest.mark.parametrize(
    "text",
    [
        "normal.Tensor_float(Tensor mean, float std=1, *, Generator? generator=None)"
        " -> Tensor",
        "zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None, "
        "MemoryFormat? memory_format=None) -> Tensor",
        "mse_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor",
        "gelu(Tensor self, *, str approximate='none') -> Tensor",
        "random_.from(Tensor(a!) self, int from, int? to, *, "
        "Generator? generator=None) -> Tensor(a!)",
        "cudnn_grid_sampler(Tensor self, Tensor grid) -> Tensor output",
        "rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor",
    ],
)
def test_pytorch_schema_forms_round_trip(text: str) -> None:
    assert str(FunctionSchema.parse(text)) == text


def test_the_new_forms_parse_into_their_parts() -> None:
    schema = FunctionSchema.parse(
        "random_.from(Tensor(a!) self, int from, int? to, *, "
        "Generator? generator=None) -> Tensor(a!)"
    )
    from_, generator = schema.arguments[1], schema.arguments[3]
    assert (from_.name, from_.python_name, from_.parameter) == ("from", "from", "from_")
    assert schema.keyword_parameters == (("from", "from_"),)
    assert generator.type == Type("Generator", None, False, None, True)
    assert generator.converter == "optional_generator_arg"
    loss = FunctionSchema.parse("l(Tensor self, int reduction=Mean) -> Tensor")
    assert (loss.arguments[1].default, loss.arguments[1].py_default) == ("Mean", "1")
    single = FunctionSchema.parse("f(Tensor self) -> Tensor output")
    assert [(r.name, str(r.type)) for r in single.returns] == [("output", "Tensor")]


PACK_YAML = """\
- name: add_noise(Tensor self, float scale=1.0, *, Generator? generator=None) -> Tensor
  forward: noisy(self, scale, generator)
  self: grad
  samples:
    - {self: [3]}

- name: shift(Tensor self, float from=0, int reduction=Mean, str approximate='none', int[] dims=[0,1], *, Layout? layout=None, Device? device=None) -> Tensor output
  forward: shifted(self, from_, reduction, approximate, dims, layout, device)
  self: grad * from_
  samples:
    - {self: [3], from: 2.0}
"""

PACK_HELPERS = '''\
"""Kernels that report what they were given."""

from __future__ import annotations

from typing import Any

KERNELS = ("noisy", "shifted")
BACKWARD_HELPERS: tuple[str, ...] = ()
__all__: list[str] = []
SEEN: dict[str, Any] = {}


def noisy(x: Any, scale: float, generator: Any) -> Any:
    SEEN["generator"] = generator
    return x + scale * generator._rng.standard_normal(x.shape)


def shifted(x: Any, start: float, *rest: Any) -> Any:
    SEEN["shift"] = rest
    return x * start
'''


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> object:
    folder = tmp_path_factory.mktemp("schemas")
    (folder / "ops.yaml").write_text(PACK_YAML)
    (folder / "pack_helpers.py").write_text(PACK_HELPERS)
    (folder / "schema_pack").mkdir()
    (folder / "schema_pack" / "__init__.py").write_text("")
    out = folder / "schema_pack" / "generated"
    generate(folder / "ops.yaml", out, check=False, helpers=folder / "pack_helpers.py")
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module("schema_pack.generated.VariableType")
    finally:
        sys.path.remove(str(folder))
        for name in [m for m in sys.modules if m.startswith("schema_pack")]:
            del sys.modules[name]


def test_a_generator_argument_reaches_the_kernel_as_a_generator(pack: object) -> None:
    helpers = sys.modules["schema_pack.generated.helpers"]
    x = yg.zeros(3)
    first = pack.add_noise(x, generator=yg.Generator().manual_seed(5))
    again = pack.add_noise(x, 1.0, generator=yg.Generator().manual_seed(5))
    assert first.tolist() == again.tolist()
    yg.manual_seed(7)
    default = pack.add_noise(x)
    assert helpers.SEEN["generator"] is yg.default_generator
    yg.manual_seed(7)
    assert pack.add_noise(x).tolist() == default.tolist()
    with pytest.raises(TypeError, match="'generator' .* must be torch.Generator"):
        pack.add_noise(x, generator=5)


def test_keyword_enum_and_string_arguments_bind_as_pytorch_binds_them(
    pack: object,
) -> None:
    helpers = sys.modules["schema_pack.generated.helpers"]
    x = yg.tensor([1.0, 2.0], requires_grad=True)
    y = pack.shift(x, **{"from": 3.0})
    assert y.tolist() == [3.0, 6.0]
    assert helpers.SEEN["shift"] == (1, "none", (0, 1), None, None)
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert y.grad_fn._saved_from_ == 3.0
    pack.shift(x, 2.0, 2, "tanh", [1], layout=yg.strided, device="cpu")
    assert helpers.SEEN["shift"] == (2, "tanh", (1,), yg.strided, "cpu")
    assert pack.OVERLOADS["shift"]["default"](x, **{"from": 2.0}).tolist() == [
        2.0,
        4.0,
    ]
    with pytest.raises(RuntimeError, match="no device 'meta'"):
        pack.shift(x, device="meta")
    with pytest.raises(TypeError, match=r"got \(Tensor, layout=str\)"):
        pack.shift(x, layout="strided")
    with pytest.raises(TypeError, match="'layout' .* must be torch.layout"):
        pack.shift_default(x, layout="strided")
