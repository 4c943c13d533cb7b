"""The device contract: what a device plugin implements.

A plugin's `ember_devices` hook returns one `DeviceBackend` per device type it brings.
Methods with a default body document what a backend may skip.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["DeviceBackend"]


class DeviceBackend:
    """Memory, copies and synchronisation of one device type (all of its indices)."""

    #: the device type name, as in "type:index"
    type: str = ""
    #: True when storage addresses are host pointers that NumPy may view (zero-copy interop)
    host_accessible: bool = False

    def device_count(self) -> int:
        """How many devices of this type exist (0 when unavailable)."""
        raise NotImplementedError

    def unavailable_reason(self) -> str | None:
        """None when the device type is usable, else a sentence saying why not."""
        return None

    def allocate(self, nbytes: int, index: int) -> tuple[Any, int]:
        """Allocate `nbytes` on device `index`; return (handle, host address or 0)."""
        raise NotImplementedError

    def free(self, handle: Any, nbytes: int, index: int) -> None:
        """Release memory from `allocate`. Called from Storage finalisation."""

    def copy_from_host(self, handle: Any, byte_offset: int, source: np.ndarray, index: int) -> None:
        """Copy a C-contiguous host array into device memory at `byte_offset`."""
        raise NotImplementedError

    def copy_to_host(self, handle: Any, byte_offset: int, target: np.ndarray, index: int) -> None:
        """Copy device memory at `byte_offset` into a C-contiguous host array."""
        raise NotImplementedError

    def wrap_host_array(self, array: np.ndarray) -> tuple[Any, int] | None:
        """Adopt a host array's memory without copying, or None when the device can't."""
        return None

    def synchronize(self, index: int) -> None:
        """Wait for all work queued on device `index`. Synchronous devices skip this."""

    def set_num_threads(self, n: int) -> None:
        """Intra-op thread count, for devices that compute on host threads."""

    def get_num_threads(self) -> int | None:
        """Intra-op thread count, or None when the device has no such notion."""
        return None

    def memory_stats(self, index: int) -> dict[str, int]:
        """Allocator counters (names as in PyTorch's memory_stats where they overlap)."""
        return {}

    def empty_cache(self, index: int) -> None:
        """Return cached, unused memory to the system."""
