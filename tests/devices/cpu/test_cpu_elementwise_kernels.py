"""The cpu device's elementwise kernels against NumPy float64 references.

Kernels are called directly (outputs first) on contiguous, transposed, stepped, offset and
broadcast operands, strided outputs, 0-d and zero-size tensors, for every dtype each op
supports; random kernels against a pure-Python Philox4x32-10.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ember._ops.conversion import python_scalar
from ember._tensor import Tensor, make_view

from ._layouts import empty, kernel, tensor

DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"]
INTS = ["uint8", "int8", "int32", "int64"]
FLOATS = ["float16", "float32", "float64"]
TOL = {"float16": (2e-3, 1e-3), "float32": (1e-5, 1e-6), "float64": (1e-12, 1e-12)}
LAYOUTS = ["contiguous", "transposed", "stepped", "broadcast"]


def sample(name: str, shape: tuple[int, ...], seed: int = 0, positive: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name == "bool":
        return rng.random(shape) < 0.5
    if name in FLOATS:
        values = rng.standard_normal(shape) * 2
        return (np.abs(values) + 0.05 if positive else values).astype(name)
    info = np.iinfo(name)
    low = 1 if positive else max(info.min, -100)
    return rng.integers(low, min(info.max, 100), shape, endpoint=True).astype(name)


def assert_matches(actual: Tensor, expected: np.ndarray, name: str) -> None:
    got = actual.numpy()
    if name in TOL:
        rtol, atol = TOL[name]
        np.testing.assert_allclose(
            got.astype(np.float64), expected.astype(name).astype(np.float64), rtol=rtol, atol=atol
        )
    else:
        np.testing.assert_array_equal(got, expected.astype(name))


# --- unary ---------------------------------------------------------------------------------

erf = np.vectorize(math.erf, otypes=[np.float64])
UNARY: dict[str, tuple[Callable[[np.ndarray], np.ndarray], list[str], bool]] = {
    # name: (float64 reference, dtypes, needs positive inputs)
    "neg": (np.negative, INTS + FLOATS, False),
    "abs": (np.abs, DTYPES, False),
    "exp": (np.exp, FLOATS, False),
    "log": (np.log, FLOATS, True),
    "log1p": (np.log1p, FLOATS, True),
    "expm1": (np.expm1, FLOATS, False),
    "sqrt": (np.sqrt, FLOATS, True),
    "sin": (np.sin, FLOATS, False),
    "cos": (np.cos, FLOATS, False),
    "tanh": (np.tanh, FLOATS, False),
    "erf": (erf, FLOATS, False),
    "floor": (np.floor, DTYPES, False),
    "ceil": (np.ceil, DTYPES, False),
    "round": (np.rint, DTYPES, False),
    "trunc": (np.trunc, DTYPES, False),
    "sign": (np.sign, DTYPES, False),
    "rsqrt": (lambda x: 1 / np.sqrt(x), FLOATS, True),
    "reciprocal": (lambda x: 1 / x, FLOATS, True),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), FLOATS, False),
    "relu": (lambda x: np.maximum(x, 0), DTYPES, False),
    "gelu": (lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))), FLOATS, False),
}
UNARY_CASES = [(op, dt) for op, (_, dts, _) in UNARY.items() for dt in dts]


def reference(fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """Integers (and bool) compute in their own dtype, as the kernels wrap; floats in float64."""
    return fn(x.astype(np.float64)) if x.dtype.kind == "f" else fn(x)


@pytest.mark.parametrize(("op", "name"), UNARY_CASES)
def test_unary_matches_numpy(op: str, name: str) -> None:
    fn, _, positive = UNARY[op]
    x = sample(name, (7, 33), positive=positive)
    if x.dtype == np.bool_ and op in ("sign", "relu", "floor", "ceil", "round", "trunc"):
        expected = x
    else:
        expected = reference(fn, x)
    out = empty(x.shape, name)
    kernel(op)(out, tensor(x))
    assert_matches(out, expected, name)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", ["neg", "exp", "sigmoid", "abs"])
def test_unary_strided_operands(op: str, layout: str) -> None:
    x = sample("float32", (1, 37))
    x = np.repeat(x, 5, axis=0) if layout == "broadcast" else sample("float32", (5, 37))
    for strided_out in (False, True):
        out = empty(x.shape, "float32", strided=strided_out)
        kernel(op)(out, tensor(x, layout))
        assert_matches(out, reference(UNARY[op][0], x), "float32")


def test_unary_zero_d_zero_size_and_in_place() -> None:
    x = np.array(1.5, dtype=np.float32)
    out = empty((), "float32")
    kernel("exp")(out, tensor(x))
    assert out.numpy() == pytest.approx(math.exp(1.5), rel=1e-6)
    kernel("neg")(empty((0, 3), "float32"), tensor(np.zeros((0, 3), np.float32)))
    t = tensor(np.array([1.0, -2.0], np.float64))
    kernel("neg")(t, t)
    assert t.numpy().tolist() == [-1.0, 2.0]


def test_unary_float_edges() -> None:
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 89.0, -88.0, -104.0, 2.5, -2.5, 0.5])
    for name in FLOATS:
        values = x.astype(name)
        for op in ("exp", "sigmoid", "round", "relu"):
            out = empty(values.shape, name)
            kernel(op)(out, tensor(values))
            with np.errstate(over="ignore"):
                expected = reference(UNARY[op][0], values).astype(name)
            np.testing.assert_allclose(out.numpy(), expected, rtol=TOL[name][0], atol=0)
    out = empty((3,), "float32")
    kernel("sign")(out, tensor(np.array([np.nan, -0.0, -3.0], np.float32)))
    assert out.numpy().tolist() == [0.0, 0.0, -1.0]  # PyTorch: sign(NaN) is 0


ULP_RANGES = {  # float32 kernels with their own vectorised math: op -> (low, high)
    "exp": (-103.0, 88.7),
    "log": (1e-38, 3e38),
    "tanh": (-10.0, 10.0),
    "erf": (-5.0, 5.0),
    "sigmoid": (-80.0, 80.0),
}


@pytest.mark.parametrize("op", sorted(ULP_RANGES))
def test_float32_math_within_3_ulp(op: str) -> None:
    low, high = ULP_RANGES[op]
    if low > 0:
        x = np.geomspace(low, high, 1_000_003).astype(np.float32)
    else:
        x = np.linspace(low, high, 1_000_003, dtype=np.float32)
    x = np.concatenate([x, np.geomspace(1e-30, 1.0, 1001, dtype=np.float32)])
    out = empty(x.shape, "float32")
    kernel(op)(out, tensor(x))
    exact = reference(UNARY[op][0], x)
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    assert np.max(np.abs(out.numpy() - exact) / ulp) <= 3


def test_float32_math_special_values() -> None:
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, 1e-45], np.float32)
    expected = {
        "log": [np.nan, np.inf, np.nan, -np.inf, -np.inf, np.nan, math.log(float(x[6]))],
        "erf": [np.nan, 1.0, -1.0, 0.0, -0.0, math.erf(-1.0), 1e-45],
        "tanh": [np.nan, 1.0, -1.0, 0.0, -0.0, math.tanh(-1.0), 1e-45],
        "exp": [np.nan, np.inf, 0.0, 1.0, 1.0, math.exp(-1.0), 1.0],
    }
    for op, values in expected.items():
        out = empty(x.shape, "float32")
        kernel(op)(out, tensor(x))
        want = np.array(values, np.float32)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6, atol=0)
        assert (np.signbit(out.numpy()) == np.signbit(want))[~np.isnan(want)].all(), op


def test_unary_rejects_unsupported_dtype() -> None:
    with pytest.raises(RuntimeError, match="exp: no cpu kernel for this op and dtype"):
        kernel("exp")(empty((2,), "int64"), tensor(np.array([1, 2])))


# --- binary --------------------------------------------------------------------------------


def np_floor_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.floor_divide(a, b)


def np_trunc_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        return np.trunc(a / b)
    return (np.abs(a) // np.abs(b) * np.sign(a) * np.sign(b)).astype(a.dtype)


BOOLISH = ["bool", *INTS]
BINARY: dict[str, tuple[Callable[[Any, Any], Any], list[str]]] = {
    "add": (np.add, DTYPES),
    "sub": (np.subtract, INTS + FLOATS),
    "mul": (np.multiply, DTYPES),
    "div": (np.divide, FLOATS),
    "floor_divide": (np_floor_divide, INTS + FLOATS),
    "trunc_divide": (np_trunc_divide, INTS + FLOATS),
    "remainder": (np.remainder, INTS + FLOATS),
    "fmod": (np.fmod, INTS + FLOATS),
    "pow": (np.power, INTS + FLOATS),
    "maximum": (np.maximum, DTYPES),
    "minimum": (np.minimum, DTYPES),
    "bitwise_and": (np.bitwise_and, BOOLISH),
    "bitwise_or": (np.bitwise_or, BOOLISH),
    "bitwise_xor": (np.bitwise_xor, BOOLISH),
    "eq": (np.equal, DTYPES),
    "ne": (np.not_equal, DTYPES),
    "lt": (np.less, DTYPES),
    "le": (np.less_equal, DTYPES),
    "gt": (np.greater, DTYPES),
    "ge": (np.greater_equal, DTYPES),
    "logical_and": (np.logical_and, DTYPES),
    "logical_or": (np.logical_or, DTYPES),
    "logical_xor": (np.logical_xor, DTYPES),
}
BINARY_CASES = [(op, dt) for op, (_, dts) in BINARY.items() for dt in dts]
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"}
DIVISIONS = {"div", "floor_divide", "trunc_divide", "remainder", "fmod"}


def binary_inputs(op: str, name: str, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    a = sample(name, shape, seed=1)
    b = sample(name, shape, seed=2, positive=op in DIVISIONS and name not in FLOATS)
    if op == "pow":
        a = sample(name, shape, seed=1, positive=name in FLOATS)
        b = np.random.default_rng(3).integers(0, 4, shape).astype(name)
        if name in FLOATS:
            b = b + np.float64(0.5).astype(name)
    if op in COMPARISONS and name != "bool":
        b[::3] = a[::3]  # exercise equality
    return a, b


def binary_reference(op: str, a: Any, b: Any, name: str) -> np.ndarray:
    fn = BINARY[op][0]
    if name in FLOATS:
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    with np.errstate(all="ignore"):
        return np.asarray(fn(a, b))


@pytest.mark.parametrize(("op", "name"), BINARY_CASES)
def test_binary_matches_numpy(op: str, name: str) -> None:
    a, b = binary_inputs(op, name, (9, 41))
    out_name = "bool" if op in COMPARISONS else name
    out = empty(a.shape, out_name)
    kernel(op)(out, tensor(a), tensor(b))
    assert_matches(out, binary_reference(op, a, b, name), out_name)


@pytest.mark.parametrize("layout_b", LAYOUTS)
@pytest.mark.parametrize("layout_a", LAYOUTS)
@pytest.mark.parametrize("op", ["sub", "lt", "floor_divide"])
def test_binary_layouts(op: str, layout_a: str, layout_b: str) -> None:
    name = "int32" if op == "floor_divide" else "float32"
    a, b = binary_inputs(op, name, (6, 35))
    a = np.repeat(a[:1], 6, axis=0) if layout_a == "broadcast" else a
    b = np.repeat(b[:1], 6, axis=0) if layout_b == "broadcast" else b
    out_name = "bool" if op in COMPARISONS else name
    for strided_out in (False, True):
        out = empty(a.shape, out_name, strided=strided_out)
        kernel(op)(out, tensor(a, layout_a), tensor(b, layout_b))
        assert_matches(out, binary_reference(op, a, b, name), out_name)


@pytest.mark.parametrize("name", ["uint8", "int32", "int64", "float16", "float32", "float64"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "pow", "remainder", "maximum", "gt"])
def test_binary_with_python_scalar(op: str, name: str) -> None:
    a, _ = binary_inputs(op, name, (4, 50))
    if op == "remainder":  # a is also a divisor
        a = sample(name, a.shape, positive=True)
    if op == "pow":  # a is base and exponent: keep it positive and small
        a = np.abs(a) % 4 + (np.float64(0.1).astype(name) if name in FLOATS else 0)
    scalar: int | float = 3 if name not in FLOATS else 2.5
    out_name = "bool" if op in COMPARISONS else name
    for layout in ("contiguous", "transposed"):
        out = empty(a.shape, out_name)
        kernel(op)(out, tensor(a, layout), scalar)
        assert_matches(out, binary_reference(op, a, np.array(scalar, name), name), out_name)
        out = empty(a.shape, out_name, strided=True)
        kernel(op)(out, scalar, tensor(a, layout))
        assert_matches(out, binary_reference(op, np.array(scalar, name), a, name), out_name)


def test_binary_broadcast_shapes_0d_and_empty() -> None:
    a = sample("float64", (3, 1, 5))
    b = sample("float64", (4, 1), seed=5)
    shape = (3, 4, 5)
    ta, tb = tensor(a), tensor(b)
    va = make_view(ta, 0, shape, (5, 0, 1))
    vb = make_view(tb, 0, shape, (0, 1, 0))
    out = empty(shape, "float64")
    kernel("mul")(out, va, vb)
    assert_matches(out, a * b, "float64")
    out0 = empty((), "float64")
    kernel("add")(out0, tensor(np.array(2.0)), tensor(np.array(0.5)))
    assert out0.numpy() == 2.5
    kernel("add")(out0, tensor(np.array(2.0)), -1.0)
    assert out0.numpy() == 1.0
    row = sample("float64", (5,), seed=6)
    kernel("sub")(out, va, tensor(row))  # a lower-rank operand broadcasts by itself
    assert_matches(out, np.broadcast_to(a, shape) - row, "float64")
    zero = tensor(np.zeros((0, 4), np.float32))
    kernel("add")(empty((0, 4), "float32"), zero, zero)
    kernel("add")(empty((0, 4), "float32"), zero, 1.0)


def test_binary_in_place_aliasing() -> None:
    x = sample("float32", (100_000,))
    t = tensor(x)
    kernel("add")(t, t, t)
    assert_matches(t, x.astype(np.float64) * 2, "float32")


def test_integer_semantics_follow_pytorch() -> None:
    a = np.array([-7, 7, -7, 7, np.iinfo(np.int64).min], np.int64)
    b = np.array([2, -2, -2, 2, -1], np.int64)
    out = empty(a.shape, "int64")
    kernel("floor_divide")(out, tensor(a), tensor(b))
    assert out.numpy().tolist() == [-4, -4, 3, 3, np.iinfo(np.int64).min]
    kernel("remainder")(out, tensor(a), tensor(b))
    assert out.numpy().tolist() == [1, -1, -1, 1, 0]
    kernel("fmod")(out, tensor(a), tensor(b))
    assert out.numpy().tolist() == [-1, 1, -1, 1, 0]
    kernel("trunc_divide")(out, tensor(a), tensor(b))
    assert out.numpy().tolist() == [-3, -3, 3, 3, np.iinfo(np.int64).min]
    base = np.array([2, 1, -1, 3], np.int64)
    powers = empty((4,), "int64")
    kernel("pow")(powers, tensor(base), tensor(np.array([-1, -2, -3, 2], np.int64)))
    assert powers.numpy().tolist() == [0, 1, -1, 9]  # PyTorch's powi for tensor exponents


def test_float_division_semantics() -> None:
    a = np.array([7.5, -7.5, 1.0, -1.0, 0.0, 5.0], np.float64)
    b = np.array([2.0, 2.0, 0.0, 0.0, 3.0, -0.0], np.float64)
    out = empty(a.shape, "float64")
    kernel("floor_divide")(out, tensor(a), tensor(b))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out.numpy(), np.floor_divide(a, b))
        kernel("remainder")(out, tensor(a), tensor(b))
        np.testing.assert_array_equal(out.numpy(), np.remainder(a, b))
    nan = np.array([np.nan, 1.0], np.float32)
    other = np.array([1.0, np.nan], np.float32)
    for op in ("maximum", "minimum"):
        res = empty((2,), "float32")
        kernel(op)(res, tensor(nan), tensor(other))
        assert np.isnan(res.numpy()).all()


def test_binary_rejects_unsupported_dtype() -> None:
    with pytest.raises(RuntimeError, match="bitwise_and: no cpu kernel for this op and dtype"):
        x = tensor(np.ones(3, np.float32))
        kernel("bitwise_and")(empty((3,), "float32"), x, x)


# --- copy_, fill_, arange_, where ----------------------------------------------------------


def convertible(name: str, target: str) -> np.ndarray:
    """Values of dtype `name` that `target` represents after C-cast truncation."""
    if name in FLOATS and target in ("uint8", "bool"):
        return np.abs(sample(name, (5, 31))) * 10
    if name in FLOATS and target == "int8":
        return np.clip(sample(name, (5, 31)) * 10, -120, 120).astype(name)
    return sample(name, (5, 31))


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_copy_converts_every_dtype_pair(dst: str, src: str) -> None:
    x = convertible(src, dst)
    expected = x.astype(dst)
    for layout in ("contiguous", "transposed"):
        for strided_out in (False, True):
            out = empty(x.shape, dst, strided=strided_out)
            kernel("copy_")(out, tensor(x, layout))
            if dst == "float16" and src in ("float64", "int64", "int32"):
                assert_matches(out, x.astype(np.float64), dst)
            else:
                np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize(("src", "dst"), [("float32", "float32"), ("int8", "float64")])
def test_copy_transposing_in_tiles(src: str, dst: str) -> None:
    x = sample(src, (3, 70, 45))
    base = tensor(np.ascontiguousarray(x.transpose(2, 0, 1)))  # memory order (45, 3, 70)
    permuted = make_view(base, 0, x.shape, (base._strides[1], base._strides[2], base._strides[0]))
    out = empty(x.shape, dst)
    kernel("copy_")(out, permuted)
    np.testing.assert_array_equal(out.numpy(), x.astype(dst))
    back = make_view(empty((45, 3, 70), src), 0, x.shape, (70, 1, 210))
    kernel("copy_")(back, tensor(x))  # the strided side is the destination
    np.testing.assert_array_equal(back.numpy(), x)


def test_copy_float_to_int_wraps_like_pytorch() -> None:
    out = empty((4,), "uint8")
    kernel("copy_")(out, tensor(np.array([300.0, -1.0, 2.9, -2.9], np.float32)))
    assert out.numpy().tolist() == [44, 255, 2, 254]
    out = empty((3,), "bool")
    kernel("copy_")(out, tensor(np.array([np.nan, 0.0, -0.0], np.float32)))
    assert out.numpy().tolist() == [True, False, False]


def test_copy_large_broadcast_0d_and_empty() -> None:
    x = sample("float32", (1 << 20,))
    out = empty(x.shape, "float32")
    kernel("copy_")(out, tensor(x))
    np.testing.assert_array_equal(out.numpy(), x)
    out16 = empty(x.shape, "float16")
    kernel("copy_")(out16, tensor(x))
    np.testing.assert_array_equal(out16.numpy(), x.astype(np.float16))
    row = sample("int32", (1, 7))
    out = empty((5, 7), "int64")
    kernel("copy_")(out, tensor(np.repeat(row, 5, axis=0), "broadcast"))
    np.testing.assert_array_equal(out.numpy(), np.repeat(row, 5, axis=0))
    out0 = empty((), "float64")
    kernel("copy_")(out0, tensor(np.array(7, np.int8)))
    assert out0.numpy() == 7.0
    kernel("copy_")(empty((0,), "int8"), tensor(np.zeros(0, np.float32)))


@pytest.mark.parametrize("name", DTYPES)
def test_fill(name: str) -> None:
    for value in (True, 3, -2, 2.75):
        if name in ("bool", "uint8") and value == -2:
            continue
        for strided in (False, True):
            out = empty((4, 9), name, strided=strided)
            kernel("fill_")(out, python_scalar(value, out.dtype))
            expected = np.full((4, 9), value).astype(name)
            np.testing.assert_array_equal(out.numpy(), expected)
    out = empty((3,), name)
    kernel("fill_")(out, 0)
    assert not out.numpy().any()


@pytest.mark.parametrize("name", [*INTS, *FLOATS])
def test_arange(name: str) -> None:
    out = empty((50,), name)
    step: int | float = 0.5 if name in FLOATS else 2
    kernel("arange_")(out, -3 if name != "uint8" else 1, step)
    start = -3 if name != "uint8" else 1
    np.testing.assert_array_equal(out.numpy(), (start + np.arange(50) * step).astype(name))
    base = empty((10,), "float64")
    kernel("arange_")(make_view(base, 4, (6,), (1,)), 1.0, 0.25)
    assert base.numpy()[4:].tolist() == [1.0, 1.25, 1.5, 1.75, 2.0, 2.25]


@pytest.mark.parametrize("name", ["bool", "int8", "float16", "int32", "float64"])
def test_where(name: str) -> None:
    cond = sample("bool", (6, 13), seed=7)
    a, b = sample(name, (6, 13), seed=1), sample(name, (6, 13), seed=2)
    out = empty(a.shape, name)
    kernel("where")(out, tensor(cond), tensor(a), tensor(b))
    np.testing.assert_array_equal(out.numpy(), np.where(cond, a, b))
    out = empty(a.shape, name, strided=True)
    b_row = np.repeat(b[:1], 6, axis=0)
    kernel("where")(
        out, tensor(cond, "transposed"), tensor(a, "stepped"), tensor(b_row, "broadcast")
    )
    np.testing.assert_array_equal(out.numpy(), np.where(cond, a, b_row))


# --- random --------------------------------------------------------------------------------

M32 = 0xFFFFFFFF


def philox(counter: tuple[int, int, int, int], key: tuple[int, int]) -> tuple[int, ...]:
    """Random123's Philox4x32-10, in Python: the reference the kernels must match."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for round_ in range(10):
        if round_:
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & M32, (p0 >> 32) ^ c3 ^ k1, p0 & M32
    return c0, c1, c2, c3


