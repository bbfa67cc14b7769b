"""yg.compile: tracing, guards, retracing, closures, fallback, errors, in-place
ops, and the one CompiledFunctionBackward node inside autograd."""

from __future__ import annotations

import copy
import pickle
import re
import warnings
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.runtime import compile as compile_module


def _leaf(*shape: int, dtype: object = np.float64, seed: int = 0) -> yg.Tensor:
    rng = np.random.default_rng(seed)
    return yg.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True)


def _graphs(compiled: compile_module.CompiledFunction) -> int:
    return sum(len(g) for g in compiled.graphs.values() if isinstance(g, list))


def mlp_loss(x: yg.Tensor, w: yg.Tensor, b: yg.Tensor) -> yg.Tensor:
    return ((x @ w + b).tanh() ** 2).mean()


def test_values_and_gradients_match_eager_through_one_node() -> None:
    x, w, b = _leaf(5, 3), _leaf(3, 4, seed=1), _leaf(4, seed=2)
    loss = yg.compile(mlp_loss)(x, w, b)
    assert type(loss.grad_fn).__name__ == "CompiledFunctionBackward"
    assert loss.grad_fn.name() == "CompiledFunctionBackward"
    assert [type(n).__name__ for n, _ in loss.grad_fn.next_functions] == [
        "AccumulateGrad"
    ] * 3
    loss.backward()
    got = [t.grad.numpy().copy() for t in (x, w, b)]
    for t in (x, w, b):
        t.grad = None
    want = mlp_loss(x, w, b)
    want.backward()
    np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-12)
    for g, t in zip(got, (x, w, b)):
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-12)


def test_decorator_forms_and_the_generated_source() -> None:
    @yg.compile
    def square(x: yg.Tensor) -> yg.Tensor:
        return x * x

    @yg.compile(format_source=True)
    def cube(x: yg.Tensor) -> yg.Tensor:
        return x * x * x

    x = _leaf(3)
    square(x), cube(x)
    assert "def forward(x):" in square.code
    assert "np.multiply(x, x)" in square.code and "def backward(" in square.code
    assert "templates/compiled.py.j2" in cube.code
    explained = cube.explanation()
    assert "guards:" in explained and "graph:" in explained and "source:" in explained


def test_float32_stays_float32() -> None:
    x, w, b = (
        _leaf(4, 3, dtype=np.float32),
        _leaf(3, 2, dtype=np.float32, seed=1),
        _leaf(2, dtype=np.float32, seed=2),
    )
    loss = yg.compile(mlp_loss)(x, w, b)
    loss.backward()
    assert loss.dtype == yg.float32
    assert all(t.grad.dtype == yg.float32 for t in (x, w, b))


def test_a_new_signature_retraces_and_the_same_one_reuses_the_graph() -> None:
    f = yg.compile(lambda x: (x * 2).sum())
    f(_leaf(3))
    f(_leaf(3, seed=1))
    assert _graphs(f) == 1
    f(_leaf(4))  # shape
    f(_leaf(3, dtype=np.float32))  # dtype
    f(yg.tensor(np.ones(3)))  # requires_grad
    with yg.no_grad():  # grad mode
        out = f(_leaf(3))
    assert not out.requires_grad and out.grad_fn is None
    assert _graphs(f) == 5
    assert any("grad mode" in r for r in f.recompile_reasons)


def test_python_scalars_are_part_of_the_signature() -> None:
    f = yg.compile(lambda x, k: x * k)
    x = _leaf(2)
    np.testing.assert_allclose(f(x, 2.0).detach().numpy(), x.detach().numpy() * 2)
    np.testing.assert_allclose(f(x, 3.0).detach().numpy(), x.detach().numpy() * 3)
    assert _graphs(f) == 2


