"""Every family of distribution_cases.py against torch.distributions.

For each case: shapes (batch, event, after expand and sample), constraint names
and reprs, log_prob at torch's own samples and its gradients, entropy, the
moments, cdf and icdf, enumerate_support, and the moments of a large sample
within a statistical tolerance. A property torch does not implement
(NotImplementedError) must raise here too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from distribution_cases import CASES, Case, build_both

RTOL = 1e-7
ATOL = 1e-9
PROPERTIES = ("mean", "mode", "variance", "stddev")


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch")


def as_numpy(x: Any) -> np.ndarray:
    return np.asarray(x.detach().numpy())


def assert_close(ours: Any, theirs: Any, what: str, rtol: float = RTOL) -> None:
    got, want = as_numpy(ours), as_numpy(theirs)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=ATOL, err_msg=what)


def same_text(ours: object, theirs: object) -> bool:
    """The same text, but for the library's name (`yamlgrad.float64`) and where a
    tensor's repr breaks its lines."""
    ours_text = str(ours).replace("yamlgrad.", "torch.")
    return ours_text.split() == str(theirs).split() or ours_text == str(theirs)


def outcome(f: Any) -> Any:
    """f()'s value, or the NotImplementedError class when it raises one."""
    try:
        return f()
    except NotImplementedError:
        return NotImplementedError


def grads(outputs: list[Any], leaves: list[Any], library: Any) -> list[Any]:
    """d sum(output * cotangent)/d leaves, with a fixed cotangent per output."""
    rng = np.random.default_rng(7)
    total = None
    for out in outputs:
        cotangent = rng.standard_normal(tuple(out.shape))
        term = (out * library.tensor(cotangent)).sum()
        total = term if total is None else total + term
    found = library.autograd.grad(total, leaves, allow_unused=True)
    return [
        np.zeros(tuple(x.shape)) if g is None else as_numpy(g)
        for g, x in zip(found, leaves)
    ]


