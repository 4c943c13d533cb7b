"""Reduction kernels of the CPU device: sum, prod, amax, amin, any, all, argmax, argmin, cumsum.

The C side (csrc/reduce.c, csrc/scan.c) plans each call from the shape and strides, so
every layout is accepted; a contiguous input reduced over its trailing dims (`a.sum()`,
`a.sum(-1)`) skips even that and passes two sizes.
"""

from __future__ import annotations

import math
from typing import Final

from ember._dispatch import Kernel, KernelRegistry
from ember._tensor import Tensor
from ember_cpu._geometry import MAX_DIMS, Scratch, check_rank
from ember_cpu._lib import check, lib

__all__ = ["register"]

REDUCTION_CODES: Final = {"sum": 0, "prod": 1, "amax": 2, "amin": 3, "any": 4, "all": 5}

# _TRAILING[ndim][k]: the last k dims of an ndim-dim tensor, the contiguous fast path's test
# (up to 64 dims, so that any rank reaches check_rank's error rather than an IndexError).
_TRAILING: Final = [[tuple(range(ndim - k, ndim)) for k in range(ndim + 1)] for ndim in range(65)]


_scratch = Scratch(3 * MAX_DIMS)


def _reduction(name: str) -> Kernel:
    code = REDUCTION_CODES[name]
    reduce_contiguous = lib.em_reduce_contiguous
    reduce_strided = lib.em_reduce

    def kernel(out: Tensor, a: Tensor, dims: tuple[int, ...]) -> None:
        shape = a._shape
        ndim = len(shape)
        k = len(dims)
        a_ptr = a._storage.ptr + a._offset * a._dtype.itemsize
        out_ptr = out._storage.ptr + out._offset * out._dtype.itemsize
        if a._contiguous and out._contiguous and k == ndim:  # a.sum()
            status = reduce_contiguous(
                code, a._dtype.index, out._dtype.index, out_ptr, a_ptr, 1, math.prod(shape)
            )
        elif a._contiguous and out._contiguous and dims == _TRAILING[ndim][k]:
            status = reduce_contiguous(
                code,
                a._dtype.index,
                out._dtype.index,
                out_ptr,
                a_ptr,
                math.prod(shape[: ndim - k]),
                math.prod(shape[ndim - k :]),
            )
        else:
            check_rank(a, name)
            mask = 0
            for d in dims:
                mask |= 1 << d
            buffer = _scratch.buffer
            buffer[0 : 3 * ndim] = shape + a._strides + out._strides
            status = reduce_strided(
                code, a._dtype.index, out._dtype.index, out_ptr, a_ptr, ndim, buffer, mask
            )
        if status:
            check(status, name)

    kernel.__name__ = kernel.__qualname__ = f"cpu_{name}"
    kernel.__doc__ = f"{name}(out, a, dims) on the cpu device."
    return kernel


def _along_dim(name: str, is_max: int) -> Kernel:
    argextreme = lib.em_argextreme

    def kernel(out: Tensor, a: Tensor, dim: int) -> None:
        ndim = check_rank(a, name)
        buffer = _scratch.buffer
        buffer[0 : 3 * ndim] = a._shape + a._strides + out._strides
        status = argextreme(
            is_max,
            a._dtype.index,
            out._storage.ptr + out._offset * 8,
            a._storage.ptr + a._offset * a._dtype.itemsize,
            ndim,
            buffer,
            dim,
        )
        if status:
            check(status, name)

    kernel.__name__ = kernel.__qualname__ = f"cpu_{name}"
    kernel.__doc__ = f"{name}(out_int64, a, dim) on the cpu device."
    return kernel


def cumsum(out: Tensor, a: Tensor, dim: int) -> None:
    """cumsum(out, a, dim): out in the accumulation dtype, a converted while read."""
    ndim = check_rank(a, "cumsum")
    buffer = _scratch.buffer
    buffer[0 : 3 * ndim] = a._shape + a._strides + out._strides
    status = lib.em_cumsum(
        a._dtype.index,
        out._dtype.index,
        out._storage.ptr + out._offset * out._dtype.itemsize,
        a._storage.ptr + a._offset * a._dtype.itemsize,
        ndim,
        buffer,
        dim,
    )
    if status:
        check(status, "cumsum")


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the cpu device."""
    for name in REDUCTION_CODES:
        registry.register(name, "cpu", _reduction(name))
    registry.register("argmax", "cpu", _along_dim("argmax", 1))
    registry.register("argmin", "cpu", _along_dim("argmin", 0))
    registry.register("cumsum", "cpu", cumsum)
