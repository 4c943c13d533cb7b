"""unbind's and split's backwards as one node with an output per piece (PyTorch's
UnbindBackward0 and SplitBackward0).

Recorded per piece, each slice's gradient would be embedded into zeros of the whole
tensor and the embeddings summed: for T pieces, T full-size fills and additions (an RNN
over T steps of a projected sequence pays that on every layer, attention on its q, k, v
split). One node instead stacks (or concatenates) the pieces' gradients once, zeros for
the pieces that got none. When split's pieces' gradients already lie side by side in one
storage (attention's fused backward writes q, k and v's gradients so), their
concatenation is that memory: a view, no copy.
"""

from __future__ import annotations

from collections.abc import Sequence

from ember import _upper
from ember._tensor import Tensor, make_view
from ember.autograd._graph import edges_of, mark_view, needs_grad
from ember.autograd._meta import nonleaf_meta
from ember.autograd._node import Node

__all__ = ["record_split", "record_unbind"]


class UnbindBackward0(Node):
    """Stacks the pieces' gradients along the unbound dim."""

    __slots__ = ("dim", "piece")

    def __init__(self, source: Tensor, pieces: Sequence[Tensor], dim: int) -> None:
        super().__init__(edges_of((source,)), num_outputs=len(pieces))
        self.dim = dim
        first = pieces[0]
        self.piece = (first._shape, first._dtype, first._device)

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        if all(g is None for g in grads):
            return (None,)
        shape, dtype, device = self.piece
        zeros = None
        filled: list[Tensor] = []
        for g in grads:
            if g is None:
                if zeros is None:
                    zeros = _upper.ops.creation.zeros(shape, dtype=dtype, device=device)
                g = zeros
            filled.append(g)
        return (_upper.ops.shape.stack(filled, self.dim),)


def record_unbind(source: Tensor, pieces: Sequence[Tensor], dim: int) -> None:
    """Make `pieces` (views of `source` along `dim`) the outputs of one UnbindBackward0."""
    if not pieces or not needs_grad(source):
        return
    node = UnbindBackward0(source, pieces, dim)
    for index, piece in enumerate(pieces):
        piece._autograd = nonleaf_meta(node, index)
        mark_view(piece, source)


class SplitBackward0(Node):
    """Concatenates the pieces' gradients along the split dim."""

    __slots__ = ("dim", "pieces")

    def __init__(self, source: Tensor, pieces: Sequence[Tensor], dim: int) -> None:
        super().__init__(edges_of((source,)), num_outputs=len(pieces))
        self.dim = dim
        self.pieces = tuple((p._shape, p._dtype, p._device) for p in pieces)

    def apply(self, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
        if all(g is None for g in grads):
            return (None,)
        whole = _adjacent(grads, self.dim)
        if whole is not None:
            return (whole,)
        zeros = _upper.ops.creation.zeros
        filled = [
            zeros(shape, dtype=dtype, device=device) if g is None else g
            for g, (shape, dtype, device) in zip(grads, self.pieces, strict=True)
        ]
        return (_upper.ops.shape.cat(filled, self.dim),)


def _adjacent(grads: Sequence[Tensor | None], dim: int) -> Tensor | None:
    """The concatenation of `grads` along `dim` as a view, when they are consecutive
    slices of one storage (same strides, each starting where the one before ends along
    `dim`) and none is part of a graph (create_graph); else None."""
    first = grads[0]
    if first is None or len(grads) < 2:
        return None
    storage, strides, shape = first._storage, first._strides, first._shape
    before, after = shape[:dim], shape[dim + 1 :]
    step = strides[dim]
    offset = first._offset
    total = 0
    for g in grads:
        if (
            g is None
            or g._autograd is not None
            or g._storage is not storage
            or g._strides != strides
            or g._offset != offset
            or g._shape[:dim] != before
            or g._shape[dim + 1 :] != after
            or g._dtype is not first._dtype
        ):
            return None
        length = g._shape[dim]
        offset += length * step
        total += length
    if step == 0:
        return None
    return make_view(first, first._offset, (*before, total, *after), strides)


def record_split(source: Tensor, pieces: Sequence[Tensor], dim: int) -> None:
    """Make `pieces` (consecutive views of `source` along `dim`) the outputs of one
    SplitBackward0."""
    if not pieces or not needs_grad(source):
        return
    node = SplitBackward0(source, pieces, dim)
    for index, piece in enumerate(pieces):
        piece._autograd = nonleaf_meta(node, index)
        mark_view(piece, source)
