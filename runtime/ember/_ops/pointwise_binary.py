"""Binary elementwise math beyond `ember._ops.elementwise`: the primitives atan2, hypot,
copysign, nextafter, fmax, fmin and the bit shifts, composites (logaddexp, logaddexp2,
xlogy, heaviside, float_power, ldexp, lerp, addcdiv, addcmul, gcd, lcm, clamp_min,
clamp_max, rsub), PyTorch's aliases, and the in-place forms.

Promotion is PyTorch's: Python scalars are weak operands, integer inputs of floating ops
compute in the default float dtype.
"""

from __future__ import annotations

import math
from typing import Any

from ember import _dtype
from ember._errors import DTypeError
from ember._ops import elementwise as ew
from ember._ops import names, unary
from ember._ops._binary_general import binary_general
from ember._ops.conversion import cast
from ember._ops.creation import full
from ember._ops.elementwise import _binary_function, _inplace
from ember._ops.pointwise_inplace import apply_inplace, write_out
from ember._ops.pointwise_math import exp2
from ember._ops.reduction import any as _any
from ember._tensor import Tensor

__all__ = [
    "addcdiv", "addcdiv_", "addcmul", "addcmul_", "arctan2", "arctan2_", "atan2", "atan2_",
    "bitwise_and_", "bitwise_left_shift", "bitwise_left_shift_", "bitwise_not_", "bitwise_or_",
    "bitwise_right_shift", "bitwise_right_shift_", "bitwise_xor_", "clamp_max", "clamp_max_",
    "clamp_min", "clamp_min_", "clip_", "copysign", "copysign_", "divide", "divide_",
    "float_power", "float_power_", "floor_divide_", "fmax", "fmin", "fmod_", "gcd", "gcd_",
    "heaviside", "heaviside_", "hypot", "hypot_", "lcm", "lcm_", "ldexp", "ldexp_", "lerp",
    "lerp_", "logaddexp", "logaddexp2", "multiply_", "nextafter", "nextafter_", "remainder_",
    "rsub", "subtract_", "true_divide_", "xlogy", "xlogy_",
]  # fmt: skip

atan2 = _binary_function("atan2")
hypot = _binary_function("hypot")
copysign = _binary_function("copysign")
_nextafter = _binary_function("nextafter")
fmax = _binary_function("fmax")
fmin = _binary_function("fmin")
bitwise_left_shift = _binary_function("bitwise_left_shift")
bitwise_right_shift = _binary_function("bitwise_right_shift")
arctan2 = atan2


def nextafter(input: Tensor, other: Any, *, out: Tensor | None = None) -> Tensor:
    """The next representable value after input towards other (float32 and float64: the
    kernels compute float16 in float32, whose neighbours float16 cannot hold; bfloat16,
    which PyTorch supports, steps through float32 below)."""
    _check_nextafter(input, other)
    if _dtype.result_type(input, other) is _dtype.bfloat16:
        return write_out("nextafter", out, _nextafter_bfloat16(input, other))
    return _nextafter(input, other, out=out)


def nextafter_(input: Tensor, other: Any) -> Tensor:
    """In place nextafter."""
    _check_nextafter(input, other)
    if _dtype.result_type(input, other) is _dtype.bfloat16:
        return apply_inplace("nextafter_", input, lambda x: _nextafter_bfloat16(x, other), other)
    return _inplace(names.BINARY["nextafter"], input, other)


def _nextafter_bfloat16(input: Any, other: Any) -> Tensor:
    """bfloat16 nextafter from float32's: bfloat16 is float32 less its 16 low mantissa bits,
    with the same exponents, so its step from any value (normal, subnormal, across a binade)
    is float32's times 2**16, and the sum is exact. Infinity steps to the largest finite
    value; equal operands give `other` (so signed zeros follow it), as C's nextafter."""
    a = cast(input, _dtype.float32)
    b = cast(other, _dtype.float32) if isinstance(other, Tensor) else other
    neighbour = _nextafter(a, b)  # NaN exactly where an operand is
    stepped = ew.add(a, ew.mul(ew.sub(neighbour, a), 65536.0))
    largest = unary.where(ew.lt(a, 0), -_BFLOAT16_MAX, _BFLOAT16_MAX)
    stepped = unary.where(ew.eq(unary.abs(a), math.inf), largest, stepped)
    stepped = unary.where(ew.ne(neighbour, neighbour), neighbour, stepped)
    return cast(unary.where(ew.eq(a, b), b, stepped), _dtype.bfloat16)


