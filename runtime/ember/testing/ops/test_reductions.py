"""Reductions with dim/keepdim: values, result dtypes, layouts, 0-d and zero-size inputs."""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np
import pytest

import ember

from ._reference import (
    BOOL,
    DTYPES,
    FLOATS,
    INTS,
    RTOL,
    assert_close,
    discrete,
    laid_out,
    logsumexp,
    make,
    pid,
    sample,
    shape_layouts,
)


class Reduction(NamedTuple):
    reference: Any  # reference(x, axis, keepdims) on float64 / int64 / bool values
    result: str  # "accumulate" (int64 for integers), "same", "float", "bool"
    dtypes: tuple[ember.dtype, ...]
    exact: bool = False  # no rounding: compare exactly even for floats


REDUCTIONS: dict[str, Reduction] = {
    "sum": Reduction(np.sum, "accumulate", DTYPES),
    "prod": Reduction(np.prod, "accumulate", DTYPES),
    "mean": Reduction(np.mean, "same", FLOATS),
    "amax": Reduction(np.max, "same", DTYPES, exact=True),
    "amin": Reduction(np.min, "same", DTYPES, exact=True),
    "all": Reduction(np.all, "bool", tuple(d for d in DTYPES if d is not ember.uint8), exact=True),
    "any": Reduction(np.any, "bool", tuple(d for d in DTYPES if d is not ember.uint8), exact=True),
    "logsumexp": Reduction(logsumexp, "float", DTYPES),
    "var": Reduction(lambda x, axis, keepdims: np.var(x, axis, ddof=1, keepdims=keepdims),
                     "same", FLOATS),
    "std": Reduction(lambda x, axis, keepdims: np.std(x, axis, ddof=1, keepdims=keepdims),
                     "same", FLOATS),
}  # fmt: skip


def result_dtype(op: str, dt: ember.dtype) -> ember.dtype:
    rule = REDUCTIONS[op].result
    if rule == "bool":
        return BOOL
    if rule == "accumulate":
        return dt if dt.is_floating_point else ember.int64
    if rule == "float":
        return dt if dt.is_floating_point else ember.get_default_dtype()
    return dt


def axis(dim: Any, ndim: int) -> Any:
    """NumPy's axis for a dim argument (a 0-d tensor's dim 0 or -1 means all of it)."""
    if ndim == 0:
        return None
    return tuple(dim) if isinstance(dim, list) else dim


def reduce(op: str, tensor: ember.Tensor, dim: Any, keepdim: bool) -> ember.Tensor:
    fn = getattr(ember, op)
    if op == "logsumexp":
        return fn(tensor, dim if dim is not None else tuple(range(tensor.ndim)), keepdim=keepdim)
    if dim is None and not keepdim:
        return fn(tensor)
    return fn(tensor, dim, keepdim=keepdim)


def expected(op: str, values: np.ndarray, dim: Any, keepdim: bool) -> tuple[np.ndarray, dict]:
    """The reference and tolerances (scaled by the summed magnitudes, for cancellation)."""
    out = result_dtype(op, _dtype_of(values))
    spec = REDUCTIONS[op]
    if out.is_floating_point:
        x = values.astype(np.float64)
    elif out is BOOL:
        x = values.astype(np.bool_)
    else:
        x = values.astype(np.int64)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "degrees of freedom <= 0"
        reference = np.asarray(spec.reference(x, axis=axis(dim, x.ndim), keepdims=keepdim))
    if not out.is_floating_point or spec.exact:
        return reference, {"rtol": 0, "atol": 0} if out.is_floating_point else {}
    scale = float(np.sum(np.abs(x))) if x.size else 1.0
    return reference, {"rtol": RTOL[out], "atol": RTOL[out] * max(scale, 1.0) / 4}


def _dtype_of(values: np.ndarray) -> ember.dtype:
    return next(d for d in DTYPES if d.numpy == values.dtype)


def domain(op: str) -> str:
    return "positive" if op == "prod" else "any"


OP_DTYPES = [(op, dt) for op, spec in REDUCTIONS.items() for dt in spec.dtypes]


@pytest.mark.parametrize(("op", "dtype"), OP_DTYPES, ids=pid)
@pytest.mark.parametrize(("dim", "keepdim"), [(None, False), (1, False), (0, True), (None, True)])
def test_reduction_dtypes(device: str, op: str, dtype: ember.dtype, dim, keepdim, rng) -> None:
    values = sample((3, 4), dtype, rng, domain(op))
    result = reduce(op, make(values, device), dim, keepdim)
    reference, tolerance = expected(op, values, dim, keepdim)
    assert_close(result, reference, result_dtype(op, dtype), **tolerance)


DIMS = [None, 0, -1, (0, 1), [-1, 0], (0, 2), 1]
SHAPES = [(), (5,), (3, 4), (2, 3, 4)]


def _dims_for(shape: tuple) -> list:
    """The dims of DIMS that are valid for `shape` (in range, no dim twice)."""
    bound = max(len(shape), 1)
    valid = []
    for dim in DIMS:
        dims = [] if dim is None else [dim] if isinstance(dim, int) else list(dim)
        wrapped = {d % bound for d in dims}
        if all(-bound <= d < bound for d in dims) and len(wrapped) == len(dims):
            valid.append(dim)
    return valid


