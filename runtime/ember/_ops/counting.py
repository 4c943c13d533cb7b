"""Counting, NaN-skipping and paired reductions, and selections by mask or membership:
count_nonzero, argwhere, nonzero_static, nansum, nanmean, aminmax, std_mean, var_mean,
isin and masked_select, as composites over the reductions and indexing."""

from __future__ import annotations

from typing import Any, NamedTuple

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import creation, indexing, reduction, searching, sorting, statistics, unary
from ember._ops import elementwise as ew
from ember._ops import shape as shape_ops
from ember._ops._meta import broadcast_shapes
from ember._tensor import Tensor

__all__ = [
    "aminmax", "argwhere", "count_nonzero", "isin", "masked_select", "nanmean", "nansum",
    "nonzero_static", "std_mean", "var_mean",
]  # fmt: skip

DimArg = int | tuple[int, ...] | list[int] | None


class AminmaxResult(NamedTuple):
    """What aminmax returns (torch.return_types.aminmax)."""

    min: Tensor
    max: Tensor


def count_nonzero(input: Tensor, dim: DimArg = None) -> Tensor:
    """The number of non-zero elements (int64), over `dim` or all of them."""
    return reduction.sum(ew.ne(input.detach(), 0), dim)


def argwhere(input: Tensor) -> Tensor:
    """The indices of the non-zero elements, one row each: int64 (n, input.ndim)."""
    return indexing.nonzero(input)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """nonzero with exactly `size` rows: cut to the first `size`, or padded with `fill_value`."""
    if size < 0:
        raise RuntimeError(
            f"nonzero_static: 'size' must be an non-negative integer, but got {size}"
        )
    found = indexing.nonzero(input)
    rows = found._shape[0]
    if rows >= size:
        return found.narrow(0, 0, size).contiguous()
    pad = creation.full(
        (size - rows, found._shape[1]), fill_value, dtype=_dtype.int64, device=input._device
    )
    return shape_ops.cat([found, pad], 0)


def nansum(
    input: Tensor, dim: DimArg = None, keepdim: bool = False, *, dtype: _dtype.dtype | None = None
) -> Tensor:
    """sum with NaN counted as zero."""
    return reduction.sum(_nan_as_zero(input), dim, keepdim, dtype=dtype)


def nanmean(
    input: Tensor, dim: DimArg = None, keepdim: bool = False, *, dtype: _dtype.dtype | None = None
) -> Tensor:
    """mean of the non-NaN elements (NaN where there are none)."""
    if not input._dtype.is_floating_point:
        raise RuntimeError(
            "nanmean(): expected input to have floating point dtype but got "
            f"{input._dtype.name.capitalize()}"
        )
    present = reduction.sum(ew.eq(input.detach(), input.detach()), dim, keepdim)
    total = nansum(input, dim, keepdim, dtype=dtype)
    return ew.div(total, conv.cast(present, total._dtype))


def _nan_as_zero(input: Tensor) -> Tensor:
    if not input._dtype.is_floating_point:
        return input
    return unary.where(ew.ne(input, input), 0.0, input)


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> AminmaxResult:
    """amin and amax together, of all elements or along `dim`."""
    if input.numel() == 0 and dim is None:
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
            "identity."
        )
    reduced: Any = () if dim is None else dim
    return AminmaxResult(
        reduction.amin(input, reduced, keepdim), reduction.amax(input, reduced, keepdim)
    )


def var_mean(
    input: Tensor,
    dim: DimArg = None,
    *,
    correction: float | None = 1,
    keepdim: bool = False,
    unbiased: bool | None = None,
) -> tuple[Tensor, Tensor]:
    """(var, mean) over `dim`, with var's `correction`."""
    variance = statistics.var(input, dim, correction=correction, keepdim=keepdim, unbiased=unbiased)
    return variance, reduction.mean(input, dim, keepdim)


def std_mean(
    input: Tensor,
    dim: DimArg = None,
    *,
    correction: float | None = 1,
    keepdim: bool = False,
    unbiased: bool | None = None,
) -> tuple[Tensor, Tensor]:
    """(std, mean) over `dim`, with std's `correction`."""
    deviation = statistics.std(
        input, dim, correction=correction, keepdim=keepdim, unbiased=unbiased
    )
    return deviation, reduction.mean(input, dim, keepdim)


def isin(
    elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False
) -> Tensor:
    """bool, shaped like `elements`: whether each is among `test_elements` (NaN never is).

    Sorts the test elements and binary-searches them: O((n + m) log m).
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments: expected a Tensor")
    device = (elements if isinstance(elements, Tensor) else test_elements)._device
    values = (
        elements.detach()
        if isinstance(elements, Tensor)
        else creation.tensor(elements, device=device)
    )
    tests = (
        test_elements.detach()
        if isinstance(test_elements, Tensor)
        else creation.tensor(test_elements, device=device)
    )
    flat_tests = sorting.sort(shape_ops.reshape(tests, -1)).values
    m = flat_tests._shape[0]
    if m == 0:
        found = creation.zeros(values._shape, dtype=_dtype.bool, device=device)
    else:
        # NaN (sorted last) searches as +inf, so the search stays on an ordered sequence;
        # the comparison with the original element below still never matches a NaN.
        keys = flat_tests
        if keys._dtype.is_floating_point:
            keys = unary.where(ew.ne(keys, keys), float("inf"), keys)
        position = searching.searchsorted(keys, values)
        candidate = indexing.gather(
            flat_tests, 0, shape_ops.reshape(unary.clamp(position, max=m - 1), -1)
        )
        found = ew.eq(shape_ops.reshape(candidate, *values._shape), values)
    return unary.logical_not(found) if invert else found


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements of `input` where the bool `mask` is true (both broadcast), as 1-d."""
    if not isinstance(mask, Tensor) or mask._dtype is not _dtype.bool:
        got = mask._dtype.name if isinstance(mask, Tensor) else type(mask).__name__
        raise RuntimeError(f"masked_select: expected BoolTensor for mask, but got {got}")
    shape = broadcast_shapes("masked_select", input._shape, mask._shape)
    source = shape_ops.reshape(shape_ops.expand(input, *shape), -1)
    flat_mask = shape_ops.reshape(shape_ops.expand(mask, *shape), -1)
    return indexing.index_select(source, 0, shape_ops.reshape(indexing.nonzero(flat_mask), -1))
