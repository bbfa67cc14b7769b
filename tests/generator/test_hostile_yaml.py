"""Hostile derivatives.yaml files: each is refused with `file:line: op: message`,
nothing in it runs, and nothing is written.

Every payload that could run would create SENTINEL (or call os.system with it);
the test checks it never appears. The output folder holds sentinel files whose
bytes must not change, and a folder that did not exist must not be created.
"""

from __future__ import annotations

import re
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import pytest

from yamlgrad.tools.cli import main
from yamlgrad.tools.gen import generate
from yamlgrad.tools.model import GenError
from yamlgrad.tools.yaml_loader import MAX_YAML_BYTES

SENTINEL = Path("/tmp") / "yamlgrad-hostile-yaml-ran"
TOUCH = f"__import__('pathlib').Path('{SENTINEL}').touch()"
SAMPLES = "  samples:\n    - {self: [3]}\n"


def entry(
    name: str = "foo(Tensor self) -> Tensor",
    forward: str = "self * 2",
    formula: str = "grad * 2",
    extra: str = "",
) -> str:
    return f"- name: {name}\n  forward: {forward}\n  self: {formula}\n{extra}{SAMPLES}"


@dataclass(frozen=True)
class Hostile:
    id: str
    text: str
    message: str  # a regex the error must contain after `ops.yaml:LINE: `


HOSTILE = [
    # Code injection through each place text goes.
    Hostile("formula call", entry(formula=f'"{TOUCH}"'), "name '__import__'"),
    Hostile("formula dunder", entry(formula="grad.__class__"), "private attribute"),
    Hostile("formula lambda", entry(formula='"(lambda: grad)()"'), "Lambda"),
    Hostile("formula walrus", entry(formula='"(g := grad)"'), "NamedExpr"),
    Hostile("formula comment", entry(formula='"grad  # \\"\\"\\"; import os"'), "'#'"),
    Hostile("formula backslash", entry(formula='"grad \\\\\\n + 1"'), "character"),
    Hostile("forward builtins", entry(forward="xp.__builtins__"), "private"),
    Hostile("forward eval", entry(forward="eval(self)"), "eval"),
    Hostile("forward string", entry(forward=f'"{TOUCH}"'), "name '__import__'"),
    Hostile("op name code", entry(name='"foo;import os(Tensor self) -> Tensor"'), "op"),
    Hostile(
        "argument name code",
        entry(name='"foo(Tensor self, int x=1);import os) -> Tensor"'),
        "default",
    ),
    Hostile(
        "default code",
        entry(name="foo(Tensor self, int n=__import__) -> Tensor"),
        "default",
    ),
    Hostile(
        "default newline",
        entry(name='"foo(Tensor self, int n=1\\n) -> Tensor"'),
        "default",
    ),
    Hostile(
        "argument newline",
        entry(name='"foo(Tensor self, int n\\n) -> Tensor"'),
        "argument name",
    ),
    Hostile("formula key", entry(extra=f'  "self, {TOUCH}": grad\n'), "formula"),
    Hostile(
        "sample code",
        "- name: foo(Tensor self) -> Tensor\n  forward: self * 2\n  self: grad\n"
        f'  samples:\n    - {{self: "{TOUCH}"}}\n',
        "tensor sample",
    ),
    Hostile("domain code", entry(extra=f'  domain: {{self: "{TOUCH}"}}\n'), "domain"),
    Hostile(
        "type_promotion", entry(extra="  type_promotion: x; import os\n"), "one of"
    ),
    # YAML tags and aliases.
    Hostile(
        "python/object/apply",
        f"- !!python/object/apply:os.system ['touch {SENTINEL}']\n",
        "constructor",
    ),
    Hostile("python/name", "- name: !!python/name:os.system\n", "constructor"),
    Hostile("python/module", "- !!python/module:os\n", "constructor"),
    Hostile(
        "billion laughs",
        "- &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        + "".join(
            f"- &{c} [{', '.join([f'*{p}'] * 9)}]\n"
            for p, c in zip("abcdefgh", "bcdefghi")
        ),
        "aliases",
    ),
    Hostile("merge key", "- &a {name: x}\n- {<<: *a}\n", "aliases"),
    # Names that would hide what the generated code relies on.
    *(
        Hostile(f"op {n}", entry(name=f"{n}(Tensor self) -> Tensor"), "builtin")
        for n in ("len", "print", "isinstance", "super", "type", "object", "range")
    ),
    *(
        Hostile(
            f"argument {n}",
            entry(name=f"foo(Tensor self, int {n}=1) -> Tensor"),
            "builtin",
        )
        for n in ("len", "super", "isinstance", "list")
    ),
    Hostile(
        "arguments self and input",
        entry(name="foo(Tensor self, Tensor input) -> Tensor"),
        "Python calls 'self' 'input'",
    ),
    Hostile("op keyword", entry(name="lambda(Tensor self) -> Tensor"), "keyword"),
    Hostile(
        "argument keyword clash",
        entry(name="foo(Tensor self, int if_=1, int if=1) -> Tensor"),
        "are both 'if_'",
    ),
    *(
        Hostile(f"op keyword {n}", entry(name=f"{n}(Tensor self) -> Tensor"), "keyword")
        for n in ("class", "import", "yield", "async", "await", "nonlocal")
    ),
    *(
        Hostile(f"op {n}", entry(name=f"{n}(Tensor self) -> Tensor"), "bad operator")
        for n in ("None", "True", "Tensor")
    ),
    # Public names that runtime/facade.py defines by hand: an op of that name would
    # replace yg.tensor, yg.no_grad, ... (or be replaced by them).
    *(
        Hostile(
            f"op facade {n}",
            entry(name=f"{n}(Tensor self) -> Tensor", extra="  variants: function\n"),
            rf"the op name '{n}' shadows yamlgrad\.{n}, a public name",
        )
        for n in ("tensor", "no_grad", "autograd", "nn", "optim", "zeros", "save")
        + ("inference_mode", "set_grad_enabled", "float64", "ops", "linalg")
    ),
    # Tensor's own attributes: a method variant would replace Tensor.backward, ...
    *(
        Hostile(
            f"method {n}",
            entry(name=f"{n}(Tensor self) -> Tensor", extra="  variants: method\n"),
            rf"the op name '{n}' shadows Tensor\.{n}, which",
        )
        for n in ("backward", "detach", "numpy", "item", "size", "to", "double")
    ),
    Hostile(
        "in-place method detach_",
        entry(name="detach_(Tensor(a!) self) -> Tensor(a!)"),
        r"shadows Tensor\.detach_",
    ),
    Hostile("op dunder", entry(name="__getattr__(Tensor self) -> Tensor"), "'__'"),
    Hostile("op __all__", entry(name="__all__(Tensor self) -> Tensor"), "'__'"),
    Hostile(
        "argument dunder",
        entry(name="foo(Tensor self, int __class__=1) -> Tensor"),
        "'__'",
    ),
    Hostile("op np", entry(name="np(Tensor self) -> Tensor"), "generated code"),
    Hostile(
        "op set_history", entry(name="set_history(Tensor self) -> Tensor"), "generated"
    ),
    Hostile(
        "argument grad_fn",
        entry(name="foo(Tensor self, int grad_fn=1) -> Tensor"),
        "shadows",
    ),
    Hostile(
        "long name", entry(name=f"{'a' * 5000}(Tensor self) -> Tensor"), "limit is 64"
    ),
    # Unicode look-alikes and invisible characters.
    Hostile(
        "cyrillic a in op", entry(name="f\u0430o(Tensor self) -> Tensor"), "U\\+0430"
    ),
    Hostile("cyrillic e in formula", entry(formula="grad * s\u0435lf"), "U\\+0435"),
    Hostile("full-width s (NFKC)", entry(formula="grad * \uff53elf"), "U\\+FF53"),
    Hostile(
        "zero-width space", entry(name="fo\u200bo(Tensor self) -> Tensor"), "U\\+200B"
    ),
    Hostile("bidi override in a comment", entry() + "# \u202e evil\n", "U\\+202E"),
    # Deep nesting: refused before any recursive walk.
    Hostile(
        "deep parentheses", entry(formula="(" * 300 + "grad" + ")" * 300), "nested"
    ),
    Hostile(
        "deep calls", entry(formula="sign(" * 120 + "grad" + ")" * 120), "nested 12"
    ),
    Hostile("long unary chain", entry(formula="-" * 100_000 + "grad"), "limit is 2000"),
    Hostile("long sum", entry(formula="grad" + " + grad" * 50_000), "limit is 2000"),
]