def test_closure_parameters_are_read_fresh_after_an_optimizer_step() -> None:
    yg.manual_seed(0)
    model = yg.nn.Linear(3, 2)
    x = yg.tensor(np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32))
    step = yg.compile(lambda x: (model(x) ** 2).sum())
    optimizer = yg.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        optimizer.zero_grad()
        loss = step(x)
        loss.backward()
        grads = [p.grad.numpy().copy() for p in model.parameters()]
        optimizer.zero_grad()
        eager = (model(x) ** 2).sum()
        eager.backward()
        np.testing.assert_allclose(loss.item(), eager.item(), rtol=1e-6)
        for g, p in zip(grads, model.parameters()):
            np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-5)
        optimizer.step()
    assert _graphs(step) == 1


def test_a_replaced_closure_tensor_fails_its_guard() -> None:
    holder = {"w": _leaf(3)}
    f = yg.compile(lambda x: x * holder["w"])
    x = _leaf(3, seed=1)
    f(x)
    holder["w"] = _leaf(3, seed=2)
    out = f(x)
    np.testing.assert_allclose(
        out.detach().numpy(), x.detach().numpy() * holder["w"].detach().numpy()
    )
    assert _graphs(f) == 2
    assert "closure" in f.recompile_reasons[-1]


def test_a_tensor_made_inside_the_function_is_a_constant() -> None:
    f = yg.compile(lambda x: x + yg.ones(3))
    x = _leaf(3)
    f(x)
    out = f(x)
    np.testing.assert_allclose(out.detach().numpy(), x.detach().numpy() + 1)
    assert "constant" in f.explanation()


@pytest.mark.parametrize(
    "read",
    [
        lambda t: t.item(),
        lambda t: bool(t),
        lambda t: t.tolist(),
        lambda t: t.detach().numpy(),
        lambda t: np.asarray(t).sum(),
        lambda t: copy.deepcopy(t.detach()).sum() > 0,
        lambda t: pickle.dumps(t.detach()) is None,
        lambda t: copy.copy(t.detach()) is None,
    ],
    ids=["item", "bool", "tolist", "numpy", "asarray", "deepcopy", "pickle", "copy"],
)
def test_data_dependent_python_raises_naming_the_line(read: object) -> None:
    def f(x: yg.Tensor) -> yg.Tensor:
        if read(x.sum()):  # noqa: the line the error names
            return x * 2
        return x

    with pytest.raises(compile_module.TraceError) as info:
        yg.compile(f)(_leaf(1))
    message = str(info.value)
    assert re.search(r"test_compile\.py:\d+", message)
    assert "yg.compile(fn, fallback=True)" in message


@pytest.mark.parametrize(
    "read", [float, bool, lambda t: t.item(), lambda t: t.tolist(), np.asarray]
)
def test_reading_a_tensor_from_outside_raises_and_its_value_is_not_baked(
    read: object,
) -> None:
    """A buffer or a closure's tensor read into Python would be a constant of the
    graph, stale once the tensor changes: the trace refuses, as for arguments."""
    scale = yg.tensor([2.0])

    def f(x: yg.Tensor) -> yg.Tensor:
        return x * float(np.asarray(read(scale)).sum())

    with pytest.raises(compile_module.TraceError, match=r"test_compile\.py:\d+"):
        yg.compile(f)(_leaf(3))
    assert read(scale) is not None  # outside a trace, reading is as before
    compiled = yg.compile(f, fallback=True)
    x = _leaf(3)
    for value in (2.0, 5.0, 0.0):  # each call sees the tensor's value now
        scale.data = yg.tensor([value])
        want = f(x).detach().numpy()
        np.testing.assert_allclose(compiled(x).detach().numpy(), want)


def test_another_threads_reads_during_a_trace_are_its_own() -> None:
    import threading

    seen: list[float] = []
    other = yg.tensor([3.0])

    def f(x: yg.Tensor) -> yg.Tensor:
        reader = threading.Thread(target=lambda: seen.append(other.item()))
        reader.start()
        reader.join()
        return x * 2

    yg.compile(f)(_leaf(2))
    assert seen == [3.0]


