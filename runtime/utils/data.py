"""`yg.utils.data`: datasets, samplers and the DataLoader, as PyTorch's.

Loading runs in the calling process, or with `num_workers > 0` in worker
processes (see `_data_workers`), in the same batch order. Shuffling draws from
yamlgrad's seeded generator (or `generator=`), so the same seed gives the same
batches, and each pass over a shuffling loader draws a new order. Each pass
first draws an int64 `base_seed` (the workers' seeds), as PyTorch's iterators do.

>>> loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
>>> for inputs, labels in loader: ...
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.factories import Generator, _rng
from yamlgrad.runtime.utils._data_workers import (
    _MultiProcessingDataLoaderIter,
    get_worker_info,
)
from yamlgrad.runtime.autograd.tensor import Tensor

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "Subset",
    "ConcatDataset",
    "random_split",
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
    "DataLoader",
    "default_collate",
    "get_worker_info",
]


class Dataset:
    """A map-style dataset: `dataset[i]` is one sample; subclasses define it and
    usually `__len__`."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: subclasses define `__iter__`."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError


class TensorDataset(Dataset):
    """Sample i is (t[i] for t in tensors); all share their first dimension."""

    def __init__(self, *tensors: Tensor) -> None:
        if any(tensors[0].shape[0] != t.shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: int) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of `dataset` at `indices`."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index: int) -> Any:
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Several datasets one after the other."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = np.cumsum([len(d) for d in self.datasets]).tolist()

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            if -index > len(self):
                raise ValueError(
                    "absolute value of index should not exceed dataset length"
                )
            index += len(self)
        which = int(np.searchsorted(self.cumulative_sizes, index, side="right"))
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


def random_split(
    dataset: Dataset,
    lengths: Sequence[int | float],
    generator: Generator | None = None,
) -> list[Subset]:
    """Split into non-overlapping random Subsets of the given lengths (or fractions
    summing to 1, the remainder spread round-robin as PyTorch does)."""
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(int(math.floor(n * frac)))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. "
                    "This might result in an empty dataset.",
                    stacklevel=2,
                )
    if sum(lengths) != n:
        raise ValueError(
            "Sum of input lengths does not equal the length of the input dataset!"
        )
    order = _rng(generator).permutation(n).tolist()
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, order[start : start + length]))
        start += length
    return out


