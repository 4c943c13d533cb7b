"""PyTorch's `default_collate` (samples -> one batch) and `default_convert` (NumPy -> tensors)."""

from __future__ import annotations

import collections.abc
import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember import _dtype
from ember._ops.creation import as_tensor, tensor
from ember._ops.shape import stack
from ember._tensor import Tensor

__all__ = ["default_collate", "default_convert"]

_ERROR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack tensors (and NumPy arrays) along a new first dimension, turn numbers into
    tensors, keep strings, and recurse into dicts, tuples and lists sample-wise."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    elem_type = type(elem)
    if isinstance(elem, (np.ndarray, np.generic)) and not isinstance(elem, (np.str_, np.bytes_)):
        if elem.dtype.kind in "OSUV":
            raise TypeError(_ERROR.format(elem.dtype))
        if isinstance(elem, np.ndarray):
            return default_collate([as_tensor(b) for b in batch])
        return as_tensor(np.asarray(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype=_dtype.float64)
    if isinstance(elem, int):  # bool too: a bool batch collates to a bool tensor
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch  # as given: a list at the top, a tuple (a zip column) below, as in PyTorch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        if isinstance(elem, collections.abc.MutableMapping):
            mapping: Any = copy.copy(elem)
            mapping.update(collated)
            return mapping
        try:
            return elem_type(collated)
        except TypeError:
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple
        return elem_type(*(default_collate(s) for s in zip(*batch, strict=True)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(s) for s in zip(*batch, strict=True)]
        if isinstance(elem, tuple):
            return columns  # PyTorch returns a list for tuples (kept for compatibility)
        if isinstance(elem, collections.abc.MutableSequence):
            clone = copy.copy(elem)
            for i, column in enumerate(columns):
                clone[i] = column
            return clone
        try:
            return elem_type(columns)
        except TypeError:
            return columns
    raise TypeError(_ERROR.format(elem_type))


def default_convert(data: Any) -> Any:
    """NumPy arrays and scalars to tensors, recursively; everything else unchanged."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and not isinstance(data, (np.str_, np.bytes_)):
        if data.dtype.kind in "OSUV":
            return data
        return as_tensor(data if isinstance(data, np.ndarray) else np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(data[key]) for key in data}
        if isinstance(data, collections.abc.MutableMapping):
            mapping: Any = copy.copy(data)
            mapping.update(converted)
            return mapping
        kind: Any = type(data)
        try:
            return kind(converted)
        except TypeError:
            return converted
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        if isinstance(data, collections.abc.MutableSequence):
            clone = copy.copy(data)
            for i, d in enumerate(data):
                clone[i] = default_convert(d)
            return clone
        sequence_kind: Any = type(data)
        try:
            return sequence_kind([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data
