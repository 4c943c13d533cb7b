"""Discovers, loads and quarantines device plugins; pluggy is used here only.

Loading happens once, lazily, the first time a device or kernel is needed. Each plugin's
hooks are called one plugin at a time so that a failure is attributed to its plugin,
which is then unregistered and reported instead of taking the others down.
"""

from __future__ import annotations

import importlib.metadata as metadata
import os
import threading
import traceback
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import pluggy

from ember._backend import DeviceBackend
from ember._dispatch import REGISTRY
from ember.plugins import _hookspec

ENTRY_POINT_GROUP = "ember.plugins"


class PluginError(RuntimeError):
    """A plugin failed to load while EMBER_STRICT_PLUGINS=1."""


@dataclass
class PluginStatus:
    """What became of one plugin."""

    name: str
    distribution: str | None
    version: str | None
    status: str  # "loaded", "failed" or "disabled"
    error: str | None = None
    device_types: list[str] = field(default_factory=list)


@dataclass
class DeviceTypeInfo:
    """A device type as its plugin described it at load time."""

    backend: DeviceBackend
    plugin: str
    count: int
    reason: str | None  # why it is unavailable, None when available


class PluginManager:
    """The process-wide plugin state: backends, statuses and the frozen kernel tables."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._loaded = False
        self.pm = pluggy.PluginManager(_hookspec.PROJECT_NAME)
        self.pm.add_hookspecs(_hookspec)
        self.statuses: dict[str, PluginStatus] = {}
        self.device_types: dict[str, DeviceTypeInfo] = {}

    # -- loading -------------------------------------------------------------------------

    def ensure_loaded(self) -> None:
        if self._loaded:
            return
        with self._lock:
            if self._loaded:
                return
            allow = _env_list("EMBER_PLUGINS")
            deny = _env_list("EMBER_DISABLE_PLUGINS") or set()
            for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
                dist = entry_point.dist
                status = PluginStatus(
                    entry_point.name,
                    dist.metadata["Name"] if dist else None,
                    dist.version if dist else None,
                    "loaded",
                )
                if entry_point.name in self.statuses:
                    continue  # the same plugin seen through two paths of sys.path
                if entry_point.name in deny or (allow is not None and entry_point.name not in allow):
                    status.status = "disabled"
                    self.statuses[status.name] = status
                    continue
                try:
                    plugin = entry_point.load()
                except Exception as exc:  # any import failure quarantines only this plugin
                    self._fail(status, exc)
                    continue
                self._add(plugin, status)
            REGISTRY.freeze()
            self._loaded = True

    def register(self, plugin: ModuleType | object, name: str | None = None) -> PluginStatus:
        """Register a plugin object directly (no entry point), then refresh dispatch."""
        self.ensure_loaded()
        with self._lock:
            plugin_name = name or getattr(plugin, "__name__", None) or type(plugin).__name__
            status = PluginStatus(plugin_name, None, None, "loaded")
            self._add(plugin, status)
            REGISTRY.freeze()
            return status

    def unregister(self, name: str) -> None:
        """Remove a plugin registered with `register` (tests use this)."""
        with self._lock:
            plugin = self.pm.get_plugin(name)
            if plugin is not None:
                self.pm.unregister(plugin)
            status = self.statuses.pop(name, None)
            if status is not None:
                for device_type in status.device_types:
                    self.device_types.pop(device_type, None)
            REGISTRY.remove_plugin(name)
            REGISTRY.freeze()

    def _add(self, plugin: object, status: PluginStatus) -> None:
        self.statuses[status.name] = status
        try:
            self.pm.register(plugin, name=status.name)
            infos = self._call_devices(status.name)
            REGISTRY.begin(status.name)
            for impl in self.pm.hook.ember_kernels.get_hookimpls():
                if impl.plugin_name == status.name:
                    impl.function(registry=REGISTRY)
        except Exception as exc:  # a hook that raises quarantines only its plugin
            REGISTRY.discard()
            if self.pm.get_plugin(status.name) is not None:
                self.pm.unregister(name=status.name)
            self._fail(status, exc)
            return
        REGISTRY.commit()
        for info in infos:
            self.device_types[info.backend.type] = info
            status.device_types.append(info.backend.type)

    def _call_devices(self, plugin_name: str) -> list[DeviceTypeInfo]:
        infos = []
        for impl in self.pm.hook.ember_devices.get_hookimpls():
            if impl.plugin_name != plugin_name:
                continue
            for backend in impl.function() or []:
                if not isinstance(backend, DeviceBackend):
                    raise TypeError(f"ember_devices returned {backend!r}, not a DeviceBackend")
                if backend.type in self.device_types:
                    owner = self.device_types[backend.type].plugin
                    raise RuntimeError(f"device type {backend.type!r} is already provided by {owner}")
                reason = backend.unavailable_reason()
                count = backend.device_count() if reason is None else 0
                if reason is None and count == 0:
                    reason = "the plugin found no devices"
                infos.append(DeviceTypeInfo(backend, plugin_name, count, reason))
        return infos

    def _fail(self, status: PluginStatus, exc: BaseException) -> None:
        status.status = "failed"
        status.error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        self.statuses[status.name] = status
        if os.environ.get("EMBER_STRICT_PLUGINS") == "1":
            raise PluginError(f"plugin {status.name!r} failed to load: {status.error}") from exc


def _env_list(name: str) -> set[str] | None:
    value = os.environ.get(name)
    if value is None:
        return None
    return {item.strip() for item in value.split(",") if item.strip()}


MANAGER = PluginManager()


def backend_info(device_type: str) -> DeviceTypeInfo | None:
    MANAGER.ensure_loaded()
    return MANAGER.device_types.get(device_type)


def describe_plugins() -> list[dict[str, Any]]:
    MANAGER.ensure_loaded()
    return [vars(s).copy() for s in MANAGER.statuses.values()]
