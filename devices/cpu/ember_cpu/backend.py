"""The CPU device backend: raw host memory (the runtime caches it), synchronous."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.plugins.sdk import DeviceBackend
from ember_cpu._lib import ffi, lib

__all__ = ["CpuBackend"]


class CpuBackend(DeviceBackend):
    """Host memory; kernels run synchronously on the calling thread plus OpenMP workers."""

    type = "cpu"
    host_accessible = True
    unindexed = True

    def device_count(self) -> int:
        return 1

    def allocate(self, nbytes: int, index: int) -> tuple[Any, int]:
        # Raw and uncached: the runtime's caching allocator keeps freed blocks.
        ptr = lib.em_alloc(nbytes)
        if ptr == 0:
            raise MemoryError(f"cpu: failed to allocate {nbytes} bytes")
        return ptr, ptr

    def free(self, handle: Any, nbytes: int, index: int) -> None:
        lib.em_free(handle, nbytes)

    def copy_from_host(
        self,
        handle: Any,
        byte_offset: int,
        source: np.ndarray,
        index: int,
        stream: Any,
        non_blocking: bool,
    ) -> None:
        ffi.memmove(ffi.cast("char*", handle + byte_offset), source, source.nbytes)

    def copy_to_host(
        self,
        handle: Any,
        byte_offset: int,
        target: np.ndarray,
        index: int,
        stream: Any,
        non_blocking: bool,
    ) -> None:
        ffi.memmove(target, ffi.cast("char*", handle + byte_offset), target.nbytes)

    def wrap_host_array(self, array: np.ndarray) -> tuple[Any, int] | None:
        address = array.__array_interface__["data"][0]
        return address, address

    def set_num_threads(self, n: int) -> None:
        lib.em_set_num_threads(n)

    def get_num_threads(self) -> int | None:
        return int(lib.em_get_num_threads())

    def built_with_openmp(self) -> bool:
        """Whether the kernels were compiled with OpenMP: such a build imports libgomp's
        entry points (GOMP_parallel), which the dynamic symbol names in the file show."""
        from ember_cpu import _kernels

        path = getattr(_kernels, "__file__", None)
        if path is None:
            return False
        with open(path, "rb") as library:
            return b"GOMP_parallel" in library.read()