DIM_CASES = [
    (op, shape, layout, dim, keepdim)
    for op in REDUCTIONS
    for shape, layout in shape_layouts(SHAPES)
    for dim in _dims_for(shape)
    for keepdim in (False, True)
]


@pytest.mark.parametrize(("op", "shape", "layout", "dim", "keepdim"), DIM_CASES, ids=pid)
def test_reduction_dims_and_layouts(
    device: str, op: str, shape: tuple, layout: str, dim, keepdim: bool, rng
) -> None:
    dt = ember.float64 if op in ("mean", "var", "std") else ember.float32
    tensor, values = laid_out(sample(shape, dt, rng, domain(op)), layout, device)
    result = reduce(op, tensor, dim, keepdim)
    reference, tolerance = expected(op, values, dim, keepdim)
    assert_close(result, reference, result_dtype(op, dt), **tolerance)


@pytest.mark.parametrize("op", ["sum", "prod", "amax", "amin", "all", "any"])
@pytest.mark.parametrize("dtype", [ember.int64, ember.int8, BOOL], ids=pid)
@pytest.mark.parametrize(("shape", "layout"), shape_layouts([(3, 4), (2, 3, 4)]), ids=pid)
def test_integer_reductions_are_exact(device: str, op: str, dtype, shape, layout, rng) -> None:
    tensor, values = laid_out(discrete(shape, dtype, rng), layout, device)
    for dim in (None, -1, 0):
        result = reduce(op, tensor, dim, False)
        reference, _ = expected(op, values, dim, False)
        assert_close(result, reference, result_dtype(op, dtype))


def test_reduction_of_uint8_all_any_is_uint8(device: str) -> None:
    tensor = make(np.array([[0, 3], [1, 2]], dtype=np.uint8), device)
    assert_close(ember.all(tensor, 1), np.array([0, 1]), ember.uint8)
    assert_close(ember.any(tensor), np.array(1), ember.uint8)


@pytest.mark.parametrize("dtype", [ember.int32, ember.float16, BOOL], ids=pid)
def test_sum_dtype_argument(device: str, dtype: ember.dtype, rng) -> None:
    values = sample((3, 4), dtype, rng)
    result = ember.sum(make(values, device), 1, dtype=ember.float64)
    assert_close(result, values.astype(np.float64).sum(1), ember.float64)


# -- zero-size and 0-d inputs -----------------------------------------------------------------

EMPTY_RESULTS = {
    "sum": 0.0,
    "prod": 1.0,
    "mean": np.nan,
    "all": True,
    "any": False,
    "logsumexp": -np.inf,
}


@pytest.mark.parametrize("op", list(EMPTY_RESULTS))
@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3)], ids=pid)
def test_reduction_over_nothing_gives_the_identity(device: str, op: str, shape: tuple) -> None:
    tensor = ember.zeros(*shape, device=device)
    result = reduce(op, tensor, None, False)
    assert tuple(result.shape) == ()
    want = result_dtype(op, ember.float32)
    assert_close(result, np.array(EMPTY_RESULTS[op]), want)
    along = reduce(op, tensor, -1, False)
    assert_close(along, np.full(shape[:-1], EMPTY_RESULTS[op]), want)


@pytest.mark.parametrize("op", ["amax", "amin", "argmax", "argmin", "max", "min"])
def test_extremes_of_nothing_raise(device: str, op: str) -> None:
    with pytest.raises((IndexError, RuntimeError)):
        getattr(ember, op)(ember.zeros(0, device=device))
    with pytest.raises((IndexError, RuntimeError)):
        getattr(ember, op)(ember.zeros(2, 0, device=device), 1)
    result = getattr(ember, op)(ember.zeros(0, 3, device=device), 1)
    values = result[0] if op in ("max", "min") else result
    assert tuple(values.shape) == (0,)


@pytest.mark.parametrize("op", [*REDUCTIONS, "argmax", "argmin", "cumsum"])
@pytest.mark.parametrize("dim", [0, -1])
def test_zero_dim_input(device: str, op: str, dim: int) -> None:
    tensor = make(np.float32(2.5), device)
    result = getattr(ember, op)(tensor, dim)
    assert tuple(result.shape) == ()
    want = {"argmax": 0, "argmin": 0, "any": True, "all": True, "var": np.nan, "std": np.nan}
    assert_close(result, np.array(want.get(op, 2.5)))


def test_variance_of_one_element_is_nan(device: str) -> None:
    assert np.isnan(ember.var(make([3.0], device)).item())
    assert ember.var(make([3.0], device), correction=0).item() == 0.0


