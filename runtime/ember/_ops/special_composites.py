"""The composites of `ember.special`: entr, exp2, log_ndtr, logit, ndtr, sinc, xlogy,
xlog1py, written once in ember ops, so they run on every device and their gradients come
from their parts.

Each `where` that picks between branches feeds the other branch a harmless value, so that
the unpicked branch's derivative (multiplied by zero) is never inf or NaN.
"""

from __future__ import annotations

import math
from typing import Any

from ember._dtype import get_default_dtype, result_type
from ember._ops import elementwise as ew
from ember._ops import special_elementwise, unary
from ember._ops.conversion import cast
from ember._ops.creation import full
from ember._tensor import Tensor

__all__: list[str] = []

_SQRT_HALF = math.sqrt(0.5)


def _floating(t: Any, name: str) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be a Tensor, not {type(t).__name__}")
    return t if t._dtype.is_floating_point else cast(t, get_default_dtype())


def _is_nan(t: Tensor) -> Tensor:
    return ew.ne(t, t)


def entr(input: Tensor) -> Tensor:
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0 (NaN stays NaN)."""
    x = _floating(input, "entr")
    positive = ew.gt(x, 0)
    safe = unary.where(positive, x, 1.0)
    value = unary.where(positive, unary.neg(ew.mul(safe, unary.log(safe))), -math.inf)
    value = unary.where(ew.eq(x, 0), 0.0, value)
    return unary.where(_is_nan(x), x, value)


def exp2(input: Tensor) -> Tensor:
    """2 ** x, exact at the integers."""
    return ew.pow(2.0, _floating(input, "exp2"))


def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF, (1 + erf(x / sqrt 2)) / 2, through erfc for its tails."""
    x = _floating(input, "ndtr")
    return ew.mul(special_elementwise.erfc(ew.mul(x, -_SQRT_HALF)), 0.5)


def log_ndtr(input: Tensor) -> Tensor:
    """log(ndtr(x)), accurate in both tails: log(erfcx(-t) / 2) - t^2 for x < -1
    (t = x / sqrt 2), log1p(-erfc(t) / 2) elsewhere."""
    x = _floating(input, "log_ndtr")
    left = ew.lt(x, -1.0)
    t_left = ew.mul(unary.where(left, x, -2.0), _SQRT_HALF)
    t_right = ew.mul(unary.where(left, 0.0, x), _SQRT_HALF)
    low = ew.sub(
        unary.log(ew.mul(special_elementwise.erfcx(unary.neg(t_left)), 0.5)),
        ew.mul(t_left, t_left),
    )
    high = unary.log1p(ew.mul(special_elementwise.erfc(t_right), -0.5))
    return unary.where(left, low, high)


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when eps is given."""
    p = _floating(input, "logit")
    if eps is not None:
        p = unary.clamp(p, eps, 1.0 - eps)
    return unary.log(ew.div(p, ew.sub(1.0, p)))


def sinc(input: Tensor) -> Tensor:
    """sin(pi x) / (pi x), 1 at 0."""
    x = _floating(input, "sinc")
    zero = ew.eq(x, 0)
    scaled = ew.mul(unary.where(zero, 1.0, x), math.pi)
    return unary.where(zero, 1.0, ew.div(unary.sin(scaled), scaled))


def _pair(name: str, input: Any, other: Any) -> tuple[Tensor, Tensor]:
    """Both operands as tensors of their promoted float dtype, on the tensor's device."""
    tensors = [v for v in (input, other) if isinstance(v, Tensor)]
    if not tensors:
        raise TypeError(f"{name}(): expected at least one tensor argument")
    dtype = result_type(input, other)
    if not dtype.is_floating_point:
        dtype = get_default_dtype()
    device = tensors[0].device

    def as_tensor(value: Any) -> Tensor:
        if isinstance(value, Tensor):
            return cast(value, dtype)
        return full((), float(value), dtype=dtype, device=device)

    return as_tensor(input), as_tensor(other)


def _x_times(name: str, input: Any, other: Any, log: Any, one: float) -> Tensor:
    """x * log(y) (or log1p), 0 where x is 0 unless y is NaN."""
    x, y = _pair(name, input, other)
    zero = ew.logical_and(ew.eq(x, 0), ew.eq(y, y))
    safe = unary.where(zero, one, y)
    return unary.where(zero, 0.0, ew.mul(x, log(safe)))


def xlogy(input: Any, other: Any) -> Tensor:
    """x * log(y), 0 where x is 0 (unless y is NaN)."""
    return _x_times("xlogy", input, other, unary.log, 1.0)


def xlog1py(input: Any, other: Any) -> Tensor:
    """x * log1p(y), 0 where x is 0 (unless y is NaN)."""
    return _x_times("xlog1py", input, other, unary.log1p, 0.0)
