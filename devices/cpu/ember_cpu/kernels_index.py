"""Indexing kernels of the CPU device (see csrc/index.c).

index_select, gather, scatter_, scatter_add_, take, index_put_ and nonzero, for every
dtype and any strides. The kernels range-check every index themselves and raise
IndexError with PyTorch's wording; the in-place ones check before writing anything.
With duplicate indices, scatter_ and index_put_ (accumulate=False) keep the value written
last in the index's row-major order; scatter_add_ and accumulating index_put_ add all.
"""

from __future__ import annotations

import ember
from ember.plugins.sdk import KernelRegistry, Tensor
from ember_cpu._geometry import MAX_DIMS, Scratch, check_rank
from ember_cpu._lib import check, lib

__all__ = ["gather", "index_put_", "index_select", "nonzero", "register", "scatter_", "take"]

_scratch = Scratch(5 * MAX_DIMS)


def index_select(out: Tensor, a: Tensor, dim: int, index: Tensor) -> None:
    """index_select(out, a, dim, index): out = a with dim re-indexed by a 1-d int64 index."""
    ndim = check_rank(out, "index_select")
    buffer = _scratch.buffer
    buffer[0 : 3 * ndim] = out.shape + out.stride() + a.stride()
    status = lib.em_index_select(
        out.data_ptr(),
        a.data_ptr(),
        index.data_ptr(),
        a.dtype.itemsize,
        ndim,
        dim,
        a.shape[dim] if ndim else 1,
        index.stride()[0] if index.shape else 0,
        buffer,
    )
    if status:
        check(status, "index_select")


def gather(out: Tensor, a: Tensor, dim: int, index: Tensor) -> None:
    """gather(out, a, dim, index): out[p] = a[p with dim -> index[p]]; index has out's shape."""
    ndim = check_rank(out, "gather")
    buffer = _scratch.buffer
    buffer[0 : 4 * ndim] = index.shape + out.stride() + index.stride() + a.stride()
    status = lib.em_gather(
        out.data_ptr(),
        a.data_ptr(),
        index.data_ptr(),
        a.dtype.itemsize,
        ndim,
        dim,
        a.shape[dim] if ndim else 1,
        buffer,
    )
    if status:
        check(status, "gather")


def _scatter(
    op: str, accumulate: int, target: Tensor, dim: int, index: Tensor, src: Tensor | complex
) -> None:
    if accumulate and target.dtype is ember.bfloat16:  # added in float32, rounded once
        with ember.no_grad():
            wide = target.float()
            source = src.float() if isinstance(src, Tensor) else src
            _scatter(op, accumulate, wide, dim, index, source)
            target.copy_(wide)
        return
    ndim = check_rank(index, op)
    if isinstance(src, Tensor):
        src_strides = src.stride()
    else:  # a Python scalar: a 0-d tensor read with zero strides
        value = src
        src = ember.full((), value, dtype=target.dtype, device=target.device)
        src_strides = (0,) * ndim
    buffer = _scratch.buffer
    buffer[0 : 4 * ndim] = index.shape + target.stride() + index.stride() + src_strides
    status = lib.em_scatter(
        target.data_ptr(),
        src.data_ptr(),
        index.data_ptr(),
        target.dtype.index,
        ndim,
        dim,
        target.shape[dim] if ndim else 1,
        buffer,
        accumulate,
    )
    if status:
        check(status, op)


def scatter_(target: Tensor, dim: int, index: Tensor, src: Tensor | complex) -> None:
    """scatter_(target, dim, index, src): target[p with dim -> index[p]] = src[p]."""
    _scatter("scatter_", 0, target, dim, index, src)


def scatter_add_(target: Tensor, dim: int, index: Tensor, src: Tensor | complex) -> None:
    """scatter_add_(target, dim, index, src): target[p with dim -> index[p]] += src[p]."""
    _scatter("scatter_add_", 1, target, dim, index, src)


def take(out: Tensor, a: Tensor, index: Tensor) -> None:
    """take(out, a, index): out[p] = a.flatten()[index[p]] (row-major order of a's shape)."""
    ndim = check_rank(index, "take")
    a_ndim = check_rank(a, "take")
    buffer = _scratch.buffer
    buffer[0 : 3 * ndim + 2 * a_ndim] = (
        index.shape + out.stride() + index.stride() + a.shape + a.stride()
    )
    status = lib.em_take(
        out.data_ptr(), a.data_ptr(), index.data_ptr(), a.dtype.itemsize, ndim, a_ndim, buffer
    )
    if status:
        check(status, "take")


def index_put_(target: Tensor, index: Tensor, values: Tensor, accumulate: bool) -> None:
    """index_put_(target, index, values, accumulate): target.flatten()[index[i]] (+)= values[i]."""
    if accumulate and target.dtype is ember.bfloat16:  # added in float32, rounded once
        with ember.no_grad():
            wide = target.float()
            index_put_(wide, index, values.float(), accumulate)
            target.copy_(wide)
        return
    ndim = check_rank(target, "index_put_")
    buffer = _scratch.buffer
    buffer[0 : 2 * ndim] = target.shape + target.stride()
    status = lib.em_index_put(
        target.data_ptr(),
        index.data_ptr(),
        values.data_ptr(),
        target.dtype.index,
        index.shape[0] if index.shape else 1,
        1 if accumulate else 0,
        ndim,
        buffer,
    )
    if status:
        check(status, "index_put_")


def nonzero(a: Tensor) -> Tensor:
    """nonzero(a): a new int64 tensor (n, a.ndim) of the non-zero positions, row-major."""
    if a.dtype is ember.bfloat16:  # widening is exact: the same zeros
        with ember.no_grad():
            return nonzero(a.float())
    ndim = check_rank(a, "nonzero")
    buffer = _scratch.buffer
    buffer[0 : 2 * ndim] = a.shape + a.stride()
    dt = a.dtype.index
    a_ptr = a.data_ptr()
    count = lib.em_count_nonzero(dt, a_ptr, ndim, buffer)
    out = ember.empty((count, ndim), dtype=ember.int64, device=a.device)
    lib.em_nonzero(dt, out.data_ptr(), a_ptr, ndim, buffer, count)
    return out


def register(registry: KernelRegistry) -> None:
    """Register this family's kernels for the cpu device."""
    registry.register("index_select", "cpu", index_select)
    registry.register("gather", "cpu", gather)
    registry.register("scatter_", "cpu", scatter_)
    registry.register("scatter_add_", "cpu", scatter_add_)
    registry.register("take", "cpu", take)
    registry.register("index_put_", "cpu", index_put_)
    registry.register("nonzero", "cpu", nonzero)
