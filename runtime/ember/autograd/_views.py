"""Views of tensors in the graph: in-place writes through them, and bases that changed.

An op whose output shares its first input's storage (a view: t[0], t.view(...), ...)
marks the output's metadata with the view's root base and the storage version it saw.

* An in-place op on such a view changes its base too, so, as PyTorch's CopySlices does,
  the base is rebased onto a node whose gradient goes to the written region from the
  view's new history, and everywhere else to the base's old history; the view becomes a
  view of the rebased base.
* A view whose storage was written since it was taken (its base was modified in place)
  no longer reads what its grad_fn describes; the next op that uses it regenerates its
  grad_fn from the base's current history first.

Both map gradients between the base and the view through their storage positions
(`storage_map`, from the shape formulas), so they hold for any strides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import _ops
from ember._tensor import Tensor, contiguous_strides, make_view

__all__ = ["mark_view", "rebase_base", "refresh"]

Layout = tuple[Tensor, Tensor, int]  # storage positions of (base, view), buffer size


def mark_view(output: Tensor, source: Tensor) -> None:
    """Record that `output` (just recorded) is a view of `source`'s root base."""
    meta = output._autograd
    source_meta = source._autograd
    root = source_meta.base if source_meta is not None else None
    if root is None:
        root = source
    meta.base = root
    meta.view_version = output._storage.version


def refresh(t: Tensor) -> Any:
    """Regenerate the grad_fn of view `t` from its base's current history."""
    root = t._autograd.base
    _record_view(t, root)
    return t._autograd


def rebase_base(view: Tensor, old_meta: Any) -> None:
    """After an in-place op rebased `view`, rebase its base (CopySlices) and make `view`
    a view of the rebased base again."""
    from ember.autograd._graph import record

    root = old_meta.base
    meta = root._autograd
    if meta is not None and meta.requires_grad and meta.grad_fn is None:
        # Ops check this before writing (check_inplace); this guards the graph regardless.
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )
    layout = _layout(root, view)
    record("CopySlices", _copy_slices_backward, (root, view), root, ctx=layout)
    _record_view(view, root, layout)


def _record_view(view: Tensor, root: Tensor, layout: Layout | None = None) -> None:
    from ember.autograd._graph import record

    ctx = _layout(root, view) if layout is None else layout
    record("AsStridedBackward", _view_backward, (root,), view, ctx=ctx)


def _layout(root: Tensor, view: Tensor) -> Layout:
    """The storage positions of every element of `root` and of `view` (int64 tensors of
    their shapes, counted from the lowest position either reaches) and their span."""
    low = min(root._offset, view._offset)
    high = max(_highest(root), _highest(view))
    return _positions(root, low), _positions(view, low), high - low + 1


def _highest(t: Tensor) -> int:
    if not t.numel():
        return t._offset
    return t._offset + sum((n - 1) * s for n, s in zip(t._shape, t._strides, strict=True))


def _positions(t: Tensor, low: int) -> Tensor:
    from ember._ops._index_tensors import int64_arange, int64_binary
    from ember._ops.creation import full

    dev = t._device
    ndim = len(t._shape)
    total = full((1,) * ndim, t._offset - low, dtype=_int64(), device=dev)
    for d, (size, stride) in enumerate(zip(t._shape, t._strides, strict=True)):
        along = tuple(size if i == d else 1 for i in range(ndim))
        steps = make_view(int64_arange(size, stride, dev), 0, along, contiguous_strides(along))
        total = int64_binary("add", total, steps)
    return total


def _int64() -> Any:
    from ember import _dtype

    return _dtype.int64


def _storage_map() -> Any:
    from ember._ops.shape_formulas import storage_map

    return storage_map


def _view_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """The view's gradient placed at its storage positions within the base."""
    root_positions, view_positions, size = node.ctx
    return (_storage_map()(g, view_positions, root_positions, size),)


def _copy_slices_backward(node: Any, g: Tensor) -> Sequence[Any]:
    """Inputs (base before the write, view after it): the written region's gradient goes
    to the view, the rest to the old base."""
    root_positions, view_positions, size = node.ctx
    storage_map = _storage_map()
    region = storage_map(g, root_positions, view_positions, size)
    grad_root = None
    if node.needs_input_grad(0):
        written = storage_map(region, view_positions, root_positions, size)
        grad_root = _ops.elementwise.sub(g, written)
    return grad_root, region
