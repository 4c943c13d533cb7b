"""Advanced (tensor) indexing on a basic-indexed view, through `take` and `index_put_`.

The advanced indices (int64, range-checked, non-negative) sit at `positions`, dims of the
view. Broadcast together to shape B, they replace those dims in the result: in place when
the positions are adjacent, else at the front (NumPy's and PyTorch's rule). Every result
element is one element of the view, whose row-major number ("flat index") is computed on
the device with int64 ops; the `take` and `index_put_` kernels then read or write them.
"""

from __future__ import annotations

from typing import Any

from ember._dispatch import kernel_for
from ember._ops import _launch, conversion, names
from ember._ops._composites_index import index_select_into, take_into
from ember._ops._index_tensors import contiguous_copy, flat, int64_arange, int64_binary
from ember._ops._meta import broadcast_shapes
from ember._tensor import Tensor, contiguous_strides, empty_tensor, make_view

Shape = tuple[int, ...]


def read(view: Tensor, positions: list[int], indices: list[Tensor]) -> Tensor:
    """view[advanced indices] as a new tensor."""
    index_shape = indices[0]._shape if len(indices) == 1 else _broadcast(indices)
    dev, dt = view._device, view._dtype
    if len(indices) == 1:
        # One index tensor (x[idx], x[:, mask]) is an index_select along its dim.
        p, index = positions[0], indices[0]
        shape = view._shape
        selected = (*shape[:p], index.numel(), *shape[p + 1 :])
        out = empty_tensor(selected, dt, dev)
        if out.numel():
            index_select_into(out, view, p, flat(index))
        result = (*shape[:p], *index_shape, *shape[p + 1 :])
        return make_view(out, 0, result, contiguous_strides(result))
    result, _, _ = _layout(view._shape, positions, index_shape)
    out = empty_tensor(result, dt, dev)
    if out.numel():
        index = _flat_index(view, positions, indices, index_shape)
        take_into(flat(out), view, flat(index))
    return out


def write(
    view: Tensor, positions: list[int], indices: list[Tensor], value: Any, accumulate: bool = False
) -> None:
    """view[advanced indices] = value (broadcast to the indexing result, cast to view's
    dtype); with `accumulate`, += (repeated indices add up)."""
    index_shape = _broadcast(indices)
    result, _, _ = _layout(view._shape, positions, index_shape)
    values = _values(value, result, view)
    if not values.numel():
        return
    index = _flat_index(view, positions, indices, index_shape)
    kernel_for(names.INDEX_PUT, view._device, view._dtype)(
        view, flat(index), flat(values), accumulate
    )


def add_into(view: Tensor, value: Any) -> None:
    """view += value, where view is a basic-indexed view (it never aliases itself)."""
    values = _values(value, view._shape, view)
    _launch.launch_binary(names.BINARY["add"], view, view, values, view._dtype)


def _broadcast(indices: list[Tensor]) -> Shape:
    try:
        return broadcast_shapes("index", *(i._shape for i in indices))
    except RuntimeError:
        shapes = ", ".join(str(list(i._shape)) for i in indices)
        raise IndexError(
            f"shape mismatch: indexing tensors could not be broadcast together with shapes {shapes}"
        ) from None


def _layout(shape: Shape, positions: list[int], index_shape: Shape) -> tuple[Shape, int, list[int]]:
    """(result shape, where the index dims start in it, result dim of each other view dim)."""
    first, last = positions[0], positions[-1]
    others = [j for j in range(len(shape)) if j not in positions]
    width = len(index_shape)
    if last - first == len(positions) - 1:
        result = (*shape[:first], *index_shape, *shape[last + 1 :])
        at = [j if j < first else j - len(positions) + width for j in others]
        return result, first, at
    result = (*index_shape, *(shape[j] for j in others))
    return result, 0, [width + i for i in range(len(others))]


def _flat_index(
    view: Tensor, positions: list[int], indices: list[Tensor], index_shape: Shape
) -> Tensor:
    """The row-major number, within `view`, of every element of the indexing result."""
    shape = view._shape
    row_major = [1] * len(shape)
    for j in range(len(shape) - 2, -1, -1):
        row_major[j] = row_major[j + 1] * shape[j + 1]
    base: Tensor | None = None
    for p, index in zip(positions, indices, strict=True):
        term = index if row_major[p] == 1 else int64_binary("mul", index, row_major[p])
        base = term if base is None else int64_binary("add", base, term)
    assert base is not None
    result, start, at = _layout(shape, positions, index_shape)
    ndim = len(result)
    pad = ndim - start - len(index_shape)
    total = make_view(
        base,
        base._offset,
        (1,) * start + base._shape + (1,) * pad,
        (0,) * start + base._strides + (0,) * pad,
    )
    for j, r in zip((j for j in range(len(shape)) if j not in positions), at, strict=True):
        if shape[j] == 1:
            continue
        steps = int64_arange(shape[j], row_major[j], view._device)
        along = tuple(shape[j] if i == r else 1 for i in range(ndim))
        total = int64_binary("add", total, make_view(steps, 0, along, contiguous_strides(along)))
    if total._shape != result or not total._contiguous:
        total = contiguous_copy(
            make_view(total, total._offset, result, _broadcast_strides(total, result))
        )
    return total


def _broadcast_strides(t: Tensor, shape: Shape) -> Shape:
    return tuple(s if n == m else 0 for n, m, s in zip(t._shape, shape, t._strides, strict=True))


def _values(value: Any, shape: Shape, target: Tensor) -> Tensor:
    """`value` as a new row-major tensor of `shape` and `target`'s dtype and device."""
    out = empty_tensor(shape, target._dtype, target._device)
    if not isinstance(value, Tensor):
        conversion.fill_(out, value)
        return out
    source = strip_leading_ones(value)
    try:
        fits = broadcast_shapes("index_put_", source._shape, shape) == shape
    except RuntimeError:
        fits = False
    if not fits:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(value._shape)} cannot be broadcast to "
            f"indexing result of shape {list(shape)}"
        )
    if out.numel():
        conversion.copy_(out, source)
    return out


def strip_leading_ones(value: Tensor) -> Tensor:
    """PyTorch lets a value carry extra leading size-1 dims (x[0] = ones(1, 3) for x[2, 3])."""
    shape = value._shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    if not k:
        return value
    return make_view(value, value._offset, shape[k:], value._strides[k:])
