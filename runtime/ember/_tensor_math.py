"""Tensor methods of the elementwise ops (binary, unary, in place) and copies."""

from __future__ import annotations

import builtins
import sys
from typing import TYPE_CHECKING, Any

from ember import _upper
from ember._tensor_core import TensorCore

if TYPE_CHECKING:
    from ember._tensor import Tensor

__all__ = ["MathMethods"]

# Any, not the typed `_upper`: these methods pass `self` (typed as this mixin, not as
# Tensor) to ops; each is a one-line forward whose public signature is typed here.
_up: Any = _upper


def _functional() -> Any:
    """ember.nn.functional, imported with ember (after this module), read at call time."""
    return sys.modules["ember.nn.functional"]


class MathMethods(TensorCore):
    """t.add(u), t.exp(), t.relu_(), t.copy_(u), t.where(...), ..."""

    __slots__ = ()

    # elementwise
    def add(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _up.ops.add(self, other, alpha=alpha)

    def add_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _up.ops.add_(self, other, alpha=alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _up.ops.sub(self, other, alpha=alpha)

    def sub_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _up.ops.sub_(self, other, alpha=alpha)

    def mul(self, other: Any) -> Tensor:
        return _up.ops.mul(self, other)

    def mul_(self, other: Any) -> Tensor:
        return _up.ops.mul_(self, other)

    def div(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        return _up.ops.div(self, other, rounding_mode=rounding_mode)

    def div_(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        return _up.ops.div_(self, other, rounding_mode=rounding_mode)

    def floor_divide(self, other: Any) -> Tensor:
        return _up.ops.floor_divide(self, other)

    def remainder(self, other: Any) -> Tensor:
        return _up.ops.remainder(self, other)

    def fmod(self, other: Any) -> Tensor:
        return _up.ops.fmod(self, other)

    def pow(self, exponent: Any) -> Tensor:
        return _up.ops.pow(self, exponent)

    def pow_(self, exponent: Any) -> Tensor:
        return _up.ops.pow_(self, exponent)

    def maximum(self, other: Tensor) -> Tensor:
        return _up.ops.maximum(self, other)

    def minimum(self, other: Tensor) -> Tensor:
        return _up.ops.minimum(self, other)

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:
        return _up.ops.clamp(self, min, max)

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:
        return _up.ops.clamp_(self, min, max)

    clip = clamp
    clip_ = clamp_

    def eq(self, other: Any) -> Tensor:
        return _up.ops.eq(self, other)

    def ne(self, other: Any) -> Tensor:
        return _up.ops.ne(self, other)

    def lt(self, other: Any) -> Tensor:
        return _up.ops.lt(self, other)

    def le(self, other: Any) -> Tensor:
        return _up.ops.le(self, other)

    def gt(self, other: Any) -> Tensor:
        return _up.ops.gt(self, other)

    def ge(self, other: Any) -> Tensor:
        return _up.ops.ge(self, other)

    def logical_and(self, other: Any) -> Tensor:
        return _up.ops.logical_and(self, other)

    def logical_or(self, other: Any) -> Tensor:
        return _up.ops.logical_or(self, other)

    def logical_xor(self, other: Any) -> Tensor:
        return _up.ops.logical_xor(self, other)

    def logical_not(self) -> Tensor:
        return _up.ops.logical_not(self)

    def neg(self) -> Tensor:
        return _up.ops.neg(self)

    def abs(self) -> Tensor:
        return _up.ops.abs(self)

    def sign(self) -> Tensor:
        return _up.ops.sign(self)

    def exp(self) -> Tensor:
        return _up.ops.exp(self)

    def exp_(self) -> Tensor:
        return _up.ops.exp_(self)

    def log(self) -> Tensor:
        return _up.ops.log(self)

    def log1p(self) -> Tensor:
        return _up.ops.log1p(self)

    def expm1(self) -> Tensor:
        return _up.ops.expm1(self)

    def sqrt(self) -> Tensor:
        return _up.ops.sqrt(self)

    def rsqrt(self) -> Tensor:
        return _up.ops.rsqrt(self)

    def sin(self) -> Tensor:
        return _up.ops.sin(self)

    def cos(self) -> Tensor:
        return _up.ops.cos(self)

    def tanh(self) -> Tensor:
        return _up.ops.tanh(self)

    def sigmoid(self) -> Tensor:
        return _up.ops.sigmoid(self)

    def relu(self) -> Tensor:
        return _up.ops.relu(self)

    def relu_(self) -> Tensor:
        return _up.ops.relu_(self)

    # nn.functional forms, looked up at call time (ember.nn is imported with ember itself).
    def softmax(self, dim: int, dtype: Any = None) -> Tensor:
        return _functional().softmax(self, dim, dtype=dtype)

    def log_softmax(self, dim: int, dtype: Any = None) -> Tensor:
        return _functional().log_softmax(self, dim, dtype=dtype)

    def hardshrink(self, lambd: float = 0.5) -> Tensor:
        return _functional().hardshrink(self, lambd)

    def prelu(self, weight: Tensor) -> Tensor:
        return _functional().prelu(self, weight)

    # In-place unary variants: the op written into this tensor (autograd-aware).
    def neg_(self) -> Tensor:
        return _up.ops.neg(self, out=self) if self._autograd is None else self.copy_(self.neg())

    def abs_(self) -> Tensor:
        return _up.ops.abs(self, out=self) if self._autograd is None else self.copy_(self.abs())

    def sqrt_(self) -> Tensor:
        return _up.ops.sqrt(self, out=self) if self._autograd is None else self.copy_(self.sqrt())

    def log_(self) -> Tensor:
        return _up.ops.log(self, out=self) if self._autograd is None else self.copy_(self.log())

    def sigmoid_(self) -> Tensor:
        return (
            _up.ops.sigmoid(self, out=self)
            if self._autograd is None
            else self.copy_(self.sigmoid())
        )

    def tanh_(self) -> Tensor:
        return _up.ops.tanh(self, out=self) if self._autograd is None else self.copy_(self.tanh())

    def floor_(self) -> Tensor:
        return _up.ops.floor(self, out=self) if self._autograd is None else self.copy_(self.floor())

    def ceil_(self) -> Tensor:
        return _up.ops.ceil(self, out=self) if self._autograd is None else self.copy_(self.ceil())

    def round_(self) -> Tensor:
        return _up.ops.round(self, out=self) if self._autograd is None else self.copy_(self.round())

    def trunc_(self) -> Tensor:
        return _up.ops.trunc(self, out=self) if self._autograd is None else self.copy_(self.trunc())

    def erf(self) -> Tensor:
        return _up.ops.erf(self)

    def floor(self) -> Tensor:
        return _up.ops.floor(self)

    def ceil(self) -> Tensor:
        return _up.ops.ceil(self)

    def round(self) -> Tensor:
        return _up.ops.round(self)

    def trunc(self) -> Tensor:
        return _up.ops.trunc(self)

    def reciprocal(self) -> Tensor:
        return _up.ops.reciprocal(self)

    def square(self) -> Tensor:
        return _up.ops.mul(self, self)

    # in-place and copies
    def copy_(self, src: Tensor, non_blocking: builtins.bool = False) -> Tensor:
        return _up.ops.copy_(self, src, non_blocking)

    def fill_(self, value: Any) -> Tensor:
        return _up.ops.fill_(self, value)

    def zero_(self) -> Tensor:
        return _up.ops.fill_(self, 0)

    def masked_fill(self, mask: Tensor, value: Any) -> Tensor:
        return _up.ops.masked_fill(self, mask, value)

    def masked_fill_(self, mask: Tensor, value: Any) -> Tensor:
        return _up.ops.masked_fill_(self, mask, value)

    def where(self, condition: Tensor, other: Any) -> Tensor:
        return _up.ops.where(condition, self, other)
