"""matmul / @ with 1-D and batched broadcasting operands, mm and bmm."""

from __future__ import annotations

import numpy as np
import pytest

import ember

from ._reference import RTOL, assert_close, laid_out, make, pid, sample

MATMUL_SHAPES = [
    ((4,), (4,)),
    ((3, 4), (4,)),
    ((4,), (4, 5)),
    ((3, 4), (4, 5)),
    ((2, 3, 4), (4, 5)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((1, 3, 4), (2, 4, 5)),
    ((3, 1, 2, 4), (1, 4, 4, 3)),
    ((0, 4), (4, 5)),
    ((3, 0), (0, 5)),
    ((2, 0, 4), (4, 5)),
    ((1, 1), (1, 1)),
]
FLOAT_AND_INT = [ember.float16, ember.float32, ember.float64, ember.int32, ember.int64]


def tolerance(dtype: ember.dtype, a: np.ndarray, b: np.ndarray) -> dict:
    """Sums of K products: the absolute error scales with K * max|a| * max|b|."""
    if not dtype.is_floating_point:
        return {}
    k = a.shape[-1] if a.size else 1
    scale = k * (np.abs(a).max(initial=1.0)) * (np.abs(b).max(initial=1.0))
    return {"rtol": RTOL[dtype], "atol": RTOL[dtype] * float(scale)}


def reference(a: np.ndarray, b: np.ndarray, dtype: ember.dtype) -> np.ndarray:
    cast = np.float64 if dtype.is_floating_point else np.int64
    return np.matmul(a.astype(cast), b.astype(cast))


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=lambda s: f"{pid(s[0])}@{pid(s[1])}")
@pytest.mark.parametrize("dtype", FLOAT_AND_INT, ids=pid)
def test_matmul_shapes_and_dtypes(device: str, shapes, dtype: ember.dtype, rng) -> None:
    a, b = sample(shapes[0], dtype, rng), sample(shapes[1], dtype, rng)
    ta, tb = make(a, device), make(b, device)
    want = reference(a, b, dtype)
    assert_close(ember.matmul(ta, tb), want, dtype, **tolerance(dtype, a, b))
    assert_close(ta @ tb, want, dtype, **tolerance(dtype, a, b))
    assert_close(ta.matmul(tb), want, dtype, **tolerance(dtype, a, b))


LAYOUT_CASES = [
    ((3, 4), (4, 5), "transposed", "contiguous"),
    ((3, 4), (4, 5), "contiguous", "transposed"),
    ((3, 4), (4, 5), "transposed", "transposed"),
    ((3, 4), (4, 5), "strided", "strided"),
    ((2, 3, 4), (2, 4, 5), "transposed", "strided"),
    ((2, 3, 4), (4, 5), "expanded", "transposed"),
    ((2, 3, 4), (2, 4, 5), "contiguous", "expanded"),
    ((4,), (4, 5), "strided", "transposed"),
]


@pytest.mark.parametrize(("shape_a", "shape_b", "layout_a", "layout_b"), LAYOUT_CASES, ids=pid)
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64], ids=pid)
def test_matmul_strided_operands(
    device: str, shape_a, shape_b, layout_a, layout_b, dtype, rng
) -> None:
    ta, a = laid_out(sample(shape_a, dtype, rng), layout_a, device)
    tb, b = laid_out(sample(shape_b, dtype, rng), layout_b, device)
    assert_close(ta @ tb, reference(a, b, dtype), dtype, **tolerance(dtype, a, b))


@pytest.mark.parametrize("dtype", FLOAT_AND_INT, ids=pid)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
def test_mm(device: str, dtype: ember.dtype, layout: str, rng) -> None:
    ta, a = laid_out(sample((5, 3), dtype, rng), layout, device)
    tb, b = laid_out(sample((3, 6), dtype, rng), layout, device)
    want = reference(a, b, dtype)
    assert_close(ember.mm(ta, tb), want, dtype, **tolerance(dtype, a, b))
    assert_close(ta.mm(tb), want, dtype, **tolerance(dtype, a, b))


@pytest.mark.parametrize("dtype", FLOAT_AND_INT, ids=pid)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "expanded"])
def test_bmm(device: str, dtype: ember.dtype, layout: str, rng) -> None:
    ta, a = laid_out(sample((3, 2, 4), dtype, rng), layout, device)
    tb, b = laid_out(sample((3, 4, 5), dtype, rng), "transposed", device)
    want = reference(a, b, dtype)
    assert_close(ember.bmm(ta, tb), want, dtype, **tolerance(dtype, a, b))
    assert_close(ta.bmm(tb), want, dtype, **tolerance(dtype, a, b))


def test_matmul_empty_inner_dimension_gives_zeros(device: str) -> None:
    result = ember.matmul(ember.ones(2, 0, device=device), ember.ones(0, 3, device=device))
    assert_close(result, np.zeros((2, 3)), ember.float32)


def test_matmul_result_is_contiguous_and_new(device: str, rng) -> None:
    a, b = (
        make(sample((3, 4), ember.float32, rng), device),
        make(np.eye(4, dtype=np.float32), device),
    )
    result = a @ b
    assert result.is_contiguous()
    assert result.untyped_storage() is not a.untyped_storage()


@pytest.mark.parametrize(
    ("shape_a", "shape_b"),
    [
        ((2, 3), (4, 5)),
        ((3,), (4,)),
        ((2, 3, 4), (2, 5, 6)),
        ((2, 3, 4), (3, 4, 5)),
        ((3,), (4, 2)),
    ],
    ids=pid,
)
def test_matmul_shape_mismatch_raises(device: str, shape_a, shape_b) -> None:
    with pytest.raises(RuntimeError):
        ember.matmul(ember.zeros(*shape_a, device=device), ember.zeros(*shape_b, device=device))


def test_mm_and_bmm_need_their_ranks(device: str) -> None:
    with pytest.raises(RuntimeError):
        ember.mm(ember.zeros(2, 3, 4, device=device), ember.zeros(4, 5, device=device))
    with pytest.raises(RuntimeError):
        ember.bmm(ember.zeros(3, 4, device=device), ember.zeros(4, 5, device=device))
    with pytest.raises(RuntimeError):
        ember.matmul(make(np.float32(1.0), device), ember.zeros(2, device=device))
