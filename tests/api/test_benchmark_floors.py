"""The per-op benchmark's floors compute what their op computes: the forward and
every input's gradient for a cotangent of ones, on the entry's largest sample."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from support import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
import ops as per_op  # noqa: E402
import passes  # noqa: E402

import yamlgrad as yg  # noqa: E402
from yamlgrad.testing import build_args, python_names  # noqa: E402
from yamlgrad.tools.load import load_derivatives  # noqa: E402

INFOS = {
    info.func.cpp_name: info
    for info in per_op.selected(load_derivatives(per_op.YAML), "")
    if info.func.cpp_name in per_op.FLOORS
}


def test_every_floor_names_an_entry() -> None:
    assert set(per_op.FLOORS) == set(INFOS)


@pytest.mark.parametrize("name", sorted(INFOS))
def test_floor_matches_its_op(name: str) -> None:
    info = INFOS[name]
    kwargs = per_op.largest_sample(info).materialize(
        np.random.default_rng(0), np.dtype("float64")
    )
    diff = sorted(per_op._differentiable(info, kwargs))
    leaves = {n: yg.tensor(kwargs[n], requires_grad=True) for n in diff}
    wrapper = getattr(yg.generated.VariableType, info.wrapper_name)
    result = wrapper(**python_names(build_args(kwargs, leaves, yg.tensor)))
    first = result[0] if isinstance(result, (tuple, list)) else result
    grads = yg.autograd.grad(first, list(leaves.values()), yg.ones_like(first))
    grad = np.ones(first.shape, np.float64)
    forward, *derivatives = per_op.FLOORS[name](grad, **kwargs)
    np.testing.assert_allclose(forward, first.detach().numpy(), rtol=1e-7, atol=1e-7)
    order = [n for n in kwargs if n in leaves]  # the floor returns the schema's order
    expected = dict(zip(diff, grads))
    for n, value in zip(order, derivatives):
        np.testing.assert_allclose(
            np.broadcast_to(value, kwargs[n].shape) if np.ndim(value) else value,
            expected[n].numpy(),
            rtol=1e-6,
            atol=1e-7,
        )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("activation", passes.ACTIVATIONS, ids=lambda a: a.name)
def test_pass_recipe_computes_its_activation(activation: object, dtype: str) -> None:
    """Each recipe of benchmarks/passes.py (the fewest numpy passes found for an
    activation's forward and backward) computes the activation and its gradient,
    so the bound it gives is a bound for the op itself."""
    x, g = passes.inputs(dtype, 10_000)
    _, _, values = passes.recipe(activation, x, g)
    passes.check(activation, x, g, values)
