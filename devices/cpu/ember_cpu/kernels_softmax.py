"""Fused softmax and log-softmax kernels of the CPU device (see csrc/softmax.c).

Registered under the names of the composite ops of ember.nn.functional._activation, they
replace its six-op composition; the runtime still records the derivative around them. A
contiguous input reduced along its last dim (the common case) passes two sizes; any other
layout passes the other dims, sorted by output stride and merged, then the softmax dim.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import ember
from ember.plugins.sdk import KernelRegistry, Tensor, merge_dims
from ember_cpu._geometry import check_rank, pack_dims
from ember_cpu._lib import check, lib

__all__ = ["register"]

Shape = tuple[int, ...]


@functools.lru_cache(maxsize=1024)
def _geometry(shape: Shape, a_strides: Shape, out_strides: Shape, dim: int) -> tuple[int, bytes]:
    """The other dims (their count, packed with the softmax dim after them): sorted by
    output stride, outermost first, so that the C side finds a dim contiguous in both."""
    other = [(n, a_strides[d], out_strides[d]) for d, n in enumerate(shape) if d != dim and n != 1]
    other.sort(key=lambda d: (abs(d[2]), abs(d[1])), reverse=True)
    other = merge_dims(other)
    along = (shape[dim], a_strides[dim], out_strides[dim]) if shape else (1, 1, 1)
    return len(other), pack_dims(other, [along])


def _softmax(name: str, log_out: int) -> Callable[[Tensor, Tensor, int], None]:
    lastdim = lib.em_softmax_lastdim
    strided = lib.em_softmax

    def kernel(out: Tensor, a: Tensor, dim: int) -> None:
        if a.dtype is ember.bfloat16:  # in float32, rounded once into out
            with ember.no_grad():
                wide = a.float()
                result = ember.empty(wide.shape, dtype=ember.float32)
                kernel(result, wide, dim)
                out.copy_(result)
            return
        shape = a.shape
        ndim = len(shape)
        a_ptr = a.data_ptr()
        out_ptr = out.data_ptr()
        if (
            a.is_contiguous() and out.is_contiguous() and dim >= ndim - 1
        ):  # dim last, or a 0-d input
            n = shape[-1] if ndim else 1
            status = lastdim(log_out, a.dtype.index, out_ptr, a_ptr, math.prod(shape[:-1]), n)
        else:
            check_rank(a, name)
            nk, geometry = _geometry(shape, a.stride(), out.stride(), dim)
            status = strided(log_out, a.dtype.index, out_ptr, a_ptr, nk, geometry)
        if status:
            check(status, name)

    kernel.__name__ = kernel.__qualname__ = f"cpu_{name}"
    kernel.__doc__ = f"{name}(out, a, dim) on the cpu device: a floating, out of a's shape."
    return kernel


def register(registry: KernelRegistry) -> None:
    """Register the fused softmax and log_softmax kernels for the cpu device."""
    registry.register("softmax", "cpu", _softmax("softmax", 0))
    registry.register("log_softmax", "cpu", _softmax("log_softmax", 1))
