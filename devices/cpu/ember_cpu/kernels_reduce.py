"""Reduction kernels of the CPU device: sum, prod, amax, amin, any, all, argmax, argmin, cumsum.

The runtime's ReductionPlan gives the kept and reduced dims, coalesced; the C side
(csrc/reduce.c, csrc/scan.c) picks its loop (rows or side-by-side columns) and splits the
work across threads. An empty reduction (plan.numel_reduced == 0) writes the identity.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from typing import Final

from ember.plugins import ops
from ember.plugins.sdk import KernelRegistry, ReductionPlan, Storage
from ember_cpu._bf16 import FLOAT32_INDEX, is_bf16, widened
from ember_cpu._geometry import pack_reduction
from ember_cpu._lib import check, lib

__all__ = ["register"]

REDUCTION_CODES: Final = {"sum": 0, "prod": 1, "amax": 2, "amin": 3, "any": 4, "all": 5}


def _reduction(name: str) -> Callable[[Storage, Storage, ReductionPlan], None]:
    code = REDUCTION_CODES[name]
    reduce = lib.em_reduce

    def kernel(out: Storage, a: Storage, plan: ReductionPlan) -> None:
        out_dt, a_dt = plan.dtypes
        out_offset, a_offset = plan.offsets
        if is_bf16(a_dt):  # read as float32; a bfloat16 out is rounded by the C store
            with widened(a) as wide:
                status = reduce(
                    code, FLOAT32_INDEX, out_dt.index,
                    out.ptr + out_offset * out_dt.itemsize, wide + a_offset * 4,
                    len(plan.kept), len(plan.reduced), pack_reduction(plan),
                )  # fmt: skip
            if status:
                check(status, name)
            return
        status = reduce(
            code, a_dt.index, out_dt.index,
            out.ptr + out_offset * out_dt.itemsize, a.ptr + a_offset * a_dt.itemsize,
            len(plan.kept), len(plan.reduced), pack_reduction(plan),
        )  # fmt: skip
        if status:
            check(status, name)

    kernel.__name__ = kernel.__qualname__ = f"cpu_{name}"
    kernel.__doc__ = f"{name}(out, a, plan) on the cpu device."
    return kernel


def _along_dim(name: str, is_max: int) -> Callable[[Storage, Storage, ReductionPlan], None]:
    argextreme = lib.em_argextreme

    def kernel(out: Storage, a: Storage, plan: ReductionPlan) -> None:
        a_dt = plan.dtypes[1]
        out_offset, a_offset = plan.offsets
        if is_bf16(a_dt):
            with widened(a) as wide:
                status = argextreme(
                    is_max, FLOAT32_INDEX, out.ptr + out_offset * 8, wide + a_offset * 4,
                    len(plan.kept), pack_reduction(plan),
                )  # fmt: skip
            if status:
                check(status, name)
            return
        status = argextreme(
            is_max, a_dt.index, out.ptr + out_offset * 8, a.ptr + a_offset * a_dt.itemsize,
            len(plan.kept), pack_reduction(plan),
        )  # fmt: skip
        if status:
            check(status, name)

    kernel.__name__ = kernel.__qualname__ = f"cpu_{name}"
    kernel.__doc__ = f"{name}(out_int64, a, plan) on the cpu device."
    return kernel


def cumsum(out: Storage, a: Storage, plan: ReductionPlan) -> None:
    """cumsum(out, a, plan): out in the accumulation dtype, a converted while read."""
    out_dt, a_dt = plan.dtypes
    out_offset, a_offset = plan.offsets
    if is_bf16(a_dt) or is_bf16(out_dt):
        _cumsum_bf16(out, a, plan)
        return
    status = lib.em_cumsum(
        a_dt.index, out_dt.index,
        out.ptr + out_offset * out_dt.itemsize, a.ptr + a_offset * a_dt.itemsize,
        len(plan.kept), pack_reduction(plan),
    )  # fmt: skip
    if status:
        check(status, "cumsum")


def _cumsum_bf16(out: Storage, a: Storage, plan: ReductionPlan) -> None:
    """cumsum with bfloat16 operands: on float32 copies, the output rounded back."""
    out_dt, a_dt = plan.dtypes
    out_offset, a_offset = plan.offsets
    with (
        widened(out, write_back=True) if is_bf16(out_dt) else nullcontext(out.ptr) as o,
        widened(a) if is_bf16(a_dt) else nullcontext(a.ptr) as x,
    ):
        out_index = FLOAT32_INDEX if is_bf16(out_dt) else out_dt.index
        a_index = FLOAT32_INDEX if is_bf16(a_dt) else a_dt.index
        out_size = 4 if is_bf16(out_dt) else out_dt.itemsize
        a_size = 4 if is_bf16(a_dt) else a_dt.itemsize
        status = lib.em_cumsum(
                a_index, out_index, o + out_offset * out_size, x + a_offset * a_size,
                len(plan.kept), pack_reduction(plan),
            )  # fmt: skip
        check(status, "cumsum")


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the cpu device."""
    for name in ops.REDUCTIONS:
        registry.register(name, "cpu", _reduction(name))
    registry.register(ops.ARGMAX, "cpu", _along_dim(ops.ARGMAX, 1))
    registry.register(ops.ARGMIN, "cpu", _along_dim(ops.ARGMIN, 0))
    registry.register(ops.CUMSUM, "cpu", cumsum)
