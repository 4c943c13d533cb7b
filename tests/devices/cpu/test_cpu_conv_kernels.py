"""The cpu device's im2col/col2im and pooling kernels, called directly, against NumPy.

im2col is checked for every item size and for both column layouts the runtime uses
((N, C, kh, kw, Ho, Wo) and the batch-in-columns (C, kh, kw, N, Ho, Wo)); col2im for
each dtype it accepts, integer wrap-around included; the two are adjoint. Pooling kernels
are checked on planes, their backward kernels on overlapping windows (indices and windows
hit the same pixel more than once); results do not depend on the thread count.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import ember
from ember import _dtype
from ember._tensor import Tensor, empty_tensor, make_view

from ._layouts import CPU, kernel, tensor

Pair = tuple[int, int]


def im2col_reference(
    x: np.ndarray, kernel_hw: Pair, out_hw: Pair, stride: Pair, padding: Pair, dilation: Pair
) -> np.ndarray:
    n, c, h, w = x.shape
    cols = np.zeros((n, c, *kernel_hw, *out_hw), x.dtype)
    for i in range(kernel_hw[0]):
        for j in range(kernel_hw[1]):
            for y in range(out_hw[0]):
                for z in range(out_hw[1]):
                    iy = y * stride[0] - padding[0] + i * dilation[0]
                    iz = z * stride[1] - padding[1] + j * dilation[1]
                    if 0 <= iy < h and 0 <= iz < w:
                        cols[:, :, i, j, y, z] = x[:, :, iy, iz]
    return cols


def columns(shape: tuple[int, ...], dt: Any, batch_inside: bool) -> Tensor:
    """An empty (N, C, kh, kw, Ho, Wo) view, laid out plainly or batch-in-columns."""
    if not batch_inside:
        return empty_tensor(shape, dt, CPU)
    n, c, kh, kw, oh, ow = shape
    base = empty_tensor((c, kh, kw, n, oh, ow), dt, CPU)
    s = base._strides
    return make_view(base, 0, shape, (s[3], s[0], s[1], s[2], s[4], s[5]))


GEOMETRIES = [
    # kernel, out, stride, padding, dilation for a 5 x 6 image
    ((3, 3), (3, 4), (1, 1), (0, 0), (1, 1)),
    ((3, 2), (3, 4), (2, 2), (1, 1), (1, 1)),
    ((2, 3), (5, 4), (1, 2), (1, 2), (2, 1)),  # asymmetric: padding (1, 2) top/left only
    ((1, 1), (2, 2), (3, 3), (0, 0), (1, 1)),
]


@pytest.mark.parametrize("dtype", ["uint8", "float16", "float32", "int64"])
@pytest.mark.parametrize("geometry", range(len(GEOMETRIES)))
@pytest.mark.parametrize("batch_inside", [False, True])
def test_im2col(dtype: str, geometry: int, batch_inside: bool) -> None:
    k, out, s, p, d = GEOMETRIES[geometry]
    x = (np.arange(2 * 3 * 5 * 6) % 97).reshape(2, 3, 5, 6).astype(dtype)
    cols = columns((2, 3, *k, *out), _dtype.BY_NAME[dtype], batch_inside)
    kernel("im2col")(cols, tensor(x), s, p, d)
    np.testing.assert_array_equal(cols.numpy(), im2col_reference(x, k, out, s, p, d))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "uint8", "int32", "int64"])
@pytest.mark.parametrize("geometry", range(len(GEOMETRIES)))
def test_col2im_is_the_adjoint(dtype: str, geometry: int) -> None:
    k, out, s, p, d = GEOMETRIES[geometry]
    rng = np.random.default_rng(geometry)
    values = rng.integers(-4, 5, (2, 3, *k, *out)).astype(dtype)
    image = empty_tensor((2, 3, 5, 6), _dtype.BY_NAME[dtype], CPU)
    kernel("col2im")(image, tensor(values), s, p, d)
    # col2im is im2col's transpose: scatter every column element back onto its pixel
    expected = np.zeros((2, 3, 5, 6), np.int64)
    positions = im2col_reference(np.arange(30).reshape(1, 1, 5, 6) + 1, k, out, s, p, d)[0, 0]
    for index in np.ndindex(positions.shape):
        if positions[index]:
            y, z = divmod(int(positions[index]) - 1, 6)
            expected[:, :, y, z] += values[(slice(None), slice(None), *index)].astype(np.int64)
    np.testing.assert_array_equal(image.numpy(), expected.astype(dtype))


def test_col2im_wraps_integers_and_rejects_float16() -> None:
    values = np.full((1, 1, 2, 2, 1, 1), 100, np.int8)
    image = empty_tensor((1, 1, 1, 1), _dtype.int8, CPU)
    kernel("col2im")(image, tensor(values), (1, 1), (0, 0), (0, 0))  # all four hit one pixel
    assert image.numpy()[0, 0, 0, 0] == np.int8(-112)  # 400 mod 256, as int8
    half = empty_tensor((1, 1, 2, 2), _dtype.float16, CPU)
    with pytest.raises(RuntimeError, match="col2im: unsupported dtype code 5"):
        kernel("col2im")(
            half, tensor(np.zeros((1, 1, 1, 1, 2, 2), np.float16)), (1, 1), (0, 0), (1, 1)
        )


@pytest.fixture
def two_threads() -> Iterator[None]:
    before = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        yield
    finally:
        ember.set_num_threads(before)


def _pool_planes(x: np.ndarray, out_hw: Pair, dt: Any) -> tuple[Tensor, Tensor]:
    out = empty_tensor((*x.shape[:2], *out_hw), dt, CPU)
    return tensor(x), out


def test_max_pool_kernels_match_across_threads(two_threads: None) -> None:
    """Large enough to run in parallel; interior rows go through the vectorised path."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16, 40, 300)).astype(np.float32)
    x[0, 0, 0, 0] = x[0, 0, 1, 1] = np.nan
    results = []
    for threads in (2, 1):
        ember.set_num_threads(threads)
        source, out = _pool_planes(x, (20, 150), _dtype.float32)
        indices = empty_tensor(out._shape, _dtype.int64, CPU)
        kernel("max_pool2d")(out, indices, source, (2, 2), (2, 2), (0, 0), (1, 1))
        results.append((out.numpy().copy(), indices.numpy().copy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    windows = x.reshape(8, 16, 20, 2, 150, 2).transpose(0, 1, 2, 4, 3, 5).reshape(8, 16, 20, 150, 4)
    expected = np.where(np.isnan(windows).any(-1), np.nan, windows.max(-1))
    np.testing.assert_array_equal(results[0][0], expected)
    assert results[0][1][0, 0, 0, 0] == 301  # the last NaN of the first window


def test_max_pool_backward_adds_repeated_indices() -> None:
    grad_out = np.arange(1, 7, dtype=np.float64).reshape(1, 1, 2, 3)
    indices = np.array([[[[0, 0, 3], [3, 5, 0]]]], np.int64)
    grad_input = empty_tensor((1, 1, 2, 3), _dtype.float64, CPU)
    kernel("max_pool2d_backward")(grad_input, tensor(grad_out), tensor(indices))
    np.testing.assert_array_equal(grad_input.numpy().reshape(-1), [1 + 2 + 6, 0, 0, 3 + 4, 0, 5])


@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool_backward_is_the_adjoint(count_include_pad: bool) -> None:
    rng = np.random.default_rng(1)
    x, g = rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((2, 3, 4, 3))
    args = ((3, 3), (2, 2), (1, 1), count_include_pad, None)
    source, out = _pool_planes(x, (4, 3), _dtype.float64)
    kernel("avg_pool2d")(out, source, *args)
    grad_input = empty_tensor(x.shape, _dtype.float64, CPU)
    kernel("avg_pool2d_backward")(grad_input, tensor(g), *args)
    assert np.isclose(np.sum(out.numpy() * g), np.sum(x * grad_input.numpy()), rtol=1e-12)


def test_adaptive_kernels_are_adjoint_and_average() -> None:
    rng = np.random.default_rng(2)
    x, g = rng.standard_normal((2, 2, 7, 5)), rng.standard_normal((2, 2, 3, 4))
    source, out = _pool_planes(x, (3, 4), _dtype.float64)
    kernel("adaptive_avg_pool2d")(out, source)
    np.testing.assert_allclose(out.numpy()[..., 0, 0], x[..., 0:3, 0:2].mean(axis=(-2, -1)))
    grad_input = empty_tensor(x.shape, _dtype.float64, CPU)
    kernel("adaptive_avg_pool2d_backward")(grad_input, tensor(g))
    assert np.isclose(np.sum(out.numpy() * g), np.sum(x * grad_input.numpy()), rtol=1e-12)


def test_pool_kernels_reject_unsupported_dtypes() -> None:
    x = tensor(np.zeros((1, 1, 2, 2), np.int64))
    out = empty_tensor((1, 1, 1, 1), _dtype.int64, CPU)
    with pytest.raises(RuntimeError, match="adaptive_avg_pool2d: unsupported dtype code 4"):
        kernel("adaptive_avg_pool2d")(out, x)
    with pytest.raises(RuntimeError, match="max_pool2d_backward: unsupported dtype code 4"):
        kernel("max_pool2d_backward")(x, out, empty_tensor((1, 1, 1, 1), _dtype.int64, CPU))
