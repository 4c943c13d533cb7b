"""The OpenCL device backend: devices, buffers, copies, in-order queues as streams, events.

Devices are every OpenCL device of every platform, in platform order (`opencl:0`,
`opencl:1`, ...); `EMBER_OPENCL_PLATFORM` (an index, or a case-insensitive part of the
platform name) keeps one platform. Each device gets one context, created on first use.
A stream is one in-order command queue with profiling on (events time, and the timeline
profiler reads device intervals); a marker event is `clEnqueueMarker`, a wait a barrier.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections import deque
from typing import Any, Final

import numpy as np

from ember.plugins.sdk import DeviceBackend
from ember_opencl import profiling

try:
    import pyopencl as cl
except ImportError as error:  # reported by unavailable_reason, never raised at import
    cl = None  # type: ignore[assignment]  # the backend reports itself unavailable
    _IMPORT_ERROR: str | None = f"pyopencl is not installed ({error})"
else:
    _IMPORT_ERROR = None

__all__ = ["BACKEND", "PLATFORM_ENV", "OpenCLBackend", "OpenCLStream", "select_devices"]

PLATFORM_ENV: Final = "EMBER_OPENCL_PLATFORM"

# The allocator's split offsets are multiples of 512 bytes; sub-buffer origins must be
# multiples of the device's base address alignment (PoCL: 128 bytes), so both hold.
_ALLOCATION_ERRORS: Final = ("MEM_OBJECT_ALLOCATION_FAILURE", "OUT_OF_RESOURCES", "OUT_OF_HOST")


class OpenCLStream:
    """A native stream: one in-order, profiling-enabled command queue of one device.

    `pending` keeps pyopencl's NannyEvents of non-blocking host copies: dropping one
    blocks until its copy is done, so they live here until they complete. The queue is
    in order, so the stream is idle once its latest command has completed: `last` is the
    event of that command when it is a copy, barrier or marker; kernel launches (whose
    events aren't kept, see _launch.launch) and `queue_for` users set `dirty` instead, and
    a query then asks with a marker of its own.
    """

    __slots__ = ("__weakref__", "dirty", "index", "last", "pending", "priority", "queue")

    def __init__(self, queue: Any, index: int, priority: int) -> None:
        self.queue = queue
        self.index = index
        self.priority = priority
        self.pending: deque[Any] = deque()
        self.dirty = False
        self.last: Any = None

    def prune(self) -> None:
        """Forget the non-blocking copies that have completed."""
        pending = self.pending
        complete = cl.command_execution_status.COMPLETE
        while pending and pending[0].command_execution_status == complete:
            pending.popleft()

    def finish(self) -> None:
        """Block until everything on the queue has completed."""
        self.queue.finish()
        self.pending.clear()
        self.dirty = False
        self.last = None

    def query(self) -> bool:
        """True when everything enqueued so far has completed (never blocks)."""
        if self.dirty:
            # Commands enqueued through queue_for: a marker behind them stands for them.
            self.last = cl.enqueue_marker(self.queue)
            self.dirty = False
        last = self.last
        if last is None:
            return True
        self.queue.flush()
        if last.command_execution_status != cl.command_execution_status.COMPLETE:
            return False
        self.last = None
        self.pending.clear()
        return True

    def __repr__(self) -> str:
        return f"<OpenCLStream opencl:{self.index} {self.queue.device.name!r}>"


def _platform_filter(platforms: list[Any], choice: str) -> list[Any]:
    """The platforms that `choice` (an index or a part of the name) selects."""
    text = choice.strip()
    if text.isdigit():
        index = int(text)
        if index >= len(platforms):
            raise ValueError(
                f"{PLATFORM_ENV}={choice!r}: there are only {len(platforms)} OpenCL platform(s)"
            )
        return [platforms[index]]
    found = [p for p in platforms if text.lower() in p.name.lower()]
    if not found:
        names = ", ".join(repr(p.name) for p in platforms) or "none"
        raise ValueError(f"{PLATFORM_ENV}={choice!r} matches no OpenCL platform (found: {names})")
    return found


def select_devices(platforms: list[Any], choice: str | None) -> list[Any]:
    """Every device of the chosen platforms (all when `choice` is empty), in platform order."""
    if choice:
        platforms = _platform_filter(platforms, choice)
    devices: list[Any] = []
    for platform in platforms:
        try:
            devices.extend(platform.get_devices())
        except cl.Error:  # a platform without devices raises DEVICE_NOT_FOUND
            continue
    return devices


class OpenCLBackend(DeviceBackend):
    """OpenCL devices through pyopencl; asynchronous, device memory not host-addressable."""

    type = "opencl"
    host_accessible = False
    synchronous = False

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._devices: list[Any] | None = None
        self._reason: str | None = None
        self._contexts: dict[int, Any] = {}
        self._streams: dict[int, weakref.WeakSet[OpenCLStream]] = {}

    # -- inventory ----------------------------------------------------------------------

    def _discover(self) -> list[Any]:
        if self._devices is not None:
            return self._devices
        if cl is None:
            self._reason, self._devices = _IMPORT_ERROR, []
            return self._devices
        from ember_opencl._programs import default_pocl_cache  # needs pyopencl

        default_pocl_cache()
        try:
            platforms = cl.get_platforms()
        except cl.Error as error:  # the ICD loader found no platform at all
            platforms, self._reason = [], f"no OpenCL platform found ({error})"
        try:
            self._devices = select_devices(platforms, os.environ.get(PLATFORM_ENV))
        except ValueError as error:
            self._reason, self._devices = str(error), []
            return self._devices
        if not self._devices and self._reason is None:
            self._reason = (
                "no OpenCL device found (no ICD platform installed; "
                "`pip install ember-opencl[pocl]` brings a CPU runtime)"
                if not platforms
                else "the OpenCL platforms have no devices"
            )
        return self._devices

    def device_count(self) -> int:
        return len(self._discover())

    def unavailable_reason(self) -> str | None:
        self._discover()
        return self._reason

    def runs_on_host(self, index: int) -> bool:
        # PoCL's pthread device (CL_DEVICE_TYPE_CPU) computes on the host's own cores.
        return bool(self.cl_device(index).type & cl.device_type.CPU)

    def cl_device(self, index: int) -> Any:
        """The pyopencl Device behind `opencl:index`."""
        return self._discover()[index]

    def context(self, index: int) -> Any:
        """The one cl.Context of device `index` (created on first use)."""
        ctx = self._contexts.get(index)
        if ctx is None:
            with self._lock:
                ctx = self._contexts.get(index)
                if ctx is None:
                    ctx = self._contexts[index] = cl.Context([self.cl_device(index)])
        return ctx

    # -- memory -------------------------------------------------------------------------

    def allocate(self, nbytes: int, index: int) -> tuple[Any, int]:
        dev = self.cl_device(index)
        # PoCL reserves memory lazily, so an oversize request must be refused up front.
        limit = min(dev.max_mem_alloc_size, dev.global_mem_size)
        if nbytes > limit:
            raise MemoryError(
                f"opencl:{index} ({dev.name}): cannot allocate {nbytes} bytes "
                f"(the largest allocation is {limit} bytes)"
            )
        try:
            buffer = cl.Buffer(self.context(index), cl.mem_flags.READ_WRITE, max(nbytes, 1))
        except (cl.MemoryError, cl.RuntimeError) as error:
            if isinstance(error, cl.RuntimeError) and not any(
                code in str(error) for code in _ALLOCATION_ERRORS
            ):
                raise
            raise MemoryError(
                f"opencl:{index} ({dev.name}): failed to allocate {nbytes} bytes ({error})"
            ) from error
        return buffer, buffer.int_ptr

    def free(self, handle: Any, nbytes: int, index: int) -> None:
        # Dropping the last reference releases the cl_mem; OpenCL itself keeps it alive
        # for commands still in flight, so nothing has to wait here.
        return None

    def region(self, handle: Any, byte_offset: int, nbytes: int, index: int) -> tuple[Any, int]:
        if nbytes == 0:
            return handle, handle.int_ptr + byte_offset
        return handle.get_sub_region(byte_offset, nbytes), handle.int_ptr + byte_offset

    def copy_from_host(
        self,
        handle: Any,
        byte_offset: int,
        source: np.ndarray,
        index: int,
        stream: OpenCLStream,
        non_blocking: bool,
    ) -> None:
        if source.nbytes == 0:
            return
        start = time.perf_counter_ns()
        event = cl.enqueue_copy(
            stream.queue, handle, source, dst_offset=byte_offset, is_blocking=not non_blocking
        )
        _after_copy(stream, event, non_blocking, "copy_from_host", start)

    def copy_to_host(
        self,
        handle: Any,
        byte_offset: int,
        target: np.ndarray,
        index: int,
        stream: OpenCLStream,
        non_blocking: bool,
    ) -> None:
        if target.nbytes == 0:
            return
        start = time.perf_counter_ns()
        event = cl.enqueue_copy(
            stream.queue, target, handle, src_offset=byte_offset, is_blocking=not non_blocking
        )
        _after_copy(stream, event, non_blocking, "copy_to_host", start)

    def synchronize(self, index: int) -> None:
        for stream in list(self._streams.get(index, ())):
            stream.finish()

    # -- streams and events -------------------------------------------------------------

    def stream_create(self, index: int, priority: int, default: bool) -> OpenCLStream:
        queue = cl.CommandQueue(
            self.context(index),
            self.cl_device(index),
            properties=cl.command_queue_properties.PROFILING_ENABLE,
        )
        stream = OpenCLStream(queue, index, priority)
        with self._lock:
            self._streams.setdefault(index, weakref.WeakSet()).add(stream)
        return stream

    def stream_query(self, stream: OpenCLStream) -> bool:
        return stream.query()

    def stream_synchronize(self, stream: OpenCLStream) -> None:
        stream.finish()

    def stream_wait_marker(self, stream: OpenCLStream, marker: Any) -> None:
        stream.last = cl.enqueue_barrier(stream.queue, wait_for=[marker])
        stream.dirty = False

    def event_record(self, stream: OpenCLStream, index: int, enable_timing: bool) -> Any:
        marker = stream.last = cl.enqueue_marker(stream.queue)
        stream.dirty = False
        # Submit what is queued so that the marker can complete without a later finish.
        stream.queue.flush()
        return marker

    def event_query(self, marker: Any) -> bool:
        return bool(marker.command_execution_status == cl.command_execution_status.COMPLETE)

    def event_synchronize(self, marker: Any) -> None:
        marker.wait()

    def event_elapsed_ms(self, start: Any, end: Any) -> float:
        return float(end.profile.end - start.profile.end) / 1e6


def _after_copy(
    stream: OpenCLStream, event: Any, non_blocking: bool, name: str, start_ns: int
) -> None:
    """Keep a non-blocking copy's NannyEvent (and so its host array) until it completes."""
    # In order: a blocking copy has returned, so everything before it is done too.
    stream.last = event if non_blocking else None
    stream.dirty = False
    if non_blocking:
        stream.prune()
        stream.pending.append(event)
        stream.queue.flush()
    recorder = profiling.ACTIVE
    if recorder is not None:
        recorder.add(name, start_ns, time.perf_counter_ns(), event)


#: The one backend of this process (the plugin returns it; kernels ask it for contexts).
BACKEND: Final = OpenCLBackend()
