"""bincount, histc, histogram, count_nonzero, argwhere, nonzero_static, nansum, nanmean,
aminmax, std_mean, var_mean, isin and masked_select against torch 2.13 (values, dtypes,
edge bins, NaN, empty inputs, errors) and masked_select's gradient against torch's."""

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


def _same(ours: Any, theirs: Any, close: bool = False) -> None:
    if isinstance(theirs, tuple):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            _same(a, b, close)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    if close:
        np.testing.assert_allclose(ours.numpy(force=True), theirs.detach().numpy(), rtol=1e-6)
    else:
        np.testing.assert_array_equal(ours.numpy(force=True), theirs.detach().numpy())


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_bincount_matches_torch(device: str, dtype: str) -> None:
    torch = _torch()
    ours, theirs = _pair([0, 3, 1, 3, 5, 1, 1], dtype, device)
    _same(ember.bincount(ours), torch.bincount(theirs))
    _same(ours.bincount(minlength=9), theirs.bincount(minlength=9))
    for weight_dtype in ("float32", "float64", "int32"):
        ours_w, theirs_w = _pair([1, 2, 3, 4, 5, 6, 7], weight_dtype, device)
        _same(ember.bincount(ours, ours_w), torch.bincount(theirs, theirs_w))
    empty, theirs_empty = _pair([], "int64", device)
    _same(ember.bincount(empty), torch.bincount(theirs_empty))
    _same(ember.bincount(empty, minlength=3), torch.bincount(theirs_empty, minlength=3))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda d: ember.bincount(ember.tensor([-1, 2], device=d)),
            RuntimeError,
            "1-d non-negative integral",
        ),
        (
            lambda d: ember.bincount(ember.zeros(2, 2, dtype=ember.int64, device=d)),
            RuntimeError,
            "1-d non-negative",
        ),
        (
            lambda d: ember.bincount(ember.tensor([1.0], device=d)),
            NotImplementedError,
            "not implemented for 'Float'",
        ),
        (
            lambda d: ember.bincount(ember.tensor([1, 2], device=d), minlength=-1),
            RuntimeError,
            "minlength should be >= 0",
        ),
        (
            lambda d: ember.bincount(ember.tensor([1, 2], device=d), ember.ones(3, device=d)),
            RuntimeError,
            "weights should be 1-d and have the same length as input",
        ),
        (
            lambda d: ember.histc(ember.tensor([1, 2], device=d)),
            NotImplementedError,
            "not implemented for 'Long'",
        ),
        (
            lambda d: ember.histc(ember.tensor([1.0], device=d), bins=0),
            RuntimeError,
            "bins must be > 0",
        ),
        (
            lambda d: ember.histc(ember.tensor([1.0], device=d), 3, 3, 1),
            RuntimeError,
            "max must be larger than min",
        ),
        (
            lambda d: ember.histogram(ember.tensor([1, 2], device=d), bins=2),
            NotImplementedError,
            "not implemented for 'Long'",
        ),
    ],
)
def test_counting_errors_match_torch(device: str, call: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call(device)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc_matches_torch(device: str, dtype: str) -> None:
    torch = _torch()
    data = [1.0, 2.0, 1.0, 4.0, 5.0, -1.0, 0.0, 3.999, NAN]
    ours, theirs = _pair(data, dtype, device)
    _same(ember.histc(ours, bins=4, min=0, max=4), torch.histc(theirs, bins=4, min=0, max=4))
    finite, theirs_finite = _pair(data[:-1], dtype, device)
    _same(finite.histc(bins=7), theirs_finite.histc(bins=7))  # the data's own range
    constant, theirs_constant = _pair([2.0, 2.0], dtype, device)
    _same(ember.histc(constant, bins=4), torch.histc(theirs_constant, bins=4))
    rng = np.random.default_rng(0)
    big, theirs_big = _pair(rng.standard_normal(200), dtype, device)
    _same(ember.histc(big, bins=10, min=-2, max=2), torch.histc(theirs_big, bins=10, min=-2, max=2))


@pytest.mark.parametrize("density", [False, True])
def test_histogram_matches_torch(device: str, density: bool) -> None:
    torch = _torch()
    data = [1.0, 2.0, 1.0, 4.0, 5.0, -1.0, 3.5]
    ours, theirs = _pair(data, "float32", device)
    ours_w, theirs_w = _pair([1, 2, 3, 4, 5, 6, 7], "float32", device)
    options = {"range": (0.0, 4.0), "density": density}
    _same(
        ember.histogram(ours, 4, weight=ours_w, **options),
        torch.histogram(theirs, 4, weight=theirs_w, **options),
        close=True,
    )
    _same(
        ember.histogram(ours, 3, density=density),
        torch.histogram(theirs, 3, density=density),
        close=True,
    )
    ours_edges, theirs_edges = _pair([-1.0, 0.5, 2.0, 5.0], "float32", device)
    result = ours.histogram(ours_edges, density=density)
    _same(result, theirs.histogram(theirs_edges, density=density), close=True)
    assert isinstance(result.hist, ember.Tensor) and result.bin_edges is not None
    constant, theirs_constant = _pair([2.0, 2.0], "float32", device)
    _same(ember.histogram(constant, 2), torch.histogram(theirs_constant, 2))


def test_count_nonzero_argwhere_and_nonzero_static(device: str) -> None:
    torch = _torch()
    ours, theirs = _pair([[0, 1, 2], [3, 0, 0]], "int64", device)
    _same(ember.count_nonzero(ours), torch.count_nonzero(theirs))
    _same(ours.count_nonzero(dim=1), theirs.count_nonzero(dim=1))
    _same(ember.count_nonzero(ours, dim=(0, 1)), torch.count_nonzero(theirs, dim=(0, 1)))
    _same(ember.argwhere(ours), torch.argwhere(theirs))
    _same(ours.argwhere(), theirs.argwhere())
    for size in (0, 2, 5):
        _same(ember.nonzero_static(ours, size=size), torch.nonzero_static(theirs, size=size))
    _same(ours.nonzero_static(size=4, fill_value=-5), theirs.nonzero_static(size=4, fill_value=-5))


def test_nansum_nanmean_match_torch(device: str) -> None:
    torch = _torch()
    data = [[NAN, NAN, NAN], [1.0, NAN, 2.0], [1.0, 2.0, 4.0]]
    ours, theirs = _pair(data, "float64", device)
    _same(ember.nansum(ours), torch.nansum(theirs), close=True)
    _same(ours.nansum(1), theirs.nansum(1), close=True)
    _same(ember.nanmean(ours, 1, keepdim=True), torch.nanmean(theirs, 1, keepdim=True), close=True)
    _same(ours.nanmean(), theirs.nanmean(), close=True)
    integers, theirs_integers = _pair([1, 2, 3], "int32", device)
    _same(ember.nansum(integers), torch.nansum(theirs_integers))
    with pytest.raises(RuntimeError, match="nanmean\\(\\): expected input to have floating point"):
        ember.nanmean(integers)


def test_aminmax_and_paired_statistics(device: str) -> None:
    torch = _torch()
    ours, theirs = _pair([[1, 5, 2], [3, 0, 7]], "int64", device)
    _same(ember.aminmax(ours), torch.aminmax(theirs))
    result = ours.aminmax(dim=0, keepdim=True)
    _same(result, theirs.aminmax(dim=0, keepdim=True))
    assert result.min is result[0] and result.max is result[1]
    floats, theirs_floats = _pair([[1.0, 2.0, 4.0], [0.5, 3.0, 9.0]], "float64", device)
    _same(ember.std_mean(floats), torch.std_mean(theirs_floats), close=True)
    _same(
        ember.var_mean(floats, 1, correction=0),
        torch.var_mean(theirs_floats, 1, correction=0),
        close=True,
    )
    _same(
        ember.std_mean(floats, 0, keepdim=True),
        torch.std_mean(theirs_floats, 0, keepdim=True),
        close=True,
    )
    with pytest.raises(RuntimeError, match="aminmax"):
        ember.aminmax(ember.zeros(0, device=device))


def test_isin_matches_torch(device: str) -> None:
    torch = _torch()
    ours, theirs = _pair([[1, 2, 3], [4, 2, 9]], "int64", device)
    tests, theirs_tests = _pair([2, 9, 11, 2], "int64", device)
    for invert in (False, True):
        _same(
            ember.isin(ours, tests, invert=invert), torch.isin(theirs, theirs_tests, invert=invert)
        )
    _same(ember.isin(ours, 2), torch.isin(theirs, 2))
    _same(ember.isin(2, tests), torch.isin(2, theirs_tests))
    special, theirs_special = _pair([NAN, 1.0, float("inf"), 3.0], "float32", device)
    among, theirs_among = _pair([NAN, 1.0, float("inf")], "float32", device)
    _same(ember.isin(special, among), torch.isin(theirs_special, theirs_among))
    empty, theirs_empty = _pair([], "float32", device)
    _same(ember.isin(special, empty), torch.isin(theirs_special, theirs_empty))


def test_masked_select_values_and_gradient(device: str) -> None:
    torch = _torch()
    data = np.arange(12.0).reshape(3, 4)
    mask = np.array([True, False, True, True])
    x = ember.tensor(data, device=device, requires_grad=True)
    t = torch.tensor(data, requires_grad=True)
    ours = ember.masked_select(x, ember.tensor(mask, device=device))
    theirs = torch.masked_select(t, torch.tensor(mask))
    _same(ours, theirs)
    weights = np.arange(ours.shape[0], dtype="float64")
    (ours * ember.tensor(weights, device=device)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(force=True), t.grad.numpy())
    _same(x.masked_select(ember.tensor(True, device=device)), t.masked_select(torch.tensor(True)))
    with pytest.raises(RuntimeError, match="expected BoolTensor for mask"):
        ember.masked_select(x, ember.ones(4, device=device))


@pytest.mark.parametrize("density", [False, True])
def test_histogramdd_matches_torch(device: str, density: bool) -> None:
    torch = _torch()
    rng = np.random.default_rng(3)
    points = rng.integers(0, 5, (2, 10, 3)).astype("float32") / 2  # points on bin edges too
    ours, theirs = _pair(points, "float32", device)
    ours_w, theirs_w = _pair(rng.random((2, 10)), "float32", device)
    cases: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({"bins": 3}, {"bins": 3}),
        ({"bins": [2, 3, 4], "weight": ours_w}, {"bins": [2, 3, 4], "weight": theirs_w}),
        (
            {"bins": [2, 2, 3], "range": [0.0, 1.0, 0.5, 2.0, -1.0, 3.0]},
            {"bins": [2, 2, 3], "range": [0.0, 1.0, 0.5, 2.0, -1.0, 3.0]},
        ),
    ]
    edges = [[0.0, 1.0, 2.5], [-1.0, 0.5, 1.0, 3.0], [0.0, 2.0]]
    cases.append(
        (
            {"bins": [ember.tensor(e, device=device) for e in edges]},
            {"bins": [torch.tensor(e) for e in edges]},
        )
    )
    for ours_options, theirs_options in cases:
        result = ember.histogramdd(ours, density=density, **ours_options)
        expected = torch.histogramdd(theirs, density=density, **theirs_options)
        _same(result.hist, expected.hist, close=True)
        assert len(result.bin_edges) == len(expected.bin_edges) == 3
        for a, b in zip(result.bin_edges, expected.bin_edges, strict=True):
            _same(a, b, close=True)
    with pytest.raises(
        RuntimeError, match="The size of bins must be equal to the innermost dimension"
    ):
        ember.histogramdd(ours, bins=[2, 2])


