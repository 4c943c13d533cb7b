"""Order statistics as composites over sort: median, nanmedian, mode, quantile, nanquantile.

Each sorts along the dim (NaN sorts last), picks positions in the sorted order and reads
the values with gather from the input through the sort's indices, so autograd sends the
gradient to the chosen element (the two neighbours, weighted, for an interpolated quantile).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import creation, indexing, reduction, scan_composites, sorting, unary
from ember._ops import elementwise as ew
from ember._ops import shape as shape_ops
from ember._ops._meta import wrap_dim
from ember._tensor import Tensor

__all__ = ["median", "mode", "nanmedian", "nanquantile", "quantile"]

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


class MedianResult(NamedTuple):
    """What median and nanmedian return along a dim (torch.return_types.median)."""

    values: Tensor
    indices: Tensor


class ModeResult(NamedTuple):
    """What mode returns (torch.return_types.mode)."""

    values: Tensor
    indices: Tensor


def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower median: of all elements (a 0-d tensor), or along `dim` (values, indices).

    A NaN anywhere in the reduced elements makes the median NaN (its index is the first NaN).
    """
    return _median(input, dim, keepdim, "median", skip_nan=False)


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """median that ignores NaN (NaN only where every reduced element is NaN)."""
    return _median(input, dim, keepdim, "nanmedian", skip_nan=True)


def _median(input: Tensor, dim: int | None, keepdim: bool, name: str, skip_nan: bool) -> Any:
    if dim is None:
        if input.numel() == 0:
            return creation.full((), math.nan, dtype=input._dtype, device=input._device)
        flat = shape_ops.reshape(input, -1)
        return _median_along(flat, 0, skip_nan).values.reshape(())
    d = wrap_dim(dim, input.ndim, f"{name}()")
    if input.ndim and input._shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    source = input if input.ndim else shape_ops.reshape(input, 1)
    result = _median_along(source, d if input.ndim else 0, skip_nan)
    if not input.ndim:
        return MedianResult(result.values.reshape(()), result.indices.reshape(()))
    if keepdim:
        return result
    return MedianResult(shape_ops.squeeze(result.values, d), shape_ops.squeeze(result.indices, d))


