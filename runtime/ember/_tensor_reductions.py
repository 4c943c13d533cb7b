"""Tensor methods of the reductions and of linear algebra."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

from ember import _upper
from ember._tensor_core import TensorCore

if TYPE_CHECKING:
    from ember._tensor import Tensor

__all__ = ["ReductionMethods"]

# Any, not the typed `_upper`: these methods pass `self` (typed as this mixin, not as
# Tensor) to ops; each is a one-line forward whose public signature is typed here.
_up: Any = _upper


class ReductionMethods(TensorCore):
    """t.sum(), t.max(dim), t.var(), t.cumsum(dim), t.matmul(u), ..."""

    __slots__ = ()

    # reductions
    def sum(self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None) -> Tensor:
        return _up.ops.sum(self, dim, keepdim, dtype=dtype)

    def mean(self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None) -> Tensor:
        return _up.ops.mean(self, dim, keepdim, dtype=dtype)

    def prod(self, dim: Any = None, keepdim: builtins.bool = False, *, dtype: Any = None) -> Tensor:
        return _up.ops.prod(self, dim, keepdim, dtype=dtype)

    def max(self, dim: Any = None, keepdim: builtins.bool = False) -> Any:
        return _up.ops.max(self, dim, keepdim)

    def min(self, dim: Any = None, keepdim: builtins.bool = False) -> Any:
        return _up.ops.min(self, dim, keepdim)

    def amax(self, dim: Any = (), keepdim: builtins.bool = False) -> Tensor:
        return _up.ops.amax(self, dim, keepdim)

    def amin(self, dim: Any = (), keepdim: builtins.bool = False) -> Tensor:
        return _up.ops.amin(self, dim, keepdim)

    def argmax(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return _up.ops.argmax(self, dim, keepdim)

    def argmin(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return _up.ops.argmin(self, dim, keepdim)

    def var(
        self,
        dim: Any = None,
        *,
        correction: Any = 1,
        keepdim: builtins.bool = False,
        unbiased: builtins.bool | None = None,
    ) -> Tensor:
        return _up.ops.var(self, dim, correction=correction, keepdim=keepdim, unbiased=unbiased)

    def std(
        self,
        dim: Any = None,
        *,
        correction: Any = 1,
        keepdim: builtins.bool = False,
        unbiased: builtins.bool | None = None,
    ) -> Tensor:
        return _up.ops.std(self, dim, correction=correction, keepdim=keepdim, unbiased=unbiased)

    def all(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return _up.ops.all(self, dim, keepdim)

    def any(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return _up.ops.any(self, dim, keepdim)

    def logsumexp(self, dim: Any, keepdim: builtins.bool = False) -> Tensor:
        return _up.ops.logsumexp(self, dim, keepdim)

    def cumsum(self, dim: int, *, dtype: Any = None) -> Tensor:
        return _up.ops.cumsum(self, dim, dtype=dtype)

    # linear algebra
    def matmul(self, other: Tensor) -> Tensor:
        return _up.ops.matmul(self, other)

    def mm(self, other: Tensor) -> Tensor:
        return _up.ops.mm(self, other)

    def bmm(self, other: Tensor) -> Tensor:
        return _up.ops.bmm(self, other)
