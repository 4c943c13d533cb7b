"""A real, tiny device plugin: "fakedev", memory in NumPy byte arrays, two kernels.

It is what a third-party device looks like at its smallest: a `DeviceBackend` with
allocation and host copies, and a kernel hook. It is not host-accessible, so every host
read goes through `copy_to_host`, as it would on a GPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember
from ember.plugins.sdk import ElementwisePlan, Storage, hookimpl

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
        stream: Any,
        non_blocking: bool,
    ) -> None:
        data = np.ascontiguousarray(source).reshape(-1).view(np.uint8)
        handle[byte_offset : byte_offset + data.size] = data

    def copy_to_host(
        self,
        handle: Any,
        byte_offset: int,
        target: np.ndarray,
        index: int,
        stream: Any,
        non_blocking: bool,
    ) -> None:
        view = target.reshape(-1).view(np.uint8)
        view[:] = handle[byte_offset : byte_offset + view.size]


def _array(storage: Storage, plan: ElementwisePlan, operand: int) -> np.ndarray:
    """A NumPy view of operand `operand` of a planned call, over its fakedev storage."""
    dtype = plan.dtypes[operand].numpy
    itemsize = dtype.itemsize
    return np.ndarray(
        plan.shape,
        dtype=dtype,
        buffer=storage.handle,
        offset=plan.offsets[operand] * itemsize,
        strides=tuple(s * itemsize for s in plan.strides[operand]),
    )


def fill(dst: Storage, value: Any, plan: ElementwisePlan) -> None:
    _array(dst, plan, 0)[...] = value


def copy(dst: Storage, src: Storage, plan: ElementwisePlan) -> None:
    _array(dst, plan, 0)[...] = _array(src, plan, 1).astype(plan.dtypes[0].numpy)


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
