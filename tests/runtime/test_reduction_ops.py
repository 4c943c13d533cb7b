"""Reductions against NumPy float64 references: values, dtypes, shapes, dims and errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import ember
from ember.plugins import hookimpl

FLOATS = [ember.float16, ember.float32, ember.float64]
INTS = [ember.uint8, ember.int8, ember.int32, ember.int64]
ALL_DTYPES = [ember.bool, *INTS, *FLOATS]
TOLERANCE = {ember.float16: 2e-2, ember.float32: 1e-5, ember.float64: 1e-12}

DIMS = [None, 0, -1, 1, (0, 2), [2, 0], (-1, -3), (), []]


def make(shape: tuple[int, ...], dtype: ember.dtype, seed: int = 0) -> np.ndarray:
    """Values that every dtype represents exactly: small integers, or halves for floats."""
    rng = np.random.default_rng(seed)
    if dtype is ember.bool:
        return rng.random(shape) < 0.5
    if dtype is ember.uint8:
        return rng.integers(0, 5, shape).astype(np.uint8)
    if dtype in INTS:
        return rng.integers(-4, 5, shape).astype(dtype.numpy)
    return (rng.integers(-8, 9, shape) / 2).astype(dtype.numpy)


def host(t: ember.Tensor) -> np.ndarray:
    return np.asarray(t)


def np_axis(dim: Any, ndim: int) -> Any:
    """NumPy's axis for one of PyTorch's dim arguments (empty means every dim)."""
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return None
    return dim if isinstance(dim, int) else tuple(dim)


def assert_close(actual: ember.Tensor, expected: np.ndarray, dtype: ember.dtype) -> None:
    got = host(actual)
    assert got.shape == np.shape(expected)
    tol = TOLERANCE.get(dtype, 0)
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=tol, atol=tol)


# -- sum and prod ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_values_dtype_and_shape(dtype: ember.dtype, dim: Any, keepdim: bool) -> None:
    data = make((2, 3, 4), dtype)
    result = ember.sum(ember.tensor(data, dtype=dtype), dim, keepdim)
    expected = data.astype(np.float64).sum(axis=np_axis(dim, 3), keepdims=keepdim)
    assert result.dtype is (dtype if dtype.is_floating_point else ember.int64)
    assert_close(result, expected, dtype)


@pytest.mark.parametrize("dtype", [ember.bool, ember.int8, ember.int32, ember.float32])
def test_prod_values_and_dtype(dtype: ember.dtype) -> None:
    data = make((3, 4), dtype, seed=1)
    for dim in (None, 0, -1):
        result = ember.tensor(data, dtype=dtype).prod(dim)
        expected = data.astype(np.float64).prod(axis=dim)
        assert result.dtype is (dtype if dtype.is_floating_point else ember.int64)
        assert_close(result, expected, dtype)


def test_sum_dtype_argument_casts_the_input_first() -> None:
    t = ember.tensor([1.7, 2.6, -0.9])
    whole = ember.sum(t, dtype=ember.int64)
    assert whole.dtype is ember.int64 and whole.item() == 3  # 1 + 2 + 0, truncated first
    wide = ember.tensor([100, 100, 100], dtype=ember.int8).sum(dtype=ember.float64)
    assert wide.dtype is ember.float64 and wide.item() == 300.0
    narrow = ember.tensor([100, 100], dtype=ember.int64).sum(dtype=ember.int8)
    assert narrow.dtype is ember.int8 and narrow.item() == -56  # wraps like int8 arithmetic


def test_sum_of_non_contiguous_input() -> None:
    data = make((3, 4, 5), ember.float64)
    t = ember.tensor(data).permute(2, 0, 1)
    assert not t.is_contiguous()
    assert_close(t.sum((0, 2)), data.transpose(2, 0, 1).sum(axis=(0, 2)), ember.float64)
    assert_close(t.sum(), np.asarray(data.sum()), ember.float64)


def test_sum_and_prod_of_empty() -> None:
    t = ember.zeros(0, 3)
    assert_close(t.sum(), np.asarray(0.0), ember.float32)
    assert_close(t.sum(0), np.zeros(3), ember.float32)
    assert t.sum(1).shape == (0,)
    assert t.sum(0, keepdim=True).shape == (1, 3)
    assert_close(t.prod(0), np.ones(3), ember.float32)


@pytest.mark.parametrize("dim", [None, 0, -1, (), [0], (-1,)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_zero_dim_reductions(dim: Any, keepdim: bool) -> None:
    t = ember.tensor(2.5)
    for op in (ember.sum, ember.prod, ember.mean, ember.amax, ember.amin, ember.logsumexp):
        result = op(t, dim, keepdim)
        assert result.shape == ()
        expected = math.log(math.exp(2.5)) if op is ember.logsumexp else 2.5
        assert result.item() == pytest.approx(expected)


def test_dim_errors() -> None:
    t = ember.zeros(2, 3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.sum(2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.amax(-3)
    with pytest.raises(IndexError):
        ember.tensor(1.0).sum(1)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        t.sum((0, -2))
    with pytest.raises(TypeError):
        t.sum(0.5)


# -- mean, var, std -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_mean(dtype: ember.dtype, dim: Any, keepdim: bool) -> None:
    data = make((2, 3, 4), dtype)
    result = ember.tensor(data, dtype=dtype).mean(dim, keepdim)
    assert result.dtype is dtype
    assert_close(result, data.astype(np.float64).mean(np_axis(dim, 3), keepdims=keepdim), dtype)


def test_mean_rejects_integers_and_accepts_a_floating_dtype() -> None:
    t = ember.tensor([1, 2, 4])
    with pytest.raises(RuntimeError, match=r"mean\(\): could not infer output dtype.*Got: Long"):
        t.mean()
    with pytest.raises(RuntimeError, match=r"Optional dtype .* Got: Int"):
        t.mean(dtype=ember.int32)
    result = t.mean(dtype=ember.float64)
    assert result.dtype is ember.float64 and result.item() == pytest.approx(7 / 3)


def test_mean_of_empty_is_nan() -> None:
    assert math.isnan(ember.zeros(0).mean().item())
    assert np.isnan(host(ember.zeros(0, 2).mean(0))).all()


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("keepdim", [False, True])
def test_var_and_std(dtype: ember.dtype, dim: Any, correction: int, keepdim: bool) -> None:
    data = make((3, 4, 5), dtype, seed=2) + 100  # an offset that a one-pass formula loses
    t = ember.tensor(data, dtype=dtype)
    reference = data.astype(np.float64)
    var = t.var(dim, correction=correction, keepdim=keepdim)
    std = t.std(dim, correction=correction, keepdim=keepdim)
    axis = np_axis(dim, 3)
    assert var.dtype is dtype and std.dtype is dtype
    assert_close(var, reference.var(axis, ddof=correction, keepdims=keepdim), dtype)
    assert_close(std, reference.std(axis, ddof=correction, keepdims=keepdim), dtype)


def test_var_with_too_few_elements_is_nan_or_inf_without_error() -> None:
    assert math.isnan(ember.tensor(3.0).var().item())
    assert math.isnan(ember.tensor([3.0]).std().item())
    assert math.isnan(ember.zeros(0).var().item())
    assert ember.tensor([1.0, 2.0]).var(correction=3).item() == math.inf
    assert ember.tensor([1.0, 2.0]).var(correction=None).item() == pytest.approx(0.5)


def test_var_rejects_integers() -> None:
    with pytest.raises(RuntimeError, match="std and var only support floating point"):
        ember.tensor([1, 2]).var()
    with pytest.raises(RuntimeError, match="std and var only support floating point"):
        ember.tensor([1, 2]).std()


# -- amax, amin, max, min -------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("dim", DIMS)
def test_amax_amin(dtype: ember.dtype, dim: Any) -> None:
    data = make((2, 3, 4), dtype, seed=3)
    t = ember.tensor(data, dtype=dtype)
    axis = np_axis(dim, 3)
    for keepdim in (False, True):
        high, low = t.amax(dim, keepdim), t.amin(dim, keepdim)
        assert high.dtype is dtype and low.dtype is dtype
        assert_close(high, data.astype(np.float64).max(axis, keepdims=keepdim), dtype)
        assert_close(low, data.astype(np.float64).min(axis, keepdims=keepdim), dtype)


def test_extremes_propagate_nan() -> None:
    t = ember.tensor([[1.0, math.nan, 3.0], [4.0, 5.0, 6.0]])
    assert np.isnan(host(t.amax(1))[0]) and host(t.amax(1))[1] == 6.0
    assert math.isnan(t.max().item()) and math.isnan(t.min().item())
    assert host(t.argmax(1)).tolist() == [1, 2]
    assert host(t.argmin(1)).tolist() == [1, 0]
    assert t.max(1).indices.tolist() == [1, 2]


def test_max_and_min_without_dim() -> None:
    data = make((3, 4), ember.float32, seed=4)
    t = ember.tensor(data)
    assert t.max().shape == () and t.max().item() == data.max()
    assert t.min().item() == data.min()
    assert ember.tensor([1, 5, 2], dtype=ember.int8).max().dtype is ember.int8


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_and_min_along_a_dim(dim: int, keepdim: bool) -> None:
    data = make((4, 5), ember.int64, seed=5)  # small integers: plenty of ties
    t = ember.tensor(data)
    for op, reduce, arg in ((ember.max, np.max, np.argmax), (ember.min, np.min, np.argmin)):
        result = op(t, dim, keepdim)
        values, indices = result
        assert result.values is values and result.indices is indices
        assert values.dtype is ember.int64 and indices.dtype is ember.int64
        np.testing.assert_array_equal(host(values), reduce(data, dim, keepdims=keepdim))
        # First index of the extreme, as PyTorch's cpu kernels and NumPy return.
        np.testing.assert_array_equal(host(indices), arg(data, dim, keepdims=keepdim))


def test_max_and_min_of_zero_dim_along_dim() -> None:
    values, indices = ember.tensor(7.0).max(0)
    assert values.shape == () and values.item() == 7.0 and indices.item() == 0
    assert ember.tensor(7.0).min(-1, keepdim=True).indices.shape == ()


def test_max_with_a_tensor_is_maximum() -> None:
    a, b = ember.tensor([1.0, 5.0]), ember.tensor([3.0, 2.0])
    assert ember.max(a, b).tolist() == [3.0, 5.0]
    assert ember.min(a, b).tolist() == [1.0, 2.0]


def test_empty_extremes_raise_like_pytorch() -> None:
    t = ember.zeros(0, 3)
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified"):
        t.max()
    with pytest.raises(RuntimeError, match=r"min\(\): Expected reduction dim to be specified"):
        t.min()
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have non-zero"):
        t.max(0)
    with pytest.raises(IndexError, match=r"amax\(\): Expected reduction dim -2 to have non-zero"):
        t.amax(-2)
    with pytest.raises(IndexError, match=r"amin\(\): Expected reduction dim to be specified"):
        t.amin()
    with pytest.raises(IndexError, match=r"argmax\(\): Expected reduction dim 0 to have non-zero"):
        t.argmax(0)
    with pytest.raises(RuntimeError, match=r"argmin\(\): Expected reduction dim to be specified"):
        t.argmin()
    # Reducing a non-empty dim of an empty tensor is fine.
    assert t.amax(1).shape == (0,)
    assert t.max(1).indices.shape == (0,)
    assert t.argmax(1, keepdim=True).shape == (0, 1)


# -- argmax, argmin ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [ember.uint8, ember.int32, ember.float16, ember.float64])
def test_argmax_argmin_flattened(dtype: ember.dtype) -> None:
    data = make((3, 4, 2), dtype, seed=6)
    t = ember.tensor(data, dtype=dtype)
    for op, reference in ((ember.argmax, np.argmax), (ember.argmin, np.argmin)):
        result = op(t)
        assert result.shape == () and result.dtype is ember.int64
        assert result.item() == reference(data)
        assert op(t, keepdim=True).shape == (1, 1, 1)


def test_argmax_of_non_contiguous_input_indexes_the_logical_order() -> None:
    data = make((4, 6), ember.float32, seed=7)
    t = ember.tensor(data).t()
    assert t.argmax().item() == np.argmax(data.T)
    assert host(t.argmin(0)).tolist() == np.argmin(data.T, 0).tolist()


@pytest.mark.parametrize("dim", [0, -1, 1])
def test_argmax_along_dim(dim: int) -> None:
    data = make((3, 5), ember.int32, seed=8)
    t = ember.tensor(data)
    np.testing.assert_array_equal(host(t.argmax(dim)), np.argmax(data, dim))
    np.testing.assert_array_equal(
        host(t.argmin(dim, keepdim=True)), np.argmin(data, dim, keepdims=True)
    )


def test_argmax_of_zero_dim() -> None:
    t = ember.tensor(3.0)
    assert t.argmax().item() == 0 and t.argmax(0).shape == () and t.argmin(-1).item() == 0


# -- all, any -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 1)])
def test_all_any(dtype: ember.dtype, dim: Any) -> None:
    data = make((3, 4), dtype, seed=9)
    t = ember.tensor(data, dtype=dtype)
    expected_dtype = ember.uint8 if dtype is ember.uint8 else ember.bool  # PyTorch's rule
    for keepdim in (False, True):
        for op, reference in ((ember.all, np.all), (ember.any, np.any)):
            result = op(t, dim, keepdim)
            assert result.dtype is expected_dtype
            expected = reference(data, axis=dim, keepdims=keepdim)
            np.testing.assert_array_equal(host(result).astype(bool), expected)


def test_all_any_of_empty() -> None:
    assert ember.zeros(0).all().item() is True
    assert ember.zeros(0).any().item() is False


# -- logsumexp ----------------------------------------------------------------------------------


def np_logsumexp(x: np.ndarray, axis: Any, keepdims: bool) -> np.ndarray:
    peak = np.max(x, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    total = np.log(np.sum(np.exp(x - peak), axis=axis, keepdims=True)) + peak
    return total if keepdims else np.squeeze(total, axis=axis)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, -1, (0, 2), ()])
@pytest.mark.parametrize("keepdim", [False, True])
def test_logsumexp(dtype: ember.dtype, dim: Any, keepdim: bool) -> None:
    data = make((2, 3, 4), dtype, seed=10)
    result = ember.tensor(data, dtype=dtype).logsumexp(dim, keepdim)
    axis = np_axis(dim, 3)
    assert result.dtype is dtype
    assert_close(result, np_logsumexp(data.astype(np.float64), axis, keepdim), dtype)


def test_logsumexp_is_stable_and_handles_infinities() -> None:
    big = ember.tensor([1000.0, 1000.0], dtype=ember.float32)
    assert big.logsumexp(0).item() == pytest.approx(1000 + math.log(2))
    small = ember.tensor([-1000.0, -1000.0], dtype=ember.float64)
    assert small.logsumexp(0).item() == pytest.approx(-1000 + math.log(2))
    rows = ember.tensor([[-math.inf, -math.inf], [math.inf, 1.0], [math.nan, 1.0]])
    result = host(rows.logsumexp(1))
    assert result[0] == -math.inf and result[1] == math.inf and math.isnan(result[2])


def test_logsumexp_of_integers_and_of_empty() -> None:
    result = ember.tensor([1, 2, 3]).logsumexp(0)
    assert result.dtype is ember.get_default_dtype()
    assert result.item() == pytest.approx(np.log(np.exp([1.0, 2.0, 3.0]).sum()), rel=1e-6)
    assert ember.zeros(0).logsumexp(0).item() == -math.inf
    assert host(ember.zeros(0, 2).logsumexp(0)).tolist() == [-math.inf, -math.inf]


# -- cumsum -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum(dtype: ember.dtype, dim: int) -> None:
    data = make((3, 4), dtype, seed=11)
    result = ember.tensor(data, dtype=dtype).cumsum(dim)
    assert result.dtype is (dtype if dtype.is_floating_point else ember.int64)
    assert_close(result, np.cumsum(data.astype(np.float64), axis=dim), dtype)


def test_cumsum_dtype_zero_dim_empty_and_strided() -> None:
    t = ember.tensor([1, 2, 3], dtype=ember.int8)
    as_float = t.cumsum(0, dtype=ember.float64)
    assert as_float.dtype is ember.float64 and as_float.tolist() == [1.0, 3.0, 6.0]
    assert ember.tensor(4.0).cumsum(0).item() == 4.0 and ember.tensor(4.0).cumsum(-1).shape == ()
    assert ember.zeros(0, 3).cumsum(1).shape == (0, 3)
    data = make((3, 4), ember.float64, seed=12)
    assert_close(ember.tensor(data).t().cumsum(1), np.cumsum(data.T, axis=1), ember.float64)
    with pytest.raises(IndexError):
        t.cumsum(1)


# -- composite dispatch -------------------------------------------------------------------------


class FusedMean:
    """A plugin that overrides the `mean` composite on cpu with a marker kernel."""

    @hookimpl
    def ember_kernels(self, registry: Any) -> None:
        registry.register("mean", "cpu", lambda out, a, dims: out.fill_(42.0))


def test_a_device_kernel_overrides_the_mean_composite() -> None:
    ember.plugins.register(FusedMean(), "test_fused_mean")
    try:
        result = ember.ones(2, 3).mean(1)
        assert result.shape == (2,) and result.tolist() == [42.0, 42.0]
    finally:
        ember.plugins.unregister("test_fused_mean")
    assert ember.ones(2, 3).mean(1).tolist() == [1.0, 1.0]


def test_reductions_are_public_names() -> None:
    for name in (
        "sum",
        "prod",
        "mean",
        "amax",
        "amin",
        "max",
        "min",
        "argmax",
        "argmin",
        "var",
        "std",
        "all",
        "any",
        "logsumexp",
        "cumsum",
    ):
        assert callable(getattr(ember, name))
