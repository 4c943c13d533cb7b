"""sort, argsort, msort, topk and kthvalue against torch 2.13 on the same inputs.

Values and indices must equal torch's stable sort (ties in index order, NaN largest);
gradients of the values by finite differences in float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

NAN, INF = float("nan"), float("inf")

# Ties, NaN, ±inf and a non-power-of-two length (11).
SPECIAL = [3.0, 1.0, NAN, 1.0, INF, -INF, 2.0, 1.0, NAN, -0.0, 0.0]


def _torch() -> Any:
    return pytest.importorskip("torch")


def _pair(data: Any, dtype: str, device: str) -> tuple[ember.Tensor, Any]:
    torch = _torch()
    array = np.asarray(data, dtype=dtype)
    return ember.tensor(array, device=device), torch.from_numpy(array.copy())


def _same(ours: ember.Tensor, theirs: Any) -> None:
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(ours.numpy(force=True), theirs.numpy())


def _random(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith("int"):
        return rng.integers(-4, 5, shape).astype(dtype)  # many ties
    return rng.integers(-3, 4, shape).astype(dtype) / 2  # ties in float too


@pytest.mark.parametrize("descending", [False, True])
def test_sort_special_values_match_torch_stable_sort(device: str, descending: bool) -> None:
    ours, theirs = _pair(SPECIAL, "float32", device)
    result = ember.sort(ours, descending=descending)
    expected = theirs.sort(descending=descending, stable=True)
    _same(result.values, expected.values)
    _same(result.indices, expected.indices)
    values, indices = result  # unpackable like torch.return_types.sort
    _same(values, expected[0])
    _same(indices, expected[1])


@pytest.mark.parametrize(
    ("shape", "dtype", "dim"),
    [
        ((5, 7), "float32", -1),
        ((5, 7), "float64", 0),
        ((3, 4, 6), "float32", 1),
        ((3, 4, 6), "int64", -2),
        ((2, 9), "int32", -1),
        ((4, 5), "bool", 1),
        ((3, 10), "int8", -1),
        ((10, 2), "uint8", 0),
        ((2, 13), "float16", 1),
        ((6,), "float32", 0),
        ((1,), "float32", 0),
        ((3, 1), "float32", -1),
        ((0,), "float32", 0),
        ((3, 0), "int64", 1),
        ((0, 4), "float32", 1),
    ],
)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_torch(
    device: str, shape: tuple[int, ...], dtype: str, dim: int, descending: bool
) -> None:
    ours, theirs = _pair(_random(shape, dtype), dtype, device)
    result = ours.sort(dim, descending)
    expected = theirs.sort(dim=dim, descending=descending, stable=True)
    _same(result.values, expected.values)
    _same(result.indices, expected.indices)
    _same(ember.argsort(ours, dim, descending=descending), expected.indices)
    _same(ours.argsort(dim=dim, descending=descending, stable=True), expected.indices)


def test_sort_zero_dim_and_msort(device: str) -> None:
    torch = _torch()
    scalar = ember.tensor(2.5, device=device)
    values, indices = ember.sort(scalar, -1)
    _same(values, torch.tensor(2.5))
    _same(indices, torch.tensor(0))
    ours, theirs = _pair(_random((6, 3), "float32", 1), "float32", device)
    _same(ember.msort(ours), torch.msort(theirs))
    _same(ours.msort(), torch.msort(theirs))


@pytest.mark.parametrize(("k", "dim", "largest"), [(3, -1, True), (2, 0, False), (7, 1, True)])
def test_topk_matches_torch(device: str, k: int, dim: int, largest: bool) -> None:
    rng = np.random.default_rng(2)
    data = rng.permutation(35).reshape(5, 7).astype("float32")  # distinct: indices defined
    ours, theirs = _pair(data, "float32", device)
    result = ember.topk(ours, k, dim, largest)
    expected = theirs.topk(k, dim=dim, largest=largest)
    _same(result.values, expected.values)
    _same(result.indices, expected.indices)
    _same(ours.topk(k, dim, largest).values, expected.values)


def test_topk_values_with_ties_and_nan(device: str) -> None:
    ours, theirs = _pair(SPECIAL, "float32", device)
    for k in (0, 1, 4, 11):
        for largest in (True, False):
            _same(ember.topk(ours, k, largest=largest).values, theirs.topk(k, largest=largest)[0])


@pytest.mark.parametrize(("k", "dim", "keepdim"), [(1, -1, False), (3, 0, True), (4, 1, False)])
def test_kthvalue_matches_torch(device: str, k: int, dim: int, keepdim: bool) -> None:
    rng = np.random.default_rng(3)
    data = rng.permutation(24).reshape(4, 6).astype("float64")
    ours, theirs = _pair(data, "float64", device)
    result = ember.kthvalue(ours, k, dim, keepdim)
    expected = theirs.kthvalue(k, dim=dim, keepdim=keepdim)
    _same(result.values, expected.values)
    _same(result.indices, expected.indices)
    _same(ours.kthvalue(k, dim, keepdim=keepdim)[0], expected[0])


def test_kthvalue_with_ties_values(device: str) -> None:
    ours, theirs = _pair(_random((3, 8), "int64", 4), "int64", device)
    for k in range(1, 9):
        _same(ember.kthvalue(ours, k).values, theirs.kthvalue(k).values)


def test_sort_and_topk_values_gradients(device: str) -> None:
    rng = np.random.default_rng(5)
    x = ember.tensor(rng.standard_normal((3, 5)), device=device, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.sort(t, 0, descending=True).values, (x,))
    assert ember.autograd.gradcheck(lambda t: ember.topk(t, 2).values, (x,))
    assert ember.autograd.gradcheck(lambda t: ember.kthvalue(t, 3, 1).values, (x,))


@pytest.mark.parametrize(
    ("name", "args", "error", "message"),
    [
        ("topk", (4,), RuntimeError, "selected index k out of range"),
        ("topk", (-1,), RuntimeError, "selected index k out of range"),
        ("kthvalue", (0,), RuntimeError, "selected number k out of range"),
        ("kthvalue", (4,), RuntimeError, "selected number k out of range"),
        ("sort", (2,), IndexError, "Dimension out of range"),
        ("argsort", (-3,), IndexError, "Dimension out of range"),
        ("topk", (1, 2), IndexError, "Dimension out of range"),
        ("kthvalue", (1, 2), IndexError, "Dimension out of range"),
    ],
)
def test_errors_match_torch(
    device: str, name: str, args: tuple[int, ...], error: type, message: str
) -> None:
    torch = _torch()
    data = [[1.0, 2.0, 3.0]]
    with pytest.raises(error, match=message):
        getattr(ember, name)(ember.tensor(data, device=device), *args)
    with pytest.raises(error, match=message):  # the same class and words as torch's
        getattr(torch, name)(torch.tensor(data), *args)
