"""Elementwise math composites, predicates and their PyTorch aliases, against PyTorch:
values, result dtypes, special values (NaN, infinities, signed zeros) and errors."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember

from ._reference import FLOATS, assert_close, host, make, pid

torch = pytest.importorskip("torch")

SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.5, 1e-3, 7.75]


def _torch(values: Any, dtype: ember.dtype) -> Any:
    array = np.asarray(values)
    if dtype is ember.bfloat16:
        # torch reads no ml_dtypes arrays, and its float32 -> bfloat16 cast turns every NaN
        # negative: hand it the bits themselves, so signbit and copysign see the same NaN
        bits = np.ascontiguousarray(array.astype(dtype.numpy)).view(np.int16)
        return torch.tensor(bits).view(torch.bfloat16)
    return torch.tensor(array, dtype=getattr(torch, dtype.name))


def _same(result: ember.Tensor, want: Any, *, exact: bool = False) -> None:
    """result equals torch's `want`: dtype, shape and values (NaN equal to NaN)."""
    dtype = getattr(ember, str(want.dtype).removeprefix("torch."))
    # torch has no NumPy bfloat16: its values widen exactly to float32 (compared as such)
    expected = want.float().numpy() if dtype is ember.bfloat16 else want.numpy()
    if exact or not dtype.is_floating_point:
        assert result.dtype is dtype
        np.testing.assert_array_equal(host(result).astype(expected.dtype), expected)
    else:
        assert_close(result, expected.astype(np.float64), dtype)


# -- unary composites and aliases -------------------------------------------------------------

UNARY: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "sinc": (ember.sinc, torch.sinc),
    "frac": (ember.frac, torch.frac),
    "fix": (ember.fix, torch.fix),
    "deg2rad": (ember.deg2rad, torch.deg2rad),
    "rad2deg": (ember.rad2deg, torch.rad2deg),
    "logit": (ember.logit, torch.logit),
    "logit_eps": (lambda t: ember.logit(t, eps=0.1), lambda t: torch.logit(t, eps=0.1)),
    "sgn": (ember.sgn, torch.sgn),
    "angle": (ember.angle, torch.angle),
    "nan_to_num": (ember.nan_to_num, torch.nan_to_num),
    "nan_to_num_args": (
        lambda t: ember.nan_to_num(t, nan=1.5, posinf=9.0, neginf=-9.0),
        lambda t: torch.nan_to_num(t, nan=1.5, posinf=9.0, neginf=-9.0),
    ),
    "arccos": (ember.arccos, torch.arccos),
    "arcsinh": (ember.arcsinh, torch.arcsinh),
    "absolute": (ember.absolute, torch.absolute),
    "negative": (ember.negative, torch.negative),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=pid)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_composites_special_values(device: str, op: str, dtype: ember.dtype) -> None:
    ours, theirs = UNARY[op]
    values = np.array([*SPECIAL, 0.25, 0.75, 0.999], dtype=dtype.numpy)
    _same(ours(make(values, device)), theirs(_torch(values, dtype)))


@pytest.mark.parametrize(
    "op", ["deg2rad", "rad2deg", "logit", "sinc", "fix", "sgn", "nan_to_num", "angle"]
)
@pytest.mark.parametrize("dtype", [ember.int64, ember.int32, ember.uint8], ids=pid)
def test_unary_composites_integer_inputs(device: str, op: str, dtype: ember.dtype, rng) -> None:
    ours, theirs = UNARY[op]
    values = rng.integers(0, 5, (2, 3)).astype(dtype.numpy)
    _same(ours(make(values, device)), theirs(_torch(values, dtype)))


def test_frac_of_integers_raises(device: str) -> None:
    with pytest.raises(RuntimeError, match="frac"):
        ember.frac(make([1, 2], device))


def test_positive(device: str) -> None:
    t = make([1.0, -2.0], device)
    assert ember.positive(t) is t and t.positive() is t
    with pytest.raises(RuntimeError, match="bool"):
        ember.positive(make([True], device))


@pytest.mark.parametrize("dtype", FLOATS, ids=pid)
def test_frexp(device: str, dtype: ember.dtype) -> None:
    values = np.array([*SPECIAL, 3.0, 1024.0, -0.375, 6e-5], dtype=dtype.numpy)
    mantissa, exponent = ember.frexp(make(values, device))
    want = torch.frexp(_torch(values, dtype))
    _same(mantissa, want.mantissa, exact=True)
    _same(exponent, want.exponent, exact=True)
    assert make(values, device).frexp().exponent.dtype is ember.int32