def test_a_backward_inside_the_function_raises_naming_the_line() -> None:
    """A training step with loss.backward() and the optimizer's step inside: no
    graph holds it (the trace runs under no_grad), so it raises; with fallback
    it runs eagerly, as each call of it would without yg.compile."""
    model = yg.nn.Linear(3, 2).double()
    twin = copy.deepcopy(model)
    x, y = _leaf(4, 3).detach(), _leaf(4, 2, seed=1).detach()

    def step(m: yg.nn.Module, optimizer: yg.optim.Optimizer) -> yg.Tensor:
        optimizer.zero_grad()
        loss = ((m(x) - y) ** 2).mean()
        loss.backward()  # the line the error names
        optimizer.step()
        return loss

    sgd = yg.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(
        compile_module.TraceError, match=r"backward\(\) \(at .*test_compile\.py:\d+"
    ):
        yg.compile(step)(model, sgd)
    compiled = yg.compile(step, fallback=True)
    twin_sgd = yg.optim.SGD(twin.parameters(), lr=0.1)
    for _ in range(2):
        got, want = compiled(model, sgd), step(twin, twin_sgd)
        assert got.item() == want.item()
    np.testing.assert_array_equal(
        model.weight.detach().numpy(), twin.weight.detach().numpy()
    )


@pytest.mark.parametrize("how", ["autograd.grad", "func.grad"])
def test_a_gradient_taken_inside_the_function_raises(how: str) -> None:
    def inner(x: yg.Tensor) -> yg.Tensor:
        return (x.sin() * x).sum()

    if how == "func.grad":
        f = yg.func.grad(inner)
    else:

        def f(x: yg.Tensor) -> yg.Tensor:
            x = x.detach().requires_grad_()
            return yg.autograd.grad(inner(x), x)[0]

    x = _leaf(3).detach()
    with pytest.raises(compile_module.TraceError, match="cannot trace"):
        yg.compile(f)(x)
    np.testing.assert_array_equal(yg.compile(f, fallback=True)(x).numpy(), f(x).numpy())


def test_fallback_runs_such_functions_eagerly() -> None:
    def f(x: yg.Tensor) -> yg.Tensor:
        return x * 2 if x.sum().item() > 0 else x * 3

    compiled = yg.compile(f, fallback=True)
    x = yg.tensor([1.0, 2.0], requires_grad=True)
    out = compiled(x)
    np.testing.assert_allclose(out.detach().numpy(), [2.0, 4.0])
    assert type(out.grad_fn).__name__ == "MulBackward0"
    out = compiled(x)
    assert type(out.grad_fn).__name__ == "MulBackward0"


def test_a_random_draw_in_the_function_raises() -> None:
    f = yg.compile(lambda x: yg.nn.functional.dropout(x, 0.5))
    with pytest.raises(compile_module.TraceError, match="random draw"):
        f(_leaf(4))


def test_double_backward_through_a_compiled_node() -> None:
    f = yg.compile(lambda x: (x.sin() * x).sum())
    x = _leaf(4)
    (g,) = yg.autograd.grad(f(x), x, create_graph=True)
    (gg,) = yg.autograd.grad(g.sum(), x)
    x2 = yg.tensor(x.detach().numpy(), requires_grad=True)
    (g2,) = yg.autograd.grad((x2.sin() * x2).sum(), x2, create_graph=True)
    (gg2,) = yg.autograd.grad(g2.sum(), x2)
    np.testing.assert_allclose(g.detach().numpy(), g2.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(gg.numpy(), gg2.numpy(), rtol=1e-12)


def test_hooks_retain_grad_and_autograd_grad_work() -> None:
    f = yg.compile(lambda x: x.exp())
    x = _leaf(3)
    seen = []
    x.register_hook(lambda g: seen.append(g) or g * 2)
    y = f(x)
    y.retain_grad()
    y.sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), np.ones(3))
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(x.detach().numpy()))
    assert len(seen) == 1
    (g,) = yg.autograd.grad(f(x).sum(), x)  # the leaf's hook runs here too
    np.testing.assert_allclose(g.numpy(), 2 * np.exp(x.detach().numpy()))


