"""Counting into bins: bincount, histc, histogram and histogramdd, composites over scatter_add.

Each element's bin is computed elementwise (histc: by arithmetic on the range, as PyTorch;
histogram: by searchsorted on the edges); elements outside the range go to one extra,
discarded bin, so a single scatter_add counts (or sums weights) in O(n).
Sizes that depend on the data (bincount's maximum, histc's range when none is given) are
read on the host, as PyTorch does.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import creation, indexing, reduction, searching, unary
from ember._ops import elementwise as ew
from ember._ops import shape as shape_ops
from ember._tensor import Tensor

__all__ = ["bincount", "histc", "histogram", "histogramdd"]

_int64 = _dtype.int64


class HistogramResult(NamedTuple):
    """What histogram returns (torch.return_types.histogram)."""

    hist: Tensor
    bin_edges: Tensor


class HistogramddResult(NamedTuple):
    """What histogramdd returns (torch.return_types.histogramdd): one edges tensor a dim."""

    hist: Tensor
    bin_edges: tuple[Tensor, ...]


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """Occurrences of each value 0..max(input) of a 1-d non-negative integer tensor (the
    sums of `weights` there, when given); at least `minlength` bins."""
    if input._dtype.is_floating_point or input._dtype is _dtype.bool:
        raise NotImplementedError(
            f"\"bincount_cpu\" not implemented for '{_torch_name(input._dtype)}'"
        )
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.ndim != 1 or (input.numel() and int(reduction.amin(input).item()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights._shape[0] != input._shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    size = max(minlength, int(reduction.amax(input).item()) + 1 if input.numel() else 0)
    index = conv.cast(input, _int64)
    if weights is None:
        counts = creation.zeros((size,), dtype=_int64, device=input._device)
        ones = creation.ones((input._shape[0],), dtype=_int64, device=input._device)
        return indexing.scatter_add(counts, 0, index, ones) if input.numel() else counts
    dt = weights._dtype if weights._dtype in (_dtype.float32, _dtype.float64) else _dtype.float64
    total = creation.zeros((size,), dtype=dt, device=input._device)
    if not input.numel():
        return total
    return indexing.scatter_add(total, 0, index, conv.cast(weights, dt))


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """Counts of `input` in `bins` equal bins over [min, max] (the data's range when both are
    0); elements outside are ignored, `max` itself counts in the last bin."""
    _check_floating(input, "histogram_cpu")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    low, high = float(min), float(max)
    if low > high:
        raise RuntimeError("torch.histc: max must be larger than min")
    if low == high and input.numel():
        low, high = float(reduction.amin(input).item()), float(reduction.amax(input).item())
    if low == high:
        low, high = low - 1, high + 1
    flat = shape_ops.reshape(input.detach(), -1)
    scaled = ew.mul(ew.sub(flat, low), bins / (high - low))
    position = unary.clamp(conv.cast(unary.floor(scaled), _int64), max=bins - 1)
    inside = ew.logical_and(ew.ge(flat, low), ew.le(flat, high))
    ones = creation.ones(flat._shape, dtype=input._dtype, device=input._device)
    return _binned(position, inside, ones, bins, input)


def histogram(
    input: Tensor,
    bins: Any = 100,
    *,
    range: tuple[float, float] | None = None,
    weight: Tensor | None = None,
    density: bool = False,
) -> HistogramResult:
    """Counts (or summed `weight`) of `input` in bins: `bins` equal bins over `range` (the
    data's range by default), or between the ascending edges of a 1-d tensor `bins`."""
    _check_floating(input, "histogramdd")
    points = shape_ops.reshape(input, -1, 1)
    flat_range = None if range is None else [range[0], range[1]]
    result = _histogramdd(points, [bins], flat_range, weight, density, "torch.histogram()")
    return HistogramResult(result.hist, result.bin_edges[0])


def histogramdd(
    input: Tensor,
    bins: Any = 10,
    *,
    range: Sequence[float] | None = None,
    weight: Tensor | None = None,
    density: bool = False,
) -> HistogramddResult:
    """The D-dimensional histogram of the points in the last dim of `input` (..., D): per
    dim `bins` equal bins (an int for all dims, or one each) over `range` (min0, max0,
    min1, max1, ...; the data's by default), or the ascending edges of a 1-d tensor."""
    _check_floating(input, "histogramdd")
    dims = input._shape[-1] if input.ndim else 1
    points = shape_ops.reshape(input, -1, dims)
    if isinstance(bins, int):
        per_dim: list[Any] = [bins] * dims
    elif isinstance(bins, Tensor):
        per_dim = [bins]
    else:
        per_dim = list(bins)
    if len(per_dim) != dims:
        raise RuntimeError(
            "histogramdd: The size of bins must be equal to the innermost dimension of the input."
        )
    if range is not None and len(range) != 2 * dims:
        raise RuntimeError(
            "histogramdd: for a 2D input tensor with shape [N, M], range should have 2 * M elements"
        )
    return _histogramdd(points, per_dim, range, weight, density, "torch.histogramdd()")


def _histogramdd(
    points: Tensor,
    bins: list[Any],
    range: Sequence[float] | None,
    weight: Tensor | None,
    density: bool,
    name: str,
) -> HistogramddResult:
    """The histogram of the (N, D) `points`: each point's bin per dim by searchsorted on
    that dim's edges, the bins of all dims combined row-major into one scatter_add."""
    values = points.detach()
    n, dims = values._shape
    all_edges: list[Tensor] = []
    target: Tensor | None = None
    inside: Tensor | None = None
    for k in builtins.range(dims):
        column = values.select(1, k)
        limits = None if range is None else (range[2 * k], range[2 * k + 1])
        edges = (
            bins[k].detach()
            if isinstance(bins[k], Tensor)
            else _equal_edges(column, int(bins[k]), limits, points, name, k)
        )
        count = edges._shape[0] - 1
        if count < 1:
            raise RuntimeError(f"{name}: bins must be > 0, but got {count} for dimension {k}")
        first, last = edges.narrow(0, 0, 1), edges.narrow(0, count, 1)
        # Right-closed on the last edge only: its own bin holds max.
        position = ew.sub(searching.searchsorted(edges, column, right=True), 1)
        position = unary.clamp(unary.where(ew.eq(column, last), count - 1, position), 0, count - 1)
        within = ew.logical_and(ew.ge(column, first), ew.le(column, last))
        target = position if target is None else ew.add(ew.mul(target, count), position)
        inside = within if inside is None else ew.logical_and(inside, within)
        all_edges.append(edges)
    counts = [e._shape[0] - 1 for e in all_edges]
    weights = (
        shape_ops.reshape(conv.cast(weight.detach(), points._dtype), -1)
        if weight is not None
        else creation.ones((n,), dtype=points._dtype, device=points._device)
    )
    assert target is not None and inside is not None
    hist = _binned(target, inside, weights, math.prod(counts), points)
    hist = shape_ops.reshape(hist, *counts)
    if density:
        volume: Tensor | None = None
        for k, edges in enumerate(all_edges):
            shape = [1] * dims
            shape[k] = counts[k]
            width = shape_ops.reshape(
                ew.sub(edges.narrow(0, 1, counts[k]), edges.narrow(0, 0, counts[k])), *shape
            )
            volume = width if volume is None else ew.mul(volume, width)
        hist = ew.div(hist, ew.mul(reduction.sum(hist), volume))
    return HistogramddResult(hist, tuple(all_edges))


def _equal_edges(
    column: Tensor,
    bins: int,
    limits: tuple[float, float] | None,
    points: Tensor,
    name: str,
    k: int,
) -> Tensor:
    if bins <= 0:
        raise RuntimeError(f"{name}: bins must be > 0, but got {bins} for dimension {k}")
    if limits is not None:
        low, high = float(limits[0]), float(limits[1])
        if low > high:
            raise RuntimeError(
                f"{name}: min should not exceed max, but got min {low} max {high} for dimension {k}"
            )
    elif column.numel():
        low, high = float(reduction.amin(column).item()), float(reduction.amax(column).item())
    else:
        low, high = 0.0, 0.0
    if low == high:
        low, high = low - 0.5, high + 0.5
    return creation.linspace(low, high, bins + 1, dtype=points._dtype, device=points._device)


def _binned(position: Tensor, inside: Tensor, weights: Tensor, bins: int, input: Tensor) -> Tensor:
    """Sums of `weights` by `position`, elements not `inside` dropped (an extra last bin)."""
    totals = creation.zeros((bins + 1,), dtype=weights._dtype, device=input._device)
    if position.numel():
        target = unary.where(inside, position, bins)
        totals = indexing.scatter_add(totals, 0, target, weights)
    return totals.narrow(0, 0, bins).contiguous()


def _check_floating(input: Tensor, kernel: str) -> None:
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_torch_name(input._dtype)}'")


def _torch_name(dt: _dtype.dtype) -> str:
    """PyTorch's scalar-type name in its kernel errors ('Long', 'Float', ...)."""
    names = {
        "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
        "bool": "Bool", "float16": "Half", "float32": "Float", "float64": "Double",
        "bfloat16": "BFloat16",
    }  # fmt: skip
    return names.get(dt.name, dt.name)
