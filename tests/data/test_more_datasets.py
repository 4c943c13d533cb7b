"""ChainDataset, StackDataset and WeightedRandomSampler, against torch.utils.data's."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import ember
from ember.utils.data import (
    ChainDataset,
    DataLoader,
    IterableDataset,
    StackDataset,
    TensorDataset,
    WeightedRandomSampler,
)


class _Range(IterableDataset[int]):
    def __init__(self, start: int, stop: int) -> None:
        self.start, self.stop = start, stop

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.start, self.stop))

    def __len__(self) -> int:
        return self.stop - self.start


def test_chain_dataset_chains_and_counts() -> None:
    chain = ChainDataset([_Range(0, 3), _Range(10, 12)])
    assert list(chain) == [0, 1, 2, 10, 11]
    assert len(chain) == 5
    assert [b.tolist() for b in DataLoader(chain, batch_size=2)] == [[0, 1], [2, 10], [11]]
    with pytest.raises(AssertionError, match="only supports IterableDataset"):
        list(ChainDataset([TensorDataset(ember.arange(3))]))
    with pytest.raises(AssertionError, match="only supports IterableDataset"):
        len(ChainDataset([[1, 2]]))  # type: ignore[list-item]


def test_stack_dataset_tuple_and_dict_forms() -> None:
    images, labels = ember.arange(12.0).reshape(4, 3), [5, 6, 7, 8]
    stacked = StackDataset(images, labels)
    assert len(stacked) == 4
    first = stacked[1]
    assert isinstance(first, tuple) and first[1] == 6
    np.testing.assert_array_equal(first[0].numpy(), [3.0, 4.0, 5.0])
    named = StackDataset(image=images, label=labels)
    item = named[2]
    assert set(item) == {"image", "label"} and item["label"] == 7
    batch = named.__getitems__([0, 3])
    assert [b["label"] for b in batch] == [5, 8]
    loaded = next(iter(DataLoader(named, batch_size=4)))
    assert loaded["image"].shape == (4, 3) and loaded["label"].tolist() == labels
    tuples = StackDataset(TensorDataset(images), labels).__getitems__([2, 0])
    assert [t[1] for t in tuples] == [7, 5]


def test_stack_dataset_errors_as_torch() -> None:
    for make in (StackDataset, tdata.StackDataset):
        with pytest.raises(ValueError, match="Size mismatch"):
            make([1, 2], [1, 2, 3])
        with pytest.raises(ValueError, match="Size mismatch"):
            make(a=[1, 2], b=[1])
        with pytest.raises(ValueError, match="both types are given"):
            make([1], b=[2])
        with pytest.raises(ValueError, match="At least one dataset"):
            make()


def test_weighted_sampler_reproducible_and_bounded() -> None:
    weights = [0.1, 0.9, 0.4, 0.7, 3.0, 0.6]
    ember.manual_seed(7)
    first = list(WeightedRandomSampler(weights, 50))
    ember.manual_seed(7)
    assert list(WeightedRandomSampler(weights, 50)) == first
    generator = ember.Generator().manual_seed(3)
    again = ember.Generator().manual_seed(3)
    assert list(WeightedRandomSampler(weights, 20, generator=generator)) == list(
        WeightedRandomSampler(weights, 20, generator=again)
    )
    sampler = WeightedRandomSampler(weights, 6, replacement=False)
    assert len(sampler) == 6 and sorted(sampler) == list(range(6))
    assert sampler.weights.dtype is ember.float64
    assert all(0 <= i < 6 for i in first)


def test_weighted_sampler_statistics() -> None:
    weights = np.array([1.0, 2.0, 3.0, 4.0])
    ember.manual_seed(0)
    draws = np.array(list(WeightedRandomSampler(weights.tolist(), 20000)))
    frequencies = np.bincount(draws, minlength=4) / draws.size
    expected = weights / weights.sum()
    # 20000 draws: each frequency's standard error is below 0.0035; allow 5 of them.
    np.testing.assert_allclose(frequencies, expected, atol=0.0175)
    # Zero weight is never drawn; without replacement the heaviest tends to come first.
    ember.manual_seed(1)
    assert 0 not in list(WeightedRandomSampler([0.0, 1.0, 1.0], 100))
    ember.manual_seed(2)
    firsts = [next(iter(WeightedRandomSampler([1.0, 9.0], 2, replacement=False)))
              for _ in range(400)]  # fmt: skip
    assert 0.8 < firsts.count(1) / 400 < 0.97  # P(first = 1) = 0.9


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([1.0, 2.0], 0), {}, "num_samples should be a positive integer"),
        (([1.0, 2.0], True), {}, "num_samples should be a positive integer"),
        (([1.0, 2.0], 2), {"replacement": 1}, "replacement should be a boolean"),
        (([[1.0, 2.0]], 2), {}, "weights should be a 1d sequence"),
    ],
)
def test_weighted_sampler_errors_as_torch(args: tuple, kwargs: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError, match=message):
        tdata.WeightedRandomSampler(*args, **kwargs)
    with pytest.raises(ValueError, match=message):
        WeightedRandomSampler(*args, **kwargs)
    # torch raises on a too-large draw without replacement; so does ember.multinomial.
    with pytest.raises(RuntimeError):
        list(tdata.WeightedRandomSampler([1.0, 1.0], 3, replacement=False))
    with pytest.raises(RuntimeError):
        list(WeightedRandomSampler([1.0, 1.0], 3, replacement=False))
    assert torch.utils.data.WeightedRandomSampler([1.0], 1).num_samples == 1