_BFLOAT16_MAX = 3.3895313892515355e38  # (2 - 2**-7) * 2**127


def _check_nextafter(input: Any, other: Any) -> None:
    for x in (input, other):
        if isinstance(x, Tensor) and x._dtype is _dtype.float16:
            raise DTypeError("\"nextafter\" not implemented for 'float16'")


divide = ew.div


def _inplace_of(name: str) -> Any:
    op = names.BINARY[name]

    def function(input: Tensor, other: Any) -> Tensor:
        return _inplace(op, input, other)

    function.__name__ = function.__qualname__ = name + "_"
    function.__doc__ = f"In place: input = {name}(input, other)."
    return function


atan2_ = _inplace_of("atan2")
arctan2_ = atan2_
hypot_ = _inplace_of("hypot")
copysign_ = _inplace_of("copysign")
bitwise_left_shift_ = _inplace_of("bitwise_left_shift")
bitwise_right_shift_ = _inplace_of("bitwise_right_shift")
bitwise_and_ = _inplace_of("bitwise_and")
bitwise_or_ = _inplace_of("bitwise_or")
bitwise_xor_ = _inplace_of("bitwise_xor")
fmod_ = _inplace_of("fmod")
remainder_ = _inplace_of("remainder")
floor_divide_ = _inplace_of("floor_divide")
multiply_ = ew.mul_
subtract_ = ew.sub_
divide_ = ew.div_
true_divide_ = ew.div_


def bitwise_not_(input: Tensor) -> Tensor:
    """In place: input = ~input."""
    return apply_inplace("bitwise_not_", input, unary.bitwise_not)


