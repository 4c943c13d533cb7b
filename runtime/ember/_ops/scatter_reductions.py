"""scatter_reduce(_) and index_reduce(_): reductions of `src` into `input` at `index`.

sum and mean are scatter_add (mean divides by the scattered count, plus one for `input`'s
own element with `include_self`). prod, amax and amin have no scatter primitive: the
elements are sorted by their target position, a segmented inclusive scan (log-step
doubling, combining only neighbours of one target) leaves each target's reduction on its
last element, and one scatter writes those, every other element going to a discarded
slot. That is O(n log² n) for the sort, against O(n · targets) for any dense composite.
prod is differentiable through the scan itself; amax and amin record their gradient,
which PyTorch shares equally among the elements equal to the result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import creation, indexing, sorting, unary
from ember._ops import elementwise as ew
from ember._ops import shape as shape_ops
from ember._ops._index_tensors import as_index, checked, out_of_bounds
from ember._ops._meta import wrap_dim
from ember._ops.index_writes import torch_name
from ember._tensor import Tensor
from ember.autograd._graph import needs_grad, record

__all__ = ["index_reduce", "scatter_reduce"]

_SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
_COMBINE: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "prod": ew.mul, "amax": ew.maximum, "amin": ew.minimum,
}  # fmt: skip


def scatter_reduce(
    input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    """A copy of `input` where each element that `index` names along `dim` is the `reduce`
    ("sum", "prod", "mean", "amax", "amin") of the `src` elements sent there (and of its own
    value, with `include_self`)."""
    if reduce not in _SCATTER_REDUCTIONS:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    if src._dtype is not input._dtype:
        raise RuntimeError(
            f"scatter_reduce(): Expected self.dtype to be equal to src.dtype (got "
            f"{input._dtype.name} and {src._dtype.name})"
        )
    d = wrap_dim(dim, input.ndim, "scatter_reduce")
    if reduce == "sum":
        return indexing.scatter_add(_excluded(input, d, index, 0, include_self), d, index, src)
    if reduce == "mean":
        return _mean(input, d, index, src, include_self)
    index = _checked_index(input, d, index, src)
    if index.numel() == 0:
        return conv.clone(input)
    if reduce == "prod":
        return _segmented(input, d, index, src, "prod", include_self)
    with_grad = needs_grad(input, src) and input._dtype.is_floating_point
    out = _segmented(input.detach(), d, index, src.detach(), reduce, include_self)
    if not with_grad:
        return out
    ctx = (d, include_self)
    save = (input.detach(), index, src.detach(), out.detach())
    return record("ScatterReduceBackward", _extreme_backward, (input, src), out, save, ctx=ctx)


def scatter_reduce_(
    input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    """In-place scatter_reduce."""
    conv.copy_(input, scatter_reduce(input, dim, index, src, reduce, include_self=include_self))
    return input


def index_reduce(
    input: Tensor,
    dim: int,
    index: Tensor,
    source: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
) -> Tensor:
    """A copy of `input` whose slices at `index` along `dim` are the `reduce` ("prod",
    "mean", "amax", "amin") of the `source` slices sent there (and their own values)."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(
            "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    d = wrap_dim(dim, input.ndim, "index_reduce")
    if index.ndim > 1:
        raise IndexError(
            f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.ndim} with "
            f"type: {torch_name(index._dtype)} and size: {list(index._shape)}"
        )
    if source._dtype is not input._dtype:
        raise RuntimeError(
            f"index_reduce_(): self ({torch_name(input._dtype)}) and source "
            f"({torch_name(source._dtype)}) must have the same scalar type"
        )
    if (
        source.ndim != input.ndim
        or any(
            s != t
            for j, (s, t) in enumerate(zip(source._shape, input._shape, strict=True))
            if j != d
        )
        or source._shape[d] != index.numel()
    ):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(input._shape)} source.shape = "
            f"{list(source._shape)}"
        )
    shape = [1] * input.ndim
    shape[d] = index.numel()
    spread = shape_ops.expand(shape_ops.reshape(index, *shape), *source._shape).contiguous()
    return scatter_reduce(input, d, spread, source, reduce, include_self=include_self)


def index_reduce_(
    input: Tensor,
    dim: int,
    index: Tensor,
    source: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
) -> Tensor:
    """In-place index_reduce."""
    conv.copy_(input, index_reduce(input, dim, index, source, reduce, include_self=include_self))
    return input


def _checked_index(input: Tensor, d: int, index: Tensor, src: Tensor) -> Tensor:
    """int64 `index`, after scatter's shape and range checks."""
    index = as_index("scatter_reduce", index, input._device)
    if index.ndim != input.ndim or index.ndim != src.ndim:
        raise RuntimeError(
            "scatter_reduce(): Index tensor must have the same number of dimensions as self tensor"
        )
    for j, n in enumerate(index._shape):
        if n > src._shape[j] or (j != d and n > input._shape[j]):
            raise RuntimeError(
                f"scatter_reduce(): Expected index {list(index._shape)} to be smaller than self "
                f"{list(input._shape)} apart from dimension {d} and to be smaller size than src "
                f"{list(src._shape)}"
            )
    size = input._shape[d] if input.ndim else 1
    return checked(index, size, negative=False, error=out_of_bounds(d, size, "scatter_reduce"))


