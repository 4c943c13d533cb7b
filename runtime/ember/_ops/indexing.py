"""Indexing ops: `t[index]`, `t[index] = value`, gather and scatter, index_select,
masked_fill, nonzero and take.

Index tensors are int64 (int32 is accepted and converted). Every index is range-checked
in the runtime, so a bad index is an IndexError that names the value, the dim and its size
on every device.
"""

from __future__ import annotations

from typing import Any, Literal, overload

import numpy as np

from ember import _dtype
from ember._dispatch import Op, kernel_for
from ember._errors import DTypeError
from ember._ops import _index_advanced, _launch, conversion, creation, names
from ember._ops import indexing_formulas as formulas
from ember._ops._composites_index import index_select_into, scatter_into, take_into
from ember._ops._index_parse import normalize, parse
from ember._ops._index_tensors import (
    as_index,
    checked,
    contiguous_copy,
    flat,
    out_of_bounds,
)
from ember._ops._meta import broadcast_shapes, broadcast_strides, same_device, wrap_dim
from ember._ops.shape import expand
from ember._tensor import Tensor, empty_tensor, make_view
from ember.autograd._graph import needs_grad, record

_int64 = _dtype.int64

__all__ = [
    "gather", "index_select", "masked_fill", "masked_fill_", "nonzero", "scatter", "scatter_",
    "scatter_add", "scatter_add_", "take",
]  # fmt: skip


def getitem(t: Tensor, index: Any) -> Tensor:
    """t[index]: a view for basic indexing (ints, slices, None, ...), else a new tensor."""
    if type(index) is int:
        shape = t._shape
        if not shape:
            raise IndexError(
                "invalid index of a 0-dim tensor. Use `tensor.item()` in Python to convert a "
                "0-dim tensor to a number"
            )
        size = shape[0]
        if not -size <= index < size:
            raise IndexError(f"index {index} is out of bounds for dimension 0 with size {size}")
        if index < 0:
            index += size
        out = make_view(t, t._offset + index * t._strides[0], shape[1:], t._strides[1:])
        if t._autograd is not None and needs_grad(t):
            _record_read("SelectBackward", t, out, (index,), False)
        return out
    if (
        type(index) is Tensor
        and index._dtype is _int64
        and index._device is t._device
        and index._shape
        and t._shape
    ):
        # x[idx], the common advanced case: no parsing, straight to index_select.
        size = t._shape[0]
        index = checked(index, size, negative=True, error=out_of_bounds(0, size))
        out = _index_advanced.read(t, [0], [index])
        if t._autograd is not None and needs_grad(t):
            _record_read("IndexBackward", t, out, (index,), True)
        return out
    items = normalize(t, index)
    parsed = parse(t, items)
    out = (
        _index_advanced.read(parsed.view, parsed.positions, parsed.indices)
        if parsed.indices
        else parsed.view
    )
    if t._autograd is not None and needs_grad(t):
        advanced = bool(parsed.indices)
        _record_read(_read_name(items, advanced), t, out, items, advanced)
    return out


def _record_read(name: str, t: Tensor, out: Tensor, items: Any, advanced: bool) -> None:
    # A basic-indexed view reads each element once; advanced indices may repeat.
    record(name, formulas.getitem_backward, (t,), out, ctx=(items, t._shape, advanced))


def _read_name(items: tuple[Any, ...], advanced: bool) -> str:
    """The node's name, after the last index item as PyTorch names it."""
    if advanced:
        return "IndexBackward"
    last = next((item for item in reversed(items) if item is not Ellipsis), Ellipsis)
    if last is None:
        return "UnsqueezeBackward"
    if type(last) is int:
        return "SelectBackward"
    return "SliceBackward" if type(last) is slice else "AliasBackward"


def setitem(t: Tensor, index: Any, value: Any) -> None:
    """t[index] = value: `value` broadcast to the indexed shape and cast to t's dtype."""
    if isinstance(value, (list, tuple, np.ndarray)):
        value = creation.tensor(value, dtype=t._dtype, device=t._device)
    if not needs_grad(t, value) or not t._dtype.is_floating_point:
        write_index(t, index, value, False)
        return
    formulas.check_inplace(t)
    items = normalize(t, index)
    write_index(t, items, formulas.detached(value), False)
    shape = value._shape if isinstance(value, Tensor) else None
    name = "IndexPutBackward" if any(isinstance(i, Tensor) for i in items) else "CopySlices"
    record(name, formulas.index_put_backward, (t, value), t, ctx=(items, False, shape))