def _float_operands(name: str, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    """a and b as tensors of their promoted dtype (integers: the default float)."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"{name}(): expected at least one tensor argument")
    dt = _dtype.result_type(a, b)
    if not dt.is_floating_point:
        dt = _dtype.get_default_dtype()
    dev = (a if isinstance(a, Tensor) else b)._device
    pair = [
        cast(x, dt) if isinstance(x, Tensor) else full((), float(x), dtype=dt, device=dev)
        for x in (a, b)
    ]
    return pair[0], pair[1]


def logaddexp(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """log(exp(a) + exp(b)), without overflow; equal infinities give themselves."""
    return write_out("logaddexp", out, _logaddexp("logaddexp", input, other, 1.0))


def logaddexp2(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """log2(2**a + 2**b), without overflow."""
    return write_out("logaddexp2", out, _logaddexp("logaddexp2", input, other, math.log(2.0)))


def _logaddexp(name: str, input: Any, other: Any, ln_base: float) -> Tensor:
    a, b = _float_operands(name, input, other)
    high = ew.maximum(a, b)
    gap = unary.neg(unary.abs(ew.sub(a, b)))
    # log_b(1 + b**gap) = log1p(exp(gap * ln b)) / ln b
    tail = unary.log1p(unary.exp(gap) if ln_base == 1.0 else exp2(gap))
    result = ew.add(high, tail if ln_base == 1.0 else ew.div(tail, ln_base))
    # inf - inf is NaN: equal infinities are their own result.
    same_infinity = ew.logical_and(ew.eq(a, b), ew.eq(unary.abs(a), math.inf))
    return unary.where(same_infinity, a, result)


def xlogy(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    """x * log(y), 0 where x == 0 unless y is NaN.

    The gradient is PyTorch's: log(y) wrt x even where x == 0 (0 where y <= 0 there), x / y
    wrt y."""
    x, y = _float_operands("xlogy", input, other)
    zero_x = ew.eq(x, 0)
    # x == 0 with y <= 0: log(y) is replaced (by 0, through a safe y) before multiplying.
    masked = ew.logical_and(zero_x, ew.le(y, 0))
    log_y = unary.where(masked, 0.0, unary.log(unary.where(masked, 1.0, y)))
    value = ew.mul(x, log_y)
    # 0 * log(inf) is NaN, but xlogy(0, inf) is 0.
    return write_out(
        "xlogy", out, unary.where(ew.logical_and(zero_x, ew.eq(y, math.inf)), 0.0, value)
    )


def xlogy_(input: Tensor, other: Any) -> Tensor:
    """In place xlogy."""
    return apply_inplace("xlogy_", input, lambda x: xlogy(x, other), other)


def heaviside(input: Tensor, values: Tensor, *, out: Tensor | None = None) -> Tensor:
    """0 where input < 0, values where input == 0, 1 where input > 0 (not differentiable)."""
    if not isinstance(input, Tensor) or not isinstance(values, Tensor):
        raise TypeError("heaviside(): arguments 'input' and 'values' must be Tensors")
    if input._dtype is not values._dtype:
        raise RuntimeError(
            "heaviside is not yet implemented for tensors with different dtypes "
            f"({input._dtype.name} and {values._dtype.name})"
        )
    x, v = ew.detached(input), ew.detached(values)
    step = cast(ew.gt(x, 0), x._dtype)
    return write_out("heaviside", out, unary.where(ew.eq(x, 0), v, step))


def heaviside_(input: Tensor, values: Tensor) -> Tensor:
    """In place heaviside."""
    return apply_inplace("heaviside_", input, lambda x: heaviside(x, values), values)


def float_power(input: Any, exponent: Any, *, out: Tensor | None = None) -> Tensor:
    """pow computed in float64."""
    f64 = _dtype.float64
    a = cast(input, f64) if isinstance(input, Tensor) else float(input)
    b = cast(exponent, f64) if isinstance(exponent, Tensor) else float(exponent)
    return write_out("float_power", out, ew.pow(a, b))


def float_power_(input: Tensor, exponent: Any) -> Tensor:
    """In place float_power: input must be float64."""
    if input._dtype is not _dtype.float64:
        raise RuntimeError(
            f"float_power_(): the base has dtype {input._dtype.name} but the result requires "
            "dtype float64"
        )
    return apply_inplace("float_power_", input, lambda x: float_power(x, exponent), exponent)


def ldexp(input: Tensor, other: Any, *, out: Tensor | None = None) -> Tensor:
    """input * 2**other."""
    x, e = _float_operands("ldexp", input, other)
    return write_out("ldexp", out, ew.mul(x, exp2(e)))


def ldexp_(input: Tensor, other: Any) -> Tensor:
    """In place ldexp."""
    return apply_inplace("ldexp_", input, lambda x: ldexp(x, other), other)


def lerp(input: Tensor, end: Tensor, weight: Any, *, out: Tensor | None = None) -> Tensor:
    """input + weight * (end - input), computed from the nearer end as PyTorch does."""
    if not isinstance(input, Tensor) or not isinstance(end, Tensor):
        raise TypeError("lerp(): arguments 'input' and 'end' must be Tensors")
    if input._dtype is not end._dtype or not input._dtype.is_floating_point:
        raise RuntimeError(
            f"lerp(): expected dtype {input._dtype.name} for `end` but got dtype {end._dtype.name}"
            if input._dtype is not end._dtype
            else f"\"lerp\" not implemented for '{input._dtype.name}'"
        )
    span = ew.sub(end, input)
    if not isinstance(weight, Tensor):
        w = float(weight)
        if abs(w) < 0.5:
            return write_out("lerp", out, ew.add(input, ew.mul(span, w)))
        return write_out("lerp", out, ew.sub(end, ew.mul(span, 1.0 - w)))
    near_start = ew.lt(unary.abs(weight), 0.5)
    from_start = ew.add(input, ew.mul(span, weight))
    from_end = ew.sub(end, ew.mul(span, ew.sub(1.0, weight)))
    return write_out("lerp", out, unary.where(near_start, from_start, from_end))


def lerp_(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """In place lerp."""
    return apply_inplace("lerp_", input, lambda x: lerp(x, end, weight), end, weight)


def addcdiv(
    input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1, out: Tensor | None = None
) -> Tensor:
    """input + value * tensor1 / tensor2."""
    for t in (tensor1, tensor2):
        if isinstance(t, Tensor) and not t._dtype.is_floating_point:
            raise RuntimeError(
                "Integer division with addcdiv is no longer supported, and in a future release "
                "addcdiv will perform a true division of tensor1 and tensor2."
            )
    quotient = ew.div(tensor1, tensor2)
    return ew.add(input, quotient if value == 1 else ew.mul(quotient, value), out=out)


def addcmul(
    input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1, out: Tensor | None = None
) -> Tensor:
    """input + value * tensor1 * tensor2."""
    product = ew.mul(tensor1, tensor2)
    return ew.add(input, product if value == 1 else ew.mul(product, value), out=out)


def addcdiv_(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """In place addcdiv."""
    compute = lambda x: addcdiv(x, tensor1, tensor2, value=value)  # noqa: E731
    return apply_inplace("addcdiv_", input, compute, tensor1, tensor2)


def addcmul_(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """In place addcmul."""
    compute = lambda x: addcmul(x, tensor1, tensor2, value=value)  # noqa: E731
    return apply_inplace("addcmul_", input, compute, tensor1, tensor2)


def _integer_operands(name: str, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    dt = _dtype.result_type(a, b)
    if dt.is_floating_point or dt is _dtype.bool:
        raise DTypeError(f"\"{name}\" not implemented for '{dt.name}'")
    dev = (a if isinstance(a, Tensor) else b)._device
    pair = [
        cast(x, dt) if isinstance(x, Tensor) else full((), int(x), dtype=dt, device=dev)
        for x in (a, b)
    ]
    return pair[0], pair[1]


def gcd(input: Tensor, other: Any, *, out: Tensor | None = None) -> Tensor:
    """The greatest common divisor, non-negative; gcd(0, 0) = 0."""
    a, b = _integer_operands("gcd", input, other)
    a, b = unary.abs(a), unary.abs(b)
    a, b = ew.add(a, ew.mul(b, 0)), ew.add(b, ew.mul(a, 0))  # broadcast together
    # Euclid's algorithm, all elements at once, until every remainder is 0 (at most ~92
    # rounds for int64: consecutive Fibonacci numbers are the worst case).
    while bool(_any(ew.ne(b, 0))):
        done = ew.eq(b, 0)
        rest = ew.remainder(a, unary.where(done, 1, b))
        a, b = unary.where(done, a, b), unary.where(done, 0, rest)
    return write_out("gcd", out, a)


def lcm(input: Tensor, other: Any, *, out: Tensor | None = None) -> Tensor:
    """The least common multiple, non-negative; 0 when either is 0."""
    a, b = _integer_operands("lcm", input, other)
    divisor = gcd(a, b)
    zero = ew.eq(divisor, 0)
    quotient = ew.floor_divide(a, unary.where(zero, 1, divisor))
    return write_out("lcm", out, unary.abs(ew.mul(quotient, b)))


def gcd_(input: Tensor, other: Any) -> Tensor:
    """In place gcd."""
    return apply_inplace("gcd_", input, lambda x: gcd(x, other))


def lcm_(input: Tensor, other: Any) -> Tensor:
    """In place lcm."""
    return apply_inplace("lcm_", input, lambda x: lcm(x, other))


def clamp_min(input: Tensor, min: Any) -> Tensor:
    """clamp(input, min=min)."""
    return unary.clamp(input, min, None)


def clamp_max(input: Tensor, max: Any) -> Tensor:
    """clamp(input, max=max)."""
    return unary.clamp(input, None, max)


def clamp_min_(input: Tensor, min: Any) -> Tensor:
    """In place clamp_min."""
    return unary.clamp_(input, min, None)


def clamp_max_(input: Tensor, max: Any) -> Tensor:
    """In place clamp_max."""
    return unary.clamp_(input, None, max)


clip_ = unary.clamp_


def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """other - alpha * input."""
    if isinstance(other, Tensor):
        return ew.sub(other, input, alpha=alpha)
    scaled = input if alpha == 1 else ew.mul(input, alpha)
    return binary_general(names.BINARY["sub"], other, scaled, None)
