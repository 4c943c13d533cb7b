"""DataLoader batching, collation, shuffling and samplers, beside torch.utils.data where the
semantics are deterministic."""

from __future__ import annotations

import collections
import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import ember
from ember.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    default_collate,
    default_convert,
    random_split,
)

from ._helpers import Point, Samples, as_list, assert_same_batch

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("batch_size", [1, 3, 4, 10, 13])
@pytest.mark.parametrize("drop_last", [False, True])
def test_batches_match_torch(batch_size: int, drop_last: bool) -> None:
    ours = DataLoader(Samples(ember.tensor), batch_size=batch_size, drop_last=drop_last)
    theirs = torch.utils.data.DataLoader(
        Samples(torch.tensor), batch_size=batch_size, drop_last=drop_last
    )
    assert len(ours) == len(theirs)
    batches = list(ours)
    expected = list(theirs)
    assert len(batches) == len(expected)
    for a, b in zip(batches, expected, strict=True):
        assert_same_batch(a, b)


def test_no_auto_batching_converts_like_torch() -> None:
    ours = list(DataLoader(Samples(ember.tensor, 4), batch_size=None))
    theirs = list(torch.utils.data.DataLoader(Samples(torch.tensor, 4), batch_size=None))
    for a, b in zip(ours, theirs, strict=True):
        assert_same_batch(a, b)


@pytest.mark.parametrize(
    "samples",
    [
        [1.5, 2.5],
        [1, 2],
        [True, False],
        [np.float32(1), np.float32(2)],
        [np.int8(1), np.int8(-2)],
        [np.bool_(True), np.bool_(False)],
        [np.zeros((2, 3), np.float16), np.ones((2, 3), np.float16)],
        ["a", "b"],
        [b"a", b"b"],
        [{"a": 1, "b": (2.0, "x")}, {"a": 3, "b": (4.0, "y")}],
        [collections.OrderedDict(z=1, a=2), collections.OrderedDict(z=3, a=4)],
        [Point(1, 2.0), Point(3, 4.0)],
        [[1, 2], [3, 4]],
        [(1, [2, 3]), (4, [5, 6])],
    ],
    ids=range(14),
)
def test_default_collate_matches_torch(samples: list[Any]) -> None:
    assert_same_batch(default_collate(samples), torch.utils.data.default_collate(samples))


def test_default_collate_stacks_tensors() -> None:
    batch = default_collate([ember.tensor([1, 2]), ember.tensor([3, 4])])
    assert batch.shape == (2, 2) and as_list(batch) == [[1, 2], [3, 4]]


def test_default_convert_matches_torch() -> None:
    for sample in ({"a": np.arange(3)}, (np.float64(2.0), "s"), [np.ones(2, np.uint8)]):
        assert_same_batch(default_convert(sample), torch.utils.data.default_convert(sample))


def test_default_collate_errors() -> None:
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="found <class 'object'>"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="found <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_tensor_dataset_batches_match_torch() -> None:
    x = np.arange(40, dtype=np.float32).reshape(10, 2, 2)
    y = np.arange(10)
    ours = list(DataLoader(TensorDataset(ember.tensor(x), ember.tensor(y)), batch_size=4))
    theirs = list(
        torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y)), batch_size=4
        )
    )
    for a, b in zip(ours, theirs, strict=True):
        assert_same_batch(a, b)


def test_tensor_dataset_rows_and_size_mismatch() -> None:
    data = TensorDataset(ember.arange(6).reshape(3, 2), ember.tensor([7, 8, 9]))
    assert len(data) == 3
    row, label = data[1]
    assert as_list(row) == [2, 3] and int(label) == 8
    with pytest.raises(ValueError, match="Size mismatch between tensors"):
        TensorDataset(ember.zeros(3), ember.zeros(4))


# -- shuffling ------------------------------------------------------------------------------


def _epoch(loader: DataLoader[Any]) -> list[int]:
    return [i for batch in loader for i in as_list(batch)]


def test_shuffle_is_a_permutation_reproducible_and_new_each_epoch() -> None:
    data = list(range(50))
    loader = DataLoader(
        data, batch_size=8, shuffle=True, generator=ember.Generator().manual_seed(3)
    )
    first, second = _epoch(loader), _epoch(loader)
    assert sorted(first) == data and sorted(second) == data
    assert first != data and first != second
    again = DataLoader(data, batch_size=8, shuffle=True, generator=ember.Generator().manual_seed(3))
    assert _epoch(again) == first and _epoch(again) == second
    other = DataLoader(data, batch_size=8, shuffle=True, generator=ember.Generator().manual_seed(4))
    assert _epoch(other) != first


def test_shuffle_without_a_generator_follows_the_default_seed() -> None:
    data = list(range(30))
    ember.manual_seed(11)
    loader = DataLoader(data, batch_size=5, shuffle=True)
    first, second = _epoch(loader), _epoch(loader)
    assert first != second and sorted(first) == data
    ember.manual_seed(11)
    assert _epoch(DataLoader(data, batch_size=5, shuffle=True)) == first