def value_of(theirs: Any, shape: tuple[int, ...], torch: Any) -> tuple[Any, Any]:
    torch.manual_seed(0)
    t = theirs.sample(shape)
    return yg.tensor(t.numpy()), t


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_shapes_and_constraints(case: Case, torch: Any) -> None:
    ours, theirs, _, _ = build_both(case, torch)
    assert ours.batch_shape == theirs.batch_shape
    assert ours.event_shape == theirs.event_shape
    assert tuple(ours.sample((2,)).shape) == tuple(theirs.sample((2,)).shape)
    assert ours.has_rsample == theirs.has_rsample
    assert ours.has_enumerate_support == theirs.has_enumerate_support
    assert same_text(ours.support, theirs.support)
    assert type(ours.support).__name__ == type(theirs.support).__name__
    assert set(ours.arg_constraints) == set(theirs.arg_constraints)
    for name, constraint in theirs.arg_constraints.items():
        assert same_text(ours.arg_constraints[name], constraint), name
    wide = (4, *theirs.batch_shape)
    big, big_ref = ours.expand(wide), theirs.expand(wide)
    assert big.batch_shape == big_ref.batch_shape
    assert tuple(big.sample((3,)).shape) == tuple(big_ref.sample((3,)).shape)
    assert type(big) is type(ours)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_log_prob_and_its_gradients(case: Case, torch: Any) -> None:
    ours, theirs, leaves, ref_leaves = build_both(case, torch)
    value, ref_value = value_of(theirs, (3,), torch)
    got, want = ours.log_prob(value), theirs.log_prob(ref_value)
    assert_close(got, want, "log_prob")
    if ref_leaves:
        for g, w in zip(grads([got], leaves, yg), grads([want], ref_leaves, torch)):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_entropy_and_moments(case: Case, torch: Any) -> None:
    for name in ("entropy", *PROPERTIES):
        # Built afresh for each, so that each gradient has a graph of its own.
        ours, theirs, leaves, ref_leaves = build_both(case, torch)
        got = outcome(lambda: getattr(ours, name))
        want = outcome(lambda: getattr(theirs, name))
        if name == "entropy":
            got = got if got is NotImplementedError else outcome(got)
            want = want if want is NotImplementedError else outcome(want)
        if want is NotImplementedError:
            assert got is NotImplementedError, name
            continue
        assert_close(got, want, name, rtol=1e-6)
        if ref_leaves and want.requires_grad:
            for g, w in zip(grads([got], leaves, yg), grads([want], ref_leaves, torch)):
                np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8, err_msg=name)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_cdf_and_icdf(case: Case, torch: Any) -> None:
    ours, theirs, leaves, ref_leaves = build_both(case, torch)
    value, ref_value = value_of(theirs, (2,), torch)
    want = outcome(lambda: theirs.cdf(ref_value))
    if want is NotImplementedError:
        assert outcome(lambda: ours.cdf(value)) is NotImplementedError
    else:
        got = ours.cdf(value)
        assert_close(got, want, "cdf", rtol=1e-6)
    q = np.random.default_rng(3).uniform(0.05, 0.95, tuple(ref_value.shape))
    want = outcome(lambda: theirs.icdf(torch.tensor(q)))
    if want is NotImplementedError:
        assert outcome(lambda: ours.icdf(yg.tensor(q))) is NotImplementedError
    else:
        assert_close(ours.icdf(yg.tensor(q)), want, "icdf", rtol=1e-6)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_enumerate_support(case: Case, torch: Any) -> None:
    ours, theirs, _, _ = build_both(case, torch)
    if not theirs.has_enumerate_support:
        return
    for expand in (True, False):
        want = outcome(lambda: theirs.enumerate_support(expand))
        if want is NotImplementedError:
            assert outcome(lambda: ours.enumerate_support(expand)) is want
            continue
        got = ours.enumerate_support(expand)
        assert_close(got, want, f"enumerate_support({expand})")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_sample_moments(case: Case, torch: Any) -> None:
    """The mean of 4000 draws within 6 standard errors of the mean."""
    if case.name == "VonMises":
        pytest.skip("an angle's mean is not its arithmetic mean: test_distributions_samplers.py")
    ours, theirs, _, _ = build_both(case, torch)
    mean = outcome(lambda: theirs.mean)
    variance = outcome(lambda: theirs.variance)
    if mean is NotImplementedError or variance is NotImplementedError:
        pytest.skip(f"{case.name} has no mean or variance in torch")
    mean, variance = as_numpy(mean), as_numpy(variance)
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(variance))):
        pytest.skip(f"{case.name}'s moments are not finite")
    yg.manual_seed(0)
    draws = ours.sample((4000,))
    assert draws.dtype == yg.float64
    got = as_numpy(draws).mean(0)
    err = np.sqrt(variance / 4000)
    assert np.all(np.abs(got - mean) <= 6 * err + 1e-9), (got, mean)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_node_names_match_torch(case: Case, torch: Any) -> None:
    """The nodes rsample, log_prob and entropy record, by class name."""
    ours, theirs, _, _ = build_both(case, torch)
    value, ref_value = value_of(theirs, (2,), torch)
    pairs = [(ours.log_prob(value), theirs.log_prob(ref_value))]
    # torch's Wishart.rsample always ends in an index_put (it writes redrawn
    # samples over the ones its support check passed); here a draw is redrawn
    # only where it is singular, so the last node is the draw's own.
    if theirs.has_rsample and case.name != "Wishart":
        pairs.append((ours.rsample((2,)), theirs.rsample((2,))))
    for got, want in pairs:
        if want.grad_fn is None:
            assert got.grad_fn is None
            continue
        assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__


def test_generalized_pareto_in_float32(torch: Any) -> None:
    """In float32: torch's GeneralizedPareto mixes in float64 constants, so its
    float64 methods raise (`Double did not match Float`)."""
    params = ([0.0, 1.0], [1.0, 2.0], [0.2, -0.1])
    ours = yg.distributions.GeneralizedPareto(*(yg.tensor(p) for p in params))
    theirs = torch.distributions.GeneralizedPareto(*(torch.tensor(p) for p in params))
    value, q = [0.5, 1.5], [0.3, 0.6]
    for name in ("log_prob", "cdf", "icdf"):
        arg = q if name == "icdf" else value
        got = getattr(ours, name)(yg.tensor(arg))
        want = getattr(theirs, name)(torch.tensor(arg))
        assert_close(got, want, name, rtol=1e-5)
    for name in PROPERTIES:
        assert_close(getattr(ours, name), getattr(theirs, name), name, rtol=1e-5)
    assert_close(ours.entropy(), theirs.entropy(), "entropy", rtol=1e-5)
    assert same_text(ours.support, theirs.support)
