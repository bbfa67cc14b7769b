"""Complex autograd against torch: PyTorch's conjugate Wirtinger convention (the
gradient of a real loss is dL/d(real) + i dL/d(imag)), real-to-complex flows that
give real inputs real gradients, the parts of a complex tensor as writable views,
conjugation, the engine's rules at the real/complex boundary, and gradcheck on
complex functions."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg

torch = pytest.importorskip("torch")

Z = np.array([3 + 4j, 1 - 2j, -0.5 + 0.25j])
X = np.array([1.0, 2.0, 0.5])
Y = np.array([0.5, -1.0, 2.0])


def _array(t: Any) -> np.ndarray:
    return (
        t.detach().numpy() if isinstance(t, yg.Tensor) else t.detach().numpy(force=True)
    )


def _both(
    program: Callable[[ModuleType, list[Any]], Any], *values: np.ndarray
) -> tuple[list[np.ndarray], list[np.ndarray], Any, Any]:
    """The program's gradients (and outputs) in each library, from leaves of
    `values` (float64 or complex128)."""
    found = []
    for lib in (yg, torch):
        leaves = [lib.tensor(v, requires_grad=True) for v in values]
        out = program(lib, leaves)
        out.backward()
        found.append(([_array(x.grad) for x in leaves], out))
    (ours, out), (theirs, ref) = found
    return ours, theirs, out, ref


def _assert_same(ours: list[np.ndarray], theirs: list[np.ndarray]) -> None:
    for got, want in zip(ours, theirs):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_gradient_of_squared_modulus_is_twice_z() -> None:
    z = yg.tensor(3 + 4j, dtype=yg.cdouble, requires_grad=True)
    (z.abs() ** 2).backward()
    assert z.grad.item() == pytest.approx(6 + 8j, abs=1e-12)


@pytest.mark.parametrize(
    "program",
    [
        lambda lib, v: (v[0].abs() ** 2).sum(),
        lambda lib, v: v[0].abs().sum(),
        lambda lib, v: lib.angle(v[0]).sum(),
        lambda lib, v: lib.real(v[0] * v[0].conj()).sum(),
        lambda lib, v: lib.imag(v[0] * v[0]).sum(),
        lambda lib, v: lib.sgn(v[0]).real.sum(),
        lambda lib, v: lib.real(v[0] / (v[0] + 3)).sum(),
        lambda lib, v: lib.view_as_real(v[0]).pow(3).sum(),
    ],
    ids=["abs2", "abs", "angle", "z_conj_z", "imag_z2", "sgn", "div", "as_real"],
)
def test_wirtinger_gradients_match_torch(program: Callable[..., Any]) -> None:
    ours, theirs, _, _ = _both(program, Z)
    _assert_same(ours, theirs)


@pytest.mark.parametrize(
    "program",
    [
        lambda lib, v: lib.complex(v[0], v[1]).abs().sum(),
        lambda lib, v: (lib.polar(v[0], v[1]) * (2 - 1j)).real.sum(),
        lambda lib, v: lib.view_as_complex(lib.stack([v[0], v[1]], -1)).angle().sum(),
        lambda lib, v: (v[0] * (1 + 2j)).imag.sum() + (v[1] * 1j).abs().sum(),
    ],
    ids=["complex", "polar", "view_as_complex", "mul_by_complex"],
)
def test_real_inputs_get_real_gradients(program: Callable[..., Any]) -> None:
    ours, theirs, _, _ = _both(program, X, Y)
    _assert_same(ours, theirs)
    assert all(g.dtype == np.float64 for g in ours)


def test_real_and_imag_are_views_that_write_through() -> None:
    for lib in (yg, torch):
        z = lib.tensor(Z.copy())
        assert not lib.is_complex(z.real) and z.real.shape == z.shape
        z.real[0] = 10.0
        z.imag.mul_(2)
        z.imag = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
        z.real += 1
        if lib is yg:
            ours = z.numpy().copy()
        else:
            np.testing.assert_array_equal(ours, z.numpy())


@pytest.mark.parametrize(
    "write",
    [
        lambda lib, z: z.real.mul_(2),
        lambda lib, z: z.imag.__setitem__(0, 7.0),
        lambda lib, z: lib.view_as_real(z)[1].mul_(-3),
    ],
    ids=["real_mul_", "imag_setitem", "as_real_row"],
)
def test_inplace_writes_through_parts_are_recorded(write: Callable[..., Any]) -> None:
    def program(lib: ModuleType, v: list[Any]) -> Any:
        z = v[0] * 1
        write(lib, z)
        return (z.abs() ** 2 + z.angle()).sum()

    ours, theirs, out, ref = _both(program, Z)
    np.testing.assert_allclose(_array(out), _array(ref))
    _assert_same(ours, theirs)


def test_inplace_write_through_view_as_complex_is_recorded() -> None:
    def program(lib: ModuleType, v: list[Any]) -> Any:
        pairs = v[0] * 1
        lib.view_as_complex(pairs).mul_(1 + 2j)
        return (pairs**3).sum()

    ours, theirs, _, _ = _both(program, np.arange(6.0).reshape(3, 2) - 2)
    _assert_same(ours, theirs)


def test_conj_of_real_is_the_tensor_and_of_complex_a_conjugate() -> None:
    x = yg.tensor(X, requires_grad=True)
    assert x.conj() is x and x.conj_physical() is x and x.resolve_conj() is x
    assert yg.real(x) is x and x.resolve_neg() is x
    z = yg.tensor(Z, requires_grad=True)
    c = z.conj()
    assert c.grad_fn.name() == "ConjBackward0"
    assert yg.conj_physical(z).grad_fn.name() == "ConjPhysicalBackward0"
    np.testing.assert_array_equal(c.detach().numpy(), np.conj(Z))
    # Conjugation is eager: no tensor holds an unresolved conjugate or negation.
    assert not c.is_conj() and not yg.is_conj(c) and not c.imag.is_neg()
    assert c.resolve_conj() is c
    ours, theirs, _, _ = _both(lambda lib, v: (v[0].conj() * v[0]).real.sum(), Z)
    _assert_same(ours, theirs)


def test_conj_physical_in_place() -> None:
    def program(lib: ModuleType, v: list[Any]) -> Any:
        z = v[0] * 1
        z.conj_physical_()
        return (z * (2 + 1j)).real.sum()

    ours, theirs, _, _ = _both(program, Z)
    _assert_same(ours, theirs)
    w = yg.tensor(Z) * 1
    assert w.conj_physical_() is w
    np.testing.assert_array_equal(w.numpy(), np.conj(Z))


def test_grad_fn_names_match_torch() -> None:
    for name, program in {
        "real": lambda lib, z: lib.real(z),
        "imag": lambda lib, z: z.imag,
        "as_real": lambda lib, z: lib.view_as_real(z),
        "angle": lambda lib, z: z.angle(),
        "sgn": lambda lib, z: z.sgn(),
        "abs": lambda lib, z: z.abs(),
        "polar": lambda lib, z: lib.polar(z.abs(), z.angle()),
        "complex": lambda lib, z: lib.complex(z.real, z.imag),
    }.items():
        ours = program(yg, yg.tensor(Z, requires_grad=True)).grad_fn.name()
        theirs = type(program(torch, torch.tensor(Z, requires_grad=True)).grad_fn)
        assert ours == theirs.__name__, name


def test_complex_output_needs_a_gradient() -> None:
    for lib in (yg, torch):
        z = lib.tensor(3 + 4j, requires_grad=True)
        with pytest.raises(RuntimeError) as error:
            (z * z).backward()
        assert str(error.value).startswith(
            "grad can be implicitly created only for real scalar outputs but got "
        )
    z = yg.tensor(3 + 4j, requires_grad=True)
    (z * z).backward(yg.tensor(1 + 0j))
    assert z.grad.item() == pytest.approx(6 - 8j)  # conj(2 z)


def test_seed_must_be_as_complex_as_its_output() -> None:
    for lib in (yg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="For complex Tensors, both grad_output"):
            x.sum().backward(lib.tensor(1 + 0j))


def test_complex_gradient_for_a_real_input_is_refused() -> None:
    """A backward that hands a real input a complex gradient fails as PyTorch's
    validate_outputs does; formulas take the real part with handle_r_to_c."""
    for lib in (yg, torch):

        class Leaky(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                return x * (1 + 1j)

            @staticmethod
            def backward(ctx: Any, grad: Any) -> Any:
                return grad * (1 - 1j)

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError) as error:
            Leaky.apply(x).abs().sum().backward()
        assert "(input_is_complex == grad_is_complex) to be true" in str(error.value)


def test_imag_of_a_real_tensor_raises_torch_text() -> None:
    text = "imag is not implemented for tensors with non-complex dtypes."
    for lib in (yg, torch):
        with pytest.raises(RuntimeError, match=text):
            lib.tensor([1.0]).imag
        with pytest.raises(RuntimeError, match=text):
            lib.imag(lib.tensor([1.0]))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.view_as_real(lib.ones(2)),
        lambda lib: lib.view_as_complex(lib.ones(2, 3)),
        lambda lib: lib.view_as_complex(lib.ones(2, 2).t()),
        lambda lib: lib.view_as_complex(lib.ones(1, 2, dtype=lib.int64)),
        lambda lib: lib.complex(lib.ones(2), lib.ones(2, dtype=lib.float64)),
        lambda lib: lib.polar(
            lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)
        ),
    ],
)
def test_errors_match_torch(call: Callable[[ModuleType], Any]) -> None:
    with pytest.raises(RuntimeError) as theirs:
        call(torch)
    with pytest.raises(RuntimeError) as ours:
        call(yg)
    assert str(ours.value) == str(theirs.value)


def test_isreal_and_is_complex() -> None:
    for lib in (yg, torch):
        z = lib.tensor([1 + 0j, 1 + 1j])
        assert lib.isreal(z).tolist() == [True, False]
        assert z.isreal().tolist() == [True, False]
        assert lib.isreal(lib.tensor([1.0])).tolist() == [True]
        assert lib.is_complex(z) and z.is_complex()
        assert not lib.is_complex(lib.tensor([1.0]))


def test_forward_mode_follows_the_conjugation_rule() -> None:
    """JVPs of holomorphic (mul), non-holomorphic (abs, sgn, conj, angle) and
    complex-to-real (real) ops, as torch's forward AD."""
    tangent = np.array([0.5 - 1j, 2 + 0.5j, -1 + 1j])
    programs = {
        "abs": lambda lib, z: z.abs(),
        "sgn": lambda lib, z: z.sgn(),
        "conj": lambda lib, z: z.conj() * 1,
        "angle": lambda lib, z: z.angle(),
        "mul": lambda lib, z: z * (2 - 1j),
        "real": lambda lib, z: lib.real(z) * 1,
    }
    for name, program in programs.items():
        found = []
        for lib in (yg, torch):
            fwad = lib.autograd.forward_ad
            with fwad.dual_level():
                dual = fwad.make_dual(lib.tensor(Z), lib.tensor(tangent))
                found.append(_array(fwad.unpack_dual(program(lib, dual)).tangent))
        np.testing.assert_allclose(found[0], found[1], rtol=1e-12, err_msg=name)


