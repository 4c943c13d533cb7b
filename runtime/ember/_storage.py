"""Storage: one device buffer, shared by every tensor that views it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ember._allocator import NO_FAST_PATH, ROUND, SMALL_LIMIT, CachingAllocator, FreeLists
from ember._device import device
from ember._stream import _current

if TYPE_CHECKING:
    from ember._blocks import Block
    from ember._stream import Stream

__all__ = ["Storage"]

# ROUND is a power of two: rounding up to it is one add and one mask.
_ROUND_UP = ROUND - 1
_ROUND_MASK = -ROUND
assert ROUND & _ROUND_UP == 0


def _stream_home(alloc: CachingAllocator, dev: device) -> FreeLists:
    """The small free lists of the current stream's pool (`current_native`, inlined), on a
    device whose pools are per stream; none while frees wait for events (allocate
    processes them)."""
    streams = _current.streams
    if alloc._pending:
        return NO_FAST_PATH
    if streams and id(dev) in streams:
        return alloc.stream_small.get(id(streams[id(dev)].native), NO_FAST_PATH)
    return alloc.default_small


class Storage:
    """A device buffer plus the version counter that in-place ops bump."""

    __slots__ = (
        "__weakref__",
        "_alloc",
        "_block",
        "_home",
        "_owner",
        "_size",
        "device",
        "handle",
        "nbytes",
        "ptr",
        "version",
    )

    _alloc: CachingAllocator | None  # None: memory that `_owner` keeps alive
    _size: int  # the block's size, as the allocator rounded it
    _home: FreeLists  # the free lists the block goes back to
    _block: Block  # large blocks only
    _owner: object  # wrapped memory only: what keeps it alive

    def __init__(self, dev: device, nbytes: int) -> None:
        alloc = dev._allocator
        # The allocator's small-pool hit path, inlined: CachingAllocator.allocate does the
        # rest. `fast` is None on devices whose pools are per stream (see `_stream_home`).
        home = alloc.fast
        if home is None:
            home = _stream_home(alloc, dev)
        if nbytes < SMALL_LIMIT:
            size = (nbytes + _ROUND_UP) & _ROUND_MASK or ROUND
            blocks = home.get(size)
            if blocks:
                try:
                    self.handle, self.ptr = blocks.pop()
                except IndexError:  # another thread took the last one
                    alloc.allocate(self, nbytes)
                else:
                    self._size = size
                    self._home = home
                    allocated = alloc.allocated = alloc.allocated + size
                    if allocated > alloc.peak_allocated:
                        alloc.peak_allocated = allocated
                    self._alloc = alloc
            else:
                alloc.allocate(self, nbytes)
        else:
            alloc.allocate(self, nbytes)
        # `_owner` stays unset: only memory that another object owns (`wrap`) needs one.
        self.device = dev
        self.nbytes = nbytes
        self.version = 0

    @classmethod
    def wrap(cls, dev: device, handle: Any, ptr: int, nbytes: int, owner: object) -> Storage:
        """A storage over memory that `owner` keeps alive (a NumPy array, a DLPack capsule)."""
        self = object.__new__(cls)
        self.handle, self.ptr = handle, ptr
        self._alloc = None
        self._owner = owner
        self.device = dev
        self.nbytes = nbytes
        self.version = 0
        return self

    def record_stream(self, stream: Stream) -> None:
        """Mark the memory as used by `stream`: once freed, it is reused only after the
        work enqueued on `stream` up to the free has completed."""
        alloc = self._alloc
        if alloc is not None:
            alloc.record_stream(self, stream)

    def __del__(self) -> None:
        alloc = self._alloc
        if alloc is not None:
            size = self._size
            # The allocator's keep path, inlined (CachingAllocator.release does the rest).
            blocks = self._home.get(size)
            if blocks is not None:
                blocks.append((self.handle, self.ptr))
                alloc.allocated -= size
                return
            alloc.release(self)


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
