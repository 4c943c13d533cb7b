"""pad: constant, reflect, replicate and circular padding of the trailing dims.

Constant padding concatenates filled blocks (negative amounts crop); the other modes
gather each padded dim through one index_select, so autograd needs no formula of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from ember import _dtype
from ember._ops import creation, indexing
from ember._ops import shape as shape_ops
from ember._tensor import Tensor

__all__ = ["pad"]

_MODES = ("constant", "reflect", "replicate", "circular")


def _source_index(mode: str, i: int, size: int) -> int:
    """Which input position lands at padded position i (i may be < 0 or >= size)."""
    if mode == "replicate":
        return min(max(i, 0), size - 1)
    if mode == "circular":
        return i % size
    period = 2 * (size - 1)
    j = abs(i) % period if period else 0
    return period - j if j >= size else j


def _pad_dim(input: Tensor, dim: int, before: int, after: int, mode: str) -> Tensor:
    size = input._shape[dim]
    if mode == "reflect" and (before >= size or after >= size):
        raise RuntimeError(
            f"Argument #4: Padding size should be less than the corresponding input dimension, "
            f"but got: padding ({before}, {after}) at dimension {dim} of input "
            f"{list(input._shape)}"
        )
    if mode == "circular" and (before > size or after > size):
        raise RuntimeError("Padding value causes wrapping around more than once.")
    if size == 0:
        raise RuntimeError(f"pad(): {mode} padding of an empty dimension {dim}")
    positions = [_source_index(mode, i, size) for i in range(-before, size + after)]
    index = creation.tensor(positions, dtype=_dtype.int64, device=input._device)
    return indexing.index_select(input, dim, index)


def _constant_dim(input: Tensor, dim: int, before: int, after: int, value: float) -> Tensor:
    if before < 0 or after < 0:
        start, stop = max(-before, 0), input._shape[dim] - max(-after, 0)
        input = shape_ops.narrow(input, dim, start, max(stop - start, 0))
        before, after = max(before, 0), max(after, 0)
    if not before and not after:
        return input
    pieces = []
    for amount in (before, after):
        shape = list(input._shape)
        shape[dim] = amount
        pieces.append(creation.full(shape, value, dtype=input._dtype, device=input._device))
    return shape_ops.cat([pieces[0], input, pieces[1]], dim)


def pad(
    input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None
) -> Tensor:
    """Pad the last len(pad) // 2 dims by (left, right, top, bottom, ...) amounts."""
    if mode not in _MODES:
        raise NotImplementedError(
            f"Unrecognised padding mode {mode}; expected one of {', '.join(_MODES)}"
        )
    amounts = list(pad)
    if len(amounts) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(amounts) // 2 > input.ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension"
        )
    if mode != "constant" and value:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    result = input
    for k in range(len(amounts) // 2):
        dim = input.ndim - 1 - k
        before, after = amounts[2 * k], amounts[2 * k + 1]
        if mode == "constant":
            result = _constant_dim(result, dim, before, after, 0.0 if value is None else value)
        elif before or after:
            if before < 0 or after < 0:
                raise RuntimeError(f"negative padding is not supported in {mode} mode")
            result = _pad_dim(result, dim, before, after, mode)
    return result
