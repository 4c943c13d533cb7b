"""Tensor methods of the binary elementwise math of `ember._ops.pointwise_binary` and the
in-place comparisons of `ember._ops.predicates`: t.atan2(u), t.lerp_(u, w), t.eq_(u),
t << 2, ..."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ember import _upper
from ember._tensor_core import TensorCore

if TYPE_CHECKING:
    from ember._tensor import Tensor

__all__ = ["PointwiseBinaryMethods"]

# Any, not the typed `_upper`: these methods pass `self` (typed as this mixin, not as
# Tensor) to ops; each is a one-line forward whose public signature is typed here.
_up: Any = _upper


class PointwiseBinaryMethods(TensorCore):
    """t.atan2(u), t.hypot_(u), t.lerp(u, w), t.addcmul_(u, v), t.eq_(u), t << 2, ..."""

    __slots__ = ()

    def atan2(self, other: Any) -> Tensor:
        return _up.ops.atan2(self, other)

    def atan2_(self, other: Any) -> Tensor:
        return _up.ops.atan2_(self, other)

    def arctan2(self, other: Any) -> Tensor:
        return _up.ops.arctan2(self, other)

    def arctan2_(self, other: Any) -> Tensor:
        return _up.ops.arctan2_(self, other)

    def hypot(self, other: Any) -> Tensor:
        return _up.ops.hypot(self, other)

    def hypot_(self, other: Any) -> Tensor:
        return _up.ops.hypot_(self, other)

    def copysign(self, other: Any) -> Tensor:
        return _up.ops.copysign(self, other)

    def copysign_(self, other: Any) -> Tensor:
        return _up.ops.copysign_(self, other)

    def nextafter(self, other: Any) -> Tensor:
        return _up.ops.nextafter(self, other)

    def nextafter_(self, other: Any) -> Tensor:
        return _up.ops.nextafter_(self, other)

    def fmax(self, other: Any) -> Tensor:
        return _up.ops.fmax(self, other)

    def fmin(self, other: Any) -> Tensor:
        return _up.ops.fmin(self, other)

    def bitwise_and(self, other: Any) -> Tensor:
        return _up.ops.bitwise_and(self, other)

    def bitwise_and_(self, other: Any) -> Tensor:
        return _up.ops.bitwise_and_(self, other)

    def bitwise_or(self, other: Any) -> Tensor:
        return _up.ops.bitwise_or(self, other)

    def bitwise_or_(self, other: Any) -> Tensor:
        return _up.ops.bitwise_or_(self, other)

    def bitwise_xor(self, other: Any) -> Tensor:
        return _up.ops.bitwise_xor(self, other)

    def bitwise_xor_(self, other: Any) -> Tensor:
        return _up.ops.bitwise_xor_(self, other)

    def bitwise_left_shift(self, other: Any) -> Tensor:
        return _up.ops.bitwise_left_shift(self, other)

    def bitwise_left_shift_(self, other: Any) -> Tensor:
        return _up.ops.bitwise_left_shift_(self, other)

    def bitwise_right_shift(self, other: Any) -> Tensor:
        return _up.ops.bitwise_right_shift(self, other)

    def bitwise_right_shift_(self, other: Any) -> Tensor:
        return _up.ops.bitwise_right_shift_(self, other)

    def fmod_(self, other: Any) -> Tensor:
        return _up.ops.fmod_(self, other)

    def remainder_(self, other: Any) -> Tensor:
        return _up.ops.remainder_(self, other)

    def floor_divide_(self, other: Any) -> Tensor:
        return _up.ops.floor_divide_(self, other)

    def logaddexp(self, other: Any) -> Tensor:
        return _up.ops.logaddexp(self, other)

    def logaddexp2(self, other: Any) -> Tensor:
        return _up.ops.logaddexp2(self, other)

    def xlogy(self, other: Any) -> Tensor:
        return _up.ops.xlogy(self, other)

    def xlogy_(self, other: Any) -> Tensor:
        return _up.ops.xlogy_(self, other)

    def heaviside(self, values: Any) -> Tensor:
        return _up.ops.heaviside(self, values)

    def heaviside_(self, values: Any) -> Tensor:
        return _up.ops.heaviside_(self, values)

    def float_power(self, exponent: Any) -> Tensor:
        return _up.ops.float_power(self, exponent)

    def float_power_(self, exponent: Any) -> Tensor:
        return _up.ops.float_power_(self, exponent)

    def ldexp(self, other: Any) -> Tensor:
        return _up.ops.ldexp(self, other)

    def ldexp_(self, other: Any) -> Tensor:
        return _up.ops.ldexp_(self, other)

    def gcd(self, other: Any) -> Tensor:
        return _up.ops.gcd(self, other)

    def gcd_(self, other: Any) -> Tensor:
        return _up.ops.gcd_(self, other)

    def lcm(self, other: Any) -> Tensor:
        return _up.ops.lcm(self, other)

    def lcm_(self, other: Any) -> Tensor:
        return _up.ops.lcm_(self, other)

    def multiply(self, other: Any) -> Tensor:
        return _up.ops.mul(self, other)

    def multiply_(self, other: Any) -> Tensor:
        return _up.ops.mul_(self, other)

    def true_divide(self, other: Any) -> Tensor:
        return _up.ops.div(self, other)

    def true_divide_(self, other: Any) -> Tensor:
        return _up.ops.div_(self, other)

    def eq_(self, other: Any) -> Tensor:
        return _up.ops.eq_(self, other)

    def ne_(self, other: Any) -> Tensor:
        return _up.ops.ne_(self, other)

    def lt_(self, other: Any) -> Tensor:
        return _up.ops.lt_(self, other)

    def le_(self, other: Any) -> Tensor:
        return _up.ops.le_(self, other)

    def gt_(self, other: Any) -> Tensor:
        return _up.ops.gt_(self, other)

    def ge_(self, other: Any) -> Tensor:
        return _up.ops.ge_(self, other)

    def greater(self, other: Any) -> Tensor:
        return _up.ops.greater(self, other)

    def greater_(self, other: Any) -> Tensor:
        return _up.ops.greater_(self, other)

    def greater_equal(self, other: Any) -> Tensor:
        return _up.ops.greater_equal(self, other)

    def greater_equal_(self, other: Any) -> Tensor:
        return _up.ops.greater_equal_(self, other)

    def less(self, other: Any) -> Tensor:
        return _up.ops.less(self, other)

    def less_(self, other: Any) -> Tensor:
        return _up.ops.less_(self, other)

    def less_equal(self, other: Any) -> Tensor:
        return _up.ops.less_equal(self, other)

    def less_equal_(self, other: Any) -> Tensor:
        return _up.ops.less_equal_(self, other)

    def not_equal(self, other: Any) -> Tensor:
        return _up.ops.not_equal(self, other)

    def not_equal_(self, other: Any) -> Tensor:
        return _up.ops.not_equal_(self, other)

    def logical_and_(self, other: Any) -> Tensor:
        return _up.ops.logical_and_(self, other)

    def logical_or_(self, other: Any) -> Tensor:
        return _up.ops.logical_or_(self, other)

    def logical_xor_(self, other: Any) -> Tensor:
        return _up.ops.logical_xor_(self, other)

    def divide(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        return _up.ops.div(self, other, rounding_mode=rounding_mode)

    def divide_(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        return _up.ops.div_(self, other, rounding_mode=rounding_mode)

    def subtract(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _up.ops.sub(self, other, alpha=alpha)

    def subtract_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _up.ops.sub_(self, other, alpha=alpha)

    def lerp(self, end: Tensor, weight: Any) -> Tensor:
        return _up.ops.lerp(self, end, weight)

    def lerp_(self, end: Tensor, weight: Any) -> Tensor:
        return _up.ops.lerp_(self, end, weight)

    def addcdiv(self, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
        return _up.ops.addcdiv(self, tensor1, tensor2, value=value)

    def addcdiv_(self, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
        return _up.ops.addcdiv_(self, tensor1, tensor2, value=value)

    def addcmul(self, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
        return _up.ops.addcmul(self, tensor1, tensor2, value=value)

    def addcmul_(self, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
        return _up.ops.addcmul_(self, tensor1, tensor2, value=value)

    def clamp_min(self, min: Any) -> Tensor:
        return _up.ops.clamp(self, min, None)

    def clamp_min_(self, min: Any) -> Tensor:
        return _up.ops.clamp_(self, min, None)

    def clamp_max(self, max: Any) -> Tensor:
        return _up.ops.clamp(self, None, max)

    def clamp_max_(self, max: Any) -> Tensor:
        return _up.ops.clamp_(self, None, max)

    # operators
    def __lshift__(self, other: Any) -> Tensor:
        return _up.ops.bitwise_left_shift(self, other)

    def __rlshift__(self, other: Any) -> Tensor:
        return _up.ops.bitwise_left_shift(other, self)

    def __ilshift__(self, other: Any) -> Tensor:
        return _up.ops.bitwise_left_shift_(self, other)

    def __rshift__(self, other: Any) -> Tensor:
        return _up.ops.bitwise_right_shift(self, other)

    def __rrshift__(self, other: Any) -> Tensor:
        return _up.ops.bitwise_right_shift(other, self)

    def __irshift__(self, other: Any) -> Tensor:
        return _up.ops.bitwise_right_shift_(self, other)
