"""Sorting as composites: sort, argsort, msort, topk and kthvalue.

A bitonic sorting network along the last dim, written in ember ops so it runs on every
device. Each of its O(log² n) stages pairs position i with i ^ j (index_select with a
precomputed permutation) and keeps, per position, the smaller or the larger of the pair
(where). Elements are compared as (class, value, original index) triples: the class puts
NaN after every number (before them when descending, as PyTorch does) and the padding that
rounds the length up to a power of two after everything, so real ±inf sort correctly; the
index breaks ties, so the result is PyTorch's stable sort. Only the indices come out of
the network: the values are gather(input, dim, indices), which gives autograd for free.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import creation, indexing, unary
from ember._ops import elementwise as ew
from ember._ops import shape as shape_ops
from ember._ops._meta import wrap_dim
from ember._tensor import Tensor

__all__ = ["argsort", "kthvalue", "msort", "sort", "topk"]

# Class of an element within the comparison: numbers, NaN, then the padding.
_PADDING = 2


class SortResult(NamedTuple):
    """What sort returns (PyTorch's torch.return_types.sort)."""

    values: Tensor
    indices: Tensor


class TopkResult(NamedTuple):
    """What topk returns (PyTorch's torch.return_types.topk)."""

    values: Tensor
    indices: Tensor


class KthvalueResult(NamedTuple):
    """What kthvalue returns (PyTorch's torch.return_types.kthvalue)."""

    values: Tensor
    indices: Tensor


def sort(
    input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False
) -> SortResult:
    """Values sorted along `dim` and their original indices (int64); NaN counts as largest.

    The sort is always stable (ties keep index order), which `stable=False` permits.
    """
    d = wrap_dim(dim, input.ndim, "sort()")
    indices = _sorted_indices(input, d, descending)
    return SortResult(indexing.gather(input, d, indices), indices)


def argsort(
    input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False
) -> Tensor:
    """The indices that sort `input` along `dim` (sort(...).indices)."""
    return _sorted_indices(input, wrap_dim(dim, input.ndim, "argsort()"), descending)


def msort(input: Tensor) -> Tensor:
    """`input` sorted along its first dim (sort(input, dim=0).values)."""
    return sort(input, 0).values


def topk(
    input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
) -> TopkResult:
    """The `k` largest (or smallest) values along `dim` and their indices, in sorted order.

    The result is sorted even when `sorted=False`, which PyTorch permits.
    """
    d = wrap_dim(dim, input.ndim, "topk()")
    length = input._shape[d] if input.ndim > 0 else 1
    if not 0 <= k <= length:
        raise RuntimeError("selected index k out of range")
    indices = _sorted_indices(input, d, largest)
    if input.ndim > 0:
        indices = shape_ops.narrow(indices, d, 0, k).contiguous()
    return TopkResult(indexing.gather(input, d, indices), indices)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> KthvalueResult:
    """The `k`-th smallest value along `dim` (1-based) and its index."""
    d = wrap_dim(dim, input.ndim, "kthvalue()")
    length = input._shape[d] if input.ndim > 0 else 1
    if not 1 <= k <= length:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    indices = _sorted_indices(input, d, False)
    if input.ndim > 0:
        indices = shape_ops.narrow(indices, d, k - 1, 1).contiguous()
    values = indexing.gather(input, d, indices)
    if input.ndim > 0 and not keepdim:
        return KthvalueResult(shape_ops.squeeze(values, d), shape_ops.squeeze(indices, d))
    return KthvalueResult(values, indices)


# -- the network -----------------------------------------------------------------------------


def _sorted_indices(input: Tensor, d: int, descending: bool) -> Tensor:
    """int64 indices, shaped like `input`, that sort it along the (wrapped) dim `d`."""
    if input.ndim == 0:
        return creation.zeros((), dtype=_dtype.int64, device=input._device)
    moved = shape_ops.movedim(input.detach(), d, -1)
    n = moved._shape[-1]
    positions = creation.arange(n, dtype=_dtype.int64, device=input._device)
    if n <= 1 or moved.numel() == 0:
        indices = shape_ops.expand(positions, *moved._shape).contiguous()
    else:
        indices = _bitonic(moved, positions, descending)
    return shape_ops.movedim(indices, -1, d).contiguous()


def _bitonic(moved: Tensor, positions: Tensor, descending: bool) -> Tensor:
    n = moved._shape[-1]
    size = 1 << (n - 1).bit_length()
    key, kind = _keys(moved, descending)
    index = shape_ops.expand(positions, *moved._shape).contiguous()
    if size > n:  # padding: class _PADDING sorts after everything; its indices are >= n
        pad_shape = (*moved._shape[:-1], size - n)
        device = moved._device
        key = shape_ops.cat([key, creation.zeros(pad_shape, dtype=key._dtype, device=device)], -1)
        pad_kind = creation.full(pad_shape, _PADDING, dtype=_dtype.int64, device=device)
        kind = shape_ops.cat([kind, pad_kind], -1)
        pad_index = creation.arange(n, size, dtype=_dtype.int64, device=device)
        index = shape_ops.cat([index, shape_ops.expand(pad_index, *pad_shape).contiguous()], -1)
    value_before = ew.gt if descending else ew.lt
    for block, stride in _stages(size):
        partner, keeps_smaller = _stage_tables(size, block, stride, moved._device)
        other_key = indexing.index_select(key, -1, partner)
        other_kind = indexing.index_select(kind, -1, partner)
        other_index = indexing.index_select(index, -1, partner)
        same_kind = ew.eq(kind, other_kind)
        tie_broken = ew.logical_and(ew.eq(key, other_key), ew.lt(index, other_index))
        in_value_order = ew.logical_or(value_before(key, other_key), tie_broken)
        before = ew.logical_or(ew.lt(kind, other_kind), ew.logical_and(same_kind, in_value_order))
        keep = ew.eq(before, keeps_smaller)
        key = unary.where(keep, key, other_key)
        kind = unary.where(keep, kind, other_kind)
        index = unary.where(keep, index, other_index)
    return shape_ops.narrow(index, -1, 0, n)


def _keys(moved: Tensor, descending: bool) -> tuple[Tensor, Tensor]:
    """The value to compare and the class (0 first): NaN is largest, so last ascending."""
    if moved._dtype == _dtype.bool:
        moved = conv.cast(moved, _dtype.int64)
    if not moved._dtype.is_floating_point:
        return moved, creation.zeros(moved._shape, dtype=_dtype.int64, device=moved._device)
    nan = ew.ne(moved, moved)
    key = unary.where(nan, 0.0, moved)  # NaN compares equal among NaNs: ties by index
    nan_kind = conv.cast(nan, _dtype.int64)
    return key, ew.sub(1, nan_kind) if descending else nan_kind


def _stages(size: int) -> list[tuple[int, int]]:
    """(block, stride) of each stage of the bitonic network on `size` positions."""
    stages = []
    block = 2
    while block <= size:
        stride = block // 2
        while stride >= 1:
            stages.append((block, stride))
            stride //= 2
        block *= 2
    return stages


def _stage_tables(size: int, block: int, stride: int, device: Any) -> tuple[Tensor, Tensor]:
    """Each position's partner (i ^ stride) and whether it keeps the smaller of the pair."""
    partner = [i ^ stride for i in range(size)]
    # The lower position of a pair keeps the smaller in an ascending block (i & block == 0).
    keeps_smaller = [((i & stride) == 0) == ((i & block) == 0) for i in range(size)]
    return (
        creation.tensor(partner, dtype=_dtype.int64, device=device),
        creation.tensor(keeps_smaller, dtype=_dtype.bool, device=device),
    )
