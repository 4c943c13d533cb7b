"""max_pool2d, avg_pool2d and adaptive_avg_pool2d: direct-loop NumPy references (window
clipping, ceil_mode, count_include_pad, NaN), gradients against central differences,
PyTorch's errors and, where torch is installed, parity with torch.nn.functional."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest

import ember
from ember.nn.functional._pool import adaptive_avg_pool2d, avg_pool2d, max_pool2d

from ._helpers import tensor

Pair = tuple[int, int]


def _pair(v: Any) -> Pair:
    return (v, v) if isinstance(v, int) else (v[0], v[-1])


def _out_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def max_pool_reference(
    x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
    ceil_mode: bool = False,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Values and flat in-plane indices; a value wins if greater, or NaN."""
    (kh, kw), (ph, pw), (dh, dw) = _pair(kernel_size), _pair(padding), _pair(dilation)
    sh, sw = _pair(stride if stride is not None else kernel_size)
    h, w = x.shape[-2:]
    oh, ow = _out_size(h, kh, sh, ph, dh, ceil_mode), _out_size(w, kw, sw, pw, dw, ceil_mode)
    values = np.zeros((*x.shape[:-2], oh, ow), x.dtype)
    indices = np.zeros(values.shape, np.int64)
    for lead in np.ndindex(x.shape[:-2]):
        for y in range(oh):
            for z in range(ow):
                best, at = -math.inf, None
                for a in range(kh):
                    for e in range(kw):
                        iy, iz = y * sh - ph + a * dh, z * sw - pw + e * dw
                        if not (0 <= iy < h and 0 <= iz < w):
                            continue
                        v = x[(*lead, iy, iz)]
                        at = iy * w + iz if at is None else at
                        if v > best or math.isnan(v):
                            best, at = v, iy * w + iz
                values[(*lead, y, z)], indices[(*lead, y, z)] = best, at
    return values, indices


def avg_pool_reference(
    x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0,
    ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None,
) -> np.ndarray:  # fmt: skip
    (kh, kw), (ph, pw) = _pair(kernel_size), _pair(padding)
    sh, sw = _pair(stride if stride is not None else kernel_size)
    h, w = x.shape[-2:]
    oh, ow = _out_size(h, kh, sh, ph, 1, ceil_mode), _out_size(w, kw, sw, pw, 1, ceil_mode)
    out = np.zeros((*x.shape[:-2], oh, ow))
    for y in range(oh):
        for z in range(ow):
            y0, z0 = y * sh - ph, z * sw - pw
            y1, z1 = min(y0 + kh, h + ph), min(z0 + kw, w + pw)
            padded = (y1 - y0) * (z1 - z0)
            y0, z0, y1, z1 = max(y0, 0), max(z0, 0), min(y1, h), min(z1, w)
            window = x[..., y0:y1, z0:z1]
            divisor = divisor_override or (padded if count_include_pad else window[0, 0].size)
            out[..., y, z] = window.sum(axis=(-2, -1)) / divisor
    return out