EMPTY_AND_SCALAR_CASES = [
    ("masked_select", lambda m: m.masked_select(m.zeros(0, 2), m.zeros(0, 2, dtype=m.bool))),
    ("histc", lambda m: m.histc(m.zeros(0), bins=3)),
    ("histogram", lambda m: m.histogram(m.zeros(0), bins=3).hist),
    ("count_nonzero", lambda m: m.count_nonzero(m.zeros(0, 3), 0)),
    ("nansum", lambda m: m.nansum(m.zeros(0))),
    ("nanmean", lambda m: m.nanmean(m.zeros(0))),
    ("isin", lambda m: m.isin(m.zeros(0), m.ones(3))),
    ("argwhere", lambda m: m.argwhere(m.zeros(0, 3))),
    ("aminmax", lambda m: m.aminmax(m.tensor(3)).max),
    ("bincount", lambda m: m.bincount(m.tensor([1, 2]), m.tensor([0.5, 1.5]))),
    ("cov", lambda m: m.cov(m.ones(1, 3))),
    ("corrcoef", lambda m: m.corrcoef(m.tensor([[1.0, 2.0, 4.0]]))),
]


@pytest.mark.parametrize(
    ("name", "build"), EMPTY_AND_SCALAR_CASES, ids=[c[0] for c in EMPTY_AND_SCALAR_CASES]
)
def test_empty_and_scalar_inputs_match_torch(device: str, name: str, build: Any) -> None:
    torch = _torch()
    previous = ember.get_default_device()
    ember.set_default_device(device)
    try:
        ours = build(ember)
    finally:
        ember.set_default_device(previous)
    assert str(ours.device) == str(ember.device(device))
    _same(ours, build(torch), close=True)
