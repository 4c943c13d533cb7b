"""A real, tiny device plugin: "fakedev", memory in NumPy byte arrays, two kernels.

It is what a third-party device looks like at its smallest: a `DeviceBackend` with
allocation and host copies, and a kernel hook. It is not host-accessible, so every host
read goes through `copy_to_host`, as it would on a GPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember
from ember.plugins import hookimpl

FAKE_TYPE = "fakedev"


class FakeBackend(ember.DeviceBackend):
    """Device memory is a NumPy uint8 array per allocation; one device."""

    type = FAKE_TYPE
    host_accessible = False

    def device_count(self) -> int:
        return 1

    def allocate(self, nbytes: int, index: int) -> tuple[Any, int]:
        return np.zeros(nbytes, dtype=np.uint8), 0

    def copy_from_host(
        self,
        handle: Any,
        byte_offset: int,
        source: np.ndarray,
        index: int,
        non_blocking: bool = False,
    ) -> None:
        data = np.ascontiguousarray(source).reshape(-1).view(np.uint8)
        handle[byte_offset : byte_offset + data.size] = data

    def copy_to_host(
        self,
        handle: Any,
        byte_offset: int,
        target: np.ndarray,
        index: int,
        non_blocking: bool = False,
    ) -> None:
        view = target.reshape(-1).view(np.uint8)
        view[:] = handle[byte_offset : byte_offset + view.size]


def _array(t: ember.Tensor) -> np.ndarray:
    """A NumPy view of a fakedev tensor's elements, with its strides."""
    itemsize = t.dtype.itemsize
    return np.ndarray(
        tuple(t.shape),
        dtype=t.dtype.numpy,
        buffer=t.untyped_storage().handle,
        offset=t.storage_offset() * itemsize,
        strides=tuple(s * itemsize for s in t.stride()),
    )


def fill(t: ember.Tensor, value: Any) -> None:
    if t.numel():
        _array(t)[...] = value


def copy(dst: ember.Tensor, src: ember.Tensor) -> None:
    if dst.numel():
        _array(dst)[...] = _array(src).astype(dst.dtype.numpy)


class FakeDevicePlugin:
    """The plugin object that `ember.plugins.register` takes."""

    def __init__(self) -> None:
        self.backend = FakeBackend()

    @hookimpl
    def ember_devices(self) -> list[ember.DeviceBackend]:
        return [self.backend]

    @hookimpl
    def ember_kernels(self, registry: Any) -> None:
        registry.register("fill_", FAKE_TYPE, fill)
        registry.register("copy_", FAKE_TYPE, copy)
