"""Factories: tensor, zeros/ones/full/empty and their _like forms, arange, linspace, eye."""

from __future__ import annotations

import numpy as np
import pytest

import ember

from ._reference import DTYPES, assert_close, host, make, pid, sample

INFERENCE = [
    ([1.0, 2.0], ember.float32, (2,)),
    ([1, 2], ember.int64, (2,)),
    ([True, False], ember.bool, (2,)),
    ([1, 2.5], ember.float32, (2,)),
    ([[1, 2], [3, 4]], ember.int64, (2, 2)),
    ([[]], ember.float32, (1, 0)),
    (2.5, ember.float32, ()),
    (3, ember.int64, ()),
    (False, ember.bool, ()),
    (np.float64(1.5), ember.float64, ()),
    (np.arange(3, dtype=np.int32), ember.int32, (3,)),
    (np.zeros((2, 0), dtype=np.float16), ember.float16, (2, 0)),
]


@pytest.mark.parametrize(("data", "dtype", "shape"), INFERENCE, ids=pid)
def test_tensor_infers_dtype_and_shape(device: str, data, dtype: ember.dtype, shape) -> None:
    t = ember.tensor(data, device=device)
    assert t.dtype is dtype
    assert tuple(t.shape) == shape
    assert t.device == ember.device(device)
    assert t.is_contiguous()
    assert_close(t, np.asarray(data), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=pid)
def test_tensor_with_dtype_copies(device: str, dtype: ember.dtype, rng) -> None:
    values = sample((2, 3), dtype, rng)
    t = ember.tensor(values.tolist(), dtype=dtype, device=device)
    assert_close(t, values, dtype)
    source = values.copy()
    t = ember.tensor(source, device=device)
    source[...] = 0
    assert_close(t, values, dtype)
    assert_close(ember.tensor(values[:, ::2], device=device), values[:, ::2], dtype)


def test_tensor_from_tensors(device: str) -> None:
    a = make([1.0, 2.0], device)
    assert_close(ember.tensor(a, device=device), np.array([1.0, 2.0]), ember.float32)
    assert_close(ember.tensor([make(np.float32(1.0), device), 2.0]), np.array([1.0, 2.0]))


SIZES = [((2, 3),), (2, 3), ([2, 3],), (ember.Size([2, 3]),)]


@pytest.mark.parametrize("size", SIZES, ids=["tuple", "varargs", "list", "Size"])
@pytest.mark.parametrize("factory", ["zeros", "ones", "empty"])
def test_size_arguments(device: str, size, factory: str) -> None:
    t = getattr(ember, factory)(*size, device=device)
    assert tuple(t.shape) == (2, 3)
    assert t.dtype is ember.float32
    assert t.stride() == (3, 1)


@pytest.mark.parametrize("dtype", DTYPES, ids=pid)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3, 4)], ids=pid)
def test_filled_factories(device: str, dtype: ember.dtype, shape: tuple) -> None:
    assert_close(ember.zeros(shape, dtype=dtype, device=device), np.zeros(shape), dtype)
    assert_close(ember.ones(shape, dtype=dtype, device=device), np.ones(shape), dtype)
    assert_close(ember.full(shape, 1, dtype=dtype, device=device), np.ones(shape), dtype)
    empty = ember.empty(shape, dtype=dtype, device=device)
    assert tuple(empty.shape) == shape and empty.dtype is dtype and empty.is_contiguous()


@pytest.mark.parametrize(
    ("value", "dtype"), [(2.5, ember.float32), (7, ember.int64), (True, ember.bool)], ids=str
)
def test_full_infers_dtype_from_value(device: str, value, dtype: ember.dtype) -> None:
    t = ember.full((2, 2), value, device=device)
    assert_close(t, np.full((2, 2), value), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=pid)
