"""Samplers: the order in which a DataLoader visits a map-style dataset's indices."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

from ember import _dtype
from ember._ops.creation import empty
from ember._ops.random import Generator, randint, randperm

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler"]

T_co = TypeVar("T_co", covariant=True)


class Sampler(Generic[T_co]):
    """Base class: an iterable of indices (or of index batches), optionally with a length."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def fresh_generator(generator: Generator | None) -> Generator:
    """`generator`, or a new one seeded from the default generator (PyTorch's rule, so that
    `ember.manual_seed` makes unseeded shuffles reproducible and each epoch differs)."""
    if generator is not None:
        return generator
    seed = int(empty((), dtype=_dtype.int64).random_().item())
    return Generator().manual_seed(seed)


class RandomSampler(Sampler[int]):
    """A random permutation of the indices, or `num_samples` draws with replacement."""

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Generator | None = None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={self.replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        """How many indices one pass yields (the dataset's length unless set)."""
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = fresh_generator(self.generator)
        count = self.num_samples
        if self.replacement:
            for _ in range(count // 32):
                yield from randint(n, (32,), generator=generator).tolist()
            yield from randint(n, (count % 32,), generator=generator).tolist()
        else:
            for _ in range(count // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[: count % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices, in a random order."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler[list[int]]):
    """Groups another sampler's indices into lists of `batch_size` (the last may be short
    unless `drop_last`)."""

    def __init__(
        self, sampler: Sampler[Any] | Iterable[Any], batch_size: int, drop_last: bool
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        indices = iter(self.sampler)
        if self.drop_last:
            for group in zip(*[indices] * self.batch_size, strict=False):
                yield [*group]
            return
        batch = [*itertools.islice(indices, self.batch_size)]
        while batch:
            yield batch
            batch = [*itertools.islice(indices, self.batch_size)]

    def __len__(self) -> int:
        size = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return size // self.batch_size
        return (size + self.batch_size - 1) // self.batch_size


class InfiniteConstantSampler(Sampler[None]):
    """None forever: the index stream of an iterable-style dataset."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None
