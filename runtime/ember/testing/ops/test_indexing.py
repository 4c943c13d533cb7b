"""Indexing: t[...] and t[...] = v with ints, slices, None, ..., integer tensors and masks;
gather, scatter, scatter_add, index_select, take, nonzero and masked_fill."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

from ._reference import (
    DTYPES,
    assert_close,
    laid_out,
    make,
    pid,
    sample,
    shares_storage,
)

SHAPE = (4, 5, 6)
IDX = np.array([0, 2, -1])
IDX2 = np.array([[1, 0], [3, 3]])
MASK_ROWS = np.array([True, False, True, True])

# (index built from NumPy arrays, is it basic indexing, i.e. a view?)
INDICES: dict[str, tuple[Any, bool]] = {
    "int": (1, True),
    "negative_int": (-1, True),
    "ints": ((1, 2), True),
    "all_ints": ((3, -1, 0), True),
    "slice": (slice(1, 3), True),
    "slice_step": (slice(None, None, 2), True),
    "slice_negative": (slice(-3, None), True),
    "slice_past_end": (slice(2, 100), True),
    "slice_empty": (slice(3, 1), True),
    "slices_steps": ((slice(1, None, 2), slice(None, None, 3), slice(-4, -1, 2)), True),
    "ellipsis_int": ((Ellipsis, 1), True),
    "ellipsis_middle": ((1, Ellipsis, slice(None, 2)), True),
    "none": (None, True),
    "none_middle": ((1, None, slice(None), None), True),
    "ellipsis_none": ((Ellipsis, None), True),
    "empty_tuple": ((), True),
    "int_tensor": (IDX, False),
    "int_tensor_2d": (IDX2, False),
    "int_list": ([0, 3], False),
    "int_tensor_second": ((slice(None), IDX), False),
    "int_tensors_broadcast": ((IDX2, np.array([0, 4])), False),
    "int_tensors_apart": ((IDX, slice(1, 3), np.array([5, 0, 2])), False),
    "int_and_tensor": ((1, IDX), False),
    "zero_dim_int_tensor": (np.array(2), True),  # a 0-d integer tensor acts as an int
    "mask_rows": (MASK_ROWS, False),
    "mask_full": ("full_mask", False),
    "mask_second": ((slice(None), np.array([False, True, False, True, True])), False),
    "mask_and_slice": ((MASK_ROWS, slice(None, None, 2)), False),
    "bool_scalar": (True, False),
    "empty_int_tensor": (np.array([], dtype=np.int64), False),
}


def _index(name: str, values: np.ndarray) -> Any:
    index = INDICES[name][0]
    if isinstance(index, str):  # a mask over every element, computed from the data
        return values > 0
    return index


def _to_ember(index: Any, device: str) -> Any:
    if isinstance(index, np.ndarray):
        return make(index, device)
    if isinstance(index, tuple):
        return tuple(_to_ember(i, device) for i in index)
    return index


@pytest.mark.parametrize("name", list(INDICES))
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_getitem(device: str, name: str, layout: str, rng) -> None:
    tensor, values = laid_out(sample(SHAPE, ember.float32, rng), layout, device)
    index = _index(name, values)
    result = tensor[_to_ember(index, device)]
    reference = values[index]
    assert_close(result, reference, ember.float32, rtol=0, atol=0)
    if INDICES[name][1]:
        assert shares_storage(result, tensor)
    else:
        assert not shares_storage(result, tensor)


@pytest.mark.parametrize("dtype", DTYPES, ids=pid)
def test_getitem_every_dtype(device: str, dtype: ember.dtype, rng) -> None:
    values = sample((4, 3), dtype, rng)
    tensor = make(values, device)
    assert_close(tensor[1], values[1], dtype)
    assert_close(tensor[:, ::2], values[:, ::2], dtype)
    assert_close(tensor[make(IDX, device)], values[IDX], dtype)
    assert_close(tensor[make(MASK_ROWS, device)], values[MASK_ROWS], dtype)


def test_getitem_zero_dim_and_zero_size(device: str) -> None:
    scalar = make(np.float32(3.0), device)
    assert_close(scalar[()], np.float32(3.0))
    assert_close(scalar[None], np.array([3.0]))
    assert_close(scalar[...], np.float32(3.0))
    empty = ember.zeros(0, 3, device=device)
    assert tuple(empty[:, 1].shape) == (0,)
    assert tuple(empty[make(np.array([], dtype=np.int64), device)].shape) == (0, 3)


@pytest.mark.parametrize(
    "index",
    [4, -5, (0, 6), (0, 0, 0, 0), np.array([4]), np.array([0, -5]), np.array([True, False])],
    ids=["int", "negative", "second_dim", "too_many", "tensor", "tensor_negative", "mask_shape"],
)
def test_getitem_out_of_range_raises(device: str, index) -> None:
    tensor = ember.zeros(4, 6, 1, device=device)
    with pytest.raises(IndexError):
        tensor[_to_ember(index, device)]


def test_getitem_rejects_negative_steps_and_float_indices(device: str) -> None:
    tensor = ember.zeros(4, device=device)
    with pytest.raises(ValueError, match="step"):
        tensor[::-1]
    with pytest.raises((IndexError, TypeError)):
        tensor[make([0.0, 1.0], device)]


# -- setitem ----------------------------------------------------------------------------------

SETITEM_CASES = [
    ("int", 1, lambda rng: 7.0),
    ("ints", (1, 2, 3), lambda rng: -2.0),
    ("slice_row", (slice(None), 1), lambda rng: sample((6,), ember.float32, rng)),
    ("slice_broadcast", (slice(1, 3), slice(None), slice(None, None, 2)),
     lambda rng: sample((5, 1), ember.float32, rng)),
    ("ellipsis", (Ellipsis, 0), lambda rng: sample((4, 5), ember.float32, rng)),
    ("zero_dim_tensor", (0, 0, 0), lambda rng: np.array(5.5, dtype=np.float32)),
    ("mask_scalar", "full_mask", lambda rng: 0.0),
    ("mask_rows_values", MASK_ROWS, lambda rng: sample((5, 6), ember.float32, rng)),
    ("int_tensor", IDX, lambda rng: 3.0),
    ("int_tensor_values", (IDX, slice(None), 2), lambda rng: sample((3, 5), ember.float32, rng)),
    ("int_tensors", (np.array([0, 2]), np.array([1, 4])),
     lambda rng: sample((2, 6), ember.float32, rng)),
    ("everything", Ellipsis, lambda rng: 1.0),
]  # fmt: skip


@pytest.mark.parametrize(("name", "index", "make_value"), SETITEM_CASES, ids=pid)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_setitem(device: str, name: str, index, make_value, layout: str, rng) -> None:
    tensor, values = laid_out(sample(SHAPE, ember.float32, rng), layout, device)
    values = values.copy()
    if isinstance(index, str):
        index = values > 0
    value = make_value(rng)
    version = tensor._version
    tensor[_to_ember(index, device)] = (
        make(value, device) if isinstance(value, np.ndarray) else value
    )
    values[index] = value
    assert_close(tensor, values, ember.float32, rtol=0, atol=0)
    assert tensor._version > version


def test_setitem_writes_through_a_view(device: str, rng) -> None:
    values = sample((3, 4), ember.float32, rng)
    base = make(values, device)
    view = base[:, 1:]
    view[0] = 9.0
    view[:, make(np.array([0, 2]), device)] = -1.0
    values[0, 1:] = 9.0
    values[:, [1, 3]] = -1.0
    assert_close(base, values)
    assert base._version == view._version


@pytest.mark.parametrize("dtype", DTYPES, ids=pid)
def test_setitem_converts_the_value(device: str, dtype: ember.dtype) -> None:
    tensor = ember.zeros(3, dtype=dtype, device=device)
    tensor[1] = 1
    tensor[make(np.array([2]), device)] = make(np.array([1.0], dtype=np.float64), device)
    assert_close(tensor, np.array([0, 1, 1]), dtype)


def test_setitem_of_float_into_int_truncates(device: str) -> None:
    tensor = ember.zeros(2, dtype=ember.int64, device=device)
    tensor[0] = 2.7
    tensor[1] = -2.7
    assert_close(tensor, np.array([2, -2]), ember.int64)


# -- gather, scatter, scatter_add, index_select, take, nonzero, masked_fill ----------------------


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", [ember.float32, ember.int64, ember.bool, ember.float16], ids=pid)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_gather(device: str, dim: int, dtype: ember.dtype, layout: str, rng) -> None:
    tensor, values = laid_out(sample((3, 4), dtype, rng), layout, device)
    index_shape = (2, 3) if dim == 0 else (3, 2)
    index = rng.integers(0, values.shape[dim], size=index_shape)
    result = ember.gather(tensor, dim, make(index, device))
    reference = np.empty(index.shape, dtype=values.dtype)
    for position in np.ndindex(*index.shape):
        source = list(position)
        source[dim] = index[position]
        reference[position] = values[tuple(source)]
    assert_close(result, reference, dtype)
    assert_close(tensor.gather(dim, make(index, device)), reference, dtype)


def _scatter_reference(values, dim, index, src, add: bool) -> np.ndarray:
    out = values.astype(np.float64).copy()
    for position in np.ndindex(*index.shape):
        target = list(position)
        target[dim] = index[position]
        item = src if np.isscalar(src) else src[position]
        out[tuple(target)] = out[tuple(target)] + item if add else item
    return out


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("dtype", [ember.float32, ember.int32, ember.float64], ids=pid)
def test_scatter_and_scatter_add(device: str, dim: int, dtype: ember.dtype, rng) -> None:
    values = sample((3, 4), dtype, rng)
    src = sample((3, 4), dtype, rng)
    # Distinct targets along `dim` (which duplicate wins is unspecified for scatter).
    index = np.stack([rng.permutation(values.shape[dim])[:2] for _ in range(2)])
    if dim == 0:
        index = index.T
    tensor = make(values, device)
    ember_index, ember_src = make(index, device), make(src, device)
    want = _scatter_reference(values, dim, index, src, add=False)
    assert_close(ember.scatter(tensor, dim, ember_index, ember_src), want, dtype)
    assert_close(tensor, values, dtype)  # the out-of-place form leaves its input alone
    want_scalar = _scatter_reference(values, dim, index, 2, add=False)
    assert_close(tensor.scatter(dim, ember_index, 2), want_scalar, dtype)
    duplicates = rng.integers(0, values.shape[dim], size=(3, 4))
    want_add = _scatter_reference(values, dim, duplicates, src, add=True)
    assert_close(ember.scatter_add(tensor, dim, make(duplicates, device), ember_src), want_add)
    version = tensor._version
    assert tensor.scatter_add_(dim, make(duplicates, device), ember_src) is tensor
    assert_close(tensor, want_add, dtype)
    assert tensor._version > version
    tensor.scatter_(dim, ember_index, ember_src)
    assert_close(tensor, _scatter_reference(want_add, dim, index, src, add=False), dtype)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", DTYPES, ids=pid)
def test_index_select(device: str, dim: int, dtype: ember.dtype, rng) -> None:
    tensor, values = laid_out(sample((3, 4), dtype, rng), "transposed", device)
    index = np.array([2, 0, 0, 1])
    result = ember.index_select(tensor, dim, make(index, device))
    assert_close(result, np.take(values, index, axis=dim), dtype)
    assert_close(tensor.index_select(dim, make(np.array([], np.int64), device)),
                 np.take(values, np.array([], np.int64), axis=dim), dtype)  # fmt: skip


def test_take(device: str, rng) -> None:
    tensor, values = laid_out(sample((3, 4), ember.float32, rng), "transposed", device)
    index = np.array([[0, 11], [-1, 5]])
    assert_close(ember.take(tensor, make(index, device)), np.take(values, index))


@pytest.mark.parametrize("dtype", [ember.float32, ember.int8, ember.bool], ids=pid)
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 0), ()], ids=pid)
def test_nonzero(device: str, dtype: ember.dtype, shape: tuple, rng) -> None:
    values = sample(shape, dtype, rng) * (rng.random(shape) < 0.5)
    result = ember.nonzero(make(values.astype(dtype.numpy), device))
    assert_close(result, np.argwhere(values), ember.int64)


@pytest.mark.parametrize("dtype", DTYPES, ids=pid)
@pytest.mark.parametrize("mask_shape", [(3, 4), (4,), (3, 1), ()], ids=pid)
def test_masked_fill(device: str, dtype: ember.dtype, mask_shape: tuple, rng) -> None:
    tensor, values = laid_out(sample((3, 4), dtype, rng), "transposed", device)
    mask = rng.random(mask_shape) < 0.5
    result = ember.masked_fill(tensor, make(mask, device), 1)
    assert_close(result, np.where(mask, 1, values), dtype)
    assert_close(tensor, values, dtype)
    filled = tensor.masked_fill(make(mask, device), make(np.array(0), device))
    assert_close(filled, np.where(mask, 0, values), dtype)
    version = tensor._version
    assert tensor.masked_fill_(make(mask, device), 1) is tensor
    assert_close(tensor, np.where(mask, 1, values), dtype)
    assert tensor._version > version
