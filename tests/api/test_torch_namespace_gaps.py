"""torch's top-level utilities against torch: the triangle indices, the window
functions, asarray,
range, histogram, unravel_index, chain_matmul, the counting and sign ops
(bincount, isin, gcd, lcm, signbit, isposinf, isneginf, heaviside, argwhere),
the settings, typename and the removed linear-algebra functions."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg

torch = pytest.importorskip("torch")


def _same(call: Callable[[Any], Any]) -> None:
    """`call(module)` gives the same values and dtypes in both libraries."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = call(yg), call(torch)
    if isinstance(theirs, tuple):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _same_tensor(o, t)
    else:
        _same_tensor(ours, theirs)


def _same_tensor(ours: Any, theirs: Any) -> None:
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-7)


def _same_error(call: Callable[[Any], Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as theirs:
            call(torch)
        with pytest.raises(type(theirs.value)) as ours:
            call(yg)
    assert str(ours.value).replace("yamlgrad.", "torch.") == str(theirs.value)


# fmt: off
SAME = {
    "tril_indices": lambda m: m.tril_indices(3, 3),
    "tril_indices_offset": lambda m: m.tril_indices(4, 3, -1),
    "triu_indices": lambda m: m.triu_indices(3, 4, 1),
    "triu_indices_empty": lambda m: m.triu_indices(0, 3),
    "tril_indices_int32": lambda m: m.tril_indices(3, 2, dtype=m.int32),
    "range": lambda m: m.range(1, 4),
    "range_step": lambda m: m.range(0, 1, 0.25),
    "range_down": lambda m: m.range(4, 1, -1),
    "range_int64": lambda m: m.range(1, 4, dtype=m.int64),
    "scalar_tensor": lambda m: m.scalar_tensor(3),
    "scalar_tensor_int": lambda m: m.scalar_tensor(3, dtype=m.int64),
    "scalar_tensor_bool": lambda m: m.scalar_tensor(True),
    **{
        f"{name}_{length}_{periodic}": (
            lambda name, length, periodic: lambda m: getattr(m, name)(length, periodic)
        )(name, length, periodic)
        for name in ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window")
        for length in (0, 1, 2, 7)
        for periodic in (True, False)
    },
    "hamming_window_coefficients": lambda m: m.hamming_window(5, False, 0.5, 0.5),
    "kaiser_window_beta": lambda m: m.kaiser_window(6, True, 5.0, dtype=m.float64),
    "blackman_window_double": lambda m: m.blackman_window(3, dtype=m.float64),
    "empty_permuted_strides": lambda m: m.tensor(m.empty_permuted((2, 3, 4), (0, 2, 1)).stride()),
    "frombuffer": lambda m: m.frombuffer(bytearray(b"\x01\x02\x03\x04"), dtype=m.uint8, count=2, offset=1),
    "frombuffer_int32": lambda m: m.frombuffer(bytearray(8), dtype=m.int32),
    "asarray_list": lambda m: m.asarray([1, 2]),
    "asarray_floats": lambda m: m.asarray([1.0, 2.0], dtype=m.float64),
    "asarray_number": lambda m: m.asarray(3.5),
    "histogram_count": lambda m: m.histogram(m.tensor([1.0, 2, 1]), bins=4, range=(0.0, 3.0)),
    "histogram_data_range": lambda m: m.histogram(m.tensor([0.3, 2.5, 1.0, 1.7]), 3),
    "histogram_constant": lambda m: m.histogram(m.tensor([1.0, 1.0]), 2),
    "histogram_empty": lambda m: m.histogram(m.tensor([]), 2),
    "histogram_edges": lambda m: m.histogram(m.tensor([1.0, 2, 1]), m.tensor([0.0, 1, 2, 3]), weight=m.tensor([1.0, 2, 4]), density=True),
    "histogram_method": lambda m: m.tensor([1.0, 2.0]).histogram(2),
    "unravel_index": lambda m: m.unravel_index(m.tensor([4, 1]), (2, 3)),
    "unravel_index_wraps": lambda m: m.unravel_index(m.tensor([[-1, 6, -7]]), m.Size([2, 3])),
    "unravel_index_int": lambda m: m.unravel_index(m.tensor(1), 6),
    "chain_matmul": lambda m: m.chain_matmul(m.arange(6.0).view(2, 3), m.ones(3, 4), m.ones(4, 2)),
    "chain_matmul_one": lambda m: m.chain_matmul(m.ones(2, 3)),
    "bincount": lambda m: m.bincount(m.tensor([0, 1, 1, 3])),
    "bincount_weights": lambda m: m.bincount(m.tensor([0, 1, 1, 3]), m.tensor([0.5, 1, 1, 2.0]), minlength=6),
    "bincount_int_weights": lambda m: m.tensor([0, 1]).bincount(m.tensor([1, 2])),
    "bincount_empty": lambda m: m.bincount(m.tensor([], dtype=m.int64)),
    "isin": lambda m: m.isin(m.tensor([1, 2, 3]), m.tensor([2, 5])),
    "isin_invert": lambda m: m.isin(m.tensor([[1, 2], [3, 4]]), m.tensor([2.0]), invert=True),
    "isin_scalar": lambda m: m.isin(m.tensor([1, 2, 3]), 2),
    "isin_scalar_element": lambda m: m.isin(2, m.tensor([1, 2, 3])),
    "gcd": lambda m: m.gcd(m.tensor([4, -6, 0]), m.tensor([6, 4, 0])),
    "lcm": lambda m: m.tensor([4, -6, 0]).lcm(m.tensor([6, 4, 0])),
    "gcd_": lambda m: m.tensor([4, 6]).gcd_(m.tensor([6, 4])),
    "lcm_": lambda m: m.lcm_(m.tensor([4, 6]), m.tensor([6, 4])),
    "signbit": lambda m: m.signbit(m.tensor([-0.0, 0.0, -1.5, 2.0])),
    "signbit_int": lambda m: m.tensor([-2, 0, 3]).signbit(),
    "isposinf": lambda m: m.isposinf(m.tensor([1.0, np.inf, -np.inf, np.nan])),
    "isneginf": lambda m: m.tensor([1.0, np.inf, -np.inf, np.nan]).isneginf(),
    "isneginf_int": lambda m: m.isneginf(m.tensor([1, -2])),
    "heaviside": lambda m: m.heaviside(m.tensor([-1.5, 0.0, 2.0, np.nan]), m.tensor([0.5])),
    "heaviside_int": lambda m: m.tensor([[0, -3], [4, 0]]).heaviside(m.tensor([7, 8])),
    "heaviside_": lambda m: m.tensor([-1.0, 0.0, 2.0]).heaviside_(m.tensor(0.25)),
    "argwhere": lambda m: m.argwhere(m.tensor([[1, 0], [0, 2]])),
    "argwhere_0d": lambda m: m.argwhere(m.tensor(3.0)),
    "argwhere_0d_zero": lambda m: m.tensor(0.0).argwhere(),
}
ERRORS = {
    "tril_indices_row": lambda m: m.tril_indices(-1, 3),
    "triu_indices_col": lambda m: m.triu_indices(2, -3),
    "tril_indices_float": lambda m: m.tril_indices(3, 3, dtype=m.float32),
    "range_end": lambda m: m.range(5),
    "range_sign": lambda m: m.range(4, 1),
    "range_step": lambda m: m.range(1, 4, 0),
    "scalar_tensor_complex": lambda m: m.scalar_tensor(2 + 1j),
    "hann_window_negative": lambda m: m.hann_window(-1),
    "kaiser_window_negative": lambda m: m.kaiser_window(-2),
    "hann_window_int": lambda m: m.hann_window(4, dtype=m.int64),
    "empty_permuted_rank": lambda m: m.empty_permuted((2, 3, 4), (0, 2)),
    "frombuffer_empty": lambda m: m.frombuffer(bytearray(), dtype=m.uint8),
    "frombuffer_size": lambda m: m.frombuffer(bytearray(b"123"), dtype=m.int32),
    "asarray_alias_sequence": lambda m: m.asarray([1, 2], copy=False),
    "asarray_alias_dtype": lambda m: m.asarray(m.ones(2), dtype=m.float64, copy=False),
    "histogram_bins": lambda m: m.histogram(m.tensor([1.0, 2.0]), 0),
    "histogram_range": lambda m: m.histogram(m.tensor([1.0, 2.0]), 2, range=(3.0, 1.0)),
    "histogram_infinite": lambda m: m.histogram(m.tensor([1.0, 2.0, np.inf]), 3),
    "unravel_index_float": lambda m: m.unravel_index(m.tensor(1.0), (2, 3)),
    "unravel_index_negative_shape": lambda m: m.unravel_index(m.tensor(1), (2, -3)),
    "chain_matmul_none": lambda m: m.chain_matmul(),
    "bincount_2d": lambda m: m.bincount(m.tensor([[0]])),
    "bincount_negative": lambda m: m.bincount(m.tensor([-1])),
    "bincount_float": lambda m: m.bincount(m.tensor([0.5])),
    "gcd_float": lambda m: m.gcd(m.tensor([4.0]), m.tensor([6.0])),
    "lcm_bool": lambda m: m.lcm(m.tensor([True]), m.tensor([True])),
    "heaviside_dtypes": lambda m: m.heaviside(m.tensor([0.0, -1, 2]), m.tensor([1])),
    **{
        f"removed_{name}": (lambda name: lambda m: getattr(m, name)(m.eye(2), m.eye(2)))(name)
        for name in ("solve", "lstsq")
    },
    **{
        f"removed_{name}": (lambda name: lambda m: getattr(m, name)(m.eye(2)))(name)
        for name in ("symeig", "eig", "matrix_rank")
    },
    **{
        f"removed_method_{name}": (lambda name: lambda m: getattr(m.eye(2), name)(m.eye(2)))(name)
        for name in ("solve", "lstsq")
    },
    "removed_method_symeig": lambda m: m.eye(2).symeig(eigenvectors=True),
    "removed_method_eig": lambda m: m.eye(2).eig(),
}
# fmt: on


@pytest.mark.parametrize("call", SAME.values(), ids=list(SAME))
def test_matches_torch(call: Callable[[Any], Any]) -> None:
    _same(call)


@pytest.mark.parametrize("call", ERRORS.values(), ids=list(ERRORS))
def test_errors_are_torchs(call: Callable[[Any], Any]) -> None:
    _same_error(call)


def test_range_warns_as_torch() -> None:
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        yg.range(0, 2)


def test_histogram_returns_named_fields() -> None:
    out = yg.histogram(yg.tensor([1.0, 2.0, 1.0]), 2)
    assert type(out).__name__ == "histogram"
    np.testing.assert_array_equal(out.hist.numpy(), [2.0, 1.0])
    np.testing.assert_array_equal(out.bin_edges.numpy(), [1.0, 1.5, 2.0])


def test_counting_ops_record_torchs_gradients() -> None:
    weights = yg.tensor([0.5, 1.0], requires_grad=True)
    counts = yg.bincount(yg.tensor([0, 1]), weights)
    assert counts.requires_grad  # PyTorch's not_implemented derivative
    with pytest.raises(NotImplementedError, match="bincount"):
        counts.sum().backward()
    x = yg.tensor([-1.0, 2.0], requires_grad=True)
    assert not yg.signbit(x).requires_grad and not yg.isposinf(x).requires_grad
    with pytest.raises(NotImplementedError, match="heaviside"):
        yg.heaviside(x, yg.tensor([0.5])).sum().backward()


def test_asarray_shares_memory_where_it_can() -> None:
    t = yg.ones(2)
    assert yg.asarray(t) is t
    assert yg.asarray(t, copy=True) is not t
    assert yg.asarray(t, dtype=yg.float64).dtype is yg.float64
    a = np.ones(3)
    shared = yg.asarray(a)
    a[0] = 5.0
    assert shared[0].item() == 5.0 and shared.dtype is yg.float64
    assert yg.asarray(a, copy=True).data_ptr() != a.ctypes.data
    assert yg.asarray(a, requires_grad=True).requires_grad


def test_frombuffer_shares_the_buffers_memory() -> None:
    buffer = bytearray(4)
    t = yg.frombuffer(buffer, dtype=yg.uint8)
    buffer[1] = 7
    assert t.tolist() == [0, 7, 0, 0]


def test_facts_of_devices_and_removed_flags_are_torchs() -> None:
    assert yg.is_distributed(yg.ones(2)) is torch.is_distributed(torch.ones(2))
    assert yg.is_vulkan_available() is torch.is_vulkan_available()
    with pytest.warns(UserWarning, match="volatile was removed"):
        assert yg.ones(2).volatile is False


def test_typename_and_is_storage() -> None:
    assert yg.typename(yg.ones(2)) == "yamlgrad.FloatTensor"
    assert yg.typename(yg.ones(2, dtype=yg.int64)) == "yamlgrad.LongTensor"
    assert yg.typename(3) == torch.typename(3) == "int"
    assert yg.typename(yg.nn.Linear(1, 1)).endswith(".Linear")
    assert yg.is_storage(yg.ones(2)) is torch.is_storage(torch.ones(2)) is False


def test_settings_read_back_as_torch() -> None:
    before = yg.get_deterministic_debug_mode()
    try:
        for mode, expected in (
            ("warn", 1),
            ("error", 2),
            (0, 0),
            (1, 1),
            ("default", 0),
        ):
            yg.set_deterministic_debug_mode(mode)
            assert yg.get_deterministic_debug_mode() == expected
            assert yg.are_deterministic_algorithms_enabled() == (expected != 0)
        for bad in ("loud", 3, 1.5):
            _same_error(lambda m: m.set_deterministic_debug_mode(bad))
    finally:
        yg.set_deterministic_debug_mode(before)
    assert not yg.is_warn_always_enabled()
    yg.set_warn_always(True)
    assert yg.is_warn_always_enabled()
    yg.set_warn_always(False)
    assert yg.set_flush_denormal(True) is False