def test_gradcheck_on_complex_functions() -> None:
    z = yg.tensor(Z, requires_grad=True)
    x = yg.tensor(X, requires_grad=True)
    gradcheck, gradgradcheck = yg.autograd.gradcheck, yg.autograd.gradgradcheck
    assert gradcheck(lambda z: z.abs(), (z,))
    assert gradcheck(lambda z: z * z.conj() + z.sgn(), (z,))
    assert gradcheck(lambda z, x: z * x, (z, x))
    assert gradcheck(lambda x: yg.polar(x, x * 2), (x,))
    assert gradcheck(lambda z: yg.view_as_real(z) ** 2, (z,))
    assert gradgradcheck(lambda z: z.abs() * z, (z,))
    assert gradgradcheck(lambda z: z.angle(), (z,))


def test_gradcheck_catches_a_missing_conjugate() -> None:
    class Square(yg.autograd.Function):
        @staticmethod
        def forward(ctx: Any, z: Any) -> Any:
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (z,) = ctx.saved_tensors
            return grad * 2 * z  # PyTorch's convention wants conj(2 z)

    z = yg.tensor(Z, requires_grad=True)
    assert not yg.autograd.gradcheck(Square.apply, (z,), raise_exception=False)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        yg.autograd.gradcheck(Square.apply, (z,))
