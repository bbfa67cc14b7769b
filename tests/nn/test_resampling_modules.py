"""The padding, upsampling, shuffle and fold layers of yg.nn (and the shrink,
threshold and GLU activations) against torch.nn:
the same constructor arguments give the same repr, values, node and gradient."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import yamlgrad as yg

torch = pytest.importorskip("torch")

# (module name, constructor arguments, input shape)
MODULES: list[tuple[str, tuple[Any, ...], dict[str, Any], tuple[int, ...]]] = [
    ("ReflectionPad1d", (2,), {}, (2, 3, 4)),
    ("ReflectionPad2d", ((1, 2, 0, 1),), {}, (1, 2, 3, 4)),
    ("ReflectionPad3d", (1,), {}, (1, 1, 2, 3, 3)),
    ("ReplicationPad1d", ((3, 0),), {}, (2, 3)),
    ("ReplicationPad2d", (2,), {}, (1, 2, 3, 3)),
    ("ReplicationPad3d", ((1, 0, 2, 1, 0, 1),), {}, (1, 2, 2, 2, 2)),
    ("Upsample", (), {"scale_factor": 2.0, "mode": "bilinear"}, (1, 2, 3, 3)),
    ("Upsample", (), {"size": (4, 5)}, (1, 2, 3, 3)),
    (
        "Upsample",
        (),
        {"scale_factor": 1.5, "mode": "trilinear", "align_corners": True},
        (1, 1, 2, 2, 3),
    ),
    ("UpsamplingNearest2d", (), {"scale_factor": 3}, (1, 1, 2, 2)),
    ("UpsamplingBilinear2d", (), {"size": (5, 4)}, (1, 1, 2, 3)),
    ("PixelShuffle", (2,), {}, (1, 4, 2, 3)),
    ("PixelUnshuffle", (2,), {}, (1, 1, 4, 2)),
    ("ChannelShuffle", (2,), {}, (1, 4, 3)),
    ("Fold", ((3, 4), (2, 2)), {}, (1, 8, 6)),
    ("Unfold", ((2, 3),), {"padding": 1}, (1, 2, 3, 4)),
    ("GLU", (), {"dim": 1}, (2, 4, 3)),
    ("Hardshrink", (0.3,), {}, (3, 4)),
    ("Softshrink", (), {}, (3, 4)),
    ("Threshold", (0.1, -2.0), {}, (3, 4)),
]


@pytest.mark.parametrize(
    "name, args, kwargs, shape",
    MODULES,
    ids=[f"{m[0]}-{i}" for i, m in enumerate(MODULES)],
)
def test_module_matches_torch(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any], shape: tuple[int, ...]
) -> None:
    ours = getattr(yg.nn, name)(*args, **kwargs)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    data = np.random.default_rng(0).standard_normal(shape)
    x, t = yg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    out, ref = ours(x), theirs(t)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), 1e-12, 1e-12)
    assert type(out.grad_fn).__name__ == type(ref.grad_fn).__name__
    (out * out).sum().backward()
    (ref * ref).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), 1e-12, 1e-12)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize(
    "kwargs",
    [
        {"size": (4, 5)},
        {"scale_factor": 0.5},
        {"scale_factor": (0.4, 0.7), "align_corners": True},
        {"size": (20, 3)},
    ],
    ids=str,
)
def test_interpolate_with_antialias_matches_torch(mode: str, kwargs: dict) -> None:
    """The antialiased filter (wider than the kernel when downscaling): values,
    node and gradient as torch's."""
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(1).standard_normal((1, 2, 9, 11))
    t = torch.tensor(a, requires_grad=True)
    y = yg.tensor(a, requires_grad=True)
    ref = torch.nn.functional.interpolate(t, mode=mode, antialias=True, **kwargs)
    out = yg.nn.functional.interpolate(y, mode=mode, antialias=True, **kwargs)
    assert out.grad_fn.name() == type(ref.grad_fn).__name__
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-12)
    cotangent = np.random.default_rng(2).standard_normal(tuple(ref.shape))
    ref.backward(torch.tensor(cotangent))
    out.backward(yg.tensor(cotangent))
    np.testing.assert_allclose(y.grad.numpy(), t.grad.numpy(), atol=1e-12)


def test_interpolate_antialias_outside_bilinear_and_bicubic_raises_torchs_error() -> (
    None
):
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError) as theirs:
        torch.nn.functional.interpolate(
            torch.ones(1, 1, 4), size=2, mode="linear", antialias=True
        )
    with pytest.raises(ValueError) as ours:
        yg.nn.functional.interpolate(
            yg.ones(1, 1, 4), size=2, mode="linear", antialias=True
        )
    assert str(ours.value) == str(theirs.value)
