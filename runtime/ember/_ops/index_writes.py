"""Indexed writes: index_put(_), index_add(_), index_copy(_), index_fill(_), put(_) and
masked_scatter(_), composites over advanced-index assignment (`t[items] = v`, `+=` with
accumulate), which records its own gradient.

index_add/index_copy/index_fill along `dim` are `t[:, ..., index] = ...` with the index at
`dim`; put is the same on the flattened tensor; masked_scatter writes the first elements of
`source` at the positions of the mask's true elements in row-major order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import elementwise as ew
from ember._ops import indexing
from ember._ops import indexing_formulas as formulas
from ember._ops import shape as shape_ops
from ember._ops._index_parse import normalize
from ember._ops._index_tensors import checked, out_of_bounds
from ember._ops._meta import broadcast_shapes, wrap_dim
from ember._tensor import Tensor
from ember.autograd._graph import needs_grad, record

__all__ = [
    "index_add", "index_copy", "index_fill", "index_put", "index_put_", "masked_scatter", "put",
]  # fmt: skip

_TORCH_NAMES = {
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "bool": "Bool", "float16": "Half", "float32": "Float", "float64": "Double",
    "bfloat16": "BFloat16",
}  # fmt: skip


def torch_name(dt: _dtype.dtype) -> str:
    """PyTorch's scalar-type name, as its messages spell it ('Float', 'Long', ...)."""
    return _TORCH_NAMES.get(dt.name, dt.name)


def index_put_(
    input: Tensor, indices: Sequence[Any], values: Tensor, accumulate: bool = False
) -> Tensor:
    """In place: input[indices] = values (or += with `accumulate`, repeated indices adding up)."""
    if not isinstance(values, Tensor):
        raise TypeError(
            f"index_put_(): argument 'values' must be Tensor, not {type(values).__name__}"
        )
    if values._dtype is not input._dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{torch_name(input._dtype)} for the destination and {torch_name(values._dtype)} "
            "for the source."
        )
    items = tuple(indices)
    if not needs_grad(input, values) or not input._dtype.is_floating_point:
        indexing.write_index(input, items, values, accumulate)
        return input
    formulas.check_inplace(input)
    items = normalize(input, items)
    target_shape = indexing.getitem(input.detach(), items)._shape
    if values._shape != target_shape:  # so that the gradient of a broadcast value sums
        values = shape_ops.expand(values, *target_shape)
    indexing.write_index(input, items, formulas.detached(values), accumulate)
    name = "IndexPutBackward"
    backward = formulas.index_put_backward
    return record(name, backward, (input, values), input, ctx=(items, accumulate, values._shape))


def index_put(
    input: Tensor, indices: Sequence[Any], values: Tensor, accumulate: bool = False
) -> Tensor:
    """Out-of-place index_put_: a copy of `input` with `values` written at `indices`."""
    return index_put_(conv.clone(input), indices, values, accumulate)


def _along(input: Tensor, dim: int, index: Any, name: str) -> tuple[int, tuple[Any, ...]]:
    """(wrapped dim, the index items that put the 1-d `index` at `dim`), after checks."""
    d = wrap_dim(dim, input.ndim, name)
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index.ndim > 1:
        raise IndexError(
            f"{name}(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
            f"{torch_name(index._dtype)} and size: {list(index._shape)}"
        )
    if index._dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(
            f"{name}(): Expected dtype int32/int64 for index but got: {torch_name(index._dtype)}"
        )
    return d, (slice(None),) * d + (shape_ops.reshape(index, -1),)


def _check_source(input: Tensor, d: int, index: Tensor, source: Tensor, name: str) -> None:
    if source._dtype is not input._dtype:
        raise RuntimeError(
            f"{name}(): self ({torch_name(input._dtype)}) and source "
            f"({torch_name(source._dtype)}) must have the same scalar type"
        )
    count = index.numel()
    along = source._shape[d] if source.ndim else 1
    if along != count:
        error = IndexError if name == "index_copy_" else RuntimeError
        sep = " " if name == "index_copy_" else ": "
        tail = "" if name == "index_copy_" else f", for dim: {d}"
        raise error(
            f"{name}(): Number of indices ({count}) should be equal to source.size(dim){sep}"
            f"({along}){tail}"
        )
    others = [s for j, s in enumerate(input._shape) if j != d]
    if source.ndim and [s for j, s in enumerate(source._shape) if j != d] != others:
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(input._shape)} source.shape = "
            f"{list(source._shape)}"
        )


def _check_range(input: Tensor, d: int, index: Tensor, error: type[Exception], prefix: str) -> None:
    """index_add_ and index_copy_ take no negative indices (index_fill_ does), as PyTorch."""
    size = input._shape[d] if input.ndim else 1

    def failure(value: int) -> Exception:
        message = f"{prefix}index {value} is out of bounds for dimension {d} with size {size}"
        return error(message)

    if index.numel():
        checked(conv.cast(index, _dtype.int64), size, negative=False, error=failure)