def test_backward_twice_raises_as_eager() -> None:
    y = yg.compile(lambda x: (x * x).sum())(_leaf(3))
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_an_input_changed_in_place_after_forward_is_caught() -> None:
    x = _leaf(3)
    a = x * 1
    y = yg.compile(lambda a: (a * a).sum())(a)
    with yg.no_grad():
        a.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_an_input_backward_does_not_read_may_change_but_not_before_a_replay() -> None:
    w = _leaf(3)
    f = yg.compile(lambda w: (w * 3.0).exp().sum())  # w's gradient needs no w
    y = f(w)
    with yg.no_grad():
        w.add_(1.0)  # as an optimizer step would
    y.backward(retain_graph=True)  # first order: as eager, nothing to check
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        yg.autograd.grad(y, w, create_graph=True)  # a replay recomputes from w


def test_leaves_with_hooks_and_many_leaves_get_their_gradients() -> None:
    leaves = [_leaf(1, seed=i) for i in range(40)]
    seen: list[int] = []
    leaves[3].register_post_accumulate_grad_hook(lambda t: seen.append(3))
    leaves[5].register_hook(lambda g: g * 10)
    total = yg.compile(lambda *xs: sum(x * float(i) for i, x in enumerate(xs)))
    total(*leaves).sum().backward()
    assert seen == [3]
    got = [t.grad.numpy()[0] for t in leaves]
    assert got == [float(i) * (10 if i == 5 else 1) for i in range(40)]


def test_an_output_changed_in_place_after_forward_is_caught() -> None:
    y = yg.compile(lambda x: x.exp())(_leaf(3))
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_in_place_on_an_intermediate_is_traced_functionally() -> None:
    def f(x: yg.Tensor) -> yg.Tensor:
        y = x * 2
        y.add_(1)
        y.mul_(x)
        return y

    x = _leaf(3)
    out = yg.compile(f)(x)
    out.sum().backward()
    value = x.detach().numpy()
    np.testing.assert_allclose(out.detach().numpy(), (2 * value + 1) * value)
    np.testing.assert_allclose(x.grad.numpy(), 4 * value + 1)


def test_in_place_on_an_input_is_written_back() -> None:
    f = yg.compile(lambda buffer, x: buffer.add_(x.sum()))
    buffer = yg.zeros(2)
    x = yg.tensor([1.0, 2.0])
    f(buffer, x)
    version = buffer._version
    f(buffer, x)
    np.testing.assert_allclose(buffer.numpy(), [6.0, 6.0])
    assert buffer._version == version + 1


def test_in_place_on_a_leaf_that_requires_grad_raises_as_eager() -> None:
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        yg.compile(lambda x: x.add_(1))(_leaf(2))


def test_outputs_keep_their_structure() -> None:
    def f(x: yg.Tensor) -> object:
        values, indices = x.max(0)
        return {"values": values, "pair": (x * 2, 7), "indices": indices}

    x = _leaf(3, 2)
    out = yg.compile(f)(x)
    assert out["pair"][1] == 7
    assert out["indices"].dtype == yg.int64 and not out["indices"].requires_grad
    (out["values"].sum() + out["pair"][0].sum()).backward()
    want = 2 + (np.argmax(x.detach().numpy(), 0) == np.arange(3)[:, None])
    np.testing.assert_allclose(x.grad.numpy(), want)


def test_the_cache_is_bounded_with_a_warning_naming_the_reason(monkeypatch) -> None:
    monkeypatch.setattr(compile_module, "cache_size_limit", 2)
    f = yg.compile(lambda x: x * 2)
    f(_leaf(1))
    f(_leaf(2))
    with pytest.warns(UserWarning, match=r"cache_size_limit \(2\).*shape changed"):
        out = f(_leaf(3))
    assert type(out.grad_fn).__name__ == "MulBackward0"  # eager from now on
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(_leaf(4))  # warned once