def write_index(t: Tensor, index: Any, value: Any, accumulate: bool) -> None:
    """t[index] = value (or += with `accumulate`), without recording the graph."""
    storage = t._storage
    version = storage.version
    if isinstance(value, (list, tuple, np.ndarray)):
        value = creation.tensor(value, dtype=t._dtype, device=t._device)
    elif isinstance(value, Tensor) and value._storage is storage:
        value = contiguous_copy(value)  # t[1:] = t[:-1] reads the values before writing them
    parsed = parse(t, index)
    view = parsed.view
    if parsed.indices:
        _index_advanced.write(view, parsed.positions, parsed.indices, value, accumulate)
    elif accumulate:
        _index_advanced.add_into(view, value)
    elif isinstance(value, Tensor):
        conversion.copy_(view, expand(_index_advanced.strip_leading_ones(value), view._shape))
    else:
        conversion.fill_(view, value)
    if storage.version == version:
        storage.version += 1


def gather(t: Tensor, dim: int, index: Tensor) -> Tensor:
    """Values along `dim` at `index`: out[i][j] = t[index[i][j]][j] for dim 0."""
    d = wrap_dim(dim, len(t._shape), "gather")
    index = as_index("gather", index, t._device)
    source, positions = _at_least_1d(t), _at_least_1d(index)
    if len(positions._shape) != len(source._shape):
        raise RuntimeError(
            "gather(): Index tensor must have the same number of dimensions as input tensor"
        )
    for j, (n, m) in enumerate(zip(positions._shape, source._shape, strict=True)):
        if j != d and n > m:
            raise RuntimeError(
                f"gather(): Size does not match at dimension {j} expected index "
                f"{list(index._shape)} to be smaller than self {list(t._shape)} apart from "
                f"dimension {d}"
            )
    positions = _checked_along(positions, source, d, "gather")
    out = empty_tensor(index._shape, t._dtype, t._device)
    if out.numel():
        kernel_for(names.GATHER, t._device, t._dtype)(_at_least_1d(out), source, d, positions)
    if t._autograd is not None and needs_grad(t):
        record("GatherBackward", formulas.gather_backward, (t,), out, (index,), ctx=(d, t._shape))
    return out


def scatter_(t: Tensor, dim: int, index: Tensor, src: Any) -> Tensor:
    """In place: t[index[i][j]][j] = src[i][j] for dim 0 (`src` a tensor or a scalar)."""
    if needs_grad(t, src):
        formulas.check_inplace(t)
        return _scatter_recorded(names.SCATTER, t, dim, index, src, t)
    return _scatter(names.SCATTER, t, dim, index, src)


def scatter(t: Tensor, dim: int, index: Tensor, src: Any) -> Tensor:
    """Out-of-place `scatter_`: a copy of `t` with `src` written at `index` along `dim`."""
    if needs_grad(t, src):
        return _scatter_recorded(names.SCATTER, t, dim, index, src, None)
    return _scatter(names.SCATTER, contiguous_copy(t), dim, index, src)


