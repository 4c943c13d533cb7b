"""Matrix-product kernels of the CPU device: mm and bmm (see csrc/linalg.c).

float32 and float64 run on OpenBLAS, reading transposed or row-strided operands in place;
float16 is multiplied in float32; integers accumulate in int64. Outputs may be strided
views (an `out=` argument): row- or column-major ones are written directly, others
through a buffer.
"""

from __future__ import annotations

from ember.plugins.sdk import KernelRegistry, Tensor
from ember_cpu._geometry import Scratch
from ember_cpu._lib import check, lib

__all__ = ["bmm", "mm", "register"]


_scratch = Scratch(13)
_mm_contiguous = lib.em_mm_contiguous
_bmm = lib.em_bmm


def mm(out: Tensor, a: Tensor, b: Tensor) -> None:
    """mm(out, a, b): out (M, N) = a (M, K) @ b (K, N), any strides."""
    m, k = a.shape
    n = b.shape[1]
    a_ptr = a.data_ptr()
    b_ptr = b.data_ptr()
    out_ptr = out.data_ptr()
    if a.is_contiguous() and b.is_contiguous() and out.is_contiguous():
        status = _mm_contiguous(out.dtype.index, out_ptr, a_ptr, b_ptr, m, n, k)
    else:
        buffer = _scratch.buffer
        buffer[0:13] = (1, m, n, k, 0, *a.stride(), 0, *b.stride(), 0, *out.stride())
        status = _bmm(out.dtype.index, out_ptr, a_ptr, b_ptr, buffer)
    if status:
        check(status, "mm")


def bmm(out: Tensor, a: Tensor, b: Tensor) -> None:
    """bmm(out, a, b): out (B, M, N) = a (B, M, K) @ b (B, K, N); batch strides may be 0."""
    batch, m, k = a.shape
    n = b.shape[2]
    buffer = _scratch.buffer
    buffer[0:13] = (batch, m, n, k, *a.stride(), *b.stride(), *out.stride())
    status = _bmm(
        out.dtype.index,
        out.data_ptr(),
        a.data_ptr(),
        b.data_ptr(),
        buffer,
    )
    if status:
        check(status, "bmm")


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the cpu device."""
    registry.register("mm", "cpu", mm)
    registry.register("bmm", "cpu", bmm)
