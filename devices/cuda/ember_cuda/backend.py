"""The CUDA device backend: the availability probe, and memory, copies, streams and events
through CuPy's raw runtime bindings (`cupy_backends.cuda.api.runtime`, never `cupy`).

Importing this module imports nothing of CuPy: the probe (`unavailable_reason`,
`device_count`) imports only the runtime bindings (~10 ms), on first call, so a CPU-only
machine pays for the plugin a few milliseconds and learns exactly why there is no device:
CuPy not installed, no driver (or one too old for CuPy's CUDA runtime:
`cudaErrorInsufficientDriver`, 35), or a driver without a GPU (`cudaErrorNoDevice`, 100).

NOT YET RUN ON A GPU: everything below `# -- memory` was written against CuPy's runtime
API on a machine without one; the GPU session proves (or fixes) it. No kernel is
registered until it has been (see plugin.py).
"""

from __future__ import annotations

import importlib
import threading
from typing import Any, Final

import numpy as np

from ember.plugins.sdk import DeviceBackend

__all__ = ["BACKEND", "CudaBackend", "CudaStream"]

INSTALL_HINT: Final = (
    "pip install 'ember-cuda[cuda13]' for a CUDA 13 driver, 'ember-cuda[cuda12]' for CUDA 12"
)
_INSUFFICIENT_DRIVER: Final = 35  # cudaErrorInsufficientDriver
_NO_DEVICE: Final = 100  # cudaErrorNoDevice
# cudaMemcpyKind; cudaStreamNonBlocking; cudaEventDisableTiming
_HOST_TO_DEVICE: Final = 1
_DEVICE_TO_HOST: Final = 2
_STREAM_NON_BLOCKING: Final = 1
_EVENT_DISABLE_TIMING: Final = 2
_SUCCESS: Final = 0


def _runtime() -> Any:
    """CuPy's raw CUDA runtime bindings (imports no `cupy`)."""
    # Through importlib: CuPy's Cython bindings have no type information to check.
    return importlib.import_module("cupy_backends.cuda.api.runtime")


def _cuda_version(encoded: int) -> str:
    """CUDA's 1000 * major + 10 * minor as `major.minor`."""
    return f"{encoded // 1000}.{encoded % 1000 // 10}"


def probe() -> tuple[int, str | None]:
    """(device count, None) when CUDA devices are usable, else (0, the reason)."""
    try:
        runtime = _runtime()
    except ImportError as error:
        return 0, f"CuPy is not installed ({error}); {INSTALL_HINT}"
    try:
        count = int(runtime.getDeviceCount())
    except runtime.CUDARuntimeError as error:
        return 0, _runtime_error_reason(runtime, error)
    if count == 0:
        return 0, "the CUDA driver reports no devices (cudaGetDeviceCount returned 0)"
    return count, None


def _runtime_error_reason(runtime: Any, error: Any) -> str:
    status = getattr(error, "status", None)
    if status == _INSUFFICIENT_DRIVER:
        try:
            driver = int(runtime.driverGetVersion())
        except runtime.CUDARuntimeError:
            driver = 0
        needs = _cuda_version(int(runtime.runtimeGetVersion()))
        found = (
            "no NVIDIA driver is installed"
            if driver == 0
            else f"the NVIDIA driver supports CUDA {_cuda_version(driver)}, older than CuPy's "
            f"runtime (CUDA {needs}); install the matching extra ({INSTALL_HINT})"
        )
        return f"{found} (cudaGetDeviceCount: {error}, status {status})"
    if status == _NO_DEVICE:
        return f"the NVIDIA driver found no GPU (cudaGetDeviceCount: {error}, status {status})"
    return f"the CUDA runtime failed (cudaGetDeviceCount: {error}, status {status})"


class CudaStream:
    """A native stream: one non-blocking CUDA stream of one device.

    `pending` keeps the host arrays of non-blocking copies alive until the stream has
    passed them (NOT YET RUN ON A GPU).
    """

    __slots__ = ("__weakref__", "handle", "index", "pending", "priority")

    def __init__(self, handle: int, index: int, priority: int) -> None:
        self.handle = handle
        self.index = index
        self.priority = priority
        self.pending: list[np.ndarray] = []

    def __repr__(self) -> str:
        return f"<CudaStream cuda:{self.index} 0x{self.handle:x}>"