def philox_c(counter: tuple[int, ...], key: tuple[int, ...]) -> tuple[int, ...]:
    from ember_cpu._lib import ffi, lib

    out = ffi.new("uint32_t[4]")
    lib.em_philox4x32_10(ffi.new("uint32_t[4]", counter), ffi.new("uint32_t[2]", key), out)
    return tuple(out)


KNOWN_ANSWERS = [  # Random123's kat_vectors for philox4x32_10
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((M32,) * 4, (M32, M32), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]


@pytest.mark.parametrize(("counter", "key", "expected"), KNOWN_ANSWERS)
def test_philox_known_answers(counter: Any, key: Any, expected: Any) -> None:
    assert philox(counter, key) == expected
    assert philox_c(counter, key) == expected


def words(seed: int, index: int) -> tuple[int, ...]:
    return philox((index & M32, index >> 32, 0, 0), (seed & M32, seed >> 32))


def test_uniform_matches_the_specification() -> None:
    seed, offset = 0x1234_5678_9ABC_DEF0, (1 << 32) - 3  # crosses the counter's 32-bit word
    t16, t32, t64 = empty((8,), "float16"), empty((8,), "float32"), empty((8,), "float64")
    kernel("uniform_")(t16, 0.0, 1.0, seed, offset)
    kernel("uniform_")(t32, 0.0, 1.0, seed, offset)
    kernel("uniform_")(t64, -1.0, 3.0, seed, offset)
    for i in range(8):
        x = words(seed, offset + i)
        assert t16.numpy()[i] == (x[0] >> 21) * 2.0**-11  # float16: 11 bits, exact, below 1
        assert t32.numpy()[i] == (x[0] >> 8) * 2.0**-24
        u = ((x[0] << 32 | x[1]) >> 11) * 2.0**-53
        assert t64.numpy()[i] == -1.0 + u * 4.0


def test_normal_and_random_match_the_specification() -> None:
    seed, offset = 42, 1000
    t64 = empty((6,), "float64")
    kernel("normal_")(t64, 1.0, 2.0, seed, offset)
    ints = empty((6,), "int64")
    kernel("random_")(ints, -5, 1 << 40, seed, offset)
    t32 = empty((6,), "float32")
    kernel("normal_")(t32, 0.0, 1.0, seed, offset)
    for i in range(6):
        x = words(seed, offset + i)
        u1 = (((x[0] << 32 | x[1]) >> 11) + 1) * 2.0**-53
        u2 = ((x[2] << 32 | x[3]) >> 11) * 2.0**-53
        z = math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)
        assert t64.numpy()[i] == pytest.approx(1.0 + 2.0 * z, rel=1e-14, abs=1e-14)
        assert ints.numpy()[i] == (x[0] << 32 | x[1]) % ((1 << 40) + 5) - 5
        v1 = ((x[0] >> 8) + 1) * 2.0**-24
        v2 = (x[1] >> 8) * 2.0**-24
        z32 = math.sqrt(-2 * math.log(v1)) * math.cos(2 * math.pi * v2)
        assert t32.numpy()[i] == pytest.approx(z32, rel=1e-5, abs=1e-5)


