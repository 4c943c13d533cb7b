"""GradBucket: what a DistributedDataParallel communication hook is handed.

A bucket is one flat tensor that holds several parameters' gradients back to back (views
of it are the per-parameter gradients). A hook reduces `buffer()` across the ranks and
returns a Future of the reduced flat tensor, as `torch.distributed.GradBucket`'s users do.
"""

from __future__ import annotations

from collections.abc import Sequence

from ember._tensor import Tensor


class GradBucket:
    """One bucket of gradients: `index()`, `buffer()`, `gradients()`, `parameters()`,
    `is_last()`, `set_buffer()`."""

    __slots__ = ("_buffer", "_index", "_is_last", "_parameters", "_views")

    def __init__(
        self,
        index: int,
        buffer: Tensor,
        views: Sequence[Tensor],
        parameters: Sequence[Tensor],
        is_last: bool,
    ) -> None:
        self._index = index
        self._buffer = buffer
        self._views = list(views)
        self._parameters = list(parameters)
        self._is_last = is_last

    def index(self) -> int:
        """The bucket's position in launch order (0 is reduced first)."""
        return self._index

    def buffer(self) -> Tensor:
        """The flat gradient tensor to reduce (the bucket's storage, not a copy)."""
        return self._buffer

    def gradients(self) -> list[Tensor]:
        """Each parameter's gradient, as a shaped view of `buffer()`."""
        return list(self._views)

    def parameters(self) -> list[Tensor]:
        """The parameters whose gradients the bucket holds, in bucket order."""
        return list(self._parameters)

    def is_last(self) -> bool:
        """Whether this is the last bucket of the backward pass."""
        return self._is_last

    def set_buffer(self, buffer: Tensor) -> None:
        """Replace the bucket's contents with `buffer` (same number of elements)."""
        if buffer.numel() != self._buffer.numel():
            raise ValueError(
                f"GradBucket.set_buffer: the bucket holds {self._buffer.numel()} elements, "
                f"got a tensor of {buffer.numel()}"
            )
        self._buffer.copy_(buffer.reshape(self._buffer.shape))

    def __repr__(self) -> str:
        return (
            f"GradBucket(index={self._index}, parameters={len(self._parameters)}, "
            f"numel={self._buffer.numel()}, dtype={self._buffer.dtype})"
        )
