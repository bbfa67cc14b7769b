"""The Python-written Tensor methods against torch: new_*, view_as and its
siblings, type, numpy's keyword spellings, the numpy bridge (__array__),
__format__, F.one_hot."""

from __future__ import annotations

import re

import numpy as np
import pytest

import yamlgrad as yg
import yamlgrad.nn.functional as F


def _dtype_name(t: object) -> str:
    return str(t.dtype).rpartition(".")[2]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: x.new_zeros(2, 3),
        lambda m, x: x.new_zeros((2,), dtype=m.int64),
        lambda m, x: x.new_ones(4),
        lambda m, x: x.new_full((2, 2), 3),
        lambda m, x: x.new_tensor([1, 2]),
        lambda m, x: x.new_empty((0, 2)),
        lambda m, x: x.new(2, 3).zero_(),
        lambda m, x: x.new([1, 2]),
        lambda m, x: x.new(),
        lambda m, x: x.type_as(m.zeros(1, dtype=m.int32)),
        lambda m, x: x.type(m.float16),
        lambda m, x: x.sum(axis=0),
        lambda m, x: x.mean(dim=1, keepdims=True),
        lambda m, x: m.amax(x, axis=1, keepdims=True),
        lambda m, x: x.logsumexp(dim=0, keepdims=True),
        lambda m, x: m.where(x > 0, x, 0.0),
        lambda m, x: x.where(x > 0, m.zeros(3)),
    ],
)
def test_matches_torch(call: object) -> None:
    torch = pytest.importorskip("torch")
    data = np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.25]], dtype=np.float64)
    ours = call(yg, yg.tensor(data))  # type: ignore[operator]
    theirs = call(torch, torch.tensor(data))  # type: ignore[operator]
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert _dtype_name(ours) == _dtype_name(theirs)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_shape_methods_record_torchs_nodes() -> None:
    torch = pytest.importorskip("torch")
    for call in (
        lambda m, x: x.view_as(m.zeros(2, 3)),
        lambda m, x: x.reshape_as(m.zeros(3, 2)),
        lambda m, x: x[:3].expand_as(m.zeros(2, 3)),
        lambda m, x: x.type_as(m.zeros(1, dtype=m.float64)),
        lambda m, x: x.to("cpu", m.float64),
    ):
        ours = call(yg, yg.ones(6, requires_grad=True))
        theirs = call(torch, torch.ones(6, requires_grad=True))
        assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
        assert tuple(ours.shape) == tuple(theirs.shape)


def test_type_names() -> None:
    x = yg.zeros(2)
    assert x.type() == "yamlgrad.FloatTensor"
    assert x.type("torch.DoubleTensor").dtype == yg.float64
    assert x.long().type() == "yamlgrad.LongTensor"
    with pytest.raises(ValueError, match="invalid type"):
        x.type("torch.NoTensor")


def test_numpy_bridge() -> None:
    x = yg.tensor([1.0, 2.0])
    shared = np.asarray(x)
    shared[0] = 5.0
    assert x[0].item() == 5.0
    copied = np.array(x)
    copied[1] = 9.0
    assert x[1].item() == 2.0
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError):
        np.asarray(x, dtype=np.float64, copy=False)
    with pytest.raises(RuntimeError, match="Can't call numpy"):
        np.asarray(yg.ones(2, requires_grad=True))
    assert np.asarray(yg.ones(2, requires_grad=True).detach()).tolist() == [1.0, 1.0]


def test_format() -> None:
    torch = pytest.importorskip("torch")
    for spec in (".2f", ">8.3f", "", "e"):
        assert format(yg.tensor(3.14159), spec) == format(torch.tensor(3.14159), spec)
    assert f"{yg.tensor(7)}" == "7" and f"{yg.tensor([1.0, 2.0])}" == "tensor([1., 2.])"
    with pytest.raises(TypeError):
        format(yg.tensor([1.0, 2.0]), ".2f")


