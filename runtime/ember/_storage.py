"""Storage: one device buffer, shared by every tensor that views it."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember._allocator import CACHE_LIMIT, ROUND, SMALL_LIMIT, SmallBlockCache
from ember._device import device

__all__ = ["Storage"]


class Storage:
    """A device buffer plus the version counter that in-place ops bump."""

    __slots__ = (
        "__weakref__",
        "_block",
        "_cache",
        "_owner",
        "device",
        "handle",
        "nbytes",
        "ptr",
        "version",
    )

    def __init__(self, dev: device, nbytes: int) -> None:
        self._cache: SmallBlockCache | None = None  # __del__ stays safe if allocation raises
        cache = dev._cache
        # The cache's hit path, inlined (SmallBlockCache.allocate does the rest).
        if nbytes < SMALL_LIMIT:
            size = (nbytes + ROUND - 1) // ROUND * ROUND or ROUND
            blocks = cache._free.get(size)
            if blocks:
                try:
                    self.handle, self.ptr = blocks.pop()
                except IndexError:  # another thread took the last one
                    self._block, self.handle, self.ptr = cache.allocate(nbytes)
                else:
                    cache.cached_bytes -= size
                    cache.hits += 1
                    self._block = size
            else:
                self._block, self.handle, self.ptr = cache.allocate(nbytes)
        else:
            self._block, self.handle, self.ptr = cache.allocate(nbytes)
        self._cache = cache
        self._owner: object = None
        self.device = dev
        self.nbytes = nbytes
        self.version = 0

    @classmethod
    def wrap(cls, dev: device, handle: Any, ptr: int, nbytes: int, owner: object) -> Storage:
        """A storage over memory that `owner` keeps alive (a NumPy array, a DLPack capsule)."""
        self = object.__new__(cls)
        self.handle, self.ptr = handle, ptr
        self._block = nbytes
        self._cache = None
        self._owner = owner
        self.device = dev
        self.nbytes = nbytes
        self.version = 0
        return self

    def __del__(self) -> None:
        cache = self._cache
        if cache is not None:
            size = self._block
            # The cache's keep path, inlined (SmallBlockCache.release does the rest).
            if size < SMALL_LIMIT and cache.cached_bytes + size <= CACHE_LIMIT:
                blocks = cache._free.get(size)
                if blocks is not None:
                    blocks.append((self.handle, self.ptr))
                    cache.cached_bytes += size
                    return
            cache.release(size, self.handle, self.ptr)


class HostView:
    """Exposes part of a host-accessible storage to NumPy, keeping the storage alive."""

    __slots__ = ("__array_interface__", "storage")

    def __init__(
        self,
        storage: Storage,
        byte_offset: int,
        shape: tuple[int, ...],
        byte_strides: tuple[int, ...],
        np_dtype: np.dtype,
        readonly: bool = False,
    ) -> None:
        self.storage = storage
        self.__array_interface__ = {
            "version": 3,
            "data": (storage.ptr + byte_offset, readonly),
            "shape": shape,
            "strides": byte_strides,
            "typestr": np_dtype.str,
        }