@pytest.mark.parametrize("name", FLOATS)
def test_uniform_is_deterministic_and_offset_addressed(name: str) -> None:
    a, b, c = empty((1000,), name), empty((1000,), name), empty((1000,), name)
    kernel("uniform_")(a, 0.0, 1.0, 7, 0)
    kernel("uniform_")(b, 0.0, 1.0, 7, 0)
    kernel("uniform_")(c, 0.0, 1.0, 7, 1000)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())
    shifted = empty((990,), name)
    kernel("uniform_")(shifted, 0.0, 1.0, 7, 10)
    np.testing.assert_array_equal(shifted.numpy(), a.numpy()[10:])
    other_seed = empty((1000,), name)
    kernel("uniform_")(other_seed, 0.0, 1.0, 8, 0)
    assert not np.array_equal(a.numpy(), other_seed.numpy())


def test_random_strided_targets_use_logical_indices() -> None:
    flat = empty((6, 10), "float32")
    kernel("normal_")(flat, 0.0, 1.0, 3, 5)
    strided = empty((6, 10), "float32", strided=True)
    kernel("normal_")(strided, 0.0, 1.0, 3, 5)
    np.testing.assert_array_equal(strided.numpy(), flat.numpy())
    base = empty((10, 6), "float32")
    transposed = make_view(base, 0, (6, 10), (1, 6))
    kernel("normal_")(transposed, 0.0, 1.0, 3, 5)
    np.testing.assert_array_equal(transposed.numpy(), flat.numpy())
    scalar = empty((), "float32")
    kernel("normal_")(scalar, 0.0, 1.0, 3, 5)
    assert scalar.numpy() == flat.numpy()[0, 0]
    kernel("uniform_")(empty((0, 3), "float64"), 0.0, 1.0, 3, 5)


