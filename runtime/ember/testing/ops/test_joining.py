"""cat, stack, split, chunk and unbind: values, dtype promotion, views of the pieces."""

from __future__ import annotations

import numpy as np
import pytest

import ember

from ._reference import assert_close, host, laid_out, make, pid, sample, shares_storage

CAT_CASES = [
    ([(2, 3), (4, 3)], 0),
    ([(2, 3), (2, 1), (2, 0)], 1),
    ([(2, 3), (2, 5)], -1),
    ([(2, 3, 4), (2, 1, 4), (2, 2, 4)], 1),
    ([(0, 3), (2, 3)], 0),
    ([(5,)], 0),
]


@pytest.mark.parametrize(("shapes", "dim"), CAT_CASES, ids=pid)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_cat(device: str, shapes, dim: int, layout: str, rng) -> None:
    tensors, arrays = [], []
    for shape in shapes:
        kind = layout if len(shape) >= 2 else "contiguous"
        tensor, values = laid_out(sample(shape, ember.float32, rng), kind, device)
        tensors.append(tensor)
        arrays.append(values)
    result = ember.cat(tensors, dim)
    assert_close(result, np.concatenate(arrays, axis=dim), ember.float32, rtol=0, atol=0)
    assert result.is_contiguous()
    assert_close(ember.cat(tuple(tensors), dim=dim), np.concatenate(arrays, axis=dim))


@pytest.mark.parametrize(
    "dtypes",
    [(ember.int32, ember.float16), (ember.uint8, ember.int8), (ember.bool, ember.int64),
     (ember.float32, ember.float64, ember.int64)],
    ids=lambda ds: "-".join(d.name for d in ds),
)  # fmt: skip
def test_cat_promotes(device: str, dtypes, rng) -> None:
    arrays = [sample((2, 2), dt, rng) for dt in dtypes]
    result = ember.cat([make(a, device) for a in arrays])
    want = ember.result_type(*[make(a, device) for a in arrays])
    assert_close(result, np.concatenate([a.astype(np.float64) for a in arrays]), want)


def test_cat_skips_legacy_empty_vectors(device: str, rng) -> None:
    values = sample((2, 3), ember.float32, rng)
    result = ember.cat([ember.zeros(0, device=device), make(values, device)], 1)
    assert_close(result, values)


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_stack(device: str, dim: int, rng) -> None:
    arrays = [sample((2, 3), ember.float32, rng) for _ in range(3)]
    tensors = [make(a, device) for a in arrays]
    tensors[1] = tensors[1].t().contiguous().t()  # a strided operand
    result = ember.stack(tensors, dim)
    assert_close(result, np.stack(arrays, axis=dim), ember.float32, rtol=0, atol=0)


@pytest.mark.parametrize(
    ("size", "split", "dim"),
    [(7, 3, 0), (6, 2, 0), (5, [1, 0, 4], 0), (4, [4], 1), (0, 2, 0), (5, 10, 1)],
    ids=str,
)
def test_split_gives_views(device: str, size: int, split, dim: int, rng) -> None:
    shape = (size, 3) if dim == 0 else (2, size)
    values = sample(shape, ember.float32, rng)
    tensor = make(values, device)
    pieces = tensor.split(split, dim)
    assert len(pieces) == len(ember.split(tensor, split, dim))
    if isinstance(split, int):
        sizes = [min(split, size - i) for i in range(0, size, split)] or [0]
    else:
        sizes = split
    assert [p.shape[dim] for p in pieces] == sizes
    offsets = np.cumsum([0, *sizes])
    for piece, start, stop in zip(pieces, offsets[:-1], offsets[1:], strict=True):
        want = values[start:stop] if dim == 0 else values[:, start:stop]
        assert_close(piece, want, ember.float32, rtol=0, atol=0)
        assert shares_storage(piece, tensor)


CHUNKS = [(5, 3, [2, 2, 1]), (6, 4, [2, 2, 2]), (6, 3, [2, 2, 2]), (2, 5, [1, 1])]


@pytest.mark.parametrize(("size", "chunks", "sizes"), CHUNKS)
def test_chunk(device: str, size: int, chunks: int, sizes: list, rng) -> None:
    values = sample((3, size), ember.float32, rng)
    tensor = make(values, device)
    pieces = tensor.chunk(chunks, 1)
    assert [p.shape[1] for p in pieces] == sizes
    assert [p.shape[1] for p in ember.chunk(tensor, chunks, -1)] == sizes
    np.testing.assert_array_equal(np.concatenate([host(p) for p in pieces], 1), values)
    assert all(shares_storage(p, tensor) for p in pieces)


def test_unbind(device: str, rng) -> None:
    values = sample((2, 3), ember.float32, rng)
    tensor = make(values, device)
    rows = tensor.unbind(0)
    columns = ember.unbind(tensor, 1)
    assert len(rows) == 2 and len(columns) == 3
    for i, row in enumerate(rows):
        assert_close(row, values[i])
    for j, column in enumerate(columns):
        assert_close(column, values[:, j])
        assert shares_storage(column, tensor)
    assert [tuple(row.shape) for row in tensor] == [(3,), (3,)]


@pytest.mark.parametrize(
    "call",
    [
        lambda d: ember.cat([ember.zeros(2, 3, device=d), ember.zeros(3, 2, device=d)]),
        lambda d: ember.cat([ember.zeros(2, 3, device=d), ember.zeros(2, 3, 1, device=d)]),
        lambda d: ember.cat([ember.zeros((), device=d)]),
        lambda d: ember.cat([ember.zeros(2, device=d)], 1),
        lambda d: ember.stack([ember.zeros(2, device=d), ember.zeros(3, device=d)]),
        lambda d: ember.zeros(5, device=d).split([2, 2]),
        lambda d: ember.zeros(5, device=d).chunk(0),
    ],
    ids=["cat_sizes", "cat_ndim", "cat_0d", "cat_dim", "stack_shapes",
         "split_sum", "chunk_zero"],
)  # fmt: skip
def test_joining_errors(device: str, call) -> None:
    with pytest.raises((RuntimeError, IndexError)):
        call(device)


def test_cat_of_nothing_raises(device: str) -> None:
    with pytest.raises((RuntimeError, ValueError)):
        ember.cat([])
