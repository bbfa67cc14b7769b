"""Forward-mode formulas in derivatives.yaml: how the generator reads, expands and
refuses them (`result:` keys, auto_element_wise, auto_linear, not_implemented,
derived)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import EXP, MUL, REPO_ROOT
from yamlgrad.tools.load import load_derivatives
from yamlgrad.tools.model import GenError


def _load(tmp_path: Path, text: str) -> tuple:
    path = tmp_path / "derivatives.yaml"
    path.write_text(text)
    return load_derivatives(path)


def _mul(forward_line: str) -> str:
    return (
        f"- name: {MUL}\n"
        "  forward: xp.multiply(self, other)\n"
        "  self: grad * other\n"
        "  other: grad * self\n"
        f"{forward_line}"
        "  samples:\n"
        "    - {self: [3], other: [3]}\n"
    )


def test_explicit_formula_is_rendered_in_the_wrappers_names(tmp_path: Path) -> None:
    (info,) = _load(tmp_path, _mul("  result: other_t * self_p + self_t * other_p\n"))
    (f,) = info.forward_derivatives
    assert (f.kind, f.output) == ("formula", "result")
    assert f.rendered == "other_t * self + self_t * other"
    assert info.set_fw_grad_call == "set_fw_grad(result, result_t)"


def test_auto_element_wise_rewrites_the_backward_formula(tmp_path: Path) -> None:
    text = (
        f"- name: {EXP}\n  forward: xp.exp(self)\n  self: grad * result\n"
        "  result: auto_element_wise\n  samples:\n    - {self: [3]}\n"
    )
    (info,) = _load(tmp_path, text)
    (f,) = info.forward_derivatives
    # conj(f(conj(tangent))): the conjugate transpose of the diagonal Jacobian,
    # free on real dtypes.
    assert (f.kind, f.formula) == ("auto_element_wise", "conj(conj(self_t) * result)")
    assert f.rendered == "complex_numbers.conj(complex_numbers.conj(self_t) * result)"


def test_not_implemented_refuses_forward_ad(tmp_path: Path) -> None:
    """`result: not_implemented`: no JVP, PyTorch's refusal at forward AD time."""
    (info,) = _load(tmp_path, _mul("  result: not_implemented\n"))
    (f,) = info.forward_derivatives
    assert (f.kind, f.rendered) == ("not_implemented", "no_forward_derivative('mul')")


def test_auto_linear_calls_the_op_on_the_tangents(tmp_path: Path) -> None:
    (info,) = _load(tmp_path, _mul("  result: auto_linear\n"))
    assert (
        info.forward_derivatives[0].rendered
        == "mul_Tensor(input=self_t, other=other_t)"
    )


def test_an_entry_without_forward_formula_gets_a_derived_one(tmp_path: Path) -> None:
    (info,) = _load(tmp_path, _mul(""))
    (f,) = info.forward_derivatives
    assert f.kind == "derived"
    assert f.rendered == (
        "derived_jvp(mul_Tensor, {'input': self, 'other': other}, "
        "{'input': self_t, 'other': other_t})"
    )


@pytest.mark.parametrize(
    ("line", "quoted"),
    [
        (
            "  result: other_t * self + self_t * other_p\n",
            "is using the base name of the self argument which is ambiguous. You "
            "should use self_p to access the primal value and self_t to access the "
            "tangent",
        ),
        ("  result: self_t * othr_p\n", "unknown name 'othr_p'"),
        ("  result: self_t.sum()\n", "'self_t.sum'"),
        (
            "  result: auto_element_wise\n",
            "only works for functions with a single differentiable input",
        ),
    ],
)
def test_bad_forward_formula_is_reported_at_its_line(
    tmp_path: Path, line: str, quoted: str
) -> None:
    with pytest.raises(GenError) as error:
        _load(tmp_path, _mul(line))
    assert str(error.value).startswith(f"derivatives.yaml:5: {MUL}: ")
    assert quoted in str(error.value)


def test_every_differentiable_entry_of_the_real_yaml_has_a_forward_derivative() -> None:
    infos = load_derivatives(REPO_ROOT / "derivatives.yaml")
    kinds = {f.kind for i in infos if i.op is not None for f in i.forward_derivatives}
    assert all(i.forward_derivatives for i in infos if i.op is not None)
    assert kinds == {
        "formula",
        "auto_element_wise",
        "auto_linear",
        "derived",
        "not_implemented",
    }
