"""Binary elementwise ops: every dtype pair, broadcasting, strided operands, Python scalars
as weak types, 0-d tensors, NaN, alpha and out=."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import ember

from ._reference import (
    BOOL,
    DTYPES,
    FLOATS,
    as_compute,
    assert_close,
    discrete,
    host,
    laid_out,
    make,
    pid,
    sample,
    torch_floor_divide,
    trunc_divide,
)


class Binary(NamedTuple):
    function: Callable[..., ember.Tensor]
    reference: Callable[[np.ndarray, np.ndarray], np.ndarray]
    result: str  # "promote" (the promoted dtype), "float" (floating), "bool"
    domains: tuple[str, str]  # input domains; "discrete" draws from a small exact set
    bool_result: bool  # whether a bool computation dtype is allowed
    floats: bool = True  # whether float dtypes are allowed
    operator: Callable[[Any, Any], Any] | None = None


def _logical(fn: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    return lambda a, b: fn(a != 0, b != 0)


BINARY: dict[str, Binary] = {
    "add": Binary(ember.add, np.add, "promote", ("any", "any"), True, operator=operator.add),
    "sub": Binary(ember.sub, np.subtract, "promote", ("any", "any"), False, operator=operator.sub),
    "mul": Binary(ember.mul, np.multiply, "promote", ("any", "any"), True, operator=operator.mul),
    "div": Binary(ember.div, np.true_divide, "float", ("any", "nonzero"), True,
                  operator=operator.truediv),
    "div_floor": Binary(lambda a, b: ember.div(a, b, rounding_mode="floor"), torch_floor_divide,
                        "promote", ("any", "pow2"), False),
    "div_trunc": Binary(lambda a, b: ember.div(a, b, rounding_mode="trunc"), trunc_divide,
                        "promote", ("any", "pow2"), False),
    "floor_divide": Binary(ember.floor_divide, torch_floor_divide, "promote", ("any", "pow2"),
                           False, operator=operator.floordiv),
    "remainder": Binary(ember.remainder, np.remainder, "promote", ("any", "pow2"), False,
                        operator=operator.mod),
    "fmod": Binary(ember.fmod, np.fmod, "promote", ("any", "pow2"), False),
    "pow": Binary(ember.pow, np.power, "promote", ("positive", "exponent"), False,
                  operator=operator.pow),
    "maximum": Binary(ember.maximum, np.maximum, "promote", ("any", "any"), True),
    "minimum": Binary(ember.minimum, np.minimum, "promote", ("any", "any"), True),
    "eq": Binary(ember.eq, np.equal, "bool", ("discrete", "discrete"), True, operator=operator.eq),
    "ne": Binary(ember.ne, np.not_equal, "bool", ("discrete", "discrete"), True,
                 operator=operator.ne),
    "lt": Binary(ember.lt, np.less, "bool", ("discrete", "discrete"), True, operator=operator.lt),
    "le": Binary(ember.le, np.less_equal, "bool", ("discrete", "discrete"), True,
                 operator=operator.le),
    "gt": Binary(ember.gt, np.greater, "bool", ("discrete", "discrete"), True,
                 operator=operator.gt),
    "ge": Binary(ember.ge, np.greater_equal, "bool", ("discrete", "discrete"), True,
                 operator=operator.ge),
    "logical_and": Binary(ember.logical_and, _logical(np.logical_and), "bool",
                          ("discrete", "discrete"), True),
    "logical_or": Binary(ember.logical_or, _logical(np.logical_or), "bool",
                         ("discrete", "discrete"), True),
    "logical_xor": Binary(ember.logical_xor, _logical(np.logical_xor), "bool",
                          ("discrete", "discrete"), True),
    "bitwise_and": Binary(ember.bitwise_and, np.bitwise_and, "promote", ("any", "any"), True,
                          floats=False, operator=operator.and_),
    "bitwise_or": Binary(ember.bitwise_or, np.bitwise_or, "promote", ("any", "any"), True,
                         floats=False, operator=operator.or_),
    "bitwise_xor": Binary(ember.bitwise_xor, np.bitwise_xor, "promote", ("any", "any"), True,
                          floats=False, operator=operator.xor),
    "atan2": Binary(ember.atan2, np.arctan2, "float", ("any", "any"), True),
    "hypot": Binary(ember.hypot, np.hypot, "float", ("any", "any"), True),
    "copysign": Binary(ember.copysign, np.copysign, "float", ("any", "any"), True),
    "fmax": Binary(ember.fmax, np.fmax, "promote", ("any", "any"), True),
    "fmin": Binary(ember.fmin, np.fmin, "promote", ("any", "any"), True),
    "bitwise_left_shift": Binary(ember.bitwise_left_shift, np.left_shift, "promote",
                                 ("any", "exponent"), False, floats=False,
                                 operator=operator.lshift),
    "bitwise_right_shift": Binary(ember.bitwise_right_shift, np.right_shift, "promote",
                                  ("any", "exponent"), False, floats=False,
                                  operator=operator.rshift),
}  # fmt: skip


def computation_dtype(op: str, *operands: Any) -> ember.dtype:
    """PyTorch's computation dtype: the promoted type, made floating for true division."""
    promoted = ember.result_type(*operands)
    if BINARY[op].result == "float" and not promoted.is_floating_point:
        return ember.get_default_dtype()
    return promoted


