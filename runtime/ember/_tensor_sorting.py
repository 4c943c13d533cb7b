"""Tensor methods of sorting: t.sort(), t.argsort(), t.msort(), t.topk(k), t.kthvalue(k)."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

from ember import _upper
from ember._tensor_core import TensorCore

if TYPE_CHECKING:
    from ember._tensor import Tensor

__all__ = ["SortingMethods"]

# Any, not the typed `_upper`: these methods pass `self` (typed as this mixin, not as
# Tensor) to ops; each is a one-line forward whose public signature is typed here.
_up: Any = _upper


class SortingMethods(TensorCore):
    """t.sort(), t.argsort(), t.msort(), t.topk(k), t.kthvalue(k)."""

    __slots__ = ()

    def sort(
        self, dim: int = -1, descending: builtins.bool = False, *, stable: builtins.bool = False
    ) -> Any:
        return _up.ops.sort(self, dim, descending, stable=stable)

    def argsort(
        self, dim: int = -1, descending: builtins.bool = False, *, stable: builtins.bool = False
    ) -> Tensor:
        return _up.ops.argsort(self, dim, descending, stable=stable)

    def msort(self) -> Tensor:
        return _up.ops.msort(self)

    def topk(
        self, k: int, dim: int = -1, largest: builtins.bool = True, sorted: builtins.bool = True
    ) -> Any:
        return _up.ops.topk(self, k, dim, largest, sorted)

    def kthvalue(self, k: int, dim: int = -1, keepdim: builtins.bool = False) -> Any:
        return _up.ops.kthvalue(self, k, dim, keepdim)
