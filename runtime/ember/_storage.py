"""Storage: one device buffer, shared by every tensor that views it."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember._device import device

__all__ = ["Storage"]


class Storage:
    """A device buffer plus the version counter that in-place ops bump."""

    __slots__ = ("__weakref__", "_backend", "_owner", "device", "handle", "nbytes", "ptr", "version")

    def __init__(self, dev: device, nbytes: int) -> None:
        backend = dev._backend
        self.handle, self.ptr = backend.allocate(nbytes, dev.index)
        self._backend = backend
        self._owner: object = None
        self.device = dev
        self.nbytes = nbytes
        self.version = 0

    @classmethod
    def wrap(cls, dev: device, handle: Any, ptr: int, nbytes: int, owner: object) -> Storage:
        """A storage over memory that `owner` keeps alive (a NumPy array, a DLPack capsule)."""
        self = object.__new__(cls)
        self.handle, self.ptr = handle, ptr
        self._backend = dev._backend
        self._owner = owner
        self.device = dev
        self.nbytes = nbytes
        self.version = 0
        return self

    def __del__(self) -> None:
        if self._owner is None:
            self._backend.free(self.handle, self.nbytes, self.device.index)


class HostView:
    """Exposes part of a host-accessible storage to NumPy, keeping the storage alive."""

    __slots__ = ("__array_interface__", "storage")

    def __init__(
        self, storage: Storage, byte_offset: int, shape: tuple[int, ...],
        byte_strides: tuple[int, ...], np_dtype: np.dtype, readonly: bool = False,
    ) -> None:
        self.storage = storage
        self.__array_interface__ = {
            "version": 3,
            "data": (storage.ptr + byte_offset, readonly),
            "shape": shape,
            "strides": byte_strides,
            "typestr": np_dtype.str,
        }
