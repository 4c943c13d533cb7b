"""In-place views and resize: ops that change a tensor's own geometry.

An in-place view is the out-of-place view whose geometry (and place in the autograd graph)
the tensor takes over, as PyTorch's do: later ops on it see the view, gradients flow back
through the view's node, and the storage is untouched.
"""

from __future__ import annotations

from typing import Any

from ember._ops import creation, shape
from ember._ops._view_geometry import as_strided
from ember._tensor import Tensor
from ember.autograd._mode import is_grad_enabled

__all__ = ["as_strided_", "resize_", "squeeze_", "t_", "transpose_", "unsqueeze_"]


def _become(t: Tensor, view: Tensor) -> Tensor:
    """`t` takes `view`'s geometry and autograd place (the in-place views' common step)."""
    meta = t._autograd
    leaf = meta is not None and meta.requires_grad and meta.grad_fn is None
    if leaf and is_grad_enabled():
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    t._offset = view._offset
    t._shape = view._shape
    t._strides = view._strides
    t._contiguous = view._contiguous
    if view._autograd is not None:
        t._autograd = view._autograd
    return t


def squeeze_(t: Tensor, dim: Any = None) -> Tensor:
    return _become(t, shape.squeeze(t) if dim is None else shape.squeeze(t, dim))


def unsqueeze_(t: Tensor, dim: int) -> Tensor:
    return _become(t, shape.unsqueeze(t, dim))


def t_(t: Tensor) -> Tensor:
    return _become(t, shape.t(t))


def transpose_(t: Tensor, dim0: int, dim1: int) -> Tensor:
    return _become(t, shape.transpose(t, dim0, dim1))


def as_strided_(t: Tensor, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
    return _become(t, as_strided(t, size, stride, storage_offset))


def resize_(t: Tensor, sizes: Any) -> Tensor:
    """New contiguous geometry of the given size; the first elements keep their values
    when the storage is large enough, else a larger storage is made (as PyTorch)."""
    new_shape = creation.normalize_shape("resize_", tuple(sizes))
    meta = t._autograd
    if meta is not None and meta.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    count = 1
    for n in new_shape:
        count *= n
    if (t._offset + count) * t._dtype.itemsize > t._storage.nbytes:
        grown = creation.empty(count, dtype=t._dtype, device=t._device)
        old = shape.reshape(t, (-1,))
        keep = min(old.numel(), count)
        if keep:
            grown[:keep].copy_(old[:keep])
        t._storage, t._offset = grown._storage, 0
    strides = []
    step = 1
    for n in reversed(new_shape):
        strides.append(step)
        step *= max(n, 1)
    t._shape = tuple(new_shape)
    t._strides = tuple(reversed(strides))
    t._contiguous = True
    return t
