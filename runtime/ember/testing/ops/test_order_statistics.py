"""median, nanmedian, mode, quantile and nanquantile against torch 2.13 on the same inputs.

Values and int64 indices must equal torch's (the lower median, NaN propagating or skipped,
the smallest of equally frequent values); quantile values to float64 rounding for every
interpolation; gradients by finite differences in float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

NAN = float("nan")
ROWS_WITH_NAN = [[3.0, NAN, 1.0, NAN, 2.0], [NAN, NAN, NAN, NAN, NAN], [1.0, 2.0, 2.0, 1.0, 3.0]]


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


def _close(ours: ember.Tensor, theirs: Any) -> None:
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(force=True), theirs.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_median_along_a_dim_with_nan_matches_torch(device: str, name: str, keepdim: bool) -> None:
    ours, theirs = _pair(ROWS_WITH_NAN, "float32", device)
    result = getattr(ember, name)(ours, 1, keepdim)
    expected = getattr(_torch(), name)(theirs, 1, keepdim)
    _same(result.values, expected.values)
    _same(result.indices, expected.indices)
    _same(getattr(ours, name)(-1, keepdim=keepdim)[1], expected[1])


@pytest.mark.parametrize(
    ("shape", "dtype", "dim"),
    [((5, 6), "float64", 0), ((3, 4, 5), "float32", -2), ((4, 7), "int64", 1), ((6,), "int32", 0)],
)
def test_median_with_ties_matches_torch(
    device: str, shape: tuple[int, ...], dtype: str, dim: int
) -> None:
    data = np.random.default_rng(1).integers(-3, 4, shape)
    ours, theirs = _pair(data, dtype, device)
    torch = _torch()
    _same(ember.median(ours), torch.median(theirs))
    result, expected = ember.median(ours, dim), torch.median(theirs, dim)
    _same(result.values, expected.values)
    _same(result.indices, expected.indices)


def test_global_median_propagates_nan_and_nanmedian_skips_it(device: str) -> None:
    ours, theirs = _pair(ROWS_WITH_NAN, "float32", device)
    torch = _torch()
    _same(ember.median(ours), torch.median(theirs))
    _same(ember.nanmedian(ours), torch.nanmedian(theirs))
    _same(ours.median(), theirs.median())


def test_median_of_empty_and_scalar_inputs(device: str) -> None:
    torch = _torch()
    assert np.isnan(ember.median(ember.zeros(0, device=device)).item())
    result = ember.median(ember.tensor(5.0, device=device), 0)
    assert result.values.item() == 5.0 and result.indices.item() == 0 and result.indices.ndim == 0
    empty_rows = ember.median(ember.zeros(0, 3, device=device), 1)
    expected = torch.median(torch.zeros(0, 3), 1)
    _same(empty_rows.values, expected.values)
    with pytest.raises(
        IndexError, match="median\\(\\): Expected reduction dim 0 to have non-zero size"
    ):
        ember.median(ember.zeros(0, 3, device=device), 0)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_mode_matches_torch_on_integer_ties(device: str, dim: int) -> None:
    data = np.random.default_rng(2).integers(0, 4, (5, 7))
    ours, theirs = _pair(data, "int64", device)
    result, expected = ember.mode(ours, dim), _torch().mode(theirs, dim)
    _same(result.values, expected.values)
    _same(result.indices, expected.indices)  # the last occurrence, as torch
    kept = ours.mode(dim, keepdim=True)
    assert tuple(kept.values.shape) == tuple(theirs.mode(dim, keepdim=True).values.shape)


def test_mode_prefers_the_smallest_of_equally_frequent_values(device: str) -> None:
    ours, theirs = _pair([[5, 1, 5, 1, 7], [1, 2, 2, 1, 3]], "float32", device)
    result, expected = ember.mode(ours), _torch().mode(theirs)
    _same(result.values, expected.values)
    _same(result.indices, expected.indices)


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_quantile_matches_torch(device: str, interpolation: str, keepdim: bool) -> None:
    torch = _torch()
    data = np.random.default_rng(3).standard_normal((4, 7))
    ours, theirs = _pair(data, "float64", device)
    qs = [0.0, 0.1, 0.5, 0.77, 1.0]
    q_ours = ember.tensor(qs, dtype=ember.float64, device=device)
    q_theirs = torch.tensor(qs, dtype=torch.float64)
    for dim in (None, 0, -1):
        options = {"keepdim": keepdim, "interpolation": interpolation}
        _close(
            ember.quantile(ours, q_ours, dim, **options),
            torch.quantile(theirs, q_theirs, dim, **options),
        )
        _close(ours.quantile(0.3, dim, **options), theirs.quantile(0.3, dim, **options))


def test_quantile_propagates_nan_and_nanquantile_skips_it(device: str) -> None:
    torch = _torch()
    ours, theirs = _pair(ROWS_WITH_NAN, "float64", device)
    for dim in (None, 1):
        np.testing.assert_array_equal(
            ember.quantile(ours, 0.4, dim).numpy(force=True),
            torch.quantile(theirs, 0.4, dim).numpy(),
        )
        np.testing.assert_allclose(
            ember.nanquantile(ours, 0.4, dim).numpy(force=True),
            torch.nanquantile(theirs, 0.4, dim).numpy(),
        )
    np.testing.assert_allclose(
        ours.nanquantile(0.5, 1).numpy(force=True), theirs.nanquantile(0.5, 1).numpy()
    )


def test_median_and_quantile_gradients(device: str) -> None:
    rng = np.random.default_rng(5)
    x = ember.tensor(rng.standard_normal((3, 6)), device=device, requires_grad=True)
    gradcheck = ember.autograd.gradcheck
    assert gradcheck(lambda t: ember.median(t, 1).values, (x,))
    assert gradcheck(lambda t: ember.median(t), (x,))
    assert gradcheck(lambda t: ember.nanmedian(t, 0).values, (x,))
    q = ember.tensor([0.2, 0.5, 0.9], dtype=ember.float64, device=device)
    assert gradcheck(lambda t: ember.quantile(t, q, 1), (x,))
    assert gradcheck(lambda t: ember.quantile(t, 0.35, interpolation="midpoint"), (x,))


def test_median_gradient_goes_to_the_chosen_element_as_torch(device: str) -> None:
    torch = _torch()
    data = [[1.0, 3.0, 2.0, 2.0], [4.0, 4.0, 0.0, 1.0]]
    x = ember.tensor(data, dtype=ember.float64, device=device, requires_grad=True)
    ember.median(x, 1).values.sum().backward()
    t = torch.tensor(data, dtype=torch.float64, requires_grad=True)
    torch.median(t, 1).values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(force=True), t.grad.numpy())


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda x: ember.quantile(x, 1.5),
            RuntimeError,
            "q must be in the range \\[0, 1\\] but got 1.5",
        ),
        (lambda x: ember.quantile(x.long(), 0.5), RuntimeError, "must be either float or double"),
        (lambda x: ember.quantile(x, 0.5, interpolation="foo"), RuntimeError, "but got foo"),
        (
            lambda x: ember.quantile(x, ember.ones(2, 2, dtype=x.dtype, device=x.device) / 2),
            RuntimeError,
            "scalar or 1D",
        ),
        (lambda x: ember.quantile(x[:0], 0.5), RuntimeError, "input tensor must be non-empty"),
        (lambda x: ember.mode(x[:, :0], 1), IndexError, "non-zero size"),
        (lambda x: ember.median(x, 2), IndexError, "Dimension out of range"),
    ],
)
def test_errors_match_torch(device: str, call: Any, error: type, message: str) -> None:
    x = ember.ones(3, 4, dtype=ember.float64, device=device)
    with pytest.raises(error, match=message):
        call(x)
