"""Triangles and diagonals: tril/triu (and their indices), diagonal, diag, diag_embed,
diagflat and trace, composed from masks, index_select and as_strided views."""

from __future__ import annotations

from ember import _dtype
from ember._device import DeviceLike
from ember._ops import conversion as conv
from ember._ops import elementwise as ew
from ember._ops import indexing, reduction
from ember._ops import shape as shape_ops
from ember._ops._meta import wrap_dim
from ember._ops.creation import arange
from ember._tensor import Tensor

__all__ = [
    "diag", "diag_embed", "diagflat", "diagonal", "trace", "tril", "tril_", "tril_indices",
    "triu", "triu_", "triu_indices",
]  # fmt: skip


def _band(rows: int, cols: int, diagonal: int, lower: bool, device: DeviceLike | None) -> Tensor:
    """A (rows, cols) bool mask: True on and below (lower) or above the `diagonal`."""
    row = shape_ops.view(arange(rows, dtype=_dtype.int64, device=device), rows, 1)
    col = shape_ops.view(arange(cols, dtype=_dtype.int64, device=device), 1, cols)
    offset = ew.sub(col, row)
    return ew.le(offset, diagonal) if lower else ew.ge(offset, diagonal)


def _matrix(t: Tensor, op: str) -> None:
    if len(t._shape) < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions")


def _outside(t: Tensor, diagonal: int, lower: bool, op: str) -> Tensor:
    _matrix(t, op)
    rows, cols = t._shape[-2:]
    return ew.logical_xor(_band(rows, cols, diagonal, lower, t._device), True)


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims (on and below `diagonal`); the rest 0."""
    return indexing.masked_fill(input, _outside(input, diagonal, True, "tril"), 0)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims (on and above `diagonal`); the rest 0."""
    return indexing.masked_fill(input, _outside(input, diagonal, False, "triu"), 0)


def tril_(input: Tensor, diagonal: int = 0) -> Tensor:
    return indexing.masked_fill_(input, _outside(input, diagonal, True, "tril_"), 0)


def triu_(input: Tensor, diagonal: int = 0) -> Tensor:
    return indexing.masked_fill_(input, _outside(input, diagonal, False, "triu_"), 0)


def _indices(
    row: int, col: int, offset: int, lower: bool, dtype: _dtype.dtype, device: DeviceLike | None
) -> Tensor:
    if row < 0 or col < 0:
        op = "tril_indices" if lower else "triu_indices"
        raise RuntimeError(f"{op}: row and col must be non-negative, got {row} and {col}")
    mask = _band(row, col, offset, lower, device)
    # nonzero lists positions in row-major order, as PyTorch's indices are.
    return conv.to(shape_ops.t(indexing.nonzero(mask)), dtype)


def tril_indices(
    row: int,
    col: int,
    offset: int = 0,
    *,
    dtype: _dtype.dtype = _dtype.int64,
    device: DeviceLike | None = None,
) -> Tensor:
    """A (2, N) tensor of the row and column indices of the lower triangle of a row x col matrix."""
    return _indices(row, col, offset, True, dtype, device)


def triu_indices(
    row: int,
    col: int,
    offset: int = 0,
    *,
    dtype: _dtype.dtype = _dtype.int64,
    device: DeviceLike | None = None,
) -> Tensor:
    """A (2, N) tensor of the row and column indices of the upper triangle of a row x col matrix."""
    return _indices(row, col, offset, False, dtype, device)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """A view of the diagonal over (dim1, dim2), moved to the last dim."""
    ndim = len(input._shape)
    d1, d2 = wrap_dim(dim1, ndim, "diagonal"), wrap_dim(dim2, ndim, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n1, n2 = input._shape[d1], input._shape[d2]
    s1, s2 = input._strides[d1], input._strides[d2]
    if offset >= 0:
        length, start = max(0, min(n1, n2 - offset)), offset * s2
    else:
        length, start = max(0, min(n1 + offset, n2)), -offset * s1
    keep = [d for d in range(ndim) if d not in (d1, d2)]
    size = [input._shape[d] for d in keep] + [length]
    stride = [input._strides[d] for d in keep] + [s1 + s2]
    storage_offset = input._offset + (start if length else 0)
    return shape_ops.as_strided(input, size, stride, storage_offset)


_diagonal = diagonal


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices over (dim1, dim2) of the output whose `offset` diagonals hold input's last dim."""
    rank = len(input._shape) + 1
    d1, d2 = wrap_dim(dim1, rank, "diag_embed"), wrap_dim(dim2, rank, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    if not input._shape:
        raise RuntimeError("diag_embed: input must have at least 1 dimension")
    n = input._shape[-1]
    m = n + abs(offset)
    row = shape_ops.view(arange(m, dtype=_dtype.int64, device=input._device), m, 1)
    col = shape_ops.view(arange(m, dtype=_dtype.int64, device=input._device), 1, m)
    on_diagonal = ew.eq(ew.sub(col, row), offset)
    # The diagonal element at (i, j) is input[..., i] above the main diagonal, [..., j] below.
    source = shape_ops.expand(row if offset >= 0 else col, m, m)
    source = ew.minimum(source, max(n - 1, 0))
    if n == 0:
        values = shape_ops.expand(shape_ops.unsqueeze(input, -1), *input._shape[:-1], m, m)
    else:
        picked = indexing.index_select(input, -1, shape_ops.reshape(source, -1))
        values = shape_ops.reshape(picked, *input._shape[:-1], m, m)
    out = indexing.masked_fill(values, ew.logical_xor(on_diagonal, True), 0)
    return shape_ops.movedim(out, (-2, -1), (d1, d2))


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A 2-d matrix with the flattened input on its `offset` diagonal."""
    return diag_embed(shape_ops.reshape(input, -1), offset)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-d input as a diagonal matrix; a 2-d input's `diagonal` as a new 1-d tensor."""
    if len(input._shape) == 1:
        return diag_embed(input, diagonal)
    if len(input._shape) == 2:
        return conv.clone(_diagonal(input, diagonal))
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {len(input._shape)}D")


def trace(input: Tensor) -> Tensor:
    """The sum of a 2-d tensor's main diagonal (integers sum in int64)."""
    if len(input._shape) != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {len(input._shape)}")
    return reduction.sum(diagonal(input))
