"""Views that cut a tensor into pieces along one dim: split, chunk and unbind."""

from __future__ import annotations

import operator
from collections.abc import Sequence

from ember._ops import shape_formulas as formulas
from ember._ops._meta import wrap_dim
from ember._ops._unbind_grad import record_split, record_unbind
from ember._ops._view_geometry import int_tuple
from ember._tensor import Tensor, make_view


def split(
    t: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0
) -> tuple[Tensor, ...]:
    """Views of consecutive pieces along `dim`: equal sizes (last smaller) or given sizes."""
    if not t._shape:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, len(t._shape), "split")
    size = t._shape[d]
    if isinstance(split_size_or_sections, Sequence):
        sections = int_tuple("split", split_size_or_sections, "split_size")
        if any(s < 0 for s in sections) or sum(sections) != size:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
                f"size at dimension {d}), but got split_sizes={list(sections)}"
            )
    else:
        step = operator.index(split_size_or_sections)
        if step < 0:
            raise RuntimeError(
                f"split expects split_size be non-negative, but got split_size={step}"
            )
        if step == 0 and size != 0:
            raise RuntimeError(
                f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
            )
        count = max(-(-size // step), 1) if step else 1
        sections = tuple(min(step, size - i * step) for i in range(count))
    pieces = []
    start = 0
    tracked = t._autograd is not None
    for length in sections:
        pieces.append(_piece_view(t, d, start, length) if tracked else _piece(t, d, start, length))
        start += length
    if tracked:  # one backward node for every piece (concatenating), not one per piece
        record_split(t, pieces, d)
    return tuple(pieces)


def chunk(t: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Up to `chunks` views of equal size along `dim` (the last may be smaller)."""
    if not t._shape:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, len(t._shape), "chunk")
    size = t._shape[d]
    if size == 0:
        # Any number of empty pieces sums to 0; PyTorch returns exactly `chunks` of them.
        return split(t, [0] * chunks, d)
    return split(t, -(-size // chunks), d)


def unbind(t: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """Every slice along `dim`, each without that dimension (views)."""
    if not t._shape:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, len(t._shape), "unbind")
    if t._autograd is None:
        return tuple(_index(t, d, i) for i in range(t._shape[d]))
    # One backward node for every piece (stacking), not one embedding per piece.
    pieces = tuple(_index_view(t, d, i) for i in range(t._shape[d]))
    record_unbind(t, pieces, d)
    return pieces


def _piece_view(t: Tensor, d: int, start: int, length: int) -> Tensor:
    """The view of `t` cut to [start, start + length) along dim `d`, recording nothing."""
    return make_view(
        t,
        t._offset + start * t._strides[d],
        (*t._shape[:d], length, *t._shape[d + 1 :]),
        t._strides,
    )


def _piece(t: Tensor, d: int, start: int, length: int) -> Tensor:
    """`t` cut to [start, start + length) along the (checked, non-negative) dim `d`."""
    out = _piece_view(t, d, start, length)
    if t._autograd is not None:
        # Each piece records its own node: its gradient is embedded back into t's shape.
        context = (t._shape, _piece, (d, start, length))
        formulas.track("SplitBackward", formulas.slice_backward, t, out, context)
    return out


def _index_view(t: Tensor, d: int, index: int) -> Tensor:
    """The view of `t` at `index` of dim `d`, without that dim, recording nothing."""
    return make_view(
        t,
        t._offset + index * t._strides[d],
        t._shape[:d] + t._shape[d + 1 :],
        t._strides[:d] + t._strides[d + 1 :],
    )


def _index(t: Tensor, d: int, index: int) -> Tensor:
    """`t` at the (checked, non-negative) `index` of dim `d`, without that dim."""
    out = _index_view(t, d, index)
    if t._autograd is not None:
        context = (t._shape, _index, (d, index))
        formulas.track("UnbindBackward", formulas.slice_backward, t, out, context)
    return out
