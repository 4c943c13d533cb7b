"""Datasets written once for both frameworks, and a structural comparison of batches."""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

import ember

Point = collections.namedtuple("Point", ["x", "y"])


class Samples:
    """A map-style dataset of mixed samples; `tensor` makes the framework's tensors."""

    def __init__(self, tensor: Any, size: int = 10) -> None:
        self.tensor = tensor
        self.size = size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {
            "x": self.tensor([[i, i + 0.5], [-i, 2.0 * i]]),
            "label": self.tensor(i % 3),
            "array": np.full((2,), i, dtype=np.int32),
            "float": i / 4,
            "int": i,
            "bool": i % 2 == 0,
            "name": f"sample{i}",
            "pair": (i, np.float32(i * 1.5)),
            "list": [np.int64(i), np.bool_(i > 4)],
            "point": Point(i, float(i)),
        }


def assert_same_batch(ours: Any, theirs: Any) -> None:
    """Equal structure, container types, dtypes and values (ember vs torch)."""
    import torch

    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, ember.Tensor), type(ours)
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch."), (ours, theirs)
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_array_equal(np.asarray(ours), theirs.numpy())
        return
    assert type(ours) is type(theirs), (type(ours), type(theirs))
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for key in theirs:
            assert_same_batch(ours[key], theirs[key])
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            assert_same_batch(a, b)
    else:
        assert ours == theirs


def as_list(batch: ember.Tensor) -> list[Any]:
    return np.asarray(batch).tolist()  # type: ignore[no-any-return]
