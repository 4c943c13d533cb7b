"""`DataLoader`: batches from a dataset, in the main process or in worker processes."""

from __future__ import annotations

import math
import multiprocessing
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final, Generic, TypeVar

from ember import _dtype
from ember._ops.creation import empty
from ember._ops.random import Generator
from ember.utils.data._collate import default_collate, default_convert
from ember.utils.data._fetch import Fetcher
from ember.utils.data.dataset import Dataset, IterableDataset
from ember.utils.data.sampler import (
    BatchSampler,
    InfiniteConstantSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
)

__all__ = ["DataLoader"]

T_co = TypeVar("T_co", covariant=True)

# Attributes fixed once the loader exists: changing them would desynchronise the samplers.
_FROZEN: Final = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset")


class DataLoader(Generic[T_co]):
    """Iterates over `dataset` in batches: sampling (`shuffle`, `sampler`, `batch_sampler`),
    collation (`collate_fn`, default `default_collate`) and `num_workers` worker processes
    that return batches in order, as PyTorch's DataLoader does.

    Workers start with the 'fork' method where the platform has it, so datasets holding
    tensors need not be picklable; `pin_memory` is accepted and has nothing to do (no
    device needs pinned host memory yet).
    """

    _initialized = False

    def __init__(
        self,
        dataset: Dataset[T_co] | Iterable[T_co],
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler[Any] | Iterable[Any] | None = None,
        batch_sampler: Sampler[list[Any]] | Iterable[list[Any]] | None = None,
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
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable "
                "multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing. Let "
                "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            for name, value in (
                ("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)
            ):  # fmt: skip
                if value is not None and value is not False:
                    raise ValueError(
                        f"DataLoader with IterableDataset: expected unspecified {name} option, "
                        f"but got {name}={value}"
                    )
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )
        if sampler is None:
            if self._iterable:
                sampler = InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]
            else:
                sampler = SequentialSampler(dataset)  # type: ignore[arg-type]
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator: Any = None
        self._initialized = True

    def __setattr__(self, name: str, value: Any) -> None:
        if self._initialized and name in _FROZEN:
            raise ValueError(
                f"{name} attribute should not be set after {type(self).__name__} is initialized"
            )
        super().__setattr__(name, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Iterable[Any]:
        return self.batch_sampler if self.batch_sampler is not None else self.sampler

    def _fetcher(self) -> Fetcher:
        return Fetcher(
            self.dataset, self._iterable, self._auto_collation, self.collate_fn, self.drop_last
        )

    def _base_seed(self) -> int:
        """Every iterator draws one seed from the loader's generator (as PyTorch's do), so
        the shuffles that follow are the same whether or not workers are used."""
        return int(empty((), dtype=_dtype.int64).random_(generator=self.generator).item())

    def _context(self) -> Any:
        context = self.multiprocessing_context
        if context is None:
            methods = multiprocessing.get_all_start_methods()
            return multiprocessing.get_context("fork" if "fork" in methods else None)
        if isinstance(context, str):
            return multiprocessing.get_context(context)
        return context

    def __iter__(self) -> Iterator[Any]:
        if self.num_workers == 0:
            return _SingleProcessIterator(self)
        # Cold, and only with workers: the multiprocessing machinery is imported on demand.
        from ember.utils.data._multiprocess import MultiProcessIterator

        if not self.persistent_workers:
            return MultiProcessIterator(self)
        if self._iterator is None:
            self._iterator = MultiProcessIterator(self)
        else:
            self._iterator.reset(self)
        return self._iterator

    def __len__(self) -> int:
        if self._iterable:
            length = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)  # type: ignore[arg-type]


class _SingleProcessIterator:
    """Batches fetched in the calling process, one per `next`."""

    def __init__(self, loader: DataLoader[Any]) -> None:
        loader._base_seed()
        self._indices = iter(loader._index_sampler)
        self._fetch = loader._fetcher()()
        self._length = loader.__len__

    def __iter__(self) -> _SingleProcessIterator:
        return self

    def __next__(self) -> Any:
        return self._fetch(next(self._indices))

    def __len__(self) -> int:
        return self._length()