# -- var and std corrections ------------------------------------------------------------------


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_var_std_correction(device: str, op: str, correction: int, dim, keepdim, rng) -> None:
    values = sample((3, 4, 5), ember.float64, rng)
    result = getattr(ember, op)(make(values, device), dim, correction=correction, keepdim=keepdim)
    fn = np.var if op == "var" else np.std
    reference = fn(values, axis=dim, ddof=correction, keepdims=keepdim)
    assert_close(result, reference, ember.float64, rtol=1e-10, atol=1e-12)
    method = getattr(make(values, device), op)(dim, correction=correction, keepdim=keepdim)
    assert_close(method, reference, ember.float64, rtol=1e-10, atol=1e-12)


# -- NaN --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS, ids=pid)
def test_nan_propagates_through_extremes(device: str, dtype: ember.dtype) -> None:
    values = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]], dtype=dtype.numpy)
    tensor = make(values, device)
    assert np.isnan(ember.amax(tensor).item())
    assert np.isnan(ember.amin(tensor).item())
    assert_close(ember.amax(tensor, 1), np.array([np.nan, 6.0]), dtype, rtol=0, atol=0)
    assert_close(ember.argmax(tensor, 1), np.array([1, 2]), ember.int64)
    assert_close(ember.argmin(tensor, 1), np.array([1, 0]), ember.int64)
    assert ember.argmax(tensor).item() == 1
    assert np.isnan(ember.sum(tensor).item())


# -- argmax, argmin, max and min along a dim --------------------------------------------------

ARG_CASES = [
    (shape, layout, dim, keepdim)
    for shape, layout in shape_layouts([(5,), (3, 4), (2, 3, 4)])
    for dim in (None, 0, -1)
    for keepdim in (False, True)
]


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", [ember.float16, ember.float32, ember.int32, ember.uint8], ids=pid)
@pytest.mark.parametrize(("shape", "layout", "dim", "keepdim"), ARG_CASES, ids=pid)
def test_argmax_argmin_first_of_ties(
    device: str, op: str, dtype, shape, layout, dim, keepdim, rng
) -> None:
    tensor, values = laid_out(discrete(shape, dtype, rng), layout, device)
    result = getattr(ember, op)(tensor, dim, keepdim)
    fn = np.argmax if op == "argmax" else np.argmin
    if dim is None:
        reference = np.asarray(fn(values))
        if keepdim:
            reference = reference.reshape((1,) * values.ndim)
    else:
        reference = fn(values, axis=dim, keepdims=keepdim)
    assert_close(result, reference, ember.int64)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", [ember.float32, ember.int64, BOOL], ids=pid)
@pytest.mark.parametrize(("dim", "keepdim"), [(0, False), (-1, True), (1, False)])
def test_max_min_along_dim(device: str, op: str, dtype, dim, keepdim, rng) -> None:
    values = discrete((3, 4, 2), dtype, rng)
    tensor = make(values, device)
    result = getattr(ember, op)(tensor, dim, keepdim)
    reduce_fn, arg_fn = (np.max, np.argmax) if op == "max" else (np.min, np.argmin)
    assert_close(result.values, reduce_fn(values, axis=dim, keepdims=keepdim), dtype)
    assert_close(result.indices, arg_fn(values, axis=dim, keepdims=keepdim), ember.int64)
    values_, indices = result
    assert values_ is result.values and indices is result.indices
    method = getattr(tensor, op)(dim, keepdim)
    assert_close(method.values, reduce_fn(values, axis=dim, keepdims=keepdim), dtype)
    assert_close(getattr(tensor, op)(), np.asarray(reduce_fn(values)), dtype)


# -- cumsum -----------------------------------------------------------------------------------

CUMSUM_CASES = [
    (dt, shape, layout, dim)
    for dt in (ember.float32, ember.float64, ember.int32, BOOL)
    for shape, layout in shape_layouts([(5,), (3, 4), (2, 3, 4), (2, 0)])
    for dim in (0, -1)
]


@pytest.mark.parametrize(("dtype", "shape", "layout", "dim"), CUMSUM_CASES, ids=pid)
def test_cumsum(device: str, dtype, shape, layout, dim, rng) -> None:
    tensor, values = laid_out(sample(shape, dtype, rng), layout, device)
    result = ember.cumsum(tensor, dim)
    out = dtype if dtype.is_floating_point else ember.int64
    x = values.astype(np.float64 if out.is_floating_point else np.int64)
    reference = np.cumsum(x, axis=dim)
    scale = float(np.abs(x).sum()) if x.size else 1.0
    atol = RTOL[out] * scale if out.is_floating_point else None
    assert_close(result, reference, out, atol=atol)
    assert_close(tensor.cumsum(dim), reference, out, atol=atol)


def test_cumsum_dtype_argument(device: str) -> None:
    result = ember.cumsum(make([1, 2, 3], device), 0, dtype=ember.float64)
    assert_close(result, np.array([1.0, 3.0, 6.0]), ember.float64)


@pytest.mark.parametrize("dtype", INTS, ids=pid)
def test_integer_mean_needs_a_floating_dtype_argument(device: str, dtype, rng) -> None:
    values = sample((3, 4), dtype, rng)
    result = ember.mean(make(values, device), 1, dtype=ember.float64)
    assert_close(result, values.astype(np.float64).mean(1), ember.float64)
