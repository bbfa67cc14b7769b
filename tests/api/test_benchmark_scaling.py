"""The per-op benchmark's big cases are the samples' op at a bigger size: its
pieces, slices and kernels keep their count, share and size as the tensors grow
(benchmarks/ops.py `scaled`). Shapes and arguments only: nothing is timed."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from support import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
import ops as per_op  # noqa: E402

import yamlgrad as yg  # noqa: E402
from yamlgrad.testing import build_args, python_names  # noqa: E402
from yamlgrad.tools.load import load_derivatives  # noqa: E402

INFOS = {i.func.cpp_name: i for i in per_op.selected(load_derivatives(per_op.YAML), "")}
BIG = 1_000_000


def _big(name: str) -> tuple[dict[str, object], dict[str, object]]:
    """The entry's largest sample and its big case, as argument values."""
    info = INFOS[name]
    sample = per_op.largest_sample(info)
    big = per_op.scaled(info, sample, BIG)

    def values(s: object) -> dict[str, object]:
        return {a.name: a.shape if a.shape is not None else a.value for a in s.args}

    return values(sample), values(big)


def _run(name: str) -> object:
    """The op on its big case, in yamlgrad (it must accept the arguments)."""
    info = INFOS[name]
    big = per_op.scaled(info, per_op.largest_sample(info), BIG)
    kwargs = big.materialize(np.random.default_rng(0), np.dtype("float32"))
    wrapper = getattr(yg.generated.VariableType, info.wrapper_name)
    with yg.no_grad():
        return wrapper(**python_names(build_args(kwargs, {}, yg.tensor)))


@pytest.mark.parametrize("name", ["split_Tensor", "unsafe_split_Tensor"])
def test_split_makes_as_many_pieces_as_its_sample(name: str) -> None:
    small, big = _big(name)
    pieces = math.ceil(small["self"][0] / small["split_size"])
    assert math.ceil(big["self"][0] / big["split_size"]) == pieces
    assert big["self"][0] > 100 * small["self"][0] and len(_run(name)) == pieces


@pytest.mark.parametrize(
    "name", ["split_with_sizes", "split_sizes", "unsafe_split_with_sizes"]
)
def test_split_sizes_still_partition_the_dim(name: str) -> None:
    small, big = _big(name)
    sizes = big.get("split_sizes", big.get("split_size"))
    assert sum(sizes) == big["self"][0] > 100 * small["self"][0]
    assert [tuple(p.shape)[0] for p in _run(name)] == list(sizes)


@pytest.mark.parametrize(
    "name, kernel",
    [
        ("convolution", 2),
        ("slow_conv_dilated2d", 2),
        ("slow_conv_transpose2d", 2),
        ("slow_conv3d_forward", 3),
    ],
)
def test_a_convolutions_kernel_keeps_its_size(name: str, kernel: int) -> None:
    small, big = _big(name)
    assert big["weight"][-kernel:] == small["weight"][-kernel:]
    assert math.prod(big["weight"]) > math.prod(small["weight"])  # channels grow
    _run(name)  # a slow_conv's kernel_size still matches its weight


@pytest.mark.parametrize(
    "name, shares",
    [("narrow", ("start", "length")), ("slice_Tensor", ("start", "end"))],
)
def test_slices_keep_their_share_of_the_dim(name: str, shares: tuple) -> None:
    small, big = _big(name)
    dim = small["dim"]
    for arg in shares:
        fraction = small[arg] / small["self"][dim]
        assert big[arg] / big["self"][dim] == pytest.approx(fraction, abs=0.01)
    assert big.get("step") == small.get("step")
    _run(name)


@pytest.mark.parametrize("name, arg", [("topk", "k"), ("select_int", "index")])
def test_positions_along_the_dim_scale_with_it(name: str, arg: str) -> None:
    small, big = _big(name)
    assert abs(big[arg]) > 10 * abs(small[arg])
    _run(name)


@pytest.mark.parametrize(
    "name, fixed",
    [
        ("chunk", ("chunks",)),
        ("unfold", ("size", "step")),
        ("max_pool2d_with_indices", ("kernel_size", "stride", "padding")),
        ("im2col", ("kernel_size", "stride")),
    ],
)
def test_counts_and_windows_keep_their_size(name: str, fixed: tuple) -> None:
    small, big = _big(name)
    assert all(big[arg] == small[arg] for arg in fixed)
    assert big["self"] != small["self"]