def test_one_hot_as_torch() -> None:
    torch = pytest.importorskip("torch")
    for values, classes in (([0, 2, 1], -1), ([[1], [3]], 5), ([], 3)):
        ours = F.one_hot(yg.tensor(values, dtype=yg.int64), classes)
        theirs = torch.nn.functional.one_hot(
            torch.tensor(values, dtype=torch.int64), classes
        )
        assert ours.dtype == yg.int64
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for values, classes in (([0, 3], 3), ([-1], 2)):
        with pytest.raises(RuntimeError) as expected:
            torch.nn.functional.one_hot(torch.tensor(values), classes)
        with pytest.raises(RuntimeError, match=str(expected.value)):
            F.one_hot(yg.tensor(values), classes)
    with pytest.raises(RuntimeError, match="LongTensor"):
        F.one_hot(yg.tensor([0.0]))


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.Tensor([-4.0, 2]),
        lambda m: m.Tensor(2, 3).zero_(),
        lambda m: m.Tensor(),
        lambda m: m.FloatTensor([1, 2]),
        lambda m: m.LongTensor([1, 2]),
        lambda m: m.DoubleTensor(2).zero_(),
        lambda m: m.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]]).std(unbiased=False),
        lambda m: m.std(m.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]]), 1, False),
        lambda m: m.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]]).var(1, True, True),
        lambda m: m.einsum("ij,kj->ik", m.ones(2, 3), m.ones(4, 3)),
        lambda m: m.einsum("ij->j", [m.ones(2, 3)]),
        lambda m: m.stack(m.meshgrid(m.arange(2), m.arange(3), indexing="ij")),
        lambda m: m.stack(m.meshgrid(m.arange(2), m.arange(3), indexing="xy")),
    ],
)
def test_pytorch_python_level_signatures(call: object) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = call(yg), call(torch)  # type: ignore[operator]
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert _dtype_name(ours) == _dtype_name(theirs)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_clip_grad_as_torch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (4,))]
    for norm_type in (2.0, 1.0, float("inf")):
        ours = [yg.zeros(g.shape, requires_grad=True) for g in grads]
        theirs = [torch.zeros(g.shape, requires_grad=True) for g in grads]
        for p, t, g in zip(ours, theirs, grads):
            p.grad, t.grad = yg.tensor(g), torch.tensor(g)
        total = yg.nn.utils.clip_grad_norm_(ours, 1.0, norm_type)
        expected = torch.nn.utils.clip_grad_norm_(theirs, 1.0, norm_type)
        assert total.item() == pytest.approx(expected.item(), rel=1e-5)
        for p, t in zip(ours, theirs):
            np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-5)
    yg.nn.utils.clip_grad_value_(ours, 0.01)
    assert all(p.grad.abs().max().item() <= 0.01 for p in ours)
    vector = yg.nn.utils.parameters_to_vector(ours)
    assert vector.shape == (16,)
    yg.nn.utils.vector_to_parameters(yg.arange(16.0), ours)
    assert ours[1].tolist() == [12.0, 13.0, 14.0, 15.0]


@pytest.mark.parametrize(
    "view",
    [
        lambda x: x,
        lambda x: x.transpose(1, 2),
        lambda x: x[:, :, ::2],
        lambda x: x[:, :1],
        lambda x: x[:1],
        lambda x: x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
        lambda x: x[:, :1, :1].permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
        lambda x: x.reshape(2, 3, 4, 5, 1).permute(0, 4, 1, 2, 3),
        lambda x: x.reshape(2, 3, 20, 1, 1)
        .permute(0, 2, 3, 4, 1)
        .contiguous()
        .permute(0, 4, 1, 2, 3),
        lambda x: x.reshape(2, 60).t(),
        lambda x: x.reshape(6, 20)[:, :0].t(),
        lambda x: x.sum(),
    ],
)
def test_is_contiguous_as_torch(view: object) -> None:
    """Each memory format's answer, on tensors whose strides are torch's."""
    torch = pytest.importorskip("torch")
    data = np.arange(120.0).reshape(2, 3, 4, 5)
    ours, theirs = view(yg.tensor(data)), view(torch.tensor(data))  # type: ignore
    formats = [
        torch.contiguous_format,
        torch.preserve_format,
        torch.channels_last,
        torch.channels_last_3d,
    ]
    assert ours.is_contiguous() == theirs.is_contiguous()
    for memory_format in formats:
        expected = theirs.is_contiguous(memory_format=memory_format)
        assert ours.is_contiguous(memory_format=memory_format) == expected
    assert ours.is_contiguous(memory_format=0) == theirs.is_contiguous()


@pytest.mark.parametrize(
    "args, kwargs",
    [((1,), {}), ((1, 2), {}), ((), {"memory_format": 1}), ((), {"foo": 1})],
    ids=["positional", "two-positionals", "int-format", "unknown-keyword"],
)
def test_is_contiguous_errors_as_torch(args: tuple, kwargs: dict) -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError) as theirs:
        torch.ones(2).is_contiguous(*args, **kwargs)
    with pytest.raises(TypeError, match=re.escape(str(theirs.value))):
        yg.ones(2).is_contiguous(*args, **kwargs)
