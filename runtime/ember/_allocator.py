"""Small-block cache in front of a device's raw allocate/free.

Freed blocks under 1 MiB are kept in per-size free lists (sizes rounded up to 512 bytes,
as PyTorch's small pool does) and handed out again without calling into the device:
for tiny tensors the raw allocation call costs more than the op itself. Larger blocks go
straight to the backend, which may cache them itself (the CPU device does).
"""

from __future__ import annotations

from typing import Any, Final

from ember._backend import DeviceBackend

__all__ = ["SmallBlockCache"]

SMALL_LIMIT: Final = 1 << 20
ROUND: Final = 512
CACHE_LIMIT: Final = 64 << 20  # idle small blocks kept per device, at most


class SmallBlockCache:
    """Per-device free lists of small blocks; thread-safe under the GIL (list append/pop)."""

    __slots__ = ("_backend", "_free", "_index", "cached_bytes", "hits", "raw_allocations")

    def __init__(self, backend: DeviceBackend, index: int) -> None:
        self._backend = backend
        self._index = index
        self._free: dict[int, list[tuple[Any, int]]] = {}
        self.cached_bytes = 0
        self.hits = 0
        self.raw_allocations = 0

    def allocate(self, nbytes: int) -> tuple[int, Any, int]:
        """(block size, handle, address) of a block of at least `nbytes`."""
        if nbytes >= SMALL_LIMIT:
            self.raw_allocations += 1
            handle, ptr = self._backend.allocate(nbytes, self._index)
            return nbytes, handle, ptr
        size = (nbytes + ROUND - 1) // ROUND * ROUND or ROUND
        blocks = self._free.get(size)
        if blocks:
            try:
                handle, ptr = blocks.pop()
            except IndexError:  # another thread took the last one
                pass
            else:
                self.cached_bytes -= size
                self.hits += 1
                return size, handle, ptr
        self.raw_allocations += 1
        handle, ptr = self._backend.allocate(size, self._index)
        return size, handle, ptr

    def release(self, size: int, handle: Any, ptr: int) -> None:
        """Give a block back: cached when small and there is room, else freed."""
        if size < SMALL_LIMIT and self.cached_bytes + size <= CACHE_LIMIT:
            blocks = self._free.get(size)
            if blocks is None:
                blocks = self._free[size] = []
            blocks.append((handle, ptr))
            self.cached_bytes += size
            return
        self._backend.free(handle, size, self._index)

    def empty(self) -> None:
        """Free every cached block."""
        free_lists, self._free = self._free, {}
        for size, blocks in free_lists.items():
            for handle, _ in blocks:
                self._backend.free(handle, size, self._index)
        self.cached_bytes = 0
