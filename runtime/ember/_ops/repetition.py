"""Repetition and grids: repeat, tile, repeat_interleave and meshgrid, as expands of views
reshaped into copies (or one index_select for tensor repeats)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import indexing, reduction
from ember._ops import shape as shape_ops
from ember._ops._meta import wrap_dim
from ember._ops._view_geometry import int_tuple
from ember._ops.creation import ones, zeros
from ember._tensor import Tensor

__all__ = ["meshgrid", "repeat", "repeat_interleave", "tile"]


def _sizes(op: str, sizes: tuple[Any, ...]) -> tuple[int, ...]:
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        sizes = tuple(sizes[0])
    return int_tuple(op, sizes)


def repeat(input: Tensor, *sizes: Any) -> Tensor:
    """Tensor.repeat: the tensor tiled sizes[i] times along dim i (new leading dims allowed)."""
    counts = _sizes("repeat", sizes)
    if len(counts) < len(input._shape):
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    if any(c < 0 for c in counts):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(counts)}")
    shape = (1,) * (len(counts) - len(input._shape)) + tuple(input._shape)
    interleaved: list[int] = []
    for n in shape:
        interleaved += [1, n]
    grown: list[int] = []
    for c, n in zip(counts, shape, strict=True):
        grown += [c, n]
    expanded = shape_ops.expand(shape_ops.reshape(input, *interleaved), *grown)
    return shape_ops.reshape(expanded, *[c * n for c, n in zip(counts, shape, strict=True)])


def tile(input: Tensor, dims: Sequence[int]) -> Tensor:
    """repeat, with `dims` padded by leading 1s when shorter than the tensor's rank."""
    counts = int_tuple("tile", tuple(dims))
    counts = (1,) * (len(input._shape) - len(counts)) + counts
    return repeat(input, counts)


def _repeat_indices(repeats: Tensor, output_size: int | None) -> Tensor:
    """repeat_interleave of arange(len(repeats)): for each output slot, its source index."""
    if len(repeats._shape) != 1:
        raise RuntimeError("repeat_interleave: repeats must be 0-dim or 1-dim tensor")
    if repeats._dtype not in (_dtype.int32, _dtype.int64):
        raise RuntimeError("repeat_interleave: repeats has to be Long or Int tensor")
    counts = conv.to(repeats, _dtype.int64)
    n = counts._shape[0]
    if n and int(reduction.amin(counts).item()) < 0:
        raise RuntimeError("repeats can not be negative")
    ends = reduction.cumsum(counts, 0)
    total = int(reduction.sum(counts).item()) if output_size is None else output_size
    if n == 0 or total == 0:
        return zeros((total,), dtype=_dtype.int64, device=repeats._device)
    # One mark at each source's end: the running count of marks is the source index.
    marks = zeros((total + 1,), dtype=_dtype.int64, device=repeats._device)
    ends = shape_ops.narrow(ends, 0, 0, n - 1)
    marks = indexing.scatter_add(
        marks, 0, ends, ones((n - 1,), dtype=_dtype.int64, device=repeats._device)
    )
    return reduction.cumsum(shape_ops.narrow(marks, 0, 0, total), 0)


def repeat_interleave(
    input: Tensor,
    repeats: Tensor | int | None = None,
    dim: int | None = None,
    *,
    output_size: int | None = None,
) -> Tensor:
    """Each element (or slice along `dim`) repeated `repeats` times in place; flattened if
    dim is None. With only a tensor of repeats, the indices repeat_interleave would use."""
    if repeats is None:
        return _repeat_indices(input, output_size)
    t = shape_ops.reshape(input, -1) if dim is None else input
    d = 0 if dim is None else wrap_dim(dim, len(t._shape), "repeat_interleave")
    if not t._shape:
        t = shape_ops.reshape(t, 1)
    n = t._shape[d]
    if isinstance(repeats, Tensor) and repeats.numel() == 1 and len(repeats._shape) <= 1:
        repeats = int(repeats.item())
    if isinstance(repeats, int):
        if repeats < 0:
            raise RuntimeError("repeats can not be negative")
        shape = list(t._shape)
        grown = [*shape[: d + 1], repeats, *shape[d + 1 :]]
        expanded = shape_ops.expand(shape_ops.unsqueeze(t, d + 1), *grown)
        merged = [*shape[:d], n * repeats, *shape[d + 1 :]]
        return shape_ops.reshape(expanded, *merged)
    if repeats._shape != (n,):
        raise RuntimeError(
            f"repeats must have the same size as input along dim, but got repeats.size(0) = "
            f"{repeats._shape[0] if repeats._shape else 1} and input.size({d}) = {n}"
        )
    return indexing.index_select(t, d, _repeat_indices(repeats, output_size))


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 1-d tensors: 'ij' (matrix, the default) or 'xy' (Cartesian)."""
    if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        tensors = tuple(tensors[0])
    mode = "ij" if indexing is None else indexing
    if mode not in ("ij", "xy"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {mode}'
        )
    for t in tensors:
        if len(t._shape) > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t.shape}"
            )
    flat = [shape_ops.reshape(t, -1) for t in tensors]
    swap = mode == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = [t._shape[0] for t in flat]
    grids = []
    for i, t in enumerate(flat):
        placed = shape_ops.view(t, *[n if j == i else 1 for j, n in enumerate(shape)])
        grids.append(shape_ops.expand(placed, *shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)
