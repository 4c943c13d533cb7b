"""The opencl device's indexing and random kernels against the cpu device's, for every dtype.

Each kernel runs on both devices over the same data in the same layout (contiguous,
transposed, stepped with an offset, and broadcast targets that overlap themselves); the
whole storage is compared, so writes outside a view are caught too. Results must be
identical, except normal_ (the device's log and cos may differ from the C library's in
the last bits); accumulating index_put_ adds in the device's order, so its float tests
add small integers, whose sums are exact in any order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember import _dtype
from ember._dispatch import OPS
from ember._tensor import empty_tensor, make_view

from ._twins import DEVICES, Pair, pair

if "opencl" not in ember.devices() or not ember.device_count("opencl"):
    pytest.skip("no opencl device", allow_module_level=True)

kernels_index = pytest.importorskip("ember_opencl.kernels_index")

DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"]
FLOATS = ["float16", "float32", "float64"]
LAYOUTS = ["contiguous", "transposed", "stepped"]


def run(op: str, *args: Any) -> Any:
    """Op `op`'s kernel on each device; Pair arguments give each device its own tensor."""
    return [
        OPS[op].kernels[dev.type](*(a[i] if isinstance(a, tuple) else a for a in args))
        for i, dev in enumerate(DEVICES)
    ]


