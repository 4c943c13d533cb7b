"""Derivative formulas of the indexing ops, written in ember ops.

Reading (`t[index]`, gather, index_select, take) sends the gradient back into zeros of the
input's shape at the positions read: written for basic indexing (a view never reads an
element twice), accumulated for advanced indexing (repeated indices add up). Writing
(`t[index] = v`, scatter, masked_fill) gives the written value the gradient read back at
those positions, and the overwritten input the gradient with zeros there. Each direction
is the other's derivative, and both are recorded ops, so gradients of every order stay in
ember ops.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import _upper
from ember._ops import _launch
from ember._ops._index_tensors import contiguous_copy
from ember._ops.elementwise import check_inplace, detached
from ember._tensor import Tensor
from ember.autograd._graph import needs_grad, record

__all__ = [
    "check_inplace", "detached", "gather_backward", "getitem_backward", "index_put",
    "index_select_backward", "masked_fill_backward", "record_inplace", "scatter_add_backward",
    "scatter_backward", "take_backward",
]  # fmt: skip

Index = tuple[Any, ...]


def _zeros_like_shape(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    return _upper.ops.creation.zeros(shape, dtype=g._dtype, device=g._device)


def record_inplace(
    name: str, formula: Any, t: Tensor, inputs: Sequence[Any], result: Tensor | None,
    save: Sequence[Tensor] = (), ctx: Any = None,
) -> Tensor:  # fmt: skip
    """Make `t` continue the graph from a node of the in-place op that wrote it.

    `result` (when not None) holds the new values, computed out of place: it is copied
    into `t`. `inputs[0]` is `t` as it was before the write.
    """
    if result is not None:
        _launch.copy(t, result)
        t._storage.version += 1
    return record(name, formula, inputs, t, save, ctx=ctx)


# -- t[index] and t[index] = v ------------------------------------------------------------


def getitem_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """ctx: (index items, input shape, accumulate)."""
    items, shape, accumulate = node.ctx
    return (index_put(_zeros_like_shape(g, shape), items, g, accumulate),)


def index_put(base: Tensor, items: Index, values: Any, accumulate: bool) -> Tensor:
    """A copy of `base` with `values` written (or added) at `base[items]`; recorded."""
    out = contiguous_copy(base)
    _upper.ops.indexing.write_index(out, items, detached(values), accumulate)
    if needs_grad(base, values):
        value_shape = values._shape if isinstance(values, Tensor) else None
        name = "IndexPutBackward" if accumulate else "CopySlices"
        record(name, index_put_backward, (base, values), out, ctx=(items, accumulate, value_shape))
    return out


def index_put_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """ctx: (index items, accumulate, shape of the values or None for a scalar)."""
    items, accumulate, value_shape = node.ctx
    grad_base = None
    if node.needs_input_grad(0):
        grad_base = g if accumulate else index_put(g, items, 0.0, False)
    grad_values = None
    if value_shape is not None and node.needs_input_grad(1):
        grad_values = _to_value_shape(_upper.ops.indexing.getitem(g, items), value_shape)
    return grad_base, grad_values


def _to_value_shape(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A value may carry extra leading size-1 dims (x[0] = ones(1, 3) for x of (2, 3))."""
    extra = len(shape) - len(grad._shape)
    if extra > 0:
        grad = _upper.ops.shape.reshape(grad, (1,) * extra + grad._shape)
    return grad


# -- gather, scatter, index_select, take ---------------------------------------------------


def gather_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """Saved: index; ctx: (dim, input shape)."""
    (index,) = node.saved
    dim, shape = node.ctx
    return (_upper.ops.indexing.scatter_add(_zeros_like_shape(g, shape), dim, index, g),)


def _source_grad(g: Tensor, dim: int, index: Tensor, src_shape: tuple[int, ...]) -> Tensor:
    """The gradient of scatter's `src`: read back at `index`, zero where src went unused."""
    picked = _upper.ops.indexing.gather(g, dim, index)
    if picked._shape == src_shape:
        return picked
    region = tuple(slice(0, n) for n in index._shape)
    return index_put(_zeros_like_shape(g, src_shape), region, picked, False)


def scatter_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """Inputs (self, src); saved: index; ctx: (dim, src shape or None for a scalar)."""
    (index,) = node.saved
    dim, src_shape = node.ctx
    grad_self = (
        _upper.ops.indexing.scatter(g, dim, index, 0.0) if node.needs_input_grad(0) else None
    )
    grad_src = None
    if src_shape is not None and node.needs_input_grad(1):
        grad_src = _source_grad(g, dim, index, src_shape)
    return grad_self, grad_src


def scatter_add_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """Inputs (self, src); saved: index; ctx: (dim, src shape)."""
    (index,) = node.saved
    dim, src_shape = node.ctx
    grad_src = _source_grad(g, dim, index, src_shape) if node.needs_input_grad(1) else None
    return g, grad_src


def index_select_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """Saved: index; ctx: (dim, input shape)."""
    (index,) = node.saved
    dim, shape = node.ctx
    if not shape:
        return (g,)  # a 0-d input: the one value read
    items = (slice(None),) * dim + (index,)
    return (index_put(_zeros_like_shape(g, shape), items, g, True),)


def take_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """Saved: the non-negative index; ctx: the input's shape."""
    (index,) = node.saved
    shape = node.ctx
    n = 1
    for size in shape:
        n *= size
    flat_grad = _upper.ops.shape.reshape(g, (-1,))
    flat_index = _upper.ops.shape.reshape(index, (-1,))
    flat = index_put(_zeros_like_shape(g, (n,)), (flat_index,), flat_grad, True)
    return (_upper.ops.shape.reshape(flat, shape),)


# -- masked_fill ---------------------------------------------------------------------------


def masked_fill_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """Inputs (self, value); saved: mask. The graph sums grad_self back to self's shape."""
    (mask,) = node.saved
    where = _upper.ops.unary.where
    grad_self = where(mask, 0.0, g) if node.needs_input_grad(0) else None
    grad_value = None
    if node.needs_input_grad(1):
        grad_value = _upper.ops.reduction.sum(where(mask, g, 0.0))
    return grad_self, grad_value
