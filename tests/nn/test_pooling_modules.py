"""The 3-d, adaptive-max, unpooling and fractional pooling layers of yg.nn, their
functional forms, and F.affine_grid, against torch: the same arguments give the
same repr, values, indices, node and gradient."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg

torch = pytest.importorskip("torch")

# (module name, constructor arguments, input shape)
MODULES: list[tuple[str, tuple[Any, ...], dict[str, Any], tuple[int, ...]]] = [
    ("MaxPool3d", (2,), {}, (1, 2, 4, 4, 4)),
    (
        "MaxPool3d",
        ((3, 2, 2),),
        {"stride": 1, "padding": 1, "ceil_mode": True},
        (2, 3, 4, 5),
    ),
    ("AvgPool3d", (2,), {}, (1, 2, 4, 4, 4)),
    (
        "AvgPool3d",
        (3,),
        {"stride": 2, "padding": 1, "count_include_pad": False},
        (1, 1, 5, 4, 5),
    ),
    ("AdaptiveMaxPool2d", ((2, None),), {}, (1, 2, 5, 7)),
    ("AdaptiveMaxPool2d", (3,), {}, (2, 4, 4)),
    ("AdaptiveMaxPool3d", ((2, 3, 2),), {}, (1, 2, 4, 5, 3)),
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


@pytest.mark.parametrize("dims", [2, 3])
def test_unpooling_inverts_max_pooling_as_torch(dims: int) -> None:
    shape = (1, 2) + (4,) * dims
    data = np.random.default_rng(1).standard_normal(shape)
    pools = [
        getattr(lib.nn, f"MaxPool{dims}d")(2, return_indices=True)
        for lib in (yg, torch)
    ]
    unpools = [getattr(lib.nn, f"MaxUnpool{dims}d")(2) for lib in (yg, torch)]
    assert repr(unpools[0]) == repr(unpools[1])
    results = []
    for lib, pool, unpool in zip((yg, torch), pools, unpools):
        x = lib.tensor(data, requires_grad=True)
        values, indices = pool(x)
        out = unpool(values, indices, output_size=list(shape))
        (out * out).sum().backward()
        results.append((out, indices, x.grad))
    (out, indices, grad), (ref, ref_indices, ref_grad) = results
    np.testing.assert_array_equal(indices.numpy(), ref_indices.numpy())
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), 1e-12)
    assert type(out.grad_fn).__name__ == type(ref.grad_fn).__name__
    np.testing.assert_allclose(grad.numpy(), ref_grad.numpy(), 1e-12)


def test_unpooling_refuses_an_output_size_too_far_from_the_default() -> None:
    message = 'invalid output_size "[7, 4]" (dim 0 must be between 2 and 6)'
    for lib in (yg, torch):
        values = lib.zeros(1, 1, 2, 2)
        indices = lib.zeros(1, 1, 2, 2, dtype=lib.int64)
        with pytest.raises(ValueError, match=re.escape(message)):
            lib.nn.functional.max_unpool2d(values, indices, 2, output_size=[7, 4])


@pytest.mark.parametrize("dims", [2, 3])
def test_fractional_max_pool_with_given_samples_matches_torch(dims: int) -> None:
    rng = np.random.default_rng(2)
    data = rng.standard_normal((2, 3) + (7,) * dims)
    samples = rng.uniform(0, 1, (2, 3, dims))
    results = []
    for lib in (yg, torch):
        x = lib.tensor(data, requires_grad=True)
        pool = getattr(lib.nn, f"FractionalMaxPool{dims}d")(
            2, output_ratio=0.5, return_indices=True,
            _random_samples=lib.tensor(samples),
        )  # fmt: skip
        values, indices = pool(x)
        (values * values).sum().backward()
        results.append((values, indices, x.grad))
    (out, indices, grad), (ref, ref_indices, ref_grad) = results
    np.testing.assert_array_equal(indices.numpy(), ref_indices.numpy())
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), 1e-12)
    assert type(out.grad_fn).__name__ == type(ref.grad_fn).__name__
    np.testing.assert_allclose(grad.numpy(), ref_grad.numpy(), 1e-12)


def test_fractional_max_pool_draws_its_samples() -> None:
    x = yg.randn(1, 2, 8, 8)
    out = yg.nn.functional.fractional_max_pool2d(x, 2, output_size=(4, 3))
    assert out.shape == (1, 2, 4, 3)
    assert out.grad_fn is None


@pytest.mark.parametrize(
    "size, align_corners",
    [((2, 3, 4, 5), False), ((1, 1, 3, 2), True), ((2, 1, 2, 3, 4), False)],
)
def test_affine_grid_matches_torch(size: tuple[int, ...], align_corners: bool) -> None:
    dims = len(size) - 2
    data = np.random.default_rng(3).standard_normal((size[0], dims, dims + 1))
    theta = yg.tensor(data, requires_grad=True)
    ref_theta = torch.tensor(data, requires_grad=True)
    out = yg.nn.functional.affine_grid(theta, size, align_corners=align_corners)
    ref = torch.nn.functional.affine_grid(ref_theta, size, align_corners=align_corners)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), 1e-12, 1e-14)
    assert type(out.grad_fn).__name__ == type(ref.grad_fn).__name__
    (out * out).sum().backward()
    (ref * ref).sum().backward()
    np.testing.assert_allclose(theta.grad.numpy(), ref_theta.grad.numpy(), 1e-12)


def test_affine_grid_refuses_a_theta_of_the_wrong_shape_as_torch() -> None:
    message = "Expected a batch of 2D affine matrices of shape Nx2x3 for size"
    for lib in (yg, torch):
        with pytest.raises(ValueError, match=message):
            lib.nn.functional.affine_grid(lib.zeros(1, 3, 4), (1, 1, 2, 2), False)


@pytest.mark.parametrize(
    "mode, padding_mode, shapes",
    [
        ("bilinear", "zeros", ((2, 3, 4, 5), (2, 3, 2, 2))),
        ("nearest", "border", ((1, 2, 4, 4), (1, 2, 3, 2))),
        ("bicubic", "reflection", ((1, 2, 5, 4), (1, 3, 2, 2))),
        ("bilinear", "reflection", ((1, 2, 3, 4, 3), (1, 2, 2, 3, 3))),
    ],
)
def test_grid_sample_matches_torch(
    mode: str, padding_mode: str, shapes: tuple[tuple[int, ...], ...]
) -> None:
    rng = np.random.default_rng(4)
    data, points = rng.standard_normal(shapes[0]), rng.uniform(-1.1, 1.1, shapes[1])
    results = []
    for lib in (yg, torch):
        x = lib.tensor(data, requires_grad=True)
        grid = lib.tensor(points, requires_grad=True)
        out = lib.nn.functional.grid_sample(
            x, grid, mode=mode, padding_mode=padding_mode, align_corners=False
        )
        (out * out).sum().backward()
        results.append((out, x.grad, grid.grad))
    (out, x_grad, grid_grad), (ref, ref_x_grad, ref_grid_grad) = results
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), 1e-12, 1e-14)
    assert type(out.grad_fn).__name__ == type(ref.grad_fn).__name__
    np.testing.assert_allclose(x_grad.numpy(), ref_x_grad.numpy(), 1e-12, 1e-14)
    np.testing.assert_allclose(grid_grad.numpy(), ref_grid_grad.numpy(), 1e-10, 1e-12)


def test_grid_sample_refuses_an_unknown_mode_as_torch() -> None:
    message = "expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: 'area'"
    for lib in (yg, torch):
        with pytest.raises(ValueError, match=message):
            lib.nn.functional.grid_sample(
                lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2), mode="area"
            )


@pytest.mark.parametrize(
    "name, args",
    [
        ("max_pool2d", (2,)),
        ("max_pool2d", (3, 1, 1)),
        ("max_pool3d", (2,)),
        ("adaptive_max_pool2d", (3,)),
        ("adaptive_max_pool3d", (2,)),
    ],
)
def test_max_pooling_keeps_the_first_zeros_sign_as_torch(
    name: str, args: tuple
) -> None:
    """A window whose maximum is a zero of both signs gives its first one (what
    np.maximum returns there is either), with torch's index."""
    rng = np.random.default_rng(5)
    dims = 3 if name.endswith("3d") else 2
    shape = (2, 3) + (6,) * dims
    x = rng.choice(np.array([-0.0, 0.0, -1.0]), size=shape)
    want = getattr(torch.nn.functional, name)(
        torch.tensor(x), *args, return_indices=True
    )
    got = getattr(yg.nn.functional, name)(yg.tensor(x), *args, return_indices=True)
    np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
    np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
    np.testing.assert_array_equal(
        np.signbit(got[0].numpy()), np.signbit(want[0].numpy())
    )
