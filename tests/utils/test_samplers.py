"""The samplers and random_split of yg.utils.data against torch.utils.data:
the same lengths, index sets, warnings and errors (the random streams differ:
yamlgrad draws from its own generator)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.utils import data

torch = pytest.importorskip("torch")
import torch.utils.data as tdata  # noqa: E402


@pytest.mark.parametrize(
    "n,fractions",
    [(10, [0.3, 0.7]), (11, [0.5, 0.25, 0.25]), (7, [0.1, 0.1, 0.8]), (3, [0.1, 0.9])],
)
def test_random_split_fractions_as_torch(n: int, fractions: list[float]) -> None:
    def split(lib: Any, module: Any) -> tuple[list[int], list[str]]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            parts = module.random_split(module.TensorDataset(lib.arange(n)), fractions)
        return [len(p) for p in parts], [str(w.message) for w in caught]

    assert split(yg, data) == split(torch, tdata)
    parts = data.random_split(data.TensorDataset(yg.arange(n)), fractions)
    assert sorted(i for p in parts for i in p.indices) == list(range(n))


def test_random_split_errors_as_torch() -> None:
    for lengths in ([1.2, -0.2], [3, 4]):
        texts = []
        for lib, module in ((yg, data), (torch, tdata)):
            with pytest.raises(ValueError) as info:
                module.random_split(module.TensorDataset(lib.arange(10)), lengths)
            texts.append(str(info.value))
        assert texts[0] == texts[1]


def test_random_split_is_seeded() -> None:
    ds = data.TensorDataset(yg.arange(20))
    a = data.random_split(ds, [0.5, 0.5], generator=yg.Generator().manual_seed(3))
    b = data.random_split(ds, [0.5, 0.5], generator=yg.Generator().manual_seed(3))
    assert [p.indices for p in a] == [p.indices for p in b]


def test_subset_random_sampler() -> None:
    indices = [3, 9, 4, 7, 1]
    sampler = data.SubsetRandomSampler(indices, generator=yg.Generator().manual_seed(0))
    first, second = list(sampler), list(sampler)
    assert sorted(first) == sorted(indices) == sorted(second)
    assert len(sampler) == len(tdata.SubsetRandomSampler(indices)) == 5
    again = data.SubsetRandomSampler(indices, generator=yg.Generator().manual_seed(0))
    assert list(again) == first


def test_weighted_random_sampler_frequencies() -> None:
    weights = [0.1, 0.9, 0.0, 3.0]
    sampler = data.WeightedRandomSampler(
        weights, 40000, generator=yg.Generator().manual_seed(0)
    )
    counts = np.bincount(list(sampler), minlength=4) / 40000
    np.testing.assert_allclose(counts, np.array(weights) / 4.0, atol=0.01)
    assert len(sampler) == 40000
    drawn = list(data.WeightedRandomSampler([1.0, 2.0, 3.0, 4.0], 4, replacement=False))
    assert sorted(drawn) == [0, 1, 2, 3]
    assert isinstance(drawn[0], int)


def test_weighted_random_sampler_errors_as_torch() -> None:
    for args, kwargs in (
        (([1.0, 2.0], 0), {}),
        (([1.0, 2.0], True), {}),
        (([1.0, 2.0], 2), {"replacement": 1}),
        (([[1.0, 2.0]], 2), {}),
    ):
        texts = []
        for module in (data, tdata):
            with pytest.raises(ValueError) as info:
                module.WeightedRandomSampler(*args, **kwargs)
            texts.append(str(info.value))
        assert texts[0] == texts[1]


def test_samplers_drive_a_loader_and_batch_sampler() -> None:
    ds = data.TensorDataset(yg.arange(10))
    batches = data.BatchSampler(data.SubsetRandomSampler([0, 2, 4, 6, 8]), 2, False)
    assert len(batches) == 3
    loader = data.DataLoader(ds, sampler=data.WeightedRandomSampler([1.0] * 10, 6))
    assert len(list(loader)) == 6