def sample(name: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name == "bool":
        return rng.random(shape) < 0.5
    if name in FLOATS:
        return rng.standard_normal(shape).astype(name)
    return rng.integers(0 if name == "uint8" else -50, 50, shape).astype(name)


def indices(high: int, shape: tuple[int, ...], seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, max(high, 1), shape).astype(np.int64)


def empty_pair(shape: tuple[int, ...], name: str) -> Pair:
    dt = _dtype.BY_NAME[name]
    cpu = empty_tensor(shape, dt, DEVICES[0])
    cpu.numpy()[...] = 0
    return cpu, ember.tensor(cpu.numpy(), device="opencl")


def storages(p: Pair) -> tuple[np.ndarray, np.ndarray]:
    """Both tensors' whole storages as arrays (what each kernel may have written)."""
    arrays = []
    for t in p:
        n = t._storage.nbytes // t._dtype.itemsize
        base = make_view(t, 0, (n,), (1,))
        arrays.append(base.cpu().numpy())
    return arrays[0], arrays[1]


def assert_same(p: Pair) -> None:
    want, got = storages(p)
    np.testing.assert_array_equal(got, want)


# --- gathers -----------------------------------------------------------------------------

SELECT_CASES = [
    ((5,), 0, 7),
    ((4, 6), 1, 9),
    ((3, 4, 5), 1, 4),
    ((3, 4, 5), 2, 2),
    ((300, 200), 0, 50),
]


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_index_select(name: str, layout: str) -> None:
    for shape, dim, count in SELECT_CASES:
        a = pair(sample(name, shape), layout)
        out = empty_pair((*shape[:dim], count, *shape[dim + 1 :]), name)
        for index_layout in ("contiguous", "stepped"):
            run("index_select", out, a, dim, pair(indices(shape[dim], (count,)), index_layout))
            assert_same(out)


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_gather_and_take(name: str, layout: str) -> None:
    for shape, dim, index_shape in [
        ((4, 6), 0, (7, 5)),
        ((3, 4, 5), 2, (2, 4, 9)),
        ((8,), 0, (3,)),
    ]:
        a = pair(sample(name, shape), layout)
        for index_layout in LAYOUTS:
            out = empty_pair(index_shape, name)
            run("gather", out, a, dim, pair(indices(shape[dim], index_shape), index_layout))
            assert_same(out)
            out = empty_pair(index_shape, name)
            run("take", out, a, pair(indices(int(np.prod(shape)), index_shape), index_layout))
            assert_same(out)


# --- scatters ----------------------------------------------------------------------------

SCATTER_CASES = [
    ((6,), 0, (40,)),
    ((4, 6), 0, (9, 5)),
    ((4, 6), 1, (3, 12)),
    ((3, 4, 5), 1, (3, 7, 5)),
]


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("op", ["scatter_", "scatter_add_"])
@pytest.mark.parametrize("layout", [*LAYOUTS, "broadcast"])
def test_scatter_keeps_the_cpu_order(name: str, op: str, layout: str) -> None:
    """Duplicates on purpose: the last write wins and sums round exactly as on the cpu."""
    for shape, dim, index_shape in SCATTER_CASES:
        arr = sample(name, shape)
        if layout == "broadcast":
            arr = np.broadcast_to(arr[:1], shape).copy()
        target = pair(arr, layout)
        src = pair(sample(name, index_shape, seed=2), "transposed")
        index = pair(indices(shape[dim], index_shape), "stepped")
        run(op, target, dim, index, src)
        assert_same(target)
    target = pair(sample(name, (4, 6)), layout if layout != "broadcast" else "contiguous")
    run(op, target, 1, pair(indices(6, (4, 9))), 1)  # a Python scalar source
    assert_same(target)


# --- index_put_ ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("layout", [*LAYOUTS, "broadcast"])
@pytest.mark.parametrize("count", [37, 20_000])
def test_index_put(name: str, accumulate: bool, layout: str, count: int) -> None:
    """37 values run on one work item; 20 000 through claims or atomics, with duplicates.

    Accumulated floats hold small integers, so every order of the additions gives the
    exact sum: a lost update (a broken compare-and-swap) shows as a difference.
    """
    shape = (30, 40)
    arr, values = sample(name, shape), sample(name, (count,), seed=3)
    if name == "bool":
        values = np.ones(count, bool)
    elif accumulate and name in FLOATS:
        arr, values = np.round(arr * 4), np.round(values * 2)
    if layout == "broadcast":
        arr = np.broadcast_to(arr[:1], shape).copy()
    target = pair(arr, layout)
    run("index_put_", target, pair(indices(1200, (count,), seed=4)), pair(values), accumulate)
    assert_same(target)


@pytest.mark.parametrize("name", ["bool", "int8", "float16", "int64", "float64"])
def test_index_put_accumulates_without_atomics(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The single-work-item fallback (devices without 64-bit atomics) adds in cpu order."""
    monkeypatch.setattr(kernels_index, "_atomics_usable", lambda target: False)
    target = pair(sample(name, (50, 7)), "stepped")
    values = pair(sample(name, (5000,), seed=3))
    run("index_put_", target, pair(indices(350, (5000,), seed=4)), values, True)
    assert_same(target)


# --- nonzero ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_nonzero(name: str, layout: str) -> None:
    for shape in [(7,), (5, 6), (3, 1, 4, 2), (700, 900)]:
        arr = sample(name, shape)
        if name in FLOATS:
            arr[np.abs(arr) < 0.7] = 0
        want, got = run("nonzero", pair(arr, layout))
        assert got.dtype is ember.int64 and got._shape == want._shape
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    for arr in [np.array(3, name), np.zeros((4, 5), name), np.zeros((0, 3), name)]:
        want, got = run("nonzero", pair(arr))
        assert got._shape == want._shape


# --- random -------------------------------------------------------------------------------

STREAMS = [(99, 0), ((1 << 64) - 7, (1 << 64) - 3), (67280421310721, 12345)]


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped"])
def test_uniform_and_normal_streams(name: str, layout: str) -> None:
    for seed, offset in STREAMS:
        for low, high in [(0.0, 1.0), (-2.0, 3.0), (0.1, 0.7)]:
            t = pair(np.zeros((33, 17), name), layout)
            run("uniform_", t, low, high, seed, offset)
            assert_same(t)
        t = pair(np.zeros((33, 17), name), layout)
        run("normal_", t, 1.5, 2.0, seed, offset)
        want, got = storages(t)
        np.testing.assert_allclose(got, want, rtol={"float16": 1e-3}.get(name, 1e-5), atol=1e-5)


@pytest.mark.parametrize("name", DTYPES)
def test_random_streams(name: str) -> None:
    for seed, offset in STREAMS:
        for low, high in [(0, 100), (-5, 5), (3, 1 << 40), (-(1 << 63), 1 << 63)]:
            t = pair(np.zeros((40, 25), name), "stepped")
            run("random_", t, low, high, seed, offset)
            assert_same(t)


@pytest.mark.parametrize("n", [1, 2, 3, 50, 512, 513, 3000, 70_000])
def test_randperm_stream(n: int) -> None:
    for seed, offset in STREAMS:
        out = pair(np.zeros(n, np.int64), "stepped")
        run("randperm_", out, seed, offset)
        assert_same(out)
