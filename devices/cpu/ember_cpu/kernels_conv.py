"""Convolution and pooling kernels of the CPU device (see csrc/conv.c and csrc/pool.c,
loops over the shared em_im2col.h and em_pool.h).

im2col and col2im move NCHW images to and from column matrices that the runtime
multiplies through the mm/bmm kernels (oneDNN or OpenBLAS, see `_sgemm`); pooling runs
directly on planes.
Every image argument is contiguous NCHW (the runtime guarantees it); signatures and
layouts are documented beside the op definitions in ember.nn.functional._conv and _pool.
"""

from __future__ import annotations

from typing import Any, Final

from ember.plugins.kernels import windows
from ember.plugins.sdk import KernelRegistry, Tensor
from ember_cpu._geometry import Scratch
from ember_cpu._lib import check, lib

__all__ = [
    "adaptive_avg_pool2d", "adaptive_avg_pool2d_backward", "avg_pool2d", "avg_pool2d_backward",
    "col2im", "im2col", "max_pool2d", "max_pool2d_backward", "register",
]  # fmt: skip

Pair = tuple[int, int]

# csrc/pool.c's op codes
_MAX, _MAX_BACKWARD, _AVG, _AVG_BACKWARD, _ADAPTIVE, _ADAPTIVE_BACKWARD = range(6)
_NAMES: Final = ("max_pool2d", "max_pool2d_backward", "avg_pool2d", "avg_pool2d_backward",
                 "adaptive_avg_pool2d", "adaptive_avg_pool2d_backward")  # fmt: skip
_scratch = Scratch(18)


def _packed(fields: tuple[int, ...]) -> Any:
    buffer = _scratch.buffer
    buffer[0 : len(fields)] = fields
    return buffer


def im2col(cols: Tensor, x: Tensor, stride: Pair, padding: Pair, dilation: Pair) -> None:
    """im2col(cols, x, stride, padding, dilation): cols (N, C, kh, kw, Ho, Wo) <- windows of x."""
    geometry = windows.conv2d(x.shape, cols.shape, cols.stride(), stride, padding, dilation)
    lib.em_im2col(x.dtype.itemsize, cols.data_ptr(), x.data_ptr(), _packed(geometry))


def col2im(x: Tensor, cols: Tensor, stride: Pair, padding: Pair, dilation: Pair) -> None:
    """col2im(x, cols, stride, padding, dilation): x = the sum of cols scattered back."""
    geometry = windows.conv2d(x.shape, cols.shape, cols.stride(), stride, padding, dilation)
    status = lib.em_col2im(x.dtype.index, x.data_ptr(), cols.data_ptr(), _packed(geometry))
    if status:
        check(status, "col2im")


def _pool(op: int, image: Tensor, pooled: Tensor, target: Tensor, source: Tensor,
          indices: Tensor | None = None, *window: Any) -> None:  # fmt: skip
    """Pooling op `op` from source into target, over planes of image pooled to pooled."""
    shape = image.shape
    geometry = _packed(windows.pool2d(shape, pooled.shape, *window))
    status = lib.em_pool2d(
        op, target.dtype.index, target.data_ptr(), source.data_ptr(),
        0 if indices is None else indices.data_ptr(), shape[0] * shape[1], geometry,
    )  # fmt: skip
    if status:
        check(status, _NAMES[op])


def max_pool2d(out: Tensor, indices: Tensor, x: Tensor, kernel_size: Pair, stride: Pair,
               padding: Pair, dilation: Pair) -> None:  # fmt: skip
    """max_pool2d(out, indices, x, kernel_size, stride, padding, dilation)."""
    _pool(_MAX, x, out, out, x, indices, kernel_size, stride, padding, dilation)


def max_pool2d_backward(grad_input: Tensor, grad_out: Tensor, indices: Tensor) -> None:
    """max_pool2d_backward(grad_input, grad_out, indices): scatter-add by plane index."""
    _pool(_MAX_BACKWARD, grad_input, grad_out, grad_input, grad_out, indices)


def avg_pool2d(out: Tensor, x: Tensor, kernel_size: Pair, stride: Pair, padding: Pair,
               count_include_pad: bool, divisor_override: int | None) -> None:  # fmt: skip
    """avg_pool2d(out, x, kernel_size, stride, padding, count_include_pad, divisor_override)."""
    window = (kernel_size, stride, padding, (1, 1), count_include_pad, divisor_override)
    _pool(_AVG, x, out, out, x, None, *window)


def avg_pool2d_backward(grad_input: Tensor, grad_out: Tensor, kernel_size: Pair, stride: Pair,
                        padding: Pair, count_include_pad: bool,
                        divisor_override: int | None) -> None:  # fmt: skip
    """avg_pool2d_backward(grad_input, grad_out, kernel_size, stride, padding, ...)."""
    window = (kernel_size, stride, padding, (1, 1), count_include_pad, divisor_override)
    _pool(_AVG_BACKWARD, grad_input, grad_out, grad_input, grad_out, None, *window)


def adaptive_avg_pool2d(out: Tensor, x: Tensor) -> None:
    """adaptive_avg_pool2d(out, x): the output size is out's (Ho, Wo)."""
    _pool(_ADAPTIVE, x, out, out, x)


def adaptive_avg_pool2d_backward(grad_input: Tensor, grad_out: Tensor) -> None:
    """adaptive_avg_pool2d_backward(grad_input, grad_out)."""
    _pool(_ADAPTIVE_BACKWARD, grad_input, grad_out, grad_input, grad_out)


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