# -- sum and mean ------------------------------------------------------------------------


def _excluded(input: Tensor, d: int, index: Tensor, fill: float, include_self: bool) -> Tensor:
    """`input`, or with `include_self=False` a copy with `fill` where `index` writes."""
    return input if include_self else indexing.scatter(input, d, index, fill)


def _mean(input: Tensor, d: int, index: Tensor, src: Tensor, include_self: bool) -> Tensor:
    total = indexing.scatter_add(_excluded(input, d, index, 0, include_self), d, index, src)
    own = creation.ones(input._shape, dtype=input._dtype, device=input._device)
    ones = creation.ones(src._shape, dtype=input._dtype, device=input._device)
    count = indexing.scatter_add(_excluded(own, d, index, 0, include_self), d, index, ones)
    count = unary.where(ew.eq(count, 0), 1, count)
    if input._dtype.is_floating_point:
        return ew.div(total, count)
    return ew.floor_divide(total, count)


# -- prod, amax and amin -----------------------------------------------------------------


def _targets(input: Tensor, d: int, index: Tensor) -> Tensor:
    """Flat position in (contiguous) `input` of each element of `index`: int64, index-shaped."""
    strides = [1] * input.ndim
    for j in range(input.ndim - 2, -1, -1):
        strides[j] = strides[j + 1] * input._shape[j + 1]
    flat = ew.mul(conv.cast(index, _dtype.int64), strides[d] if input.ndim else 1)
    for j in range(input.ndim):
        if j != d:
            shape = [1] * input.ndim
            shape[j] = index._shape[j]
            coordinate = creation.arange(index._shape[j], dtype=_dtype.int64, device=input._device)
            flat = ew.add(flat, ew.mul(shape_ops.reshape(coordinate, *shape), strides[j]))
    return flat


def _segmented(
    input: Tensor, d: int, index: Tensor, src: Tensor, reduce: str, include_self: bool
) -> Tensor:
    combine = _COMBINE[reduce]
    region = src
    for j, size in enumerate(index._shape):  # src may be larger than index: cut to it
        region = shape_ops.narrow(region, j, 0, size)
    keys = shape_ops.reshape(_targets(input, d, index), -1)
    order = sorting.argsort(keys)
    keys = indexing.index_select(keys, 0, order)
    values = indexing.index_select(shape_ops.reshape(region, -1), 0, order)
    n = keys._shape[0]
    step = 1
    while step < n:
        same = ew.eq(keys.narrow(0, step, n - step), keys.narrow(0, 0, n - step))
        later = values.narrow(0, step, n - step)
        combined = unary.where(same, combine(later, values.narrow(0, 0, n - step)), later)
        values = shape_ops.cat([values.narrow(0, 0, step), combined], 0)
        step *= 2
    last = creation.ones((1,), dtype=_dtype.bool, device=input._device)
    ends = shape_ops.cat([ew.ne(keys.narrow(0, 0, n - 1), keys.narrow(0, 1, n - 1)), last], 0)
    flat = shape_ops.reshape(input, -1)
    size = flat._shape[0]
    if include_self:
        values = combine(values, indexing.index_select(flat, 0, keys))
    target = unary.where(ends, keys, size)  # all but each target's last go to slot `size`
    spare = creation.zeros((1,), dtype=input._dtype, device=input._device)
    written = indexing.scatter(shape_ops.cat([flat, spare], 0), 0, target, values)
    return shape_ops.reshape(written.narrow(0, 0, size), *input._shape)


def _extreme_backward(node: Any, g: Tensor) -> tuple[Any, Any]:
    """The gradient shared equally among `input`'s and `src`'s elements equal to the result."""
    input, index, src, out = node.saved
    d, include_self = node.ctx
    region = src
    for j, size in enumerate(index._shape):
        region = shape_ops.narrow(region, j, 0, size)
    reached = indexing.gather(out, d, index)
    src_hit = conv.cast(ew.eq(region, reached), g._dtype)
    own = ew.eq(input, out)
    if not include_self:
        untouched = indexing.scatter(
            creation.ones(input._shape, dtype=_dtype.bool, device=g._device), d, index, False
        )
        own = ew.logical_and(own, untouched)
    own_hit = conv.cast(own, g._dtype)
    count = indexing.scatter_add(own_hit, d, index, src_hit)
    share = ew.div(g, unary.where(ew.eq(count, 0), 1, count))
    grad_input = ew.mul(share, own_hit) if node.needs_input_grad(0) else None
    grad_src = None
    if node.needs_input_grad(1):
        grad_region = ew.mul(indexing.gather(share, d, index), src_hit)
        grad_src = creation.zeros(src._shape, dtype=g._dtype, device=g._device)
        indexing.write_index(grad_src, tuple(slice(0, s) for s in index._shape), grad_region, False)
    return grad_input, grad_src
