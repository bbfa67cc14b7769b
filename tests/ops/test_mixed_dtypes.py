"""Operands of two float dtypes: element-wise ops promote, but PyTorch's matrix,
convolution, lerp, scatter and loss kernels refuse them, each with its own
message. Every combination of float32/float64 operands is run in both libraries:
the same result dtype, or the same error text. (Found by tests/fuzz/test_fuzz_ops.py.)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
import yamlgrad.nn.functional as YF

torch = pytest.importorskip("torch")

# name -> call of (lib, functional module, operand makers); each maker gives a
# ones tensor of the given shape in its dtype.
CALLS: dict[str, Callable[..., Any]] = {
    "mm": lambda lib, F, a, b: lib.mm(a(3, 4), b(4, 2)),
    "mm_empty": lambda lib, F, a, b: lib.mm(a(3, 0), b(0, 2)),
    "matmul": lambda lib, F, a, b: lib.matmul(a(3, 4), b(4, 2)),
    "matmul_1d": lambda lib, F, a, b: lib.matmul(a(4), b(4)),
    "matmul_3d_2d": lambda lib, F, a, b: lib.matmul(a(2, 3, 4), b(4, 2)),
    "dot": lambda lib, F, a, b: lib.dot(a(4), b(4)),
    "mv": lambda lib, F, a, b: lib.mv(a(3, 4), b(4)),
    "bmm": lambda lib, F, a, b: lib.bmm(a(2, 3, 4), b(2, 4, 2)),
    "outer": lambda lib, F, a, b: lib.outer(a(3), b(4)),
    "addmm": lambda lib, F, a, b, c: lib.addmm(a(3, 2), b(3, 4), c(4, 2)),
    "baddbmm": lambda lib, F, a, b, c: lib.baddbmm(a(2, 3, 2), b(2, 3, 4), c(2, 4, 2)),
    "linear": lambda lib, F, a, b: F.linear(a(3, 4), b(2, 4)),
    "linear_bias": lambda lib, F, a, b, c: F.linear(a(3, 4), b(2, 4), c(2)),
    "conv2d": lambda lib, F, a, b, c: F.conv2d(a(1, 2, 4, 4), b(3, 2, 2, 2), c(3)),
    "lerp": lambda lib, F, a, b, c: lib.lerp(a(3), b(3), c(3)),
    "lerp_scalar": lambda lib, F, a, b: lib.lerp(a(3), b(3), 0.25),
    "lerp_0d_weight": lambda lib, F, a, b: lib.lerp(a(3), a(3), b(())),
    "scatter": lambda lib, F, a, b: a(3).scatter(0, lib.tensor([0]), b(1)),
    "scatter_add": lambda lib, F, a, b: a(3).scatter_add(0, lib.tensor([0]), b(1)),
    "index_add": lambda lib, F, a, b: a(3).index_add(0, lib.tensor([0]), b(1)),
    "bce": lambda lib, F, a, b, c: F.binary_cross_entropy(a(3) * 0.5, b(3) * 0.5, c(3)),
    "nll_loss": lambda lib, F, a, b: F.nll_loss(a(2, 3), lib.tensor([0, 1]), b(3)),
    "nll_loss2d": lambda lib, F, a, b: F.nll_loss(
        a(2, 3, 2, 2), lib.zeros(2, 2, 2, dtype=lib.int64), b(3)
    ),
    "bilinear": lambda lib, F, a, b, c: F.bilinear(a(3, 4), b(3, 5), c(2, 4, 5)),
    "bilinear_bias": lambda lib, F, a, b: F.bilinear(
        a(3, 4), a(3, 5), a(2, 4, 5), b(2)
    ),
    "where": lambda lib, F, a, b: lib.where(lib.tensor([True, False]), a(2), b(2)),
    "cat": lambda lib, F, a, b: lib.cat([a(2), b(2)]),
}


def _cases() -> list[Any]:
    cases = []
    for name, call in CALLS.items():
        n = call.__code__.co_argcount - 2
        for combo in itertools.product(("float32", "float64"), repeat=n):
            if len(set(combo)) > 1:
                cases.append(pytest.param(name, combo, id=f"{name}-{'-'.join(combo)}"))
    return cases


def _run(lib: Any, F: Any, name: str, combo: tuple[str, ...]) -> Any:
    makers = [
        (lambda dt: lambda *s: lib.ones(*s, dtype=getattr(lib, dt)))(dt) for dt in combo
    ]
    return CALLS[name](lib, F, *makers)


@pytest.mark.parametrize("name, combo", _cases())
def test_two_float_dtypes_as_torch(name: str, combo: tuple[str, ...]) -> None:
    try:
        want = _run(torch, torch.nn.functional, name, combo)
    except RuntimeError as error:
        with pytest.raises(RuntimeError) as got:
            _run(yg, YF, name, combo)
        assert str(got.value) == str(error)
        return
    got = _run(yg, YF, name, combo)
    assert str(got.dtype).rpartition(".")[2] == str(want.dtype).rpartition(".")[2]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy())


def _loss_outcome(lib: Any, name: str, dtypes: tuple[str, str]) -> Any:
    """A loss of float32/float64 input and target: its dtype and its gradients'
    dtypes, or where (forward, backward) and how it fails."""
    ops = torch.ops.aten if lib is torch else yg.ops
    x = lib.tensor(np.full((3, 4), 0.3), dtype=getattr(lib, dtypes[0]))
    t = lib.tensor(np.full((3, 4), 0.6), dtype=getattr(lib, dtypes[1]))
    x.requires_grad_()
    t.requires_grad_()
    calls = {
        "mse_loss": lambda: ops.mse_loss.default(x, t, 1),
        "smooth_l1_loss": lambda: ops.smooth_l1_loss.default(x, t, 1, 1.0),
        "huber_loss": lambda: ops.huber_loss.default(x, t, 1, 1.0),
        "binary_cross_entropy_with_logits": lambda: (
            ops.binary_cross_entropy_with_logits.default(x, t, None, None, 1)
        ),
    }
    name_of = lambda d: str(d).rpartition(".")[2]  # noqa: E731
    out = calls[name]()
    try:
        grads = lib.autograd.grad(out, [x, t])
    except RuntimeError as error:
        return name_of(out.dtype), str(error)
    return name_of(out.dtype), [name_of(g.dtype) for g in grads]


@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("float64", "float32")])
@pytest.mark.parametrize(
    "name",
    ["mse_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy_with_logits"],
)
def test_losses_of_two_dtypes_as_torch(name: str, dtypes: tuple[str, str]) -> None:
    """The result's dtype (huber: the input's; BCE with logits: the target's) and
    huber's backward refusing a target of another dtype, as in PyTorch."""
    assert _loss_outcome(yg, name, dtypes) == _loss_outcome(torch, name, dtypes)