def test_frexp_subnormal_float64(device: str) -> None:
    values = np.array([5e-324, 1e-310, -2.2e-308, 1.7e308])
    mantissa, exponent = ember.frexp(make(values, device))
    m, e = np.frexp(values)
    np.testing.assert_array_equal(host(mantissa), m)
    np.testing.assert_array_equal(host(exponent), e)


# -- predicates ----------------------------------------------------------------------------

PREDICATES = ["isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit"]


@pytest.mark.parametrize("dtype", FLOATS, ids=pid)
@pytest.mark.parametrize("op", PREDICATES)
def test_predicates_floats(device: str, op: str, dtype: ember.dtype) -> None:
    values = np.array([*SPECIAL, -math.nan], dtype=dtype.numpy)
    t = make(values, device)
    want = getattr(torch, op)(_torch(values, dtype))
    _same(getattr(ember, op)(t), want)
    _same(getattr(t, op)(), want)


@pytest.mark.parametrize("dtype", [ember.bool, ember.uint8, ember.int8, ember.int64], ids=pid)
@pytest.mark.parametrize("op", PREDICATES)
def test_predicates_integers(device: str, op: str, dtype: ember.dtype) -> None:
    values = np.array([0, 1, 3, 0, 1], dtype=dtype.numpy)
    if dtype.is_signed:
        values[1] = -1
    _same(getattr(ember, op)(make(values, device)), getattr(torch, op)(_torch(values, dtype)))


CLOSE_PAIRS = [
    ([1.0, 2.0, math.inf, -math.inf, math.nan, 0.0], [1.0 + 1e-6, 2.1, math.inf, math.inf,
                                                      math.nan, 1e-9]),
    ([1e10, 1e-10, 3.0, math.inf], [1.00001e10, 1.1e-10, math.inf, 1e308]),
]  # fmt: skip


@pytest.mark.parametrize("pair", range(len(CLOSE_PAIRS)))
@pytest.mark.parametrize(
    "kwargs", [{}, {"equal_nan": True}, {"rtol": 0.0, "atol": 0.2}, {"rtol": 0.1, "atol": 0.0}]
)
def test_isclose_and_allclose(device: str, pair: int, kwargs: dict) -> None:
    a, b = (np.array(v) for v in CLOSE_PAIRS[pair])
    ta, tb = make(a, device), make(b, device)
    want = torch.isclose(torch.tensor(a), torch.tensor(b), **kwargs)
    _same(ember.isclose(ta, tb, **kwargs), want)
    _same(ta.isclose(tb, **kwargs), want)
    assert ember.allclose(ta, tb, **kwargs) == torch.allclose(
        torch.tensor(a), torch.tensor(b), **kwargs
    )
    assert ember.allclose(ta, ta, equal_nan=True) and ta.allclose(ta, equal_nan=True)


def test_isclose_integers_and_broadcasting(device: str) -> None:
    a, b = np.array([[1, 2, 100]]), np.array([[1], [101]])
    want = torch.isclose(torch.tensor(a), torch.tensor(b), rtol=0.01, atol=0)
    _same(ember.isclose(make(a, device), make(b, device), rtol=0.01, atol=0), want)


def test_isclose_errors(device: str) -> None:
    with pytest.raises(RuntimeError, match="dtype"):
        ember.isclose(make([1.0], device), make([1.0], device, ember.float64))
    with pytest.raises(RuntimeError, match="rtol"):
        ember.isclose(make([1.0], device), make([1.0], device), rtol=-1.0)


def test_equal(device: str) -> None:
    a = make([1.0, 2.0, 3.0], device)
    assert ember.equal(a, make([1.0, 2.0, 3.0], device)) and a.equal(a.clone())
    assert not ember.equal(a, make([1.0, 2.0, 4.0], device))
    assert not ember.equal(a, make([[1.0, 2.0, 3.0]], device))  # shapes differ
    assert not ember.equal(make([math.nan], device), make([math.nan], device))
    assert ember.equal(make([1, 2], device), make([1.0, 2.0], device))  # promotes
    assert ember.equal(make(np.zeros((0, 2)), device), make(np.zeros((0, 2)), device))


# -- binary composites ---------------------------------------------------------------------

