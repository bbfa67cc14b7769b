"""PyTorch's placeholder formula, `not_implemented("msg")`: the one string a
formula may hold. It saves nothing, its input is left out of the gradient
checks, the generated backward raises PyTorch's text when that input needs a
gradient, and forward AD is refused as PyTorch refuses it."""

from __future__ import annotations

from pathlib import Path

import pytest

import yamlgrad as yg
from support import MUL, mul_entry
from yamlgrad.tools.load import load_derivatives
from yamlgrad.tools.model import GenError


def test_not_implemented_takes_its_message_and_saves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "derivatives.yaml"
    path.write_text(
        mul_entry("'not_implemented(\"mul: self\")'", "  other: grad * self\n")
    )
    (info,) = load_derivatives(path)
    first, second = info.derivatives
    assert first.not_implemented and not second.not_implemented
    assert first.saved == ()


@pytest.mark.parametrize(
    "formula",
    [
        "'grad * len(\"x\")'",
        '\'not_implemented("a", "b")\'',
        "'not_implemented(x=\"a\")'",
    ],
)
def test_any_other_string_is_refused(tmp_path: Path, formula: str) -> None:
    path = tmp_path / "derivatives.yaml"
    path.write_text(mul_entry(formula, "  other: grad * self\n"))
    with pytest.raises(GenError, match=MUL.split("(")[0]):
        load_derivatives(path)


def test_backward_raises_pytorchs_text_only_when_that_input_needs_it() -> None:
    a, x = yg.tensor([1.5, 2.0]), yg.tensor([0.5, 1.0])
    leaf = a.clone().requires_grad_()
    with pytest.raises(
        NotImplementedError,
        match=r"^the derivative for 'igamma: input' is not implemented\.$",
    ):
        yg.igamma(leaf, x).sum().backward()
    other = x.clone().requires_grad_()
    yg.igamma(a, other).sum().backward()
    assert other.grad is not None
    with yg.autograd.forward_ad.dual_level():
        dual = yg.autograd.forward_ad.make_dual(x, yg.ones(2))
        with pytest.raises(
            NotImplementedError, match="Trying to use forward AD with igamma"
        ):
            yg.igamma(a, dual)