def _norm_outcome(lib: Any, which: str, dtypes: tuple[str, ...], present: tuple) -> str:
    ops = torch.ops.aten if lib is torch else yg.ops

    def op(name: str) -> Any:
        return getattr(ops, name) if lib is torch else getattr(ops, name).default

    def make(dtype: str, *shape: int) -> Any:
        return lib.ones(*shape, dtype=getattr(lib, dtype))

    x = make(dtypes[0], 2, 4, 3)
    size = 3 if which == "layer" else 4
    params = [make(d, size) if p else None for d, p in zip(dtypes[1:], present)]
    try:
        if which == "layer":
            out = op("native_layer_norm")(x, [3], *params, 1e-5)
        elif which == "group":
            out = op("native_group_norm")(x, *params, 2, 4, 3, 2, 1e-5)
        else:
            out = op("native_batch_norm")(x, *params, True, 0.1, 1e-5)
    except (RuntimeError, ValueError) as error:
        return f"{type(error).__mro__[-3].__name__}: {error}"
    return str(out[0].dtype).rpartition(".")[2]


@pytest.mark.parametrize("which, n", [("layer", 2), ("group", 2), ("batch", 4)])
def test_norms_of_two_dtypes_as_torch(which: str, n: int) -> None:
    """Every float32/float64 choice for the input and each parameter, each
    parameter given or None: the result's dtype or the error, as PyTorch's CPU
    norms (a "mixed" call when the first parameter's dtype differs)."""
    mismatches = []
    for dtypes in itertools.product(("float32", "float64"), repeat=n + 1):
        for present in itertools.product((True, False), repeat=n):
            got = _norm_outcome(yg, which, dtypes, present)
            want = _norm_outcome(torch, which, dtypes, present)
            if got != want:
                mismatches.append((dtypes, present, got, want))
    assert not mismatches, mismatches[:3]
