"""What the fused kernels of every device take: float32 rows of the last dim."""

from __future__ import annotations

import ember
from ember import Tensor

__all__ = ["fast", "rows_cols"]


def fast(*tensors: Tensor) -> bool:
    """float32, contiguous from the storage's start: what the kernels read; anything else
    runs the op's composite."""
    return all(
        t.dtype == ember.float32 and t.is_contiguous() and t.storage_offset() == 0 for t in tensors
    )


def rows_cols(x: Tensor) -> tuple[int, int]:
    """(rows, cols) of `x` seen as rows of its last dim."""
    cols = x.shape[-1]
    return (x.numel() // cols if cols else 0), cols
