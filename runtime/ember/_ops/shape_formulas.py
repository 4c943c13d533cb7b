"""Derivative formulas of the view, shape and joining ops, written in ember ops.

A view's formula maps the gradient back onto its input's shape: reshape-like views reshape
it, permutations invert the permutation, `expand` hands back the expanded gradient (the
graph sums it over the broadcast dims, autograd/_graph.py), and views that keep part of
the input (select, narrow, split, unbind) embed the gradient into zeros with `embed`.
`embed` and the storage remapping behind `as_strided` are themselves recorded ops whose
derivatives are the views again, so gradients of every order stay in ember ops.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ember import _dtype, _upper
from ember._dispatch import kernel_for
from ember._ops import _launch, names
from ember._ops._composites_index import take_into
from ember._tensor import Tensor, empty_tensor, make_view
from ember.autograd._graph import needs_grad, record

__all__ = [
    "alias_backward", "as_strided_backward", "cat_backward", "embed", "permute_backward",
    "reshape_backward", "slice_backward", "storage_map", "track", "transpose_backward",
]  # fmt: skip

Shape = tuple[int, ...]
ViewFn = Callable[..., Tensor]


def track(name: str, formula: Any, t: Tensor, out: Tensor, ctx: Any) -> None:
    """Record view `out` of `t` when `t` takes part in autograd (callers check `_autograd`)."""
    if needs_grad(t):
        record(name, formula, (t,), out, ctx=ctx)


def alias_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """Views that keep the input's shape (and expand, which the graph sums back)."""
    return (g,)


def reshape_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """view, reshape, squeeze, unsqueeze, flatten, unflatten: ctx is the input's shape."""
    return (_upper.ops.shape.reshape(g, node.ctx),)


def permute_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """ctx is the forward permutation (non-negative dims)."""
    order = node.ctx
    inverse = [0] * len(order)
    for i, d in enumerate(order):
        inverse[d] = i
    return (_upper.ops.shape.permute(g, inverse),)


def transpose_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """ctx is the (dim0, dim1) pair, its own inverse."""
    return (_upper.ops.shape.transpose(g, *node.ctx),)


def slice_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """select, narrow and the pieces of split/chunk/unbind: ctx is (shape, view, args)."""
    shape, view, args = node.ctx
    return (embed(g, shape, view, args, node.name() + "Backward"),)


def embed(g: Tensor, shape: Shape, view: ViewFn, args: tuple[Any, ...], name: str) -> Tensor:
    """Zeros of `shape` with `g` written into `view(zeros, *args)` (a view's adjoint).

    Recorded as `name` when `g` needs grad; its own derivative is the view again.
    """
    out = _upper.ops.creation.zeros(shape, dtype=g._dtype, device=g._device)
    target = view(out, *args)  # `out` is outside the graph, so this view records nothing
    if target.numel():
        _launch.copy(target, g)
    if g._autograd is not None and needs_grad(g):
        record(name, _embed_backward, (g,), out, ctx=(view, args))
    return out


def _embed_backward(node: Any, g: Tensor) -> Sequence[Any]:
    view, args = node.ctx
    return (view(g, *args),)


def cat_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """ctx is (dim, [(start, length) or None for a skipped 1-d empty input])."""
    dim, spans = node.ctx
    narrow = _upper.ops.shape.narrow
    return [
        _upper.ops.creation.zeros((0,), dtype=g._dtype, device=g._device)
        if span is None
        else narrow(g, dim, span[0], span[1])
        for span in spans
    ]


# -- as_strided -------------------------------------------------------------------------------

Geometry = tuple[Shape, Shape, int]  # (shape, strides, storage offset)


def as_strided_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """ctx is (input geometry, output geometry), both over the shared storage.

    The gradient of each storage element is the sum of `g` over the output elements that
    read it; each input element then takes the gradient of the element it sits on, shared
    evenly among the input elements that overlap there (as PyTorch does).
    """
    source, result = node.ctx
    low = min(_lowest(source), _lowest(result))
    size = max(_highest(source), _highest(result)) - low + 1
    in_index = _storage_index(source, low, g._device)
    out_index = _storage_index(result, low, g._device)
    grad = storage_map(g, out_index, in_index, size)
    if not _non_overlapping(source):
        ones = empty_tensor(source[0], g._dtype, g._device)
        _launch.fill(ones, 1.0)
        grad = _upper.ops.elementwise.div(grad, storage_map(ones, in_index, in_index, size))
    return (grad,)


def storage_map(values: Tensor, source: Tensor, target: Tensor, size: int) -> Tensor:
    """Sum `values` into a zero buffer of `size` at `source`, then read it at `target`.

    Its adjoint is `storage_map(grad, target, source, size)`: recorded so.
    """
    dev, dt = values._device, values._dtype
    buffer = empty_tensor((size,), dt, dev)
    _launch.fill(buffer, 0.0)
    count = source.numel()
    if count:
        flat = values if values._contiguous else _contiguous(values)
        flat = make_view(flat, flat._offset, (count,), (1,))
        index = make_view(source, source._offset, (count,), (1,))
        kernel_for(names.INDEX_PUT, dev, dt)(buffer, index, flat, True)
    out = empty_tensor(target._shape, dt, dev)
    if out.numel():
        take_into(out, buffer, target)
    if values._autograd is not None and needs_grad(values):
        context = (target, source, size)
        record("AsStridedBackwardBackward", _storage_map_backward, (values,), out, ctx=context)
    return out


def _storage_map_backward(node: Any, g: Tensor) -> Sequence[Any]:
    source, target, size = node.ctx
    return (storage_map(g, source, target, size),)


def _contiguous(t: Tensor) -> Tensor:
    out = empty_tensor(t._shape, t._dtype, t._device)
    _launch.copy(out, t)
    return out


def _lowest(geometry: Geometry) -> int:
    shape, strides, offset = geometry
    if 0 in shape:
        return offset
    return offset + sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if s < 0)


def _highest(geometry: Geometry) -> int:
    shape, strides, offset = geometry
    if 0 in shape:
        return offset
    return offset + sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if s > 0)


def _storage_index(geometry: Geometry, low: int, dev: Any) -> Tensor:
    """The int64 storage position (minus `low`) of every element of a geometry."""
    shape, strides, offset = geometry
    ndim = len(shape)
    index = _upper.ops.creation.full((1,) * ndim, offset - low, dtype=_dtype.int64, device=dev)
    for d, (n, s) in enumerate(zip(shape, strides, strict=True)):
        step = _upper.ops.elementwise.mul(
            _upper.ops.creation.arange(n, dtype=_dtype.int64, device=dev), s
        )
        along = (1,) * d + (n,) + (1,) * (ndim - d - 1)
        index = _upper.ops.elementwise.add(index, _upper.ops.shape.reshape(step, along))
    return index


def _non_overlapping(geometry: Geometry) -> bool:
    """Whether no two elements share a storage position (a sufficient test)."""
    shape, strides, _ = geometry
    reach = 0
    sizes = sorted((abs(s), n) for n, s in zip(shape, strides, strict=True) if n > 1)
    for s, n in sizes:
        if s <= reach:
            return False
        reach += (n - 1) * s
    return True