def test_a_compiled_function_called_while_tracing_is_traced_inline() -> None:
    inner = yg.compile(lambda x: x.sin())
    outer = yg.compile(lambda x: inner(x) * 2)
    x = _leaf(3)
    out = outer(x)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(x.detach().numpy()))
    assert "np.sin" in outer.code or "sin(" in outer.code


def test_returning_an_input_and_taking_integer_tensors() -> None:
    f = yg.compile(lambda x, index: (x, x[index]))
    x = _leaf(4)
    same, picked = f(x, yg.tensor([0, 2]))
    (same.sum() + picked.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 1.0, 2.0, 1.0])


def test_one_gradient_array_given_to_two_leaves_is_copied_for_one() -> None:
    a, b = _leaf(300), _leaf(300, seed=1)
    yg.compile(lambda a, b: (a + b).sum())(a, b).backward()  # one array, twice
    ga, gb = a.grad.numpy(), b.grad.numpy()
    assert not np.shares_memory(ga, gb)
    ga += 1.0
    np.testing.assert_array_equal(gb, np.ones(300))


def test_many_leaves_accumulate_into_their_grads_and_node_hooks_run() -> None:
    leaves = [_leaf(2, seed=i) for i in range(30)]
    total = yg.compile(lambda *xs: sum(x * float(i) for i, x in enumerate(xs)))
    total(*leaves).sum().backward()
    first = [t.grad for t in leaves]
    out = total(*leaves)
    seen: list[int] = []
    node = out.grad_fn.next_functions[7][0]
    assert type(node).__name__ == "AccumulateGrad"
    node.register_hook(lambda grad_inputs, grad_outputs: seen.append(7))
    out.sum().backward()
    assert seen == [7]
    for i, t in enumerate(leaves):
        assert t.grad is first[i]  # added in place: .grad keeps its identity
        np.testing.assert_array_equal(t.grad.numpy(), [2.0 * i, 2.0 * i])


def test_fresh_leaves_get_their_accumulate_grads_only_when_the_edges_are_read() -> None:
    a, b = _leaf(3), _leaf(3, seed=1)
    f = yg.compile(lambda a, b: (a * b).sum())
    f(a, b).backward()  # straight from the compiled node into the leaves
    assert a._grad_accumulator is None and b._grad_accumulator is None
    np.testing.assert_allclose(a.grad.numpy(), b.detach().numpy())
    np.testing.assert_allclose(b.grad.numpy(), a.detach().numpy())
    y = f(a, b)
    nodes = [node for node, _ in y.grad_fn.next_functions]
    assert [type(n).__name__ for n in nodes] == ["AccumulateGrad"] * 2
    assert nodes[0].variable is a and nodes[1].variable is b
    assert (a * 2).grad_fn.next_functions[0][0] is nodes[0]  # one node per leaf
    y.backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * b.detach().numpy())


def test_hooks_added_after_a_compiled_call_run_in_its_backward() -> None:
    f = yg.compile(lambda a, b: (a * b).sum())
    seen: list[str] = []

    def backward_with(hook: str) -> tuple[yg.Tensor, np.ndarray]:
        a, b = _leaf(2), _leaf(2, seed=1)
        y = f(a, b)  # then a hook of one kind on the leaf a
        if hook == "tensor":
            a.register_hook(lambda g: g * 10)
        elif hook == "post accumulate":
            a.register_post_accumulate_grad_hook(lambda t: seen.append(hook))
        else:  # on a's AccumulateGrad, made by another op since
            node = (a * 1).grad_fn.next_functions[0][0]
            node.register_hook(lambda grad_inputs, grad_outputs: seen.append(hook))
        y.backward()
        return a, b.detach().numpy()

    a, b = backward_with("tensor")
    np.testing.assert_allclose(a.grad.numpy(), 10 * b)
    for hook in ("post accumulate", "node"):
        a, b = backward_with(hook)
        np.testing.assert_allclose(a.grad.numpy(), b)
    assert seen == ["post accumulate", "node"]


