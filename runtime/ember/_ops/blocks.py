"""Block structures and windows: block_diag, cartesian_prod, kron, Tensor.unfold (a view),
split_with_sizes and cumsum_, composed from cats, grids, broadcasting and as_strided."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import elementwise as ew
from ember._ops import reduction
from ember._ops import shape as shape_ops
from ember._ops._meta import wrap_dim
from ember._ops.creation import zeros
from ember._ops.repetition import meshgrid
from ember._tensor import Tensor

__all__ = ["block_diag", "cartesian_prod", "kron", "split_with_sizes"]


def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix of the tensors (0-d and 1-d ones count as one row)."""
    blocks = []
    for i, t in enumerate(tensors):
        if len(t._shape) > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} "
                f"has {len(t._shape)} dimensions"
            )
        blocks.append(shape_ops.reshape(t, 1, -1) if len(t._shape) < 2 else t)
    if not blocks:
        return zeros((0, 0))
    dt = _dtype.result_type(*blocks)
    device = blocks[0]._device
    width = sum(b._shape[1] for b in blocks)
    rows, before = [], 0
    for b in blocks:
        r, c = b._shape
        left = zeros((r, before), dtype=dt, device=device)
        right = zeros((r, width - before - c), dtype=dt, device=device)
        rows.append(shape_ops.cat([left, conv.to(b, dt), right], 1))
        before += c
    return shape_ops.cat(rows, 0)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element from each 1-d tensor, as rows (itertools.product)."""
    for t in tensors:
        if len(t._shape) != 1:
            raise RuntimeError(
                f"cartesian_prod: Expect a 1D vector, but got shape {list(t._shape)}"
            )
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return shape_ops.stack([shape_ops.reshape(g, -1) for g in grids], 1)


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: out[i*b + j] = input[i] * other[j] in every dim."""
    rank = max(len(input._shape), len(other._shape))
    a_shape = (1,) * (rank - len(input._shape)) + tuple(input._shape)
    b_shape = (1,) * (rank - len(other._shape)) + tuple(other._shape)
    a = shape_ops.reshape(input, *[v for n in a_shape for v in (n, 1)])
    b = shape_ops.reshape(other, *[v for n in b_shape for v in (1, n)])
    product = ew.mul(a, b)
    return shape_ops.reshape(product, *[x * y for x, y in zip(a_shape, b_shape, strict=True)])


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Tensor.unfold: a view of every `size`-long window along `dimension`, `step` apart,
    the window as a new last dim."""
    ndim = len(input._shape)
    d = wrap_dim(dimension, ndim, "unfold")
    length = input._shape[d] if ndim else 1
    stride = input._strides[d] if ndim else 1
    if size > length:
        raise RuntimeError(
            f"maximum size for tensor at dimension {d} is {length} but size is {size}"
        )
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    windows = (length - size) // step + 1
    shape = list(input._shape)
    strides = list(input._strides)
    if ndim:
        shape[d], strides[d] = windows, stride * step
    return shape_ops.as_strided(input, [*shape, size], [*strides, stride], input._offset)


def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """split with the list of piece sizes (they must sum to the dim's size)."""
    return shape_ops.split(input, list(split_sizes), dim)


def cumsum_(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """In-place cumsum (the result cast back to `input`'s dtype)."""
    return conv.copy_(input, reduction.cumsum(input, dim, dtype=dtype))