def adaptive_reference(x: np.ndarray, size: Pair) -> np.ndarray:
    h, w = x.shape[-2:]
    out = np.zeros((*x.shape[:-2], *size))
    for y in range(size[0]):
        for z in range(size[1]):
            rows = slice(y * h // size[0], -(-(y + 1) * h // size[0]))
            cols = slice(z * w // size[1], -(-(z + 1) * w // size[1]))
            out[..., y, z] = x[..., rows, cols].mean(axis=(-2, -1))
    return out


MAX_CASES: list[dict[str, Any]] = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
    {"kernel_size": (3, 2), "stride": (1, 2), "padding": (1, 0), "dilation": (2, 1)},
    {"kernel_size": 2, "stride": 3, "ceil_mode": True},
]


@pytest.mark.parametrize("case", range(len(MAX_CASES)))
def test_max_pool2d_values_and_indices(device: str, case: int, rng: Any) -> None:
    x = rng.standard_normal((2, 3, 7, 8))
    options = MAX_CASES[case]
    values, indices = max_pool2d(tensor(x, device), **options, return_indices=True)
    expected_values, expected_indices = max_pool_reference(x, **options)
    np.testing.assert_array_equal(values.numpy(force=True), expected_values)
    np.testing.assert_array_equal(indices.numpy(force=True), expected_indices)
    assert indices.dtype is ember.int64


def test_max_pool2d_nan_ties_and_dtypes(device: str) -> None:
    x = np.array([[[1.0, np.nan, 2.0], [np.nan, 0.0, 2.0], [5.0, 5.0, -np.inf]]])
    values, indices = max_pool2d(tensor(x, device), 2, 1, return_indices=True)
    expected_values, expected_indices = max_pool_reference(x, 2, 1)
    np.testing.assert_array_equal(values.numpy(force=True), expected_values)
    np.testing.assert_array_equal(indices.numpy(force=True), expected_indices)
    for dt in (ember.int64, ember.int32, ember.int8, ember.uint8, ember.float16):
        ints = np.arange(48).reshape(1, 3, 4, 4) % 7
        result = max_pool2d(tensor(ints, device, dt), 2)
        assert result.dtype is dt
        np.testing.assert_array_equal(result.numpy(force=True), max_pool_reference(ints, 2)[0])


AVG_CASES: list[dict[str, Any]] = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
    {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False},
    {"kernel_size": (3, 2), "padding": (1, 0), "divisor_override": 5},
]


@pytest.mark.parametrize("case", range(len(AVG_CASES)))
def test_avg_pool2d_values(device: str, case: int, rng: Any) -> None:
    x = rng.standard_normal((2, 3, 7, 8))
    options = AVG_CASES[case]
    result = avg_pool2d(tensor(x, device), **options)
    np.testing.assert_allclose(
        result.numpy(force=True), avg_pool_reference(x, **options), atol=1e-14
    )
    low = avg_pool2d(tensor(x, device, ember.float32), **options)
    np.testing.assert_allclose(low.numpy(force=True), avg_pool_reference(x, **options), atol=1e-5)


def test_avg_pool2d_int64_truncates(device: str) -> None:
    x = np.array([[[[-3, 5], [1, 0]], [[-3, 0], [0, 0]]]])
    np.testing.assert_array_equal(
        avg_pool2d(tensor(x, device, ember.int64), 2).numpy(force=True), 0
    )


@pytest.mark.parametrize("size", [1, 3, (4, None), (5, 3), (7, 8)])
def test_adaptive_avg_pool2d_values(device: str, size: Any, rng: Any) -> None:
    x = rng.standard_normal((2, 3, 7, 8))
    pair = (size, size) if isinstance(size, int) else (size[0], size[1] or 8)
    result = adaptive_avg_pool2d(tensor(x, device), size)
    np.testing.assert_allclose(result.numpy(force=True), adaptive_reference(x, pair), atol=1e-14)
    unbatched = adaptive_avg_pool2d(tensor(x[0], device), size)
    np.testing.assert_allclose(
        unbatched.numpy(force=True), adaptive_reference(x[0], pair), atol=1e-14
    )


def _gradcheck(fn: Any, x: np.ndarray, device: str) -> None:
    assert ember.autograd.gradcheck(fn, (tensor(x, device, grad=True),), atol=1e-7, rtol=1e-5)


def test_pool_gradients(device: str, rng: Any) -> None:
    # distinct values: finite differences are undefined where two maxima tie
    x = rng.permutation(2 * 2 * 5 * 6).reshape(2, 2, 5, 6) / 7.0
    _gradcheck(lambda t: max_pool2d(t, 3, 2, 1, ceil_mode=True), x, device)
    _gradcheck(lambda t: max_pool2d(t, 2, 1, dilation=2), x[0], device)
    for options in AVG_CASES:
        _gradcheck(lambda t, o=options: avg_pool2d(t, **o), x, device)
    _gradcheck(lambda t: adaptive_avg_pool2d(t, (3, 4)), x, device)