def applies(op: str, compute: ember.dtype, *dtypes: ember.dtype) -> bool:
    """Whether PyTorch defines `op` for these operand dtypes (others are error tests)."""
    spec = BINARY[op]
    if compute is BOOL and not spec.bool_result:
        return False
    if op == "pow" and BOOL in dtypes:
        return False
    return spec.floats or not any(d.is_floating_point for d in dtypes)


def data(op: str, side: int, shape: tuple, dt: ember.dtype, rng) -> np.ndarray:
    domain = BINARY[op].domains[side]
    return discrete(shape, dt, rng) if domain == "discrete" else sample(shape, dt, rng, domain)


def expected(op: str, a: Any, b: Any, compute: ember.dtype) -> tuple[np.ndarray, ember.dtype]:
    """The reference result of `op` computed in float64 (or exactly), and its dtype."""
    spec = BINARY[op]
    with np.errstate(all="ignore"):
        values = spec.reference(as_compute(a, compute), as_compute(b, compute))
    return values, BOOL if spec.result == "bool" else compute


def check(op: str, result: ember.Tensor, a: Any, b: Any, compute: ember.dtype) -> None:
    values, out_dtype = expected(op, a, b, compute)
    assert_close(result, values, out_dtype)


DTYPE_PAIRS = [
    (op, a, b)
    for op in BINARY
    for a in DTYPES
    for b in DTYPES
    if applies(op, ember.promote_types(a, b), a, b)
]


@pytest.mark.parametrize(("op", "dtype", "other_dtype"), DTYPE_PAIRS, ids=pid)
def test_binary_dtype_pairs(
    device: str, op: str, dtype: ember.dtype, other_dtype: ember.dtype, rng
) -> None:
    a, b = data(op, 0, (3, 1), dtype, rng), data(op, 1, (4,), other_dtype, rng)
    ta, tb = make(a, device), make(b, device)
    check(op, BINARY[op].function(ta, tb), a, b, computation_dtype(op, ta, tb))


SHAPE_PAIRS = [
    ((), ()),
    ((5,), ()),
    ((), (5,)),
    ((3, 4), (3, 4)),
    ((3, 1), (1, 4)),
    ((4,), (3, 4)),
    ((2, 1, 4), (3, 1)),
    ((1, 3, 1, 2), (2, 1, 3, 1)),
    ((0,), (1,)),
    ((2, 0), (2, 1)),
    ((0, 3), (3,)),
    ((1,), (0,)),
]
SHAPE_CASES = [
    (op, dt, shapes)
    for op in BINARY
    for dt in (ember.float32, ember.int64)
    if applies(op, dt, dt)
    for shapes in SHAPE_PAIRS
]


@pytest.mark.parametrize(("op", "dtype", "shapes"), SHAPE_CASES, ids=pid)
def test_binary_broadcasting(device: str, op: str, dtype: ember.dtype, shapes, rng) -> None:
    a, b = data(op, 0, shapes[0], dtype, rng), data(op, 1, shapes[1], dtype, rng)
    result = BINARY[op].function(make(a, device), make(b, device))
    assert tuple(result.shape) == np.broadcast_shapes(*shapes)
    check(op, result, a, b, computation_dtype(op, dtype, dtype))