@pytest.mark.parametrize("name", ["float32", "float64", "float16"])
def test_distribution_moments(name: str) -> None:
    n = 1_000_000
    u, z = empty((n,), name), empty((n,), name)
    kernel("uniform_")(u, -1.0, 3.0, 11, 0)
    kernel("normal_")(z, 2.0, 0.5, 11, n)
    uv, zv = u.numpy().astype(np.float64), z.numpy().astype(np.float64)
    assert uv.min() >= -1.0 and uv.max() < 3.0
    assert uv.mean() == pytest.approx(1.0, abs=0.01)
    assert uv.var() == pytest.approx(16 / 12, rel=0.01)
    assert zv.mean() == pytest.approx(2.0, abs=0.005)
    assert zv.std() == pytest.approx(0.5, rel=0.01)


@pytest.mark.parametrize("name", DTYPES)
def test_random_integers_in_range(name: str) -> None:
    low, high = (0, 2) if name == "bool" else (0, 200) if name == "uint8" else (-50, 60)
    t = empty((20_000,), name)
    kernel("random_")(t, low, high, 5, 0)
    values = t.numpy().astype(np.int64)
    assert values.min() == low and values.max() == high - 1
    assert values.mean() == pytest.approx((low + high - 1) / 2, abs=(high - low) * 0.02)


