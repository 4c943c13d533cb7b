"""Tensor methods of the structure family: triangles, diagonals, flips, repeats, scans,
the NumPy-style split/axis names and diff."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ember import _upper
from ember._tensor_core import TensorCore

if TYPE_CHECKING:
    from ember._tensor import Tensor

__all__ = ["StructureMethods"]

# Any, not the typed `_upper`: each method is a one-line forward passing `self`.
_up: Any = _upper


class StructureMethods(TensorCore):
    """t.tril(), t.diagonal(), t.flip(dims), t.repeat(...), t.cummax(dim), t.diff(), ..."""

    __slots__ = ()

    # triangles and diagonals
    def tril(self, diagonal: int = 0) -> Tensor:
        return _up.ops.tril(self, diagonal)

    def triu(self, diagonal: int = 0) -> Tensor:
        return _up.ops.triu(self, diagonal)

    def tril_(self, diagonal: int = 0) -> Tensor:
        return _up.ops.tril_(self, diagonal)

    def triu_(self, diagonal: int = 0) -> Tensor:
        return _up.ops.triu_(self, diagonal)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        return _up.ops.diagonal(self, offset, dim1, dim2)

    def diag(self, diagonal: int = 0) -> Tensor:
        return _up.ops.diag(self, diagonal)

    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
        return _up.ops.diag_embed(self, offset, dim1, dim2)

    def diagflat(self, offset: int = 0) -> Tensor:
        return _up.ops.diagflat(self, offset)

    def trace(self) -> Tensor:
        return _up.ops.trace(self)

    # reordering and repetition
    def flip(self, *dims: Any) -> Tensor:
        return _up.ops.flip(self, dims[0] if len(dims) == 1 else dims)

    def fliplr(self) -> Tensor:
        return _up.ops.fliplr(self)

    def flipud(self) -> Tensor:
        return _up.ops.flipud(self)

    def roll(self, shifts: Any, dims: Any = None) -> Tensor:
        return _up.ops.roll(self, shifts, dims)

    def rot90(self, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
        return _up.ops.rot90(self, k, dims)

    def repeat(self, *sizes: Any) -> Tensor:
        return _up.ops.repeat(self, *sizes)

    def repeat_interleave(
        self, repeats: Any, dim: int | None = None, *, output_size: int | None = None
    ) -> Tensor:
        return _up.ops.repeat_interleave(self, repeats, dim, output_size=output_size)

    def tile(self, *dims: Any) -> Tensor:
        return _up.ops.tile(
            self, dims[0] if len(dims) == 1 and not isinstance(dims[0], int) else dims
        )

    # scans
    def cumprod(self, dim: int, *, dtype: Any = None) -> Tensor:
        return _up.ops.cumprod(self, dim, dtype=dtype)

    def cumprod_(self, dim: int, *, dtype: Any = None) -> Tensor:
        return _up.ops.cumprod_(self, dim, dtype=dtype)

    def cummax(self, dim: int) -> Any:
        return _up.ops.cummax(self, dim)

    def cummin(self, dim: int) -> Any:
        return _up.ops.cummin(self, dim)

    def logcumsumexp(self, dim: int) -> Tensor:
        return _up.ops.logcumsumexp(self, dim)

    def diff(self, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Tensor:
        return _up.ops.diff(self, n, dim, prepend, append)

    def cumsum_(self, dim: int, *, dtype: Any = None) -> Tensor:
        return _up.ops.cumsum_(self, dim, dtype=dtype)

    def diagonal_scatter(
        self, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1
    ) -> Tensor:
        return _up.ops.diagonal_scatter(self, src, offset, dim1, dim2)

    def select_scatter(self, src: Tensor, dim: int, index: int) -> Tensor:
        return _up.ops.select_scatter(self, src, dim, index)

    def slice_scatter(
        self, src: Tensor, dim: int = 0, start: Any = None, end: Any = None, step: int = 1
    ) -> Tensor:
        return _up.ops.slice_scatter(self, src, dim, start, end, step)

    def fill_diagonal_(self, fill_value: Any, wrap: builtins.bool = False) -> Tensor:
        return _up.ops.fill_diagonal_(self, fill_value, wrap)

    # blocks and windows
    def kron(self, other: Tensor) -> Tensor:
        return _up.ops.kron(self, other)

    def unfold(self, dimension: int, size: int, step: int) -> Tensor:
        return _up.ops.unfold(self, dimension, size, step)

    def split_with_sizes(self, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
        return _up.ops.split_with_sizes(self, split_sizes, dim)

    # NumPy-style names
    def swapaxes(self, axis0: int, axis1: int) -> Tensor:
        return _up.ops.swapaxes(self, axis0, axis1)

    def swapdims(self, dim0: int, dim1: int) -> Tensor:
        return _up.ops.swapdims(self, dim0, dim1)

    def moveaxis(self, source: Any, destination: Any) -> Tensor:
        return _up.ops.moveaxis(self, source, destination)

    def ravel(self) -> Tensor:
        return _up.ops.ravel(self)

    def broadcast_to(self, size: Sequence[int]) -> Tensor:
        return _up.ops.broadcast_to(self, size)

    def take_along_dim(self, indices: Tensor, dim: int | None = None) -> Tensor:
        return _up.ops.take_along_dim(self, indices, dim)

    def tensor_split(self, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
        return _up.ops.tensor_split(self, indices_or_sections, dim)

    def hsplit(self, indices_or_sections: Any) -> tuple[Tensor, ...]:
        return _up.ops.hsplit(self, indices_or_sections)

    def vsplit(self, indices_or_sections: Any) -> tuple[Tensor, ...]:
        return _up.ops.vsplit(self, indices_or_sections)

    def dsplit(self, indices_or_sections: Any) -> tuple[Tensor, ...]:
        return _up.ops.dsplit(self, indices_or_sections)
