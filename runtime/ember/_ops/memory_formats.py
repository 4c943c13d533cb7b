"""Memory formats (torch.memory_format): the order in which a copy lays out its dims.

Ember tensors are strided, so a format is only the order of the strides a new tensor gets;
kernels take any strides. `clone` honours contiguous_format (row-major), preserve_format
(the input's stride order when it is dense and non-overlapping, else row-major: PyTorch's
rule) and channels_last / channels_last_3d (C innermost for 4-d / 5-d tensors)."""

from __future__ import annotations

from typing import Final

from ember._ops import _launch
from ember._tensor import Tensor, contiguous_strides, empty_tensor, make_view

__all__ = [
    "channels_last", "channels_last_3d", "contiguous_format", "memory_format", "preserve_format",
]  # fmt: skip

Order = tuple[int, ...]


class memory_format:
    """A layout a copy can be asked for; compared by identity, like torch's."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"ember.{self._name}"

    def __reduce__(self) -> str:
        return self._name


contiguous_format: Final = memory_format("contiguous_format")
preserve_format: Final = memory_format("preserve_format")
channels_last: Final = memory_format("channels_last")
channels_last_3d: Final = memory_format("channels_last_3d")


def _dense_order(t: Tensor) -> Order | None:
    """The dims from outermost to innermost stride, if `t` covers its memory exactly once."""
    order = tuple(sorted(range(len(t._shape)), key=lambda d: -t._strides[d]))
    expected = 1
    for d in reversed(order):
        if t._shape[d] != 1 and t._strides[d] != expected:
            return None
        expected *= t._shape[d]
    return order


def layout_order(t: Tensor, fmt: memory_format, op: str) -> Order:
    """The order (outermost first) of the dims of a copy of `t` in format `fmt`."""
    rank = len(t._shape)
    if fmt is channels_last or fmt is channels_last_3d:
        wanted = 4 if fmt is channels_last else 5
        if rank != wanted:
            raise RuntimeError(f"{op}: required rank {wanted} tensor to use {fmt._name} format")
        return (0, *range(2, rank), 1)
    if fmt is preserve_format:
        order = _dense_order(t) if t.numel() else None
        if order is not None:
            return order
    elif fmt is not contiguous_format:
        raise TypeError(
            f"{op}(): argument 'memory_format' must be ember.memory_format, not "
            f"{type(fmt).__name__}"
        )
    return tuple(range(rank))


def copy_in_order(t: Tensor, order: Order) -> Tensor:
    """A new tensor with `t`'s values whose strides run in `order` (outermost first)."""
    storage_shape = tuple(t._shape[d] for d in order)
    base = empty_tensor(storage_shape, t._dtype, t._device)
    strides = [0] * len(order)
    for position, d in enumerate(order):
        strides[d] = contiguous_strides(storage_shape)[position]
    out = (
        make_view(base, 0, t._shape, tuple(strides)) if order != tuple(range(len(order))) else base
    )
    _launch.copy(out, t)
    return out