def scatter_add_(t: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """In place: t[index[i][j]][j] += src[i][j] for dim 0 (repeated indices accumulate)."""
    _check_src(src)
    if needs_grad(t, src):
        formulas.check_inplace(t)
        return _scatter_recorded(names.SCATTER_ADD, t, dim, index, src, t)
    return _scatter(names.SCATTER_ADD, t, dim, index, src)


def scatter_add(t: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """Out-of-place `scatter_add_`."""
    _check_src(src)
    if needs_grad(t, src):
        return _scatter_recorded(names.SCATTER_ADD, t, dim, index, src, None)
    return _scatter(names.SCATTER_ADD, contiguous_copy(t), dim, index, src)


def _check_src(src: Any) -> None:
    if not isinstance(src, Tensor):
        raise TypeError(
            f"scatter_add_(): argument 'src' must be a Tensor, not {type(src).__name__}"
        )


def _scatter_recorded(
    op: Op, t: Tensor, dim: int, index: Tensor, src: Any, target: Tensor | None
) -> Tensor:
    """scatter into a copy of `t`, recorded; written back into `target` when in place."""
    out = _scatter(op, contiguous_copy(t), dim, index, formulas.detached(src))
    adding = op is names.SCATTER_ADD
    formula = formulas.scatter_add_backward if adding else formulas.scatter_backward
    name = "ScatterAddBackward" if adding else "ScatterBackward"
    src_shape = src._shape if isinstance(src, Tensor) else None
    ctx = (wrap_dim(dim, len(t._shape), op.name), src_shape)
    index = as_index(op.name, index, t._device)
    if target is None:
        return record(name, formula, (t, src), out, (index,), ctx=ctx)
    return formulas.record_inplace(name, formula, target, (t, src), out, (index,), ctx=ctx)


def _scatter(op: Op, t: Tensor, dim: int, index: Tensor, src: Any) -> Tensor:
    name = op.name
    d = wrap_dim(dim, len(t._shape), name)
    index = as_index(name, index, t._device)
    if isinstance(src, Tensor):
        same_device(name, t, src)
        if src._dtype is not t._dtype:
            raise RuntimeError(
                f"{name}(): Expected self.dtype to be equal to src.dtype (got {t._dtype.name} "
                f"and {src._dtype.name})"
            )
    else:
        value = conversion.fill_(empty_tensor((), t._dtype, t._device), src)
        src = make_view(value, 0, index._shape, (0,) * len(index._shape))
    target, positions, source = _at_least_1d(t), _at_least_1d(index), _at_least_1d(src)
    for other, what in ((target, "self"), (source, "src")):
        if len(other._shape) != len(positions._shape):
            raise RuntimeError(
                f"{name}(): Index tensor must have the same number of dimensions as {what} tensor"
            )
    for j, n in enumerate(positions._shape):
        if n > source._shape[j] or (j != d and n > target._shape[j]):
            raise RuntimeError(
                f"{name}(): Expected index {list(index._shape)} to be smaller than self "
                f"{list(t._shape)} apart from dimension {d} and to be smaller size than src "
                f"{list(src._shape)}"
            )
    positions = _checked_along(positions, target, d, name)
    if positions.numel():
        # The kernel walks index's shape; src is cut to it so no kernel reads past it.
        source = make_view(source, source._offset, positions._shape, source._strides)
        scatter_into(op, target, d, positions, source)
    t._storage.version += 1
    return t


def index_select(t: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of `t` along `dim` at the positions in the 1-d `index`."""
    d = wrap_dim(dim, len(t._shape), "index_select")
    index = as_index("index_select", index, t._device)
    if len(index._shape) > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    source, positions = _at_least_1d(t), _at_least_1d(index)
    count = positions._shape[0]
    if not t._shape and count != 1:
        raise IndexError(
            f"index_select(): Index to scalar can have only 1 value, got {count} value(s)"
        )
    positions = _checked_along(positions, source, d, "index_select")
    shape = (*source._shape[:d], count, *source._shape[d + 1 :])
    out = empty_tensor(shape, t._dtype, t._device)
    if out.numel():
        index_select_into(out, source, d, positions)
    result = out if t._shape else make_view(out, 0, (), ())
    if t._autograd is not None and needs_grad(t):
        backward = formulas.index_select_backward
        record("IndexSelectBackward", backward, (t,), result, (positions,), ctx=(d, t._shape))
    return result


def masked_fill(t: Tensor, mask: Tensor, value: Any) -> Tensor:
    """A copy of `t` holding `value` where `mask` is true (mask broadcasts with t)."""
    _check_mask("masked_fill", t, mask, value)
    out = empty_tensor(broadcast_shapes("masked_fill", t._shape, mask._shape), t._dtype, t._device)
    _masked_fill_into(out, t, mask, value)
    if needs_grad(t, value):
        record("MaskedFillBackward", formulas.masked_fill_backward, (t, value), out, (mask,))
    return out


def masked_fill_(t: Tensor, mask: Tensor, value: Any) -> Tensor:
    """In place: t = value where `mask` (broadcast to t's shape) is true."""
    _check_mask("masked_fill_", t, mask, value)
    shape = broadcast_shapes("masked_fill_", t._shape, mask._shape)
    if shape != t._shape:
        raise RuntimeError(
            f"masked_fill_: output with shape {list(t._shape)} doesn't match the broadcast "
            f"shape {list(shape)}"
        )
    if needs_grad(t, value):
        formulas.check_inplace(t)
        out = empty_tensor(t._shape, t._dtype, t._device)
        _masked_fill_into(out, t, mask, value)
        backward = formulas.masked_fill_backward
        return formulas.record_inplace("MaskedFillBackward", backward, t, (t, value), out, (mask,))
    _masked_fill_into(t, t, mask, value)
    t._storage.version += 1
    return t


def _check_mask(name: str, t: Tensor, mask: Tensor, value: Any) -> None:
    if not isinstance(mask, Tensor):
        raise TypeError(f"{name}(): argument 'mask' must be a Tensor, not {type(mask).__name__}")
    if mask._dtype is not _dtype.bool:
        raise DTypeError(
            f"{name} only supports boolean masks, but got mask with dtype {mask._dtype.name}"
        )
    same_device(name, t, mask)
    if isinstance(value, Tensor) and value._shape:
        raise RuntimeError(
            f"{name} only supports a 0-dimensional value tensor, but got tensor with "
            f"{len(value._shape)} dimension(s)."
        )


def _masked_fill_into(out: Tensor, t: Tensor, mask: Tensor, value: Any) -> None:
    """out = where(mask, value, t), with `value` cast to out's dtype first (no promotion)."""
    fill = empty_tensor((), out._dtype, out._device)
    if isinstance(value, Tensor):
        conversion.copy_(fill, formulas.detached(value))
    else:
        conversion.fill_(fill, value)
    shape = out._shape
    _launch.launch_where(
        out, _broadcast(mask, shape), _broadcast(fill, shape), _broadcast(t, shape)
    )


@overload
def nonzero(t: Tensor, *, as_tuple: Literal[False] = False) -> Tensor: ...


@overload
def nonzero(t: Tensor, *, as_tuple: Literal[True]) -> tuple[Tensor, ...]: ...


def nonzero(t: Tensor, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
    """Indices of the non-zero elements: int64 (n, t.ndim), or one 1-d tensor per dim."""
    source = _at_least_1d(t) if as_tuple else t
    found: Tensor = kernel_for(names.NONZERO, t._device, t._dtype)(source)
    if not as_tuple:
        return found
    rows, columns = found._shape
    return tuple(
        make_view(found, found._offset + j * found._strides[1], (rows,), (found._strides[0],))
        for j in range(columns)
    )


def take(t: Tensor, index: Tensor) -> Tensor:
    """Elements of `t`, read as 1-d in row-major order, at `index` (negatives count back)."""
    index = as_index("take", index, t._device)
    n = t.numel()
    index = checked(
        index,
        n,
        negative=True,
        error=lambda v: IndexError(
            f"take(): out of range: tried to access index {v} on a tensor of {n} elements."
        ),
    )
    out = empty_tensor(index._shape, t._dtype, t._device)
    if out.numel():
        take_into(flat(out), t, flat(index))
    if t._autograd is not None and needs_grad(t):
        record("TakeBackward", formulas.take_backward, (t,), out, (index,), ctx=t._shape)
    return out


def _checked_along(index: Tensor, t: Tensor, d: int, name: str) -> Tensor:
    size = t._shape[d]
    return checked(index, size, negative=False, error=out_of_bounds(d, size, name))


def _at_least_1d(t: Tensor) -> Tensor:
    """A 0-d tensor seen as shape (1,): PyTorch treats 0-d and 1-d alike in these ops."""
    return t if t._shape else make_view(t, t._offset, (1,), (1,))


def _broadcast(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    if t._shape == shape:
        return t
    return make_view(t, t._offset, shape, broadcast_strides(t._shape, t._strides, shape))
