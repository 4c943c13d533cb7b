"""NumPy-style arrangement names over the view ops: dim aliases, atleast_*d, the *stack and
*split families, broadcasting helpers, take_along_dim, unravel_index, ravel and diff."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import Any

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import elementwise as ew
from ember._ops import indexing
from ember._ops import shape as shape_ops
from ember._ops._meta import broadcast_shapes as _broadcast
from ember._ops._meta import wrap_dim
from ember._tensor import Tensor
from ember._tensor_core import Size

__all__ = [
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
    "broadcast_to", "column_stack", "diff", "dsplit", "dstack", "hsplit", "hstack", "moveaxis",
    "ravel", "row_stack", "swapaxes", "swapdims", "take_along_dim", "tensor_split",
    "unravel_index", "vsplit", "vstack",
]  # fmt: skip

Shape = tuple[int, ...]


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """transpose under NumPy's name."""
    return shape_ops.transpose(input, axis0, axis1)


def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """transpose under another name."""
    return shape_ops.transpose(input, dim0, dim1)


def moveaxis(
    input: Tensor, source: int | Sequence[int], destination: int | Sequence[int]
) -> Tensor:
    """movedim under NumPy's name."""
    return shape_ops.movedim(input, source, destination)


def ravel(input: Tensor) -> Tensor:
    """The tensor as 1-d (a view when its strides allow, else a copy)."""
    return shape_ops.reshape(input, -1)


def _at_least(rank: int, args: tuple[Any, ...]) -> Any:
    single = len(args) == 1 and isinstance(args[0], Tensor)
    tensors = (args[0],) if single else tuple(args[0] if len(args) == 1 else args)
    out = []
    for t in tensors:
        n = len(t._shape)
        if n >= rank:
            out.append(shape_ops._alias(t))
        elif rank == 3 and n == 2:
            out.append(shape_ops.unsqueeze(t, -1))
        elif rank == 3 and n == 1:
            out.append(shape_ops.view(t, 1, t._shape[0], 1))
        else:
            out.append(shape_ops.view(t, *((1,) * (rank - n) + tuple(t._shape))))
    return out[0] if single else tuple(out)


def atleast_1d(*tensors: Any) -> Any:
    """The tensor (or each) viewed with at least 1 dim."""
    return _at_least(1, tensors)


def atleast_2d(*tensors: Any) -> Any:
    """The tensor (or each) viewed with at least 2 dims (1-d becomes a row)."""
    return _at_least(2, tensors)


