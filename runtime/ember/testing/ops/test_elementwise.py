"""Unary elementwise ops, clamp and where: values, result dtypes, layouts, special values."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import pytest

import ember

from ._reference import (
    BOOL,
    ERF,
    FLOATS,
    INTS,
    assert_close,
    host,
    laid_out,
    make,
    pid,
    sample,
    shape_id,
    shape_layouts,
)


class Unary(NamedTuple):
    reference: Any  # float64 NumPy function, or exact for integer results
    domain: str  # input domain (see _reference.sample)
    integers: str | None  # "same" (keeps the dtype), "float" (default float), None (untested)
    bools: str | None


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + ERF(x / math.sqrt(2.0)))


UNARY: dict[str, Unary] = {
    "neg": Unary(np.negative, "any", "same", None),
    "abs": Unary(np.abs, "any", "same", None),
    # PyTorch's sign(nan) is 0 (pytorch/pytorch#41245), unlike NumPy's nan.
    "sign": Unary(lambda x: np.where(np.isnan(x), 0.0, np.sign(x)), "any", "same", "same"),
    "exp": Unary(np.exp, "any", "float", "float"),
    "log": Unary(np.log, "positive", "float", "float"),
    "log1p": Unary(np.log1p, "log1p", "float", "float"),
    "expm1": Unary(np.expm1, "any", "float", "float"),
    "sqrt": Unary(np.sqrt, "positive", "float", "float"),
    "rsqrt": Unary(lambda x: 1.0 / np.sqrt(x), "positive", "float", "float"),
    "sin": Unary(np.sin, "any", "float", "float"),
    "cos": Unary(np.cos, "any", "float", "float"),
    "tanh": Unary(np.tanh, "any", "float", "float"),
    "sigmoid": Unary(_sigmoid, "any", "float", "float"),
    "relu": Unary(lambda x: np.maximum(x, 0), "any", "same", None),
    "gelu": Unary(_gelu, "any", None, None),
    "erf": Unary(ERF, "any", "float", "float"),
    "floor": Unary(np.floor, "rounding", "same", None),
    "ceil": Unary(np.ceil, "rounding", "same", None),
    "round": Unary(np.round, "rounding", "same", None),
    "trunc": Unary(np.trunc, "rounding", "same", None),
    "reciprocal": Unary(lambda x: 1.0 / x, "nonzero", "float", "float"),
    "acos": Unary(np.arccos, "unit", "float", "float"),
    "asin": Unary(np.arcsin, "unit", "float", "float"),
    "atan": Unary(np.arctan, "any", "float", "float"),
    "sinh": Unary(np.sinh, "any", "float", "float"),
    "cosh": Unary(np.cosh, "any", "float", "float"),
    "tan": Unary(np.tan, "any", "float", "float"),
    "asinh": Unary(np.arcsinh, "any", "float", "float"),
    "acosh": Unary(np.arccosh, "above_one", "float", "float"),
    "atanh": Unary(np.arctanh, "unit", "float", "float"),
    "log2": Unary(np.log2, "positive", "float", "float"),
    "log10": Unary(np.log10, "positive", "float", "float"),
    "exp2": Unary(np.exp2, "any", "float", "float"),
}


def _dtypes(spec: Unary) -> list[ember.dtype]:
    return [
        *FLOATS,
        *(INTS if spec.integers else ()),
        *((BOOL,) if spec.bools else ()),
    ]


def result_dtype(name: str, dt: ember.dtype) -> ember.dtype:
    spec = UNARY[name]
    if dt.is_floating_point:
        return dt
    rule = spec.bools if dt is BOOL else spec.integers
    return ember.get_default_dtype() if rule == "float" else dt


def expected(name: str, values: np.ndarray, dt: ember.dtype) -> np.ndarray:
    out = result_dtype(name, dt)
    if out.is_floating_point:
        with np.errstate(all="ignore"):
            return UNARY[name].reference(values.astype(np.float64))
    if dt is BOOL:
        return values.copy()  # sign of a bool is itself
    return UNARY[name].reference(values.astype(np.int64)).astype(out.numpy)


OP_DTYPES = [(name, dt) for name, spec in UNARY.items() for dt in _dtypes(spec)]
SHAPES = [(), (0,), (7,), (3, 4), (2, 3, 4), (2, 0, 3)]


@pytest.mark.parametrize(("op", "dtype"), OP_DTYPES, ids=pid)
@pytest.mark.parametrize("shape", [(), (3, 4)], ids=pid)
def test_unary_dtypes(device: str, op: str, dtype: ember.dtype, shape: tuple, rng) -> None:
    values = sample(shape, dtype, rng, UNARY[op].domain)
    result = getattr(ember, op)(make(values, device))
    assert_close(result, expected(op, values, dtype), result_dtype(op, dtype))


LAYOUT_CASES = [
    (op, dt, shape, layout)
    for op, spec in UNARY.items()
    for dt in (ember.float32, ember.int64)
    if dt in _dtypes(spec)
    for shape, layout in shape_layouts(SHAPES)
]


@pytest.mark.parametrize(("op", "dtype", "shape", "layout"), LAYOUT_CASES, ids=pid)
def test_unary_layouts(
    device: str, op: str, dtype: ember.dtype, shape: tuple, layout: str, rng
) -> None:
    tensor, values = laid_out(sample(shape, dtype, rng, UNARY[op].domain), layout, device)
    before = host(tensor)
    result = getattr(ember, op)(tensor)
    assert_close(result, expected(op, values, dtype), result_dtype(op, dtype))
    assert result.is_contiguous()
    np.testing.assert_array_equal(host(tensor), before)  # inputs are left alone


@pytest.mark.parametrize("op", [name for name in UNARY if name != "gelu"])  # no Tensor.gelu
def test_unary_method_matches_function(device: str, op: str, rng) -> None:
    tensor = make(sample((5,), ember.float32, rng, UNARY[op].domain), device)
    np.testing.assert_array_equal(host(getattr(tensor, op)()), host(getattr(ember, op)(tensor)))


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.5])


@pytest.mark.parametrize("op", [name for name in UNARY if name != "gelu"])
@pytest.mark.parametrize("dtype", FLOATS, ids=pid)
def test_unary_special_values(device: str, op: str, dtype: ember.dtype) -> None:
    values = SPECIAL.astype(dtype.numpy)
    result = getattr(ember, op)(make(values, device))
    assert_close(result, expected(op, values, dtype), dtype)


def test_round_is_half_to_even(device: str) -> None:
    values = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5])
    for dt in FLOATS:
        result = ember.round(make(values, device, dt))
        np.testing.assert_array_equal(host(result), [0.0, 2.0, 2.0, -0.0, -2.0, -2.0, 4.0])


def test_neg_wraps_unsigned(device: str) -> None:
    result = ember.neg(make(np.array([0, 1, 255], dtype=np.uint8), device))
    assert_close(result, np.array([0, 255, 1]), ember.uint8)


def test_integer_float_ops_follow_default_dtype(device: str) -> None:
    values = make([1, 2, 3], device)
    ember.set_default_dtype(ember.float64)
    try:
        result = ember.exp(values)
    finally:
        ember.set_default_dtype(ember.float32)
    assert_close(result, np.exp([1.0, 2.0, 3.0]), ember.float64)


# -- clamp ----------------------------------------------------------------------------------

CLAMP_BOUNDS = [(-0.5, 0.5), (None, 0.5), (-0.5, None), (1.0, -1.0)]


@pytest.mark.parametrize("dtype", FLOATS, ids=pid)
@pytest.mark.parametrize(("low", "high"), CLAMP_BOUNDS, ids=pid)
def test_clamp_scalars(device: str, dtype: ember.dtype, low, high, rng) -> None:
    values = sample((3, 4), dtype, rng)
    reference = values.astype(np.float64)
    if low is not None:
        reference = np.maximum(reference, low)
    if high is not None:
        reference = np.minimum(reference, high)
    tensor = make(values, device)
    assert_close(ember.clamp(tensor, low, high), reference, dtype)
    assert_close(tensor.clamp(min=low, max=high), reference, dtype)
    assert_close(ember.clip(tensor, low, high), reference, dtype)


@pytest.mark.parametrize("dtype", [*INTS, *FLOATS], ids=pid)
def test_clamp_tensor_bounds_broadcast(device: str, dtype: ember.dtype, rng) -> None:
    values = sample((3, 4), dtype, rng)
    low, high = sample((4,), dtype, rng), sample((3, 1), dtype, rng)
    result = ember.clamp(make(values, device), make(low, device), make(high, device))
    reference = np.minimum(np.maximum(values.astype(np.float64), low), high)
    assert_close(result, reference, dtype)


def test_clamp_promotes_integer_input_with_float_bound(device: str) -> None:
    result = ember.clamp(make([1, 2, 3], device), min=1.5)
    assert_close(result, np.array([1.5, 2.0, 3.0]), ember.float32)


def test_clamp_keeps_nan(device: str) -> None:
    result = ember.clamp(make([np.nan, -3.0, 3.0], device), -1.0, 1.0)
    assert_close(result, np.array([np.nan, -1.0, 1.0]), ember.float32)


def test_clamp_requires_a_bound(device: str) -> None:
    with pytest.raises(RuntimeError, match=r"min|max"):
        ember.clamp(make([1.0], device))


# -- where ----------------------------------------------------------------------------------

WHERE_SHAPES = [
    ((3, 4), (3, 4), (3, 4)),
    ((3, 1), (4,), ()),
    ((), (2, 3), (3,)),
    ((2, 1, 3), (4, 1), (1, 3)),
    ((0, 3), (3,), (1,)),
]


@pytest.mark.parametrize("shapes", WHERE_SHAPES, ids=lambda s: "-".join(map(shape_id, s)))
@pytest.mark.parametrize("dtype", [BOOL, ember.int32, ember.float16, ember.float64], ids=pid)
def test_where_broadcasts(device: str, shapes, dtype: ember.dtype, rng) -> None:
    cond_shape, a_shape, b_shape = shapes
    cond = rng.random(cond_shape) < 0.5
    a, b = sample(a_shape, dtype, rng), sample(b_shape, dtype, rng)
    result = ember.where(make(cond, device), make(a, device), make(b, device))
    assert_close(result, np.where(cond, a, b), dtype)


@pytest.mark.parametrize(
    ("dtype", "other_dtype"),
    [(ember.int32, ember.float32), (ember.uint8, ember.int8), (BOOL, ember.int64),
     (ember.float16, ember.float64)],
    ids=pid,
)  # fmt: skip
def test_where_promotes(device: str, dtype: ember.dtype, other_dtype: ember.dtype, rng) -> None:
    cond = rng.random((5,)) < 0.5
    a, b = sample((5,), dtype, rng), sample((5,), other_dtype, rng)
    result = ember.where(make(cond, device), make(a, device), make(b, device))
    want = ember.promote_types(dtype, other_dtype)
    assert_close(result, np.where(cond, a.astype(np.float64), b), want)


def test_where_with_scalars(device: str, rng) -> None:
    cond = rng.random((6,)) < 0.5
    values = sample((6,), ember.float16, rng)
    tensor = make(values, device)
    assert_close(ember.where(make(cond, device), tensor, 0.0), np.where(cond, values, 0.0))
    assert ember.where(make(cond, device), tensor, 0.0).dtype is ember.float16
    assert_close(tensor.where(make(cond, device), -1.0), np.where(cond, values, -1.0))
    ints = ember.where(make(cond, device), make(np.arange(6), device), 7)
    assert_close(ints, np.where(cond, np.arange(6), 7), ember.int64)


def test_where_strided_inputs(device: str, rng) -> None:
    cond, cond_values = laid_out(rng.random((3, 4)) < 0.5, "transposed", device)
    a, a_values = laid_out(sample((3, 4), ember.float32, rng), "strided", device)
    b, b_values = laid_out(sample((3, 4), ember.float32, rng), "expanded", device)
    result = ember.where(cond, a, b)
    assert_close(result, np.where(cond_values, a_values, b_values), ember.float32)
