"""The opencl device's reduction, scan and softmax kernels against the cpu device's.

Each kernel runs on both devices, through the runtime's plans, over the same values in the
same layout (contiguous, transposed, stepped with an offset), in shapes that reach every
launch of reduce.cl, scan.cl and softmax.cl: one work item per output, side-by-side
columns (with a partial group of columns), and reductions split into chunks when the
outputs are few. Integer, boolean, extreme and index results must be identical; float
results agree within the dtype's tolerance.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember import _dtype
from ember._dispatch import OPS
from ember._ops._launch import launch_reduction, launch_scan
from ember._tensor import empty_tensor

from ._twins import DEVICES, Pair, pair

if "opencl" not in ember.devices() or not ember.device_count("opencl"):
    pytest.skip("no opencl device", allow_module_level=True)

DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"]
FLOATS = ["float16", "float32", "float64"]
LAYOUTS = ["contiguous", "transposed", "stepped"]
TOLERANCE = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-12}

# (shape, reduced dims): one output; rows; columns (a partial vector; two tiles, the second
# partial; two reduced dims between kept ones); interleaved dims; few long rows (split);
# few long columns (split columns); 0-d; nothing reduced
REDUCE_CASES: list[tuple[tuple[int, ...], tuple[int, ...]]] = [
    ((5,), (0,)),
    ((6, 37), (1,)),
    ((37, 21), (0,)),
    ((40, 300), (0,)),
    ((4, 9, 5, 40), (0, 2)),
    ((3, 4, 5), (0, 2)),
    ((3, 4, 5), (1,)),
    ((2, 20000), (1,)),
    ((20000, 3), (0,)),
    ((3000, 21), (0,)),
    ((), ()),
    ((4, 3), ()),
]


def sample(name: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if name in FLOATS:
        return np.asarray(rng.standard_normal(shape)).astype(name)
    low, high = (0, 50) if name == "uint8" else (-50, 50)
    return np.asarray(rng.integers(low, high, shape)).astype(name)


def near_one(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Values whose long products stay finite (floats) and small (integers: -1, 1 and 2)."""
    rng = np.random.default_rng(1)
    if name in FLOATS:
        return np.asarray(1 + 0.001 * rng.standard_normal(shape)).astype(name)
    if name == "bool":
        return np.asarray(rng.random(shape) < 0.99)
    return np.asarray(rng.choice(np.array([1, 1, 1, 1, 1, -1, 2]), shape)).astype(name)


def empty_pair(shape: tuple[int, ...], name: str) -> Pair:
    dt = _dtype.BY_NAME[name]
    return empty_tensor(shape, dt, DEVICES[0]), empty_tensor(shape, dt, DEVICES[1])


def run(op: str, out: Pair, a: Pair, dims: Any) -> tuple[np.ndarray, np.ndarray]:
    """Op `op` over `dims` on each device, launched as the runtime does (with its plan;
    softmax is tensor-level); the outputs as arrays (cpu, opencl)."""
    for i in range(len(DEVICES)):
        if op in ("softmax", "log_softmax"):
            OPS[op].kernels[DEVICES[i].type](out[i], a[i], dims)
        elif op in ("argmax", "argmin", "cumsum"):
            launch_scan(OPS[op], out[i], a[i], dims)
        else:
            launch_reduction(OPS[op], out[i], a[i], dims)
    return out[0].cpu().numpy(), out[1].cpu().numpy()


def assert_match(want: np.ndarray, got: np.ndarray, exact: bool, scale: float = 1.0) -> None:
    """Equal, or for floats close (the absolute tolerance times `scale`, the magnitude of
    the terms summed: the devices add them in different orders)."""
    name = got.dtype.name
    if exact or name not in FLOATS:
        np.testing.assert_array_equal(got, want)
    else:
        tolerance = TOLERANCE[name]
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * scale)


def reduction_out(op: str, name: str) -> str:
    if op in ("any", "all"):
        return "bool"
    if op in ("sum", "prod") and name not in FLOATS:
        return "int64"
    return name


def keep_shape(shape: tuple[int, ...], dims: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if d in dims else n for d, n in enumerate(shape))


@pytest.mark.parametrize("op", ["sum", "prod", "amax", "amin", "any", "all"])
@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_reductions_match_cpu(op: str, name: str, layout: str) -> None:
    for shape, dims in REDUCE_CASES:
        if layout != "contiguous" and len(shape) < 2:
            continue
        values = near_one(name, shape) if op == "prod" else sample(name, shape)
        out = empty_pair(keep_shape(shape, dims), reduction_out(op, name))
        want, got = run(op, out, pair(values, layout), dims)
        scale = np.abs(values.astype(np.float64)).sum(axis=dims).max(initial=1.0) / 4
        assert_match(want, got, exact=op not in ("sum", "prod"), scale=scale)


