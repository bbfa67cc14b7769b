"""Differential fuzzing: random programs of yamlgrad ops, run by yamlgrad and by
torch, must agree on every value, every `grad_fn` name and every gradient; in
float64 without kinks, the gradients must also match central finite differences.

A program is a list of steps over a growing list of values (1 to 3 leaves, then
each step's output), so intermediates are reused; shapes include 0-d and size-0
dimensions, operands broadcast, some steps work on non-contiguous views, some
change a clone in place (on the whole or on a slice, as CopySlices). A failure
prints the program, and hypothesis prints the example that replays it.

CI runs a bounded, derandomized budget; to run thousands:
    YAMLGRAD_FUZZ_EXAMPLES=5000 python -m pytest tests/fuzz/test_fuzz_programs.py
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

import yamlgrad as yg

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXAMPLES = int(os.environ.get("YAMLGRAD_FUZZ_EXAMPLES", "120"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize="YAMLGRAD_FUZZ_EXAMPLES" not in os.environ,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)


def positive(lib: Any, x: Any) -> Any:
    """A smooth map into [0.5, inf), to keep log/sqrt/division in their domain."""
    return x * x + 0.5


# name -> (function of (lib, x), smooth everywhere?)
UNARY: dict[str, tuple[Callable[[Any, Any], Any], bool]] = {
    "neg": (lambda lib, x: -x, True),
    "exp": (lambda lib, x: (x * 0.5).exp(), True),
    "sin": (lambda lib, x: x.sin(), True),
    "cos": (lambda lib, x: lib.cos(x), True),
    "tanh": (lambda lib, x: x.tanh(), True),
    "sigmoid": (lambda lib, x: lib.sigmoid(x), True),
    "log": (lambda lib, x: positive(lib, x).log(), True),
    "sqrt": (lambda lib, x: lib.sqrt(positive(lib, x)), True),
    "reciprocal": (lambda lib, x: positive(lib, x).reciprocal(), True),
    "pow3": (lambda lib, x: x**3, True),
    "rsub": (lambda lib, x: 2.0 - x, True),
    "abs": (lambda lib, x: x.abs(), False),
    "relu": (lambda lib, x: lib.relu(x), False),
    "clamp": (lambda lib, x: x.clamp(-0.5, 0.7), False),
}

BINARY: dict[str, tuple[Callable[[Any, Any, Any], Any], bool]] = {
    "add": (lambda lib, a, b: a + b, True),
    "sub": (lambda lib, a, b: lib.sub(a, b, alpha=2), True),
    "mul": (lambda lib, a, b: a * b, True),
    "div": (lambda lib, a, b: a / positive(lib, b), True),
    "pow": (lambda lib, a, b: positive(lib, a) ** (b * 0.5), True),
    "maximum": (lambda lib, a, b: lib.maximum(a, b), False),
    "atan2": (lambda lib, a, b: lib.atan2(a, positive(lib, b)), True),
}


def reduce_sum(lib: Any, x: Any, dim: int, keepdim: bool) -> Any:
    return x.sum(dim=dim, keepdim=keepdim) if x.ndim else x.sum()


def reduce_mean(lib: Any, x: Any, dim: int, keepdim: bool) -> Any:
    return x.mean(dim=dim, keepdim=keepdim) if x.ndim else x.mean()


REDUCE = {"sum": reduce_sum, "mean": reduce_mean}


@dataclass(frozen=True)
class Step:
    kind: str  # unary, binary, reduce, view, inplace
    op: str
    args: tuple[int, ...]
    extra: tuple[Any, ...] = ()

    def __str__(self) -> str:
        names = ", ".join(f"v{i}" for i in self.args)
        extra = f" {self.extra}" if self.extra else ""
        return f"{self.kind}:{self.op}({names}){extra}"


def run_step(lib: Any, step: Step, values: list[Any]) -> Any:
    operands = [values[i] for i in step.args]
    if step.kind == "unary":
        return UNARY[step.op][0](lib, operands[0])
    if step.kind == "binary":
        return BINARY[step.op][0](lib, *operands)
    if step.kind == "reduce":
        return REDUCE[step.op](lib, operands[0], *step.extra)
    x = operands[0]
    if step.kind == "view":
        if step.op == "transpose":
            return x.transpose(0, -1) * 1.5
        if step.op == "stride":
            return x[::2] * 1.5
        if step.op == "unsqueeze":
            return x.unsqueeze(0) * 1.5
        return x.reshape(-1) * 1.5
    # In place on a clone: the whole tensor, or its first row (CopySlices).
    y = x.clone()
    target = y[:1] if step.op == "slice_mul_" else y
    if step.op == "add_":
        target.add_(operands[1] if len(operands) > 1 else 1.0, alpha=0.5)
    else:
        target.mul_(1.25)
    return y


def shape_strategy() -> st.SearchStrategy[tuple[int, ...]]:
    return st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple)


def broadcastable(shape: tuple[int, ...], draw: Any) -> tuple[int, ...]:
    """A shape that broadcasts with `shape`: trailing dims, some set to 1."""
    keep = draw(st.integers(0, len(shape)))
    tail = shape[len(shape) - keep :]
    return tuple(1 if draw(st.booleans()) else s for s in tail)


@st.composite
def programs(draw: Any) -> tuple[list[np.ndarray], list[Step], str]:
    dtype = draw(st.sampled_from(["float64", "float32"]))
    base = draw(shape_strategy())
    leaves = [base] + [
        broadcastable(base, draw) for _ in range(draw(st.integers(0, 2)))
    ]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    inputs = [rng.uniform(-1.5, 1.5, s).astype(dtype) for s in leaves]
    shapes = list(leaves)
    steps: list[Step] = []
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, len(shapes) - 1))
        shape = shapes[i]
        kinds = ["unary", "binary", "reduce", "view", "inplace"]
        kind = draw(st.sampled_from(kinds))
        if kind == "binary":
            partners = [j for j, s in enumerate(shapes) if _broadcasts(s, shape)]
            j = draw(st.sampled_from(partners))
            op = draw(st.sampled_from(sorted(BINARY)))
            step, out = Step(kind, op, (i, j)), np.broadcast_shapes(shape, shapes[j])
        elif kind == "reduce":
            dim = draw(st.integers(-len(shape), len(shape) - 1)) if shape else 0
            keepdim = draw(st.booleans())
            op = draw(st.sampled_from(sorted(REDUCE)))
            step = Step(kind, op, (i,), (dim, keepdim))
            out = _reduced(shape, dim, keepdim)
        elif kind == "view" and shape:
            op = draw(st.sampled_from(["transpose", "stride", "unsqueeze", "reshape"]))
            step, out = Step(kind, op, (i,)), _viewed(shape, op)
        elif kind == "inplace" and shape and shape[0] > 0:
            op = draw(st.sampled_from(["mul_", "add_", "slice_mul_"]))
            partners = [j for j, s in enumerate(shapes) if _broadcasts_into(s, shape)]
            args = (i,)
            if op == "add_" and partners and draw(st.booleans()):
                args = (i, draw(st.sampled_from(partners)))
            step, out = Step(kind, op, args), shape
        else:
            op = draw(st.sampled_from(sorted(UNARY)))
            step, out = Step("unary", op, (i,)), shape
        steps.append(step)
        shapes.append(tuple(out))
    return inputs, steps, dtype


def _broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


def _broadcasts_into(source: tuple[int, ...], target: tuple[int, ...]) -> bool:
    return _broadcasts(source, target) and np.broadcast_shapes(source, target) == tuple(
        target
    )


def _reduced(shape: tuple[int, ...], dim: int, keepdim: bool) -> tuple[int, ...]:
    if not shape:
        return ()
    d = dim % len(shape)
    return shape[:d] + ((1,) if keepdim else ()) + shape[d + 1 :]


def _viewed(shape: tuple[int, ...], op: str) -> tuple[int, ...]:
    if op == "transpose":
        return (shape[-1],) + shape[1:-1] + (shape[0],) if len(shape) > 1 else shape
    if op == "stride":
        return ((shape[0] + 1) // 2,) + shape[1:]
    if op == "unsqueeze":
        return (1,) + shape
    return (int(np.prod(shape)),)


def execute(lib: Any, inputs: list[np.ndarray], steps: list[Step]) -> tuple:
    """Values, grad_fn names and leaf gradients of the program under `lib`."""
    leaves = [lib.tensor(a.copy(), requires_grad=True) for a in inputs]
    values: list[Any] = list(leaves)
    names = []
    for step in steps:
        out = run_step(lib, step, values)
        values.append(out)
        names.append(type(out.grad_fn).__name__ if out.grad_fn is not None else None)
    weights = [np.linspace(-1, 1, max(v.numel(), 1))[: v.numel()] for v in values]
    loss = sum(
        (v * lib.tensor(w.reshape(tuple(v.shape)).astype(inputs[0].dtype))).sum()
        for v, w in zip(values, weights)
    )
    grads = lib.autograd.grad(loss, leaves, allow_unused=True)
    arrays = [v.detach().numpy().copy() for v in values]
    grads = [None if g is None else g.detach().numpy().copy() for g in grads]
    return arrays, names, grads, float(loss.detach().numpy())


def listing(inputs: list[np.ndarray], steps: list[Step], dtype: str) -> str:
    lines = [f"dtype {dtype}"]
    lines += [f"v{i} = leaf{tuple(a.shape)}" for i, a in enumerate(inputs)]
    lines += [f"v{len(inputs) + k} = {s}" for k, s in enumerate(steps)]
    return "\n".join(lines)


@FUZZ
@given(programs())
def test_random_programs_agree_with_torch_and_finite_differences(
    program: tuple,
) -> None:
    inputs, steps, dtype = program
    text = listing(inputs, steps, dtype)
    ours = execute(yg, inputs, steps)
    theirs = execute(torch, inputs, steps)
    rtol, atol = (1e-9, 1e-10) if dtype == "float64" else (2e-4, 2e-5)
    for k, (a, b) in enumerate(zip(ours[0], theirs[0])):
        assert a.shape == b.shape, f"v{k} shape\n{text}"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"v{k}\n{text}")
    assert ours[1] == theirs[1], f"grad_fn names\n{text}"
    for k, (g, h) in enumerate(zip(ours[2], theirs[2])):
        if h is None or g is None:
            assert g is None or not np.any(g), f"leaf {k} gradient\n{text}"
            continue
        np.testing.assert_allclose(
            g, h, rtol=rtol, atol=atol, err_msg=f"grad {k}\n{text}"
        )
    smooth = all(
        (s.kind == "unary" and UNARY[s.op][1])
        or (s.kind == "binary" and BINARY[s.op][1])
        or s.kind not in ("unary", "binary")
        for s in steps
    )
    if dtype == "float64" and smooth and np.isfinite(ours[3]):
        check_finite_differences(inputs, steps, ours[2], text)


def check_finite_differences(
    inputs: list[np.ndarray], steps: list[Step], grads: list, text: str
) -> None:
    """Central differences of the program's loss against its autograd gradient."""
    eps = 1e-6

    def loss_at(arrays: list[np.ndarray]) -> float:
        with yg.no_grad():
            return execute_forward(arrays, steps)

    for k, array in enumerate(inputs):
        numeric = np.zeros_like(array)
        for index in np.ndindex(array.shape):
            plus = [a.copy() for a in inputs]
            minus = [a.copy() for a in inputs]
            plus[k][index] += eps
            minus[k][index] -= eps
            numeric[index] = (loss_at(plus) - loss_at(minus)) / (2 * eps)
        analytic = grads[k] if grads[k] is not None else np.zeros_like(array)
        np.testing.assert_allclose(
            analytic,
            numeric,
            rtol=1e-5,
            atol=1e-6,
            err_msg=f"finite differences, leaf {k}\n{text}",
        )


def execute_forward(arrays: list[np.ndarray], steps: list[Step]) -> float:
    values: list[Any] = [yg.tensor(a) for a in arrays]
    for step in steps:
        values.append(run_step(yg, step, values))
    total = 0.0
    for v in values:
        w = np.linspace(-1, 1, max(v.numel(), 1))[: v.numel()].reshape(tuple(v.shape))
        total += float((v.numpy() * w).sum())
    return total
