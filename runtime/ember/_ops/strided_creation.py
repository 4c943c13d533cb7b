"""empty_strided: uninitialised memory viewed with the strides asked for."""

from __future__ import annotations

from typing import Any

from ember import _dtype as dtypes
from ember._device import DeviceLike
from ember._ops import creation, shape
from ember._tensor import Tensor

__all__ = ["empty_strided"]


def empty_strided(
    size: Any, stride: Any, *, dtype: dtypes.dtype | None = None,
    device: DeviceLike | None = None, requires_grad: bool = False,
) -> Tensor:  # fmt: skip
    """Uninitialised memory viewed with `stride` (as PyTorch, sized to the largest offset)."""
    sizes, strides = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(sizes) != len(strides):
        raise RuntimeError(
            f"empty_strided: mismatch in length of strides and shape ({len(sizes)} sizes, "
            f"{len(strides)} strides)"
        )
    if any(n < 0 for n in sizes) or any(s < 0 for s in strides):
        raise RuntimeError(f"empty_strided: negative size or stride in {sizes}, {strides}")
    extent = 0 if 0 in sizes else 1 + sum((n - 1) * s for n, s in zip(sizes, strides, strict=True))
    base = creation.empty(extent, dtype=dtype, device=device)
    out = shape.as_strided(base, sizes, strides)
    return out.requires_grad_(True) if requires_grad else out