def test_pool_second_derivatives(device: str, rng: Any) -> None:
    """s(v) = <J^T v, u> = <v, J u>, so ds/dv (through create_graph) is J u: avg pooling of u,
    or for max pooling u picked at x's maxima."""
    x = rng.permutation(2 * 5 * 6).reshape(1, 2, 5, 6) / 3.0
    u = rng.standard_normal(x.shape)
    _, indices = max_pool_reference(x, 3, 2, 1)
    picked = np.take_along_axis(u.reshape(1, 2, -1), indices.reshape(1, 2, -1), 2)
    cases = [
        (lambda t: max_pool2d(t, 3, 2, 1), picked.reshape(indices.shape)),
        (
            lambda t: avg_pool2d(t, 3, 2, 1, count_include_pad=False),
            avg_pool_reference(u, 3, 2, 1, count_include_pad=False),
        ),
        (lambda t: adaptive_avg_pool2d(t, (3, 4)), adaptive_reference(u, (3, 4))),
    ]
    for pool, expected in cases:
        xs = tensor(x, device, grad=True)
        y = pool(xs)
        v = tensor(np.ones(tuple(y.shape)), device, grad=True)
        (g,) = ember.autograd.grad(y, [xs], v, create_graph=True)
        (g * tensor(u, device)).sum().backward()
        np.testing.assert_allclose(v.grad.numpy(force=True), expected, atol=1e-12)


def test_pool_gradient_through_non_contiguous_input(device: str, rng: Any) -> None:
    x = tensor(rng.standard_normal((4, 4, 2, 3)), device, grad=True)
    y = max_pool2d(x.permute(2, 3, 0, 1), 2)
    assert y.grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    y.sum().backward()
    assert x.grad is not None
    assert float(x.grad.sum().item()) == float(y.numel())


def _z(*shape: int, dtype: Any = None) -> Any:
    return ember.zeros(*shape, dtype=dtype)


# (call, PyTorch's exact message)
POOL_ERRORS: list[tuple[Any, str]] = [
    (
        lambda: max_pool2d(_z(2, 4, 8, 8), 0),
        "stride should not be zero",
    ),
    (
        lambda: max_pool2d(_z(2, 4, 8, 8), 0, 1),
        "kernel size should be greater than zero, but got kH: 0 kW: 0",
    ),
    (
        lambda: max_pool2d(_z(2, 4, 8, 8), 3, padding=2),
        "pad should be at most half of effective kernel size, but got pad=2, "
        "kernel_size=3 and dilation=1",
    ),
    (
        lambda: max_pool2d(_z(1, 2, 2, 2), 3),
        "Given input size: (2x2x2). Calculated output size: (2x0x0). Output size is too small",
    ),
    (
        lambda: max_pool2d(_z(2, 2), 1),
        "non-empty 3D or 4D (batch mode) tensor expected for input",
    ),
    (
        lambda: max_pool2d(_z(2, 3, 0, 4), 1),
        "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
        "but got:[2, 3, 0, 4]",
    ),
    (
        lambda: max_pool2d(_z(2, 4, 8, 8), 2, stride=-1),
        "stride should be greater than zero, but got dH: -1 dW: -1",
    ),
    (
        lambda: max_pool2d(_z(2, 4, 8, 8), 2, padding=-1),
        "pad must be non-negative, but got pad: -1",
    ),
    (
        lambda: max_pool2d(_z(2, 4, 8, 8), 2, dilation=0),
        "dilation should be greater than zero, but got dilationH: 0 dilationW: 0",
    ),
    (
        lambda: max_pool2d(_z(2, 4, 8, 8), (2, 2, 2)),
        "max_pool2d: kernel_size must either be a single int, or a tuple of two ints",
    ),
    (
        lambda: max_pool2d(_z(2, 4, 8, 8), 2, (2, 2, 2)),
        "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints",
    ),
    (
        lambda: max_pool2d(_z(2, 4, 8, 8), 2, 2, 0, (1, 1, 1)),
        "max_pool2d: dilation must be either a single int, or a tuple of two ints",
    ),
    (
        lambda: max_pool2d(_z(2, 4, dtype=ember.bool), 2),
        "\"max_pool2d\" not implemented for 'Bool'",
    ),
    (
        lambda: avg_pool2d(_z(2, 4, 8, 8), 2, divisor_override=0),
        "divisor must be not zero",
    ),
    (
        lambda: avg_pool2d(_z(2, 4, 8, 8), 2, 2, (1, 1, 1)),
        "avg_pool2d: padding must either be a single int, or a tuple of two ints",
    ),
    (
        lambda: avg_pool2d(_z(2, 4, 8, 8, dtype=ember.int32), 2),
        "\"avg_pool2d\" not implemented for 'Int'",
    ),
    (
        lambda: adaptive_avg_pool2d(_z(2, 4, 8, 8), (1, 1, 1)),
        "adaptive_avg_pool2d: output_size must be 2",
    ),
    (
        lambda: adaptive_avg_pool2d(_z(2, 4, 8, 8), -1),
        "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 "
        "but received {-1, -1}",
    ),
    (
        lambda: adaptive_avg_pool2d(_z(2, 3, 0, 4), 2),
        "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
        "dimensions, but input has sizes [2, 3, 0, 4] with dimension 2 being empty",
    ),
    (
        lambda: adaptive_avg_pool2d(_z(2, 4, 8, 8, dtype=ember.int64), 2),
        "\"adaptive_avg_pool2d\" not implemented for 'Long'",
    ),
]


