"""The device contract: what a device plugin implements.

A plugin's `ember_devices` hook returns one `DeviceBackend` per device type it brings.
Methods with a default body document what a backend may skip.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

__all__ = ["DeviceBackend"]


class DeviceBackend:
    """Memory, copies and synchronisation of one device type (all of its indices)."""

    #: the device type name, as in "type:index"
    type: str = ""
    #: True when storage addresses are host pointers that NumPy may view (zero-copy interop)
    host_accessible: bool = False
    #: True when every kernel and copy has finished when its Python call returns. Such a
    #: device needs no stream objects: the defaults below give it trivially complete
    #: streams and events, and its allocator keeps a single pool.
    synchronous: bool = True
    #: True for a type with one device that has no index, as PyTorch's cpu: its tensors
    #: report `device(type='cpu')` (index None, printed "cpu"), and "cpu:0" names it too.
    unindexed: bool = False
    #: Path of this device's known-failures file for the `ember.testing` conformance kit
    #: (docs/plugins/testing-a-device.md), shipped as package data; None when it has none.
    known_failures_file: str | None = None

    def device_count(self) -> int:
        """How many devices of this type exist (0 when unavailable)."""
        raise NotImplementedError

    def runs_on_host(self, index: int) -> bool:
        """True when device `index` computes on the host's CPU cores (the CPU device, an
        OpenCL CPU runtime such as PoCL): such a device is not an accelerator."""
        return self.host_accessible

    def unavailable_reason(self) -> str | None:
        """None when the device type is usable, else a sentence saying why not."""
        return None

    def allocate(self, nbytes: int, index: int) -> tuple[Any, int]:
        """Allocate `nbytes` on device `index`; return (handle, host address or 0)."""
        raise NotImplementedError

    def free(self, handle: Any, nbytes: int, index: int) -> None:
        """Release memory from `allocate`. Called from Storage finalisation."""

    def region(self, handle: Any, byte_offset: int, nbytes: int, index: int) -> tuple[Any, int]:
        """(handle, address) of `nbytes` at `byte_offset` inside an allocation.

        The caching allocator splits large allocations into blocks through this. Host
        devices get pointer arithmetic for free; a device that can't address part of an
        allocation leaves it unimplemented and its blocks are never split.
        """
        if self.host_accessible:
            return handle + byte_offset, handle + byte_offset
        raise NotImplementedError

    def copy_from_host(
        self,
        handle: Any,
        byte_offset: int,
        source: np.ndarray,
        index: int,
        stream: Any,
        non_blocking: bool,
    ) -> None:
        """Copy a C-contiguous host array into device memory at `byte_offset`.

        Enqueued on `stream` (a native from `stream_create`; None on synchronous devices).
        With `non_blocking` the call may return before the copy finished; the backend
        keeps `source` alive until it has.
        """
        raise NotImplementedError

    def copy_to_host(
        self,
        handle: Any,
        byte_offset: int,
        target: np.ndarray,
        index: int,
        stream: Any,
        non_blocking: bool,
    ) -> None:
        """Copy device memory at `byte_offset` into a C-contiguous host array.

        Enqueued on `stream`; returns once `target` holds the values
        unless `non_blocking`, in which case they are there once that stream has passed
        this point (an event recorded after the call, or a synchronize, tells) and the
        backend keeps `target` alive until then.
        """
        raise NotImplementedError

    def wrap_host_array(self, array: np.ndarray) -> tuple[Any, int] | None:
        """Adopt a host array's memory without copying, or None when the device can't."""
        return None

    def synchronize(self, index: int) -> None:
        """Wait for all work queued on device `index`. Synchronous devices skip this."""

    # -- streams and events: native objects behind ember.Stream and ember.Event ---------
    # A synchronous device keeps these defaults: a stream is None, an event marker is the
    # host clock when it was recorded, and everything is already complete.

    def stream_create(self, index: int, priority: int, default: bool) -> Any:
        """A native stream (an in-order queue) on device `index`; `default` for the one
        that ember.default_stream returns."""
        return None

    def stream_query(self, stream: Any) -> bool:
        """True when all work enqueued on `stream` has completed."""
        return True

    def stream_synchronize(self, stream: Any) -> None:
        """Block the host until all work enqueued on `stream` has completed."""

    def stream_wait_marker(self, stream: Any, marker: Any) -> None:
        """Make later work on `stream` wait for `marker` (from `event_record`)."""

    def event_record(self, stream: Any, index: int, enable_timing: bool) -> Any:
        """A native marker that completes when the work enqueued on `stream` so far has."""
        return time.perf_counter_ns()

    def event_query(self, marker: Any) -> bool:
        """True when `marker` has completed."""
        return True

    def event_synchronize(self, marker: Any) -> None:
        """Block the host until `marker` has completed."""

    def event_elapsed_ms(self, start: Any, end: Any) -> float:
        """Milliseconds between two completed timing markers."""
        return float(end - start) / 1e6

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