@pytest.mark.parametrize("op", ["sum", "prod", "amax", "amin", "any", "all"])
def test_reduction_over_nothing_writes_the_identity(op: str) -> None:
    out = empty_pair((3, 1), reduction_out(op, "float32"))
    want, got = run(op, out, pair(np.zeros((3, 0), np.float32)), (1,))
    assert_match(want, got, exact=True)


@pytest.mark.parametrize("op", ["amax", "amin"])
@pytest.mark.parametrize("shape", [(40000,), (3, 40000), (40000, 16)], ids=str)
def test_nan_wins_extremes_in_every_launch(op: str, shape: tuple[int, ...]) -> None:
    values = sample("float32", shape)
    values.reshape(-1)[values.size * 3 // 4] = np.nan
    dims = (0,) if len(shape) == 1 else (0,) if shape[1] == 16 else (1,)
    out = empty_pair(keep_shape(shape, dims), "float32")
    want, got = run(op, out, pair(values), dims)
    assert np.isnan(got).sum() == 1
    assert_match(want, got, exact=True)


def test_float32_sum_of_many_elements_keeps_its_precision() -> None:
    values = np.random.default_rng(2).random(1 << 21, dtype=np.float32)
    out = empty_pair((1,), "float32")
    run("sum", out, pair(values), (0,))
    exact = values.astype(np.float64).sum()
    assert abs(float(out[1].cpu().numpy()[0]) - exact) <= 1e-7 * exact


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_argextremes_match_cpu(op: str, name: str, layout: str) -> None:
    for shape, dim in [((7,), 0), ((6, 37), 1), ((37, 21), 0), ((3, 4, 5), 1), ((2, 30000), 1)]:
        if layout != "contiguous" and len(shape) < 2:
            continue
        values = sample(name, shape) if name == "bool" else sample(name, shape) % 7
        out = empty_pair(keep_shape(shape, (dim,)), "int64")
        want, got = run(op, out, pair(values, layout), dim)
        assert_match(want, got, exact=True)


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("name", FLOATS)
def test_argextremes_take_the_first_nan_across_chunks(op: str, name: str) -> None:
    values = np.zeros(60000, name)
    values[[100, 30000, 50000]] = [5, -5, 9]  # extremes in early chunks, NaNs later
    values[[45000, 59000]] = np.nan
    out = empty_pair((1,), "int64")
    want, got = run(op, out, pair(values), 0)
    assert got[0] == 45000
    assert_match(want, got, exact=True)
    values[45000] = 0
    want, got = run(op, out, pair(values), 0)
    assert got[0] == 59000


CUMSUM_PAIRS = [
    ("bool", "int64"),
    ("int8", "int64"),
    ("int32", "int64"),
    ("int64", "int64"),
    ("float16", "float16"),
    ("float32", "float32"),
    ("float64", "float64"),
    ("int32", "float32"),
    ("float32", "float64"),
]


@pytest.mark.parametrize(("name", "out_name"), CUMSUM_PAIRS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_cumsum_matches_cpu(name: str, out_name: str, layout: str) -> None:
    for shape, dim in [((7,), 0), ((6, 37), 1), ((37, 21), 0), ((3, 4, 5), 1), ((2, 30000), 1)]:
        if layout != "contiguous" and len(shape) < 2:
            continue
        out = empty_pair(shape, out_name)
        want, got = run("cumsum", out, pair(sample(name, shape), layout), dim)
        if out_name == "float16":  # long float16 sums drift with the order of rounding
            np.testing.assert_allclose(got, want, rtol=1e-2, atol=0.5)
        else:
            assert_match(want, got, exact=False)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_softmax_matches_cpu(op: str, name: str, layout: str) -> None:
    for shape, dim in [((7,), 0), ((6, 37), 1), ((37, 21), 0), ((3, 4, 5), 1), ((2, 30000), 1)]:
        if layout != "contiguous" and len(shape) < 2:
            continue
        out = empty_pair(shape, name)
        want, got = run(op, out, pair(sample(name, shape), layout), dim)
        assert_match(want, got, exact=False)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("length", [5, 40000], ids=["row", "split"])
def test_softmax_special_values(op: str, length: int) -> None:
    rows = np.zeros((4, length), np.float32)
    rows[0, 1] = np.nan
    rows[1, -1] = np.inf
    rows[2] = -np.inf
    rows[3, : length // 2] = -np.inf  # a whole chunk of -inf in a finite row
    out = empty_pair(rows.shape, "float32")
    want, got = run(op, out, pair(rows), 1)
    assert np.isnan(got[:3]).all()
    assert np.isfinite(got[3, length // 2 :]).all()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("name", FLOATS)
def test_argextremes_of_infinities_and_signed_zeros(op: str, name: str) -> None:
    values = np.zeros((3, 5000), name)
    values[0, 700::1000] = -0.0
    values[1, [900, 2000]] = [np.inf, -np.inf]
    values[2, [1500, 1501, 4000]] = [np.inf, -np.inf, np.inf]
    out = empty_pair((3, 1), "int64")
    want, got = run(op, out, pair(values), 1)
    assert_match(want, got, exact=True)
    assert got[0, 0] == 0
