"""The generator: bad input, schemas, saved values, determinism, names, new ops.

Every bad-input case must give one line, `derivatives.yaml:LINE: OP: message`,
quoting the offending text, and leave the output folder byte-for-byte as it was.
Everything is written under tmp_path; the repository's derivatives.yaml and
generated/ are only read.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import importlib
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import yamlgrad as yg
from support import (
    BAD_INPUTS,
    BadInput,
    COMMITTED,
    GENERATED_FILES,
    REAL_YAML,
    SCALAR_MUL_ENTRY,
    SENTINELS,
    assert_one_error_line,
    copy_real_yaml,
    entry,
    mul_entry,
    sentinel_out,
    snapshot,
    yamlgrad_gen,
)
from yamlgrad.generated import Functions
from yamlgrad.tools import gen
from yamlgrad.tools.gen import generate
from yamlgrad.tools.load import (
    NOT_COVERED_FILE,
    NOT_COVERED_PATH,
    load_derivatives,
    load_not_covered,
)
from yamlgrad.tools.model import FunctionSchema, GenError, SavedAttribute, SchemaError


@pytest.mark.parametrize("case", BAD_INPUTS, ids=lambda case: case.id)
def test_bad_input_is_one_error_line_and_writes_nothing(
    case: BadInput, tmp_path: Path
) -> None:
    path = tmp_path / "derivatives.yaml"
    path.write_text(case.text, encoding="utf-8")
    out = sentinel_out(tmp_path)
    with pytest.raises(GenError) as raised:
        generate(path, out, check=False)
    assert_one_error_line(str(raised.value), case)
    assert (raised.value.loc.line, raised.value.op) == (case.line, case.op)
    assert snapshot(out) == SENTINELS


def test_good_entry_of_the_bad_input_table_generates(tmp_path: Path) -> None:
    """The cases above differ from a working file only by what they test."""
    path = tmp_path / "derivatives.yaml"
    path.write_text(entry() + mul_entry("grad * other", "  other: grad * self\n"))
    out = sentinel_out(tmp_path)
    assert generate(path, out, check=False) == 0
    assert snapshot(out)["unrelated.txt"] == SENTINELS["unrelated.txt"]
    assert "class ExpBackward0(Node):" in (out / "Functions.py").read_text()
    assert "def mul_Tensor(" in (out / "VariableType.py").read_text()


def test_same_name_with_another_overload_is_not_a_duplicate(tmp_path: Path) -> None:
    path = tmp_path / "derivatives.yaml"
    path.write_text(
        mul_entry("grad * other", "  other: grad * self\n") + entry(**SCALAR_MUL_ENTRY)
    )
    ops = [info.op for info in load_derivatives(path)]
    assert ops == ["MulBackward0", "MulBackward1"]


# -- A failed generation writes nothing ------------------------------------------


def test_format_failure_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Functions.py formats fine, VariableType.py does not: neither is written."""
    path = copy_real_yaml(tmp_path / "src")
    out = sentinel_out(tmp_path)
    real_format = gen.format_code

    def format_code(text: str, name: str, cache: object = None) -> str:
        if name == "VariableType.py":
            return real_format("def broken(:\n", name)
        return real_format(text, name, cache)

    monkeypatch.setattr(gen, "format_code", format_code)
    with pytest.raises(RuntimeError, match="generated VariableType.py is not valid"):
        generate(path, out, check=False)
    assert snapshot(out) == SENTINELS