def test_like_factories(device: str, dtype: ember.dtype, rng) -> None:
    source = make(sample((2, 3), dtype, rng), device).t()  # strided: results are contiguous
    for result, want in (
        (ember.zeros_like(source), np.zeros((3, 2))),
        (ember.ones_like(source), np.ones((3, 2))),
        (ember.full_like(source, 1), np.ones((3, 2))),
    ):
        assert_close(result, want, dtype)
        assert result.device == source.device and result.is_contiguous()
    like = ember.empty_like(source)
    assert tuple(like.shape) == (3, 2) and like.dtype is dtype
    assert ember.zeros_like(source, dtype=ember.float64).dtype is ember.float64
    assert_close(source.new_zeros(4), np.zeros(4), dtype)
    assert_close(source.new_ones((1, 2)), np.ones((1, 2)), dtype)
    assert_close(source.new_full((2,), 1), np.ones(2), dtype)
    assert_close(source.new_tensor([1, 0]), np.array([1, 0]), dtype)
    assert tuple(source.new_empty(3, 1).shape) == (3, 1)


ARANGES = [
    ((5,), {}, ember.int64),
    ((2, 7), {}, ember.int64),
    ((1, 10, 3), {}, ember.int64),
    ((10, 0, -3), {}, ember.int64),
    ((0.0, 1.0, 0.25), {}, ember.float32),
    ((-1, 1, 0.5), {}, ember.float32),
    ((4,), {"dtype": ember.float64}, ember.float64),
    ((3, 3), {}, ember.int64),
    ((0.5,), {}, ember.float32),
    ((5,), {"dtype": ember.uint8}, ember.uint8),
]


@pytest.mark.parametrize(("args", "kwargs", "dtype"), ARANGES, ids=str)
def test_arange(device: str, args, kwargs, dtype: ember.dtype) -> None:
    t = ember.arange(*args, device=device, **kwargs)
    assert_close(t, np.arange(*args), dtype)


def test_arange_rejects_bad_steps(device: str) -> None:
    with pytest.raises(RuntimeError):
        ember.arange(0, 5, 0, device=device)
    with pytest.raises(RuntimeError):
        ember.arange(0, 5, -1, device=device)


@pytest.mark.parametrize(
    ("start", "end", "steps"), [(0, 1, 5), (-2.0, 3.0, 11), (1, 1, 3), (0, 10, 1), (0, 1, 0),
                                (3.0, -1.0, 4), (0.1, 0.7, 7)], ids=str)  # fmt: skip
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.float16], ids=pid)
def test_linspace(device: str, start, end, steps: int, dtype: ember.dtype) -> None:
    t = ember.linspace(start, end, steps, dtype=dtype, device=device)
    assert_close(t, np.linspace(start, end, steps), dtype)
    if steps > 1:
        assert host(t)[-1] == np.asarray(end, dtype=dtype.numpy)  # the end point is exact


@pytest.mark.parametrize(("n", "m"), [(3, None), (2, 4), (4, 2), (0, None), (1, 0)], ids=str)
@pytest.mark.parametrize("dtype", [ember.float32, ember.int64, ember.bool], ids=pid)
def test_eye(device: str, n: int, m, dtype: ember.dtype) -> None:
    t = ember.eye(n, m, dtype=dtype, device=device)
    assert_close(t, np.eye(n, m), dtype)


def test_factories_use_the_default_dtype(device: str) -> None:
    ember.set_default_dtype(ember.float64)
    try:
        made = [
            ember.zeros(2, device=device),
            ember.ones(2, device=device),
            ember.tensor([1.5], device=device),
            ember.arange(0.0, 1.0, 0.5, device=device),
            ember.linspace(0, 1, 3, device=device),
            ember.full((1,), 0.5, device=device),
        ]
    finally:
        ember.set_default_dtype(ember.float32)
    assert [t.dtype for t in made] == [ember.float64] * len(made)
    assert ember.get_default_dtype() is ember.float32


def test_negative_sizes_raise(device: str) -> None:
    with pytest.raises(RuntimeError):
        ember.zeros(2, -1, device=device)
    with pytest.raises(RuntimeError):
        ember.eye(-1, device=device)
    with pytest.raises(RuntimeError):
        ember.linspace(0, 1, -2, device=device)
