"""Variable-length sequences for the recurrent layers (PyTorch's torch.nn.utils.rnn).

A PackedSequence stores the time steps of a batch of sequences, sorted longest first, one
after another: step t holds `batch_sizes[t]` rows (the sequences still running at t), so a
recurrent layer does no work on padding. `batch_sizes` lives on the cpu as in PyTorch.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, NamedTuple

from ember import _dtype, _ops
from ember._tensor import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]


class PackedSequence(NamedTuple):
    """(data, batch_sizes, sorted_indices, unsorted_indices), as PyTorch's."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Move data and the permutations; batch_sizes stays on the cpu."""
        data = self.data.to(*args, **kwargs)
        device = data.device

        def move(t: Tensor | None) -> Tensor | None:
            return None if t is None else t.to(device)

        return PackedSequence(
            data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices)
        )

    @property
    def is_cuda(self) -> bool:
        return self.data.device.type == "cuda"


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation p⁻¹ with p⁻¹[p[i]] = i."""
    if permutation is None:
        return None
    order = [int(i) for i in permutation.tolist()]
    inverse = [0] * len(order)
    for position, index in enumerate(order):
        inverse[index] = position
    return _ops.tensor(inverse, dtype=_dtype.int64, device=permutation.device)


def _lengths_list(lengths: Any) -> list[int]:
    if isinstance(lengths, Tensor):
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(
    input: Tensor, lengths: Any, batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    """Pack a padded (T, B, *) batch (B, T, * if batch_first) of the given lengths."""
    sizes = _lengths_list(lengths)
    if enforce_sorted:
        if any(a < b for a, b in itertools.pairwise(sizes)):
            raise RuntimeError(
                "pack_padded_sequence: `lengths` array must be sorted in decreasing order when "
                "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                "pack_padded_sequence and/or pack_sequence to sidestep this requirement if you "
                "do not need ONNX exportability."
            )
        sorted_indices = None
        order = list(range(len(sizes)))
    else:
        order = sorted(range(len(sizes)), key=lambda i: -sizes[i])
        sorted_indices = _ops.tensor(order, dtype=_dtype.int64, device=input.device)
    if batch_first:
        input = input.transpose(0, 1)
    if sizes and min(sizes) <= 0:
        raise RuntimeError(
            "pack_padded_sequence: length of all samples has to be greater than 0, but found an "
            f"element in 'lengths' that is <= 0 (lengths={sizes})"
        )
    if sizes and max(sizes) > input.size(0):
        raise RuntimeError(
            f"pack_padded_sequence: input has {input.size(0)} steps but a length is {max(sizes)}"
        )
    if sorted_indices is not None:
        input = _ops.index_select(input, 1, sorted_indices)
    ordered = [sizes[i] for i in order]
    batch_sizes = [sum(1 for n in ordered if n > t) for t in range(ordered[0] if ordered else 0)]
    steps = [input[t, :count] for t, count in enumerate(batch_sizes)]
    data = _ops.cat(steps, 0)
    return PackedSequence(
        data,
        _ops.tensor(batch_sizes, dtype=_dtype.int64),
        sorted_indices,
        invert_permutation(sorted_indices),
    )


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """(padded, lengths): the inverse of pack_padded_sequence, in the original batch order."""
    batch_sizes = [int(b) for b in sequence.batch_sizes.tolist()]
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{steps}"
            )
        steps = total_length
    data = sequence.data
    batch = batch_sizes[0] if batch_sizes else 0
    rows: list[Tensor] = []
    offset = 0
    for count in batch_sizes:
        step = data[offset : offset + count]
        offset += count
        if count < batch:
            fill = _ops.full(
                (batch - count, *data.shape[1:]), padding_value, dtype=data.dtype,
                device=data.device,
            )  # fmt: skip
            step = _ops.cat([step, fill], 0)
        rows.append(step)
    for _ in range(steps - len(batch_sizes)):
        rows.append(
            _ops.full((batch, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
        )
    padded = _ops.stack(rows, 0)
    lengths = [sum(1 for b in batch_sizes if b > i) for i in range(batch)]
    lengths_tensor = _ops.tensor(lengths, dtype=_dtype.int64)
    if sequence.unsorted_indices is not None:
        padded = _ops.index_select(padded, 1, sequence.unsorted_indices)
        order = [int(i) for i in sequence.unsorted_indices.tolist()]
        lengths_tensor = _ops.tensor([lengths[i] for i in order], dtype=_dtype.int64)
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lengths_tensor


def pad_sequence(
    sequences: Tensor | Sequence[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack tensors of shapes (L_i, *) into (L_max, B, *) (B, L_max, * if batch_first)."""
    if padding_side not in ("left", "right"):
        raise ValueError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    items = list(sequences.unbind(0)) if isinstance(sequences, Tensor) else list(sequences)
    if not items:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    longest = max(t.size(0) for t in items)
    padded = []
    for t in items:
        missing = longest - t.size(0)
        if missing:
            fill = _ops.full((missing, *t.shape[1:]), padding_value, dtype=t.dtype, device=t.device)
            t = _ops.cat([t, fill] if padding_side == "right" else [fill, t], 0)
        padded.append(t)
    return _ops.stack(padded, 0 if batch_first else 1)


def unpad_sequence(
    padded_sequences: Tensor, lengths: Any, batch_first: bool = False
) -> list[Tensor]:
    """The list of unpadded (L_i, *) tensors from a padded batch."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :n] for i, n in enumerate(_lengths_list(lengths))]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of (L_i, *) tensors."""
    lengths = [t.size(0) for t in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of (L_i, *) tensors a PackedSequence holds, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
