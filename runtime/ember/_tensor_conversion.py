"""Tensor methods that convert: dtype and device moves, copies, new_* factories."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from ember import _dtype as dtypes
from ember import _upper
from ember._tensor_core import TensorCore

if TYPE_CHECKING:
    from ember._tensor import Tensor

__all__ = ["ConversionMethods"]

# Any, not the typed `_upper`: these methods pass `self` (typed as this mixin, not as
# Tensor) to ops; each is a one-line forward whose public signature is typed here.
_up: Any = _upper

# Methods that return `self` keep its type (Tensor) through this variable.
_Self = TypeVar("_Self", bound=TensorCore)


class ConversionMethods(TensorCore):
    """t.to(...), t.float(), t.cpu(), t.clone(), t.new_zeros(...), ..."""

    __slots__ = ()

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        return _up.ops.to(self, *args, **kwargs)

    def cpu(self) -> Tensor:
        return _up.ops.to(self, "cpu")

    def float(self) -> Tensor:
        return _up.ops.to(self, dtypes.float32)

    def double(self) -> Tensor:
        return _up.ops.to(self, dtypes.float64)

    def half(self) -> Tensor:
        return _up.ops.to(self, dtypes.float16)

    def bfloat16(self) -> Tensor:
        return _up.ops.to(self, dtypes.bfloat16)

    def long(self) -> Tensor:
        return _up.ops.to(self, dtypes.int64)

    def int(self) -> Tensor:
        return _up.ops.to(self, dtypes.int32)

    def bool(self) -> Tensor:
        return _up.ops.to(self, dtypes.bool)

    def type_as(self, other: Tensor) -> Tensor:
        return _up.ops.to(self, other.dtype)

    def clone(self, *, memory_format: Any = None) -> Tensor:
        if memory_format is None:
            return _up.ops.clone(self)
        return _up.ops.clone(self, memory_format=memory_format)

    def contiguous(self: _Self) -> _Self:
        return (
            self
            if self._contiguous
            else _up.ops.clone(self, memory_format=_up.ops.contiguous_format)
        )
