"""The pooling composites: every pooling op and its backward on im2col/col2im, the
reductions, gather, index_put_ and matrix products.

Each function has its op's kernel signature (names.py): tensors are contiguous stacks of
planes (P, 1, H, W). A device that registers its own kernel under the op's name overrides
these (cpu and opencl do, for speed); a device with only the primitives runs these.
A window's positions form a (K, L) grid: K = kh * kw positions of each of the L = Ho * Wo
windows, im2col's column layout. What depends only on the geometry (which positions lie
inside the input, divisors, averaging matrices) is computed on the host with NumPy and
uploaded, a few small tensors per call; the data never leaves the device.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import _dtype
from ember._dispatch import kernel_for
from ember._ops import _launch, conversion, creation, names, unary
from ember._ops import elementwise as ew
from ember._ops._index_tensors import int64_arange, int64_binary
from ember._ops.linalg import launch_product
from ember._tensor import Tensor, empty_tensor, make_view

__all__ = [
    "adaptive_avg_pool2d", "adaptive_avg_pool2d_backward", "avg_pool2d", "avg_pool2d_backward",
    "max_pool2d", "max_pool2d_backward",
]  # fmt: skip

Pair = tuple[int, int]

_int64 = _dtype.int64
_AMAX = names.REDUCTIONS["amax"]
_SUM = names.REDUCTIONS["sum"]


# -- geometry on the host -----------------------------------------------------------------------


def _window_rows(out: int, k: int, s: int, p: int, d: int) -> np.ndarray:
    """(k, out): the input row (or column) each window position reads; may lie outside."""
    return np.arange(out)[None, :] * s - p + np.arange(k)[:, None] * d


def _positions(
    h: int, w: int, out_hw: Pair, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair
) -> tuple[np.ndarray, np.ndarray]:
    """(K, L) flat in-plane positions y * W + x of every window element, and whether each
    lies inside the plane."""
    ys = _window_rows(out_hw[0], kernel[0], stride[0], padding[0], dilation[0])
    xs = _window_rows(out_hw[1], kernel[1], stride[1], padding[1], dilation[1])
    # (kh, kw, Ho, Wo), im2col's order, flattened to (K, L).
    y = ys[:, None, :, None]
    x = xs[None, :, None, :]
    inside = (y >= 0) & (y < h) & (x >= 0) & (x < w)
    flat = np.broadcast_to(y * w + x, inside.shape)
    k, n = kernel[0] * kernel[1], out_hw[0] * out_hw[1]
    return flat.reshape(k, n), inside.reshape(k, n)


def _divisors(
    h: int, w: int, out_hw: Pair, kernel: Pair, stride: Pair, padding: Pair,
    count_include_pad: bool, divisor_override: int | None,
) -> np.ndarray:  # fmt: skip
    """(L,) the divisor of each average window (1 for a window with no pixel: it sums 0)."""
    spans = []
    for size, out, k, s, p in zip((h, w), out_hw, kernel, stride, padding, strict=True):
        start = np.arange(out) * s - p
        end = np.minimum(start + k, size + p)  # the window clipped to the padded input
        padded = end - start
        real = np.minimum(end, size) - np.maximum(start, 0)
        spans.append((padded, np.maximum(real, 0)))
    (ph, rh), (pw, rw) = spans
    real = rh[:, None] * rw[None, :]
    if divisor_override is not None:
        divisor = np.full(real.shape, divisor_override, dtype=np.int64)
    elif count_include_pad:
        divisor = ph[:, None] * pw[None, :]
    else:
        divisor = real
    return np.where(real > 0, divisor, 1).reshape(-1)


def _averaging(size: int, out: int) -> np.ndarray:
    """(out, size): row i averages [floor(i*size/out), ceil((i+1)*size/out))."""
    matrix = np.zeros((out, size))
    for i in range(out):
        start, end = i * size // out, -((-(i + 1) * size) // out)
        matrix[i, start:end] = 1.0 / (end - start)
    return matrix


def _upload(array: np.ndarray, dt: _dtype.dtype, dev: Any) -> Tensor:
    return creation.tensor(np.ascontiguousarray(array), dtype=dt, device=dev)


# -- device helpers -----------------------------------------------------------------------------


def _columns(x: Tensor, kernel: Pair, out_hw: Pair, stride: Pair, padding: Pair,
             dilation: Pair) -> Tensor:  # fmt: skip
    """im2col of the (P, 1, H, W) planes as a contiguous (P, K, L) tensor (0 outside)."""
    planes = x._shape[0]
    kh, kw = kernel
    oh, ow = out_hw
    k, n = kh * kw, oh * ow
    cols = empty_tensor((planes, k, n), x._dtype, x._device)
    view = make_view(cols, 0, (planes, 1, kh, kw, oh, ow), (k * n, k * n, kw * n, n, ow, 1))
    kernel_for(names.IM2COL, x._device, x._dtype)(view, x, stride, padding, dilation)
    return cols


def _planes_of(t: Tensor) -> Tensor:
    """A contiguous (P, 1, h, w) tensor as (P, 1, h * w)."""
    planes, _, h, w = t._shape
    return make_view(t, t._offset, (planes, 1, h * w), (h * w, h * w, 1))


def _lowest(dt: _dtype.dtype) -> float | int:
    if dt.is_floating_point:
        return -np.inf
    return int(np.iinfo(dt.numpy).min)


def _compute_dtype(dt: _dtype.dtype) -> _dtype.dtype:
    """float16 and bfloat16 average in float32, as the cpu kernels do (a half sum
    overflows early)."""
    return _dtype.float32 if dt is _dtype.float16 or dt is _dtype.bfloat16 else dt


def _as_output(out: Tensor, dt: _dtype.dtype) -> Tensor:
    """Where to compute `out` in dtype `dt`: out itself, or a temporary to copy back."""
    return out if out._dtype is dt else empty_tensor(out._shape, dt, out._device)


def _as(t: Tensor, dt: _dtype.dtype) -> Tensor:
    if t._dtype is dt:
        return t
    out = empty_tensor(t._shape, dt, t._device)
    _launch.copy(out, t)
    return out


# -- max pooling ----------------------------------------------------------------------------------


def max_pool2d(out: Tensor, indices: Tensor, x: Tensor, kernel_size: Pair, stride: Pair,
               padding: Pair, dilation: Pair) -> None:  # fmt: skip
    """Each window's maximum and the flat in-plane index of its first maximum, or of its
    last NaN when it holds one (the cpu kernel's rule, which is PyTorch's)."""
    planes, _, h, w = x._shape
    out_hw = (out._shape[2], out._shape[3])
    if planes == 0:
        return
    flat, inside = _positions(h, w, out_hw, kernel_size, stride, padding, dilation)
    dev = x._device
    cols = _columns(x, kernel_size, out_hw, stride, padding, dilation)
    # Positions outside the plane hold the dtype's lowest value, so they never win.
    values = unary.where(_upload(inside, _dtype.bool, dev), cols, _lowest(x._dtype))
    best = _planes_of(out)
    _launch.launch_reduction(_AMAX, best, values, (1,))
    _winners(_planes_of(indices), values, best, flat, inside)


def _winners(indices: Tensor, values: Tensor, best: Tensor, flat: np.ndarray,
             inside: np.ndarray) -> None:  # fmt: skip
    """indices (P, 1, L) = the flat position of each window's first maximum inside the
    plane, or of its last NaN.

    Each position k of a window scores K - 1 - k where it holds the maximum inside the
    plane, 0 elsewhere, and K + k where it holds a NaN, so the top score names the winner;
    a (2K, L) table maps top scores straight to flat positions.
    """
    dev = values._device
    planes, k, n = values._shape
    order = np.arange(k)[:, None]
    at_maximum = _upload(np.where(inside, k - 1 - order, 0), _int64, dev)
    score = unary.where(ew.eq(values, best), at_maximum, 0)
    if values._dtype.is_floating_point:
        score = unary.where(ew.ne(values, values), _upload(k + order, _int64, dev), score)
    top = empty_tensor((planes, 1, n), _int64, dev)
    _launch.launch_reduction(_AMAX, top, score, (1,))
    table = _upload(np.concatenate([flat[::-1], flat]), _int64, dev)
    spread = make_view(table, 0, (planes, 2 * k, n), (0, n, 1))
    kernel_for(names.GATHER, dev, _int64)(indices, spread, 1, top)


def max_pool2d_backward(grad_input: Tensor, grad_out: Tensor, indices: Tensor) -> None:
    """grad_input = 0, then each grad_out element added at its index within its plane."""
    planes, _, h, w = grad_input._shape
    _launch.fill(grad_input, conversion.python_scalar(0, grad_input._dtype))
    count = grad_out.numel()
    if count == 0:
        return
    starts = int64_arange(planes, h * w, grad_input._device)
    at = int64_binary("add", indices, make_view(starts, 0, (planes, 1, 1, 1), (1, 1, 1, 1)))
    flat_grad = make_view(grad_out, grad_out._offset, (count,), (1,))
    kernel_for(names.INDEX_PUT, grad_input._device, grad_input._dtype)(
        grad_input, make_view(at, 0, (count,), (1,)), flat_grad, True
    )


# -- average pooling ------------------------------------------------------------------------------


def avg_pool2d(out: Tensor, x: Tensor, kernel_size: Pair, stride: Pair, padding: Pair,
               count_include_pad: bool, divisor_override: int | None) -> None:  # fmt: skip
    """Window sums (im2col, then sum) divided by each window's divisor; int64 divides
    truncating."""
    planes, _, h, w = x._shape
    out_hw = (out._shape[2], out._shape[3])
    if planes == 0:
        return
    dt = _compute_dtype(x._dtype)
    cols = _columns(_as(x, dt), kernel_size, out_hw, stride, padding, (1, 1))
    total = empty_tensor((planes, 1, cols._shape[2]), dt, x._device)
    _launch.launch_reduction(_SUM, total, cols, (1,))
    divisor = _divisors(
        h, w, out_hw, kernel_size, stride, padding, count_include_pad, divisor_override
    )
    divide = names.BINARY["div" if dt.is_floating_point else "trunc_divide"]
    # Straight to the kernel: divisors are at least 1, no division-by-zero check is needed.
    target = _planes_of(out) if dt is x._dtype else total
    _launch.launch_binary(divide, target, total, _upload(divisor, dt, x._device), dt)
    if target is total:
        _launch.copy(_planes_of(out), total)


def avg_pool2d_backward(grad_input: Tensor, grad_out: Tensor, kernel_size: Pair, stride: Pair,
                        padding: Pair, count_include_pad: bool,
                        divisor_override: int | None) -> None:  # fmt: skip
    """Each grad_out / divisor spread over its window's pixels: col2im of the shares,
    repeated over the window by zero strides."""
    planes, _, h, w = grad_input._shape
    oh, ow = grad_out._shape[2], grad_out._shape[3]
    if planes == 0:
        return
    dt = _compute_dtype(grad_input._dtype)
    divisor = _divisors(
        h, w, (oh, ow), kernel_size, stride, padding, count_include_pad, divisor_override
    )
    share = empty_tensor((planes, 1, oh * ow), dt, grad_input._device)
    divisors = _upload(divisor, dt, grad_input._device)
    _launch.launch_binary(names.BINARY["div"], share, _as(_planes_of(grad_out), dt), divisors, dt)
    kh, kw = kernel_size
    cols = make_view(share, 0, (planes, 1, kh, kw, oh, ow), (oh * ow, 0, 0, 0, ow, 1))
    image = _as_output(grad_input, dt)
    kernel_for(names.COL2IM, image._device, dt)(image, cols, stride, padding, (1, 1))
    if image is not grad_input:
        _launch.copy(grad_input, image)


# -- adaptive average pooling ---------------------------------------------------------------------


def adaptive_avg_pool2d(out: Tensor, x: Tensor) -> None:
    """Per plane, Ph @ x @ Pw^T with the averaging matrices Ph (Ho, H) and Pw (Wo, W)."""
    h, w = x._shape[2], x._shape[3]
    oh, ow = out._shape[2], out._shape[3]
    if out.numel() == 0:
        return
    _sandwich(out, x, _averaging(h, oh), _averaging(w, ow).T)


def adaptive_avg_pool2d_backward(grad_input: Tensor, grad_out: Tensor) -> None:
    """The adjoint: per plane, Ph^T @ grad_out @ Pw."""
    h, w = grad_input._shape[2], grad_input._shape[3]
    oh, ow = grad_out._shape[2], grad_out._shape[3]
    if grad_input.numel() == 0:
        return
    if grad_out.numel() == 0:
        _launch.fill(grad_input, 0.0)
        return
    _sandwich(grad_input, grad_out, _averaging(h, oh).T, _averaging(w, ow))


def _sandwich(out: Tensor, x: Tensor, left: np.ndarray, right: np.ndarray) -> None:
    """out[p] = left @ x[p] @ right for each (P, 1, r, c) plane: one mm over the stacked
    rows of every plane, then one bmm with `left` shared by zero batch strides."""
    planes, _, rows, columns = x._shape
    dt = _compute_dtype(x._dtype)
    dev = x._device
    source = _as(x, dt)
    narrow = empty_tensor((planes * rows, right.shape[1]), dt, dev)
    stacked = make_view(source, source._offset, (planes * rows, columns), (columns, 1))
    launch_product(narrow, stacked, _upload(right, dt, dev))
    shared = _upload(left, dt, dev)
    m, n = left.shape[0], right.shape[1]
    result = _as_output(out, dt)
    launch_product(
        make_view(result, result._offset, (planes, m, n), (m * n, n, 1)),
        make_view(shared, 0, (planes, m, rows), (0, rows, 1)),
        make_view(narrow, 0, (planes, rows, n), (rows * n, n, 1)),
    )
    if result is not out:
        _launch.copy(out, result)
