"""validate_args: PyTorch's error texts for bad parameters and values outside
the support, the probs/logits rule, and `set_default_validate_args`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import yamlgrad as yg

# (family, args as nested lists, kwargs): each violates a constraint.
BAD_PARAMETERS = [
    ("Normal", (0.0, -1.0), {}),
    ("Normal", ([0.0, 1.0], [1.0, 0.0]), {}),
    ("Bernoulli", (), {"probs": 1.5}),
    ("Bernoulli", (), {"probs": [0.2, -0.1]}),
    ("Categorical", (), {"probs": [[0.5, -0.5]]}),
    ("Beta", (-1.0, 2.0), {}),
    ("Gamma", (2.0, 0.0), {}),
    ("Dirichlet", ([1.0, -2.0],), {}),
    ("Uniform", (1.0, 0.0), {}),
    ("Exponential", (-2.0,), {}),
    ("Poisson", (-1.0,), {}),
    ("Binomial", (-3.0,), {"probs": 0.5}),
    ("Geometric", (), {"probs": 0.0}),
    ("StudentT", (-1.0,), {}),
    ("Laplace", (0.0, -1.0), {}),
    (
        "MultivariateNormal",
        ([0.0, 0.0],),
        {"covariance_matrix": [[1.0, 2.0], [2.0, 1.0]]},
    ),
    ("Multinomial", (3,), {"probs": [0.5, -0.5]}),
]
# (family, args, value outside the support).
BAD_VALUES = [
    ("Bernoulli", (), {"probs": 0.3}, 0.5),
    ("Beta", (1.0, 2.0), {}, 1.5),
    ("Gamma", (2.0, 1.0), {}, -1.0),
    ("Categorical", (), {"probs": [0.2, 0.8]}, 2),
    ("Poisson", (2.0,), {}, 1.5),
    ("Uniform", (0.0, 1.0), {}, [0.5, 2.0]),
    ("Dirichlet", ([1.0, 2.0],), {}, [0.3, 0.3]),
    ("Exponential", (1.0,), {}, -0.5),
]


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch")


def tensors(library: Any, values: Any) -> Any:
    if isinstance(values, dict):
        return {k: tensors(library, v) for k, v in values.items()}
    if isinstance(values, tuple):
        return tuple(tensors(library, v) for v in values)
    if isinstance(values, int):
        return values
    return library.tensor(values)


def error_of(f: Any) -> str:
    with pytest.raises(Exception) as caught:
        f()
    return f"{type(caught.value).__name__}: {caught.value}"


def same(ours: str, theirs: str) -> None:
    assert ours.replace("yamlgrad.", "torch.").split() == theirs.split(), (ours, theirs)


@pytest.mark.parametrize("name, args, kwargs", BAD_PARAMETERS, ids=lambda v: str(v))
def test_bad_parameter_raises_torchs_error(
    name: str, args: Any, kwargs: Any, torch: Any
) -> None:
    ours = error_of(
        lambda: getattr(yg.distributions, name)(
            *tensors(yg, args), **tensors(yg, kwargs)
        )
    )
    theirs = error_of(
        lambda: getattr(torch.distributions, name)(
            *tensors(torch, args), **tensors(torch, kwargs)
        )
    )
    same(ours, theirs)


@pytest.mark.parametrize("name, args, kwargs, value", BAD_VALUES, ids=lambda v: str(v))
def test_value_outside_the_support_raises_torchs_error(
    name: str, args: Any, kwargs: Any, value: Any, torch: Any
) -> None:
    d = getattr(yg.distributions, name)(*tensors(yg, args), **tensors(yg, kwargs))
    d_ref = getattr(torch.distributions, name)(
        *tensors(torch, args), **tensors(torch, kwargs)
    )
    ours = error_of(lambda: d.log_prob(yg.tensor(value)))
    theirs = error_of(lambda: d_ref.log_prob(torch.tensor(value)))
    same(ours, theirs)


def test_the_error_text_of_a_bad_scale() -> None:
    with pytest.raises(ValueError) as caught:
        yg.distributions.Normal(yg.tensor(0.0), yg.tensor(-1.0))
    assert str(caught.value) == (
        "Expected parameter scale (Tensor of shape ()) of distribution "
        "Normal(loc: 0.0, scale: -1.0) to satisfy the constraint "
        "GreaterThan(lower_bound=0.0), but found invalid values:\n-1.0"
    )


@pytest.mark.parametrize("name", ["Bernoulli", "Categorical", "Binomial", "Geometric"])
def test_exactly_one_of_probs_and_logits(name: str, torch: Any) -> None:
    args = (3,) if name == "Binomial" else ()
    for kwargs in ({}, {"probs": [0.5], "logits": [0.0]}):
        ours = error_of(
            lambda: getattr(yg.distributions, name)(*args, **tensors(yg, kwargs))
        )
        theirs = error_of(
            lambda: getattr(torch.distributions, name)(*args, **tensors(torch, kwargs))
        )
        same(ours, theirs)


def test_mvn_needs_exactly_one_matrix(torch: Any) -> None:
    eye = [[1.0, 0.0], [0.0, 1.0]]
    for kwargs in ({}, {"covariance_matrix": eye, "scale_tril": eye}):
        ours = error_of(
            lambda: yg.distributions.MultivariateNormal(
                yg.tensor([0.0, 0.0]), **tensors(yg, kwargs)
            )
        )
        theirs = error_of(
            lambda: torch.distributions.MultivariateNormal(
                torch.tensor([0.0, 0.0]), **tensors(torch, kwargs)
            )
        )
        same(ours, theirs)


def test_set_default_validate_args_turns_checks_off_and_on() -> None:
    D = yg.distributions
    D.Distribution.set_default_validate_args(False)
    try:
        d = D.Normal(yg.tensor(0.0), yg.tensor(-1.0))
        assert np.isnan(d.log_prob(yg.tensor(0.0)).item())
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(yg.tensor(0.0), yg.tensor(-1.0))
    d = D.Normal(yg.tensor(0.0), yg.tensor(-1.0), validate_args=False)
    assert d.scale.item() == -1.0


def test_sample_shape_and_rsample_errors(torch: Any) -> None:
    d = yg.distributions.Bernoulli(yg.tensor(0.3))
    d_ref = torch.distributions.Bernoulli(torch.tensor(0.3))
    same(error_of(lambda: d.rsample()), error_of(lambda: d_ref.rsample()))
    n = yg.distributions.Normal(yg.tensor([0.0, 1.0]), yg.tensor(1.0))
    n_ref = torch.distributions.Normal(torch.tensor([0.0, 1.0]), torch.tensor(1.0))
    same(
        error_of(lambda: n.log_prob(yg.tensor([1.0, 2.0, 3.0]))),
        error_of(lambda: n_ref.log_prob(torch.tensor([1.0, 2.0, 3.0]))),
    )
    same(
        error_of(lambda: n.log_prob([1.0, 2.0])),
        error_of(lambda: n_ref.log_prob([1.0, 2.0])),
    )


# Every family whose parameters are scalars: each parameter broken in turn.
SCALAR_FAMILIES = (
    "Bernoulli Beta Binomial Cauchy Chi2 ContinuousBernoulli Exponential "
    "FisherSnedecor Gamma GeneralizedPareto Geometric Gumbel HalfCauchy HalfNormal "
    "InverseGamma Kumaraswamy Laplace LogNormal NegativeBinomial Normal Pareto "
    "Poisson StudentT VonMises Weibull"
).split()
VALID = {
    "GreaterThan": 1.5,
    "GreaterThanEq": 2.0,
    "Real": 0.3,
    "Interval": 0.4,
    "HalfOpenInterval": 0.4,
    "IntegerGreaterThan": 3.0,
}
INVALID = {
    "GreaterThan": [-1.0, 0.0],
    "GreaterThanEq": [-1.0],
    "Real": [float("nan")],
    "Interval": [1.5, -0.2],
    "HalfOpenInterval": [1.0],
    "IntegerGreaterThan": [-2.0],
}


def scalar_cases(torch: Any) -> list[tuple[str, dict[str, float]]]:
    cases = []
    for name in SCALAR_FAMILIES:
        constraints = getattr(torch.distributions, name).arg_constraints
        params = {k: c for k, c in constraints.items() if k != "logits"}
        valid = {k: VALID[type(c).__name__.lstrip("_")] for k, c in params.items()}
        for broken, c in params.items():
            for bad in INVALID[type(c).__name__.lstrip("_")]:
                cases.append((name, {**valid, broken: bad}))
    return cases


def raised(f: Any) -> str:
    """f()'s exception as text, or "" when it returns."""
    try:
        f()
    except Exception as error:  # noqa: BLE001 - the text is what is compared
        return f"{type(error).__name__}: {error}"
    return ""


