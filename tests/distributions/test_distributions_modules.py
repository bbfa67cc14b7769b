"""The package's public paths, as torch.distributions': `yamlgrad.distributions`
and each submodule by PyTorch's name, one module object under both names."""

from __future__ import annotations

import importlib

import pytest

import yamlgrad as yg

SUBMODULES = (
    "bernoulli",
    "beta",
    "categorical",
    "constraint_registry",
    "constraints",
    "dirichlet",
    "distribution",
    "exp_family",
    "gamma",
    "independent",
    "kl",
    "multivariate_normal",
    "normal",
    "transformed_distribution",
    "transforms",
    "utils",
)


@pytest.mark.parametrize("name", SUBMODULES)
def test_submodule_is_importable_by_its_public_path(name: str) -> None:
    public = importlib.import_module(f"yamlgrad.distributions.{name}")
    runtime = importlib.import_module(f"yamlgrad.runtime.distributions.{name}")
    assert public is runtime


def test_the_public_names_are_torchs() -> None:
    torch = pytest.importorskip("torch")
    assert set(yg.distributions.__all__) == set(torch.distributions.__all__)
    for module in ("constraints", "transforms"):
        ours = getattr(yg.distributions, module).__all__
        assert set(ours) == set(getattr(torch.distributions, module).__all__)
    assert yg.distributions.Normal is yg.distributions.normal.Normal
    assert yg.distributions.kl_divergence is yg.distributions.kl.kl_divergence
