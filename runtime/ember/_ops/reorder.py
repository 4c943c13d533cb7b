"""Reordering along dims: flip, fliplr, flipud, roll and rot90 (copies, as in PyTorch).

Ember views cannot have negative strides, so flips gather with a reversed index; a roll
is the cat of two narrows per rolled dim."""

from __future__ import annotations

from collections.abc import Sequence

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import indexing
from ember._ops import shape as shape_ops
from ember._ops._meta import wrap_dim, wrap_dims
from ember._ops.creation import arange
from ember._tensor import Tensor

__all__ = ["flip", "fliplr", "flipud", "roll", "rot90"]


def _dim_tuple(dims: int | Sequence[int]) -> tuple[int, ...]:
    return (dims,) if isinstance(dims, int) else tuple(dims)


def flip(input: Tensor, dims: int | Sequence[int]) -> Tensor:
    """A copy with the order of elements along each of `dims` reversed."""
    wrapped = wrap_dims(_dim_tuple(dims), len(input._shape), "flip")
    out = input
    for d in wrapped:
        n = out._shape[d]
        if n > 1:
            reverse = arange(n - 1, -1, -1, dtype=_dtype.int64, device=input._device)
            out = indexing.index_select(out, d, reverse)
    return conv.clone(input) if out is input else out


def fliplr(input: Tensor) -> Tensor:
    """flip along dim 1 (the columns of a matrix)."""
    if len(input._shape) < 2:
        raise RuntimeError("fliplr: Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input: Tensor) -> Tensor:
    """flip along dim 0 (the rows of a matrix)."""
    if len(input._shape) < 1:
        raise RuntimeError("flipud: Input must be >= 1-d.")
    return flip(input, 0)


def roll(
    input: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None
) -> Tensor:
    """Elements shifted cyclically by `shifts` along `dims` (the flattened tensor if None)."""
    shift_tuple = _dim_tuple(shifts)
    if dims is None:
        if len(shift_tuple) != 1:
            raise RuntimeError(
                f"roll: shifts must be one int when dims is not given, got {list(shift_tuple)}"
            )
        flat = roll(shape_ops.reshape(input, -1), shift_tuple, 0)
        return shape_ops.view(flat, *input._shape)
    dim_tuple = _dim_tuple(dims)
    if len(shift_tuple) != len(dim_tuple):
        raise RuntimeError(
            f"roll: shifts and dimensions must align. shifts: {len(shift_tuple)}, "
            f"dims:{len(dim_tuple)}"
        )
    out = input
    for shift, dim in zip(shift_tuple, dim_tuple, strict=True):
        d = wrap_dim(dim, len(input._shape), "roll")
        n = out._shape[d] if out._shape else 1
        s = shift % n if n else 0
        if s and out._shape:
            tail = shape_ops.narrow(out, d, n - s, s)
            out = shape_ops.cat([tail, shape_ops.narrow(out, d, 0, n - s)], d)
    return conv.clone(input) if out is input else out


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """Rotation by 90 degrees k times in the plane of `dims`, from dims[0] towards dims[1]."""
    dims = tuple(dims)
    ndim = len(input._shape)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    d0, d1 = wrap_dim(dims[0], ndim, "rot90"), wrap_dim(dims[1], ndim, "rot90")
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
        )
    turns = k % 4
    if turns == 1:
        return shape_ops.transpose(flip(input, d1), d0, d1)
    if turns == 2:
        return flip(input, (d0, d1))
    if turns == 3:
        return shape_ops.transpose(flip(input, d0), d0, d1)
    return conv.clone(input)
