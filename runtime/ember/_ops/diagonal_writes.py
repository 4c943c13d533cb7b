"""Writing diagonals and slices: diagonal_scatter, select_scatter (out of place, through
`where` so that both operands get gradients) and Tensor.fill_diagonal_."""

from __future__ import annotations

from typing import Any

from ember import _dtype
from ember._ops import elementwise as ew
from ember._ops import indexing, unary
from ember._ops import shape as shape_ops
from ember._ops._meta import wrap_dim
from ember._ops.creation import arange
from ember._ops.triangle import diagonal
from ember._tensor import Tensor

__all__ = ["diagonal_scatter", "select_scatter", "slice_scatter"]


def _positions(n: int, d: int, rank: int, device: Any) -> Tensor:
    """arange(n) shaped to broadcast along dim `d` of a rank-`rank` tensor."""
    shape = [n if i == d else 1 for i in range(rank)]
    return shape_ops.view(arange(n, dtype=_dtype.int64, device=device), *shape)


def _check_src(op: str, src: Tensor, expected: tuple[int, ...]) -> None:
    if tuple(src._shape) != expected:
        raise RuntimeError(
            f"{op}: expected src to have a size equal to the slice of self. src size = "
            f"{list(src._shape)}, slice size = {list(expected)}"
        )


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of `input` with `src` written at `index` along `dim`."""
    rank = len(input._shape)
    d = wrap_dim(dim, rank, "select_scatter")
    n = input._shape[d]
    if not -n <= index < n:
        raise IndexError(
            f"select_scatter(): index {index} out of range for tensor of size "
            f"{list(input._shape)} at dimension {d}"
        )
    _check_src("select_scatter", src, tuple(input._shape[:d] + input._shape[d + 1 :]))
    mask = ew.eq(_positions(n, d, rank, input._device), index % n)
    return unary.where(mask, shape_ops.unsqueeze(src, d), input)


def slice_scatter(
    input: Tensor,
    src: Tensor,
    dim: int = 0,
    start: int | None = None,
    end: int | None = None,
    step: int = 1,
) -> Tensor:
    """A copy of `input` with `src` written at input[start:end:step] along `dim`."""
    rank = len(input._shape)
    d = wrap_dim(dim, rank, "slice_scatter")
    n = input._shape[d]
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    first, stop, _ = slice(start, end, step).indices(n)
    count = len(range(first, stop, step))
    expected = list(input._shape)
    expected[d] = count
    _check_src("slice_scatter", src, tuple(expected))
    if count == 0:
        return unary.where(ew.eq(_positions(n, d, rank, input._device), -1), input, input)
    position = _positions(n, d, rank, input._device)
    offset = ew.sub(position, first)
    mask = ew.logical_and(
        ew.logical_and(ew.ge(offset, 0), ew.lt(position, stop)),
        ew.eq(ew.remainder(offset, step), 0),
    )
    source = ew.minimum(ew.maximum(ew.floor_divide(offset, step), 0), count - 1)
    return unary.where(mask, indexing.index_select(src, d, shape_ops.reshape(source, -1)), input)


def diagonal_scatter(
    input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1
) -> Tensor:
    """A copy of `input` with `src` written on its diagonal(offset, dim1, dim2)."""
    view = diagonal(input, offset, dim1, dim2)
    _check_src("diagonal_scatter", src, tuple(view._shape))
    rank = len(input._shape)
    d1, d2 = wrap_dim(dim1, rank, "diagonal_scatter"), wrap_dim(dim2, rank, "diagonal_scatter")
    rows = _positions(input._shape[d1], d1, rank, input._device)
    cols = _positions(input._shape[d2], d2, rank, input._device)
    mask = ew.eq(ew.sub(cols, rows), offset)
    length = view._shape[-1]
    if length == 0:
        return unary.where(mask, input, input)
    # Element (i, j) of the diagonal is src[..., i] above the main diagonal, [..., j] below.
    along = rows if offset >= 0 else cols
    d = d1 if offset >= 0 else d2
    source = ew.minimum(along, length - 1)
    picked = indexing.index_select(src, -1, shape_ops.reshape(source, -1))
    # picked has the other dims, then `d`; a size-1 dim for the other diagonal dim, then
    # every dim moves to its place in `input`.
    others = [i for i in range(rank) if i not in (d1, d2)]
    order = [*others, d, d2 if d == d1 else d1]
    spread = shape_ops.permute(shape_ops.unsqueeze(picked, -1), _inverse(order))
    return unary.where(mask, spread, input)


def _inverse(order: list[int]) -> list[int]:
    inverse = [0] * len(order)
    for position, d in enumerate(order):
        inverse[d] = position
    return inverse


def fill_diagonal_(input: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Tensor.fill_diagonal_: the main diagonal (every index equal) set to `fill_value`;
    a tall matrix with `wrap` restarts the diagonal every cols + 1 rows, as in NumPy."""
    rank = len(input._shape)
    if rank < 2:
        raise RuntimeError("dimensions must larger than 1")
    if rank > 2 and len(set(input._shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    rows, cols = input._shape[0], input._shape[1]
    row = _positions(rows, 0, rank, input._device)
    mask = None
    for d in range(1, rank):
        position = _positions(input._shape[d], d, rank, input._device)
        if rank == 2 and wrap and rows > cols:
            # NumPy's wrap: the flat positions k * (cols + 1) of the row-major matrix.
            flat = ew.add(ew.mul(row, cols), position)
            equal = ew.eq(ew.remainder(flat, cols + 1), 0)
        else:
            equal = ew.eq(row, position)
        mask = equal if mask is None else ew.logical_and(mask, equal)
    assert mask is not None
    return indexing.masked_fill_(input, mask, fill_value)
