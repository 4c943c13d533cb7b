"""The cpu device's indexing kernels against NumPy references, for every dtype.

index_select, gather, scatter_, scatter_add_, take, index_put_ and nonzero on
contiguous, transposed, stepped and broadcast operands, 0-d and zero-size ones, and the
out-of-range errors (IndexError, target untouched for the in-place ops).
"""

from __future__ import annotations

import numpy as np
import pytest

from ember import _dtype
from ember._dispatch import OPS
from ember._tensor import make_view

from ._layouts import empty, tensor

DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"]
LAYOUTS = ["contiguous", "transposed", "stepped"]


def sample(name: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name == "bool":
        return rng.random(shape) < 0.5
    if name in ("float16", "float32", "float64"):
        return rng.standard_normal(shape).astype(name)
    return rng.integers(0 if name == "uint8" else -50, 50, shape).astype(name)


def indices(high: int, shape: tuple[int, ...], seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, max(high, 1), shape).astype(np.int64)


def assert_close(got: np.ndarray, want: np.ndarray, name: str) -> None:
    """Exact for integers and bool; floats accumulate in their own precision."""
    tolerance = {"float16": 2e-3, "float32": 1e-6, "float64": 1e-14}.get(name)
    if tolerance is None:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


# --- index_select ------------------------------------------------------------------------


SELECT_CASES = [
    ((5,), 0, 7), ((4, 6), 0, 3), ((4, 6), 1, 9), ((3, 4, 5), 1, 4), ((3, 4, 5), 2, 2),
    ((3, 4, 5), 0, 0), ((300, 200), 0, 500),
]  # fmt: skip


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_index_select_matches_numpy(name: str, layout: str) -> None:
    for shape, dim, count in SELECT_CASES:
        arr = sample(name, shape)
        index = indices(shape[dim], (count,))
        out_shape = (*shape[:dim], count, *shape[dim + 1 :])
        out = empty(out_shape, name)
        for index_layout in ("contiguous", "stepped"):
            OPS["index_select"].kernels["cpu"](
                out, tensor(arr, layout), dim, tensor(index, index_layout)
            )
            np.testing.assert_array_equal(out.numpy(), np.take(arr, index, axis=dim))


def test_index_select_zero_dim_and_errors() -> None:
    out = empty((), "float32")
    OPS["index_select"].kernels["cpu"](
        out, tensor(np.array(2.5, np.float32)), 0, tensor(np.array([0]))
    )
    assert out.numpy() == 2.5
    for layout in LAYOUTS:
        a = tensor(sample("int32", (5, 3)), layout)
        for bad in (5, 7, -1):
            with pytest.raises(
                IndexError, match=f"index {bad} is out of bounds for dimension 0 with size 5"
            ):
                OPS["index_select"].kernels["cpu"](
                    empty((2, 3), "int32"), a, 0, tensor(np.array([1, bad]))
                )


# --- gather ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_gather_matches_numpy(name: str, layout: str) -> None:
    for shape, dim, index_shape in [((5,), 0, (8,)), ((4, 6), 1, (4, 9)), ((4, 6), 0, (2, 5)),
                                    ((3, 4, 5), 2, (3, 2, 5)), ((3, 4, 5), 0, (6, 4, 1)),
                                    ((200, 300), 1, (200, 300)), ((4, 6), 1, (0, 3))]:  # fmt: skip
        arr = sample(name, shape)
        index = indices(shape[dim], index_shape)
        out = empty(index_shape, name)
        OPS["gather"].kernels["cpu"](out, tensor(arr, layout), dim, tensor(index, layout))
        sliced = arr[
            tuple(slice(0, n) if d != dim else slice(None) for d, n in enumerate(index_shape))
        ]
        np.testing.assert_array_equal(out.numpy(), np.take_along_axis(sliced, index, axis=dim))


def test_gather_zero_dim_broadcast_index_and_errors() -> None:
    out = empty((), "int64")
    OPS["gather"].kernels["cpu"](out, tensor(np.array(9)), 0, tensor(np.array(0)))
    assert out.numpy() == 9
    arr = sample("float32", (3, 4))
    index = make_view(tensor(np.array([[2], [0], [3]])), 0, (3, 4), (1, 0))  # zero stride
    out = empty((3, 4), "float32")
    OPS["gather"].kernels["cpu"](out, tensor(arr), 1, index)
    np.testing.assert_array_equal(
        out.numpy(), np.repeat(arr[np.arange(3), [2, 0, 3]][:, None], 4, 1)
    )
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 1 with size 4"):
        OPS["gather"].kernels["cpu"](
            empty((3, 1), "float32"), tensor(arr), 1, tensor(np.array([[0], [4], [1]]))
        )
    big = np.zeros((300, 300), np.int64)
    big[123, 45] = -3
    with pytest.raises(IndexError, match="index -3 is out of bounds"):
        OPS["gather"].kernels["cpu"](
            empty((300, 300), "float32"), tensor(sample("float32", (300, 300))), 0, tensor(big)
        )


# --- scatter_, scatter_add_ ---------------------------------------------------------------


def scatter_reference(
    target: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray, add: bool
) -> np.ndarray:
    result = target.astype(np.float64 if target.dtype.kind == "f" else np.int64).copy()
    for pos in np.ndindex(*index.shape):
        dest = list(pos)
        dest[dim] = index[pos]
        if add:
            result[tuple(dest)] += src[pos]
        else:
            result[tuple(dest)] = src[pos]
    if target.dtype == np.bool_:
        return result != 0
    return result.astype(target.dtype)


SCATTER_CASES = [  # target shape, dim, index shape, src shape
    ((5,), 0, (8,), (9,)), ((4, 6), 1, (4, 9), (4, 9)), ((4, 6), 0, (7, 5), (8, 6)),
    ((3, 4, 5), 2, (3, 2, 6), (3, 2, 6)), ((4, 6), 1, (0, 3), (2, 3)),
]  # fmt: skip


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", ["scatter_", "scatter_add_"])
def test_scatter_matches_reference(name: str, layout: str, op: str) -> None:
    for shape, dim, index_shape, src_shape in SCATTER_CASES:
        target_arr = sample(name, shape, 2)
        index = indices(shape[dim], index_shape)  # many duplicates
        src = sample(name, src_shape, 3)
        target = tensor(target_arr, layout)
        OPS[op].kernels["cpu"](target, dim, tensor(index, layout), tensor(src, layout))
        want = scatter_reference(target_arr, dim, index, src, op == "scatter_add_")
        assert_close(target.numpy(), want, name)


def test_scatter_last_write_wins_scalar_src_and_errors() -> None:
    target = tensor(np.zeros(4, np.float32))
    OPS["scatter_"].kernels["cpu"](
        target, 0, tensor(np.array([1, 1, 1])), tensor(np.array([1.0, 2.0, 3.0], np.float32))
    )
    np.testing.assert_array_equal(target.numpy(), [0, 3, 0, 0])
    OPS["scatter_add_"].kernels["cpu"](target, 0, tensor(np.array([2, 2])), 1.5)
    np.testing.assert_array_equal(target.numpy(), [0, 3, 3, 0])
    before = target.numpy().copy()
    for op in ("scatter_", "scatter_add_"):
        with pytest.raises(
            IndexError, match="index 4 is out of bounds for dimension 0 with size 4"
        ):
            OPS[op].kernels["cpu"](
                target, 0, tensor(np.array([0, 4])), tensor(np.ones(2, np.float32))
            )
        np.testing.assert_array_equal(target.numpy(), before)  # nothing written
    zero_d = tensor(np.array(1, np.int32))
    OPS["scatter_add_"].kernels["cpu"](
        zero_d, 0, tensor(np.array(0)), tensor(np.array(4, np.int32))
    )
    assert zero_d.numpy() == 5


# --- take, index_put_ ---------------------------------------------------------------------


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_take_matches_numpy(name: str, layout: str) -> None:
    for shape, index_shape in [((5,), (8,)), ((4, 6), (3, 7)), ((3, 4, 5), (10,)), ((), (3,)),
                               ((4, 6), (0,)), ((300, 200), (400, 100))]:  # fmt: skip
        arr = sample(name, shape)
        index = indices(arr.size, index_shape)
        out = empty(index_shape, name)
        OPS["take"].kernels["cpu"](out, tensor(arr, layout), tensor(index, layout))
        np.testing.assert_array_equal(out.numpy(), arr.reshape(-1)[index])


def test_take_broadcast_source_and_errors() -> None:
    row = tensor(np.arange(4, dtype=np.float64).reshape(1, 4))
    a = make_view(row, 0, (3, 4), (0, 1))
    out = empty((3,), "float64")
    OPS["take"].kernels["cpu"](out, a, tensor(np.array([1, 6, 11])))
    np.testing.assert_array_equal(out.numpy(), [1, 2, 3])
    with pytest.raises(IndexError, match="index 12 is out of bounds for dimension 0 with size 12"):
        OPS["take"].kernels["cpu"](out, a, tensor(np.array([1, 12, 0])))


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_matches_reference(name: str, layout: str, accumulate: bool) -> None:
    for shape, count in [((5,), 8), ((4, 6), 30), ((3, 4, 5), 7), ((), 2), ((4, 6), 0)]:
        target_arr = sample(name, shape, 4)
        index = indices(target_arr.size, (count,))
        values = sample(name, (count,), 5)
        target = tensor(target_arr, layout)
        OPS["index_put_"].kernels["cpu"](target, tensor(index), tensor(values), accumulate)
        flat = target_arr.reshape(-1).astype(np.float64 if name.startswith("float") else np.int64)
        for i, v in zip(index, values, strict=True):  # sequential: the last duplicate wins
            flat[i] = flat[i] + v if accumulate else v
        want = (flat != 0) if name == "bool" else flat.astype(name)
        got = target.numpy().reshape(-1)
        assert_close(got, want, name)


def test_index_put_errors_leave_target_untouched() -> None:
    target = tensor(np.arange(6, dtype=np.int32).reshape(2, 3), "transposed")
    for accumulate in (False, True):
        with pytest.raises(
            IndexError, match="index 6 is out of bounds for dimension 0 with size 6"
        ):
            OPS["index_put_"].kernels["cpu"](
                target, tensor(np.array([0, 6])), tensor(np.array([9, 9], np.int32)), accumulate
            )
        np.testing.assert_array_equal(target.numpy(), np.arange(6).reshape(2, 3))


# --- nonzero ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_nonzero_matches_numpy(name: str, layout: str) -> None:
    for shape in [(7,), (4, 6), (3, 4, 5), (0, 3), (3, 0)]:
        arr = sample(name, shape)
        if arr.size:
            arr.reshape(-1)[::3] = 0
        got = OPS["nonzero"].kernels["cpu"](tensor(arr, layout))
        assert got.dtype is _dtype.int64
        np.testing.assert_array_equal(got.numpy(), np.argwhere(arr).reshape(-1, len(shape)))


def test_nonzero_zero_dim_nan_and_negative_zero() -> None:
    got = OPS["nonzero"].kernels["cpu"](tensor(np.array(3.0)))
    assert got.shape == (1, 0)
    got = OPS["nonzero"].kernels["cpu"](tensor(np.array(0, np.int8)))
    assert got.shape == (0, 0)
    got = OPS["nonzero"].kernels["cpu"](tensor(np.array([0.0, np.nan, -0.0, 1.0], np.float32)))
    np.testing.assert_array_equal(got.numpy(), [[1], [3]])
    row = tensor(np.array([[0, 5, 0]], np.int64))
    got = OPS["nonzero"].kernels["cpu"](make_view(row, 0, (2, 3), (0, 1)))
    np.testing.assert_array_equal(got.numpy(), [[0, 1], [1, 1]])
