"""Tensor methods of views, shape changes, gather/scatter indexing and random fills."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ember import _upper
from ember._tensor_core import TensorCore

if TYPE_CHECKING:
    from ember._tensor import Tensor

__all__ = ["ShapeMethods"]

# Any, not the typed `_upper`: these methods pass `self` (typed as this mixin, not as
# Tensor) to ops; each is a one-line forward whose public signature is typed here.
_up: Any = _upper


class ShapeMethods(TensorCore):
    """t.view(...), t.permute(...), t.gather(...), t.uniform_(), ..."""

    __slots__ = ()

    # views and shape
    def view(self, *shape: Any) -> Tensor:
        return _up.ops.view(self, *shape)

    def view_as(self, other: Tensor) -> Tensor:
        return _up.ops.view(self, other.shape)

    def reshape(self, *shape: Any) -> Tensor:
        return _up.ops.reshape(self, *shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return _up.ops.reshape(self, other.shape)

    def permute(self, *dims: Any) -> Tensor:
        return _up.ops.permute(self, *dims)

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        return _up.ops.transpose(self, dim0, dim1)

    def t(self) -> Tensor:
        return _up.ops.t(self)

    @property
    def T(self) -> Tensor:
        return _up.ops.permute(self, *reversed(range(len(self._shape))))

    @property
    def mT(self) -> Tensor:
        return _up.ops.transpose(self, -2, -1)

    def select(self, dim: int, index: int) -> Tensor:
        return _up.ops.select(self, dim, index)

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        return _up.ops.narrow(self, dim, start, length)

    def expand(self, *sizes: Any) -> Tensor:
        return _up.ops.expand(self, *sizes)

    def expand_as(self, other: Tensor) -> Tensor:
        return _up.ops.expand(self, other.shape)

    def squeeze(self, dim: Any = None) -> Tensor:
        return _up.ops.squeeze(self, dim)

    def unsqueeze(self, dim: int) -> Tensor:
        return _up.ops.unsqueeze(self, dim)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        return _up.ops.flatten(self, start_dim, end_dim)

    def unflatten(self, dim: int, sizes: Sequence[int]) -> Tensor:
        return _up.ops.unflatten(self, dim, sizes)

    def split(self, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
        return _up.ops.split(self, split_size_or_sections, dim)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        return _up.ops.chunk(self, chunks, dim)

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        return _up.ops.unbind(self, dim)

    def as_strided(
        self, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
    ) -> Tensor:
        return _up.ops.as_strided(self, size, stride, storage_offset)

    # indexing
    def gather(self, dim: int, index: Tensor) -> Tensor:
        return _up.ops.gather(self, dim, index)

    def scatter(self, dim: int, index: Tensor, src: Any) -> Tensor:
        return _up.ops.scatter(self, dim, index, src)

    def scatter_(self, dim: int, index: Tensor, src: Any) -> Tensor:
        return _up.ops.scatter_(self, dim, index, src)

    def scatter_add(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return _up.ops.scatter_add(self, dim, index, src)

    def scatter_add_(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return _up.ops.scatter_add_(self, dim, index, src)

    def index_select(self, dim: int, index: Tensor) -> Tensor:
        return _up.ops.index_select(self, dim, index)

    def nonzero(self, *, as_tuple: builtins.bool = False) -> Any:
        return _up.ops.nonzero(self, as_tuple=True) if as_tuple else _up.ops.nonzero(self)

    def movedim(self, source: Any, destination: Any) -> Tensor:
        return _up.ops.movedim(self, source, destination)

    def take(self, index: Tensor) -> Tensor:
        return _up.ops.take(self, index)

    # random, in place
    def uniform_(self, from_: float = 0.0, to: float = 1.0, *, generator: Any = None) -> Tensor:
        return _up.ops.uniform_(self, from_, to, generator=generator)

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
        return _up.ops.normal_(self, mean, std, generator=generator)

    def random_(self, from_: int = 0, to: int | None = None, *, generator: Any = None) -> Tensor:
        return _up.ops.random_(self, from_, to, generator=generator)
