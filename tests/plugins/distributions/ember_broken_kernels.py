"""A plugin whose kernel hook raises halfway: nothing it registered may survive."""

from __future__ import annotations

import ember
from ember.plugins.sdk import KernelRegistry, hookimpl


class HalfBackend(ember.DeviceBackend):
    type = "halfdev"

    def device_count(self) -> int:
        return 1


def poisoned_fill(t: ember.Tensor, value: float) -> None:
    raise AssertionError("a quarantined plugin's kernel ran")


@hookimpl
def ember_devices() -> list[ember.DeviceBackend]:
    return [HalfBackend()]


@hookimpl
def ember_kernels(registry: KernelRegistry) -> None:
    registry.register("fill_", "halfdev", poisoned_fill)
    registry.register("fill_", "cpu", poisoned_fill)
    raise ValueError("kernel table corrupt")
