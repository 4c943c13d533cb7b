"""A fixture device plugin for the discovery, inventory and missing-kernel tests.

"toydev" has two devices and only `fill_` and `copy_` (so every other op reports a
missing kernel); "toyoff" is a device type whose hardware is missing. The working
template for a device is ember-numpy (plugins/ember-numpy), not this.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.plugins.sdk import DeviceBackend, ElementwisePlan, KernelRegistry, Storage, hookimpl


class ToyBackend(DeviceBackend):
    """Two devices whose buffers are NumPy uint8 arrays (opaque to the runtime)."""

    type = "toydev"

    def device_count(self) -> int:
        return 2

    def allocate(self, nbytes: int, index: int) -> tuple[Any, int]:
        return np.zeros(nbytes, dtype=np.uint8), 0

    def copy_from_host(
        self, handle: Any, byte_offset: int, source: np.ndarray, index: int, stream: Any,
        non_blocking: bool,
    ) -> None:  # fmt: skip
        handle[byte_offset : byte_offset + source.nbytes] = source.reshape(-1).view(np.uint8)

    def copy_to_host(
        self, handle: Any, byte_offset: int, target: np.ndarray, index: int, stream: Any,
        non_blocking: bool,
    ) -> None:  # fmt: skip
        target.reshape(-1).view(np.uint8)[:] = handle[byte_offset : byte_offset + target.nbytes]


class ToyOffBackend(DeviceBackend):
    """A device type that is installed but has no hardware."""

    type = "toyoff"

    def unavailable_reason(self) -> str | None:
        return "no toy hardware attached"

    def device_count(self) -> int:
        raise AssertionError("device_count must not be asked of an unavailable type")


def view(storage: Storage, plan: ElementwisePlan, i: int) -> np.ndarray:
    """Operand i of `plan` as a NumPy view inside its storage's byte buffer."""
    size = plan.dtypes[i].itemsize
    return np.ndarray(
        plan.shape,
        dtype=plan.dtypes[i].numpy,
        buffer=storage.handle,
        offset=plan.offsets[i] * size,
        strides=tuple(s * size for s in plan.strides[i]),
    )


def fill(dst: Storage, value: float, plan: ElementwisePlan) -> None:
    view(dst, plan, 0)[...] = value


def copy(dst: Storage, src: Storage, plan: ElementwisePlan) -> None:
    view(dst, plan, 0)[...] = view(src, plan, 1)


@hookimpl
def ember_devices() -> list[DeviceBackend]:
    return [ToyBackend(), ToyOffBackend()]


@hookimpl
def ember_kernels(registry: KernelRegistry) -> None:
    registry.register("fill_", "toydev", fill)
    registry.register("copy_", "toydev", copy)
