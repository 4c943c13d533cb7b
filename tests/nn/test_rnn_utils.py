"""nn.utils.rnn packing and padding against torch.nn.utils.rnn: values, batch_sizes,
permutations, lengths, gradients through pack/unpack, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember.nn.utils import rnn

from ._torch_parity import assert_same_outputs, pair

torch = pytest.importorskip("torch")
trnn = pytest.importorskip("torch.nn.utils.rnn")


def _sequences(rng: Any, lengths: list[int], device: str = "cpu") -> tuple[list[Any], list[Any]]:
    pairs = [pair(rng.standard_normal((n, 2)), device, grad=True) for n in lengths]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _same_packed(ours: rnn.PackedSequence, theirs: Any) -> None:
    assert_same_outputs(ours.data, theirs.data)
    assert ours.batch_sizes.tolist() == theirs.batch_sizes.tolist()
    assert str(ours.batch_sizes.device) == "cpu"
    for a, b in ((ours.sorted_indices, theirs.sorted_indices),
                 (ours.unsorted_indices, theirs.unsorted_indices)):  # fmt: skip
        assert (a is None) == (b is None)
        if a is not None:
            assert a.tolist() == b.tolist()


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence(batch_first: bool, padding_side: str, rng: Any) -> None:
    ours, theirs = _sequences(rng, [3, 1, 4])
    out = rnn.pad_sequence(ours, batch_first, -1.5, padding_side)
    expected = trnn.pad_sequence(theirs, batch_first, -1.5, padding_side)
    assert_same_outputs(out, expected)
    g = rng.standard_normal(tuple(expected.shape)).astype(np.float32)
    out.backward(ember.tensor(g))
    expected.backward(torch.tensor(g))
    for a, b in zip(ours, theirs, strict=True):
        assert_same_outputs(a.grad, b.grad)
    with pytest.raises(ValueError, match="padding_side"):
        rnn.pad_sequence(ours, padding_side="middle")


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_and_pad_round_trip(enforce_sorted: bool, batch_first: bool, rng: Any) -> None:
    lengths = [4, 3, 3, 1] if enforce_sorted else [3, 4, 1, 3]
    shape = (4, 5, 2) if batch_first else (5, 4, 2)
    x, tx = pair(rng.standard_normal(shape), "cpu", grad=True)
    packed = rnn.pack_padded_sequence(x, ember.tensor(lengths), batch_first, enforce_sorted)
    tpacked = trnn.pack_padded_sequence(tx, torch.tensor(lengths), batch_first, enforce_sorted)
    _same_packed(packed, tpacked)
    for total in (None, 7):
        out, out_lengths = rnn.pad_packed_sequence(packed, batch_first, 9.0, total)
        expected, t_lengths = trnn.pad_packed_sequence(tpacked, batch_first, 9.0, total)
        assert_same_outputs(out, expected)
        assert out_lengths.tolist() == t_lengths.tolist()
    g = rng.standard_normal(tuple(expected.shape)).astype(np.float32)
    out.backward(ember.tensor(g))
    expected.backward(torch.tensor(g))
    assert_same_outputs(x.grad, tx.grad)
    with pytest.raises(ValueError, match="total_length"):
        rnn.pad_packed_sequence(packed, total_length=2)


def test_sorting_is_enforced_and_lengths_checked() -> None:
    x = ember.zeros(4, 2, 1)
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        rnn.pack_padded_sequence(x, [1, 3])
    with pytest.raises(RuntimeError, match="greater than 0"):
        rnn.pack_padded_sequence(x, [3, 0])


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_unpack_unpad_sequence(enforce_sorted: bool, rng: Any) -> None:
    lengths = [4, 2, 1] if enforce_sorted else [2, 4, 1]
    ours, theirs = _sequences(rng, lengths)
    packed = rnn.pack_sequence(ours, enforce_sorted)
    _same_packed(packed, trnn.pack_sequence(theirs, enforce_sorted))
    for a, b in zip(rnn.unpack_sequence(packed), theirs, strict=True):
        assert_same_outputs(a, b)
    padded = rnn.pad_sequence(ours, batch_first=True)
    unpadded = rnn.unpad_sequence(padded, ember.tensor(lengths), batch_first=True)
    for a, b in zip(unpadded, theirs, strict=True):
        assert_same_outputs(a, b)
    moved = packed.to(ember.float64)
    assert moved.data.dtype == ember.float64 and moved.batch_sizes is packed.batch_sizes


def test_packing_on_every_device(device: str, rng: Any) -> None:
    ours, theirs = _sequences(rng, [2, 3, 1], device)
    packed = rnn.pack_sequence(ours, enforce_sorted=False)
    _same_packed(packed, trnn.pack_sequence(theirs, enforce_sorted=False))
    out, _ = rnn.pad_packed_sequence(packed, batch_first=True)
    assert_same_outputs(out, trnn.pad_packed_sequence(trnn.pack_sequence(theirs, False), True)[0])
    assert out.device == ours[0].device
