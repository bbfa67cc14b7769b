"""yamlgrad.autograd.forward_ad against torch.autograd.forward_ad: dual levels,
make_dual / unpack_dual, tangents through in-place ops and views,
forward-over-reverse, and PyTorch's errors. Each program runs in both libraries.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
import yamlgrad.autograd.forward_ad as yg_fwad
from support import torch_text

RNG = np.random.default_rng(0)
X = RNG.uniform(0.5, 1.5, (3, 4))
V = RNG.standard_normal((3, 4))
W = RNG.standard_normal((4, 2))


def _torch() -> ModuleType:
    return pytest.importorskip("torch")


def _fwad(lib: ModuleType) -> Any:
    if lib is yg:
        return yg_fwad
    import torch.autograd.forward_ad as torch_fwad

    return torch_fwad


def _array(t: Any) -> np.ndarray | None:
    return None if t is None else t.detach().numpy()


def _both(program: Any) -> tuple[Any, Any]:
    torch = _torch()
    return program(yg, _fwad(yg)), program(torch, _fwad(torch))


def _same(ours: Any, theirs: Any) -> None:
    if isinstance(ours, (list, tuple)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _same(o, t)
    elif isinstance(ours, np.ndarray):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    else:
        assert ours == theirs


def test_the_module_is_importable_by_its_public_name() -> None:
    assert yg.autograd.forward_ad is yg_fwad
    assert yg_fwad.__all__ == [
        "UnpackedDualTensor",
        "dual_level",
        "enter_dual_level",
        "exit_dual_level",
        "make_dual",
        "unpack_dual",
    ]


def test_jvp_of_a_chain_of_ops_matches_torch() -> None:
    def program(lib: ModuleType, fwad: Any) -> Any:
        with fwad.dual_level():
            x = fwad.make_dual(lib.tensor(X), lib.tensor(V))
            y = (x.exp() * x).sin() @ lib.tensor(W)
            z = lib.softmax(y.tanh(), dim=1).sum(0)
            return [_array(fwad.unpack_dual(t).tangent) for t in (y, z)]

    _same(*_both(program))


def test_unpack_dual_returns_a_named_tuple_and_the_level() -> None:
    def program(lib: ModuleType, fwad: Any) -> Any:
        with fwad.dual_level() as level:
            x = fwad.make_dual(lib.tensor(X), lib.tensor(V))
            unpacked = fwad.unpack_dual(x)
            plain = fwad.unpack_dual(lib.tensor(X))
            same_data = np.shares_memory(unpacked.primal.numpy(), x.detach().numpy())
            inside = (
                level,
                type(unpacked).__name__,
                unpacked._fields,
                _array(unpacked.tangent),
                plain.tangent is None,
                fwad.unpack_dual(unpacked.primal).tangent is None,
                same_data,
            )
        after = fwad.unpack_dual(x)
        return [inside, after.tangent is None]

    _same(*_both(program))


def test_a_float32_tangent_on_a_float64_primal_is_kept() -> None:
    def program(lib: ModuleType, fwad: Any) -> Any:
        with fwad.dual_level():
            x = fwad.make_dual(lib.tensor(X), lib.tensor(V.astype(np.float32)))
            return str(fwad.unpack_dual(x).tangent.dtype).rpartition(".")[2]

    _same(*_both(program))


def test_inplace_ops_update_the_tangent_and_the_base_through_views() -> None:
    def program(lib: ModuleType, fwad: Any) -> Any:
        with fwad.dual_level():
            base = fwad.make_dual(lib.tensor(X), lib.tensor(V))
            view = base.transpose(0, 1)
            view.mul_(lib.tensor(W[:, :1]))
            row = base[1]
            row.exp_()
            base.add_(lib.tensor(V) * 2)
            return [_array(fwad.unpack_dual(t).tangent) for t in (base, view, row)]

    _same(*_both(program))


def test_inplace_op_with_a_dual_argument_gives_self_a_tangent() -> None:
    def program(lib: ModuleType, fwad: Any) -> Any:
        with fwad.dual_level():
            x = lib.tensor(X)
            x.mul_(fwad.make_dual(lib.tensor(X), lib.tensor(V)))
            return _array(fwad.unpack_dual(x).tangent)

    _same(*_both(program))


def test_make_dual_on_a_primal_that_requires_grad_is_a_view() -> None:
    def program(lib: ModuleType, fwad: Any) -> Any:
        with fwad.dual_level():
            p = lib.tensor(X, requires_grad=True)
            x = fwad.make_dual(p, lib.tensor(V))
            return [x.is_leaf, type(x.grad_fn).__name__, x.requires_grad]

    _same(*_both(program))


def test_forward_over_reverse_gives_a_hessian_vector_product() -> None:
    def program(lib: ModuleType, fwad: Any) -> Any:
        with fwad.dual_level():
            p = lib.tensor(X, requires_grad=True)
            x = fwad.make_dual(p, lib.tensor(V))
            loss = (x.tanh() * x.exp()).sum() + (x * x).sum()
            (g,) = lib.autograd.grad(loss, p, create_graph=True)
            return [_array(g), _array(fwad.unpack_dual(g).tangent)]

    _same(*_both(program))


def test_tuple_and_list_outputs_carry_tangents() -> None:
    def program(lib: ModuleType, fwad: Any) -> Any:
        with fwad.dual_level():
            x = fwad.make_dual(lib.tensor(X), lib.tensor(V))
            values, indices = lib.max(x, dim=1)
            parts = lib.split(x, 2, dim=1)
            return [
                _array(fwad.unpack_dual(values).tangent),
                fwad.unpack_dual(indices).tangent is None,
                [_array(fwad.unpack_dual(p).tangent) for p in parts],
            ]

    _same(*_both(program))


def test_python_numbers_and_tensors_without_tangent_count_as_zero() -> None:
    def program(lib: ModuleType, fwad: Any) -> Any:
        with fwad.dual_level():
            x = fwad.make_dual(lib.tensor(X), lib.tensor(V))
            y = 2.0 * x + lib.tensor(V) ** 2 - x / 3.0 + x * lib.tensor(X)
            return _array(fwad.unpack_dual(y).tangent)

    _same(*_both(program))


def _error(lib: ModuleType, fwad: Any, case: str) -> tuple[str, str]:
    try:
        if case == "no level":
            fwad.make_dual(lib.tensor(X), lib.tensor(V))
        elif case == "exit without level":
            fwad.exit_dual_level()
        else:
            with fwad.dual_level():
                x = fwad.make_dual(lib.tensor(X), lib.tensor(V))
                if case == "nested":
                    fwad.enter_dual_level()
                elif case == "shape":
                    fwad.make_dual(lib.tensor(X), lib.tensor(W))
                elif case == "integer tangent":
                    fwad.make_dual(lib.tensor(X), lib.tensor(np.ones((3, 4), int)))
                elif case == "integer primal":
                    fwad.make_dual(lib.tensor(np.ones((3, 4), int)), lib.tensor(V))
                elif case == "already dual":
                    fwad.make_dual(x, lib.tensor(V))
                elif case == "exit another level":
                    fwad.exit_dual_level(level=3)
                elif case == "make_dual level":
                    fwad.make_dual(lib.tensor(X), lib.tensor(V), level=5)
                elif case == "unpack_dual level":
                    fwad.unpack_dual(x, level=5)
    except (RuntimeError, ValueError) as error:
        return type(error).__name__, torch_text(error)
    return "no error", ""


@pytest.mark.parametrize(
    "case",
    [
        "no level",
        "exit without level",
        "nested",
        "shape",
        "integer tangent",
        "integer primal",
        "already dual",
        "exit another level",
        "make_dual level",
        "unpack_dual level",
    ],
)
def test_errors_match_torch(case: str) -> None:
    torch = _torch()
    ours = _error(yg, yg_fwad, case)
    theirs = _error(torch, _fwad(torch), case)
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1].replace("torch.", "yamlgrad.")


def test_tangents_are_dropped_when_the_level_exits() -> None:
    with yg_fwad.dual_level():
        x = yg_fwad.make_dual(yg.tensor(X), yg.tensor(V))
        y = x.exp()
    assert yg_fwad.unpack_dual(y).tangent is None
    assert x._fw_grad is None and y._fw_grad is None


def test_no_tangent_work_outside_a_dual_level() -> None:
    x = yg.tensor(X, requires_grad=True)
    y = (x * 2).exp().sum()
    assert y._fw_grad is None
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * X))


def test_forward_over_reverse_through_derived_forward_derivatives() -> None:
    """softmax, log_softmax and var have no forward formula in the YAML: their
    JVP is derived from the backward formulas, and stays differentiable."""

    def program(lib: ModuleType, fwad: Any) -> Any:
        with fwad.dual_level():
            p = lib.tensor(X, requires_grad=True)
            x = fwad.make_dual(p, lib.tensor(V))
            y = lib.log_softmax(lib.softmax(x, dim=1) * x, dim=0)
            loss = (y * y).sum() + y.var()
            (g,) = lib.autograd.grad(loss, p, create_graph=True)
            return [_array(g), _array(fwad.unpack_dual(g).tangent)]

    _same(*_both(program))


def test_reverse_over_forward_differentiates_tangents() -> None:
    """A tangent is recorded as a function of the primal when that requires grad,
    through written formulas (sin, mul) and derived ones (prod, var) alike."""

    def program(lib: ModuleType, fwad: Any) -> Any:
        with fwad.dual_level():
            p = lib.tensor(X, requires_grad=True)
            x = fwad.make_dual(p, lib.tensor(V))
            y = (x.sin() * x).prod(dim=1) * x.var(dim=1)
            tangent = fwad.unpack_dual(y).tangent
            (g,) = lib.autograd.grad(tangent.sum(), p)
            return [_array(tangent), _array(g)]

    _same(*_both(program))


def test_inplace_op_on_a_view_gives_its_base_a_tangent() -> None:
    def program(lib: ModuleType, fwad: Any) -> Any:
        with fwad.dual_level():
            base = lib.tensor(X)
            column = base[:, 1]
            column.mul_(fwad.make_dual(lib.tensor(X[:, 0]), lib.tensor(V[:, 0])))
            row = base.t()[2]
            row.add_(fwad.make_dual(lib.tensor(X[:, 3]), lib.tensor(V[:, 3])))
            return [_array(fwad.unpack_dual(t).tangent) for t in (base, column, row)]

    _same(*_both(program))