BINARY: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "logaddexp": (ember.logaddexp, torch.logaddexp),
    "logaddexp2": (ember.logaddexp2, torch.logaddexp2),
    "xlogy": (ember.xlogy, torch.xlogy),
    "heaviside": (ember.heaviside, torch.heaviside),
    "float_power": (ember.float_power, torch.float_power),
    "ldexp": (ember.ldexp, torch.ldexp),
    "nextafter": (ember.nextafter, torch.nextafter),
    "fmax": (ember.fmax, torch.fmax),
    "fmin": (ember.fmin, torch.fmin),
    "copysign": (ember.copysign, torch.copysign),
    "atan2": (ember.arctan2, torch.arctan2),
    "hypot": (ember.hypot, torch.hypot),
    "rsub": (ember.rsub, torch.rsub),
    "rsub_alpha": (lambda a, b: ember.rsub(a, b, alpha=2), lambda a, b: torch.rsub(a, b, alpha=2)),
    "clamp_min": (ember.clamp_min, torch.clamp_min),
    "clamp_max": (ember.clamp_max, torch.clamp_max),
    "divide_floor": (
        lambda a, b: ember.divide(a, b, rounding_mode="floor"),
        lambda a, b: torch.divide(a, b, rounding_mode="floor"),
    ),
    "multiply": (ember.multiply, torch.multiply),
    "subtract": (ember.subtract, torch.subtract),
    "true_divide": (ember.true_divide, torch.true_divide),
    "greater": (ember.greater, torch.greater),
    "greater_equal": (ember.greater_equal, torch.greater_equal),
    "less": (ember.less, torch.less),
    "less_equal": (ember.less_equal, torch.less_equal),
    "not_equal": (ember.not_equal, torch.not_equal),
}
EDGES = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.5, 3.0]


@pytest.mark.parametrize("dtype", FLOATS, ids=pid)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_composites_grid(device: str, op: str, dtype: ember.dtype) -> None:
    """Every pair of edge values (NaN, infinities, signed zeros, ...), broadcast as a grid."""
    a = np.array(EDGES, dtype=dtype.numpy).reshape(-1, 1)
    b = np.array(EDGES, dtype=dtype.numpy)
    ours, theirs = BINARY[op]
    if op == "nextafter" and dtype is ember.float16:  # as PyTorch on the CPU
        with pytest.raises(RuntimeError, match="nextafter"):
            ours(make(a, device), make(b, device))
        with pytest.raises(RuntimeError, match="nextafter"):
            make(a, device).nextafter_(make(a, device))
        return
    want = theirs(_torch(a, dtype), _torch(b, dtype))
    _same(ours(make(a, device), make(b, device)), want, exact=op == "nextafter")


@pytest.mark.parametrize("op", ["xlogy", "float_power", "rsub", "copysign"])
@pytest.mark.parametrize("scalar", [2, 0.5])
def test_binary_composites_scalar_operand(device: str, op: str, scalar: Any, rng) -> None:
    ours, theirs = BINARY[op]
    values = rng.uniform(0.5, 3.0, (2, 3)).astype(np.float32)
    t = make(values, device)
    _same(ours(t, scalar), theirs(_torch(values, ember.float32), scalar))
    if op == "xlogy":  # a scalar x as well
        _same(ours(scalar, t), theirs(scalar, _torch(values, ember.float32)))


@pytest.mark.parametrize("dtype", [ember.int64, ember.int32, ember.bool], ids=pid)
@pytest.mark.parametrize("op", ["xlogy", "float_power", "ldexp", "fmax", "atan2"])
def test_binary_composites_integer_inputs(device: str, op: str, dtype: ember.dtype, rng) -> None:
    ours, theirs = BINARY[op]
    if dtype is ember.bool and op == "ldexp":
        return  # not defined for bool by PyTorch
    a = rng.integers(0, 4, (3, 1)).astype(dtype.numpy)
    b = rng.integers(0, 4, (4,)).astype(dtype.numpy)
    _same(ours(make(a, device), make(b, device)), theirs(_torch(a, dtype), _torch(b, dtype)))


def test_heaviside_needs_one_dtype(device: str) -> None:
    with pytest.raises(RuntimeError, match="heaviside"):
        ember.heaviside(make([1.0], device), make([1.0], device, ember.float64))


