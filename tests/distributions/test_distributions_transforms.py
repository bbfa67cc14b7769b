"""transforms and constraints against torch: each transform's values, inverse,
log |det J| and their gradients, its domain and codomain; biject_to and
transform_to for every constraint they register; constraint checks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from distribution_cases import makers, positive, real, tril

# name -> (build(T, make), input array): T is a transforms module.
TRANSFORMS = {
    "ExpTransform": (lambda T, t: T.ExpTransform(), real((2, 3), 1)),
    "AffineTransform": (
        lambda T, t: T.AffineTransform(t(real((3,), 2)), t(positive((3,), 3))),
        real((2, 3), 1),
    ),
    "AffineTransform-event": (
        lambda T, t: T.AffineTransform(2.0, t(real((3,), 3)), event_dim=1),
        real((2, 3), 1),
    ),
    "SigmoidTransform": (lambda T, t: T.SigmoidTransform(), real((2, 3), 1)),
    "TanhTransform": (lambda T, t: T.TanhTransform(), real((2, 3), 1)),
    "SoftplusTransform": (lambda T, t: T.SoftplusTransform(), real((2, 3), 1)),
    "AbsTransform": (lambda T, t: T.AbsTransform(), real((2, 3), 1)),
    "PowerTransform": (
        lambda T, t: T.PowerTransform(t(positive((3,), 2))),
        positive((2, 3), 1),
    ),
    "SoftmaxTransform": (lambda T, t: T.SoftmaxTransform(), real((2, 3), 1)),
    "StickBreakingTransform": (
        lambda T, t: T.StickBreakingTransform(),
        real((2, 3), 1),
    ),
    "LowerCholeskyTransform": (
        lambda T, t: T.LowerCholeskyTransform(),
        real((2, 3, 3), 1),
    ),
    "PositiveDefiniteTransform": (
        lambda T, t: T.PositiveDefiniteTransform(),
        real((2, 3, 3), 1),
    ),
    "CorrCholeskyTransform": (lambda T, t: T.CorrCholeskyTransform(), real((2, 3), 1)),
    "CumulativeDistributionTransform": (
        lambda T, t: T.CumulativeDistributionTransform(
            T.__dict__["_distribution_module"].Normal(
                t(real((3,), 2)), t(positive((3,), 3))
            )
        ),
        real((2, 3), 1),
    ),
    "ComposeTransform": (
        lambda T, t: T.ComposeTransform(
            [T.AffineTransform(t(real((3,), 2)), 2.0), T.ExpTransform()]
        ),
        real((2, 3), 1),
    ),
    "IndependentTransform": (
        lambda T, t: T.IndependentTransform(T.ExpTransform(), 1),
        real((2, 3), 1),
    ),
    "ReshapeTransform": (
        lambda T, t: T.ReshapeTransform((6,), (2, 3)),
        real((4, 6), 1),
    ),
    "CatTransform": (
        lambda T, t: T.CatTransform(
            [T.ExpTransform(), T.AffineTransform(1.0, 2.0)], 1, [2, 1]
        ),
        real((2, 3), 1),
    ),
    "StackTransform": (
        lambda T, t: T.StackTransform([T.ExpTransform(), T.SigmoidTransform()], 1),
        real((3, 2), 1),
    ),
    "inv": (lambda T, t: T.ExpTransform().inv, positive((2, 3), 1)),
}


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch")


def transforms_of(library: Any) -> Any:
    T = library.distributions.transforms
    T._distribution_module = library.distributions
    return T


def grads(value: Any, leaves: list[Any], library: Any) -> list[np.ndarray]:
    cotangent = np.random.default_rng(2).standard_normal(tuple(value.shape))
    if not value.requires_grad:
        return [np.zeros(tuple(x.shape)) for x in leaves]
    found = library.autograd.grad(
        (value * library.tensor(cotangent)).sum(),
        leaves,
        allow_unused=True,
        retain_graph=True,
    )
    return [
        np.zeros(tuple(x.shape)) if g is None else g.numpy()
        for g, x in zip(found, leaves)
    ]


def same_text(ours: object, theirs: object) -> bool:
    return str(ours).replace("yamlgrad.", "torch.").split() == str(theirs).split()


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transform_matches_torch(name: str, torch: Any) -> None:
    build, array = TRANSFORMS[name]
    make_ours, make_theirs, leaves, ref_leaves = makers(torch)
    f = build(transforms_of(yg), make_ours)
    f_ref = build(transforms_of(torch), make_theirs)
    assert same_text(f, f_ref)
    assert same_text(f.domain, f_ref.domain) and same_text(f.codomain, f_ref.codomain)
    assert (
        f.bijective == f_ref.bijective and f.sign == f_ref.sign
        if name
        in (
            "ExpTransform",
            "SigmoidTransform",
            "TanhTransform",
        )
        else True
    )
    x = make_ours(array)
    x_ref = make_theirs(array)
    y, y_ref = f(x), f_ref(x_ref)
    np.testing.assert_allclose(
        y.detach().numpy(), y_ref.detach().numpy(), rtol=1e-8, atol=1e-10
    )
    for g, w in zip(grads(y, leaves, yg), grads(y_ref, ref_leaves, torch)):
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9)
    assert tuple(f.forward_shape(array.shape)) == tuple(
        f_ref.forward_shape(array.shape)
    )
    assert tuple(f.inverse_shape(y.shape)) == tuple(f_ref.inverse_shape(y_ref.shape))
    if not f_ref.bijective:
        return
    back = f.inv(y.detach())
    back_ref = f_ref.inv(y_ref.detach())
    np.testing.assert_allclose(
        back.detach().numpy(), back_ref.detach().numpy(), rtol=1e-7, atol=1e-9
    )
    try:
        want = f_ref.log_abs_det_jacobian(x_ref, y_ref)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            f.log_abs_det_jacobian(x, y)
        return
    got = f.log_abs_det_jacobian(x, y)
    np.testing.assert_allclose(
        got.detach().numpy(), want.detach().numpy(), rtol=1e-7, atol=1e-9
    )
    for g, w in zip(grads(got, leaves, yg), grads(want, ref_leaves, torch)):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


def constraints_of(library: Any) -> dict[str, Any]:
    c = library.distributions.constraints
    return {
        "real": c.real,
        "real_vector": c.real_vector,
        "positive": c.positive,
        "nonnegative": c.nonnegative,
        "greater_than": c.greater_than(1.5),
        "greater_than_eq": c.greater_than_eq(-1.0),
        "less_than": c.less_than(2.0),
        "unit_interval": c.unit_interval,
        "interval": c.interval(-1.0, 3.0),
        "half_open_interval": c.half_open_interval(0.0, 2.0),
        "simplex": c.simplex,
        "lower_cholesky": c.lower_cholesky,
        "corr_cholesky": c.corr_cholesky,
        "positive_definite": c.positive_definite,
        "cat": c.cat([c.real, c.positive], 0, [1, 1]),
        "stack": c.stack([c.real, c.positive], 0),
        "independent": c.independent(c.positive, 1),
    }


@pytest.mark.parametrize("name", sorted(constraints_of(yg)))
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_registries_map_constraints_as_torch(
    name: str, registry: str, torch: Any
) -> None:
    constraint = constraints_of(yg)[name]
    constraint_ref = constraints_of(torch)[name]
    assert same_text(constraint, constraint_ref)
    try:
        f_ref = getattr(torch.distributions, registry)(constraint_ref)
    except NotImplementedError as error:
        with pytest.raises(NotImplementedError) as caught:
            getattr(yg.distributions, registry)(constraint)
        assert str(caught.value).split() == str(error).split()
        return
    f = getattr(yg.distributions, registry)(constraint)
    assert type(f).__name__ == type(f_ref).__name__
    assert same_text(f, f_ref)
    shape = (2, 2) if name in ("cat", "stack") else (2, 3)
    if name in ("lower_cholesky", "positive_definite"):
        shape = (2, 3, 3)
    x = real(shape, 4)
    y, y_ref = f(yg.tensor(x)), f_ref(torch.tensor(x))
    np.testing.assert_allclose(y.numpy(), y_ref.numpy(), rtol=1e-8, atol=1e-10)
    assert bool(constraint.check(y).all()) and bool(constraint_ref.check(y_ref).all())


@pytest.mark.parametrize("name", sorted(constraints_of(yg)))
def test_constraint_checks_as_torch(name: str, torch: Any) -> None:
    constraint = constraints_of(yg)[name]
    constraint_ref = constraints_of(torch)[name]
    assert constraint.event_dim == constraint_ref.event_dim
    assert constraint.is_discrete == constraint_ref.is_discrete
    shape = (4, 2) if name in ("cat", "stack") else (4, 3)
    if name in ("lower_cholesky", "positive_definite", "corr_cholesky"):
        shape = (4, 3, 3)
    values = [real(shape, 6), positive(shape, 7), tril(3, (4,), 8)]
    for v in values:
        if v.shape != shape:
            continue
        got = constraint.check(yg.tensor(v)).numpy()
        want = constraint_ref.check(torch.tensor(v)).numpy()
        np.testing.assert_array_equal(got, want)
