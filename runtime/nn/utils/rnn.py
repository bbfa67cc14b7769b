"""`yg.nn.utils.rnn`: batches of sequences of different lengths, as torch.nn.utils.rnn.

A PackedSequence holds the rows of every sequence time step by time step
(`data`), how many sequences each step has (`batch_sizes`, int64, decreasing),
and, when the batch was sorted by length on the way in, the permutation that
sorted it and its inverse. nn.RNN, nn.LSTM and nn.GRU take one and return one.

Packing is the `_pack_padded_sequence` entry of derivatives.yaml
(PackPaddedSequenceBackward0, as in PyTorch). Padding (`pad_sequence`,
`pad_packed_sequence`) is a composite, as PyTorch's: here one concatenation of
the rows with a row of padding and one index_select that puts each row at its
padded position, rather than a copy per sequence or time step, so a padded
batch is two nodes whatever its size.

>>> a, b = yg.tensor([1.0, 2.0, 3.0]), yg.tensor([4.0, 5.0])
>>> packed = pack_sequence([a, b])
>>> packed.data.tolist(), packed.batch_sizes.tolist()
([1.0, 4.0, 2.0, 5.0, 3.0], [2, 2, 1])
>>> padded, lengths = pad_packed_sequence(packed, batch_first=True)
>>> padded.tolist(), lengths.tolist()
([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]], [3, 2])
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np

from yamlgrad.generated import VariableType
from yamlgrad.runtime import factories
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.ops.recurrent import packed_positions

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _bind(optional: Tensor | None, fn: Any) -> Tensor | None:
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """The rows of a batch of sequences, time step by time step; made by
    `pack_padded_sequence` and `pack_sequence`, not by hand. A named tuple
    (data, batch_sizes, sorted_indices, unsorted_indices), as PyTorch's."""

    def __new__(
        cls,
        data: Any,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif str(getattr(batch_sizes, "device", "cpu")) != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence "
                "should never be created manually. They should be instantiated by "
                "functions like pack_sequence and pack_padded_sequences in "
                "nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence"
            )
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """`data.to(...)`; the index tensors follow data's device, batch_sizes
        stays on the CPU. The sequence itself when nothing changes."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self

        def call_to(t: Tensor) -> Tensor:
            return t.to(data.device)

        return type(self)(
            data,
            self.batch_sizes,
            _bind(self.sorted_indices, call_to),
            _bind(self.unsorted_indices, call_to),
        )

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to("cpu", *args, **kwargs)

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """data.cuda(...) (CuPy's arrays, runtime/backend.py), the indices along."""
        data = self.data.cuda(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(
            data,
            self.batch_sizes,
            _bind(self.sorted_indices, lambda t: t.to(data.device)),
            _bind(self.unsorted_indices, lambda t: t.to(data.device)),
        )

    def double(self) -> PackedSequence:
        return self.to(dtype=_dtype("float64"))

    def float(self) -> PackedSequence:
        return self.to(dtype=_dtype("float32"))

    def half(self) -> PackedSequence:
        return self.to(dtype=_dtype("float16"))

    def long(self) -> PackedSequence:
        return self.to(dtype=_dtype("int64"))

    def int(self) -> PackedSequence:
        return self.to(dtype=_dtype("int32"))

    def short(self) -> PackedSequence:
        return self.to(dtype=_dtype("int16"))

    def char(self) -> PackedSequence:
        return self.to(dtype=_dtype("int8"))

    def byte(self) -> PackedSequence:
        return self.to(dtype=_dtype("uint8"))

    @property
    def is_cuda(self) -> bool:
        return bool(self.data.is_cuda)

    def is_pinned(self) -> bool:
        return False

    def pin_memory(self) -> PackedSequence:
        return self


def _dtype(name: str) -> Any:
    from yamlgrad.runtime import dtypes

    return getattr(dtypes, name)


def _int64(values: Any) -> Tensor:
    return Tensor._make(np.asarray(values, dtype=np.int64))


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation that undoes `permutation` (None for None)."""
    if permutation is None:
        return None
    order = np.asarray(permutation.numpy(), dtype=np.int64)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size, dtype=np.int64)
    return _int64(inverse)


def _lengths_array(lengths: Any) -> np.ndarray:
    if isinstance(lengths, Tensor):
        return np.asarray(lengths.numpy()).astype(np.int64)
    return np.asarray(lengths).astype(np.int64)


def pack_padded_sequence(
    input: Tensor,
    lengths: Tensor | list[int],
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    """Pack a padded batch (T, B, *) ((B, T, *) with batch_first) of sequences
    of the given lengths. With enforce_sorted=False the batch is sorted by
    decreasing length first, and the PackedSequence keeps the permutation."""
    lengths_array = _lengths_array(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-lengths_array, kind="stable")
        lengths_array = lengths_array[order]
        sorted_indices = _int64(order)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = VariableType._pack_padded_sequence(
        input, _int64(lengths_array), batch_first
    )
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _pad_rows(rows: Tensor, padding_value: float, positions: np.ndarray) -> Tensor:
    """rows[positions], where position len(rows) is a row of `padding_value`."""
    padding = factories.full((1, *rows.shape[1:]), padding_value, dtype=rows.dtype)
    source = VariableType.cat([rows, padding], 0)
    return source.index_select(0, _int64(positions.reshape(-1)))


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """The padded batch (T, B, *) ((B, T, *) with batch_first) of a packed one,
    in the order the sequences were given, and their lengths (int64)."""
    batch_sizes = np.asarray(sequence.batch_sizes.numpy(), dtype=np.int64)
    max_seq_length = batch_sizes.shape[0]
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest "
                f"sequence in input, but got total_length={total_length} and max "
                f"sequence length being {max_seq_length}"
            )
        max_seq_length = total_length
    data = sequence.data
    batch = int(batch_sizes[0])
    total = data.shape[0]
    slots = np.full(max_seq_length * batch, total, dtype=np.int64)
    slots[packed_positions(batch_sizes, batch)] = np.arange(total)
    slots = slots.reshape(max_seq_length, batch)
    if batch_first:
        slots = slots.T
    padded = _pad_rows(data, padding_value, slots).reshape(
        *slots.shape, *data.shape[1:]
    )
    lengths = np.sum(batch_sizes[:, None] > np.arange(batch)[None, :], axis=0)
    if sequence.unsorted_indices is not None:
        order = np.asarray(sequence.unsorted_indices.numpy(), dtype=np.int64)
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[order]
    return padded, _int64(lengths)


def pad_sequence(
    sequences: Tensor | Iterable[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack sequences of shape (L_i, *) into (max L, B, *) ((B, max L, *) with
    batch_first), filling with `padding_value` after each (or before, with
    padding_side="left")."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            "pad_sequence: Expected iterable for input sequences, but got arg of "
            f"type: {type(sequences)}"
        )
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    trailing = tuple(sequences[0].shape[1:])
    if sequences[0].ndim == 0:
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    lengths = np.array([s.shape[0] for s in sequences], dtype=np.int64)
    rows = VariableType.cat([_fit(s, trailing) for s in sequences], 0)
    max_len = int(lengths.max())
    starts = np.cumsum(lengths) - lengths
    time = np.arange(max_len)[:, None]
    if padding_side == "left":
        time = time - (max_len - lengths)[None, :]
    inside = (time >= 0) & (time < lengths[None, :])
    slots = np.where(inside, starts[None, :] + time, rows.shape[0])
    if batch_first:
        slots = slots.T
    return _pad_rows(rows, padding_value, slots).reshape(*slots.shape, *trailing)


def _fit(sequence: Tensor, trailing: tuple[int, ...]) -> Tensor:
    """`sequence` with the first sequence's trailing dims: broadcast as copy_
    broadcasts, or PyTorch's error for sizes that do not."""
    if tuple(sequence.shape[1:]) == trailing:
        return sequence
    own = tuple(sequence.shape[1:])
    for k in range(1, max(len(own), len(trailing)) + 1):
        a = trailing[-k] if k <= len(trailing) else 1
        b = own[-k] if k <= len(own) else 1
        if a != b and b != 1:
            raise RuntimeError(
                f"The size of tensor a ({a}) must match the size of tensor b ({b}) "
                f"at non-singleton dimension {len(trailing) + 1 - k}"
            )
    return sequence.expand(sequence.shape[0], *trailing)


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False
) -> list[Tensor]:
    """The sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [
        padded_sequences[b, : int(length)]
        for b, length in enumerate(_lengths_array(lengths).tolist())
    ]


def pack_sequence(
    sequences: list[Tensor], enforce_sorted: bool = True
) -> PackedSequence:
    """Pack a list of sequences of shape (L_i, *)."""
    lengths = _int64([v.size(0) for v in sequences])
    return pack_padded_sequence(
        pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted
    )


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a PackedSequence holds, in their original order."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
