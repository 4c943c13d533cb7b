"""Tensor operators: indexing, arithmetic, bitwise and comparison dunders."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from ember import _upper
from ember._tensor_core import TensorCore

if TYPE_CHECKING:
    from ember._tensor import Tensor

__all__ = ["ArithmeticMethods"]

# Any, not the typed `_upper`: these methods pass `self` (typed as this mixin, not as
# Tensor) to ops; each is a one-line forward whose public signature is typed here.
_up: Any = _upper

# Methods that return `self` keep its type (Tensor) through this variable.
_Self = TypeVar("_Self", bound=TensorCore)


class ArithmeticMethods(TensorCore):
    """t[i], t + u, t @ u, t == u, ... (each one op of ember._ops)."""

    __slots__ = ()

    def __getitem__(self, index: Any) -> Tensor:
        return _up.ops.getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        _up.ops.setitem(self, index, value)

    # arithmetic operators
    def __add__(self, other: Any) -> Tensor:
        return _up.ops.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _up.ops.add(other, self)

    def __iadd__(self, other: Any) -> Tensor:
        return _up.ops.add_(self, other)

    def __sub__(self, other: Any) -> Tensor:
        return _up.ops.sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _up.ops.sub(other, self)

    def __isub__(self, other: Any) -> Tensor:
        return _up.ops.sub_(self, other)

    def __mul__(self, other: Any) -> Tensor:
        return _up.ops.mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _up.ops.mul(other, self)

    def __imul__(self, other: Any) -> Tensor:
        return _up.ops.mul_(self, other)

    def __truediv__(self, other: Any) -> Tensor:
        return _up.ops.div(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _up.ops.div(other, self)

    def __itruediv__(self, other: Any) -> Tensor:
        return _up.ops.div_(self, other)

    def __floordiv__(self, other: Any) -> Tensor:
        return _up.ops.floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _up.ops.floor_divide(other, self)

    def __mod__(self, other: Any) -> Tensor:
        return _up.ops.remainder(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return _up.ops.remainder(other, self)

    def __pow__(self, other: Any) -> Tensor:
        return _up.ops.pow(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return _up.ops.pow(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return _up.ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _up.ops.matmul(other, self)

    def __neg__(self) -> Tensor:
        return _up.ops.neg(self)

    def __pos__(self: _Self) -> _Self:
        return self

    def __abs__(self) -> Tensor:
        return _up.ops.abs(self)

    def __invert__(self) -> Tensor:
        return _up.ops.bitwise_not(self)

    def __and__(self, other: Any) -> Tensor:
        return _up.ops.bitwise_and(self, other)

    def __rand__(self, other: Any) -> Tensor:
        return _up.ops.bitwise_and(other, self)

    def __or__(self, other: Any) -> Tensor:
        return _up.ops.bitwise_or(self, other)

    def __ror__(self, other: Any) -> Tensor:
        return _up.ops.bitwise_or(other, self)

    def __xor__(self, other: Any) -> Tensor:
        return _up.ops.bitwise_xor(self, other)

    def __rxor__(self, other: Any) -> Tensor:
        return _up.ops.bitwise_xor(other, self)

    # Beside __eq__: a class that defines __eq__ alone gets __hash__ = None.
    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _up.ops.eq(self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _up.ops.ne(self, other)

    def __lt__(self, other: Any) -> Tensor:
        return _up.ops.lt(self, other)

    def __le__(self, other: Any) -> Tensor:
        return _up.ops.le(self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _up.ops.gt(self, other)

    def __ge__(self, other: Any) -> Tensor:
        return _up.ops.ge(self, other)
