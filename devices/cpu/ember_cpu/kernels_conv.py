"""Convolution and pooling kernels of the CPU device (see csrc/conv.c and csrc/pool.c).

im2col and col2im move NCHW images to and from column matrices that the runtime
multiplies with OpenBLAS through the mm/bmm kernels; pooling runs directly on planes.
Every image argument is contiguous NCHW (the runtime guarantees it); signatures and
layouts are documented beside the op definitions in ember.nn.functional._conv and _pool.
"""

from __future__ import annotations

from typing import Any

from ember.plugins.sdk import KernelRegistry, Tensor
from ember_cpu._geometry import Scratch
from ember_cpu._lib import check, lib

__all__ = [
    "adaptive_avg_pool2d", "adaptive_avg_pool2d_backward", "avg_pool2d", "avg_pool2d_backward",
    "col2im", "im2col", "max_pool2d", "max_pool2d_backward", "register",
]  # fmt: skip

Pair = tuple[int, int]


_scratch = Scratch(18)


def _conv_geometry(image: Tensor, cols: Tensor, stride: Pair, padding: Pair, dilation: Pair) -> Any:
    n, c, h, w = image.shape
    kh, kw, oh, ow = cols.shape[2:]
    buffer = _scratch.buffer
    buffer[0:18] = (n, c, h, w, kh, kw, oh, ow, *stride, *padding, *dilation, *cols.stride()[:4])
    return buffer


def im2col(cols: Tensor, x: Tensor, stride: Pair, padding: Pair, dilation: Pair) -> None:
    """im2col(cols, x, stride, padding, dilation): cols (N, C, kh, kw, Ho, Wo) <- windows of x."""
    geometry = _conv_geometry(x, cols, stride, padding, dilation)
    lib.em_im2col(x.dtype.itemsize, cols.data_ptr(), x.data_ptr(), geometry)


def col2im(x: Tensor, cols: Tensor, stride: Pair, padding: Pair, dilation: Pair) -> None:
    """col2im(x, cols, stride, padding, dilation): x = the sum of cols scattered back."""
    geometry = _conv_geometry(x, cols, stride, padding, dilation)
    status = lib.em_col2im(x.dtype.index, x.data_ptr(), cols.data_ptr(), geometry)
    if status:
        check(status, "col2im")


def _pool_geometry(image: Tensor, out: Tensor, kernel: Pair, stride: Pair, padding: Pair,
                   dilation: Pair) -> Any:  # fmt: skip
    n, c, h, w = image.shape
    buffer = _scratch.buffer
    buffer[0:13] = (n * c, h, w, *out.shape[2:], *kernel, *stride, *padding, *dilation)
    return buffer


def max_pool2d(out: Tensor, indices: Tensor, x: Tensor, kernel_size: Pair, stride: Pair,
               padding: Pair, dilation: Pair) -> None:  # fmt: skip
    """max_pool2d(out, indices, x, kernel_size, stride, padding, dilation)."""
    geometry = _pool_geometry(x, out, kernel_size, stride, padding, dilation)
    status = lib.em_max_pool2d(
        x.dtype.index, out.data_ptr(), indices.data_ptr(), x.data_ptr(), geometry
    )
    if status:
        check(status, "max_pool2d")


def max_pool2d_backward(grad_input: Tensor, grad_out: Tensor, indices: Tensor) -> None:
    """max_pool2d_backward(grad_input, grad_out, indices): scatter-add by plane index."""
    n, c, h, w = grad_input.shape
    oh, ow = grad_out.shape[2:]
    status = lib.em_max_pool2d_backward(
        grad_input.dtype.index, grad_input.data_ptr(), grad_out.data_ptr(), indices.data_ptr(),
        n * c, h * w, oh * ow,
    )  # fmt: skip
    if status:
        check(status, "max_pool2d_backward")


def avg_pool2d(out: Tensor, x: Tensor, kernel_size: Pair, stride: Pair, padding: Pair,
               count_include_pad: bool, divisor_override: int | None) -> None:  # fmt: skip
    """avg_pool2d(out, x, kernel_size, stride, padding, count_include_pad, divisor_override)."""
    geometry = _pool_geometry(x, out, kernel_size, stride, padding, (1, 1))
    status = lib.em_avg_pool2d(
        x.dtype.index,
        out.data_ptr(),
        x.data_ptr(),
        geometry,
        count_include_pad,
        divisor_override or 0,
    )
    if status:
        check(status, "avg_pool2d")


def avg_pool2d_backward(grad_input: Tensor, grad_out: Tensor, kernel_size: Pair, stride: Pair,
                        padding: Pair, count_include_pad: bool,
                        divisor_override: int | None) -> None:  # fmt: skip
    """avg_pool2d_backward(grad_input, grad_out, kernel_size, stride, padding, ...)."""
    geometry = _pool_geometry(grad_input, grad_out, kernel_size, stride, padding, (1, 1))
    status = lib.em_avg_pool2d_backward(
        grad_input.dtype.index, grad_input.data_ptr(), grad_out.data_ptr(), geometry,
        count_include_pad, divisor_override or 0,
    )  # fmt: skip
    if status:
        check(status, "avg_pool2d_backward")


def _adaptive(backward: int, image: Tensor, pooled: Tensor, target: Tensor, source: Tensor) -> None:
    n, c, h, w = image.shape
    oh, ow = pooled.shape[2:]
    status = lib.em_adaptive_avg_pool2d(
        backward, target.dtype.index, target.data_ptr(), source.data_ptr(), n * c, h, w, oh, ow
    )
    if status:
        check(status, "adaptive_avg_pool2d")


def adaptive_avg_pool2d(out: Tensor, x: Tensor) -> None:
    """adaptive_avg_pool2d(out, x): the output size is out's (Ho, Wo)."""
    _adaptive(0, x, out, out, x)


def adaptive_avg_pool2d_backward(grad_input: Tensor, grad_out: Tensor) -> None:
    """adaptive_avg_pool2d_backward(grad_input, grad_out)."""
    _adaptive(1, grad_input, grad_out, grad_input, grad_out)


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the cpu device."""
    registry.register("im2col", "cpu", im2col)
    registry.register("col2im", "cpu", col2im)
    registry.register("max_pool2d", "cpu", max_pool2d)
    registry.register("max_pool2d_backward", "cpu", max_pool2d_backward)
    registry.register("avg_pool2d", "cpu", avg_pool2d)
    registry.register("avg_pool2d_backward", "cpu", avg_pool2d_backward)
    registry.register("adaptive_avg_pool2d", "cpu", adaptive_avg_pool2d)
    registry.register("adaptive_avg_pool2d_backward", "cpu", adaptive_avg_pool2d_backward)
