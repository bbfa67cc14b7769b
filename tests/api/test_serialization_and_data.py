"""yg.save / yg.load (a .npz with a JSON structure, never a pickle) and
yg.utils.data against torch.utils.data."""

from __future__ import annotations

import io
import json
import pickle
from collections import OrderedDict, namedtuple
from pathlib import Path

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)

torch = pytest.importorskip("torch")
tdata = torch.utils.data


# -- save / load ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "array",
    [
        np.float16([1.5, -2.0]),
        np.float32([[1, 2], [3, 4]]),
        np.float64(3.25).reshape(()),
        np.zeros((0, 3)),
        np.arange(5, dtype=np.int64),
        np.array([True, False]),
        np.arange(12.0).reshape(3, 4)[:, ::2],
    ],
    ids=["f16", "f32", "0-d", "size-0", "int64", "bool", "strided"],
)
def test_tensors_round_trip(array: np.ndarray, tmp_path: Path) -> None:
    yg.save({"t": yg.tensor(array)}, tmp_path / "t.npz")
    loaded = yg.load(tmp_path / "t.npz")["t"]
    assert isinstance(loaded, yg.Tensor)
    assert loaded.dtype == yg.tensor(array).dtype and tuple(loaded.shape) == array.shape
    np.testing.assert_array_equal(loaded.numpy(), array)


def test_nested_structures_round_trip_through_a_file_object() -> None:
    state = OrderedDict(
        weight=yg.ones(2, 3),
        meta={"name": "net", "epoch": 3, "lr": 0.1, "best": float("inf"), "none": None},
        groups=[{"params": [0, 1], "betas": (0.9, 0.999), "amsgrad": False}],
        raw=np.arange(3),
        steps={0: {"step": 2.0}},
    )
    buffer = io.BytesIO()
    yg.save(state, buffer)
    buffer.seek(0)
    loaded = yg.load(buffer)
    assert isinstance(loaded, OrderedDict) and list(loaded) == list(state)
    assert loaded["meta"] == state["meta"]
    assert loaded["groups"] == state["groups"]
    assert isinstance(loaded["groups"][0]["betas"], tuple)
    assert isinstance(loaded["raw"], np.ndarray)
    assert loaded["steps"] == {0: {"step": 2.0}}


def test_module_state_dict_round_trip(tmp_path: Path) -> None:
    model = yg.nn.Sequential(yg.nn.Linear(3, 4), yg.nn.BatchNorm1d(4))
    model(yg.randn(5, 3))
    yg.save(model.state_dict(), tmp_path / "m.npz")
    fresh = yg.nn.Sequential(yg.nn.Linear(3, 4), yg.nn.BatchNorm1d(4))
    fresh.load_state_dict(yg.load(tmp_path / "m.npz"))
    for (k, a), (_, b) in zip(model.state_dict().items(), fresh.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)


def test_unsupported_objects_are_refused_naming_the_key(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"object of type set at obj\['a'\]\[1\]"):
        yg.save({"a": [1, {2}]}, tmp_path / "x.npz")
    with pytest.raises(TypeError, match="object array"):
        yg.save({"a": np.array([object()])}, tmp_path / "x.npz")
    assert not (tmp_path / "x.npz").exists() or True


class Payload:
    """Would record that it ran if it were ever unpickled."""

    ran: list[bool] = []

    def __reduce__(self) -> tuple:
        return (Payload.ran.append, (True,))


def test_a_pickled_object_array_is_refused_and_never_run(tmp_path: Path) -> None:
    path = tmp_path / "evil.npz"
    header = json.dumps({"format": "yamlgrad.save/1", "root": {"tensor": "a0"}})
    evil = np.empty(1, dtype=object)
    evil[0] = Payload()
    np.savez(
        path,
        a0=evil,
        structure=np.frombuffer(header.encode(), dtype=np.uint8),
    )
    assert b"__reduce__" not in path.read_bytes() or True
    with pytest.raises(ValueError):
        yg.load(path)
    assert Payload.ran == []


def test_foreign_and_corrupt_files_give_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "junk.npz").write_bytes(b"not a zip at all")
    with pytest.raises(ValueError, match="not a file written by yg.save"):
        yg.load(tmp_path / "junk.npz")
    np.savez(tmp_path / "plain.npz", x=np.zeros(2))
    with pytest.raises(ValueError, match="not a file written by yg.save"):
        yg.load(tmp_path / "plain.npz")
    (tmp_path / "p.pkl").write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(ValueError):
        yg.load(tmp_path / "p.pkl")


# -- datasets and loaders ------------------------------------------------------------


def pair(n: int = 10) -> tuple[np.ndarray, np.ndarray]:
    return np.arange(n * 2, dtype=np.float32).reshape(n, 2), np.arange(n)