@pytest.mark.parametrize("dtype", FLOATS, ids=pid)
def test_lerp(device: str, dtype: ember.dtype, rng) -> None:
    start = rng.uniform(-2, 2, (3, 4)).astype(dtype.numpy)
    end = rng.uniform(-2, 2, (4,)).astype(dtype.numpy)
    weight = rng.uniform(-0.5, 1.5, (3, 1)).astype(dtype.numpy)
    ts, te, tw = (make(x, device) for x in (start, end, weight))
    s, e, w = (_torch(x, dtype) for x in (start, end, weight))
    _same(ember.lerp(ts, te, tw), torch.lerp(s, e, w))
    for scalar in (0.25, 0.75, 1.0):
        _same(ember.lerp(ts, te, scalar), torch.lerp(s, e, scalar))
        _same(ts.lerp(te, scalar), torch.lerp(s, e, scalar))
    # weight 1 gives end exactly (the formula switches ends at |w| >= 0.5)
    np.testing.assert_array_equal(host(ember.lerp(ts, te, 1.0)), np.broadcast_to(end, (3, 4)))


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.int64], ids=pid)
def test_addcmul_and_addcdiv(device: str, dtype: ember.dtype, rng) -> None:
    x, a = (rng.integers(-3, 4, (3, 4)).astype(dtype.numpy) for _ in range(2))
    b = rng.choice([-2, -1, 1, 2], (4,)).astype(dtype.numpy)
    tx, ta, tb = (make(v, device) for v in (x, a, b))
    rx, ra, rb = (_torch(v, dtype) for v in (x, a, b))
    _same(ember.addcmul(tx, ta, tb, value=2), torch.addcmul(rx, ra, rb, value=2))
    _same(tx.addcmul(ta, tb), rx.addcmul(ra, rb))
    if dtype.is_floating_point:
        _same(ember.addcdiv(tx, ta, tb, value=-0.5), torch.addcdiv(rx, ra, rb, value=-0.5))
        _same(tx.addcdiv(ta, tb), rx.addcdiv(ra, rb))
    else:
        with pytest.raises(RuntimeError, match="Integer division"):
            ember.addcdiv(tx, ta, tb)


@pytest.mark.parametrize("dtype", [ember.int64, ember.int32, ember.int8, ember.uint8], ids=pid)
def test_gcd_and_lcm(device: str, dtype: ember.dtype, rng) -> None:
    high = 8 if dtype in (ember.int8, ember.uint8) else 1000  # no lcm overflows
    low = 0 if dtype is ember.uint8 else -high
    a = rng.integers(low, high, (5, 1)).astype(dtype.numpy)
    b = rng.integers(low, high, (6,)).astype(dtype.numpy)
    a[0, 0], b[0], b[1] = 0, 0, a[1, 0]
    ta, tb = make(a, device), make(b, device)
    ra, rb = _torch(a, dtype), _torch(b, dtype)
    _same(ember.gcd(ta, tb), torch.gcd(ra, rb))
    _same(ta.lcm(tb), torch.lcm(ra, rb))
    with pytest.raises(RuntimeError, match="gcd"):
        ember.gcd(make([1.0], device), make([2.0], device))


def test_gcd_of_consecutive_fibonacci_numbers(device: str) -> None:
    """The slowest case of Euclid's algorithm terminates with the right answer."""
    fib = [1, 1]
    while len(fib) < 90:
        fib.append(fib[-1] + fib[-2])
    a, b = np.array(fib[1:]), np.array(fib[:-1])
    result = ember.gcd(make(a, device), make(b, device))
    np.testing.assert_array_equal(host(result), np.gcd(a, b))


@pytest.mark.parametrize("dtype", [ember.int64, ember.int32, ember.int8, ember.uint8], ids=pid)
def test_bit_shifts_edge_amounts(device: str, dtype: ember.dtype) -> None:
    """Shifting by the width or more, or by a negative amount, as PyTorch does."""
    bits = 8 * dtype.itemsize
    a = np.array([5, 100, 1, 3, 7, 0], dtype=dtype.numpy).reshape(-1, 1)
    if dtype.is_signed:
        a[1:3, 0] = [-5, -1]
    amounts = [0, 1, bits - 1, bits, bits + 3] + ([-1] if dtype.is_signed else [])
    b = np.array(amounts, dtype=dtype.numpy)
    ta, tb = make(a, device), make(b, device)
    ra, rb = _torch(a, dtype), _torch(b, dtype)
    _same(ember.bitwise_left_shift(ta, tb), torch.bitwise_left_shift(ra, rb))
    _same(ta >> tb, ra >> rb)
    _same(ta << 2, ra << 2)
    with pytest.raises(TypeError):
        ember.bitwise_left_shift(make([1.0], device), 1)


@pytest.mark.parametrize("op", ["logaddexp", "xlogy", "float_power", "ldexp", "atan2", "fmax"])
def test_out_argument(device: str, op: str, rng) -> None:
    ours, theirs = BINARY[op]
    a, b = rng.uniform(0.5, 2.0, (2, 3)), rng.integers(1, 3, (3,)).astype(np.float64)
    out = make(np.zeros((2, 3)), device)
    assert ours(make(a, device), make(b, device), out=out) is out
    _same(out, theirs(torch.tensor(a), torch.tensor(b)))
    with pytest.raises(RuntimeError, match="shape"):
        ours(make(a, device), make(b, device), out=make(np.zeros(3), device))
    leaf = make(a, device).requires_grad_()
    with pytest.raises(RuntimeError, match="out="):
        ours(leaf, make(b, device), out=out)
