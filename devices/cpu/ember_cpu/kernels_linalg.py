"""Matrix-product kernels of the CPU device: mm and bmm (see csrc/linalg.c).

float64 runs on OpenBLAS and float32 on oneDNN's sgemm where installed, else OpenBLAS
(`_sgemm`), both reading transposed or row-strided operands in place; float16 is
multiplied in float32; integers accumulate in int64. Outputs may be strided
(row- or column-major ones are written directly, others through a buffer), though the
runtime passes contiguous ones. A flat plan (the common case) is one call with the sizes;
any other passes the plan's geometry, packed once per plan.
"""

from __future__ import annotations

from typing import Any

from ember.plugins.sdk import KernelRegistry, MatmulPlan, Storage
from ember_cpu import _sgemm
from ember_cpu._lib import check, ffi, lib

__all__ = ["bmm", "mm", "register"]


_mm_contiguous = lib.em_mm_contiguous
_bmm = lib.em_bmm


def mm(out: Storage, a: Storage, b: Storage, plan: MatmulPlan) -> None:
    """out (M, N) = a (M, K) @ b (K, N): a batch of one."""
    if plan.flat:
        status = _mm_contiguous(plan.dtypes[0].index, out.ptr, a.ptr, b.ptr, plan.m, plan.n, plan.k)
    else:
        status = _strided(out, a, b, plan)
    if status:
        check(status, "mm")


def bmm(out: Storage, a: Storage, b: Storage, plan: MatmulPlan) -> None:
    """out (B, M, N) = a (B, M, K) @ b (B, K, N); batch strides may be 0."""
    status = _strided(out, a, b, plan)
    if status:
        check(status, "bmm")


def _strided(out: Storage, a: Storage, b: Storage, plan: MatmulPlan) -> int:
    dt = plan.dtypes[0]
    size = dt.itemsize
    o, x, y = plan.offsets
    return _bmm(dt.index, out.ptr + o * size, a.ptr + x * size, b.ptr + y * size, _geometry(plan))


def _geometry(plan: MatmulPlan) -> Any:
    """em_bmm's geometry: B, M, N, K, then the strides of a, b and out (memoized on the
    plan; C only reads it, so threads may share it)."""
    geometry = plan.native.get("cpu")
    if geometry is None:
        out, a, b = plan.strides
        sizes = (plan.batch, plan.m, plan.n, plan.k)
        geometry = plan.native["cpu"] = ffi.new("int64_t[13]", (*sizes, *a, *b, *out))
    return geometry


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the cpu device (and pick the float32 GEMM)."""
    _sgemm.configure()
    registry.register("mm", "cpu", mm)
    registry.register("bmm", "cpu", bmm)