def index_add_(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """In place: input[..., index[i], ...] += alpha * source[..., i, ...] along `dim`."""
    d, items = _along(input, dim, index, "index_add_")
    _check_source(input, d, index, source, "index_add_")
    _check_range(input, d, items[-1], RuntimeError, "")
    scaled = source if alpha == 1 else ew.mul(source, alpha)
    return index_put_(input, items, _shaped(scaled, input, d, index), accumulate=True)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """Out-of-place index_add_."""
    return index_add_(conv.clone(input), dim, index, source, alpha=alpha)


def index_copy_(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """In place: input[..., index[i], ...] = source[..., i, ...] along `dim`."""
    d, items = _along(input, dim, index, "index_copy_")
    _check_source(input, d, index, source, "index_copy_")
    _check_range(input, d, items[-1], IndexError, "index_copy_(): ")
    return index_put_(input, items, _shaped(source, input, d, index))


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """Out-of-place index_copy_."""
    return index_copy_(conv.clone(input), dim, index, source)


def index_fill_(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """In place: every element at `index` along `dim` set to `value` (a number or 0-d tensor)."""
    _, items = _along(input, dim, index, "index_fill_")
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(
            "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value.ndim} dimension(s)."
        )
    if not input.ndim:  # a 0-d tensor has one element, index 0 (or -1)
        position = shape_ops.reshape(items[-1], -1)
        if not position.numel():
            return input
        checked(conv.cast(position, _dtype.int64), 1, negative=True, error=out_of_bounds(0, 1))
        items = (Ellipsis,)
    indexing.setitem(input, items, value)
    return input


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """Out-of-place index_fill_."""
    return index_fill_(conv.clone(input), dim, index, value)


def _shaped(source: Tensor, input: Tensor, d: int, index: Tensor) -> Tensor:
    """`source` as the indexed region's shape (a 0-d source into a 1-d or 0-d input)."""
    if source.ndim == input.ndim:
        return source
    return shape_ops.reshape(source, index.numel())


def put_(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """In place: input, read as 1-d, gets `source` at `index` (negative counts back)."""
    if index.numel() != source.numel():
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.numel()}, index.numel() = {index.numel()}"
        )
    result = put(input, index, source, accumulate)
    conv.copy_(input, result)
    return input


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """Out-of-place put_."""
    if index.numel() != source.numel():
        raise IndexError(
            "put(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.numel()}, index.numel() = {index.numel()}"
        )
    n = input.numel()
    flat_index = shape_ops.reshape(index, -1)
    if flat_index.numel():
        low = int(flat_index.min().item())
        high = int(flat_index.max().item())
        for bad in (low, high):
            if not -n <= bad < n:
                raise IndexError(
                    f"out of range: tried to access index {bad} on a tensor of {n} elements."
                )
    flat = shape_ops.reshape(conv.clone(input), -1)
    written = index_put_(flat, (flat_index,), shape_ops.reshape(source, -1), accumulate)
    return shape_ops.reshape(written, *input._shape)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A copy of `input` whose elements where `mask` (broadcast) is true are, in row-major
    order, the first elements of `source`."""
    if not isinstance(mask, Tensor) or mask._dtype is not _dtype.bool:
        got = torch_name(mask._dtype) if isinstance(mask, Tensor) else type(mask).__name__
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with dtype {got}"
        )
    if source._dtype is not input._dtype:
        raise RuntimeError(
            "masked_scatter_: expected self and source to have same dtypes but got "
            f"{torch_name(input._dtype)} and {torch_name(source._dtype)}"
        )
    shape = broadcast_shapes("masked_scatter", input._shape, mask._shape)
    flat_mask = shape_ops.reshape(shape_ops.expand(mask, *shape), -1)
    positions = shape_ops.reshape(indexing.nonzero(flat_mask), -1)
    count = positions._shape[0]
    if count > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    flat = shape_ops.reshape(conv.clone(shape_ops.expand(input, *shape)), -1)
    values = shape_ops.reshape(source, -1).narrow(0, 0, count)
    return shape_ops.reshape(index_put_(flat, (positions,), values), *shape)


def masked_scatter_(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """In-place masked_scatter (the mask broadcasts to `input`'s shape)."""
    result = masked_scatter(input, mask, source)
    if result._shape != input._shape:
        raise RuntimeError(
            f"masked_scatter_: output with shape {list(input._shape)} doesn't match the "
            f"broadcast shape {list(result._shape)}"
        )
    conv.copy_(input, result)
    return input
