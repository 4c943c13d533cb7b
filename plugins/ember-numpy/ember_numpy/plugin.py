"""The entry point (group `ember.plugins`, name `numpy`): the backend and its kernels."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ember.plugins.sdk import DeviceBackend, KernelRegistry, hookimpl
from ember_numpy import planned, tensors


class NumpyBackend(DeviceBackend):
    """One device, numpy:0, whose memory is NumPy byte arrays (the handles) in host RAM."""

    type = "numpy"
    host_accessible = True  # addresses are host pointers: .numpy() and DLPack share memory
    synchronous = True  # a kernel has finished when it returns: default streams and events

    def device_count(self) -> int:
        return 1

    def allocate(self, nbytes: int, index: int) -> tuple[Any, int]:
        buffer = np.empty(nbytes, np.uint8)
        return buffer, buffer.ctypes.data

    def region(self, handle: Any, byte_offset: int, nbytes: int, index: int) -> tuple[Any, int]:
        view = handle[byte_offset : byte_offset + nbytes]
        return view, view.ctypes.data

    def copy_from_host(self, handle: Any, byte_offset: int, source: np.ndarray, index: int,
                       stream: Any, non_blocking: bool) -> None:  # fmt: skip
        handle[byte_offset : byte_offset + source.nbytes] = source.reshape(-1).view(np.uint8)

    def copy_to_host(self, handle: Any, byte_offset: int, target: np.ndarray, index: int,
                     stream: Any, non_blocking: bool) -> None:  # fmt: skip
        target.reshape(-1).view(np.uint8)[:] = handle[byte_offset : byte_offset + target.nbytes]

    def wrap_host_array(self, array: np.ndarray) -> tuple[Any, int] | None:
        # The bytes from the first element to the last, whatever the (positive) strides.
        size = array.itemsize
        last = sum((n - 1) * s for n, s in zip(array.shape, array.strides, strict=True))
        span = as_strided(array, (last // size + 1 if array.size else 0,), (size,))
        return span.view(np.uint8), array.ctypes.data


@hookimpl
def ember_devices() -> list[DeviceBackend]:
    return [NumpyBackend()]


@hookimpl
def ember_kernels(registry: KernelRegistry) -> None:
    for name, kernel in {**planned.RENDERED, **planned.KERNELS, **tensors.KERNELS}.items():
        registry.register(name, "numpy", kernel, rendered=name in planned.RENDERED)