def test_a_leaf_passed_twice_takes_both_gradients() -> None:
    a = _leaf(4)
    y = yg.compile(lambda a, b: (a * b).sum())(a, a)
    y.backward(retain_graph=True)
    np.testing.assert_allclose(a.grad.numpy(), 2 * a.detach().numpy())
    y.backward()
    np.testing.assert_allclose(a.grad.numpy(), 4 * a.detach().numpy())


def test_the_seed_of_a_one_element_output_has_its_shape_and_dtype() -> None:
    a = _leaf(3, dtype=np.float32)
    y = yg.compile(lambda a: (a * a).sum().reshape(1, 1))(a)
    y.backward()
    assert a.grad.dtype == yg.float32
    np.testing.assert_allclose(a.grad.numpy(), 2 * a.detach().numpy(), rtol=1e-6)
    z = a * 1.0
    (z.sum().reshape(1)).backward()  # an eager root, seeded the same way
    np.testing.assert_allclose(a.grad.numpy(), 2 * a.detach().numpy() + 1, rtol=1e-6)


# -- detach, no_grad and .data inside a traced function --------------------------------


def _under_no_grad(lib: Any, a: Any) -> Any:
    with lib.no_grad():
        m = a.mean()
    return (a * m).sum()


def _enable_grad_inside_no_grad(lib: Any, a: Any) -> Any:
    with lib.no_grad():
        m = a.mean()
        with lib.enable_grad():
            k = (a * 3).sum()
    return (a * m).sum() + k


def _stable_log_softmax(lib: Any, a: Any) -> Any:
    shifted = a - a.amax(dim=1, keepdim=True).detach()
    return (shifted - shifted.exp().sum(1, keepdim=True).log()).sum()


DETACHING = {
    "detach": lambda lib, a: (a - a.amax(dim=1, keepdim=True).detach()).sum(),
    "detach twice": lambda lib, a: (a * a.detach() + a.detach().exp()).sum(),
    "detach_": lambda lib, a: ((a * 2).detach_() * a).sum(),
    "no_grad block": _under_no_grad,
    "enable_grad inside no_grad": _enable_grad_inside_no_grad,
    ".data": lambda lib, a: (a * a.data).sum(),
    "log-softmax with a detached max": _stable_log_softmax,
}


@pytest.mark.parametrize("name", sorted(DETACHING))
def test_detached_values_in_a_trace_match_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    program = DETACHING[name]
    data = np.random.default_rng(0).standard_normal((3, 4))
    compiled = yg.compile(lambda a: program(yg, a))
    t = torch.tensor(data, requires_grad=True)
    expected = program(torch, t)
    expected.backward()
    for _ in range(2):  # the trace, then the compiled graph alone
        x = yg.tensor(data, requires_grad=True)
        out = compiled(x)
        out.backward()
        np.testing.assert_allclose(out.item(), expected.item(), rtol=1e-12)
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_an_inplace_op_under_no_grad_on_a_value_that_requires_grad_is_refused() -> None:
    """Eager mode changes the value and keeps its history (its gradient is not
    its own op's): the trace says so rather than compile another gradient."""

    def step(a: yg.Tensor) -> yg.Tensor:
        b = a * 2
        with yg.no_grad():
            b.mul_(3)
        return (b * a).sum()

    x = yg.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(compile_module.TraceError, match="mul_ under no_grad"):
        yg.compile(step)(x)
    y = yg.tensor(np.ones(3), requires_grad=True)
    yg.compile(step, fallback=True)(y).backward()
    np.testing.assert_allclose(y.grad.numpy(), np.full(3, 8.0))
