"""Unary elementwise math beyond `ember._ops.unary`: the inverse trigonometric and
hyperbolic primitives (acos ... exp2) with PyTorch's aliases, the in-place form of every
unary op, and composites (sinc, frac, deg2rad, rad2deg, logit, sgn, positive,
nan_to_num).

Integer and bool inputs of floating ops compute in the default float dtype, as in
PyTorch; the in-place forms raise when the result would need a float into an integer.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from ember import _dtype
from ember._dtype_info import finfo
from ember._errors import DTypeError
from ember._ops import elementwise as ew
from ember._ops import unary
from ember._ops.conversion import cast
from ember._ops.pointwise_inplace import apply_inplace, unary_inplace, write_out
from ember._ops.unary import _unary_function
from ember._tensor import Tensor

__all__ = [
    "abs_", "absolute", "absolute_", "acos", "acos_", "acosh", "acosh_", "angle", "arccos",
    "arccos_", "arccosh", "arccosh_", "arcsin", "arcsin_", "arcsinh", "arcsinh_", "arctan",
    "arctan_", "arctanh", "arctanh_", "asin", "asin_", "asinh", "asinh_", "atan", "atan_", "atanh",
    "atanh_", "ceil_", "cos_", "cosh", "cosh_", "deg2rad", "deg2rad_", "erf_", "exp2", "exp2_",
    "expm1_", "fix", "fix_", "floor_", "frac", "frac_", "frexp", "log1p_", "log2", "log2_",
    "log10", "log10_", "log_", "logit", "logit_", "nan_to_num", "nan_to_num_", "neg_", "negative_",
    "positive", "rad2deg", "rad2deg_", "reciprocal_", "round_", "rsqrt_", "sgn", "sgn_",
    "sigmoid_", "sign_", "sin_", "sinc", "sinc_", "sinh", "sinh_", "sqrt_", "square_", "tan",
    "tan_", "tanh_", "trunc_",
]  # fmt: skip

acos = _unary_function("acos")
asin = _unary_function("asin")
atan = _unary_function("atan")
sinh = _unary_function("sinh")
cosh = _unary_function("cosh")
tan = _unary_function("tan")
asinh = _unary_function("asinh")
acosh = _unary_function("acosh")
atanh = _unary_function("atanh")
log2 = _unary_function("log2")
log10 = _unary_function("log10")
exp2 = _unary_function("exp2")
arccos, arcsin, arctan = acos, asin, atan
arccosh, arcsinh, arctanh = acosh, asinh, atanh
absolute = unary.abs
fix = unary.trunc

acos_ = unary_inplace("acos")
asin_ = unary_inplace("asin")
atan_ = unary_inplace("atan")
sinh_ = unary_inplace("sinh")
cosh_ = unary_inplace("cosh")
tan_ = unary_inplace("tan")
asinh_ = unary_inplace("asinh")
acosh_ = unary_inplace("acosh")
atanh_ = unary_inplace("atanh")
log2_ = unary_inplace("log2")
log10_ = unary_inplace("log10")
exp2_ = unary_inplace("exp2")
arccos_, arcsin_, arctan_ = acos_, asin_, atan_
arccosh_, arcsinh_, arctanh_ = acosh_, asinh_, atanh_
abs_ = unary_inplace("abs")
absolute_ = abs_
neg_ = unary_inplace("neg")
negative_ = neg_
log_ = unary_inplace("log")
log1p_ = unary_inplace("log1p")
expm1_ = unary_inplace("expm1")
sqrt_ = unary_inplace("sqrt")
rsqrt_ = unary_inplace("rsqrt")
reciprocal_ = unary_inplace("reciprocal")
sin_ = unary_inplace("sin")
cos_ = unary_inplace("cos")
tanh_ = unary_inplace("tanh")
sigmoid_ = unary_inplace("sigmoid")
erf_ = unary_inplace("erf")
floor_ = unary_inplace("floor")
ceil_ = unary_inplace("ceil")
round_ = unary_inplace("round")
trunc_ = unary_inplace("trunc")
fix_ = trunc_
sign_ = unary_inplace("sign")


def _floating(name: str, t: Any) -> Tensor:
    """`t` in the dtype a floating op computes it in (integers: the default float)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be a Tensor, not {type(t).__name__}")
    return t if t._dtype.is_floating_point else cast(t, _dtype.get_default_dtype())


def sinc(input: Tensor) -> Tensor:
    """sin(pi x) / (pi x), 1 at x = 0 (where its gradient is 0, as in PyTorch)."""
    x = _floating("sinc", input)
    zero = ew.eq(x, 0)
    # x = 0 is replaced before dividing so that no NaN reaches the gradient.
    scaled = ew.mul(unary.where(zero, 1.0, x), math.pi)
    return unary.where(zero, 1.0, ew.div(unary.sin(scaled), scaled))


def frac(input: Tensor) -> Tensor:
    """x - trunc(x), keeping the sign of x; floating dtypes only, as in PyTorch."""
    if not isinstance(input, Tensor):
        raise TypeError("frac(): argument 'input' must be a Tensor")
    if not input._dtype.is_floating_point:
        raise DTypeError(f"\"frac\" not implemented for '{input._dtype.name}'")
    return ew.sub(input, unary.trunc(input))


def deg2rad(input: Tensor) -> Tensor:
    """Degrees to radians."""
    return ew.mul(_floating("deg2rad", input), math.pi / 180.0)


