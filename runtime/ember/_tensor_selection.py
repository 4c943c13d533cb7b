"""Tensor methods of order statistics, uniqueness, searching, counting and indexed writes:
t.median(), t.quantile(q), t.unique(), t.bincount(), t.index_add_(...), ..."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

from ember import _upper
from ember._tensor_core import TensorCore

if TYPE_CHECKING:
    from ember._tensor import Tensor

__all__ = ["SelectionMethods"]

# Any, not the typed `_upper`: these methods pass `self` (typed as this mixin, not as
# Tensor) to ops; each is a one-line forward whose public signature is typed here.
_up: Any = _upper


class SelectionMethods(TensorCore):
    """Order statistics, uniqueness, searching, counting and indexed writes as methods."""

    __slots__ = ()

    def median(self, dim: int | None = None, keepdim: builtins.bool = False) -> Any:
        return _up.ops.median(self, dim, keepdim)

    def nanmedian(self, dim: int | None = None, keepdim: builtins.bool = False) -> Any:
        return _up.ops.nanmedian(self, dim, keepdim)

    def mode(self, dim: int = -1, keepdim: builtins.bool = False) -> Any:
        return _up.ops.mode(self, dim, keepdim)

    def quantile(
        self,
        q: Any,
        dim: int | None = None,
        keepdim: builtins.bool = False,
        *,
        interpolation: str = "linear",
    ) -> Tensor:
        return _up.ops.quantile(self, q, dim, keepdim, interpolation=interpolation)

    def nanquantile(
        self,
        q: Any,
        dim: int | None = None,
        keepdim: builtins.bool = False,
        *,
        interpolation: str = "linear",
    ) -> Tensor:
        return _up.ops.nanquantile(self, q, dim, keepdim, interpolation=interpolation)

    def unique(
        self,
        sorted: builtins.bool = True,
        return_inverse: builtins.bool = False,
        return_counts: builtins.bool = False,
        dim: int | None = None,
    ) -> Any:
        return _up.ops.unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(
        self,
        return_inverse: builtins.bool = False,
        return_counts: builtins.bool = False,
        dim: int | None = None,
    ) -> Any:
        return _up.ops.unique_consecutive(self, return_inverse, return_counts, dim)

    def bincount(self, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
        return _up.ops.bincount(self, weights, minlength)

    def histc(self, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
        return _up.ops.histc(self, bins, min, max)

    def histogram(
        self,
        bins: Any = 100,
        *,
        range: Any = None,
        weight: Tensor | None = None,
        density: builtins.bool = False,
    ) -> Any:
        return _up.ops.histogram(self, bins, range=range, weight=weight, density=density)

    def count_nonzero(self, dim: Any = None) -> Tensor:
        return _up.ops.count_nonzero(self, dim)

    def argwhere(self) -> Tensor:
        return _up.ops.argwhere(self)

    def nonzero_static(self, *, size: int, fill_value: int = -1) -> Tensor:
        return _up.ops.nonzero_static(self, size=size, fill_value=fill_value)

    def nansum(
        self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None
    ) -> Tensor:
        return _up.ops.nansum(self, dim, keepdim, dtype=dtype)

    def nanmean(
        self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None
    ) -> Tensor:
        return _up.ops.nanmean(self, dim, keepdim, dtype=dtype)

    def aminmax(self, *, dim: int | None = None, keepdim: builtins.bool = False) -> Any:
        return _up.ops.aminmax(self, dim=dim, keepdim=keepdim)

    def masked_select(self, mask: Tensor) -> Tensor:
        return _up.ops.masked_select(self, mask)

    def index_put_(self, indices: Any, values: Tensor, accumulate: builtins.bool = False) -> Tensor:
        return _up.ops.index_put_(self, indices, values, accumulate)

    def index_put(self, indices: Any, values: Tensor, accumulate: builtins.bool = False) -> Tensor:
        return _up.ops.index_put(self, indices, values, accumulate)

    def index_add_(self, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
        return _up.ops.index_writes.index_add_(self, dim, index, source, alpha=alpha)

    def index_add(self, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
        return _up.ops.index_add(self, dim, index, source, alpha=alpha)

    def index_copy_(self, dim: int, index: Tensor, source: Tensor) -> Tensor:
        return _up.ops.index_writes.index_copy_(self, dim, index, source)

    def index_copy(self, dim: int, index: Tensor, source: Tensor) -> Tensor:
        return _up.ops.index_copy(self, dim, index, source)

    def index_fill_(self, dim: int, index: Tensor, value: Any) -> Tensor:
        return _up.ops.index_writes.index_fill_(self, dim, index, value)

    def index_fill(self, dim: int, index: Tensor, value: Any) -> Tensor:
        return _up.ops.index_fill(self, dim, index, value)

    def put_(self, index: Tensor, source: Tensor, accumulate: builtins.bool = False) -> Tensor:
        return _up.ops.index_writes.put_(self, index, source, accumulate)

    def put(self, index: Tensor, source: Tensor, accumulate: builtins.bool = False) -> Tensor:
        return _up.ops.put(self, index, source, accumulate)

    def masked_scatter_(self, mask: Tensor, source: Tensor) -> Tensor:
        return _up.ops.index_writes.masked_scatter_(self, mask, source)

    def masked_scatter(self, mask: Tensor, source: Tensor) -> Tensor:
        return _up.ops.masked_scatter(self, mask, source)

    def scatter_reduce(
        self,
        dim: int,
        index: Tensor,
        src: Tensor,
        reduce: str,
        *,
        include_self: builtins.bool = True,
    ) -> Tensor:
        return _up.ops.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)

    def scatter_reduce_(
        self,
        dim: int,
        index: Tensor,
        src: Tensor,
        reduce: str,
        *,
        include_self: builtins.bool = True,
    ) -> Tensor:
        return _up.ops.scatter_reductions.scatter_reduce_(
            self, dim, index, src, reduce, include_self=include_self
        )

    def index_reduce(
        self,
        dim: int,
        index: Tensor,
        source: Tensor,
        reduce: str,
        *,
        include_self: builtins.bool = True,
    ) -> Tensor:
        return _up.ops.index_reduce(self, dim, index, source, reduce, include_self=include_self)

    def index_reduce_(
        self,
        dim: int,
        index: Tensor,
        source: Tensor,
        reduce: str,
        *,
        include_self: builtins.bool = True,
    ) -> Tensor:
        return _up.ops.scatter_reductions.index_reduce_(
            self, dim, index, source, reduce, include_self=include_self
        )

    def renorm(self, p: float, dim: int, maxnorm: float) -> Tensor:
        return _up.ops.renorm(self, p, dim, maxnorm)

    def renorm_(self, p: float, dim: int, maxnorm: float) -> Tensor:
        return _up.ops.distances.renorm_(self, p, dim, maxnorm)

    def cov(
        self, *, correction: int = 1, fweights: Tensor | None = None, aweights: Tensor | None = None
    ) -> Tensor:
        return _up.ops.cov(self, correction=correction, fweights=fweights, aweights=aweights)

    def corrcoef(self) -> Tensor:
        return _up.ops.corrcoef(self)
