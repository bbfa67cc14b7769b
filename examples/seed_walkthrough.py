"""The seed examples, step by step: what the graph holds and how the engine runs it.

    python examples/seed_walkthrough.py

1. `Q = 3*a**3 - b**2` (the README's example): each node's grad_fn class, its
   next_functions and the values it saved, then the order the engine runs the
   nodes in (observed with node pre-hooks), and the gradients.
2. A one-hidden-layer network, `loss = ((relu(x @ W1 + b1) @ W2 + b2 - y)**2).mean()`:
   the same walk over a bigger graph.
"""

from __future__ import annotations

import yamlgrad as yg
from yamlgrad.runtime.autograd.accumulate_grad import AccumulateGrad
from yamlgrad.runtime.autograd.node import Node


def label(node: Node | None, names: dict[int, str]) -> str:
    """A node's class name; a leaf's AccumulateGrad with the leaf's name."""
    if node is None:
        return "None"
    if isinstance(node, AccumulateGrad):
        return f"AccumulateGrad({names.get(id(node.variable), '?')})"
    return node.name()


def nodes_of(root: Node) -> list[Node]:
    """Every node reachable from `root`, each once, in depth-first order."""
    found, stack, seen = [], [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        found.append(node)
        stack += [n for n, _ in reversed(node.next_functions) if n is not None]
    return found


def describe(root: Node, names: dict[int, str]) -> list[Node]:
    """Print each node: next_functions and saved values."""
    nodes = nodes_of(root)
    for node in nodes:
        print(f"  {label(node, names)}")
        nexts = ", ".join(f"({label(n, names)}, {nr})" for n, nr in node.next_functions)
        print(f"    next_functions: ({nexts})")
        for slot in sorted(getattr(type(node), "__slots__", ())):
            if slot.startswith("_raw_saved_"):
                value = getattr(node, slot[len("_raw") :])
                print(f"    {slot[len('_raw') :]}: {value}")
            elif slot.startswith("_saved_"):
                print(f"    {slot}: {getattr(node, slot)!r}")
    return nodes


def run_order(loss: yg.Tensor, names: dict[int, str]) -> list[str]:
    """Backward with a pre-hook on every node: the order the engine runs them."""
    order: list[str] = []
    handles = []
    for node in nodes_of(loss.grad_fn):
        text = label(node, names)
        handles.append(node.register_prehook(lambda grads, t=text: order.append(t)))
    loss.backward()
    for handle in handles:
        handle.remove()
    print("  engine order: " + " -> ".join(order))
    return order


def seed_example() -> None:
    print("== Q = 3*a**3 - b**2 ==")
    a = yg.tensor([2.0, 3.0], requires_grad=True)
    b = yg.tensor([6.0, 4.0], requires_grad=True)
    names = {id(a): "a", id(b): "b"}
    Q = 3 * a**3 - b**2
    print(f"  Q = {Q}")
    describe(Q.grad_fn, names)
    run_order(Q.sum(), names)
    print(f"  a.grad = {a.grad}   (9 * a**2)")
    print(f"  b.grad = {b.grad}   (-2 * b)")


def network_example() -> None:
    print("== a small network: ((relu(x @ W1 + b1) @ W2 + b2 - y)**2).mean() ==")
    yg.manual_seed(0)
    x, y = yg.randn(4, 3), yg.randn(4, 1)
    W1 = yg.randn(3, 5, requires_grad=True)
    b1 = yg.zeros(5, requires_grad=True)
    W2 = yg.randn(5, 1, requires_grad=True)
    b2 = yg.zeros(1, requires_grad=True)
    names = {id(W1): "W1", id(b1): "b1", id(W2): "W2", id(b2): "b2"}
    hidden = (x @ W1 + b1).relu()
    loss = ((hidden @ W2 + b2 - y) ** 2).mean()
    print(f"  loss = {loss}")
    describe(loss.grad_fn, names)
    run_order(loss, names)
    for name, p in (("W1", W1), ("b1", b1), ("W2", W2), ("b2", b2)):
        print(f"  {name}.grad shape {tuple(p.grad.shape)}")


if __name__ == "__main__":
    seed_example()
    print()
    network_example()
