"""unique and unique_consecutive as composites over sort, cumsum and scatter_add.

Equal neighbours of the sorted (or, for unique_consecutive, the given) order form groups:
a group starts where an element differs from the one before it, the running count of
starts numbers the groups, and the number of groups is read on the host to size the
result, as PyTorch's output shape depends on the data too. NaN never equals NaN, so each
NaN is a group of its own, as in PyTorch. Along a dim, slices are ordered
lexicographically by stable sorts on each of their elements from the last to the first.
"""

from __future__ import annotations

import math
from typing import Any

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import creation, indexing, reduction, sorting
from ember._ops import elementwise as ew
from ember._ops import shape as shape_ops
from ember._ops._meta import wrap_dim
from ember._tensor import Tensor

__all__ = ["unique", "unique_consecutive"]

_int64 = _dtype.int64


def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """The distinct elements (or slices along `dim`) in ascending order; with
    `return_inverse` each element's group, with `return_counts` each group's size.

    The result is sorted even when `sorted=False`, which PyTorch permits.
    """
    return _unique(input, return_inverse, return_counts, dim, "unique", sort_first=True)


def unique_consecutive(
    input: Tensor,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """unique of each run of equal consecutive elements (or slices along `dim`)."""
    return _unique(
        input, return_inverse, return_counts, dim, "unique_consecutive", sort_first=False
    )


def _unique(
    input: Tensor,
    return_inverse: bool,
    return_counts: bool,
    dim: int | None,
    name: str,
    sort_first: bool,
) -> Any:
    source = input.detach()
    if dim is None:
        rows = shape_ops.reshape(source, -1, 1)
        values_shape: tuple[int, ...] = (-1,)
        inverse_shape = input._shape
        d = 0
    else:
        d = wrap_dim(dim, input.ndim, name)
        if input.ndim and any(s == 0 for j, s in enumerate(input._shape) if j != d):
            raise RuntimeError(
                "There are 0 sized dimensions, and they aren't selected, so unique cannot be "
                "applied"
            )
        moved = shape_ops.movedim(source, d, 0) if input.ndim else shape_ops.reshape(source, 1)
        rows = shape_ops.reshape(moved, moved._shape[0], math.prod(moved._shape[1:]))
        values_shape = (-1, *moved._shape[1:])
        inverse_shape = (rows._shape[0],)
    n = rows._shape[0]
    order = _lexicographic_order(rows) if sort_first and n > 1 else _identity(n, input)
    ordered = indexing.index_select(rows, 0, order)
    group = _group_numbers(ordered)
    groups = int(group[-1].item()) + 1 if n else 0
    starts = indexing.nonzero(_starts(ordered)).reshape(-1)
    values = shape_ops.reshape(indexing.index_select(ordered, 0, starts), *values_shape)
    if dim is not None and input.ndim:
        values = shape_ops.movedim(values, 0, d).contiguous()
    outputs: list[Tensor] = [values]
    if return_inverse:
        inverse = creation.zeros((n,), dtype=_int64, device=input._device)
        inverse = indexing.scatter(inverse, 0, order, group) if n else inverse
        outputs.append(shape_ops.reshape(inverse, *inverse_shape))
    if return_counts:
        counts = creation.zeros((groups,), dtype=_int64, device=input._device)
        if n:
            counts = indexing.scatter_add(
                counts, 0, group, creation.ones((n,), dtype=_int64, device=input._device)
            )
        outputs.append(counts)
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _identity(n: int, input: Tensor) -> Tensor:
    return creation.arange(n, dtype=_int64, device=input._device)


def _lexicographic_order(rows: Tensor) -> Tensor:
    """Row indices that sort the (n, k) `rows` lexicographically (stable, NaN last)."""
    n, k = rows._shape
    order = _identity(n, rows)
    for column in reversed(range(k)):
        keys = indexing.index_select(rows.select(1, column), 0, order)
        order = indexing.index_select(order, 0, sorting.argsort(keys, 0, stable=True))
    return order


def _starts(ordered: Tensor) -> Tensor:
    """bool (n,): whether row i differs from row i - 1 (row 0 always starts a group)."""
    n = ordered._shape[0]
    first = creation.ones((min(n, 1),), dtype=_dtype.bool, device=ordered._device)
    if n <= 1:
        return first
    before, after = ordered.narrow(0, 0, n - 1), ordered.narrow(0, 1, n - 1)
    differs = reduction.any(ew.ne(before, after), 1)
    return shape_ops.cat([first, differs], 0)


def _group_numbers(ordered: Tensor) -> Tensor:
    """int64 (n,): the group of each sorted row, counting from 0."""
    return ew.sub(reduction.cumsum(conv.cast(_starts(ordered), _int64), 0), 1)
