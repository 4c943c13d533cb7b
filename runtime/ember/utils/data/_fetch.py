"""Fetchers: turn one entry of the index stream into one batch (or one sample)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ember._ops.creation import tensor
from ember._ops.indexing import index_select
from ember.utils.data._collate import default_collate
from ember.utils.data.dataset import TensorDataset

__all__ = ["Fetcher"]


class Fetcher:
    """Builds the fetch function for a dataset; picklable, so spawned workers can build it."""

    def __init__(
        self,
        dataset: Any,
        iterable: bool,
        auto_collation: bool,
        collate_fn: Callable[[Any], Any],
        drop_last: bool,
    ) -> None:
        self.dataset = dataset
        self.iterable = iterable
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def __call__(self) -> Callable[[Any], Any]:
        """A fresh fetch function (for an iterable dataset: a fresh pass over it)."""
        if self.iterable:
            return self._iterable_fetch(iter(self.dataset))
        dataset, collate = self.dataset, self.collate_fn
        if not self.auto_collation:
            return lambda index: collate(dataset[index])
        if type(dataset) is TensorDataset and collate is default_collate:
            # default_collate of rows is the rows gathered: one index_select per tensor.
            tensors = dataset.tensors
            return lambda index: [
                index_select(t, 0, tensor(index, device=t.device)) for t in tensors
            ]
        getitems = getattr(dataset, "__getitems__", None)
        if getitems is not None:
            return lambda index: collate(getitems(index))
        return lambda index: collate([dataset[i] for i in index])

    def _iterable_fetch(self, samples: Iterator[Any]) -> Callable[[Any], Any]:
        collate, drop_last = self.collate_fn, self.drop_last
        if not self.auto_collation:
            return lambda index: collate(next(samples))

        def fetch(index: list[None]) -> Any:
            batch = []
            for _ in index:
                try:
                    batch.append(next(samples))
                except StopIteration:
                    break
            if not batch or (drop_last and len(batch) < len(index)):
                raise StopIteration
            return collate(batch)

        return fetch
