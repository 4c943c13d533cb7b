"""Storage: one device buffer, shared by every tensor that views it."""

from __future__ import annotations

import numpy as np

from ember._allocator import NO_FAST_PATH, ROUND, SMALL_LIMIT, CachingAllocator, FreeLists
from ember._cstorage import Storage, configure
from ember._device import device
from ember._stream import _current

__all__ = ["HostView", "Storage"]


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


# The type itself is C (`_cstorage.c`): its allocation and free paths are what every op
# result pays. It takes small blocks from, and returns them to, the free lists above
# without calling into the allocator, which owns everything else.
configure(SMALL_LIMIT, ROUND, _stream_home)


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
            # A void typestr ("<V2": ml_dtypes' bfloat16) would lose the dtype: expose the
            # bits as unsigned integers, which `Tensor._host_array` views back.
            "typestr": f"<u{np_dtype.itemsize}" if np_dtype.kind == "V" else np_dtype.str,
        }