LAYOUT_PAIRS = [
    ("transposed", "contiguous"),
    ("contiguous", "strided"),
    ("expanded", "transposed"),
    ("strided", "strided"),
    ("transposed", "transposed"),
]
LAYOUT_CASES = [
    (op, dt, layouts)
    for op in BINARY
    for dt in (ember.float32, ember.int64)
    if applies(op, dt, dt)
    for layouts in LAYOUT_PAIRS
]


@pytest.mark.parametrize(("op", "dtype", "layouts"), LAYOUT_CASES, ids=pid)
def test_binary_strided_operands(device: str, op: str, dtype: ember.dtype, layouts, rng) -> None:
    ta, a = laid_out(data(op, 0, (3, 4), dtype, rng), layouts[0], device)
    tb, b = laid_out(data(op, 1, (3, 4), dtype, rng), layouts[1], device)
    before = host(ta), host(tb)
    check(op, BINARY[op].function(ta, tb), a, b, computation_dtype(op, ta, tb))
    np.testing.assert_array_equal(host(ta), before[0])
    np.testing.assert_array_equal(host(tb), before[1])


# -- Python scalars are weak; 0-d tensors rank below dimensioned tensors -------------------

SCALARS = [True, 3, 0.5]
SCALAR_CASES = [
    (op, dt, scalar)
    for op, spec in BINARY.items()
    if spec.operator is not None
    for dt in DTYPES
    for scalar in SCALARS
    if applies(op, computation_dtype(op, dt, scalar), dt)
    and (spec.floats or not isinstance(scalar, float))
    and not (op == "pow" and isinstance(scalar, bool))
]


@pytest.mark.parametrize(("op", "dtype", "scalar"), SCALAR_CASES, ids=pid)
def test_binary_scalar_operands(device: str, op: str, dtype: ember.dtype, scalar, rng) -> None:
    spec = BINARY[op]
    fn = spec.operator
    assert fn is not None
    left = data(op, 0, (2, 3), dtype, rng)
    tensor = make(left, device)
    compute = computation_dtype(op, tensor, scalar)
    check(op, fn(tensor, scalar), left, np.asarray(scalar), compute)
    # The scalar on the left: the tensor is then the divisor or the exponent.
    right = data(op, 1, (2, 3), dtype, rng)
    check(op, fn(scalar, make(right, device)), np.asarray(scalar), right, compute)


@pytest.mark.parametrize(
    ("dtype", "other_dtype"), [(a, b) for a in DTYPES for b in DTYPES], ids=pid
)
def test_zero_dim_operand_ranks_below_dimensioned(
    device: str, dtype: ember.dtype, other_dtype: ember.dtype, rng
) -> None:
    a, b = sample((4,), dtype, rng), sample((), other_dtype, rng)
    ta, tb = make(a, device), make(b, device)
    want = ember.result_type(ta, tb)
    for result in (ember.add(ta, tb), ember.add(tb, ta)):
        assert result.dtype is want
        assert_close(result, as_compute(a, want) + as_compute(b, want), want)


