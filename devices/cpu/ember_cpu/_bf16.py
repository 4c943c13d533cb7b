"""bfloat16 for the kernel families whose C code has no bfloat16 loops of its own.

Such a kernel runs its float32 loop on a float32 copy of each bfloat16 storage: widening
is exact, and outputs are rounded back once (to nearest even, as c10::BFloat16), so the
result is the float computation PyTorch's cpu kernels do for bfloat16. The copy spans the
whole storage, so the plan's offsets and strides apply to it unchanged (scaled to 4 bytes).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

import ember
from ember.plugins.sdk import Storage
from ember_cpu._lib import check, lib

__all__ = ["FLOAT32_INDEX", "is_bf16", "widened"]

FLOAT32_INDEX: Final = ember.float32.index
_WIDEN: Final = lib.em_kernel_id(b"copy.float32.bfloat16")
_NARROW: Final = lib.em_kernel_id(b"copy.bfloat16.float32")


def is_bf16(dt: ember.dtype) -> bool:
    return dt is ember.bfloat16


@contextmanager
def widened(storage: Storage, *, write_back: bool = False) -> Iterator[int]:
    """The address of a float32 copy of a bfloat16 storage; with `write_back`, the copy is
    rounded back into the storage when the block ends without an error."""
    count = storage.nbytes // 2
    nbytes = max(count * 4, 4)
    ptr = lib.em_alloc(nbytes)
    if not ptr:
        raise MemoryError(f"cpu: failed to allocate {nbytes} bytes for a bfloat16 widening")
    try:
        if count:
            check(lib.em_flat2(_WIDEN, count, ptr, storage.ptr), "bfloat16 widening")
        yield ptr
        if write_back and count:
            check(lib.em_flat2(_NARROW, count, storage.ptr, ptr), "bfloat16 narrowing")
    finally:
        lib.em_free(ptr, nbytes)
