"""Device plugins: discovery through entry points (group `ember.plugins`), status, hooks.

A plugin is a module (or object) with pluggy hook implementations::

    from ember.plugins import hookimpl

    @hookimpl
    def ember_devices():
        return [MyBackend()]

    @hookimpl
    def ember_kernels(registry):
        registry.register("add", "mydevice", my_add)
"""

from __future__ import annotations

from types import ModuleType

from ember.plugins._hookspec import hookimpl, hookspec
from ember.plugins._manager import (
    ENTRY_POINT_GROUP,
    MANAGER,
    DeviceTypeInfo,
    PluginError,
    PluginStatus,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "DeviceTypeInfo",
    "PluginError",
    "PluginStatus",
    "hookimpl",
    "hookspec",
    "register",
    "status",
    "unregister",
]


def status() -> list[PluginStatus]:
    """Every plugin found: loaded, failed (with its error) or disabled."""
    MANAGER.ensure_loaded()
    return list(MANAGER.statuses.values())


def register(plugin: ModuleType | object, name: str | None = None) -> PluginStatus:
    """Register a plugin object at run time, without an entry point."""
    return MANAGER.register(plugin, name)


def unregister(name: str) -> None:
    """Remove a plugin registered at run time, with its devices and kernels."""
    MANAGER.unregister(name)