def test_write_failure_leaves_no_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills while writing the second file: the first is not renamed in."""
    path = copy_real_yaml(tmp_path / "src")
    out = sentinel_out(tmp_path)
    real_fsync = os.fsync
    calls = []

    def fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(gen.os, "fsync", fsync)
    with pytest.raises(OSError, match="No space left"):
        generate(path, out, check=False)
    assert len(calls) == 2
    assert snapshot(out) == SENTINELS  # no .tmp file left behind either


def test_generated_files_get_the_mode_open_would_give(tmp_path: Path) -> None:
    path = copy_real_yaml(tmp_path / "src")
    out = tmp_path / "out"
    generate(path, out, check=False)
    plain = tmp_path / "plain.txt"
    plain.write_text("")
    want = plain.stat().st_mode & 0o777
    assert {name: (out / name).stat().st_mode & 0o777 for name in GENERATED_FILES} == {
        name: want for name in GENERATED_FILES
    }


def test_unchanged_files_are_not_rewritten(tmp_path: Path) -> None:
    path = copy_real_yaml(tmp_path / "src")
    out = tmp_path / "out"
    generate(path, out, check=False)
    os.utime(out / "Functions.py", ns=(0, 0))
    assert gen.write_atomically(gen.build(path), out) == []
    assert (out / "Functions.py").stat().st_mtime_ns == 0


def test_crlf_copy_is_rewritten_to_the_exact_bytes(tmp_path: Path) -> None:
    """A checkout with CRLF line endings is not the generated bytes."""
    path = copy_real_yaml(tmp_path / "src")
    out = tmp_path / "out"
    generate(path, out, check=False)
    want = (out / "Functions.py").read_bytes()
    (out / "Functions.py").write_bytes(want.replace(b"\n", b"\r\n"))
    diff = io.StringIO()
    assert generate(path, out, check=True, stream=diff) == 1
    assert "\r\n" in diff.getvalue()
    generate(path, out, check=False)
    assert (out / "Functions.py").read_bytes() == want


# -- Schemas -----------------------------------------------------------------------


def real_schema_texts() -> list[str]:
    """The `name:` values of the real file, read without the generator's loader."""
    import yaml

    return [e["name"] for e in yaml.safe_load(REAL_YAML.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("text", real_schema_texts())
def test_every_real_schema_round_trips(text: str) -> None:
    assert str(FunctionSchema.parse(text)) == text


HAND_WRITTEN_SCHEMAS = (
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, "
    "*, ScalarType? dtype=None) -> Tensor",
    "flip(Tensor self, int[] dims=[]) -> Tensor",
    "conv(Tensor input, int[2] stride=[1, 1], int[2] padding=[0, 0]) -> Tensor",
    "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
    'norm(Tensor self, float eps=1e-05, int k=-1, str mode="mean") -> Tensor',
    "zeros(SymInt[] size, *, ScalarType? dtype=None) -> Tensor",
    "permute(Tensor(a) self, int[] dims) -> Tensor(a)",
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "max.dim(Tensor self, int dim, bool keepdim=False) "
    "-> (Tensor values, Tensor indices)",
    "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
    "rand() -> Tensor",
    "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
)


@pytest.mark.parametrize("text", HAND_WRITTEN_SCHEMAS)
def test_hand_written_schema_round_trips(text: str) -> None:
    assert str(FunctionSchema.parse(text)) == text


def test_schema_parses_into_its_parts() -> None:
    text = "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False) -> Tensor"
    schema = FunctionSchema.parse(text)
    assert (schema.name, schema.overload, schema.cpp_name) == (
        "sum",
        "dim_IntList",
        "sum_dim_IntList",
    )
    self_, dim, keepdim = schema.arguments
    assert self_.is_tensor and not dim.is_tensor
    assert (dim.type.base, dim.type.is_list, dim.type.size, dim.type.optional) == (
        "int",
        True,
        1,
        True,
    )
    assert (dim.default, keepdim.default, keepdim.py_default) == (
        None,
        "False",
        "False",
    )

    text = "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)"
    self_, other, alpha = FunctionSchema.parse(text).arguments
    assert (self_.type.annotation, other.type.annotation) == ("a!", None)
    assert [a.kwarg_only for a in (self_, other, alpha)] == [False, False, True]
    assert alpha.default == "1"

    text = "f(Tensor self, int[] dims=[], int[2] stride=[1, 1], int[1] k=[0]) -> Tensor"
    defaults = [a.py_default for a in FunctionSchema.parse(text).arguments]
    assert defaults == [None, "()", "(1, 1)", "(0,)"]  # int[] arrive as tuples

    text = "max.dim(Tensor self, int dim) -> (Tensor values, Tensor indices)"
    returns = FunctionSchema.parse(text).returns
    assert [(r.name, str(r.type)) for r in returns] == [
        ("values", "Tensor"),
        ("indices", "Tensor"),
    ]


MALFORMED_SCHEMAS = (
    "exp(Tensor self)",  # no return
    "exp(Tensor self) => Tensor",
    "exp(Tensor self) -> Foo",  # unknown type
    "exp(Foo self) -> Tensor",
    "Exp(Tensor self) -> Tensor",  # op names are lower case
    "exp.(Tensor self) -> Tensor",
    "exp(Tensor) -> Tensor",  # no argument name
    "exp(Tensor self, Tensor self) -> Tensor",
    "f(Tensor self, *, *, int a) -> Tensor",
    "f(Tensor self, *) -> Tensor",  # does not round-trip
    "f(Tensor self, int a=foo) -> Tensor",  # not a literal
    "f(Tensor self, int[x] a) -> Tensor",
    "f(int(a) x) -> Tensor",  # only Tensor takes an annotation
    "f(Tensor(A) x) -> Tensor",
    "f(Tensor self,Tensor other) -> Tensor",
    "f(Tensor  self) -> Tensor",
    "f( Tensor self) -> Tensor",
    "f(Tensor self) -> Tensor ",
    "f(Tensor self) -> (Tensor)",
    "f(Tensor self) -> Tensor 1x",
    "f(Tensor self, int from, int from_) -> Tensor",  # both `from_` in Python
    "lambda(Tensor self) -> Tensor",
)


@pytest.mark.parametrize("text", MALFORMED_SCHEMAS)
def test_malformed_schema_raises(text: str) -> None:
    with pytest.raises(SchemaError):
        FunctionSchema.parse(text)


# -- Saved values ------------------------------------------------------------------

SAVED_YAML = """\
- name: shape_only(Tensor self) -> Tensor
  forward: xp.sum(self)
  self: expand(grad, self.shape)
  samples:
    - {self: [2, 3]}

- name: uses_result(Tensor self) -> Tensor
  forward: xp.exp(self)
  self: grad * result
  samples:
    - {self: [3]}

- name: scale(Tensor self, Scalar alpha) -> Tensor
  forward: xp.multiply(self, alpha)
  self: grad * alpha
  samples:
    - {self: [3], alpha: 2.0}

- name: both(Tensor self, Tensor other) -> Tensor
  forward: xp.multiply(self, other)
  self: grad * other
  other: grad * self
  samples:
    - {self: [3], other: [3]}

- name: output_shape(Tensor self) -> Tensor
  forward: xp.multiply(self, 2.0)
  self: expand(grad, result.shape) * 2 * self.ndim  # right for 1-d inputs only
  samples:
    - {self: [3]}

- name: column_sums(Tensor self) -> Tensor
  forward: xp.sum(self, axis=0)
  self: expand(grad, [self.shape[0], self.shape[-1]])
  samples:
    - {self: [2, 3]}
"""


def node_class(functions: str, op: str) -> str:
    """The text of one class in a generated Functions.py."""
    start = functions.index(f"\nclass {op}(Node):")
    end = functions.find("\n\n\nclass ", start + 1)
    return functions[start : None if end == -1 else end]


def wrapper_def(variable_type: str, name: str) -> str:
    start = variable_type.index(f"\ndef {name}(")
    return variable_type[start : variable_type.index("\n\n\n", start)]


@pytest.fixture(scope="module")
def saved_yaml_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SAVED_YAML generated into <folder>/saved_ops/generated, an importable package."""
    folder = tmp_path_factory.mktemp("saved")
    (folder / "derivatives.yaml").write_text(SAVED_YAML)
    (folder / "saved_ops").mkdir()
    (folder / "saved_ops" / "__init__.py").write_text("")
    generate(folder / "derivatives.yaml", folder / "out", check=False)
    shutil.copytree(folder / "out", folder / "saved_ops" / "generated")
    return folder


def test_saved_values_are_what_the_formulas_read(saved_yaml_out: Path) -> None:
    infos = {
        i.func.name: i for i in load_derivatives(saved_yaml_out / "derivatives.yaml")
    }
    sizes = SavedAttribute(
        "self_sym_sizes", "sizes_of(self_)", False, False, "self_sym_sizes"
    )
    assert infos["shape_only"].all_saved == (sizes,)
    result = SavedAttribute("result", "result", True, True, "result")
    assert infos["uses_result"].all_saved == (result,)
    assert infos["scale"].all_saved == (
        SavedAttribute("alpha", "alpha", False, False, "alpha"),
    )
    other = SavedAttribute("other", "other", True, False, "other")
    self_ = SavedAttribute("self", "self", True, False, "self_")
    both = infos["both"]
    assert both.all_saved == (other, self_)
    assert [d.saved for d in both.derivatives] == [(other,), (self_,)]
    assert (both.save_guard(other), both.save_guard(self_)) == ((0,), (1,))
    output_shape = infos["output_shape"].all_saved
    assert [(s.attr, s.is_output) for s in output_shape] == [
        ("_saved_result_sym_sizes", True),
        ("_saved_self_dim", False),
    ]
    assert infos["output_shape"].derivatives[0].formula == (
        "expand(grad, result_sym_sizes) * 2 * self_dim"
    )


def test_one_size_read_by_a_formula_is_saved_alone_before_the_kernel(
    saved_yaml_out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`self.shape[k]` saves that size, as PyTorch's `self_sym_argsize_k`, read
    in the wrapper before the kernel: a dim the input lacks fails there, with
    PyTorch's IndexError, even where the kernel would accept the input."""
    (info,) = [
        i
        for i in load_derivatives(saved_yaml_out / "derivatives.yaml")
        if i.func.name == "column_sums"
    ]
    assert [(s.name, s.expr) for s in info.all_saved] == [
        ("self_sym_argsize_0", "argsize_of(self_, 0)"),
        ("self_sym_argsize_minus_1", "argsize_of(self_, -1)"),
    ]
    assert info.derivatives[0].formula == (
        "expand(grad, [self_sym_argsize_0, self_sym_argsize_minus_1])"
    )
    variable_type = (saved_yaml_out / "out" / "VariableType.py").read_text()
    wrapper = wrapper_def(variable_type, "column_sums")
    saved = wrapper.index(
        "grad_fn._saved_self_sym_argsize_minus_1 = argsize_of(self_, -1)"
    )
    assert saved < wrapper.index("xp.sum(self_, axis=0)")
    monkeypatch.syspath_prepend(str(saved_yaml_out))
    try:
        ops = importlib.import_module("saved_ops.generated.VariableType")
        x = yg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        ops.column_sums(x).backward(yg.tensor(np.ones(3)))
        assert x.grad.tolist() == [[1.0] * 3] * 2
        assert ops.column_sums(yg.tensor(np.ones(3))).item() == 3.0  # no grad: no save
        with pytest.raises(IndexError, match="no dimensions"):
            ops.column_sums(yg.tensor(1.0, requires_grad=True))
    finally:
        for name in [m for m in sys.modules if m.startswith("saved_ops")]:
            del sys.modules[name]


def test_node_classes_hold_only_what_is_saved(saved_yaml_out: Path) -> None:
    functions = (saved_yaml_out / "out" / "Functions.py").read_text()
    shape_only = node_class(functions, "ShapeOnlyBackward0")
    assert '__slots__ = ("_saved_self_sym_sizes",)' in shape_only
    assert "_raw_saved_self" not in shape_only
    assert "grad_inputs[0] = expand(grad, self_sym_sizes)" in shape_only
    uses_result = node_class(functions, "UsesResultBackward0")
    assert '__slots__ = ("_raw_saved_result",)' in uses_result
    assert "result = self._raw_saved_result.unpack(self, raw)" in uses_result
    assert "self._raw_saved_result.reset_data()" in uses_result
    assert "_raw_saved_self" not in uses_result
    scale = node_class(functions, "ScaleBackward0")
    assert '__slots__ = ("_saved_alpha",)' in scale
    assert "release_variables" not in scale  # nothing to free
    both = node_class(functions, "BothBackward0")
    assert '"_raw_saved_other",' in both and '"_raw_saved_self",' in both
    # Each saved value unpacked once, at the top of apply (None when not saved).
    assert "self_ = self._raw_saved_self.unpack(self, raw)" in both
    assert "other = self._raw_saved_other.unpack(self, raw)" in both
    assert "self._raw_saved_self: Any = UNDEFINED" in both


def test_wrappers_save_inputs_before_and_outputs_after_the_kernel(
    saved_yaml_out: Path,
) -> None:
    variable_type = (saved_yaml_out / "out" / "VariableType.py").read_text()
    shape_only = wrapper_def(variable_type, "shape_only")
    assert "grad_fn._saved_self_sym_sizes = sizes_of(self_)" in shape_only
    assert "SavedVariable" not in shape_only
    uses_result = wrapper_def(variable_type, "uses_result")
    history = uses_result.index("set_history(result, grad_fn)")
    saved = uses_result.index("grad_fn._raw_saved_result = SavedVariable(result, True)")
    assert history < saved
    output_shape = wrapper_def(variable_type, "output_shape")
    history = output_shape.index("set_history(result, grad_fn)")
    saved = output_shape.index(
        "grad_fn._saved_result_sym_sizes = sizes_of(result._data)"
    )
    assert history < saved
    both = wrapper_def(variable_type, "both")
    # Saved only when the other input's gradient is needed; a Python number given
    # for a tensor goes through SavedVariable too (it keeps the number).
    assert (
        "    if grad_fn.should_compute_output(0):\n"
        "            grad_fn._raw_saved_other = SavedVariable(other, False)\n"
    ) in both
    assert (
        "    if grad_fn.should_compute_output(1):\n"
        "            grad_fn._raw_saved_self = SavedVariable(self, False)\n"
    ) in both


def test_generated_saved_values_work_at_runtime(
    saved_yaml_out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(saved_yaml_out))
    try:
        ops = importlib.import_module("saved_ops.generated.VariableType")
        x = yg.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
        y = ops.output_shape(x)
        node = y.grad_fn
        assert type(node).__name__ == "OutputShapeBackward0"
        assert (node._saved_result_sym_sizes, node._saved_self_dim) == ((3,), 1)
        assert not hasattr(node, "_raw_saved_self")
        y.backward(yg.tensor(np.ones(3)))
        assert x.grad.tolist() == [2.0, 2.0, 2.0]

        z = ops.shape_only(x)
        assert z.grad_fn._saved_self_sym_sizes == (3,)
        z.backward()
        assert x.grad.tolist() == [3.0, 3.0, 3.0]
    finally:
        for name in [m for m in sys.modules if m.startswith("saved_ops")]:
            del sys.modules[name]


def test_real_nodes_save_only_what_their_formulas_read() -> None:
    x = yg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    exp = yg.exp(x).grad_fn
    assert type(exp).__name__ == "ExpBackward0"
    assert exp._raw_saved_result is not None
    assert not hasattr(exp, "_raw_saved_self")
    want = np.exp(x.detach().numpy())
    np.testing.assert_array_equal(exp._saved_result.detach().numpy(), want)

    total = x.sum(1).grad_fn
    assert type(total).__name__ == "SumBackward1"
    assert total._saved_self_sym_sizes == (2, 3)
    assert not hasattr(total, "_raw_saved_self")
    assert total._saved_dim == (1,)

    by_number = (x * 2).grad_fn
    assert type(by_number).__name__ == "MulBackward0"
    assert by_number._saved_self is None  # 2 needs no gradient: x is not saved
    assert by_number._saved_other == 2

    y = yg.tensor(np.ones((2, 3)))
    by_constant = (x * y).grad_fn
    assert by_constant._saved_self is None
    assert by_constant._saved_other is y
    both = (x * yg.tensor(np.ones((2, 3)), requires_grad=True)).grad_fn
    assert both._saved_self is x


# -- Determinism -------------------------------------------------------------------


def test_generating_twice_gives_identical_bytes(tmp_path: Path) -> None:
    path = copy_real_yaml(tmp_path / "src")
    generate(path, tmp_path / "a", check=False)
    generate(path, tmp_path / "b", check=False)
    first, second = snapshot(tmp_path / "a"), snapshot(tmp_path / "b")
    assert sorted(first) == sorted(GENERATED_FILES)
    assert first == second


def test_output_does_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    path = copy_real_yaml(tmp_path / "src")
    generate(path, tmp_path / "here", check=False)
    for seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        command = [yamlgrad_gen(), "--yaml", str(path), "--out", str(tmp_path / seed)]
        subprocess.run(command, env=env, check=True, cwd=tmp_path)
        assert snapshot(tmp_path / seed) == snapshot(tmp_path / "here"), seed


# -- Node names --------------------------------------------------------------------

# Pinned, so that reordering derivatives.yaml cannot silently rename a node: every
# entry's overload and node class, in file order (None: no differentiable input).
GOLDEN_NODE_NAMES = (
    ("add_Tensor", "AddBackward0"),
    ("add_Scalar", "AddBackward1"),
    ("sub_Tensor", "SubBackward0"),
    ("sub_Scalar", "SubBackward1"),
    ("rsub_Tensor", "RsubBackward0"),
    ("rsub_Scalar", "RsubBackward1"),
    ("mul_Tensor", "MulBackward0"),
    ("mul_Scalar", "MulBackward1"),
    ("div_Tensor", "DivBackward0"),
    ("div_Scalar", "DivBackward1"),
    ("div_Tensor_mode", "DivBackward2"),
    ("div_Scalar_mode", "DivBackward3"),
    ("true_divide_Tensor", None),
    ("where_self", "WhereBackward0"),
    ("maximum", "MaximumBackward0"),
    ("fmax", "FmaxBackward0"),
    ("minimum", "MinimumBackward0"),
    ("fmin", "FminBackward0"),
    ("atan2", "Atan2Backward0"),
    ("hypot", "HypotBackward0"),
    ("copysign_Tensor", "CopysignBackward0"),
    ("copysign_Scalar", "CopysignBackward1"),
    ("remainder_Scalar", "RemainderBackward0"),
    ("remainder_Tensor", "RemainderBackward1"),
    ("fmod_Scalar", "FmodBackward0"),
    ("fmod_Tensor", "FmodBackward1"),
    ("xlogy_Tensor", "XlogyBackward0"),
    ("xlogy_Scalar_Self", "XlogyBackward1"),
    ("xlogy_Scalar_Other", "XlogyBackward2"),
    ("frexp_Tensor", "FrexpBackward0"),
    ("nextafter", "NextafterBackward0"),
    ("ldexp_Tensor", "LdexpBackward0"),
    ("logaddexp", "LogaddexpBackward0"),
    ("logaddexp2", "Logaddexp2Backward0"),
    ("lerp_Scalar", "LerpBackward0"),
    ("lerp_Tensor", "LerpBackward1"),
    ("addcmul", "AddcmulBackward0"),
    ("addcdiv", "AddcdivBackward0"),
    ("clamp_Tensor", "ClampBackward0"),
    ("clamp", "ClampBackward1"),
    ("clamp_min", "ClampMinBackward0"),
    ("clamp_min_Tensor", "ClampMinBackward1"),
    ("clamp_max", "ClampMaxBackward0"),
    ("clamp_max_Tensor", "ClampMaxBackward1"),
    ("nan_to_num", "NanToNumBackward0"),
    ("eq_Tensor", None),
    ("ne_Tensor", None),
    ("lt_Tensor", None),
    ("le_Tensor", None),
    ("gt_Tensor", None),
    ("ge_Tensor", None),
    ("eq_Scalar", None),
    ("ne_Scalar", None),
    ("lt_Scalar", None),
    ("le_Scalar", None),
    ("gt_Scalar", None),
    ("ge_Scalar", None),
    ("isnan", None),
    ("isinf", None),
    ("isfinite", None),
    ("logical_not", None),
    ("logical_xor", None),
    ("logical_and", None),
    ("logical_or", None),
    ("bitwise_not", None),
    ("bitwise_and_Tensor", None),
    ("bitwise_and_Scalar", None),
    ("bitwise_or_Tensor", None),
    ("bitwise_or_Scalar", None),
    ("bitwise_xor_Tensor", None),
    ("bitwise_xor_Scalar", None),
    ("floor_divide", None),
    ("floor_divide_Scalar", None),
    ("isposinf", None),
    ("isneginf", None),
    ("signbit", None),
    ("heaviside", "HeavisideBackward0"),
    ("gcd", None),
    ("lcm", None),
    ("pow_Tensor_Scalar", "PowBackward0"),
    ("pow_Tensor_Tensor", "PowBackward1"),
    ("pow_Scalar", "PowBackward2"),
    ("float_power_Tensor_Tensor", None),
    ("float_power_Tensor_Scalar", None),
    ("float_power_Scalar", None),
    ("neg", "NegBackward0"),
    ("reciprocal", "ReciprocalBackward0"),
    ("exp", "ExpBackward0"),
    ("log", "LogBackward0"),
    ("sin", "SinBackward0"),
    ("cos", "CosBackward0"),
    ("tanh", "TanhBackward0"),
    ("sigmoid", "SigmoidBackward0"),
    ("relu", "ReluBackward0"),
    ("threshold_backward", "ThresholdBackwardBackward0"),
    ("sqrt", "SqrtBackward0"),
    ("abs", "AbsBackward0"),
    ("sgn", "SgnBackward0"),
    ("angle", "AngleBackward0"),
    ("sign", "SignBackward0"),
    ("exp2", "Exp2Backward0"),
    ("expm1", "Expm1Backward0"),
    ("log2", "Log2Backward0"),
    ("log10", "Log10Backward0"),
    ("log1p", "Log1PBackward0"),
    ("rsqrt", "RsqrtBackward0"),
    ("square", None),
    ("tan", "TanBackward0"),
    ("asin", "AsinBackward0"),
    ("acos", "AcosBackward0"),
    ("atan", "AtanBackward0"),
    ("rad2deg", "Rad2DegBackward0"),
    ("sinh", "SinhBackward0"),
    ("cosh", "CoshBackward0"),
    ("asinh", "AsinhBackward0"),
    ("acosh", "AcoshBackward0"),
    ("atanh", "AtanhBackward0"),
    ("deg2rad", "Deg2RadBackward0"),
    ("logit", "LogitBackward0"),
    ("erf", "ErfBackward0"),
    ("erfc", "ErfcBackward0"),
    ("erfinv", "ErfinvBackward0"),
    ("lgamma", "LgammaBackward0"),
    ("mvlgamma", "MvlgammaBackward0"),
    ("digamma", "DigammaBackward0"),
    ("polygamma", "PolygammaBackward0"),
    ("i0", "I0Backward0"),
    ("sinc", "SincBackward0"),
    ("special_i0e", "SpecialI0EBackward0"),
    ("special_i1", "SpecialI1Backward0"),
    ("special_i1e", "SpecialI1EBackward0"),
    ("special_erfcx", "SpecialErfcxBackward0"),
    ("special_ndtri", "SpecialNdtriBackward0"),
    ("special_log_ndtr", "SpecialLogNdtrBackward0"),
    ("special_entr", "SpecialEntrBackward0"),
    ("special_xlog1py", "SpecialXlog1PyBackward0"),
    ("igamma", "IgammaBackward0"),
    ("igammac", "IgammacBackward0"),
    ("special_zeta", "SpecialZetaBackward0"),
    ("special_expit", None),
    ("special_logit", None),
    ("special_xlogy", None),
    ("special_ndtr", None),
    ("special_erf", None),
    ("special_erfc", None),
    ("special_erfinv", None),
    ("special_digamma", None),
    ("special_psi", None),
    ("special_gammaln", None),
    ("special_gammainc", None),
    ("special_polygamma", None),
    ("special_i0", None),
    ("special_sinc", None),
    ("special_log1p", None),
    ("special_expm1", None),
    ("special_exp2", None),
    ("special_airy_ai", None),
    ("special_bessel_j0", None),
    ("special_bessel_j1", None),
    ("special_bessel_y0", None),
    ("special_bessel_y1", None),
    ("special_chebyshev_polynomial_t", None),
    ("special_chebyshev_polynomial_u", None),
    ("special_chebyshev_polynomial_v", None),
    ("special_chebyshev_polynomial_w", None),
    ("special_hermite_polynomial_h", None),
    ("special_hermite_polynomial_he", None),
    ("special_laguerre_polynomial_l", None),
    ("special_legendre_polynomial_p", None),
    ("special_modified_bessel_i0", None),
    ("special_modified_bessel_i1", None),
    ("special_modified_bessel_k0", None),
    ("special_modified_bessel_k1", None),
    ("special_scaled_modified_bessel_k0", None),
    ("special_scaled_modified_bessel_k1", None),
    ("special_shifted_chebyshev_polynomial_t", None),
    ("special_shifted_chebyshev_polynomial_u", None),
    ("special_shifted_chebyshev_polynomial_v", None),
    ("special_shifted_chebyshev_polynomial_w", None),
    ("special_spherical_bessel_j0", None),
    ("floor", "FloorBackward0"),
    ("ceil", "CeilBackward0"),
    ("round", "RoundBackward0"),
    ("round_decimals", "RoundBackward1"),
    ("trunc", "TruncBackward0"),
    ("frac", "FracBackward0"),
    ("sum", "SumBackward0"),
    ("sum_dim_IntList", "SumBackward1"),
    ("mean", "MeanBackward0"),
    ("mean_dim", "MeanBackward1"),
    ("max_dim", "MaxBackward0"),
    ("max", "MaxBackward1"),
    ("max_other", None),
    ("min_dim", "MinBackward0"),
    ("min", "MinBackward1"),
    ("prod", "ProdBackward0"),
    ("min_other", None),
    ("prod_dim_int", "ProdBackward1"),
    ("var_correction", "VarBackward0"),
    ("var_mean_correction", "VarMeanBackward0"),
    ("std_correction", "StdBackward0"),
    ("std_mean_correction", "StdMeanBackward0"),
    ("linalg_vector_norm", "LinalgVectorNormBackward0"),
    ("norm_Scalar", None),
    ("norm_ScalarOpt_dim", None),
    ("amax", "AmaxBackward0"),
    ("amin", "AminBackward0"),
    ("aminmax", "AminmaxBackward0"),
    ("nansum", "NansumBackward0"),
    ("dist", "DistBackward0"),
    ("renorm", "RenormBackward0"),
    ("logsumexp", "LogsumexpBackward0"),
    ("cummax", "CummaxBackward0"),
    ("cummin", "CumminBackward0"),
    ("logcumsumexp", "LogcumsumexpBackward0"),
    ("cumsum", "CumsumBackward0"),
    ("cumprod", "CumprodBackward0"),
    ("_softmax", "SoftmaxBackward0"),
    ("_log_softmax", "LogSoftmaxBackward0"),
    ("_softmax_backward_data", "SoftmaxBackwardDataBackward0"),
    ("_safe_softmax", "SafeSoftmaxBackward0"),
    ("softmax_int", None),
    ("log_softmax_int", None),
    ("count_nonzero_dim_IntList", None),
    ("count_nonzero", None),
    ("histc", None),
    ("argmax", None),
    ("nonzero", None),
    ("one_hot", None),
    ("argmin", None),
    ("all", None),
    ("all_dim", None),
    ("all_dims", None),
    ("any", None),
    ("any_dim", None),
    ("any_dims", None),
    ("bincount", "BincountBackward0"),
    ("histogram_bins_tensor", None),
    ("argwhere", None),
    ("isin_Tensor_Tensor", None),
    ("isin_Tensor_Scalar", None),
    ("isin_Scalar_Tensor", None),
    ("kthvalue", "KthvalueBackward0"),
    ("median", "MedianBackward0"),
    ("nanmedian", "NanmedianBackward0"),
    ("median_dim", "MedianBackward1"),
    ("nanmedian_dim", "NanmedianBackward1"),
    ("mode", "ModeBackward0"),
    ("sort", "SortBackward0"),
    ("sort_stable", "SortBackward1"),
    ("argsort", None),
    ("argsort_stable", None),
    ("msort", None),
    ("searchsorted_Tensor", None),
    ("searchsorted_Scalar", None),
    ("bucketize_Tensor", None),
    ("bucketize_Scalar", None),
    ("topk", "TopkBackward0"),
    ("unique_dim", None),
    ("unique_consecutive", None),
    ("unique_dim_consecutive", None),
    ("_unique2", None),
    ("bernoulli", "BernoulliBackward0"),
    ("bernoulli_p", None),
    ("native_dropout_backward", "NativeDropoutBackwardBackward0"),
    ("multinomial", None),
    ("poisson", "PoissonBackward0"),
    ("_standard_gamma", "StandardGammaBackward0"),
    ("_standard_gamma_grad", None),
    ("_sample_dirichlet", None),
    ("_dirichlet_grad", None),
    ("binomial", None),
    ("normal_", "NormalBackward0"),
    ("normal_Tensor_float", "NormalBackward1"),
    ("normal_float_Tensor", "NormalBackward2"),
    ("normal_Tensor_Tensor", "NormalBackward3"),
    ("mm", "MmBackward0"),
    ("matmul", None),
    ("dot", "DotBackward0"),
    ("mv", "MvBackward0"),
    ("bmm", "BmmBackward0"),
    ("outer", None),
    ("addmm", "AddmmBackward0"),
    ("addmv", "AddmvBackward0"),
    ("addr", "AddrBackward0"),
    ("addbmm", "AddbmmBackward0"),
    ("vdot", "VdotBackward0"),
    ("baddbmm", "BaddbmmBackward0"),
    ("trace", "TraceBackward0"),
    ("linalg_inv_ex", "LinalgInvExBackward0"),
    ("linalg_inv", None),
    ("_linalg_det", "LinalgDetBackward0"),
    ("linalg_det", None),
    ("det", None),
    ("inverse", None),
    ("_linalg_slogdet", "LinalgSlogdetBackward0"),
    ("linalg_slogdet", None),
    ("slogdet", None),
    ("logdet", None),
    ("_linalg_solve_ex", "LinalgSolveExBackward0"),
    ("linalg_solve_ex", None),
    ("linalg_solve", None),
    ("_linalg_svd", "LinalgSvdBackward0"),
    ("linalg_svd", None),
    ("linalg_svdvals", None),
    ("svd", None),
    ("_linalg_eigh", "LinalgEighBackward0"),
    ("linalg_eigh", None),
    ("linalg_eigvalsh", None),
    ("linalg_matrix_norm", None),
    ("linalg_matrix_norm_str_ord", None),
    ("linalg_norm", None),
    ("linalg_norm_ord_str", None),
    ("linalg_cond", None),
    ("linalg_cond_p_str", None),
    ("linalg_matrix_power", None),
    ("matrix_power", None),
    ("linalg_multi_dot", None),
    ("linalg_tensorinv", None),
    ("linalg_tensorsolve", None),
    ("vander", None),
    ("linalg_vander", None),
    ("linalg_vecdot", None),
    ("inner", None),
    ("kron", None),
    ("cholesky", "CholeskyBackward0"),
    ("linalg_cholesky_ex", "LinalgCholeskyExBackward0"),
    ("linalg_cholesky", None),
    ("cholesky_solve", "CholeskySolveBackward0"),
    ("cholesky_inverse", "CholeskyInverseBackward0"),
    ("linalg_cross", "LinalgCrossBackward0"),
    ("cross", None),
    ("linalg_pinv_atol_rtol_tensor", "LinalgPinvBackward0"),
    ("linalg_pinv_atol_rtol_float", None),
    ("linalg_pinv", None),
    ("linalg_pinv_rcond_tensor", None),
    ("pinverse", None),
    ("linalg_lstsq", "LinalgLstsqBackward0"),
    ("linalg_lu_factor_ex", "LinalgLuFactorExBackward0"),
    ("linalg_lu_factor", None),
    ("linalg_lu", "LinalgLuBackward0"),
    ("linalg_lu_solve", "LinalgLuSolveBackward0"),
    ("lu_solve", None),
    ("lu_unpack", "LuUnpackBackward0"),
    ("linalg_matrix_exp", "LinalgMatrixExpBackward0"),
    ("matrix_exp", None),
    ("linalg_householder_product", "LinalgHouseholderProductBackward0"),
    ("ormqr", "OrmqrBackward0"),
    ("linalg_qr", "LinalgQrBackward0"),
    ("qr", None),
    ("triangular_solve", "TriangularSolveBackward0"),
    ("linalg_solve_triangular", "LinalgSolveTriangularBackward0"),
    ("einsum", None),
    ("_fft_r2c", "FftR2CBackward0"),
    ("_fft_c2r", "FftC2RBackward0"),
    ("_fft_c2c", "FftC2CBackward0"),
    ("t", "TBackward0"),
    ("t_copy", "TBackward0_copy"),
    ("transpose_int", "TransposeBackward0"),
    ("transpose_copy_int", "TransposeBackward0_copy"),
    ("permute", "PermuteBackward0"),
    ("permute_copy", "PermuteBackward0_copy"),
    ("view", "ViewBackward0"),
    ("view_copy", "ViewBackward0_copy"),
    ("reshape", None),
    ("expand", "ExpandBackward0"),
    ("expand_copy", "ExpandBackward0_copy"),
    ("block_diag", "BlockDiagBackward0"),
    ("cat", "CatBackward0"),
    ("stack", "StackBackward0"),
    ("select_int", "SelectBackward0"),
    ("select_copy_int", "SelectBackward0_copy"),
    ("select_backward", "SelectBackwardBackward0"),
    ("slice_Tensor", "SliceBackward0"),
    ("slice_copy_Tensor", "SliceBackward0_copy"),
    ("slice_backward", "SliceBackwardBackward0"),
    ("split_Tensor", "SplitBackward0"),
    ("split_copy_Tensor", "SplitBackward0_copy"),
    ("split_sizes", None),
    ("chunk", None),
    ("unsafe_split_Tensor", "UnsafeSplitBackward0"),
    ("unsafe_split_with_sizes", "UnsafeSplitWithSizesBackward0"),
    ("split_with_sizes", "SplitWithSizesBackward0"),
    ("split_with_sizes_copy", "SplitWithSizesBackward0_copy"),
    ("unbind_int", "UnbindBackward0"),
    ("unbind_copy_int", "UnbindBackward0_copy"),
    ("_to_copy", "ToCopyBackward0"),
    ("flip", "FlipBackward0"),
    ("tril", "TrilBackward0"),
    ("triu", "TriuBackward0"),
    ("diagonal", "DiagonalBackward0"),
    ("diagonal_copy", "DiagonalBackward0_copy"),
    ("diag_embed", "DiagEmbedBackward0"),
    ("diagonal_backward", "DiagonalBackwardBackward0"),
    ("linalg_diagonal", None),
    ("diag", None),
    ("unfold", "UnfoldBackward0"),
    ("unfold_copy", "UnfoldBackward0_copy"),
    ("as_strided", "AsStridedBackward0"),
    ("as_strided_copy", "AsStridedBackward0_copy"),
    ("as_strided_scatter", "AsStridedScatterBackward0"),
    ("unfold_backward", "UnfoldBackwardBackward0"),
    ("flatten_using_ints", None),
    ("unflatten_int", None),
    ("movedim_intlist", None),
    ("movedim_int", None),
    ("expand_as", None),
    ("broadcast_to", None),
    ("squeeze", "SqueezeBackward0"),
    ("squeeze_copy", "SqueezeBackward0_copy"),
    ("squeeze_dim", "SqueezeBackward1"),
    ("squeeze_copy_dim", "SqueezeBackward1_copy"),
    ("squeeze_dims", "SqueezeBackward2"),
    ("squeeze_copy_dims", "SqueezeBackward2_copy"),
    ("squeeze_", "SqueezeBackward3"),
    ("squeeze__dim", "SqueezeBackward4"),
    ("squeeze__dims", "SqueezeBackward5"),
    ("unsqueeze", "UnsqueezeBackward0"),
    ("unsqueeze_copy", "UnsqueezeBackward0_copy"),
    ("index_Tensor", "IndexBackward0"),
    ("_unsafe_masked_index", "UnsafeMaskedIndexBackward0"),
    ("_unsafe_masked_index_put_accumulate", "UnsafeMaskedIndexPutAccumulateBackward0"),
    ("rot90", "Rot90Backward0"),
    ("take", "TakeBackward0"),
    ("slice_scatter", "SliceScatterBackward0"),
    ("select_scatter", "SelectScatterBackward0"),
    ("diagonal_scatter", "DiagonalScatterBackward0"),
    ("index_reduce", "IndexReduceBackward0"),
    ("index_copy", "IndexCopyBackward0"),
    ("index_fill_int_Scalar", "IndexFillBackward0"),
    ("index_fill_int_Tensor", "IndexFillBackward1"),
    ("put", "PutBackward0"),
    ("index_put", "IndexPutBackward0"),
    ("index_select", "IndexSelectBackward0"),
    ("gather", "GatherBackward0"),
    ("scatter_src", "ScatterBackward0"),
    ("scatter_value", "ScatterBackward1"),
    ("scatter_add", "ScatterAddBackward0"),
    ("index_add", "IndexAddBackward0"),
    ("scatter_reduce_two", "ScatterReduceBackward0"),
    ("masked_fill_Scalar", "MaskedFillBackward0"),
    ("masked_fill_Tensor", "MaskedFillBackward1"),
    ("masked_scatter", "MaskedScatterBackward0"),
    ("masked_select", "MaskedSelectBackward0"),
    ("take_along_dim", None),
    ("hstack", None),
    ("vstack", None),
    ("atleast_1d", None),
    ("atleast_1d_Sequence", None),
    ("atleast_2d", None),
    ("atleast_2d_Sequence", None),
    ("atleast_3d", None),
    ("atleast_3d_Sequence", None),
    ("broadcast_tensors", None),
    ("cartesian_prod", None),
    ("column_stack", None),
    ("dstack", None),
    ("combinations", None),
    ("fliplr", None),
    ("flipud", None),
    ("diagflat", None),
    ("ravel", None),
    ("positive", None),
    ("resolve_conj", None),
    ("resolve_neg", None),
    ("conj", None),
    ("_conj", "ConjBackward0"),
    ("conj_physical", None),
    ("_conj_physical", "ConjPhysicalBackward0"),
    ("conj_physical_", "ConjPhysicalBackward1"),
    ("real", None),
    ("imag", None),
    ("complex", "ComplexBackward0"),
    ("polar", "PolarBackward0"),
    ("isreal", None),
    ("view_as_real", "ViewAsRealBackward0"),
    ("view_as_complex", "ViewAsComplexBackward0"),
    ("sum_to_size", None),
    ("tensor_split_sections", None),
    ("tensor_split_indices", None),
    ("tensor_split_tensor_indices_or_sections", None),
    ("hsplit_int", None),
    ("hsplit_array", None),
    ("vsplit_int", None),
    ("vsplit_array", None),
    ("dsplit_int", None),
    ("dsplit_array", None),
    ("unsafe_chunk", None),
    ("diff", None),
    ("trapezoid_x", None),
    ("trapezoid_dx", None),
    ("trapz_x", None),
    ("trapz_dx", None),
    ("cumulative_trapezoid_x", None),
    ("cumulative_trapezoid_dx", None),
    ("cov", None),
    ("corrcoef", None),
    ("nanmean", None),
    ("quantile", None),
    ("quantile_scalar", None),
    ("nanquantile", None),
    ("nanquantile_scalar", None),
    ("narrow_copy", "NarrowCopyBackward0"),
    ("narrow", None),
    ("roll", "RollBackward0"),
    ("repeat", "RepeatBackward0"),
    ("repeat_interleave_Tensor", None),
    ("repeat_interleave_self_Tensor", None),
    ("repeat_interleave_self_int", None),
    ("tile", None),
    ("clone", "CloneBackward0"),
    ("contiguous", None),
    ("constant_pad_nd", "ConstantPadNdBackward0"),
    ("pad", None),
    ("_pad_circular", None),
    ("tensordot", None),
    ("_unsafe_view", "UnsafeViewBackward0"),
    ("_reshape_alias", "ReshapeAliasBackward0"),
    ("alias", "AliasBackward0"),
    ("alias_copy", "AliasBackward0_copy"),
    ("add__Tensor", "AddBackward0"),
    ("sub__Tensor", "SubBackward0"),
    ("mul__Tensor", "MulBackward0"),
    ("div__Tensor", "DivBackward0"),
    ("pow__Scalar", "PowBackward0"),
    ("pow__Tensor", "PowBackward1"),
    ("float_power__Scalar", None),
    ("float_power__Tensor", None),
    ("neg_", "NegBackward0"),
    ("reciprocal_", "ReciprocalBackward0"),
    ("exp_", "ExpBackward0"),
    ("log_", "LogBackward0"),
    ("sin_", "SinBackward0"),
    ("cos_", "CosBackward0"),
    ("tanh_", "TanhBackward0"),
    ("sigmoid_", "SigmoidBackward0"),
    ("relu_", "ReluBackward0"),
    ("sqrt_", "SqrtBackward0"),
    ("abs_", "AbsBackward0"),
    ("clamp_", "ClampBackward1"),
    ("clamp_min_", "ClampMinBackward0"),
    ("clamp_max_", "ClampMaxBackward0"),
    ("fill_Scalar", "FillBackward0"),
    ("fill_Tensor", "FillBackward1"),
    ("fill__Scalar", "FillBackward2"),
    ("fill__Tensor", "FillBackward3"),
    ("zero_", "ZeroBackward0"),
    ("masked_fill__Scalar", "MaskedFillBackward0"),
    ("masked_fill__Tensor", "MaskedFillBackward1"),
    ("index_add_", "IndexAddBackward0"),
    ("scatter__src", "ScatterBackward0"),
    ("scatter__value", "ScatterBackward1"),
    ("scatter_add_", "ScatterAddBackward0"),
    ("div__Tensor_mode", "DivBackward2"),
    ("addcmul_", "AddcmulBackward0"),
    ("addcdiv_", "AddcdivBackward0"),
    ("lerp__Scalar", "LerpBackward0"),
    ("lerp__Tensor", "LerpBackward1"),
    ("hypot_", "HypotBackward0"),
    ("copysign__Tensor", "CopysignBackward0"),
    ("copysign__Scalar", "CopysignBackward1"),
    ("remainder__Scalar", "RemainderBackward0"),
    ("remainder__Tensor", "RemainderBackward1"),
    ("fmod__Scalar", "FmodBackward0"),
    ("fmod__Tensor", "FmodBackward1"),
    ("xlogy__Tensor", "XlogyBackward0"),
    ("xlogy__Scalar_Other", "XlogyBackward2"),
    ("clamp_min__Tensor", "ClampMinBackward1"),
    ("clamp_max__Tensor", "ClampMaxBackward1"),
    ("nan_to_num_", "NanToNumBackward0"),
    ("logit_", "LogitBackward0"),
    ("round__decimals", "RoundBackward1"),
    ("asin_", "AsinBackward0"),
    ("acos_", "AcosBackward0"),
    ("atan_", "AtanBackward0"),
    ("sinh_", "SinhBackward0"),
    ("cosh_", "CoshBackward0"),
    ("tan_", "TanBackward0"),
    ("log2_", "Log2Backward0"),
    ("log10_", "Log10Backward0"),
    ("log1p_", "Log1PBackward0"),
    ("expm1_", "Expm1Backward0"),
    ("exp2_", "Exp2Backward0"),
    ("rsqrt_", "RsqrtBackward0"),
    ("floor_", "FloorBackward0"),
    ("ceil_", "CeilBackward0"),
    ("round_", "RoundBackward0"),
    ("trunc_", "TruncBackward0"),
    ("frac_", "FracBackward0"),
    ("sign_", "SignBackward0"),
    ("erf_", "ErfBackward0"),
    ("erfc_", "ErfcBackward0"),
    ("ldexp_", "LdexpBackward0"),
    ("deg2rad_", "Deg2RadBackward0"),
    ("rad2deg_", "Rad2DegBackward0"),
    ("sinc_", "SincBackward0"),
    ("addmv_", "AddmvBackward0"),
    ("addr_", "AddrBackward0"),
    ("addbmm_", "AddbmmBackward0"),
    ("nextafter_", "NextafterBackward0"),
    ("mvlgamma_", "MvlgammaBackward0"),
    ("renorm_", "RenormBackward0"),
    ("index_put_", "IndexPutBackward0"),
    ("index_reduce_", "IndexReduceBackward0"),
    ("scatter_reduce__two", "ScatterReduceBackward0"),
    ("masked_scatter_", "MaskedScatterBackward0"),
    ("index_copy_", "IndexCopyBackward0"),
    ("index_fill__int_Scalar", "IndexFillBackward0"),
    ("put_", "PutBackward0"),
    ("acosh_", "AcoshBackward1"),
    ("asinh_", "AsinhBackward1"),
    ("atanh_", "AtanhBackward1"),
    ("i0_", "I0Backward0"),
    ("digamma_", "DigammaBackward0"),
    ("erfinv_", "ErfinvBackward0"),
    ("lgamma_", "LgammaBackward0"),
    ("logical_not_", None),
    ("bitwise_not_", None),
    ("atan2_", "Atan2Backward0"),
    ("igamma_", "IgammaBackward0"),
    ("igammac_", "IgammacBackward0"),
    ("logical_and_", None),
    ("logical_or_", None),
    ("logical_xor_", None),
    ("bitwise_and__Tensor", None),
    ("bitwise_and__Scalar", None),
    ("bitwise_or__Tensor", None),
    ("bitwise_or__Scalar", None),
    ("bitwise_xor__Tensor", None),
    ("bitwise_xor__Scalar", None),
    ("cumsum_", "CumsumBackward0"),
    ("cumprod_", "CumprodBackward0"),
    ("addmm_", "AddmmBackward0"),
    ("baddbmm_", "BaddbmmBackward0"),
    ("tril_", "TrilBackward0"),
    ("triu_", "TriuBackward0"),
    ("eq__Scalar", "EqBackward0"),
    ("ne__Scalar", "NeBackward0"),
    ("lt__Scalar", "LtBackward0"),
    ("le__Scalar", "LeBackward0"),
    ("gt__Scalar", "GtBackward0"),
    ("ge__Scalar", "GeBackward0"),
    ("eq__Tensor", "EqBackward1"),
    ("ne__Tensor", "NeBackward1"),
    ("lt__Tensor", "LtBackward1"),
    ("le__Tensor", "LeBackward1"),
    ("gt__Tensor", "GtBackward1"),
    ("ge__Tensor", "GeBackward1"),
    ("floor_divide__Tensor", "FloorDivideBackward0"),
    ("floor_divide__Scalar", "FloorDivideBackward1"),
    ("absolute", None),
    ("absolute_", None),
    ("arccos", None),
    ("arccos_", None),
    ("arccosh", None),
    ("arccosh_", None),
    ("arcsin", None),
    ("arcsin_", None),
    ("arcsinh", None),
    ("arcsinh_", None),
    ("arctan", None),
    ("arctan_", None),
    ("arctanh", None),
    ("arctanh_", None),
    ("negative", None),
    ("negative_", None),
    ("fix", None),
    ("fix_", None),
    ("arctan2", None),
    ("arctan2_", None),
    ("clip", None),
    ("clip_Tensor", None),
    ("clip_", None),
    ("concat", None),
    ("concatenate", None),
    ("divide_Tensor", None),
    ("divide_Scalar", None),
    ("divide_Tensor_mode", None),
    ("divide_Scalar_mode", None),
    ("divide__Tensor", None),
    ("divide__Scalar", None),
    ("divide__Tensor_mode", None),
    ("multiply_Tensor", None),
    ("multiply_Scalar", None),
    ("multiply__Tensor", None),
    ("multiply__Scalar", None),
    ("subtract_Tensor", None),
    ("subtract_Scalar", None),
    ("subtract__Tensor", None),
    ("subtract__Scalar", None),
    ("greater_Tensor", None),
    ("greater_Scalar", None),
    ("greater__Tensor", None),
    ("greater__Scalar", None),
    ("greater_equal_Tensor", None),
    ("greater_equal_Scalar", None),
    ("greater_equal__Tensor", None),
    ("greater_equal__Scalar", None),
    ("less_Tensor", None),
    ("less_Scalar", None),
    ("less__Tensor", None),
    ("less__Scalar", None),
    ("less_equal_Tensor", None),
    ("less_equal_Scalar", None),
    ("less_equal__Tensor", None),
    ("less_equal__Scalar", None),
    ("not_equal_Tensor", None),
    ("not_equal_Scalar", None),
    ("not_equal__Tensor", None),
    ("not_equal__Scalar", None),
    ("swapaxes", None),
    ("swapdims", None),
    ("moveaxis_intlist", None),
    ("moveaxis_int", None),
    ("ger", None),
    ("row_stack", None),
    ("square_", None),
    ("true_divide__Tensor", None),
    ("gcd_", None),
    ("lcm_", None),
    ("heaviside_", "HeavisideBackward0"),
    ("linear", None),
    ("bilinear", None),
    ("conv_tbc", "ConvTbcBackward0"),
    ("convolution", "ConvolutionBackward0"),
    ("slow_conv_transpose2d", "SlowConvTranspose2DBackward0"),
    ("slow_conv_transpose3d", "SlowConvTranspose3DBackward0"),
    ("slow_conv3d_forward", "SlowConv3DBackward0"),
    ("slow_conv_dilated2d", "SlowConvDilated2DBackward0"),
    ("slow_conv_dilated3d", "SlowConvDilated3DBackward0"),
    ("max_pool2d_with_indices", "MaxPool2DWithIndicesBackward0"),
    ("max_pool2d_with_indices_backward", "MaxPool2DWithIndicesBackwardBackward0"),
    ("max_pool2d", None),
    ("avg_pool2d", "AvgPool2DBackward0"),
    ("_adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0"),
    ("adaptive_max_pool2d", "AdaptiveMaxPool2DBackward0"),
    ("adaptive_max_pool3d", "AdaptiveMaxPool3DBackward0"),
    ("_adaptive_avg_pool3d", "AdaptiveAvgPool3DBackward0"),
    ("avg_pool3d", "AvgPool3DBackward0"),
    ("fractional_max_pool2d", "FractionalMaxPool2DBackward0"),
    ("fractional_max_pool3d", "FractionalMaxPool3DBackward0"),
    ("max_pool3d_with_indices", "MaxPool3DWithIndicesBackward0"),
    ("max_unpool2d", "MaxUnpool2DBackward0"),
    ("max_unpool3d", "MaxUnpool3DBackward0"),
    ("native_layer_norm", "NativeLayerNormBackward0"),
    ("native_batch_norm", "NativeBatchNormBackward0"),
    ("_native_batch_norm_legit", "NativeBatchNormLegitBackward0"),
    ("_native_batch_norm_legit_no_stats", "NativeBatchNormLegitBackward1"),
    ("_batch_norm_with_update", "BatchNormWithUpdateBackward0"),
    ("native_group_norm", "NativeGroupNormBackward0"),
    ("embedding", "EmbeddingBackward0"),
    ("_embedding_bag", "EmbeddingBagBackward0"),
    ("affine_grid_generator", "AffineGridGeneratorBackward0"),
    ("grid_sampler_2d", "GridSampler2DBackward0"),
    ("grid_sampler_3d", "GridSampler3DBackward0"),
    ("_thnn_fused_lstm_cell", "ThnnFusedLstmCellBackward0"),
    ("_thnn_fused_gru_cell", "ThnnFusedGruCellBackward0"),
    ("_pack_padded_sequence", "PackPaddedSequenceBackward0"),
    ("reflection_pad1d", "ReflectionPad1DBackward0"),
    ("reflection_pad2d", "ReflectionPad2DBackward0"),
    ("reflection_pad3d", "ReflectionPad3DBackward0"),
    ("replication_pad1d", "ReplicationPad1DBackward0"),
    ("replication_pad2d", "ReplicationPad2DBackward0"),
    ("replication_pad3d", "ReplicationPad3DBackward0"),
    ("upsample_linear1d", "UpsampleLinear1DBackward0"),
    ("upsample_bilinear2d", "UpsampleBilinear2DBackward0"),
    ("upsample_bicubic2d", "UpsampleBicubic2DBackward0"),
    ("_upsample_bilinear2d_aa", "UpsampleBilinear2DAaBackward0"),
    ("_upsample_bicubic2d_aa", "UpsampleBicubic2DAaBackward0"),
    ("upsample_trilinear3d", "UpsampleTrilinear3DBackward0"),
    ("upsample_nearest1d", "UpsampleNearest1DBackward0"),
    ("upsample_nearest2d", "UpsampleNearest2DBackward0"),
    ("upsample_nearest3d", "UpsampleNearest3DBackward0"),
    ("_upsample_nearest_exact1d", "UpsampleNearestExact1DBackward0"),
    ("_upsample_nearest_exact2d", "UpsampleNearestExact2DBackward0"),
    ("_upsample_nearest_exact3d", "UpsampleNearestExact3DBackward0"),
    ("pixel_shuffle", "PixelShuffleBackward0"),
    ("pixel_unshuffle", "PixelUnshuffleBackward0"),
    ("channel_shuffle", "ChannelShuffleBackward0"),
    ("col2im", "Col2ImBackward0"),
    ("im2col", "Im2ColBackward0"),
    ("gelu", "GeluBackward0"),
    ("silu", "SiluBackward0"),
    ("mish", "MishBackward0"),
    ("softplus", "SoftplusBackward0"),
    ("elu", "EluBackward0"),
    ("selu", None),
    ("celu", "CeluBackward0"),
    ("leaky_relu", "LeakyReluBackward0"),
    ("hardtanh", "HardtanhBackward0"),
    ("hardswish", "HardswishBackward0"),
    ("hardsigmoid", "HardsigmoidBackward0"),
    ("log_sigmoid_forward", "LogSigmoidBackward0"),
    ("log_sigmoid", None),
    ("glu", "GluBackward0"),
    ("hardshrink", "HardshrinkBackward0"),
    ("softshrink", "SoftshrinkBackward0"),
    ("threshold", "ThresholdBackward0"),
    ("threshold_", "ThresholdBackward1"),
    ("leaky_relu_", "LeakyReluBackward1"),
    ("elu_", "EluBackward1"),
    ("celu_", "CeluBackward1"),
    ("hardtanh_", "HardtanhBackward0"),
    ("silu_", "SiluBackward0"),
    ("mish_", "MishBackward0"),
    ("hardswish_", "HardswishBackward0"),
    ("hardsigmoid_", "HardsigmoidBackward0"),
    ("_masked_softmax", "MaskedSoftmaxBackward0"),
    ("_prelu_kernel", "PreluKernelBackward0"),
    ("prelu", None),
    ("rrelu_with_noise", "RreluWithNoiseBackward0"),
    ("rrelu_with_noise_", "RreluWithNoiseBackward1"),
    ("mse_loss", "MseLossBackward0"),
    ("smooth_l1_loss", "SmoothL1LossBackward0"),
    ("huber_loss", "HuberLossBackward0"),
    ("binary_cross_entropy", "BinaryCrossEntropyBackward0"),
    ("binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0"),
    ("nll_loss_forward", "NllLossBackward0"),
    ("nll_loss2d_forward", "NllLoss2DBackward0"),
    ("multi_margin_loss", "MultiMarginLossBackward0"),
    ("multilabel_margin_loss_forward", "MultilabelMarginLossBackward0"),
    ("multilabel_margin_loss", None),
    ("soft_margin_loss", "SoftMarginLossBackward0"),
    ("_ctc_loss", "CtcLossBackward0"),
    ("_ctc_loss_backward", "CtcLossBackwardBackward0"),
    ("nll_loss", None),
    ("nll_loss2d", None),
    ("_pdist_forward", "PdistBackward0"),
    ("_pdist_backward", "PdistBackwardBackward0"),
    ("pdist", None),
    ("_euclidean_dist", "EuclideanDistBackward0"),
    ("_cdist_forward", "CdistBackward0"),
    ("_cdist_backward", "CdistBackwardBackward0"),
    ("cdist", None),
    ("cosine_embedding_loss", None),
    ("hinge_embedding_loss", None),
    ("margin_ranking_loss", None),
    ("triplet_margin_loss", None),
    ("poisson_nll_loss", None),
    ("rms_norm", None),
    ("instance_norm", None),
    (
        "_scaled_dot_product_flash_attention_for_cpu",
        "ScaledDotProductFlashAttentionForCpuBackward0",
    ),
)


def test_node_names_are_pinned() -> None:
    infos = load_derivatives(REAL_YAML)
    assert tuple((i.func.cpp_name, i.op) for i in infos) == GOLDEN_NODE_NAMES


def test_committed_functions_define_exactly_the_pinned_nodes() -> None:
    # In-place entries without formulas reuse their functional entry's node.
    nodes = list(dict.fromkeys(op for _, op in GOLDEN_NODE_NAMES if op is not None))
    assert Functions.__all__ == nodes
    assert [getattr(Functions, name).__name__ for name in nodes] == nodes


def test_nodes_are_numbered_per_name_in_file_order(tmp_path: Path) -> None:
    """Entries without a differentiable input take no number."""
    path = tmp_path / "derivatives.yaml"
    path.write_text(
        entry(
            name="sum(Tensor self) -> Tensor",
            forward="xp.sum(self)",
            formula="non_differentiable",
        )
        + entry(
            name="sum.a(Tensor self) -> Tensor", forward="xp.sum(self)", formula="grad"
        )
        + entry(name="_to_copy(Tensor self) -> Tensor", forward="self", formula="grad")
        + entry(
            name="sum.b(Tensor self) -> Tensor", forward="xp.sum(self)", formula="grad"
        )
    )
    ops = [info.op for info in load_derivatives(path)]
    assert ops == [None, "SumBackward0", "ToCopyBackward0", "SumBackward1"]


# -- Adding an op is a YAML entry --------------------------------------------------

# The example op must not be in the real derivatives.yaml (sinh now is), so it
# carries a name PyTorch will never use.
SINH_ENTRY = """
- name: example_sinh(Tensor self) -> Tensor
  forward: xp.sinh(self)
  self: grad * (exp(self) + exp(-self)) / 2
  samples:
    - {self: [3, 4]}
    - {self: []}
"""

SINH_SCRIPT = """
import json
import re
import sys
import numpy as np
import yamlgrad as yg
from pkg.generated import Functions, VariableType

x = yg.tensor(np.linspace(-1.5, 1.5, 6), requires_grad=True)
y = VariableType.example_sinh(x)
assert type(y.grad_fn) is Functions.ExampleSinhBackward0, type(y.grad_fn)
(first,) = yg.autograd.grad(y, x, yg.tensor(np.ones(6)), create_graph=True)
first.backward(yg.tensor(np.ones(6)))
print(json.dumps({
    "x": x.detach().numpy().tolist(),
    "y": y.detach().numpy().tolist(),
    "first": first.detach().numpy().tolist(),
    "second": x.grad.numpy().tolist(),
    "modules": sorted(m for m in ("yaml", "jinja2", "black") if m in sys.modules),
}))
"""


def test_a_new_op_is_only_a_yaml_entry(tmp_path: Path) -> None:
    path = copy_real_yaml(tmp_path / "src")
    with path.open("a", encoding="utf-8") as f:
        f.write(SINH_ENTRY)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    out = tmp_path / "pkg" / "generated"
    command = [yamlgrad_gen(), "--yaml", str(path), "--out", str(out)]
    subprocess.run(command, check=True, cwd=tmp_path)

    functions = (out / "Functions.py").read_text()
    variable_type = (out / "VariableType.py").read_text()
    assert "class ExampleSinhBackward0(Node):" in functions
    assert "self: grad * (exp(self) + exp(-self)) / 2" in functions
    assert "\ndef example_sinh(input: Any) -> Tensor:\n" in variable_type
    assert "from .Functions import (" in variable_type
    assert "from yamlgrad.runtime.autograd.tensor import Tensor" in variable_type
    assert "from yamlgrad.runtime.autograd.node import Grad, Node" in functions
    # The repository's own generated/ is untouched by a generation elsewhere.
    assert "ExampleSinhBackward0" not in (COMMITTED / "Functions.py").read_text()

    # tmp_path first (for `pkg`), then whatever made this yamlgrad importable, so
    # the script runs against the runtime under test, not another installed copy.
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    run = subprocess.run(
        [sys.executable, "-c", SINH_SCRIPT],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    values = json.loads(run.stdout)
    x = np.array(values["x"])
    np.testing.assert_allclose(values["y"], np.sinh(x), rtol=1e-12)
    np.testing.assert_allclose(values["first"], np.cosh(x), rtol=1e-12)
    np.testing.assert_allclose(values["second"], np.sinh(x), rtol=1e-12)
    assert values["modules"] == []


# -- Import cost -------------------------------------------------------------------


def test_import_yamlgrad_loads_no_generator_dependency(tmp_path: Path) -> None:
    script = (
        "import sys, yamlgrad as yg\n"
        "x = yg.tensor([1.0, 2.0], requires_grad=True)\n"
        "(x * x).sum().backward()\n"
        "assert x.grad.numpy().tolist() == [2.0, 4.0]\n"
        "print(sorted(m for m in ('yaml', 'jinja2', 'black') if m in sys.modules))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


# -- Tensor?[] arguments -------------------------------------------------------------

INDEX_YAML = """\
- name: pick.Tensor(Tensor self, Tensor?[] indices) -> Tensor
  forward: index_tensor(self, indices)
  self: index_backward(grad, self.shape, indices)
  samples:
    - {self: [3, 2], indices: [null, [1, 1, 0]]}
    - {self: [2], indices: [[true, false]]}
"""


def test_optional_tensor_list_parses_as_a_non_differentiable_argument() -> None:
    schema = FunctionSchema.parse("pick(Tensor self, Tensor?[] indices) -> Tensor")
    indices = schema.arguments[1]
    assert str(indices.type) == "Tensor?[]"
    assert indices.type.is_list and indices.type.elem_optional
    assert not indices.is_tensor and not indices.is_tensor_list
    assert indices.binding_kind == "Tensor?[]"
    assert indices.converter == "tensor_optional_list_arg"
    with pytest.raises(SchemaError, match="only Tensor"):
        FunctionSchema.parse("f(Tensor self, int?[] xs) -> Tensor")


def test_optional_tensor_list_is_saved_by_value_and_passed_as_arrays(
    tmp_path: Path,
) -> None:
    path = tmp_path / "derivatives.yaml"
    path.write_text(INDEX_YAML)
    (info,) = load_derivatives(path)
    assert [d.var_names for d in info.derivatives] == [("self",)]
    assert [s.attr for s in info.all_saved] == [
        "_saved_indices",
        "_saved_self_sym_sizes",
    ]
    first, second = (
        s.materialize(np.random.default_rng(0), np.float64) for s in info.samples
    )
    assert first["indices"][0] is None
    assert first["indices"][1].dtype == np.int64
    assert second["indices"][0].dtype == np.bool_
    generate(path, tmp_path / "out", check=False)
    variable_type = (tmp_path / "out" / "VariableType.py").read_text()
    wrapper = wrapper_def(variable_type, "pick_Tensor")
    assert (
        'indices = tensor_optional_list_arg(indices, "pick", "indices", 2)' in wrapper
    )
    assert "grad_fn._saved_indices = indices" in wrapper
    # One next edge, for self: the indices are not differentiable.
    assert "grad_fn.set_next_edges(collect_next_edges(self))" in wrapper


def test_a_sample_can_give_an_index_tensor_by_value(tmp_path: Path) -> None:
    path = tmp_path / "derivatives.yaml"
    path.write_text(
        "- name: take(Tensor self, int dim, Tensor index) -> Tensor\n"
        "  forward: gather(self, dim, index)\n"
        "  self: gather_backward(grad, self.shape, dim, index)\n"
        "  index: non_differentiable\n"
        "  samples:\n"
        "    - {self: [3], dim: 0, index: {values: [2, 2, 0], dtype: int64}}\n"
    )
    (info,) = load_derivatives(path)
    kwargs = info.samples[0].materialize(np.random.default_rng(0), np.float64)
    np.testing.assert_array_equal(kwargs["index"], [2, 2, 0])
    assert kwargs["index"].dtype == np.int64


def test_the_index_op_binds_tensors_lists_and_none() -> None:
    x = yg.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    out = yg.ops.index.Tensor(x, [None, yg.tensor(np.array([1, 1]))])
    assert out.grad_fn.name() == "IndexBackward0"
    assert len(out.grad_fn.next_functions) == 1
    with pytest.raises(TypeError, match="must be tuple of Tensors"):
        yg.ops.index.Tensor(x, yg.tensor(np.array([1])))


def test_the_op_table_lists_every_entry_with_its_node() -> None:
    """generated/OPS.md is written by the generator from the same model."""
    text = (COMMITTED / "OPS.md").read_text(encoding="utf-8")
    table, _, left_out = text.partition("## PyTorch ops left out")
    table, _, numpy_only = table.partition("## numpy-only ops")
    infos = load_derivatives(REAL_YAML)
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert len(rows) == len(infos)
    for row, info in zip(rows, infos):
        assert row.startswith(f"| `{info.func}` |")
        if info.op is not None:
            assert f"| {info.op}" in row
    # Then the entries marked `backends: [numpy]` (or `[numpy, dask]`), each
    # with its backends and its reason.
    rows = [line for line in numpy_only.splitlines() if line.startswith("| `")]
    reasons = [
        (i.func, ", ".join(i.backends), i.numpy_only.replace("|", "\\|"))
        for i in infos
        if i.numpy_only
    ]
    assert reasons and rows == [
        f"| `{func}` | {backends} | {why} |" for func, backends, why in reasons
    ]
    # Then PyTorch's ops left out, each with its reason, from not_covered.yaml.
    listed = load_not_covered(NOT_COVERED_PATH)
    rows = [line for line in left_out.splitlines() if line.startswith("| `")]
    assert rows == [f"| `{r.op}` | {r.why} |" for r in listed]


@pytest.mark.parametrize(
    "text, message",
    [
        ("- {op: qr}\n", "an entry is `{op: name, why: reason}`"),
        ("- {op: qr, why: ''}\n", "`op` and `why` must be non-empty text"),
        ("- {op: qr, why: a}\n- {op: qr, why: b}\n", "listed twice (first at line 1)"),
    ],
)
def test_not_covered_refuses_a_bad_line(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / NOT_COVERED_FILE
    path.write_text(text)
    with pytest.raises(GenError, match=re.escape(message)):
        load_not_covered(path)


def test_a_tensor_input_without_a_key_may_not_require_grad(tmp_path: Path) -> None:
    """PyTorch's rule: no key is neither a formula nor `non_differentiable`; the
    wrapper refuses the input when it requires grad (check_no_requires_grad)."""
    path = tmp_path / "derivatives.yaml"
    path.write_text(mul_entry("grad * other", ""))
    (info,) = load_derivatives(path)
    assert info.no_requires_grad == ("other",)
    assert info.non_differentiable == ()
    assert [d.var_names for d in info.derivatives] == [("self",)]
    real = {i.func.cpp_name: i for i in load_derivatives(REAL_YAML)}
    assert real["binary_cross_entropy"].no_requires_grad == ("weight",)
    assert real["native_batch_norm"].no_requires_grad == ("running_mean", "running_var")
    assert real["mul_Tensor"].no_requires_grad == ()
