"""Helpers of the conformance suite: dtypes, sample data, strided layouts and comparisons.

Every expected value is computed by NumPy in float64 (or exactly, in int64, for integer
and bool results) from the very values the device received, then compared with a
tolerance that belongs to the result dtype.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import ember

Shape = tuple[int, ...]

BOOL = ember.bool
INTS = (ember.uint8, ember.int8, ember.int32, ember.int64)
FLOATS = (ember.float16, ember.float32, ember.float64, ember.bfloat16)
DTYPES = (BOOL, *INTS, *FLOATS)

#: relative tolerance of a float result dtype; integer and bool results compare exactly
#: (bfloat16 keeps 8 significant bits: one rounding is 2**-9 relative, and its results are
#: rounded from float computations on already-rounded operands)
RTOL = {ember.float16: 1e-2, ember.float32: 1e-5, ember.float64: 1e-12, ember.bfloat16: 2e-2}
#: absolute tolerance for results of magnitude about one
ATOL = {ember.float16: 1e-3, ember.float32: 1e-6, ember.float64: 1e-12, ember.bfloat16: 1e-2}

ERF = np.vectorize(math.erf, otypes=[np.float64])


def shape_id(shape: Shape) -> str:
    return "x".join(map(str, shape)) if shape else "0d"


def pid(value: Any) -> str | None:
    """Readable test ids: dtypes by name, shapes as 3x4 (0d for ()), else pytest's choice."""
    if isinstance(value, ember.dtype):
        return value.name
    if isinstance(value, tuple) and all(type(v) is int for v in value):
        return shape_id(value)
    return None


# -- host transfers ---------------------------------------------------------------------------


def host(t: ember.Tensor) -> np.ndarray:
    """A NumPy copy of `t`'s values, from any device."""
    assert isinstance(t, ember.Tensor), f"expected an ember.Tensor, got {type(t).__name__}"
    return np.array(np.asarray(t), copy=True)


def make(values: Any, device: str, dtype: ember.dtype | None = None) -> ember.Tensor:
    """`values` (NumPy array or nested lists) as a tensor on `device`."""
    return ember.tensor(values, dtype=dtype, device=device)


def is_host_device(device: str) -> bool:
    """Whether NumPy may view the device's memory (zero-copy interop applies)."""
    return bool(ember.device(device).backend.host_accessible)


# -- sample data ------------------------------------------------------------------------------

#: value domains: floats as (low, high); integer domains are chosen per dtype below
DOMAINS: dict[str, tuple[float, float]] = {
    "any": (-2.0, 2.0),
    "positive": (0.25, 3.0),
    "log1p": (-0.5, 3.0),
    "rounding": (-5.0, 5.0),
    "exponent": (-2.0, 2.0),
    "unit": (-0.95, 0.95),  # inside the domain of acos, asin, atanh
    "above_one": (1.05, 3.0),  # inside the domain of acosh
}


def sample(
    shape: Shape, dtype: ember.dtype, rng: np.random.Generator, domain: str = "any"
) -> np.ndarray:
    """Random values of `dtype` in `domain` (see DOMAINS, plus "nonzero" and "pow2").

    Integers stay small (|x| <= 5) so no sum or product in the suite overflows;
    "nonzero" and "pow2" exclude zero, and "pow2" gives powers of two, so that divisions
    by it are exact in every float dtype; "exponent" gives integers in [0, 3].
    """
    if dtype is BOOL:
        if domain in ("positive", "nonzero", "pow2"):
            return np.ones(shape, dtype=np.bool_)
        return rng.random(shape) < 0.5
    if not dtype.is_floating_point:
        if domain in ("positive", "log1p"):
            low, high = 1, 5
        elif domain == "exponent":
            low, high = 0, 3
        elif dtype is ember.uint8:
            low, high = 0, 9
        else:
            low, high = -5, 5
        values = rng.integers(low, high + 1, size=shape)
        if domain in ("nonzero", "pow2"):
            values = np.where(values == 0, 1, values)
        return values.astype(dtype.numpy)
    if domain == "nonzero":
        magnitude = rng.uniform(0.5, 2.0, size=shape)
        return (magnitude * rng.choice([-1.0, 1.0], size=shape)).astype(dtype.numpy)
    if domain == "pow2":
        return rng.choice([-4.0, -2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 4.0], size=shape).astype(
            dtype.numpy
        )
    return rng.uniform(*DOMAINS[domain], size=shape).astype(dtype.numpy)


def discrete(shape: Shape, dtype: ember.dtype, rng: np.random.Generator) -> np.ndarray:
    """Values from a small set that every dtype holds exactly, so that ties are common."""
    if dtype is BOOL:
        return rng.random(shape) < 0.5
    if dtype is ember.uint8:
        return rng.integers(0, 4, size=shape).astype(np.uint8)
    if dtype.is_floating_point:
        return rng.choice([-2.0, -1.0, 0.0, 0.5, 1.0, 2.0], size=shape).astype(dtype.numpy)
    return rng.integers(-2, 3, size=shape).astype(dtype.numpy)