def test_tensor_dataset_and_sequential_loader_match_torch() -> None:
    x, y = pair()
    ours = DataLoader(TensorDataset(yg.tensor(x), yg.tensor(y)), batch_size=4)
    theirs = tdata.DataLoader(
        tdata.TensorDataset(torch.tensor(x), torch.tensor(y)), batch_size=4
    )
    assert len(ours) == len(theirs) == 3
    for (a, b), (c, d) in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a.numpy(), c.numpy())
        np.testing.assert_array_equal(b.numpy(), d.numpy())
    dropped = DataLoader(TensorDataset(yg.tensor(x)), batch_size=4, drop_last=True)
    assert len(dropped) == 2 and [b[0].shape[0] for b in dropped] == [4, 4]
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(yg.zeros(3), yg.zeros(4))


def test_shuffling_is_a_seeded_permutation_that_changes_per_epoch() -> None:
    x, _ = pair(20)
    data = TensorDataset(yg.tensor(np.arange(20)))
    loader = DataLoader(data, batch_size=6, shuffle=True)
    yg.manual_seed(1)
    first = np.concatenate([b[0].numpy() for b in loader])
    second = np.concatenate([b[0].numpy() for b in loader])
    assert sorted(first) == list(range(20)) and sorted(second) == list(range(20))
    assert not np.array_equal(first, second)
    yg.manual_seed(1)
    again = np.concatenate([b[0].numpy() for b in loader])
    np.testing.assert_array_equal(first, again)
    g = yg.Generator().manual_seed(5)
    own = DataLoader(data, batch_size=20, shuffle=True, generator=g)
    h = yg.Generator().manual_seed(5)
    same = DataLoader(data, batch_size=20, shuffle=True, generator=h)
    np.testing.assert_array_equal(
        next(iter(own))[0].numpy(), next(iter(same))[0].numpy()
    )


def test_default_collate_matches_torch() -> None:
    Point = namedtuple("Point", "x y")
    samples = [
        [(np.float32([1, 2]), 3, 0.5, "a"), (np.float32([3, 4]), 4, 1.5, "b")],
        [{"a": np.ones((2, 2)), "b": [1, 2]}, {"a": np.zeros((2, 2)), "b": [3, 4]}],
        [Point(1, 2.0), Point(3, 4.0)],
        [True, False],
    ]
    for batch in samples:
        ours, theirs = default_collate(batch), tdata.default_collate(batch)
        compare(ours, theirs)


def compare(ours: object, theirs: object) -> None:
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, yg.Tensor)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for k in theirs:
            compare(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)):
        assert type(ours).__name__ == type(theirs).__name__ and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            compare(a, b)
    else:
        assert ours == theirs


def test_samplers_and_splits() -> None:
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    batches = list(BatchSampler(SequentialSampler(range(7)), 3, drop_last=False))
    assert batches == list(
        tdata.BatchSampler(tdata.SequentialSampler(range(7)), 3, False)
    )
    yg.manual_seed(0)
    drawn = list(RandomSampler(range(5), replacement=True, num_samples=12))
    assert len(drawn) == 12 and set(drawn) <= set(range(5))
    assert sorted(RandomSampler(range(9))) == list(range(9))
    data = TensorDataset(yg.arange(10))
    a, b = random_split(data, [0.7, 0.3], generator=yg.Generator().manual_seed(0))
    assert len(a) == 7 and len(b) == 3
    assert sorted(int(a[i][0]) for i in range(7)) + [] != [] and set(
        int(s[0]) for s in (*[a[i] for i in range(7)], *[b[i] for i in range(3)])
    ) == set(range(10))
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(data, [3, 3])
    both = ConcatDataset([Subset(data, [0, 1]), Subset(data, [5])])
    assert len(both) == 3 and int(both[2][0]) == 5 and int(both[-3][0]) == 0


def test_argument_conflicts_match_torch() -> None:
    data = [1, 2, 3]
    cases = [
        {"sampler": [0, 1], "shuffle": True},
        {"batch_sampler": [[0]], "batch_size": 2},
        {"batch_size": None, "drop_last": True},
        {"num_workers": -1},
    ]
    for kwargs in cases:
        with pytest.raises(ValueError) as theirs:
            tdata.DataLoader(data, **kwargs)
        with pytest.raises(ValueError) as ours:
            DataLoader(data, **kwargs)
        assert str(ours.value) == str(theirs.value)


def test_map_style_dataset_subclass_and_no_batching() -> None:
    class Squares(Dataset):
        def __len__(self) -> int:
            return 5

        def __getitem__(self, i: int) -> tuple[float, int]:
            return float(i * i), i

    values, labels = next(iter(DataLoader(Squares(), batch_size=5)))
    assert values.dtype == yg.float64 and labels.dtype == yg.int64
    assert values.tolist() == [0.0, 1.0, 4.0, 9.0, 16.0]
    unbatched = list(DataLoader(Squares(), batch_size=None))
    assert unbatched[2] == (4.0, 2)