def atleast_3d(*tensors: Any) -> Any:
    """The tensor (or each) viewed with at least 3 dims (n -> (1, n, 1), (m, n) -> (m, n, 1))."""
    return _at_least(3, tensors)


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """cat along dim 1 (dim 0 for 1-d tensors)."""
    pieces = _at_least(1, (list(tensors),))
    return shape_ops.cat(pieces, 0 if len(pieces[0]._shape) == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """cat along dim 0 of the tensors made at least 2-d."""
    return shape_ops.cat(_at_least(2, (list(tensors),)), 0)


row_stack = vstack


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """cat along dim 2 of the tensors made at least 3-d."""
    return shape_ops.cat(_at_least(3, (list(tensors),)), 2)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """hstack of the tensors, 0-d and 1-d ones first made columns (n, 1)."""
    columns = [shape_ops.reshape(t, t.numel(), 1) if len(t._shape) <= 1 else t for t in tensors]
    return hstack(columns)


def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Views: `sections` near-equal pieces (the first ones one longer) or pieces between
    the given indices along `dim`."""
    d = wrap_dim(dim, len(input._shape), "tensor_split")
    if not input._shape:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    n = input._shape[d]
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        if spec._dtype is not _dtype.int64 or len(spec._shape) > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                f"one-dimensional tensor of dtype long, but got {spec._dtype.name} {spec.shape}"
            )
        spec = spec.item() if not spec._shape else spec.tolist()
    if isinstance(spec, int):
        if spec <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {spec}")
        base, extra = divmod(n, spec)
        bounds = [0]
        for i in range(spec):
            bounds.append(bounds[-1] + base + (1 if i < extra else 0))
    else:
        bounds = [0] + [operator.index(i) for i in spec] + [n]
    pieces = []
    for start, stop in itertools.pairwise(bounds):
        lo = min(max(start if start >= 0 else start + n, 0), n)
        hi = min(max(stop if stop >= 0 else stop + n, lo), n)
        pieces.append(shape_ops.narrow(input, d, lo, hi - lo))
    return tuple(pieces)


def _numpy_split(op: str, input: Tensor, spec: Any, dim: int, rank: int) -> tuple[Tensor, ...]:
    if len(input._shape) < rank:
        raise RuntimeError(
            f"torch.{op} requires a tensor with at least {rank} dimension, but got a tensor "
            f"with {len(input._shape)} dimensions!"
        )
    if isinstance(spec, int) and (spec == 0 or input._shape[dim] % spec):
        raise RuntimeError(
            f"torch.{op} attempted to split along dimension {dim}, but the size of the "
            f"dimension {input._shape[dim]} is not divisible by the split_size {spec}!"
        )
    return tensor_split(input, spec, dim)


def hsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """tensor_split along dim 1 (dim 0 for 1-d); an int must divide the size."""
    dim = 0 if len(input._shape) == 1 else 1
    return _numpy_split("hsplit", input, indices_or_sections, dim, 1)


def vsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """tensor_split along dim 0 of an at least 2-d tensor; an int must divide the size."""
    return _numpy_split("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """tensor_split along dim 2 of an at least 3-d tensor; an int must divide the size."""
    return _numpy_split("dsplit", input, indices_or_sections, 2, 3)


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """The shape the given shapes broadcast to (ints count as 1-d shapes)."""
    as_tuples = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    return Size(_broadcast("broadcast_shapes", *as_tuples))


def broadcast_to(input: Tensor, size: Sequence[int]) -> Tensor:
    """expand under NumPy's name (a view)."""
    return shape_ops.expand(input, *size)


def broadcast_tensors(*tensors: Any) -> tuple[Tensor, ...]:
    """Views of the tensors expanded to their common broadcast shape."""
    if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        tensors = tuple(tensors[0])
    shape = _broadcast("broadcast_tensors", *(t._shape for t in tensors))
    return tuple(shape_ops.expand(t, *shape) for t in tensors)


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """gather with `indices` broadcast against `input` outside `dim` (flattened if None)."""
    if dim is None:
        return indexing.gather(shape_ops.reshape(input, -1), 0, shape_ops.reshape(indices, -1))
    if len(input._shape) != len(indices._shape):
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {len(input._shape)} dimensions for input, and "
            f"{len(indices._shape)} dimensions for indices"
        )
    d = wrap_dim(dim, len(input._shape), "take_along_dim")
    # Broadcast outside `dim` only: along it, each keeps its own length.
    without = [
        tuple(1 if i == d else n for i, n in enumerate(s)) for s in (input._shape, indices._shape)
    ]
    outer = list(_broadcast("take_along_dim", *without))
    input_shape, index_shape = list(outer), list(outer)
    input_shape[d], index_shape[d] = input._shape[d], indices._shape[d]
    return indexing.gather(
        shape_ops.expand(input, *input_shape), d, shape_ops.expand(indices, *index_shape)
    )


def unravel_index(indices: Tensor, shape: int | Sequence[int]) -> tuple[Tensor, ...]:
    """The coordinates in `shape` of flat row-major `indices` (one int64 tensor per dim)."""
    if indices._dtype.is_floating_point or indices._dtype is _dtype.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices._dtype.name}")
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s < 0 for s in dims):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(dims)}")
    flat = conv.to(indices, _dtype.int64)
    coords: list[Tensor] = []
    for size in reversed(dims):
        coords.append(ew.remainder(flat, size))
        flat = ew.floor_divide(flat, size)
    return tuple(reversed(coords))


def diff(
    input: Tensor,
    n: int = 1,
    dim: int = -1,
    prepend: Tensor | None = None,
    append: Tensor | None = None,
) -> Tensor:
    """The n-th forward difference along `dim` (after `prepend`/`append` are joined)."""
    if not input._shape:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, len(input._shape), "diff")
    parts = [p for p in (prepend, input, append) if p is not None]
    out = shape_ops.cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        size = out._shape[d]
        if size == 0:
            break
        later, earlier = (
            shape_ops.narrow(out, d, 1, size - 1),
            shape_ops.narrow(out, d, 0, size - 1),
        )
        out = (
            ew.logical_xor(later, earlier) if out._dtype is _dtype.bool else ew.sub(later, earlier)
        )
    return conv.clone(out) if out is input else out
