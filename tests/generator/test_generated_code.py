"""The generated code reads as PyTorch's: each wrapper spells every step the same
way through the wrappers layer's helpers, and each node runs its formulas as the
YAML (and its docstring) writes them."""

from __future__ import annotations

import ast
import statistics
from pathlib import Path

import pytest

from yamlgrad.tools.expressions import canonical
from yamlgrad.tools.load import load_derivatives

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "generated"
VARIABLE_TYPE = (GENERATED / "VariableType.py").read_text(encoding="utf-8")
FUNCTIONS = (GENERATED / "Functions.py").read_text(encoding="utf-8")
HISTORY = ("set_history(", "set_history_outputs(", "rebase_history(")
HISTORY += ("set_history_inplace_view(",)


def _wrappers() -> dict[str, str]:
    """Each op wrapper's source (the functions whose docstring is a schema)."""
    tree = ast.parse(VARIABLE_TYPE)
    return {
        node.name: ast.get_source_segment(VARIABLE_TYPE, node) or ""
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and (ast.get_docstring(node) or "").startswith("`")
    }


WRAPPERS = _wrappers()
RECORDING = {name: text for name, text in WRAPPERS.items() if "grad_fn = " in text}


def test_every_recording_wrapper_collects_edges_and_sets_history() -> None:
    assert len(RECORDING) > 200
    for name, text in RECORDING.items():
        assert "if compute_requires_grad(" in text, name
        # black may break a long call after its first parenthesis
        # (_thnn_fused_lstm_cell's five tensors): compared without whitespace.
        flat = "".join(text.split())
        assert "grad_fn.set_next_edges(collect_next_edges(" in flat, name
        assert any(call in text for call in HISTORY), name
        assert "if grad_fn is not None:" in text, name


def test_the_median_wrapper_is_short() -> None:
    """About 22 lines of reverse mode, and the forward-grad block (PyTorch's
    `isFwGradDefined` ... `_set_fw_grad`, about 6 more)."""
    lengths = [text.count("\n") + 1 for text in WRAPPERS.values()]
    assert statistics.median(lengths) <= 28


def test_the_architecture_page_shows_the_generated_code() -> None:
    """docs/architecture.md's excerpt is mul_Tensor and MulBackward0.apply as
    generated (black's layout, line for line)."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    excerpt = page.split("def mul_Tensor(", 1)[1].split("\n```", 1)[0]
    excerpt = "def mul_Tensor(" + excerpt
    assert WRAPPERS["mul_Tensor"] + "\n" in excerpt
    tree = ast.parse(FUNCTIONS)
    node = next(
        n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "MulBackward0"
    )
    apply = next(n for n in node.body if getattr(n, "name", "") == "apply")
    lines = FUNCTIONS.splitlines()[apply.lineno - 1 : apply.end_lineno]
    assert "\n".join(lines) in excerpt


def test_wrappers_inline_no_runtime_internals() -> None:
    """Node.__init__, Tensor._make's body, set_history and anomaly recording live
    in their helpers, not in each wrapper."""
    for name, text in WRAPPERS.items():
        for internal in ("._seq", "._next_edges", "._input_metadata", "_anomaly"):
            assert internal not in text, (name, internal)
        assert "_grad_mode" not in text and "InferenceTensor" not in text, name


def test_saved_tensors_go_through_saved_variable() -> None:
    """A Python number given for a tensor too: one path, no sentinel branch."""
    for name, text in WRAPPERS.items():
        assert "isinstance(" not in text, name
    assert "RELEASED" not in FUNCTIONS


def test_no_fused_temporaries_in_the_nodes() -> None:
    assert "fused(" not in FUNCTIONS


def _applies() -> dict[str, str]:
    tree = ast.parse(FUNCTIONS)
    return {
        node.name: ast.get_source_segment(FUNCTIONS, item) or ""
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        for item in node.body
        if isinstance(item, ast.FunctionDef) and item.name == "apply"
    }


APPLIES = _applies()
INFOS = [
    i
    for i in load_derivatives(ROOT / "derivatives.yaml")
    if i.op is not None and not i.reuses_node
]


def _expressions(text: str) -> set[str]:
    """Every expression in a function, as ast prints it (black's line breaks gone)."""
    return {
        ast.unparse(n) for n in ast.walk(ast.parse(text)) if isinstance(n, ast.expr)
    }


@pytest.mark.parametrize("info", INFOS, ids=lambda i: i.op)
def test_apply_runs_the_formula_its_docstring_shows(info: object) -> None:
    apply = APPLIES[info.op]  # type: ignore[attr-defined]
    expressions = _expressions(apply)
    for d in info.derivatives:  # type: ignore[attr-defined]
        assert f"{d.var_name}: {d.original_formula}" in FUNCTIONS
        assert canonical(d.formula) in expressions, (info.op, d.formula)  # type: ignore[attr-defined]
        assert "task_should_compute_output(" in apply
    # Each saved value unpacked once, at the top.
    for s in info.all_saved:  # type: ignore[attr-defined]
        assert apply.count(f"{s.local} = self.{s.attr}") == 1, (info.op, s.attr)  # type: ignore[attr-defined]


def test_a_lone_int_for_an_int_n_argument_is_expanded_once_in_the_wrapper() -> None:
    import numpy as np

    import yamlgrad as yg
    from yamlgrad.generated import VariableType

    wrapper = WRAPPERS["avg_pool2d"]
    assert '"avg_pool2d", "kernel_size", 2, size=2)' in wrapper
    x = yg.tensor(np.arange(32.0).reshape(1, 2, 4, 4), requires_grad=True)
    lone = VariableType.max_pool2d_with_indices(x, 2, 1, 0, 1)
    pairs = VariableType.max_pool2d_with_indices(x, (2, 2), (1, 1), (0, 0), (1, 1))
    np.testing.assert_array_equal(lone[0].detach().numpy(), pairs[0].detach().numpy())
    assert VariableType.avg_pool2d(x, 2).grad_fn._saved_kernel_size == (2, 2)
