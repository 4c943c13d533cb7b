"""searchsorted and bucketize: a binary search written in ember ops.

All values search at once: each holds a [low, high) window into its row of boundaries and
halves it per step with one gather, so the cost is O(n log m) for n values in m boundaries
(comparing every value with every boundary would be O(n m)). A value goes right of a
boundary unless the boundary is >= it (> for `right`), PyTorch's comparison, so NaN goes
after every boundary.
"""

from __future__ import annotations

from typing import Any

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import creation, indexing, unary
from ember._ops import elementwise as ew
from ember._ops import shape as shape_ops
from ember._tensor import Tensor

__all__ = ["bucketize", "searchsorted"]


def searchsorted(
    sorted_sequence: Tensor,
    input: Any,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Tensor | None = None,
) -> Tensor:
    """Where each of `input` would be inserted into the last dim of `sorted_sequence` to keep
    it sorted: the first such place, or the last with `right` (or side="right")."""
    name = "torch.searchsorted()"
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{name}: side can only be 'left' or 'right' but got {side}")
        if side == "left" and right:
            raise RuntimeError(
                f"{name}: side and right can't be set to opposites, got side of left while "
                "right was True"
            )
        right = side == "right"
    boundaries = sorted_sequence.detach()
    if sorter is not None:
        if tuple(sorter._shape) != tuple(boundaries._shape):
            raise RuntimeError(
                f"{name}: boundary and sorter must have the same size, but got boundary "
                f"tensor {list(boundaries._shape)}and got sorter tensor {list(sorter._shape)}"
            )
        boundaries = indexing.gather(boundaries, -1, sorter)
    scalar = not isinstance(input, Tensor)
    values = creation.tensor(input, device=boundaries._device) if scalar else input.detach()
    if boundaries.ndim > 1 and tuple(boundaries._shape[:-1]) != tuple(values._shape[:-1]):
        raise RuntimeError(
            f"{name}: boundaries tensor should be 1 dimension or the first N-1 dimensions of "
            "boundaries tensor and input value tensor must match, but we got boundaries "
            f"tensor {list(boundaries._shape)} and input value tensor {list(values._shape)}"
        )
    out_dtype = _dtype.int32 if out_int32 else _dtype.int64
    if boundaries.ndim == 0:
        raise RuntimeError(
            f"{name}: boundaries tensor should have positive dimension, but got 0 dimension"
        )
    positions = _search(boundaries, values, right)
    return conv.cast(positions, out_dtype)


def bucketize(
    input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False
) -> Tensor:
    """The bucket of each of `input` among the 1-d, ascending `boundaries` (searchsorted)."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def _search(boundaries: Tensor, values: Tensor, right: bool) -> Tensor:
    """int64 insertion positions, shaped like `values`."""
    count = boundaries._shape[-1]
    if boundaries.ndim == 1:
        flat = shape_ops.reshape(values, -1)
    else:
        flat = values if values.ndim else shape_ops.reshape(values, 1)
    low = creation.zeros(flat._shape, dtype=_dtype.int64, device=values._device)
    if count == 0 or flat.numel() == 0:
        return shape_ops.reshape(low, *values._shape)
    high = creation.full(flat._shape, count, dtype=_dtype.int64, device=values._device)
    goes_after = ew.gt if right else ew.ge  # the boundary ends the search to its left
    for _ in range(count.bit_length()):
        middle = ew.floor_divide(ew.add(low, high), 2)
        probe = indexing.gather(boundaries, -1, unary.clamp(middle, max=count - 1))
        searching = ew.lt(low, high)
        rightward = ew.logical_and(searching, unary.logical_not(goes_after(probe, flat)))
        leftward = ew.logical_and(searching, unary.logical_not(rightward))
        low = unary.where(rightward, ew.add(middle, 1), low)
        high = unary.where(leftward, middle, high)
    return shape_ops.reshape(low, *values._shape)
