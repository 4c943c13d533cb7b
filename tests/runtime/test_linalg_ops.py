"""mm, bmm and matmul against NumPy float64 references: every shape case, out= and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
from ember._ops import linalg

TOLERANCE = {ember.float16: 2e-2, ember.float32: 1e-5, ember.float64: 1e-12}


def make(shape: tuple[int, ...], dtype: ember.dtype = ember.float64, seed: int = 0) -> np.ndarray:
    """Small integers: exact in every dtype, so integer products compare exactly too."""
    return np.random.default_rng(seed).integers(-3, 4, shape).astype(dtype.numpy)


def check(result: ember.Tensor, expected: np.ndarray, dtype: ember.dtype) -> None:
    got = np.asarray(result)
    assert result.dtype is dtype
    assert got.shape == expected.shape
    tol = TOLERANCE.get(dtype, 0)
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=tol, atol=tol)


# -- mm ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [ember.float16, ember.float32, ember.float64, ember.int64])
def test_mm_values(dtype: ember.dtype) -> None:
    a, b = make((3, 4), dtype, 1), make((4, 5), dtype, 2)
    reference = a.astype(np.float64) @ b.astype(np.float64)
    check(ember.mm(ember.tensor(a, dtype=dtype), ember.tensor(b, dtype=dtype)), reference, dtype)


def test_mm_of_strided_operands() -> None:
    a, b = make((4, 3), seed=3), make((5, 4), seed=4)
    # Transposed views: the kernel receives arbitrary strides.
    result = ember.tensor(a).t().mm(ember.tensor(b).t())
    check(result, a.T @ b.T, ember.float64)


def test_mm_with_empty_dims() -> None:
    zeros = ember.mm(ember.ones(3, 0), ember.ones(0, 2))
    check(zeros, np.zeros((3, 2)), ember.float32)
    assert ember.mm(ember.ones(0, 4), ember.ones(4, 2)).shape == (0, 2)


def test_mm_errors() -> None:
    with pytest.raises(RuntimeError, match=r"shapes cannot be multiplied \(2x3 and 4x5\)"):
        ember.mm(ember.ones(2, 3), ember.ones(4, 5))
    with pytest.raises(
        RuntimeError, match="expected m1 and m2 to have the same dtype, but got: float != double"
    ):
        ember.mm(ember.ones(2, 3), ember.ones(3, 2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="self must be a matrix"):
        ember.mm(ember.ones(3), ember.ones(3, 2))
    with pytest.raises(RuntimeError, match="mat2 must be a matrix"):
        ember.mm(ember.ones(2, 3), ember.ones(3))
    with pytest.raises(RuntimeError, match="Bool"):
        ember.mm(ember.ones(2, 2, dtype=ember.bool), ember.ones(2, 2, dtype=ember.bool))


def test_mm_out() -> None:
    a, b = make((2, 3), seed=5), make((3, 4), seed=6)
    out = ember.zeros(2, 4, dtype=ember.float64)
    assert ember.mm(ember.tensor(a), ember.tensor(b), out=out) is out
    check(out, a @ b, ember.float64)

    strided = ember.zeros(4, 2, dtype=ember.float64).t()  # a non-contiguous out
    ember.mm(ember.tensor(a), ember.tensor(b), out=strided)
    check(strided, a @ b, ember.float64)

    empty = ember.empty(0, dtype=ember.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # zero-element outs resize silently
        ember.mm(ember.tensor(a), ember.tensor(b), out=empty)
    check(empty, a @ b, ember.float64)

    wrong_shape = ember.zeros(3, 3, dtype=ember.float64)
    with pytest.warns(UserWarning, match="was resized"):
        ember.mm(ember.tensor(a), ember.tensor(b), out=wrong_shape)
    check(wrong_shape, a @ b, ember.float64)

    with pytest.raises(
        RuntimeError, match="Expected out tensor to have dtype double, but got float instead"
    ):
        ember.mm(ember.tensor(a), ember.tensor(b), out=ember.zeros(2, 4))


def test_mm_out_aliasing_an_operand() -> None:
    a = make((3, 3), seed=7)
    t = ember.tensor(a)
    ember.mm(t, t, out=t)
    check(t, a @ a, ember.float64)


# -- bmm --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.int32])
def test_bmm_values(dtype: ember.dtype) -> None:
    a, b = make((4, 2, 3), dtype, 8), make((4, 3, 5), dtype, 9)
    reference = a.astype(np.float64) @ b.astype(np.float64)
    check(ember.bmm(ember.tensor(a, dtype=dtype), ember.tensor(b, dtype=dtype)), reference, dtype)


def test_bmm_errors_and_empty() -> None:
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        ember.bmm(ember.ones(2, 3), ember.ones(1, 3, 2))
    with pytest.raises(RuntimeError, match="batch2 must be a 3D tensor"):
        ember.bmm(ember.ones(1, 2, 3), ember.ones(3, 2))
    with pytest.raises(RuntimeError, match=r"batch2 tensor to be: \[2, 3\] but got: \[3, 3\]"):
        ember.bmm(ember.ones(2, 2, 3), ember.ones(3, 3, 2))
    with pytest.raises(RuntimeError, match=r"batch2 tensor to be: \[2, 3\] but got: \[2, 4\]"):
        ember.bmm(ember.ones(2, 2, 3), ember.ones(2, 4, 2))
    assert ember.bmm(ember.ones(0, 2, 3), ember.ones(0, 3, 4)).shape == (0, 2, 4)
    check(ember.bmm(ember.ones(2, 2, 0), ember.ones(2, 0, 4)), np.zeros((2, 2, 4)), ember.float32)


# -- matmul -----------------------------------------------------------------------------------

SHAPE_CASES = [
    ((3,), (3,)),  # dot -> 0-d
    ((2, 3), (3,)),  # matrix @ vector
    ((3,), (3, 4)),  # vector @ matrix
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),  # folded into one mm
    ((5, 2, 3), (3,)),
    ((2, 5, 2, 3), (3, 4)),
    ((3,), (5, 3, 4)),  # 1-D against a batch
    ((2, 3), (5, 3, 4)),  # a matrix broadcast against a batch
    ((5, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (5, 3, 4)),  # batch dims broadcast
    ((2, 1, 2, 3), (5, 3, 4)),
    ((6, 1, 2, 3), (1, 5, 3, 4)),
    ((5, 2, 3), (3, 3)),
    ((4, 2, 3), (3,)),
    ((0, 2, 3), (3, 4)),  # empty batches
    ((0, 2, 3), (1, 3, 4)),
    ((2, 0), (0, 3)),  # k == 0: zeros
    ((2, 2, 0), (2, 0, 3)),
]


@pytest.mark.parametrize(("left", "right"), SHAPE_CASES)
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_matmul_shapes(left: tuple[int, ...], right: tuple[int, ...], dtype: ember.dtype) -> None:
    a, b = make(left, dtype, 10), make(right, dtype, 11)
    expected = np.matmul(a.astype(np.float64), b.astype(np.float64))
    result = ember.matmul(ember.tensor(a, dtype=dtype), ember.tensor(b, dtype=dtype))
    check(result, np.asarray(expected), dtype)
    check(ember.tensor(a, dtype=dtype) @ ember.tensor(b, dtype=dtype), np.asarray(expected), dtype)


def test_matmul_of_strided_batches() -> None:
    a, b = make((3, 4, 2, 5), seed=12), make((3, 4, 6, 5), seed=13)
    # Permuted batches cannot fold without a copy; the batched path must still be right.
    left = ember.tensor(a).permute(1, 0, 2, 3)
    right = ember.tensor(b).permute(1, 0, 3, 2)
    expected = np.matmul(a.transpose(1, 0, 2, 3), b.transpose(1, 0, 3, 2))
    check(left @ right, expected, ember.float64)
    matrix = b[0, 0].T.copy()
    check(left @ ember.tensor(matrix), np.matmul(a.transpose(1, 0, 2, 3), matrix), ember.float64)


def test_matmul_integers() -> None:
    a, b = make((2, 3, 4), ember.int64, 14), make((4, 2), ember.int64, 15)
    check(ember.matmul(ember.tensor(a), ember.tensor(b)), a @ b, ember.int64)


def test_matmul_errors() -> None:
    with pytest.raises(RuntimeError, match="need to be at least 1D, but they are 0D and 1D"):
        ember.matmul(ember.tensor(1.0), ember.ones(2))
    with pytest.raises(RuntimeError, match="inconsistent tensor size"):
        ember.matmul(ember.ones(3), ember.ones(4))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        ember.matmul(ember.ones(2, 3), ember.ones(4))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        ember.matmul(ember.ones(5, 2, 3), ember.ones(4, 2))
    with pytest.raises(RuntimeError, match="batch2 tensor to be"):
        ember.matmul(ember.ones(5, 2, 3), ember.ones(5, 4, 2))
    with pytest.raises(RuntimeError, match="broadcast"):
        ember.matmul(ember.ones(2, 2, 3), ember.ones(3, 3, 2))
    with pytest.raises(RuntimeError, match="same dtype"):
        ember.matmul(ember.ones(2, 3, dtype=ember.float64), ember.ones(5, 3, 2))
    with pytest.raises(RuntimeError, match="Bool"):
        ember.matmul(ember.ones(3, dtype=ember.bool), ember.ones(3, dtype=ember.bool))


def test_matmul_out() -> None:
    a, b = make((4, 2, 3), seed=16), make((3, 5), seed=17)
    out = ember.zeros(4, 2, 5, dtype=ember.float64)
    assert ember.matmul(ember.tensor(a), ember.tensor(b), out=out) is out
    check(out, a @ b, ember.float64)
    vector = ember.empty(0, dtype=ember.float64)
    ember.matmul(ember.tensor(b[:, 0].copy()), ember.tensor(b[:, 0].copy()), out=vector)
    check(vector, np.asarray(b[:, 0] @ b[:, 0]), ember.float64)
    square = ember.zeros(2, 5, dtype=ember.float64)
    assert ember.matmul(ember.tensor(a[0]), ember.tensor(b), out=square) is square
    check(square, a[0] @ b, ember.float64)


def test_batch_dims_that_collapse_are_not_copied() -> None:
    a = ember.tensor(make((2, 3, 4, 5)))
    flat = linalg._as_batch(a, (2, 3), 6)
    assert flat.shape == (6, 4, 5) and flat.untyped_storage() is a.untyped_storage()
    b = ember.tensor(make((5, 2)))
    expanded = linalg._as_batch(b, (2, 3), 6)  # a broadcast operand stays a zero-stride view
    assert expanded.shape == (6, 5, 2) and expanded.untyped_storage() is b.untyped_storage()
