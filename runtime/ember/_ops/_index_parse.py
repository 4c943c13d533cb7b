"""Reading a Python index (`t[...]`) and applying its basic part as a view.

Ints, slices, None and Ellipsis become one strided view of `t` (no copy). Tensor and list
indices ("advanced") are left as whole dims of that view and returned, as int64 tensors
checked against their dim and made non-negative, for `_index_advanced` to apply.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ember import _dtype
from ember._device import device
from ember._dispatch import kernel_for
from ember._ops import conversion, creation, names
from ember._ops._index_tensors import checked, out_of_bounds
from ember._tensor import Tensor, make_view

_int64 = _dtype.int64
_MASK_DTYPES = (_dtype.bool, _dtype.uint8)
_INDEX_DTYPES = (_dtype.int64, _dtype.int32)


class Indexed:
    """The result of parsing: the basic-indexed view and its advanced indices."""

    __slots__ = ("indices", "positions", "view")

    def __init__(self, view: Tensor, positions: list[int], indices: list[Tensor]) -> None:
        self.view = view
        self.positions = positions  # dims of `view` that the advanced indices index
        self.indices = indices


def parse(t: Tensor, index: Any) -> Indexed:
    """Apply the basic part of `index` to `t`; collect the advanced part."""
    items = normalize(t, index)
    shape, strides = t._shape, t._strides
    ndim = len(shape)
    consumed = 0
    ellipses = 0
    for item in items:
        if item is Ellipsis:
            ellipses += 1
        elif isinstance(item, Tensor):
            consumed += len(item._shape) if item._dtype in _MASK_DTYPES else 1
        elif item is not None and type(item) is not bool:
            consumed += 1
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")

    offset = t._offset
    out_shape: list[int] = []
    out_strides: list[int] = []
    positions: list[int] = []
    indices: list[Tensor] = []
    d = 0  # the dim of `t` that the next item indexes
    for item in items:
        if item is None or type(item) is bool:
            # A new size-1 dim (with the stride `unsqueeze` would give it); a bool also
            # indexes it with [0] (True) or [] (False), as PyTorch does.
            out_strides.append(shape[d] * strides[d] if d < ndim else 1)
            out_shape.append(1)
            if item is not None:
                positions.append(len(out_shape) - 1)
                indices.append(creation.zeros(1 if item else 0, dtype=_int64, device=t._device))
        elif item is Ellipsis:
            for _ in range(ndim - consumed):
                out_shape.append(shape[d])
                out_strides.append(strides[d])
                d += 1
        elif type(item) is int:
            size = shape[d]
            if not -size <= item < size:
                raise IndexError(
                    f"index {item} is out of bounds for dimension {d} with size {size}"
                )
            offset += (item + size if item < 0 else item) * strides[d]
            d += 1
        elif type(item) is slice:
            start, length, step = _slice(item, shape[d])
            offset += start * strides[d]
            out_shape.append(length)
            out_strides.append(strides[d] * step)
            d += 1
        elif item._dtype in _MASK_DTYPES:
            for column in _mask_indices(item, t, d):
                positions.append(len(out_shape))
                indices.append(column)
                out_shape.append(shape[d])
                out_strides.append(strides[d])
                d += 1
        else:
            size = shape[d]
            positions.append(len(out_shape))
            indices.append(checked(item, size, negative=True, error=out_of_bounds(d, size)))
            out_shape.append(size)
            out_strides.append(strides[d])
            d += 1
    out_shape.extend(shape[d:])
    out_strides.extend(strides[d:])
    return Indexed(make_view(t, offset, tuple(out_shape), tuple(out_strides)), positions, indices)


def _slice(item: slice, size: int) -> tuple[int, int, int]:
    """(start, length, step) of a slice of a dim of `size` (PyTorch allows only step > 0)."""
    step = 1 if item.step is None else operator.index(item.step)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    start, stop, _ = slice(item.start, item.stop).indices(size)
    return start, max(0, (stop - start + step - 1) // step), step


def normalize(t: Tensor, index: Any) -> tuple[Any, ...]:
    """The index as a tuple of: int, bool, slice, None, Ellipsis, and tensors on t's device
    (normalizing a normalized index gives it back)."""
    if type(index) is tuple:
        items = index
    elif type(index) is list and _list_is_tuple(index):
        items = tuple(index)
    else:
        items = (index,)
    return tuple(_item(t._device, item) for item in items)


def _list_is_tuple(index: list[Any]) -> bool:
    # PyTorch's (and old NumPy's) heuristic: a short list holding a slice, None, Ellipsis,
    # a tensor or a sequence is read as a tuple of indices, e.g. x[[0, slice(None)]].
    return len(index) < 32 and any(
        x is None or x is Ellipsis or isinstance(x, (slice, Tensor, list, tuple, np.ndarray))
        for x in index
    )


def _item(dev: device, item: Any) -> Any:
    if item is None or item is Ellipsis or type(item) is int or type(item) is slice:
        return item
    if isinstance(item, Tensor):
        return _tensor_item(dev, item)
    if isinstance(item, (bool, np.bool_)):
        return bool(item)
    if isinstance(item, (list, tuple, range, np.ndarray)):
        array = np.asarray(item)
        if array.size == 0:
            array = array.astype(np.int64)  # `x[[]]` selects nothing rather than failing
        if array.dtype.kind not in "biu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return _tensor_item(dev, creation.tensor(array, device=dev))
    if hasattr(item, "__index__"):
        return operator.index(item)
    raise IndexError(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
        f"valid indices (got {type(item).__name__})"
    )


def _tensor_item(dev: device, item: Tensor) -> Any:
    dt = item._dtype
    if dt not in _MASK_DTYPES and dt not in _INDEX_DTYPES:
        raise IndexError(
            f"tensors used as indices must be long, int, byte or bool tensors (got {dt.name})"
        )
    if not item._shape:
        # A 0-d index tensor acts as a Python int or bool: an int selects (a view).
        value = item.item()
        return bool(value) if dt in _MASK_DTYPES else int(value)
    if item._device is not dev:
        if item._device.type != "cpu":
            raise RuntimeError(
                f"indices should be either on cpu or on the same device as the indexed tensor "
                f"({dev}), got an index on {item._device}"
            )
        item = conversion.to(item, dev)
    return conversion.cast(item, _int64) if dt is _dtype.int32 else item


def _mask_indices(mask: Tensor, t: Tensor, d: int) -> list[Tensor]:
    """The int64 indices of the true elements of `mask`, one tensor per dim it covers."""
    k = len(mask._shape)
    for j in range(k):
        if mask._shape[j] != t._shape[d + j]:
            raise IndexError(
                f"The shape of the mask {list(mask._shape)} at index {j} does not match the "
                f"shape of the indexed tensor {list(t._shape)} at index {d + j}"
            )
    found: Tensor = kernel_for(names.NONZERO, mask._device, mask._dtype)(mask)
    offset, (rows, _), (row_stride, column_stride) = found._offset, found._shape, found._strides
    return [make_view(found, offset + j * column_stride, (rows,), (row_stride,)) for j in range(k)]