def test_scalar_promotion_examples(device: str) -> None:
    ints = make(np.array([1, 2], dtype=np.int32), device)
    halves = make(np.array([1, 2], dtype=np.float16), device)
    bools = make(np.array([True, False]), device)
    assert (ints + 2.5).dtype is ember.float32
    assert (ints + 2).dtype is ember.int32
    assert (halves + 2.5).dtype is ember.float16
    assert (bools + 1).dtype is ember.int64
    assert (bools + True).dtype is BOOL
    assert (bools * 1.5).dtype is ember.float32
    assert (ints + make(np.float64(1.0), device)).dtype is ember.float64
    assert (halves + make(np.float64(1.0), device)).dtype is ember.float16
    assert (ints + make(np.int64(1), device)).dtype is ember.int32
    assert (ints / 2).dtype is ember.float32
    assert (ints // 2).dtype is ember.int32


# -- details --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS, ids=pid)
def test_nan_propagates_and_compares_false(device: str, dtype: ember.dtype) -> None:
    a = make(np.array([np.nan, 1.0, np.nan], dtype=dtype.numpy), device)
    b = make(np.array([0.0, np.nan, np.nan], dtype=dtype.numpy), device)
    assert np.isnan(host(ember.maximum(a, b))).all()
    assert np.isnan(host(ember.minimum(a, b))).all()
    np.testing.assert_array_equal(host(ember.eq(a, b)), [False, False, False])
    np.testing.assert_array_equal(host(ember.ne(a, b)), [True, True, True])
    np.testing.assert_array_equal(host(ember.lt(a, b)), [False, False, False])


@pytest.mark.parametrize("dtype", FLOATS, ids=pid)
def test_float_division_by_zero(device: str, dtype: ember.dtype) -> None:
    a = make(np.array([1.0, -1.0, 0.0], dtype=dtype.numpy), device)
    result = host(ember.div(a, make(np.zeros(3, dtype.numpy), device)))
    np.testing.assert_array_equal(result[:2], [np.inf, -np.inf])
    assert np.isnan(result[2])


@pytest.mark.parametrize("op", ["floor_divide", "remainder", "div_floor", "div_trunc"])
def test_integer_division_by_zero_raises(device: str, op: str) -> None:
    with pytest.raises(RuntimeError, match=r"(?i)zero"):
        BINARY[op].function(make([1, 2], device), make([1, 0], device))


def test_div_rejects_unknown_rounding_mode(device: str) -> None:
    with pytest.raises(ValueError, match="rounding_mode"):
        ember.div(make([1.0], device), make([2.0], device), rounding_mode="round")


@pytest.mark.parametrize("dtype", [ember.int64, ember.float32, ember.float64], ids=pid)
def test_add_and_sub_alpha(device: str, dtype: ember.dtype, rng) -> None:
    a, b = sample((3, 4), dtype, rng), sample((4,), dtype, rng)
    ta, tb = make(a, device), make(b, device)
    a64, b64 = as_compute(a, dtype), as_compute(b, dtype)
    assert_close(ember.add(ta, tb, alpha=2), a64 + 2 * b64, dtype)
    assert_close(ember.sub(ta, tb, alpha=3), a64 - 3 * b64, dtype)
    assert_close(ta.add(tb, alpha=-1), a64 - b64, dtype)


def test_out_argument(device: str, rng) -> None:
    a, b = sample((3, 4), ember.float32, rng), sample((4,), ember.float32, rng)
    out = ember.empty(3, 4, device=device)
    result = ember.add(make(a, device), make(b, device), out=out)
    assert result is out
    assert_close(out, a.astype(np.float64) + b, ember.float32)
    wider = ember.empty(3, 4, dtype=ember.float64, device=device)
    ember.mul(make(a, device), make(b, device), out=wider)
    assert_close(wider, a.astype(np.float64) * b, ember.float64, rtol=1e-6)


def test_out_of_lower_category_is_rejected(device: str) -> None:
    out = ember.zeros(2, dtype=ember.int64, device=device)
    with pytest.raises(RuntimeError):
        ember.add(make([1.5, 2.5], device), make([1.0, 1.0], device), out=out)
    np.testing.assert_array_equal(host(out), [0, 0])


def test_unsigned_subtraction_wraps(device: str) -> None:
    a = make(np.array([0, 1, 5], dtype=np.uint8), device)
    b = make(np.array([1, 2, 3], dtype=np.uint8), device)
    assert_close(a - b, np.array([255, 255, 2]), ember.uint8)


def test_integer_floor_division_and_remainder_signs(device: str) -> None:
    a = make([7, -7, 7, -7], device)
    b = make([2, 2, -2, -2], device)
    assert_close(a // b, np.array([3, -4, -4, 3]), ember.int64)
    assert_close(ember.div(a, b, rounding_mode="trunc"), np.array([3, -3, -3, 3]), ember.int64)
    assert_close(a % b, np.array([1, 1, -1, -1]), ember.int64)
    assert_close(ember.fmod(a, b), np.array([1, -1, 1, -1]), ember.int64)