class Sampler:
    """Yields dataset indices."""

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation (or, with replacement, `num_samples` random draws)."""

    def __init__(
        self,
        data_source: Any,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Generator | None = None,
    ) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(
                "replacement should be a boolean value, but got "
                f"replacement={replacement}"
            )
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, rng = len(self.data_source), _rng(self.generator)
        if self.replacement:
            return iter(rng.integers(0, n, self.num_samples).tolist())
        rounds = [rng.permutation(n) for _ in range(-(-self.num_samples // n))]
        return iter(np.concatenate(rounds)[: self.num_samples].tolist())

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices, in a random order (a new one each pass)."""

    def __init__(
        self, indices: Sequence[int], generator: Generator | None = None
    ) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _rng(self.generator).permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probabilities proportional to `weights`
    (`multinomial`'s draw, with or without replacement)."""

    def __init__(
        self,
        weights: Sequence[float],
        num_samples: int,
        replacement: bool = True,
        generator: Generator | None = None,
    ) -> None:
        if (
            not isinstance(num_samples, int)
            or isinstance(num_samples, bool)
            or num_samples <= 0
        ):
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                "replacement should be a boolean value, but got "
                f"replacement={replacement}"
            )
        data = weights._data if isinstance(weights, Tensor) else weights
        weights_tensor = Tensor(np.asarray(data, dtype=np.float64))
        if weights_tensor.ndim != 1:
            raise ValueError(
                "weights should be a 1d sequence but given "
                f"weights have shape {tuple(weights_tensor.shape)}"
            )
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        drawn = ops.multinomial(
            self.weights, self.num_samples, self.replacement, generator=self.generator
        )
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of `batch_size`."""

    def __init__(
        self, sampler: Iterable[int], batch_size: int, drop_last: bool
    ) -> None:
        if (
            isinstance(batch_size, bool)
            or not isinstance(batch_size, int)
            or batch_size <= 0
        ):
            raise ValueError(
                "batch_size should be a positive integer value, but got "
                f"batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(
                "drop_last should be a boolean value, but got " f"drop_last={drop_last}"
            )
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples into a batch: tensors, arrays and numbers into
    tensors (int as int64, float as float64), recursing into tuples, lists and
    dicts; strings stay as they are."""
    first = batch[0]
    if isinstance(first, Tensor):
        return Tensor(np.stack([s._data for s in batch]))
    if isinstance(first, np.ndarray):
        if first.dtype.kind in "SUO":
            raise TypeError(
                "default_collate: batch must contain tensors, numpy arrays, numbers, "
                f"dicts or lists; found {first.dtype}"
            )
        return Tensor(np.stack(batch))
    if isinstance(first, np.generic):
        return Tensor(np.array(batch))
    if isinstance(first, bool):
        return Tensor(np.array(batch, dtype=np.bool_))
    if isinstance(first, numbers.Integral):
        return Tensor(np.array(batch, dtype=np.int64))
    if isinstance(first, numbers.Real):
        return Tensor(np.array(batch, dtype=np.float64))
    if isinstance(first, (str, bytes)):
        return batch
    if isinstance(first, Mapping):
        return {key: default_collate([s[key] for s in batch]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        return type(first)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(first, Sequence):
        if any(len(s) != len(first) for s in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        # A list of columns, for tuples too, as PyTorch's default_collate.
        return [default_collate(s) for s in zip(*batch)]
    raise TypeError(
        "default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
        f"or lists; found {type(first)}"
    )


def _checked_worker_options(
    num_workers: int,
    timeout: float,
    prefetch_factor: int | None,
    persistent_workers: bool,
) -> int | None:
    """DataLoader's checks of its multiprocessing options; the prefetch factor
    to use (2 by default with workers)."""
    if num_workers < 0:
        raise ValueError(
            "num_workers option should be non-negative; use num_workers=0 to "
            "disable multiprocessing."
        )
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError(
            "prefetch_factor option could only be specified in multiprocessing."
            "let num_workers > 0 to enable multiprocessing, otherwise set "
            "prefetch_factor to None."
        )
    if num_workers > 0 and prefetch_factor is None:
        prefetch_factor = 2
    elif prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    return prefetch_factor


class DataLoader:
    """Batches of a dataset: through a sampler (sequential, or random with
    `shuffle=True`), grouped by `batch_size`, stacked by `collate_fn`."""

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Iterable[int] | None = None,
        batch_sampler: Iterable[list[int]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        prefetch_factor = _checked_worker_options(
            num_workers, timeout, prefetch_factor, persistent_workers
        )
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, "
                    "shuffle, sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually "
                "exclusive with drop_last"
            )
        if sampler is None:
            sampler = (
                RandomSampler(dataset, generator=generator)
                if shuffle
                else SequentialSampler(dataset)
            )
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.generator = generator
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.pin_memory = pin_memory  # CPU only: batches are already where they go
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self._iterator: _MultiProcessingDataLoaderIter | None = None
        self.collate_fn = (
            collate_fn
            if collate_fn is not None
            else (default_collate if batch_sampler is not None else _no_collate)
        )

    @property
    def _dataset_is_iterable(self) -> bool:
        return isinstance(self.dataset, IterableDataset)

    @property
    def _auto_collation(self) -> bool:
        if self._dataset_is_iterable:
            return self.batch_size is not None
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Iterable[Any]:
        """What the workers get one item of per task: a batch of indices (Nones
        for an IterableDataset, which ignores them) or one index."""
        if self._dataset_is_iterable:
            if self.batch_size is None:
                return _InfiniteConstantSampler()
            return BatchSampler(_InfiniteConstantSampler(), self.batch_size, False)
        return self.batch_sampler if self.batch_sampler is not None else self.sampler

    def _draw_base_seed(self) -> int:
        return int(_rng(self.generator).integers(0, 2**63))

    def __iter__(self) -> Iterator[Any]:
        if self.num_workers == 0:
            self._draw_base_seed()
            return self._single_process()
        if not self.persistent_workers:
            return _MultiProcessingDataLoaderIter(self)
        if self._iterator is None:
            self._iterator = _MultiProcessingDataLoaderIter(self)
        else:
            self._iterator._reset()
        return self._iterator

    def _single_process(self) -> Iterator[Any]:
        if isinstance(self.dataset, IterableDataset):
            yield from self._iterable()
            return
        if self.batch_sampler is None:
            for index in self.sampler:
                yield self.collate_fn(self.dataset[index])
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def _iterable(self) -> Iterator[Any]:
        if self.batch_size is None:
            yield from (self.collate_fn(sample) for sample in self.dataset)
            return
        batch: list[Any] = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)


class _InfiniteConstantSampler(Sampler):
    """None forever: the task stream of an IterableDataset in workers."""

    def __iter__(self) -> Iterator[None]:  # type: ignore[override]
        while True:
            yield None


def _no_collate(sample: Any) -> Any:
    """Without batching, a sample's arrays still become tensors."""
    if isinstance(sample, np.ndarray):
        return Tensor(sample)
    if isinstance(sample, (list, tuple)) and not hasattr(sample, "_fields"):
        return type(sample)(_no_collate(s) for s in sample)
    if isinstance(sample, Mapping):
        return {k: _no_collate(v) for k, v in sample.items()}
    return sample
