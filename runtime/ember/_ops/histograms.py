"""Counting into bins: bincount, histc and histogram, composites over scatter_add.

Each element's bin is computed elementwise (histc: by arithmetic on the range, as PyTorch;
histogram: by searchsorted on the edges); elements outside the range go to one extra,
discarded bin, so a single scatter_add counts (or sums weights) in O(n).
Sizes that depend on the data (bincount's maximum, histc's range when none is given) are
read on the host, as PyTorch does.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import creation, indexing, reduction, searching, unary
from ember._ops import elementwise as ew
from ember._ops import shape as shape_ops
from ember._tensor import Tensor

__all__ = ["bincount", "histc", "histogram"]

_int64 = _dtype.int64


class HistogramResult(NamedTuple):
    """What histogram returns (torch.return_types.histogram)."""

    hist: Tensor
    bin_edges: Tensor


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
    flat = shape_ops.reshape(input.detach(), -1)
    if isinstance(bins, Tensor):
        edges = bins.detach()
    else:
        edges = _equal_edges(flat, int(bins), range, input)
    count = edges._shape[0] - 1
    if count < 1:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {count} for dimension 0")
    first = edges.narrow(0, 0, 1)
    last = edges.narrow(0, count, 1)
    # Right-closed on the last edge only: its own bin holds max.
    position = ew.sub(searching.searchsorted(edges, flat, right=True), 1)
    position = unary.where(ew.eq(flat, last), count - 1, position)
    inside = ew.logical_and(ew.ge(flat, first), ew.le(flat, last))
    weights = (
        shape_ops.reshape(conv.cast(weight.detach(), input._dtype), -1)
        if weight is not None
        else creation.ones(flat._shape, dtype=input._dtype, device=input._device)
    )
    hist = _binned(unary.clamp(position, 0, count - 1), inside, weights, count, input)
    if density:
        widths = ew.sub(edges.narrow(0, 1, count), edges.narrow(0, 0, count))
        hist = ew.div(hist, ew.mul(reduction.sum(hist), widths))
    return HistogramResult(hist, edges)


def _equal_edges(
    flat: Tensor, bins: int, range: tuple[float, float] | None, input: Tensor
) -> Tensor:
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if range is not None:
        low, high = float(range[0]), float(range[1])
        if low > high:
            raise RuntimeError(
                f"torch.histogram(): min should not exceed max, but got min {low} max {high} "
                "for dimension 0"
            )
    elif flat.numel():
        low, high = float(reduction.amin(flat).item()), float(reduction.amax(flat).item())
    else:
        low, high = 0.0, 0.0
    if low == high:
        low, high = low - 0.5, high + 0.5
    return creation.linspace(low, high, bins + 1, dtype=input._dtype, device=input._device)


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
    }  # fmt: skip
    return names.get(dt.name, dt.name)