@pytest.fixture(autouse=True)
def no_sentinel() -> None:
    SENTINEL.unlink(missing_ok=True)
    yield
    assert not SENTINEL.exists(), "a payload ran"


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("case", HOSTILE, ids=lambda case: case.id)
def test_hostile_input_is_refused_and_writes_nothing(
    case: Hostile, tmp_path: Path
) -> None:
    path = tmp_path / "ops.yaml"
    path.write_text(case.text, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / "Functions.py").write_text("old\n")
    (out / "MANIFEST.json").write_text("{}\n")
    before = folder_bytes(out)
    with pytest.raises(GenError) as info:
        generate(path, out, check=False)
    text = str(info.value)
    assert re.match(r"ops\.yaml:\d+: \S.*: \S", text), text
    assert "\n" not in text.split(": ", 2)[0]
    assert re.search(case.message, text), text
    assert folder_bytes(out) == before
    assert sorted(p.name for p in out.iterdir()) == ["Functions.py", "MANIFEST.json"]


def test_refused_input_creates_no_output_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ops.yaml"
    path.write_text(entry(name="len(Tensor self) -> Tensor"))
    out = tmp_path / "pack" / "generated"
    assert main(["--yaml", str(path), "--out", str(out)]) == 1
    assert not (tmp_path / "pack").exists()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ops.yaml:1: len(Tensor self)")


