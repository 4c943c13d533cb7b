"""The hooks a device plugin implements (pluggy project "ember")."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from ember._backend import DeviceBackend
    from ember._collective import CollectiveBackend
    from ember._dispatch import KernelRegistry

PROJECT_NAME = "ember"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def ember_devices() -> list[DeviceBackend]:
    """Return the device backends this plugin brings (may be empty)."""
    raise NotImplementedError


@hookspec
def ember_kernels(registry: KernelRegistry) -> None:
    """Register kernels, for this plugin's device types or any other plugin's."""


@hookspec
def ember_collective_backends() -> list[CollectiveBackend]:
    """Return the communication engines this plugin brings for ember.distributed."""
    raise NotImplementedError
