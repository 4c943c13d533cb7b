"""Helpers the kernel families share to hand geometry to the C side.

Planned kernels pack their plan's shape and strides into one int64 buffer
(`pack_elementwise`, `pack_reduction`; `pack_dims` for dims a family plans itself); the
tensor-level families keep a per-thread `Scratch` array of shapes and strides, filled
just before a call.
"""

from __future__ import annotations

import struct
import threading
from itertools import chain
from typing import Any, Final

from ember.plugins.sdk import ElementwisePlan, ReductionPlan, Tensor
from ember_cpu._lib import ffi

__all__ = ["MAX_DIMS", "Scratch", "check_rank", "pack_dims", "pack_elementwise", "pack_reduction"]

MAX_DIMS: Final = 16

# _PACK[k](*values) packs k int64 values (the C side rejects more than MAX_DIMS dims).
_PACK: Final = tuple(struct.Struct(f"{k}q").pack for k in range(5 * 64 + 1))


def pack_elementwise(plan: ElementwisePlan) -> bytes:
    """shape, then each operand's strides (elements), outputs first (memoized on the plan)."""
    packed: bytes | None = plan.native.get("cpu")
    if packed is None:
        count = (1 + len(plan.strides)) * plan.ndim
        packed = plan.native["cpu"] = _PACK[count](*plan.shape, *chain(*plan.strides))
    return packed


def pack_reduction(plan: ReductionPlan) -> bytes:
    """The kept dims (sizes, input strides, output strides), then the reduced dims
    (memoized on the plan)."""
    packed: bytes | None = plan.native.get("cpu")
    if packed is None:
        packed = plan.native["cpu"] = _PACK[3 * (len(plan.kept) + len(plan.reduced))](
            *plan.kept, *plan.kept_strides, *plan.kept_out_strides,
            *plan.reduced, *plan.reduced_strides, *plan.reduced_out_strides,
        )  # fmt: skip
    return packed


def pack_dims(*groups: list[tuple[int, int, int]]) -> bytes:
    """Groups of (size, input stride, output stride) dims as the C side's load_dims reads
    them: per group its sizes, then its input strides, then its output strides."""
    values = [value for dims in groups for column in zip(*dims, strict=True) for value in column]
    return _PACK[len(values)](*values)


class Scratch(threading.local):
    """A per-thread int64 array of `size` entries, allocated once per thread.

    Per thread because cffi releases the GIL during a call: another thread could otherwise
    refill the array while a kernel reads it.
    """

    def __init__(self, size: int) -> None:
        self.buffer: Any = ffi.new("int64_t[]", size)


def check_rank(t: Tensor, op: str) -> int:
    """t's number of dims, or a RuntimeError past what the cpu device supports."""
    ndim = t.dim()
    if ndim > MAX_DIMS:
        raise RuntimeError(f"{op}: the cpu device supports at most {MAX_DIMS} dims, got {ndim}")
    return ndim
