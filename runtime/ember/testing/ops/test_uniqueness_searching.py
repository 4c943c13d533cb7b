"""unique, unique_consecutive, searchsorted and bucketize against torch 2.13 on the same
inputs: values, int64 (or int32) inverse indices and counts, NaN as distinct values, slices
along a dim, insertion points on both sides, with sorters, batched boundaries and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

NAN = float("nan")


def _torch() -> Any:
    return pytest.importorskip("torch")


def _pair(data: Any, dtype: str, device: str) -> tuple[ember.Tensor, Any]:
    torch = _torch()
    array = np.asarray(data, dtype=dtype)
    return ember.tensor(array, device=device), torch.from_numpy(array.copy())


def _same(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            _same(a, b)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(ours.numpy(force=True), theirs.numpy())


CASES = [
    ([2.0, NAN, 1.0, NAN, 2.0, 1.0], "float32", None),
    ([[2, 1], [1, 1], [3, 2]], "int64", None),
    ([[1, 2], [1, 2], [0, 5]], "int64", 0),
    ([[1, 2, 1], [1, 2, 1], [0, 5, 0]], "int32", 1),
    ([[1, 2, 1], [1, 2, 1], [0, 5, 0]], "float64", -2),
    ([True, False, True, True], "bool", None),
    ([3, 3, 1, 1, 3], "uint8", 0),
    (7.0, "float32", None),
    ([], "float32", None),
    (np.zeros((2, 0, 3)), "float32", 1),
]


@pytest.mark.parametrize(("data", "dtype", "dim"), CASES)
@pytest.mark.parametrize("name", ["unique", "unique_consecutive"])
def test_unique_matches_torch(device: str, data: Any, dtype: str, dim: Any, name: str) -> None:
    ours, theirs = _pair(data, dtype, device)
    ours_fn, theirs_fn = getattr(ember, name), getattr(_torch(), name)
    for inverse in (False, True):
        for counts in (False, True):
            options = {"return_inverse": inverse, "return_counts": counts, "dim": dim}
            _same(ours_fn(ours, **options), theirs_fn(theirs, **options))


def test_unique_methods_and_sorted_flag(device: str) -> None:
    ours, theirs = _pair([3, 1, 2, 1, 3, 3], "int64", device)
    _same(ours.unique(sorted=False), theirs.unique(sorted=True))
    _same(ours.unique(return_counts=True), theirs.unique(return_counts=True))
    _same(
        ours.unique_consecutive(return_inverse=True), theirs.unique_consecutive(return_inverse=True)
    )


def test_unique_refuses_empty_unselected_dims(device: str) -> None:
    with pytest.raises(
        RuntimeError, match="There are 0 sized dimensions, and they aren't selected"
    ):
        ember.unique(ember.zeros(2, 0, 3, device=device), dim=0)


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_matches_torch_on_ties_nan_and_bounds(device: str, side: str) -> None:
    torch = _torch()
    boundaries = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 7.0]
    values = [[2.0, NAN, 0.0, 5.0, 3.0, 7.0, 8.0, 1.0, -1.0]]
    ours_b, theirs_b = _pair(boundaries, "float32", device)
    ours_v, theirs_v = _pair(values, "float32", device)
    right = side == "right"
    expected = torch.searchsorted(theirs_b, theirs_v, right=right)
    _same(ember.searchsorted(ours_b, ours_v, right=right), expected)
    _same(ember.searchsorted(ours_b, ours_v, side=side), expected)
    int32 = ember.searchsorted(ours_b, ours_v, side=side, out_int32=True)
    _same(int32, torch.searchsorted(theirs_b, theirs_v, side=side, out_int32=True))
    _same(ember.searchsorted(ours_b, 2.0, side=side), torch.searchsorted(theirs_b, 2.0, side=side))


@pytest.mark.parametrize("length", [1, 2, 5, 8, 13])
def test_batched_searchsorted_and_sorter_match_torch(device: str, length: int) -> None:
    torch = _torch()
    rng = np.random.default_rng(length)
    boundaries = np.sort(rng.integers(0, 6, (3, length)), axis=1)
    values = rng.integers(-1, 7, (3, 4))
    ours_b, theirs_b = _pair(boundaries, "int64", device)
    ours_v, theirs_v = _pair(values, "int64", device)
    for right in (False, True):
        expected = torch.searchsorted(theirs_b, theirs_v, right=right)
        _same(ember.searchsorted(ours_b, ours_v, right=right), expected)
    shuffled = rng.permutation(boundaries[0])
    sorter = np.argsort(shuffled, kind="stable")
    ours_s, theirs_s = _pair(shuffled, "int64", device)
    ours_o, theirs_o = _pair(sorter, "int64", device)
    _same(
        ember.searchsorted(ours_s, ours_v, sorter=ours_o),
        torch.searchsorted(theirs_s, theirs_v, sorter=theirs_o),
    )


def test_searchsorted_on_empty_boundaries_and_mixed_dtypes(device: str) -> None:
    torch = _torch()
    empty = ember.searchsorted(ember.zeros(0, device=device), ember.tensor([1.0], device=device))
    _same(empty, torch.searchsorted(torch.zeros(0), torch.tensor([1.0])))
    ours_b, theirs_b = _pair([1, 2, 2, 3], "int64", device)
    ours_v, theirs_v = _pair([1.5, 2.0, 9.0], "float32", device)
    _same(ember.searchsorted(ours_b, ours_v), torch.searchsorted(theirs_b, theirs_v))


@pytest.mark.parametrize("right", [False, True])
def test_bucketize_matches_torch(device: str, right: bool) -> None:
    torch = _torch()
    ours_b, theirs_b = _pair([1, 3, 5, 7, 9], "int64", device)
    ours_v, theirs_v = _pair([[3, 6, 9], [3, 6, 10]], "int64", device)
    _same(
        ember.bucketize(ours_v, ours_b, right=right),
        torch.bucketize(theirs_v, theirs_b, right=right),
    )
    _same(
        ember.bucketize(ours_v, ours_b, out_int32=True, right=right),
        torch.bucketize(theirs_v, theirs_b, out_int32=True, right=right),
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda s: ember.searchsorted(
                ember.zeros(2, 3, device=s.device), ember.zeros(3, 1, device=s.device)
            ),
            "boundaries tensor should be 1 dimension or the first N-1 dimensions",
        ),
        (lambda s: ember.searchsorted(s, s, side="left", right=True), "can't be set to opposites"),
        (
            lambda s: ember.searchsorted(s, s, side="foo"),
            "side can only be 'left' or 'right' but got foo",
        ),
        (
            lambda s: ember.searchsorted(
                s, s, sorter=ember.zeros(3, dtype=ember.int64, device=s.device)
            ),
            "boundary and sorter must have the same size",
        ),
        (
            lambda s: ember.bucketize(s, ember.zeros(2, 2, device=s.device)),
            "boundaries tensor must be 1 dimension",
        ),
    ],
)
def test_search_errors_match_torch(device: str, call: Any, message: str) -> None:
    with pytest.raises(RuntimeError, match=message):
        call(ember.tensor([1.0, 2.0, 2.0, 3.0], device=device))
