"""Indexing against NumPy: `t[...]` reads and writes, gather/scatter, index_select, take,
masked_fill and nonzero; views share storage, and bad indices raise clear errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

SHAPE = (2, 3, 4, 5)
DATA = np.arange(120, dtype=np.float32).reshape(SHAPE)
MASK_2x3 = np.array([[True, False, True], [False, False, True]])
MASK_4 = np.array([True, False, True, True])


def host(t: ember.Tensor) -> np.ndarray:
    return np.asarray(t)


def to_ember(index: Any) -> Any:
    """The same index with NumPy arrays turned into ember tensors."""
    if isinstance(index, tuple):
        return tuple(to_ember(i) for i in index)
    if isinstance(index, np.ndarray):
        return ember.tensor(index.reshape(-1)).reshape(index.shape)
    return index


def sizes_and_strides(t: Any, itemsize: int) -> list[tuple[int, int]]:
    """(size, stride in elements) of every dim longer than 1 (others' strides are free)."""
    strides = t.stride() if isinstance(t, ember.Tensor) else [s // itemsize for s in t.strides]
    return [(n, s) for n, s in zip(t.shape, strides, strict=True) if n > 1]


# Indices that NumPy reads exactly as PyTorch does.
BASIC = [
    1, -1, (0, 1), (slice(None), 2), (Ellipsis, 1), (None, 1), (1, None, Ellipsis, None),
    slice(1, None), (slice(None, None, 2), slice(1, 3), slice(None, None, 3)), slice(5, 10),
    Ellipsis, (), None, (0, 0, 0, 0), (Ellipsis, None), (1, Ellipsis, 2, None),
    (slice(-100, 100),), (slice(None), slice(3, 1)), (slice(None), -3, slice(None, None, 4)),
]  # fmt: skip
ADVANCED = [
    [0, 1], [-1], ([0, 1], [1, 2]), ([0, 1], slice(None), [1, 2]), (slice(None), [0, 2], [1, 3]),
    (slice(None), [0, 2], slice(None), [1, 3]), (np.array([[0], [1]]), np.array([1, 2, 0])),
    (np.array([True, False]),), (slice(None), np.array([True, False, True])), (MASK_2x3,),
    (np.zeros((2, 3), dtype=bool),), ([0, 1], None, [0, 1]),
    (Ellipsis, [0, -1]), ([-2, 1], Ellipsis, [4, -5]), ([0, 1], 1, [2, 3]), (1, [0, 1], 2),
    (slice(None), slice(None), MASK_4), (Ellipsis, np.array([True, False, True, True, False])),
    (np.array([0, 1], dtype=np.int32),), (1, np.array([[2, 0], [1, 1]]), slice(1, 4)),
]  # fmt: skip


@pytest.mark.parametrize("index", BASIC, ids=repr)
def test_basic_indexing_is_a_view_like_numpy(index: Any) -> None:
    t = ember.tensor(DATA)
    result = t[index]
    expected = DATA[index]
    assert result.shape == expected.shape
    np.testing.assert_array_equal(host(result), expected)
    assert result.untyped_storage() is t.untyped_storage()
    assert sizes_and_strides(result, 1) == sizes_and_strides(expected, DATA.itemsize)


@pytest.mark.parametrize("index", ADVANCED, ids=repr)
def test_advanced_indexing_copies_like_numpy(index: Any) -> None:
    t = ember.tensor(DATA)
    result = t[to_ember(index)]
    expected = DATA[index]
    assert result.shape == expected.shape
    np.testing.assert_array_equal(host(result), expected)
    assert result.untyped_storage() is not t.untyped_storage()
    assert result.is_contiguous()


def test_writes_through_a_basic_view_show_in_the_base() -> None:
    t = ember.zeros(3, 4)
    row = t[1]
    row[2] = 5.0
    column = t[:, 3]
    column.fill_(7.0)
    assert t.tolist() == [[0, 0, 0, 7], [0, 0, 5, 7], [0, 0, 0, 7]]


def test_strides_and_offsets_of_basic_views_match_pytorch() -> None:
    t = ember.zeros(2, 3, 4)
    assert t[1].stride() == (4, 1) and t[1].storage_offset() == 12
    assert t[:, 1:3, ::2].stride() == (12, 4, 2) and t[:, 1:3, ::2].storage_offset() == 4
    assert t[:, None].stride() == (12, 12, 4, 1)
    assert t[..., None].stride() == (12, 4, 1, 1)
    assert t[:, ::2].is_contiguous() is False
    assert t[1:].is_contiguous() is True


@pytest.mark.parametrize(
    ("index", "numpy_index"),
    [
        ([[0, 1], [1, 0]], ([0, 1], [1, 0])),  # a short list holding lists is a tuple
        ([0, slice(None)], (0, slice(None))),
        ([], np.array([], dtype=np.int64)),
    ],
    ids=repr,
)
def test_lists_follow_pytorchs_sequence_rule(index: Any, numpy_index: Any) -> None:
    result = ember.tensor(DATA)[index]
    np.testing.assert_array_equal(host(result), DATA[numpy_index])


def test_ints_beside_tensors_are_basic_indices_as_in_pytorch() -> None:
    # NumPy counts the 2 as an advanced index that is separated from [0, 1] by None, so its
    # result dims go first; PyTorch selects with it first, leaving [0, 1] alone in place.
    result = ember.tensor(DATA)[None, [0, 1], None, 2]
    np.testing.assert_array_equal(host(result), DATA[:, 2][None, [0, 1], None])


def test_bool_scalars_and_zero_dim_tensors_as_indices() -> None:
    t = ember.tensor(DATA)
    assert t[True].shape == (1, *SHAPE)
    assert t[False].shape == (0, *SHAPE)
    assert t[1, True].shape == (1, 3, 4, 5)
    zero_d = ember.tensor([2]).reshape(())
    view = t[:, zero_d]  # a 0-d integer tensor selects, like an int: a view
    np.testing.assert_array_equal(host(view), DATA[:, 2])
    assert view.untyped_storage() is t.untyped_storage()


def test_indexing_a_non_contiguous_tensor() -> None:
    t = ember.tensor(DATA).permute(3, 1, 0, 2)
    expected = DATA.transpose(3, 1, 0, 2)
    np.testing.assert_array_equal(host(t[1:, [0, 2], :, 1:]), expected[1:, [0, 2], :, 1:])
    np.testing.assert_array_equal(host(t[[4, 0], ..., [1, 3]]), expected[[4, 0], ..., [1, 3]])


SET_CASES = [
    1, (slice(None), [0, 2]), ([0, 1], slice(None), [1, 2]), (Ellipsis, [0, -1]),
    (slice(None), [0, 2], slice(None), [1, 3]), (MASK_2x3,), (0, Ellipsis, None),
    (slice(1, None, 2),),
]  # fmt: skip


@pytest.mark.parametrize("index", SET_CASES, ids=repr)
@pytest.mark.parametrize("value_kind", ["scalar", "full", "leading_one", "broadcast"])
def test_setitem_like_numpy(index: Any, value_kind: Any) -> None:
    expected = DATA.astype(np.int32)
    shape = expected[index].shape
    if value_kind == "scalar":
        value: Any = 7.9  # cast to the tensor's dtype, as PyTorch does
        np_value: Any = 7
    else:
        value_shape = {"full": shape, "leading_one": (1, *shape), "broadcast": shape[-1:]}
        np_value = np.arange(np.prod(value_shape[value_kind]), dtype=np.int32) + 1000
        np_value = np_value.reshape(value_shape[value_kind])
        value = ember.tensor(np_value.astype(np.float64))
    t = ember.tensor(expected, dtype=ember.int32)
    version = t._version
    t[to_ember(index)] = value
    expected[index] = (
        np_value.reshape(np_value.shape[1:]) if value_kind == "leading_one" else np_value
    )
    np.testing.assert_array_equal(host(t), expected)
    assert t._version > version


def test_setitem_reads_overlapping_values_before_writing() -> None:
    t = ember.arange(6)
    t[1:] = t[:-1]
    assert t.tolist() == [0, 0, 1, 2, 3, 4]


def test_setitem_accepts_lists_and_writes_through_views() -> None:
    base = ember.zeros(2, 3)
    base[0] = [1, 2, 3]
    view = base[:, 1:]
    view[[1], [1]] = 9.0
    assert base.tolist() == [[1, 2, 3], [0, 0, 9]]


@pytest.mark.parametrize(
    ("index", "error", "message"),
    [
        (5, IndexError, "index 5 is out of bounds for dimension 0 with size 2"),
        ((0, 9), IndexError, "index 9 is out of bounds for dimension 1 with size 3"),
        ([0, 2], IndexError, "index 2 is out of bounds for dimension 0 with size 2"),
        (([0], [-4]), IndexError, "index -4 is out of bounds for dimension 1 with size 3"),
        (slice(None, None, -1), ValueError, "step must be greater than zero"),
        ((slice(None), slice(None, None, 0)), ValueError, "step must be greater than zero"),
        ((Ellipsis, Ellipsis), IndexError, "single ellipsis"),
        ((0, 0, 0, 0, 0), IndexError, "too many indices for tensor of dimension 4"),
        (([0, 1], [0, 1, 2]), IndexError, "could not be broadcast together with shapes [2], [3]"),
        (1.5, IndexError, "only integers, slices"),
        (np.array([0.5]), IndexError, "tensors used as indices must be long, int, byte or bool"),
        (np.array([True, False, True]), IndexError, "The shape of the mask [3] at index 0"),
    ],
    ids=repr,
)
def test_bad_indices_raise_like_pytorch(index: Any, error: type, message: str) -> None:
    t = ember.tensor(DATA)
    with pytest.raises(error, match=message.replace("[", r"\[").replace("]", r"\]")):
        t[to_ember(index) if not isinstance(index, np.ndarray) else ember.tensor(index)]


def test_bad_setitem_values_raise() -> None:
    t = ember.zeros(4)
    with pytest.raises(RuntimeError, match="expanded size of the tensor"):
        t[0:2] = ember.ones(3)
    with pytest.raises(RuntimeError, match=r"value tensor of shape \[3\] cannot be broadcast"):
        t[[0, 1]] = ember.ones(3)
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        ember.ones(1).reshape(())[0]


# -- gather, scatter, index_select, take ------------------------------------------------------

X = np.random.default_rng(0).integers(0, 100, (3, 4, 5)).astype(np.float32)


def np_gather(a: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    out = np.empty(index.shape, a.dtype)
    for p in np.ndindex(*index.shape):
        q = list(p)
        q[dim] = index[p]
        out[p] = a[tuple(q)]
    return out


def np_scatter(a: np.ndarray, dim: int, index: np.ndarray, src: Any, add: bool) -> np.ndarray:
    out = a.copy()
    for p in np.ndindex(*index.shape):
        q = list(p)
        q[dim] = index[p]
        value = src[p] if isinstance(src, np.ndarray) else src
        out[tuple(q)] = out[tuple(q)] + value if add else value
    return out


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
@pytest.mark.parametrize("index_dtype", [ember.int64, ember.int32])
def test_gather(dim: int, index_dtype: ember.dtype) -> None:
    size = X.shape[dim]
    index = np.random.default_rng(1).integers(0, size, (2, 3, 2))
    result = ember.gather(ember.tensor(X), dim, ember.tensor(index, dtype=index_dtype))
    np.testing.assert_array_equal(host(result), np_gather(X, dim, index))
    transposed = ember.tensor(X.transpose(2, 1, 0).copy()).permute(2, 1, 0)
    np.testing.assert_array_equal(
        host(transposed.gather(dim, ember.tensor(index))), np_gather(X, dim, index)
    )


@pytest.mark.parametrize("add", [False, True])
@pytest.mark.parametrize("dim", [0, 2])
def test_scatter_and_scatter_add(add: bool, dim: int) -> None:
    index = np.random.default_rng(2).integers(0, X.shape[dim], (2, 3, 4))
    src = np.ones((3, 4, 5), np.float32) * 2
    target = np.zeros_like(X) if not add else X
    name = "scatter_add" if add else "scatter"
    t = ember.tensor(target)
    result = getattr(t, name)(dim, ember.tensor(index), ember.tensor(src))
    expected = np_scatter(target, dim, index, src, add)
    np.testing.assert_array_equal(host(result), expected)
    np.testing.assert_array_equal(host(t), target)  # out of place
    version = t._version
    assert getattr(t, name + "_")(dim, ember.tensor(index), ember.tensor(src)) is t
    np.testing.assert_array_equal(host(t), expected)
    assert t._version > version


def test_scatter_with_a_scalar() -> None:
    index = np.array([[0, 1], [2, 3], [1, 1]])
    result = ember.zeros(3, 4).scatter(1, ember.tensor(index), 2.5)
    np.testing.assert_array_equal(host(result), np_scatter(np.zeros((3, 4)), 1, index, 2.5, False))


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_index_select(dim: int) -> None:
    index = np.array([2, 0, 2])
    result = ember.index_select(ember.tensor(X), dim, ember.tensor(index))
    np.testing.assert_array_equal(host(result), np.take(X, index, axis=dim))
    one = ember.tensor(X).index_select(dim, ember.tensor([1]).reshape(()))
    assert one.shape == np.take(X, [1], axis=dim).shape


def test_take_reads_row_major_elements_with_negative_indices() -> None:
    index = np.array([[0, 59], [-1, -60]])
    result = ember.take(ember.tensor(X).transpose(0, 2), ember.tensor(index))
    np.testing.assert_array_equal(host(result), X.transpose(2, 1, 0).reshape(-1)[index])


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda t, i: t.gather(0, i + 3), IndexError, "index 4 is out of bounds for dimension 0"),
        (lambda t, i: t.gather(0, i - 1), IndexError, "index -1 is out of bounds"),
        (lambda t, i: t.gather(0, i.float()), TypeError, "Expected dtype int64 for index"),
        (lambda t, i: t.gather(0, i[0]), RuntimeError, "same number of dimensions"),
        (lambda t, i: t.scatter(1, i + 3, t), IndexError, "index 4 is out of bounds"),
        (lambda t, i: t.scatter(0, i, t.double()), RuntimeError, "self.dtype to be equal"),
        (lambda t, i: t.index_select(1, i[0, 0] + 4), IndexError, "index 5 is out of bounds"),
        (lambda t, i: t.index_select(0, i), IndexError, "Index is supposed to be a vector"),
        (lambda t, i: t.take(i.flatten() + 59), IndexError, "tried to access index 60"),
        (lambda t, i: t.scatter_add(0, i, 1.0), TypeError, "must be a Tensor"),
    ],
    ids=range(10),
)
def test_index_op_errors(call: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call(ember.tensor(X), ember.tensor([[[0, 1]]]))


# -- masked_fill and nonzero ------------------------------------------------------------------

MASK = np.random.default_rng(3).random((4, 5)) < 0.5


def test_masked_fill_broadcasts_and_keeps_the_dtype() -> None:
    result = ember.tensor(X.astype(np.int64)).masked_fill(ember.tensor(MASK), 2.7)
    assert result.dtype is ember.int64
    np.testing.assert_array_equal(host(result), np.where(MASK, 2, X.astype(np.int64)))
    grown = ember.tensor(X[:, :1]).masked_fill(ember.tensor(MASK), -1.5)
    np.testing.assert_array_equal(host(grown), np.where(MASK, -1.5, X[:, :1]))


def test_masked_fill_in_place() -> None:
    t = ember.tensor(X)
    value = ember.tensor([3.0]).reshape(())
    assert t.masked_fill_(ember.tensor(MASK), value) is t
    np.testing.assert_array_equal(host(t), np.where(MASK, 3.0, X))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        ember.tensor(X[:, :1]).masked_fill_(ember.tensor(MASK), 1.0)
    with pytest.raises(RuntimeError, match="only supports boolean masks"):
        t.masked_fill(ember.tensor(MASK.astype(np.float32)), 1.0)
    with pytest.raises(RuntimeError, match="0-dimensional value tensor"):
        t.masked_fill(ember.tensor(MASK), ember.ones(2))


def test_nonzero() -> None:
    np.testing.assert_array_equal(host(ember.nonzero(ember.tensor(MASK))), np.argwhere(MASK))
    rows, columns = ember.nonzero(ember.tensor(X[0] - 50), as_tuple=True)
    expected = np.nonzero(X[0] - 50)
    np.testing.assert_array_equal(host(rows), expected[0])
    np.testing.assert_array_equal(host(columns), expected[1])
    assert ember.tensor([1.0]).reshape(()).nonzero().shape == (1, 0)


def test_indexing_ops_are_public_names() -> None:
    for name in ("gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "index_select",
                 "masked_fill", "masked_fill_", "nonzero", "take"):  # fmt: skip
        assert callable(getattr(ember, name))