def _median_along(t: Tensor, d: int, skip_nan: bool) -> MedianResult:
    """Median along `d` with the dim kept (size 1)."""
    n = t._shape[d]
    order = sorting.argsort(t, d)
    nans = _nan_count(t, d)
    if skip_nan:
        valid = ew.sub(n, nans)
        # An all-NaN row has PyTorch's index: the median position of the whole row.
        position = unary.where(ew.eq(valid, 0), (n - 1) // 2, ew.floor_divide(ew.sub(valid, 1), 2))
    else:
        position = unary.where(ew.gt(nans, 0), ew.sub(n, nans), (n - 1) // 2)
    indices = indexing.gather(order, d, position)
    return MedianResult(indexing.gather(t, d, indices), indices)


def _nan_count(t: Tensor, d: int) -> Tensor:
    """int64 count of NaN along `d`, the dim kept."""
    if not t._dtype.is_floating_point:
        shape = tuple(1 if j == d else s for j, s in enumerate(t._shape))
        return creation.zeros(shape, dtype=_dtype.int64, device=t._device)
    return reduction.sum(ew.ne(t, t), d, keepdim=True)


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> ModeResult:
    """The most frequent value along `dim` (the smallest of equally frequent ones) and the
    index of its last occurrence."""
    d = wrap_dim(dim, input.ndim, "mode()")
    source = input if input.ndim else shape_ops.reshape(input, 1)
    axis = d if input.ndim else 0
    n = source._shape[axis]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    ordered = sorting.sort(source.detach(), axis)
    run_end = _run_ends(ordered.values, axis, n)
    # Run lengths: each run's end minus the end of the run before it.
    previous_end = scan_composites.cummax(_shift_right(run_end, axis, -1), axis).values
    length = unary.where(ew.ge(run_end, 0), ew.sub(run_end, previous_end), 0)
    best = reduction.argmax(length, axis, keepdim=True)
    indices = indexing.gather(ordered.indices, axis, best)
    values = indexing.gather(source, axis, indices)
    if not input.ndim:
        return ModeResult(values.reshape(()), indices.reshape(()))
    if keepdim:
        return ModeResult(values, indices)
    return ModeResult(shape_ops.squeeze(values, d), shape_ops.squeeze(indices, d))


def _run_ends(ordered: Tensor, d: int, n: int) -> Tensor:
    """Position i where a run of equal sorted values ends there, else -1 (int64)."""
    positions = _positions(ordered, d, n)
    if n == 1:
        return positions
    head = shape_ops.narrow(ordered, d, 0, n - 1)
    tail = shape_ops.narrow(ordered, d, 1, n - 1)
    changes = ew.ne(head, tail)
    if ordered._dtype.is_floating_point:  # NaN equals NaN for counting, as in PyTorch
        changes = ew.logical_and(
            changes, unary.logical_not(ew.logical_and(ew.ne(head, head), ew.ne(tail, tail)))
        )
    last = creation.ones(
        (*ordered._shape[:d], 1, *ordered._shape[d + 1 :]),
        dtype=_dtype.bool,
        device=ordered._device,
    )
    ends = shape_ops.cat([changes, last], d)
    return unary.where(ends, positions, -1)


def _positions(t: Tensor, d: int, n: int) -> Tensor:
    shape = [1] * t.ndim
    shape[d] = n
    column = creation.arange(n, dtype=_dtype.int64, device=t._device).reshape(shape)
    return shape_ops.expand(column, *t._shape).contiguous()


def _shift_right(t: Tensor, d: int, fill: int) -> Tensor:
    n = t._shape[d]
    pad = creation.full(
        (*t._shape[:d], 1, *t._shape[d + 1 :]), fill, dtype=t._dtype, device=t._device
    )
    return shape_ops.cat([pad, shape_ops.narrow(t, d, 0, n - 1)], d)


# -- quantiles ---------------------------------------------------------------------------


def quantile(
    input: Tensor,
    q: Any,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
) -> Tensor:
    """The `q`-th quantiles (q a float or a 1-d tensor in [0, 1]); NaN where a NaN is reduced.

    With a tensor `q` the quantiles are the result's first dim.
    """
    return _quantile(input, q, dim, keepdim, interpolation, "quantile", skip_nan=False)


def nanquantile(
    input: Tensor,
    q: Any,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
) -> Tensor:
    """quantile that ignores NaN (NaN only where every reduced element is NaN)."""
    return _quantile(input, q, dim, keepdim, interpolation, "nanquantile", skip_nan=True)


def _quantile(
    input: Tensor,
    q: Any,
    dim: int | None,
    keepdim: bool,
    interpolation: str,
    name: str,
    skip_nan: bool,
) -> Tensor:
    scalar_q, qs = _check_quantile(input, q, interpolation, name)
    if dim is None:
        source, d = shape_ops.reshape(input, -1), 0
    else:
        d = wrap_dim(dim, input.ndim, f"{name}()")
        source = input if input.ndim else shape_ops.reshape(input, 1)
        d = d if input.ndim else 0
    n = source._shape[d]
    if n == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    moved = shape_ops.movedim(source, d, -1)
    ordered = sorting.sort(moved, -1).values  # gather through the sort: differentiable
    nans = _nan_count(moved, moved.ndim - 1)  # (..., 1)
    count = ew.sub(n, nans) if skip_nan else creation.full_like(nans, n)
    last = conv.cast(ew.sub(count, 1), input._dtype).clamp(0)  # (..., 1)
    rank = ew.mul(shape_ops.reshape(conv.cast(qs, input._dtype), 1, -1), last)  # (..., Q)
    rank = rank.reshape(*moved._shape[:-1], -1)
    low, high = unary.floor(rank), unary.ceil(rank)
    if interpolation == "nearest":
        low = high = unary.round(rank)
    elif interpolation == "lower":
        high = low
    elif interpolation == "higher":
        low = high
    below = indexing.gather(ordered, -1, conv.cast(low, _dtype.int64))
    above = indexing.gather(ordered, -1, conv.cast(high, _dtype.int64))
    if interpolation == "linear":
        value = ew.add(below, ew.mul(ew.sub(above, below), ew.sub(rank, low)))
    elif interpolation == "midpoint":
        value = ew.mul(ew.add(below, above), 0.5)
    else:
        value = below
    value = unary.where(ew.gt(nans, 0) if not skip_nan else ew.eq(count, 0), math.nan, value)
    value = shape_ops.movedim(value, -1, 0)  # (Q, ...)
    if keepdim:
        if dim is None:
            value = value.reshape(-1, *([1] * input.ndim))
        elif input.ndim:
            value = shape_ops.unsqueeze(value, d + 1)
    if scalar_q:
        value = shape_ops.squeeze(value, 0)
    return value.contiguous()


def _check_quantile(input: Tensor, q: Any, interpolation: str, name: str) -> tuple[bool, Tensor]:
    """(whether q is a scalar, q as a 1-d float64 tensor), after PyTorch's checks."""
    if input._dtype not in (_dtype.float32, _dtype.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or "
            f"nearest, but got {interpolation}"
        )
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q._dtype is not input._dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        values = [float(v) for v in q.reshape(-1).tolist()]
        scalar, qs = q.ndim == 0, q.reshape(-1)
    else:
        if not 0.0 <= float(q) <= 1.0:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {float(q)}")
        values = [float(q)]
        scalar = True
        qs = creation.tensor(values, dtype=input._dtype, device=input._device)
    for v in values:
        if not 0.0 <= v <= 1.0:
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    return scalar, qs
