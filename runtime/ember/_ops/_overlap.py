"""PyTorch's memory-overlap rules for ops that write into an existing tensor."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ember._tensor import Tensor

__all__ = ["check_no_overlap"]


def _extent(t: Tensor) -> tuple[int, int]:
    """First and last element offsets that `t` touches in its storage (strides are >= 0)."""
    last = t._offset + sum((n - 1) * s for n, s in zip(t._shape, t._strides, strict=True))
    return t._offset, last


def check_no_overlap(op: str, out: Tensor, inputs: Iterable[Any]) -> None:
    """Raise unless `out` is safe to write while reading `inputs`.

    Two cases give silently wrong results in an elementwise kernel, so PyTorch rejects them:
    an output with several elements at one address (a broadcast view), and an input that
    shares memory with the output without being exactly the output.
    """
    if out.numel() > 1 and any(
        s == 0 and n > 1 for n, s in zip(out._shape, out._strides, strict=True)
    ):
        raise RuntimeError(
            f"{op}: unsupported operation: more than one element of the written-to tensor "
            "refers to a single memory location. Please clone() the tensor before performing "
            "the operation."
        )
    for x in inputs:
        if not isinstance(x, Tensor) or x._storage is not out._storage or not x.numel():
            continue
        if x._offset == out._offset and x._strides == out._strides and x._shape == out._shape:
            continue  # the same elements: an in-place op reads each one before writing it
        first, last = _extent(x)
        out_first, out_last = _extent(out)
        if first <= out_last and out_first <= last:
            raise RuntimeError(
                f"{op}: unsupported operation: some elements of the input tensor and the "
                "written-to tensor refer to a single memory location. Please clone() the "
                "tensor before performing the operation."
            )
