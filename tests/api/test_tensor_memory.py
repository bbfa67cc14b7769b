"""A tensor's memory as PyTorch reports it (runtime/tensor_memory.py): strides,
storage offsets and addresses of views, element and data sizes, resizing, the
per-element Python callbacks and the layout flags, each against torch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg

torch = pytest.importorskip("torch")


def _both(make: Callable[[Any], Any]) -> tuple[Any, Any]:
    return make(yg), make(torch)


def _same_error(call: Callable[[Any], Any]) -> None:
    """Both libraries raise the same exception type with the same text."""
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(yg)
    assert str(ours.value).replace("yamlgrad", "torch") == str(theirs.value)


LAYOUTS = {
    "contiguous": lambda m: m.arange(24.0).view(2, 3, 4),
    "transposed": lambda m: m.arange(24.0).view(2, 3, 4).transpose(0, 2),
    "sliced": lambda m: m.arange(24.0).view(4, 6)[1:, 2:5],
    "stepped": lambda m: m.arange(24.0)[3::4],
    "expanded": lambda m: m.arange(3.0).expand(2, 4, 3),
    "selected": lambda m: m.arange(24.0).view(2, 3, 4)[1, :, 2],
    "unsqueezed": lambda m: m.arange(6.0).view(2, 3).unsqueeze(1),
    "empty": lambda m: m.ones(0, 3),
    "scalar": lambda m: m.tensor(2.0),
    "channels_last": lambda m: m.ones(2, 3, 4, 5).contiguous(
        memory_format=m.channels_last
    ),
    "narrowed": lambda m: m.arange(10.0).narrow(0, 3, 4),
    "chunk": lambda m: m.arange(12.0).view(3, 4).chunk(2, dim=1)[1],
}


@pytest.mark.parametrize("make", LAYOUTS.values(), ids=list(LAYOUTS))
def test_strides_offsets_and_sizes_are_torchs(make: Callable[[Any], Any]) -> None:
    ours, theirs = _both(make)
    assert ours.stride() == theirs.stride()
    for d in range(-ours.ndim, ours.ndim):
        assert ours.stride(d) == theirs.stride(d)
        assert ours.stride(dim=d) == theirs.stride(dim=d)
    assert ours.storage_offset() == theirs.storage_offset()
    assert ours.element_size() == theirs.element_size()
    assert ours.itemsize == theirs.itemsize
    assert ours.nbytes == theirs.nbytes


def test_stride_errors_are_torchs() -> None:
    _same_error(lambda m: m.ones(2, 3).stride(2))
    _same_error(lambda m: m.ones(2, 3).stride(-3))
    _same_error(lambda m: m.tensor(1.0).stride(0))
    _same_error(lambda m: m.ones(2).stride("a"))


def test_data_ptr_is_the_address_of_the_first_element() -> None:
    x = yg.arange(6.0)
    t = torch.arange(6.0)
    for index in (slice(2, None), slice(None, None, 2)):
        assert x[index].data_ptr() - x.data_ptr() == t[index].data_ptr() - t.data_ptr()
    assert x.data_ptr() == x.view(2, 3).data_ptr() == x.const_data_ptr()
    before = x.data_ptr()
    x.add_(1)
    assert x.data_ptr() == before  # in place: the same memory
    assert x.is_set_to(x) and not x.is_set_to(x.clone())
    assert x[:3].is_set_to(x[:3]) and not x.view(2, 3).is_set_to(x)


@pytest.mark.parametrize(
    "dtype",
    [
        "float16",
        "float32",
        "float64",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "bool",
    ],
)
def test_element_sizes_and_signs_are_torchs(dtype: str) -> None:
    ours = yg.ones(3, dtype=getattr(yg, dtype))
    theirs = torch.ones(3, dtype=getattr(torch, dtype))
    assert ours.element_size() == theirs.element_size()
    assert ours.is_signed() == theirs.is_signed()
    assert ours.nbytes == theirs.nbytes


@pytest.mark.parametrize("name", ["byte", "char", "short"])
def test_byte_char_short_convert_as_torch(name: str) -> None:
    values = [[-3.7, 0.2], [250.9, 4.0]]
    ours = getattr(yg.tensor(values), name)()
    theirs = getattr(torch.tensor(values), name)()
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_layout_and_device_flags_are_torchs_cpu_flags() -> None:
    ours, theirs = yg.ones(2), torch.ones(2)
    assert ours.layout is yg.strided
    for name in (
        "is_sparse",
        "is_sparse_csr",
        "is_quantized",
        "is_nested",
        "is_mkldnn",
        "is_meta",
        "is_mps",
        "is_xpu",
        "is_xla",
        "is_vulkan",
        "is_ipu",
        "is_mtia",
        "is_maia",
    ):
        assert getattr(ours, name) is getattr(theirs, name), name
    assert ours.is_pinned() is theirs.is_pinned() is False
    assert ours.is_distributed() is theirs.is_distributed()
    _same_error(lambda m: m.ones(2).pin_memory())


def test_share_memory_marks_the_storage() -> None:
    x = yg.ones(2, 3)
    assert not x.is_shared()
    assert x.share_memory_() is x
    assert x.is_shared() and x[0].is_shared() and x.t().is_shared()
    assert not yg.ones(2).is_shared()


def test_is_same_size_and_is_nonzero_as_torch() -> None:
    assert yg.ones(2, 3).is_same_size(yg.zeros(2, 3))
    assert not yg.ones(2, 3).is_same_size(yg.zeros(3, 2))
    assert yg.tensor([2.0]).is_nonzero() and not yg.tensor(0).is_nonzero()
    assert yg.is_nonzero(yg.tensor([[1]])) is torch.is_nonzero(torch.tensor([[1]]))
    _same_error(lambda m: m.ones(3).is_nonzero())
    _same_error(lambda m: m.ones(0).is_nonzero())
    _same_error(lambda m: bool(m.ones(0)))
    assert yg.is_signed(yg.ones(1, dtype=yg.uint8)) is False
    assert yg.is_same_size(yg.ones(2), yg.ones(2))


RESIZES = {
    "shrink": (lambda m: m.arange(6.0), (2, 2)),
    "same": (lambda m: m.arange(6.0), (3, 2)),
    "list": (lambda m: m.arange(6.0), ([3],)),
    "view": (lambda m: m.arange(10.0)[2:], (2, 3)),
    "transposed": (lambda m: m.arange(6.0).view(2, 3).t(), (6,)),
}


@pytest.mark.parametrize("make, sizes", RESIZES.values(), ids=list(RESIZES))
def test_resize_keeps_the_storages_elements_as_torch(
    make: Callable[[Any], Any], sizes: tuple[Any, ...]
) -> None:
    ours, theirs = _both(make)
    assert ours.resize_(*sizes) is ours
    theirs.resize_(*sizes)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()
    assert ours._version == theirs._version
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_resize_grows_with_the_old_elements_first() -> None:
    ours, theirs = yg.arange(6.0), torch.arange(6.0)
    ours.resize_(2, 4)
    theirs.resize_(2, 4)
    assert tuple(ours.shape) == (2, 4)
    np.testing.assert_array_equal(ours.numpy().ravel()[:6], theirs.numpy().ravel()[:6])


def test_resize_to_a_memory_format_and_as_another_tensor() -> None:
    ours, theirs = yg.ones(2, 3, 4, 5), torch.ones(2, 3, 4, 5)
    ours.resize_(5, 4, 3, 2, memory_format=yg.channels_last)
    theirs.resize_(5, 4, 3, 2, memory_format=torch.channels_last)
    assert ours.stride() == theirs.stride()
    ours, theirs = yg.ones(2, 3), torch.ones(2, 3)
    assert (
        ours.resize_as_(yg.ones(3, 3)).stride()
        == theirs.resize_as_(torch.ones(3, 3)).stride()
    )


def test_resize_errors_are_torchs() -> None:
    _same_error(lambda m: m.ones(2, requires_grad=True).resize_(3))
    _same_error(lambda m: (m.ones(2, requires_grad=True) * 2).resize_(3))
    _same_error(lambda m: m.ones(2).resize_(-1))
    _same_error(lambda m: m.ones(2).resize_(3, 2, memory_format=m.channels_last))


def test_empty_strided_and_new_empty_strided_as_torch() -> None:
    for size, stride in (
        ((2, 3), (1, 2)),
        ((2, 3), (4, 1)),
        ((2, 3), (0, 1)),
        ((0, 2), (2, 1)),
    ):
        ours = yg.empty_strided(size, stride)
        theirs = torch.empty_strided(size, stride)
        assert ours.stride() == theirs.stride() and ours.dtype is yg.float32
        assert ours.storage_offset() == 0
    made = yg.ones(2, dtype=yg.float64).new_empty_strided((2, 3), (3, 1))
    assert made.dtype is yg.float64 and made.stride() == (3, 1)
    made = yg.ones(2).new_empty_strided((2,), (1,), dtype=yg.int64)
    assert made.dtype is yg.int64 and not made.requires_grad
    _same_error(lambda m: m.empty_strided((2, 3), (3,)))
    _same_error(lambda m: m.empty_strided((2, 3), (-1, 1)))
    _same_error(lambda m: m.empty_strided((2, -3), (1, 1)))


def test_apply_map_and_map2_as_torch() -> None:
    ours, theirs = yg.arange(6.0), torch.arange(6.0)
    ours.apply_(lambda v: v * 2)
    theirs.apply_(lambda v: v * 2)
    ours.map_(yg.ones(6), lambda a, b: a + b)
    theirs.map_(torch.ones(6), lambda a, b: a + b)
    ours.map2_(yg.ones(1), yg.arange(6.0), lambda a, b, c: a + b * c)
    theirs.map2_(torch.ones(1), torch.arange(6.0), lambda a, b, c: a + b * c)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours._version == theirs._version
    seen: list[str] = []
    yg.arange(3).apply_(lambda v: seen.append(type(v).__name__) or v)
    assert seen == ["int"] * 3


def test_apply_map_and_map2_errors_are_torchs() -> None:
    _same_error(lambda m: m.ones(2, requires_grad=True).apply_(lambda v: v))
    _same_error(lambda m: m.ones(2).map_(m.ones(2, requires_grad=True), lambda a, b: a))
    _same_error(
        lambda m: m.ones(2).map2_(m.ones(2), m.ones(2, requires_grad=True), max)
    )
    _same_error(lambda m: m.arange(6.0).apply_(lambda v: "x"))
    with pytest.raises(TypeError, match="map_: expected yamlgrad.FloatTensor"):
        yg.ones(2).map_(yg.ones(2, dtype=yg.int64), lambda a, b: a)