class CudaBackend(DeviceBackend):
    """NVIDIA GPUs through the CUDA runtime; asynchronous, memory not host-addressable."""

    type = "cuda"
    host_accessible = False
    synchronous = False

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._probed: tuple[int, str | None] | None = None

    # -- inventory ----------------------------------------------------------------------

    def _probe(self) -> tuple[int, str | None]:
        probed = self._probed
        if probed is None:
            with self._lock:
                probed = self._probed
                if probed is None:
                    probed = self._probed = probe()
        return probed

    def device_count(self) -> int:
        return self._probe()[0]

    def unavailable_reason(self) -> str | None:
        return self._probe()[1]

    def runs_on_host(self, index: int) -> bool:
        return False

    # -- memory (NOT YET RUN ON A GPU) ---------------------------------------------------

    def allocate(self, nbytes: int, index: int) -> tuple[Any, int]:
        runtime = _runtime()
        runtime.setDevice(index)
        try:
            pointer = int(runtime.malloc(max(nbytes, 1)))
        except runtime.CUDARuntimeError as error:
            raise MemoryError(
                f"cuda:{index}: failed to allocate {nbytes} bytes ({error})"
            ) from error
        return pointer, 0

    def free(self, handle: Any, nbytes: int, index: int) -> None:
        runtime = _runtime()
        runtime.setDevice(index)
        runtime.free(handle)

    def region(self, handle: Any, byte_offset: int, nbytes: int, index: int) -> tuple[Any, int]:
        # A device address: a block inside an allocation is pointer arithmetic.
        return handle + byte_offset, 0

    def copy_from_host(
        self,
        handle: Any,
        byte_offset: int,
        source: np.ndarray,
        index: int,
        stream: CudaStream,
        non_blocking: bool,
    ) -> None:
        self._copy(handle + byte_offset, source, _HOST_TO_DEVICE, stream, non_blocking)

    def copy_to_host(
        self,
        handle: Any,
        byte_offset: int,
        target: np.ndarray,
        index: int,
        stream: CudaStream,
        non_blocking: bool,
    ) -> None:
        self._copy(handle + byte_offset, target, _DEVICE_TO_HOST, stream, non_blocking)

    def _copy(
        self, device: int, host: np.ndarray, kind: int, stream: CudaStream, non_blocking: bool
    ) -> None:
        if host.nbytes == 0:
            return
        runtime = _runtime()
        host_address = host.ctypes.data
        dst, src = (device, host_address) if kind == _HOST_TO_DEVICE else (host_address, device)
        runtime.memcpyAsync(dst, src, host.nbytes, kind, stream.handle)
        if non_blocking:
            stream.pending.append(host)
        else:
            runtime.streamSynchronize(stream.handle)
            stream.pending.clear()

    def synchronize(self, index: int) -> None:
        runtime = _runtime()
        runtime.setDevice(index)
        runtime.deviceSynchronize()

    # -- streams and events (NOT YET RUN ON A GPU) ---------------------------------------

    def stream_create(self, index: int, priority: int, default: bool) -> CudaStream:
        runtime = _runtime()
        runtime.setDevice(index)
        # CUDA: lower numbers are higher priorities; ember's priority 0 is the default.
        handle = int(runtime.streamCreateWithPriority(_STREAM_NON_BLOCKING, -priority))
        return CudaStream(handle, index, priority)

    def stream_query(self, stream: CudaStream) -> bool:
        done = bool(_runtime().streamQuery(stream.handle) == _SUCCESS)
        if done:
            stream.pending.clear()
        return done

    def stream_synchronize(self, stream: CudaStream) -> None:
        _runtime().streamSynchronize(stream.handle)
        stream.pending.clear()

    def stream_wait_marker(self, stream: CudaStream, marker: Any) -> None:
        _runtime().streamWaitEvent(stream.handle, marker)

    def event_record(self, stream: CudaStream, index: int, enable_timing: bool) -> Any:
        runtime = _runtime()
        flags = 0 if enable_timing else _EVENT_DISABLE_TIMING
        event = int(runtime.eventCreateWithFlags(flags))
        runtime.eventRecord(event, stream.handle)
        return event

    def event_query(self, marker: Any) -> bool:
        return bool(_runtime().eventQuery(marker) == _SUCCESS)

    def event_synchronize(self, marker: Any) -> None:
        _runtime().eventSynchronize(marker)

    def event_elapsed_ms(self, start: Any, end: Any) -> float:
        return float(_runtime().eventElapsedTime(start, end))


#: The one backend of this process (the plugin returns it).
BACKEND: Final = CudaBackend()
