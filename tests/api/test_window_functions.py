"""The spectral windows (runtime/window_functions.py) against PyTorch's: values,
dtypes, lengths 0 and 1, periodic and symmetric, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import yamlgrad as yg

torch = pytest.importorskip("torch")

WINDOWS = (
    ("hann_window", {}),
    ("hamming_window", {}),
    ("hamming_window", {"alpha": 0.6, "beta": 0.3}),
    ("blackman_window", {}),
    ("bartlett_window", {}),
    ("kaiser_window", {}),
    ("kaiser_window", {"beta": 3.0}),
)


@pytest.mark.parametrize("name, kwargs", WINDOWS)
@pytest.mark.parametrize("length", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_window_matches_torch(
    name: str, kwargs: dict, length: int, periodic: bool, dtype: str
) -> None:
    ours = getattr(yg, name)(length, periodic, dtype=getattr(yg, dtype), **kwargs)
    theirs = getattr(torch, name)(
        length, periodic, dtype=getattr(torch, dtype), **kwargs
    )
    assert str(ours.dtype) == str(theirs.dtype).replace("torch", "yamlgrad")
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(
        ours.numpy(),
        theirs.numpy(),
        rtol=1e-6,
        atol=1e-6 if dtype == "float32" else 1e-12,
    )
    assert ours.is_leaf and ours.grad_fn is None


def test_window_takes_the_default_dtype_and_requires_grad() -> None:
    ours = yg.hann_window(4, requires_grad=True)
    theirs = torch.hann_window(4, requires_grad=True)
    assert ours.requires_grad and theirs.requires_grad
    assert str(ours.dtype) == "yamlgrad.float32"
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy())


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.hann_window(-1),
        lambda lib: lib.kaiser_window(3, dtype=lib.int64),
        lambda lib: lib.bartlett_window(2.0),
    ],
)
def test_window_errors_are_torchs(call) -> None:
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(yg)
    assert str(ours.value) == str(theirs.value)