def test_a_50_mb_file_is_refused_quickly_in_bounded_memory(tmp_path: Path) -> None:
    """Decision: files over MAX_YAML_BYTES (4 MiB, ~40x the real file) are refused
    before parsing; at most the limit plus one byte is read."""
    path = tmp_path / "ops.yaml"
    line = entry() + "# " + "x" * 1000 + "\n"
    with open(path, "w") as f:
        for _ in range(50 * 1024 * 1024 // len(line) + 1):
            f.write(line)
    assert path.stat().st_size > 50 * 1024 * 1024
    out = tmp_path / "out"
    tracemalloc.start()
    try:
        with pytest.raises(GenError, match=r"ops\.yaml:0: \(file\): .*limit of"):
            generate(path, out, check=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * MAX_YAML_BYTES
    assert not out.exists()


def test_an_expression_at_the_limits_is_accepted(tmp_path: Path) -> None:
    """The limits leave room (real formulas nest 9 deep, are at most 130 long):
    90 nested calls, and a sum of 90 terms (a chain 91 deep), are fine."""
    from yamlgrad.tools.load import load_derivatives

    path = tmp_path / "ops.yaml"
    nested = "sign(" * 90 + "grad" + ")" * 90
    path.write_text(
        entry(formula=nested)
        + entry(name="bar(Tensor self) -> Tensor", formula="grad" + " + grad" * 89)
    )
    foo, bar = load_derivatives(path)
    assert foo.func.name == "foo" and bar.func.name == "bar"


def test_the_refused_public_names_are_the_facades_own() -> None:
    """The loader reads the facade's names with ast; they must be exactly the public
    names of the imported package that are not generated ops (bool, float and int
    are builtins, refused as such; install_as_torch is the package's own, set in
    its __init__.py before anything else)."""
    import yamlgrad as yg
    from yamlgrad.generated import VariableType
    from yamlgrad.tools.load import facade_names, tensor_attribute_names

    hand_written = (
        set(yg.__all__)
        - set(VariableType.__all__)
        - {"bool", "float", "int", "install_as_torch"}
    )
    assert facade_names() == hand_written
    methods = set(VariableType.METHODS)
    assert not methods & tensor_attribute_names()
    assert {"backward", "detach", "grad", "to", "copy_"} <= tensor_attribute_names()


def test_an_op_bound_only_under_ops_may_reuse_a_facade_name(tmp_path: Path) -> None:
    """`tensordot` in derivatives.yaml has `python_binding: false`: yg.tensordot
    stays the facade's, so the op is accepted."""
    from yamlgrad.tools.load import load_derivatives

    path = tmp_path / "ops.yaml"
    path.write_text(
        entry(name="tensor(Tensor self) -> Tensor", extra="  python_binding: false\n")
        + entry(name="backward(Tensor self) -> Tensor", extra="  variants: function\n")
    )
    first, second = load_derivatives(path)
    assert (first.func.name, second.func.name) == ("tensor", "backward")


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        # Names the generated modules import or define: derived from the rendered
        # code (tools/reserved.py), so no hand-kept list can miss one.
        ("schema_names(Tensor self) -> Tensor", "'schema_names' is taken"),
        ("make_views(Tensor self) -> Tensor", "'make_views' is taken"),
        (
            "foo(Tensor self, int kernel_failure=1) -> Tensor",
            "'kernel_failure' shadows",
        ),
        ("foo(Tensor self, int grad_inputs=1) -> Tensor", "'grad_inputs' shadows"),
    ],
)
def test_a_name_the_generated_code_binds_is_refused_with_its_line(
    schema: str, message: str, tmp_path: Path
) -> None:
    path = tmp_path / "ops.yaml"
    first = entry(name="bar(Tensor self) -> Tensor")
    path.write_text(first + entry(name=schema), encoding="utf-8")
    out = tmp_path / "out"
    with pytest.raises(GenError) as info:
        generate(path, out, check=False)
    text = str(info.value)
    assert text.startswith(f"ops.yaml:{first.count(chr(10)) + 1}: "), text
    assert message in text, text
    assert not out.exists()


def test_an_argument_may_share_the_name_of_a_kernel_family_its_wrapper_never_calls(
    tmp_path: Path,
) -> None:
    """PyTorch's `int normalization` (_fft_r2c) beside the normalization family:
    the wrapper's parameter hides the module only inside that wrapper, so it is
    refused only where that wrapper calls into the family."""
    path = tmp_path / "ops.yaml"
    family_user = entry(
        name="foo(Tensor self) -> Tensor", forward="c_order(self)", formula="grad"
    )
    path.write_text(
        family_user + entry(name="bar(Tensor self, int shapes=1) -> Tensor"),
        encoding="utf-8",
    )
    generate(path, tmp_path / "out", check=False)
    path.write_text(
        entry(
            name="foo(Tensor self, int shapes=1) -> Tensor",
            forward="c_order(self)",
            formula="grad",
        ),
        encoding="utf-8",
    )
    with pytest.raises(GenError, match="'shapes' shadows"):
        generate(path, tmp_path / "out2", check=False)
