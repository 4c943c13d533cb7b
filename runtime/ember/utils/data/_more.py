"""More datasets and samplers: `ChainDataset` (iterable datasets one after another),
`StackDataset` (several datasets indexed together, as tuples or dicts) and
`WeightedRandomSampler` (indices drawn with given weights through `ember.multinomial`,
so runs repeat under `ember.manual_seed` or a given generator)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ember import _dtype
from ember._ops.creation import as_tensor
from ember._ops.random import Generator
from ember._ops.sampling import multinomial
from ember.utils.data.dataset import Dataset, IterableDataset
from ember.utils.data.sampler import Sampler

__all__ = ["ChainDataset", "StackDataset", "WeightedRandomSampler"]


class ChainDataset(IterableDataset[Any]):
    """The items of each iterable dataset in turn, chained on the fly."""

    def __init__(self, datasets: Iterable[Dataset[Any]]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for dataset in self.datasets:
            if not isinstance(dataset, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from dataset

    def __len__(self) -> int:
        total = 0
        for dataset in self.datasets:
            if not isinstance(dataset, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(dataset)  # type: ignore[arg-type]
        return total


class StackDataset(Dataset[Any]):
    """Datasets of one length indexed together: `StackDataset(a, b)[i] == (a[i], b[i])`,
    `StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}`."""

    datasets: tuple[Any, ...] | dict[str, Any]

    def __init__(self, *args: Dataset[Any], **kwargs: Dataset[Any]) -> None:
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or"
                "``dict``- (via ``kwargs``) like input/output, but both types are given."
            )
        parts: list[Any] = list(args) if args else list(kwargs.values())
        if not parts:
            raise ValueError("At least one dataset should be passed")
        self._length = len(parts[0])
        if any(self._length != len(dataset) for dataset in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else dict(kwargs)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {key: dataset[index] for key, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices: list[Any]) -> list[Any]:
        """A batch at once, through each part's own `__getitems__` where it has one."""
        named = isinstance(self.datasets, dict)
        items = (
            self.datasets.items() if isinstance(self.datasets, dict) else enumerate(self.datasets)
        )
        columns: list[tuple[Any, list[Any]]] = []
        for key, dataset in items:
            fetch = getattr(dataset, "__getitems__", None)
            if callable(fetch):
                got = list(fetch(indices))
                if len(got) != len(indices):
                    raise ValueError(
                        "Nested dataset's output size mismatch."
                        f" Expected {len(indices)}, got {len(got)}"
                    )
            else:
                got = [dataset[i] for i in indices]
            columns.append((key, got))
        if named:
            return [{key: got[row] for key, got in columns} for row in range(len(indices))]
        return [tuple(got[row] for _, got in columns) for row in range(len(indices))]

    def __len__(self) -> int:
        return self._length


class WeightedRandomSampler(Sampler[int]):
    """`num_samples` indices of `weights`, each drawn with probability proportional to its
    weight, with or without replacement."""

    def __init__(
        self,
        weights: Sequence[float],
        num_samples: int,
        replacement: bool = True,
        generator: Generator | None = None,
    ) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        weights_tensor = as_tensor(weights, dtype=_dtype.float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError(
                "weights should be a 1d sequence but given "
                f"weights have shape {tuple(weights_tensor.shape)}"
            )
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        drawn = multinomial(
            self.weights, self.num_samples, self.replacement, generator=self.generator
        )
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples
