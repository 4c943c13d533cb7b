"""The cpu device's reduction kernels against NumPy float64/int64 references.

Kernels are called directly (outputs first), on contiguous, transposed, stepped and
broadcast inputs, 0-d and zero-size ones, for every dtype.
"""

from __future__ import annotations

import numpy as np
import pytest

from ember import _dtype
from ember._tensor import Tensor, empty_tensor, make_view

from ._layouts import CPU, kernel, tensor

DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"]
FLOATS = {"float16", "float32", "float64"}
LAYOUTS = ["contiguous", "transposed", "stepped"]
RTOL = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-12}


def broadcast(arr: np.ndarray, shape: tuple[int, ...]) -> tuple[Tensor, np.ndarray]:
    """A zero-stride view of `arr` (size 1 where broadcast) as `shape`, and its values."""
    base = tensor(arr)
    strides = tuple(
        0 if n == 1 and s != 1 else st
        for n, s, st in zip(arr.shape, shape, base._strides, strict=True)
    )
    return make_view(base, 0, shape, strides), np.broadcast_to(arr, shape)


def sample(name: str, shape: tuple[int, ...], seed: int = 0, near_one: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name == "bool":
        return rng.random(shape) < 0.5
    if name in FLOATS:
        values = 1 + 0.01 * rng.standard_normal(shape) if near_one else rng.standard_normal(shape)
        return values.astype(name)
    low, high = {"uint8": (0, 10), "int8": (-9, 10), "int32": (-100, 100), "int64": (-1000, 1000)}[
        name
    ]
    if near_one:
        low, high = (0, 3) if name == "uint8" else (-2, 3)
    return rng.integers(low, high, shape).astype(name)


def out_dtype(op: str, name: str) -> str:
    if op in ("any", "all"):
        return "bool"
    if op in ("sum", "prod") and name not in FLOATS:
        return "int64"
    return name


def reference(op: str, arr: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
    wide = arr.astype(np.float64 if arr.dtype.kind == "f" else np.int64)
    fn = {"sum": np.sum, "prod": np.prod, "amax": np.max, "amin": np.min}.get(op)
    if fn is not None:
        return fn(wide, axis=dims, keepdims=True)
    fn = np.any if op == "any" else np.all
    return fn(arr != 0, axis=dims, keepdims=True)


def run(op: str, a: Tensor, dims: tuple[int, ...], out_name: str) -> np.ndarray:
    shape = tuple(1 if d in dims else n for d, n in enumerate(a._shape))
    out = empty_tensor(shape, _dtype.BY_NAME[out_name], CPU)
    kernel(op)(out, a, dims)
    return out.numpy()


def assert_matches(
    got: np.ndarray, want: np.ndarray, name: str, arr: np.ndarray, dims: tuple
) -> None:
    assert got.shape == want.shape
    if name in FLOATS and got.dtype.kind == "f":
        scale = np.sum(np.abs(arr.astype(np.float64)), axis=dims, keepdims=True) + 1
        np.testing.assert_array_less(np.abs(got.astype(np.float64) - want), RTOL[name] * scale)
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype))


CASES = [
    ((7,), (0,)),
    ((7,), ()),
    ((3, 4, 5), (1,)),
    ((3, 4, 5), (0, 2)),
    ((3, 4, 5), (2, 0)),
    ((3, 4, 5), (0, 1, 2)),
    ((3, 4, 5), (2,)),
    ((3, 4, 5), ()),
    ((64, 33), (0,)),
    ((33, 64), (1,)),
    ((5, 1, 40), (0, 1)),
]


@pytest.mark.parametrize("op", ["sum", "prod", "amax", "amin", "any", "all"])
@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_reductions_match_numpy(op: str, name: str, layout: str) -> None:
    for shape, dims in CASES:
        arr = sample(name, shape, near_one=op == "prod")
        got = run(op, tensor(arr, layout), dims, out_dtype(op, name))
        assert_matches(got, reference(op, arr, dims), name, arr, dims)


@pytest.mark.parametrize("op", ["sum", "prod", "amax", "amin", "any", "all"])
@pytest.mark.parametrize("name", DTYPES)
def test_zero_dim_input(op: str, name: str) -> None:
    arr = sample(name, ())
    got = run(op, tensor(arr), (), out_dtype(op, name))
    assert_matches(got, reference(op, arr, ()), name, arr, ())


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("shape, dims", [((2, 0, 3), (1,)), ((0,), (0,)), ((2, 3, 0), (0, 2))])
def test_zero_size_reductions_give_identity(name: str, shape: tuple, dims: tuple) -> None:
    arr = sample(name, shape)
    for op in ("sum", "prod", "any", "all"):
        got = run(op, tensor(arr), dims, out_dtype(op, name))
        np.testing.assert_array_equal(got, reference(op, arr, dims).astype(got.dtype))


def test_zero_size_kept_dim_writes_nothing() -> None:
    got = run("sum", tensor(np.ones((0, 4), np.float32)), (1,), "float32")
    assert got.shape == (0, 1)


@pytest.mark.parametrize("op", ["sum", "amax", "amin", "any", "all"])
@pytest.mark.parametrize("name", ["float32", "int32", "float16", "float64"])
def test_broadcast_inputs(op: str, name: str) -> None:
    for base_shape, shape, dims in [
        ((1, 6), (5, 6), (0,)),
        ((4, 1), (4, 50), (1,)),
        ((1, 1), (3, 7), (0, 1)),
        ((1, 40), (30, 40), (1,)),
    ]:
        t, arr = broadcast(sample(name, base_shape), shape)
        got = run(op, t, dims, out_dtype(op, name))
        assert_matches(got, reference(op, arr, dims), name, arr, dims)


@pytest.mark.parametrize("op", ["sum", "prod", "amax", "amin", "any", "all"])
@pytest.mark.parametrize("name", ["float32", "int64", "float16", "uint8"])
@pytest.mark.parametrize(
    "shape, dims",
    [((1 << 17,), (0,)), ((3, 70000), (1,)), ((70000, 20), (0,)), ((40000, 3), (0,)),
     ((2, 40000, 3), (1,)), ((300, 400), (0,)), ((300, 400), (1,))],
)  # fmt: skip
def test_large_reductions_use_every_path(op: str, name: str, shape: tuple, dims: tuple) -> None:
    arr = sample(name, shape, seed=3, near_one=op == "prod")
    for layout in ("contiguous", "transposed"):
        got = run(op, tensor(arr, layout), dims, out_dtype(op, name))
        assert_matches(got, reference(op, arr, dims), name, arr, dims)


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_nan_propagates_through_amax_amin(name: str, layout: str) -> None:
    arr = sample(name, (6, 50))
    arr[2, 7] = np.nan
    arr[4, 49] = np.nan
    for op, dims in [("amax", (1,)), ("amin", (1,)), ("amax", (0,)), ("amin", (0, 1))]:
        got = run(op, tensor(arr, layout), dims, name)
        want = reference(op, arr, dims)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got[~np.isnan(got)], want[~np.isnan(want)], rtol=1e-3)
    got = run("any", tensor(np.full((3,), np.nan, name), layout), (0,), "bool")
    assert got.item() is True


def test_sum_to_another_dtype() -> None:
    arr = sample("int32", (4, 9))
    for out_name in ("float32", "float64", "int32", "float16"):
        got = run("sum", tensor(arr), (1,), out_name)
        np.testing.assert_allclose(got, arr.sum(axis=1, keepdims=True))


def test_integer_sum_wraps_like_int64() -> None:
    arr = np.array([2**62, 2**62, 2**62], np.int64)
    got = run("sum", tensor(arr), (0,), "int64")
    assert got[0] == arr.sum()  # numpy wraps the same way


def test_float32_sum_of_16m_elements_is_accurate() -> None:
    arr = np.random.default_rng(1).random(1 << 24, dtype=np.float32)
    got = run("sum", tensor(arr), (0,), "float32")
    want = arr.astype(np.float64).sum()
    assert abs(float(got[0]) - want) <= 1e-6 * want


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_argmax_argmin_match_numpy(op: str, name: str, layout: str) -> None:
    fn = np.argmax if op == "argmax" else np.argmin
    for shape, dim in [((7,), 0), ((3, 4, 5), 1), ((3, 4, 5), 0), ((3, 4, 5), 2), ((40, 70), 0),
                       ((3, 2000), 1)]:  # fmt: skip
        arr = sample(name, shape)
        if name not in FLOATS:  # many ties: the first index must win
            arr = arr // 3 if name != "bool" else arr
        out = empty_tensor(
            tuple(1 if d == dim else n for d, n in enumerate(shape)), _dtype.int64, CPU
        )
        kernel(op)(out, tensor(arr, layout), dim)
        np.testing.assert_array_equal(out.numpy(), fn(arr, axis=dim, keepdims=True))


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("name", ["float32", "float64", "float16"])
def test_argmax_first_nan_wins_and_zero_dim(op: str, name: str) -> None:
    fn = np.argmax if op == "argmax" else np.argmin
    arr = sample(name, (40, 37), seed=5)  # 37 columns: vector lanes and a scalar tail
    arr[3, :5] = np.nan
    arr[9, 2:30:3] = np.nan
    arr[17, 36] = np.nan
    arr[0, 30] = np.nan
    arr[20:, 10] = arr[5, 10]  # ties
    for dim in (0, 1):
        for layout in LAYOUTS:
            out = empty_tensor((1, 37) if dim == 0 else (40, 1), _dtype.int64, CPU)
            kernel(op)(out, tensor(arr, layout), dim)
            np.testing.assert_array_equal(out.numpy(), fn(arr, axis=dim, keepdims=True))
    long_row = sample(name, (3000,), seed=6)  # the vectorised block search, then a NaN
    long_row[2500] = np.nan
    for row in (long_row, long_row[:2000]):
        out = empty_tensor((1,), _dtype.int64, CPU)
        kernel(op)(out, tensor(np.ascontiguousarray(row)), 0)
        assert out.numpy()[0] == fn(row)
    out = empty_tensor((), _dtype.int64, CPU)
    kernel(op)(out, tensor(np.array(3.0)), 0)
    assert out.numpy() == 0


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_cumsum_matches_numpy(name: str, layout: str) -> None:
    acc = name if name in FLOATS else "int64"
    for shape, dim in [((7,), 0), ((3, 4, 5), 1), ((3, 4, 5), 0), ((50, 40), 0), ((3, 0), 1)]:
        arr = sample(name, shape)
        out = empty_tensor(shape, _dtype.BY_NAME[acc], CPU)
        kernel("cumsum")(out, tensor(arr, layout), dim)
        want = np.cumsum(arr.astype(np.float64 if name in FLOATS else np.int64), axis=dim)
        scale = np.cumsum(np.abs(arr.astype(np.float64)), axis=dim) + 1
        assert np.all(
            np.abs(out.numpy().astype(np.float64) - want) <= RTOL[acc] * scale
            if acc in FLOATS
            else out.numpy() == want
        )


def test_cumsum_zero_dim_and_strided_out() -> None:
    out = empty_tensor((), _dtype.float32, CPU)
    kernel("cumsum")(out, tensor(np.array(2.5, np.float32)), 0)
    assert out.numpy() == 2.5
    arr = sample("int32", (6, 5))
    base = empty_tensor((5, 6), _dtype.int64, CPU)
    out = make_view(base, 0, (6, 5), (1, 6))  # a transposed out= view
    kernel("cumsum")(out, tensor(arr), 1)
    np.testing.assert_array_equal(out.numpy(), np.cumsum(arr, axis=1))