def test_random_sampler_with_replacement_and_num_samples() -> None:
    generator = ember.Generator().manual_seed(0)
    drawn = list(RandomSampler(range(5), replacement=True, num_samples=70, generator=generator))
    assert len(drawn) == 70 and set(drawn) <= set(range(5)) and len(set(drawn)) > 1
    more = list(RandomSampler(range(4), num_samples=10, generator=generator))
    assert sorted(more[:4]) == [0, 1, 2, 3] and sorted(more[4:8]) == [0, 1, 2, 3]
    assert len(more) == 10 and len(RandomSampler(range(4), num_samples=10)) == 10
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(range(4), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        RandomSampler(range(4), replacement=1)  # type: ignore[arg-type]


def test_subset_random_sampler() -> None:
    picked = list(SubsetRandomSampler([10, 20, 30], generator=ember.Generator().manual_seed(1)))
    assert sorted(picked) == [10, 20, 30]


@pytest.mark.parametrize("batch_size", [1, 2, 3, 7])
@pytest.mark.parametrize("drop_last", [False, True])
def test_batch_sampler_matches_torch(batch_size: int, drop_last: bool) -> None:
    ours = BatchSampler(SequentialSampler(range(7)), batch_size, drop_last)
    theirs = torch.utils.data.BatchSampler(range(7), batch_size, drop_last)
    assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_batch_sampler_argument_errors() -> None:
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler(range(3), 2, 1)  # type: ignore[arg-type]


def test_custom_sampler_and_batch_sampler() -> None:
    data = list(range(10))
    assert _epoch(DataLoader(data, batch_size=3, sampler=[9, 8, 7, 1])) == [9, 8, 7, 1]
    batches = [as_list(b) for b in DataLoader(data, batch_sampler=[[3, 1], [0], [5, 6, 7]])]
    assert batches == [[3, 1], [0], [5, 6, 7]]


# -- argument checks --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(num_workers=-1), "num_workers option should be non-negative"),
        (dict(timeout=-1), "timeout option should be non-negative"),
        (dict(prefetch_factor=2), "prefetch_factor option could only be specified"),
        (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
        (dict(sampler=[0], shuffle=True), "sampler option is mutually exclusive with shuffle"),
        (dict(batch_sampler=[[0]], batch_size=2), "batch_sampler option is mutually exclusive"),
        (dict(batch_sampler=[[0]], drop_last=True), "batch_sampler option is mutually exclusive"),
        (dict(batch_size=None, drop_last=True), "disables auto-batching"),
    ],
)
def test_argument_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DataLoader(list(range(4)), **kwargs)


def test_attributes_are_frozen_after_init() -> None:
    loader = DataLoader(list(range(4)), batch_size=2)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after"):
        loader.batch_size = 3
    loader.num_workers = 0  # others stay settable, as in PyTorch


# -- iterable datasets ------------------------------------------------------------------------


def counting(base: type, n: int, worker_info: Any = None) -> Any:
    """An iterable dataset of 0..n-1 (each worker takes every num_workers-th number)."""

    class Counting(base):  # type: ignore[misc, valid-type]
        def __iter__(self) -> Iterator[int]:
            info = worker_info() if worker_info else None
            if info is None:
                return iter(range(n))
            return iter(range(info.id, n, info.num_workers))

        def __len__(self) -> int:
            return n

    return Counting()


@pytest.mark.parametrize(("batch_size", "drop_last"), [(3, False), (3, True), (None, False)])
def test_iterable_dataset_matches_torch(batch_size: int | None, drop_last: bool) -> None:
    ours = DataLoader(counting(IterableDataset, 10), batch_size=batch_size, drop_last=drop_last)
    theirs = torch.utils.data.DataLoader(
        counting(torch.utils.data.IterableDataset, 10), batch_size=batch_size, drop_last=drop_last
    )
    assert len(ours) == len(theirs)
    got = [b if isinstance(b, int) else as_list(b) for b in ours]
    expected = [b if isinstance(b, int) else b.tolist() for b in theirs]
    assert got == expected


def test_iterable_dataset_options_are_rejected() -> None:
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(counting(IterableDataset, 3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(counting(IterableDataset, 3), sampler=[0])


# -- datasets -----------------------------------------------------------------------------------


def test_subset_concat_and_add() -> None:
    a, b = TensorDataset(ember.arange(3)), TensorDataset(ember.arange(10, 14))
    both = a + b
    assert isinstance(both, ConcatDataset) and len(both) == 7
    assert [int(both[i][0]) for i in range(7)] == [0, 1, 2, 10, 11, 12, 13]
    assert int(both[-1][0]) == 13
    subset = Subset(both, [6, 0])
    assert len(subset) == 2 and int(subset[0][0]) == 13
    with pytest.raises(NotImplementedError):
        Dataset()[0]


def test_random_split_by_lengths_and_fractions() -> None:
    data = list(range(10))
    parts = random_split(data, [3, 7], generator=ember.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(itertools.chain.from_iterable(parts)) == data
    again = random_split(data, [3, 7], generator=ember.Generator().manual_seed(0))
    assert list(again[0]) == list(parts[0])
    fractions = random_split(data, [0.25, 0.25, 0.5])
    assert [len(p) for p in fractions] == [3, 2, 5]  # PyTorch hands the remainder out in order
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(data, [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        random_split(data, [1.5, -0.5])
