"""Device plugins: discovery through entry points (group `ember.plugins`), status, hooks.

A plugin is a module (or object) with pluggy hook implementations::

    from ember.plugins import hookimpl

    @hookimpl
    def ember_devices():
        return [MyBackend()]

    @hookimpl
    def ember_kernels(registry):
        registry.register("add", "mydevice", my_add)

Environment: `EMBER_PLUGINS` (allow-list) and `EMBER_DISABLE_PLUGINS` (deny-list) take
comma-separated entry-point names; `EMBER_STRICT_PLUGINS=1` turns a plugin that fails to
load from a reported status into a `PluginError`.
"""

from __future__ import annotations

from types import ModuleType

from ember import _device
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
    """Remove a plugin with its devices and kernels (a re-registered type starts afresh)."""
    removed = set(MANAGER.unregister(name))
    interned = _device.device._interned
    for key in [key for key in interned if key[0] in removed]:
        del interned[key]
    default = _device._default
    if default is not None and default.type in removed:
        _device.set_default_device(None)