def test_every_broken_scalar_parameter_raises_torchs_error(torch: Any) -> None:
    """Torch's error for each, or none where torch accepts the value (a nan
    `concentration` of GeneralizedPareto, whose constraint is Real)."""
    for name, kwargs in scalar_cases(torch):
        ours = raised(
            lambda: getattr(yg.distributions, name)(
                **{k: yg.tensor(v) for k, v in kwargs.items()}
            )
        )
        theirs = raised(
            lambda: getattr(torch.distributions, name)(
                **{k: torch.tensor(v) for k, v in kwargs.items()}
            )
        )
        same(ours, theirs)


@pytest.mark.parametrize("name", SCALAR_FAMILIES)
def test_values_outside_every_support_raise_torchs_error(name: str, torch: Any) -> None:
    constraints = getattr(torch.distributions, name).arg_constraints
    kwargs = {
        k: VALID[type(c).__name__.lstrip("_")]
        for k, c in constraints.items()
        if k != "logits"
    }
    d = getattr(yg.distributions, name)(**{k: yg.tensor(v) for k, v in kwargs.items()})
    d_ref = getattr(torch.distributions, name)(
        **{k: torch.tensor(v) for k, v in kwargs.items()}
    )
    for value in (-3.5, 0.5, 1.0, 7.0, float("nan")):
        ours = raised(lambda: d.log_prob(yg.tensor(value)))
        same(ours, raised(lambda: d_ref.log_prob(torch.tensor(value))))
