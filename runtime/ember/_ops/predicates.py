"""Elementwise predicates (bool results) and whole-tensor comparisons: isnan, isinf,
isfinite, isposinf, isneginf, isreal, signbit, isclose, allclose, equal; the comparison
aliases (greater, less_equal, not_equal, ...) and the in-place comparisons and logical
ops (eq_, lt_, logical_and_, ...), which write 0/1 in the tensor's own dtype.
"""

from __future__ import annotations

import math
from typing import Any

from ember import _dtype
from ember._ops import elementwise as ew
from ember._ops import unary
from ember._ops._meta import same_device
from ember._ops.conversion import cast
from ember._ops.creation import full
from ember._ops.pointwise_binary import copysign
from ember._ops.pointwise_inplace import apply_inplace
from ember._ops.reduction import all as _all
from ember._tensor import Tensor

__all__ = [
    "allclose", "eq_", "equal", "ge_", "greater", "greater_", "greater_equal", "greater_equal_",
    "gt_", "isclose", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "isreal", "le_",
    "less", "less_", "less_equal", "less_equal_", "logical_and_", "logical_not_", "logical_or_",
    "logical_xor_", "lt_", "ne_", "not_equal", "not_equal_", "signbit",
]  # fmt: skip

_bool = _dtype.bool


def _tensor(name: str, t: Any) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be a Tensor, not {type(t).__name__}")
    return ew.detached(t)


def _all_false(t: Tensor) -> Tensor:
    return full(t._shape, False, dtype=_bool, device=t._device)


def isnan(input: Tensor) -> Tensor:
    """True where input is NaN."""
    t = _tensor("isnan", input)
    return ew.ne(t, t) if t._dtype.is_floating_point else _all_false(t)


def isinf(input: Tensor) -> Tensor:
    """True where input is +inf or -inf."""
    t = _tensor("isinf", input)
    return ew.eq(unary.abs(t), math.inf) if t._dtype.is_floating_point else _all_false(t)


def isposinf(input: Tensor) -> Tensor:
    """True where input is +inf."""
    t = _tensor("isposinf", input)
    return ew.eq(t, math.inf) if t._dtype.is_floating_point else _all_false(t)


def isneginf(input: Tensor) -> Tensor:
    """True where input is -inf."""
    t = _tensor("isneginf", input)
    return ew.eq(t, -math.inf) if t._dtype.is_floating_point else _all_false(t)


def isfinite(input: Tensor) -> Tensor:
    """True where input is neither NaN nor infinite (everywhere for integers)."""
    t = _tensor("isfinite", input)
    if not t._dtype.is_floating_point:
        return full(t._shape, True, dtype=_bool, device=t._device)
    return ew.lt(unary.abs(t), math.inf)  # false for NaN and both infinities


def isreal(input: Tensor) -> Tensor:
    """True everywhere: ember's dtypes are all real."""
    t = _tensor("isreal", input)
    return full(t._shape, True, dtype=_bool, device=t._device)


def signbit(input: Tensor) -> Tensor:
    """True where the sign bit is set: negative values, -0.0 and NaNs with the bit set."""
    t = _tensor("signbit", input)
    if t._dtype.is_floating_point:
        return ew.lt(copysign(1.0, t), 0)
    if t._dtype is _bool or not t._dtype.is_signed:
        return _all_false(t)
    return ew.lt(t, 0)


def isclose(
    input: Tensor,
    other: Tensor,
    rtol: float = 1e-05,
    atol: float = 1e-08,
    equal_nan: bool = False,
) -> Tensor:
    """|input - other| <= atol + rtol * |other|, elementwise; equal values (infinities
    too) are close, NaNs only with equal_nan."""
    a, b = _tensor("isclose", input), _tensor("isclose", other)
    if a._dtype is not b._dtype:
        raise RuntimeError(
            f"{a._dtype.name} did not match {b._dtype.name}: isclose() expects both inputs "
            "to have the same dtype"
        )
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    same_device("isclose", a, b)
    close = ew.eq(a, b)
    if a._dtype is _bool:
        return close
    if not a._dtype.is_floating_point:
        a = cast(a, _dtype.get_default_dtype())
        b = cast(b, a._dtype)
    if equal_nan:
        close = ew.logical_or(close, ew.logical_and(ew.ne(a, a), ew.ne(b, b)))
    error = unary.abs(ew.sub(a, b))
    allowed = ew.add(unary.abs(ew.mul(b, rtol)), atol)
    # A finite error only: inf - inf is NaN and x - inf is inf.
    within = ew.logical_and(ew.le(error, allowed), ew.lt(error, math.inf))
    return ew.logical_or(close, within)


def allclose(
    input: Tensor,
    other: Tensor,
    rtol: float = 1e-05,
    atol: float = 1e-08,
    equal_nan: bool = False,
) -> bool:
    """Whether every element of input is close to other's (see isclose)."""
    return bool(_all(isclose(input, other, rtol, atol, equal_nan)))


def equal(input: Tensor, other: Tensor) -> bool:
    """Whether the tensors have one shape and equal elements (NaN is not equal to NaN)."""
    a, b = _tensor("equal", input), _tensor("equal", other)
    same_device("equal", a, b)
    if a._shape != b._shape:
        return False
    return bool(_all(ew.eq(a, b)))


greater = ew.gt
greater_equal = ew.ge
less = ew.lt
less_equal = ew.le
not_equal = ew.ne


def _written(name: str, compare: Any) -> Any:
    """`name_`: input = compare(input, other), as 0/1 in input's dtype."""

    def function(input: Tensor, other: Any) -> Tensor:
        return apply_inplace(name + "_", input, lambda x: compare(ew.detached(x), other), other)

    function.__name__ = function.__qualname__ = name + "_"
    function.__doc__ = f"In place: input = {name}(input, other), in input's dtype."
    return function


eq_ = _written("eq", ew.eq)
ne_ = _written("ne", ew.ne)
lt_ = _written("lt", ew.lt)
le_ = _written("le", ew.le)
gt_ = _written("gt", ew.gt)
ge_ = _written("ge", ew.ge)
greater_ = _written("greater", ew.gt)
greater_equal_ = _written("greater_equal", ew.ge)
less_ = _written("less", ew.lt)
less_equal_ = _written("less_equal", ew.le)
not_equal_ = _written("not_equal", ew.ne)
logical_and_ = _written("logical_and", ew.logical_and)
logical_or_ = _written("logical_or", ew.logical_or)
logical_xor_ = _written("logical_xor", ew.logical_xor)


def logical_not_(input: Tensor) -> Tensor:
    """In place: input = logical_not(input), in input's dtype."""
    return apply_inplace("logical_not_", input, lambda x: unary.logical_not(ew.detached(x)))