def test_random_full_int64_range() -> None:
    t = empty((1000,), "int64")
    kernel("random_")(t, -(1 << 63), 1 << 63, 9, 0)
    expected = [((x[0] << 32 | x[1]) - (1 << 63)) for x in (words(9, i) for i in range(1000))]
    assert t.numpy().tolist() == expected


def test_randperm() -> None:
    n = 100_000
    out = empty((n,), "int64")
    kernel("randperm_")(out, 123, 77)
    perm = out.numpy().copy()
    assert sorted(perm.tolist()) == list(range(n))
    again = empty((n,), "int64")
    kernel("randperm_")(again, 123, 77)
    np.testing.assert_array_equal(again.numpy(), perm)
    small = empty((50,), "int64", strided=True)
    kernel("randperm_")(small, 123, 77)
    keys = [(x[0] << 32 | x[1]) for x in (words(123, 77 + i) for i in range(50))]
    assert small.numpy().tolist() == sorted(range(50), key=lambda i: keys[i])
    kernel("randperm_")(empty((0,), "int64"), 1, 0)


def test_every_table_expression_is_rendered() -> None:
    from ember.plugins import expressions
    from ember_cpu._lib import lib

    for table in (expressions.UNARY, expressions.BINARY):
        for op, row in table.items():
            for name in DTYPES:
                rendered = lib.em_kernel_id(f"{op}.{name}".encode()) >= 0
                assert rendered == (expressions.family(name) in row), (op, name)
    for dst in DTYPES:
        for src in DTYPES:
            assert lib.em_kernel_id(f"copy.{dst}.{src}".encode()) >= 0
