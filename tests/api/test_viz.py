"""yg.viz.make_dot: the graph of the README's seed example, read back from the DOT."""

from __future__ import annotations

import re
import shutil

import pytest

import yamlgrad as yg
from yamlgrad.runtime.autograd.accumulate_grad import AccumulateGrad
from yamlgrad.viz import ExecutableNotFound, make_dot

NODE = re.compile(r'^\t(\w+) \[label="((?:[^"\\]|\\.)*)"(.*)\]$')
EDGE = re.compile(r"^\t(\w+) -> (\w+)(?: \[(.*)\])?$")


def parse(source: str) -> tuple[dict[str, str], set[tuple[str, str]]]:
    """Labels by node id, and the (tail label, head label) pairs of the edges."""
    assert source.startswith("digraph {\n") and source.endswith("}\n")
    labels: dict[str, str] = {}
    edges: list[tuple[str, str]] = []
    for line in source.splitlines()[1:-1]:
        if m := NODE.match(line):
            labels[m.group(1)] = m.group(2).replace("\\n", "\n")
        elif m := EDGE.match(line):
            edges.append((m.group(1), m.group(2)))
        else:
            assert line.startswith(("\tgraph ", "\tnode ")), line
    return labels, {(labels[t], labels[h]) for t, h in edges}


def seed() -> tuple[yg.Tensor, yg.Tensor, yg.Tensor]:
    a = yg.tensor([2.0, 3.0], requires_grad=True)
    b = yg.tensor([6.0, 4.0], requires_grad=True)
    return a, b, 3 * a**3 - b**2


def test_seed_example_nodes_and_edges() -> None:
    a, b, Q = seed()
    labels, edges = parse(make_dot(Q, params=dict(a=a, b=b)).source)
    assert sorted(labels.values()) == sorted(
        [
            "(2,)",  # the output
            "SubBackward0",
            "MulBackward0",
            "PowBackward0",
            "PowBackward0",
            "_saved_self\n (2,)",  # a, saved by a**3
            "_saved_self\n (2,)",  # b, saved by b**2
            "_saved_other\n ()",  # the 3 of 3 * a**3, saved as PyTorch wraps it
            "a\n (2,)",
            "b\n (2,)",
        ]
    )
    assert edges == {
        ("SubBackward0", "(2,)"),
        ("MulBackward0", "SubBackward0"),
        ("PowBackward0", "SubBackward0"),
        ("PowBackward0", "MulBackward0"),
        ("a\n (2,)", "PowBackward0"),
        ("b\n (2,)", "PowBackward0"),
        ("_saved_self\n (2,)", "PowBackward0"),
        ("_saved_other\n ()", "MulBackward0"),
    }


def test_edges_follow_next_functions() -> None:
    """The edges between nodes are exactly the graph's next_functions."""
    a, b, Q = seed()
    names = {id(a): "a\n (2,)", id(b): "b\n (2,)"}
    expected, stack = [], [Q.grad_fn]
    while stack:
        fn = stack.pop()
        for nxt, _ in fn.next_functions:
            if isinstance(nxt, AccumulateGrad):
                expected.append((names[id(nxt.variable)], fn.name()))
            elif nxt is not None:
                expected.append((nxt.name(), fn.name()))
                stack.append(nxt)
    dot = make_dot(Q, params=dict(a=a, b=b), show_saved=False)
    labels, _ = parse(dot.source)
    assert not any(label.startswith("_saved_") for label in labels.values())
    drawn = [(labels[t], labels[h]) for t, h, attrs in dot.edges if not attrs]
    assert sorted(drawn) == sorted(expected)
    assert len(expected) == 5


def test_show_attrs_lists_non_tensor_saved_values() -> None:
    _, _, Q = seed()
    labels, _ = parse(make_dot(Q, show_attrs=True).source)
    assert "PowBackward0\nexponent: 3" in labels.values()
    assert "PowBackward0\nexponent: 2" in labels.values()
    # The 3 of `3 * a**3` is saved as a 0-d tensor (PyTorch's), drawn as one.
    assert "MulBackward0" in labels.values()
    # Unnamed leaves show their shape only.
    assert list(labels.values()).count("(2,)") == 3


def test_several_outputs_and_a_leaf_output() -> None:
    x = yg.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    y = (x * x).sum()
    labels, edges = parse(make_dot([y, x], params={"x": x}).source)
    assert ("SumBackward0", "()") in edges
    assert ("x\n (1, 3)", "(1, 3)") in edges  # the leaf, drawn as its own output
    assert ("x\n (1, 3)", "MulBackward0") in edges
    assert list(labels.values()).count("_saved_self\n (1, 3)") == 1
    assert list(labels.values()).count("_saved_other\n (1, 3)") == 1


def test_freed_saved_values_after_backward() -> None:
    _, _, Q = seed()
    Q.sum().backward()
    labels, _ = parse(make_dot(Q).source)
    assert list(labels.values()).count("_saved_self\n freed") == 2


def test_deep_graph_is_drawn_without_recursion() -> None:
    x = yg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0001
    dot = make_dot(y, show_saved=False)
    labels, _ = parse(dot.source)
    assert list(labels.values()).count("MulBackward0") == 5000
    assert len(dot.edges) == 5001


def test_labels_are_escaped() -> None:
    x = yg.tensor(1.0, requires_grad=True)
    source = make_dot(x * 2, params={'say "hi"\\': x}).source
    labels, _ = parse(source)
    assert 'say \\"hi\\"\\\\\n ()' in labels.values()


def test_render(tmp_path) -> None:
    """Renders with Graphviz when `dot` is on PATH (`apt-get install graphviz`);
    without it, the error names how to install it."""
    _, _, Q = seed()
    dot = make_dot(Q)
    if shutil.which("dot") is None:
        with pytest.raises(ExecutableNotFound, match="apt-get install graphviz"):
            dot.render(tmp_path / "graph.svg")
        return
    svg = dot.render(tmp_path / "graph.svg")
    text = svg.read_text()
    assert "<svg" in text and "SubBackward0" in text and "PowBackward0" in text
    png = dot.render(tmp_path / "graph", format="png")
    assert png.name == "graph.png"
    assert png.read_bytes().startswith(b"\x89PNG")


def test_render_without_graphviz_names_the_fix(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", "")
    _, _, Q = seed()
    with pytest.raises(ExecutableNotFound, match="apt-get install graphviz"):
        make_dot(Q).render(tmp_path / "graph.svg")
    assert not (tmp_path / "graph.svg").exists()
    assert make_dot(Q).source.startswith("digraph {")
