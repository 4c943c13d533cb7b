"""The cpu device's mm and bmm kernels against NumPy float64/int64 references.

Operands come row-major, transposed (handed to BLAS in place), stepped or broadcast
(packed first); outputs contiguous, column-major or stepped (through a buffer). Every test
runs once per float32 GEMM engine installed (oneDNN's and OpenBLAS's sgemm).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from ember import _dtype
from ember._dispatch import OPS
from ember._ops.linalg import launch_product, plan_for
from ember._tensor import Tensor, empty_tensor, make_view
from ember_cpu import _sgemm

from ._layouts import CPU
from ._layouts import tensor as laid_out

DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"]
FLOATS = {"float16", "float32", "float64"}
RTOL = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-13}


def tensor(arr: np.ndarray, layout: str = "contiguous") -> Tensor:
    """A cpu tensor of `arr` in a layout of _layouts, but "transposed" swaps only the last
    two dims in memory (column-major matrices, batch dims kept in front)."""
    if layout != "transposed":
        return laid_out(arr, layout)
    dt = _dtype.FROM_NUMPY[arr.dtype]
    base = empty_tensor((*arr.shape[:-2], arr.shape[-1], arr.shape[-2]), dt, CPU)
    base.numpy()[...] = np.swapaxes(arr, -1, -2)
    s = base._strides
    return make_view(base, 0, arr.shape, (*s[:-2], s[-1], s[-2]))


def empty_out(shape: tuple[int, ...], name: str, layout: str) -> Tensor:
    dt = _dtype.BY_NAME[name]
    if layout == "contiguous":
        return empty_tensor(shape, dt, CPU)
    if layout == "transposed":  # column-major matrices
        base = empty_tensor((*shape[:-2], shape[-1], shape[-2]), dt, CPU)
        s = base._strides
        return make_view(base, 0, shape, (*s[:-2], s[-1], s[-2]))
    base = empty_tensor((*shape[:-1], 3 * shape[-1]), dt, CPU)
    return make_view(base, 1, shape, (*base._strides[:-1], 3))


def run(op: str, out: Tensor, a: Tensor, b: Tensor) -> None:
    """The cpu kernel of `op` called as the runtime calls it, with the call's MatmulPlan;
    empty products never reach a kernel: the runtime computes them."""
    if 0 in out.shape or a.shape[-1] == 0:
        launch_product(out, a, b)
    else:
        OPS[op].kernels["cpu"](out._storage, a._storage, b._storage, plan_for(out, a, b))


def sample(name: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name == "bool":
        return rng.random(shape) < 0.3
    if name in FLOATS:
        return rng.standard_normal(shape).astype(name)
    low, high = {"uint8": (0, 16), "int8": (-11, 12)}.get(name, (-1000, 1000))
    return rng.integers(low, high, shape).astype(name)


def check(got: np.ndarray, a: np.ndarray, b: np.ndarray, name: str) -> None:
    if name in FLOATS:
        want = a.astype(np.float64) @ b.astype(np.float64)
        scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)) + 1e-30
        assert np.all(np.abs(got.astype(np.float64) - want) <= RTOL[name] * scale + 1e-30)
    elif name == "bool":
        np.testing.assert_array_equal(got, (a.astype(np.int64) @ b.astype(np.int64)) != 0)
    else:  # int64 accumulation, wrapped into the dtype
        np.testing.assert_array_equal(got, (a.astype(np.int64) @ b.astype(np.int64)).astype(name))


@pytest.fixture(autouse=True, params=_sgemm.available())
def sgemm_engine(request: pytest.FixtureRequest) -> Iterator[str]:
    before = _sgemm.engine()
    _sgemm.use(request.param)
    yield request.param
    _sgemm.use(before)


SHAPES = [(1, 1, 1), (2, 3, 4), (7, 5, 9), (33, 17, 40), (1, 8, 5), (6, 8, 1), (64, 1, 48)]


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("a_layout", ["contiguous", "transposed", "stepped"])
@pytest.mark.parametrize("b_layout", ["contiguous", "transposed", "stepped"])
def test_mm_matches_numpy(name: str, a_layout: str, b_layout: str) -> None:
    for m, k, n in SHAPES:
        a, b = sample(name, (m, k), 1), sample(name, (k, n), 2)
        out = empty_tensor((m, n), _dtype.BY_NAME[name], CPU)
        run("mm", out, tensor(a, a_layout), tensor(b, b_layout))
        check(out.numpy(), a, b, name)


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("out_layout", ["transposed", "stepped"])
def test_mm_into_strided_out(name: str, out_layout: str) -> None:
    for m, k, n in SHAPES:
        a, b = sample(name, (m, k), 3), sample(name, (k, n), 4)
        out = empty_out((m, n), name, out_layout)
        run("mm", out, tensor(a, "transposed"), tensor(b))
        check(out.numpy(), a, b, name)


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "int32"])
def test_mm_broadcast_operands_and_empty_sizes(name: str) -> None:
    row = tensor(sample(name, (1, 6), 5))
    a = make_view(row, 0, (4, 6), (0, 1))  # every row the same: stride 0
    b = sample(name, (6, 3), 6)
    out = empty_tensor((4, 3), _dtype.BY_NAME[name], CPU)
    run("mm", out, a, tensor(b))
    check(out.numpy(), np.broadcast_to(row.numpy(), (4, 6)), b, name)
    for m, k, n in [(0, 3, 4), (3, 0, 4), (3, 4, 0)]:
        out = empty_tensor((m, n), _dtype.BY_NAME[name], CPU)
        if out.numel():
            out.numpy()[...] = 7
        run("mm", out, tensor(sample(name, (m, k), 1)), tensor(sample(name, (k, n), 2)))
        np.testing.assert_array_equal(out.numpy(), np.zeros((m, n)))


def test_mm_large_float32_and_int_paths_run_in_parallel() -> None:
    for name in ("float32", "int64", "float16"):
        a, b = sample(name, (150, 130), 7), sample(name, (130, 170), 8)
        out = empty_tensor((150, 170), _dtype.BY_NAME[name], CPU)
        run("mm", out, tensor(a, "stepped"), tensor(b, "transposed"))
        check(out.numpy(), a, b, name)


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped"])
def test_bmm_matches_numpy(name: str, layout: str) -> None:
    for batch, m, k, n in [(1, 2, 3, 4), (3, 5, 7, 6), (4, 1, 9, 1), (2, 16, 8, 20), (0, 2, 2, 2)]:
        a, b = sample(name, (batch, m, k), 9), sample(name, (batch, k, n), 10)
        out = empty_tensor((batch, m, n), _dtype.BY_NAME[name], CPU)
        run("bmm", out, tensor(a, layout), tensor(b, "transposed"))
        check(out.numpy(), a, b, name)


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "int8"])
def test_bmm_broadcast_batch_and_strided_out(name: str) -> None:
    single = sample(name, (1, 5, 4), 11)
    a = make_view(tensor(single), 0, (3, 5, 4), (0, 4, 1))  # one matrix for every batch
    b = sample(name, (3, 4, 6), 12)
    for out_layout in ("contiguous", "transposed", "stepped"):
        out = empty_out((3, 5, 6), name, out_layout)
        run("bmm", out, a, tensor(b, "stepped"))
        check(out.numpy(), np.broadcast_to(single, (3, 5, 4)), b, name)
    # batch dimension permuted: (B, M, K) stored as (M, B, K)
    stored = sample(name, (5, 3, 4), 13)
    base = tensor(stored)
    a = make_view(base, 0, (3, 5, 4), (4, 12, 1))
    out = empty_tensor((3, 5, 6), _dtype.BY_NAME[name], CPU)
    run("bmm", out, a, tensor(b))
    check(out.numpy(), stored.transpose(1, 0, 2), b, name)


@pytest.mark.parametrize("name", ["float32", "float64"])
def test_bmm_many_small_and_few_large_matrices(name: str) -> None:
    a, b = sample(name, (64, 16, 12), 17), sample(name, (64, 12, 20), 18)  # threads over batch
    out = empty_tensor((64, 16, 20), _dtype.BY_NAME[name], CPU)
    run("bmm", out, tensor(a, "transposed"), tensor(b))
    check(out.numpy(), a, b, name)
    # large enough for OpenBLAS's strided batch call, with a broadcast batch
    single = sample(name, (1, 100, 90), 14)
    b = sample(name, (3, 90, 110), 15)
    for a, a_values in [
        (
            make_view(tensor(single), 0, (3, 100, 90), (0, 90, 1)),
            np.broadcast_to(single, (3, 100, 90)),
        ),
        (tensor(sample(name, (3, 100, 90), 16), "transposed"), None),
    ]:
        values = a.numpy() if a_values is None else a_values
        for out_layout in ("contiguous", "transposed"):
            out = empty_out((3, 100, 110), name, out_layout)
            run("bmm", out, a, tensor(b))
            check(out.numpy(), np.asarray(values), b, name)
