"""Tensor methods of the special functions: t.lgamma(), t.digamma_(), t.polygamma(n), ..."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ember import _upper
from ember._tensor_core import TensorCore

if TYPE_CHECKING:
    from ember._tensor import Tensor

__all__ = ["SpecialMethods"]

# Any, not the typed `_upper`: these methods pass `self` (typed as this mixin) to ops.
_up: Any = _upper


class SpecialMethods(TensorCore):
    """t.lgamma(), t.digamma(), t.polygamma(n), t.mvlgamma(p), t.erfinv(), t.erfc(), t.i0(),
    t.igamma(x), t.igammac(x), and their in-place forms."""

    __slots__ = ()

    def lgamma(self) -> Tensor:
        return _up.ops.lgamma(self)

    def lgamma_(self) -> Tensor:
        return _up.ops.lgamma_(self)

    def digamma(self) -> Tensor:
        return _up.ops.digamma(self)

    def digamma_(self) -> Tensor:
        return _up.ops.digamma_(self)

    def polygamma(self, n: int) -> Tensor:
        return _up.ops.polygamma(n, self)

    def polygamma_(self, n: int) -> Tensor:
        return _up.ops.polygamma_(self, n)

    def mvlgamma(self, p: int) -> Tensor:
        return _up.ops.mvlgamma(self, p)

    def mvlgamma_(self, p: int) -> Tensor:
        return _up.ops.mvlgamma_(self, p)

    def erfinv(self) -> Tensor:
        return _up.ops.erfinv(self)

    def erfinv_(self) -> Tensor:
        return _up.ops.erfinv_(self)

    def erfc(self) -> Tensor:
        return _up.ops.erfc(self)

    def erfc_(self) -> Tensor:
        return _up.ops.erfc_(self)

    def i0(self) -> Tensor:
        return _up.ops.i0(self)

    def i0_(self) -> Tensor:
        return _up.ops.i0_(self)

    def igamma(self, other: Any) -> Tensor:
        return _up.ops.igamma(self, other)

    def igamma_(self, other: Any) -> Tensor:
        return _up.ops.igamma_(self, other)

    def igammac(self, other: Any) -> Tensor:
        return _up.ops.igammac(self, other)

    def igammac_(self, other: Any) -> Tensor:
        return _up.ops.igammac_(self, other)