def rad2deg(input: Tensor) -> Tensor:
    """Radians to degrees."""
    return ew.mul(_floating("rad2deg", input), 180.0 / math.pi)


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """log(x / (1 - x)), with x clamped to [eps, 1 - eps] when eps is given (the gradient
    is then 0 outside that range, as in PyTorch)."""
    x = _floating("logit", input)
    if eps is not None:
        x = unary.clamp(x, eps, 1.0 - eps)
    return unary.log(ew.div(x, ew.sub(1.0, x)))


def angle(input: Tensor) -> Tensor:
    """The argument of a real number: pi where input < 0, else 0 (-0.0 too); NaN stays
    NaN. Its gradient is 0, as PyTorch's for real inputs."""
    x = _floating("angle", input)
    plain = ew.detached(x)
    value = unary.where(ew.lt(plain, 0), math.pi, unary.where(ew.ne(plain, plain), plain, 0.0))
    # + 0 * x (x finite): the result stays in the graph with a zero gradient.
    finite = ew.lt(unary.abs(plain), math.inf)
    return ew.add(value, ew.mul(unary.where(finite, x, 0.0), 0.0))


def sgn(input: Tensor) -> Tensor:
    """sign for real tensors (ember has no complex dtypes)."""
    return unary.sign(input)


def positive(input: Tensor) -> Tensor:
    """input itself; bool tensors raise, as in PyTorch."""
    if not isinstance(input, Tensor):
        raise TypeError("positive(): argument 'input' must be a Tensor")
    if input._dtype is _dtype.bool:
        raise DTypeError("The `+` operator, on a bool tensor is not supported.")
    return input


def nan_to_num(
    input: Tensor,
    nan: float = 0.0,
    posinf: float | None = None,
    neginf: float | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """NaN, +inf and -inf replaced (by 0 and the dtype's largest and lowest finite values
    unless given); integer and bool tensors are returned as copies."""
    if not isinstance(input, Tensor):
        raise TypeError("nan_to_num(): argument 'input' must be a Tensor")
    return write_out("nan_to_num", out, _nan_to_num(input, nan, posinf, neginf))


def _nan_to_num(t: Tensor, nan: float, posinf: float | None, neginf: float | None) -> Tensor:
    if not t._dtype.is_floating_point:
        return t.clone()
    info = finfo(t._dtype)
    high = info.max if posinf is None else posinf
    low = info.min if neginf is None else neginf
    result = unary.where(ew.ne(t, t), float(nan), t)
    result = unary.where(ew.eq(t, math.inf), float(high), result)
    return unary.where(ew.eq(t, -math.inf), float(low), result)


def sinc_(input: Tensor) -> Tensor:
    """In place sinc."""
    return apply_inplace("sinc_", input, sinc)


def frac_(input: Tensor) -> Tensor:
    """In place frac."""
    return apply_inplace("frac_", input, frac)


def deg2rad_(input: Tensor) -> Tensor:
    """In place deg2rad."""
    return apply_inplace("deg2rad_", input, deg2rad)


def rad2deg_(input: Tensor) -> Tensor:
    """In place rad2deg."""
    return apply_inplace("rad2deg_", input, rad2deg)


def logit_(input: Tensor, eps: float | None = None) -> Tensor:
    """In place logit."""
    return apply_inplace("logit_", input, lambda x: logit(x, eps))


def sgn_(input: Tensor) -> Tensor:
    """In place sgn."""
    return sign_(input)


def square_(input: Tensor) -> Tensor:
    """In place: input = input * input."""
    return apply_inplace("square_", input, unary.square)


def nan_to_num_(
    input: Tensor, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
) -> Tensor:
    """In place nan_to_num."""
    return apply_inplace("nan_to_num_", input, lambda x: _nan_to_num(x, nan, posinf, neginf))


class FrexpResult(NamedTuple):
    """What frexp returns (PyTorch's torch.return_types.frexp)."""

    mantissa: Tensor
    exponent: Tensor


def frexp(input: Tensor) -> FrexpResult:
    """input = mantissa * 2**exponent with |mantissa| in [0.5, 1) and an int32 exponent;
    zeros, infinities and NaN keep themselves as the mantissa, with exponent 0."""
    if not isinstance(input, Tensor):
        raise TypeError("frexp(): argument 'input' must be a Tensor")
    if not input._dtype.is_floating_point:
        raise RuntimeError(
            "torch.frexp() only supports floating-point dtypes, got " + input._dtype.name
        )
    x = input  # the mantissa's gradient is grad / 2**exponent, as in PyTorch
    special = ew.logical_or(ew.eq(x, 0), unary.logical_not(ew.lt(unary.abs(x), math.inf)))
    magnitude = unary.where(special, 1.0, unary.abs(x))
    # floor(log2|x|) + 1 may be one off near powers of two: corrected below.
    exponent = ew.add(unary.floor(log2(magnitude)), 1.0)
    mantissa = _scaled(magnitude, exponent)
    high = ew.ge(mantissa, 1.0)
    exponent = ew.add(exponent, cast(high, x._dtype))
    low = ew.lt(_scaled(magnitude, exponent), 0.5)
    exponent = ew.sub(exponent, cast(low, x._dtype))
    exponent = unary.where(special, 0.0, exponent)
    mantissa = ew.mul(_scaled(magnitude, exponent), unary.sign(x))
    mantissa = unary.where(special, x, mantissa)
    return FrexpResult(mantissa, cast(exponent, _dtype.int32))


def _scaled(x: Tensor, exponent: Tensor) -> Tensor:
    """x * 2**-exponent in two halves, so that subnormal x never overflows 2**-exponent."""
    half = unary.floor(ew.mul(exponent, 0.5))
    return ew.mul(ew.mul(x, exp2(unary.neg(half))), exp2(ew.sub(half, exponent)))
