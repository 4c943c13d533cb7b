"""A throwaway device plugin: "toydev" keeps its memory in NumPy byte arrays.

It implements only `fill_` and `copy_`, enough for factories and host copies; "toyoff"
is a device type whose hardware is missing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember
from ember._dispatch import KernelRegistry
from ember.plugins import hookimpl


class ToyBackend(ember.DeviceBackend):
    """Two devices whose buffers are NumPy uint8 arrays (opaque to the runtime)."""

    type = "toydev"

    def device_count(self) -> int:
        return 2

    def allocate(self, nbytes: int, index: int) -> tuple[Any, int]:
        return np.zeros(nbytes, dtype=np.uint8), 0

    def copy_from_host(self, handle: Any, byte_offset: int, source: np.ndarray, index: int) -> None:
        handle[byte_offset : byte_offset + source.nbytes] = source.reshape(-1).view(np.uint8)

    def copy_to_host(self, handle: Any, byte_offset: int, target: np.ndarray, index: int) -> None:
        target.reshape(-1).view(np.uint8)[:] = handle[byte_offset : byte_offset + target.nbytes]


class ToyOffBackend(ember.DeviceBackend):
    """A device type that is installed but has no hardware."""

    type = "toyoff"

    def unavailable_reason(self) -> str | None:
        return "no toy hardware attached"

    def device_count(self) -> int:
        raise AssertionError("device_count must not be asked of an unavailable type")


def host_view(t: ember.Tensor) -> np.ndarray:
    """A NumPy view of `t`'s elements inside its byte buffer."""
    itemsize = t.element_size()
    return np.ndarray(
        tuple(t.shape),
        dtype=t.dtype.numpy,
        buffer=t.untyped_storage().handle,
        offset=t.storage_offset() * itemsize,
        strides=tuple(s * itemsize for s in t.stride()),
    )


def fill(t: ember.Tensor, value: float) -> None:
    if t.numel():
        host_view(t)[...] = value


def copy(dst: ember.Tensor, src: ember.Tensor) -> None:
    if dst.numel():
        host_view(dst)[...] = host_view(src)


@hookimpl
def ember_devices() -> list[ember.DeviceBackend]:
    return [ToyBackend(), ToyOffBackend()]


@hookimpl
def ember_kernels(registry: KernelRegistry) -> None:
    registry.register("fill_", "toydev", fill)
    registry.register("copy_", "toydev", copy)