@pytest.mark.parametrize("case", range(len(POOL_ERRORS)))
def test_pool_errors(case: int) -> None:
    call, message = POOL_ERRORS[case]
    with pytest.raises(RuntimeError, match=re.escape(message) + "$"):
        call()


def test_pool_zero_batch(device: str) -> None:
    assert tuple(max_pool2d(ember.zeros(0, 3, 4, 4, device=device), 2).shape) == (0, 3, 2, 2)
    assert tuple(avg_pool2d(ember.zeros(0, 3, 4, 4, device=device), 2).shape) == (0, 3, 2, 2)
    assert tuple(adaptive_avg_pool2d(ember.zeros(0, 3, 4, 4, device=device), 0).shape) == (
        0,
        3,
        0,
        0,
    )


OURS: dict[str, Any] = {
    "max_pool2d": max_pool2d,
    "avg_pool2d": avg_pool2d,
    "adaptive_avg_pool2d": adaptive_avg_pool2d,
}


@pytest.mark.parametrize("op", sorted(OURS))
def test_matches_torch(device: str, op: str, rng: Any) -> None:
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((3, 4, 9, 7)).astype(np.float32)
    windows = {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}
    args: dict[str, Any] = {  # type: ignore[assignment]
        "max_pool2d": {**windows, "dilation": 1},
        "avg_pool2d": {**windows, "count_include_pad": False},
        "adaptive_avg_pool2d": {"output_size": (4, 5)},
    }[op]
    ours_in = tensor(x, device, ember.float32, grad=True)
    theirs_in = torch.tensor(x, requires_grad=True)
    ours = OURS[op](ours_in, **args)
    theirs = getattr(torch.nn.functional, op)(theirs_in, **args)
    np.testing.assert_allclose(
        ours.detach().numpy(force=True), theirs.detach().numpy(force=True), atol=1e-6
    )
    g = rng.standard_normal(tuple(theirs.shape)).astype(np.float32)
    ours.backward(tensor(g, device, ember.float32))
    theirs.backward(torch.tensor(g))
    np.testing.assert_allclose(
        ours_in.grad.numpy(force=True), theirs_in.grad.numpy(force=True), atol=1e-6
    )