# -- strided layouts --------------------------------------------------------------------------

#: how a tensor of a given shape is laid out in memory for a test
LAYOUTS = ("contiguous", "transposed", "strided", "expanded")


def layout_applies(layout: str, shape: Shape) -> bool:
    """Whether `layout` gives a distinct memory layout for `shape`."""
    if layout == "contiguous":
        return True
    if layout == "transposed":
        return len(shape) >= 2
    if layout == "strided":
        return len(shape) >= 1
    return len(shape) >= 1 and shape[0] > 1  # expanded along dim 0


def shape_layouts(shapes: Sequence[Shape]) -> list[tuple[Shape, str]]:
    """Every applicable (shape, layout) pair."""
    return [(s, layout) for s in shapes for layout in LAYOUTS if layout_applies(layout, s)]


def laid_out(
    values: np.ndarray, layout: str, device: str, dtype: ember.dtype | None = None
) -> tuple[ember.Tensor, np.ndarray]:
    """A tensor of `values`' shape in `layout`, and the values it actually holds.

    transposed: a contiguous tensor of the swapped shape, viewed through transpose(-1, -2);
    strided: every other element (offset 1, stride 2) of a larger last dimension;
    expanded: row 0 broadcast along dim 0 with stride 0 (so the values change).
    """
    values = np.asarray(values)
    shape = values.shape
    if layout == "contiguous":
        return make(values, device, dtype), values
    if layout == "transposed":
        swapped = np.ascontiguousarray(np.swapaxes(values, -1, -2))
        return make(swapped, device, dtype).transpose(-1, -2), values
    if layout == "strided":
        wide = np.zeros((*shape[:-1], shape[-1], 2), dtype=values.dtype)
        wide[..., 1] = values
        flat = make(wide.reshape(*shape[:-1], 2 * shape[-1]), device, dtype)
        return flat.unflatten(-1, (shape[-1], 2)).select(-1, 1), values
    if layout == "expanded":
        row = np.ascontiguousarray(values[:1])
        return make(row, device, dtype).expand(*shape), np.broadcast_to(row, shape).copy()
    raise ValueError(f"unknown layout {layout!r}")


# -- comparisons ------------------------------------------------------------------------------


def assert_close(
    actual: Any,
    expected: Any,
    dtype: ember.dtype | None = None,
    *,
    rtol: float | None = None,
    atol: float | None = None,
) -> None:
    """`actual` is a tensor of `expected`'s shape and of `dtype`, with matching values.

    Float results compare within the dtype's tolerance (NaN equals NaN); integer and bool
    results compare exactly, `expected` first converted to `dtype` (so it wraps as C does).
    """
    assert isinstance(actual, ember.Tensor), f"expected a Tensor, got {type(actual).__name__}"
    expected = np.asarray(expected)
    if dtype is not None:
        assert actual.dtype is dtype, f"dtype {actual.dtype} != expected {dtype}"
    assert tuple(actual.shape) == expected.shape, (
        f"shape {tuple(actual.shape)} != expected {expected.shape}"
    )
    got = host(actual)
    result_dtype = actual.dtype
    if result_dtype.is_floating_point:
        rtol = RTOL[result_dtype] if rtol is None else rtol
        atol = ATOL[result_dtype] if atol is None else atol
        np.testing.assert_allclose(
            got.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol,
            equal_nan=True,
        )  # fmt: skip
    else:
        want = expected.astype(result_dtype.numpy) if expected.dtype != np.bool_ else expected
        np.testing.assert_array_equal(got, want.astype(result_dtype.numpy))


def as_compute(values: np.ndarray, dtype: ember.dtype) -> np.ndarray:
    """`values` in the exact NumPy type a reference computes in for result `dtype`."""
    if dtype.is_floating_point:
        return np.asarray(values).astype(np.float64)
    if dtype is BOOL:
        return np.asarray(values).astype(np.bool_)
    return np.asarray(values).astype(np.int64)


def shares_storage(a: ember.Tensor, b: ember.Tensor) -> bool:
    return a.untyped_storage() is b.untyped_storage()


def torch_floor_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.floor_divide(a, b) if a.dtype.kind in "iu" else np.floor(a / b)


def trunc_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu":
        quotient = np.abs(a) // np.abs(b)
        return np.where((a < 0) != (b < 0), -quotient, quotient)
    return np.trunc(a / b)


def logsumexp(x: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
    if x.size == 0:
        return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))
    peak = np.max(x, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    total = np.sum(np.exp(x - peak), axis=axis, keepdims=True)
    result = np.log(total) + peak
    return result if keepdims else np.squeeze(result, axis=axis)


Reference = Callable[..., np.ndarray]
