"""Complex parameters step as PyTorch's optimizers step them: on the real view
of their parts (view_as_real), so each moment estimate is per real component."""

from __future__ import annotations

import numpy as np
import pytest

import yamlgrad as yg

torch = pytest.importorskip("torch")

RULES = [
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("Adam", {"lr": 0.1}),
    ("Adam", {"lr": 0.1, "amsgrad": True, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.1}),
    ("RMSprop", {"lr": 0.05}),
    ("Adagrad", {"lr": 0.1}),
]


def _steps(lib, name: str, kwargs: dict) -> np.ndarray:
    p = lib.tensor(np.array([1 + 2j, -0.5 + 0.3j, 0.2 - 1j]), requires_grad=True)
    opt = getattr(lib.optim, name)([p], **kwargs)
    for _ in range(4):
        opt.zero_grad()
        loss = (p * p.conj()).real.sum() + (p.real * 3).sum() - p.imag.sum()
        loss.backward()
        opt.step()
    return p.detach().numpy().copy()


@pytest.mark.parametrize("name, kwargs", RULES, ids=lambda x: str(x))
def test_a_complex_parameter_steps_as_torchs(name: str, kwargs: dict) -> None:
    np.testing.assert_allclose(
        _steps(yg, name, kwargs), _steps(torch, name, kwargs), rtol=1e-12, atol=1e-12
    )
