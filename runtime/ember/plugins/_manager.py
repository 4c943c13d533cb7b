"""Discovers, loads and quarantines device plugins; pluggy is used here only.

Loading happens once, lazily, the first time a device or kernel is needed. Each plugin's
hooks are called one plugin at a time so that a failure is attributed to its plugin,
which is then unregistered and reported instead of taking the others down.
"""

from __future__ import annotations

import importlib.metadata as metadata
import os
import re
import threading
import traceback
from dataclasses import dataclass, field
from types import ModuleType
from typing import Final

import pluggy

from ember._backend import DeviceBackend
from ember._collective import CollectiveBackend
from ember._dispatch import REGISTRY
from ember.plugins import _hookspec

ENTRY_POINT_GROUP: Final = "ember.plugins"

# What `ember.device` accepts as a type name (it lower-cases what the user writes).
_DEVICE_TYPE_NAME: Final = re.compile(r"[a-z0-9_]+")


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
    #: the exception behind `error`, kept for `raise ... from` in strict mode
    exception: BaseException | None = field(default=None, repr=False, compare=False)


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
        # The thread loading the entry points: a hook that registers through
        # ember.library asks for the plugins again, and must not load them twice.
        self._loading: int | None = None
        # The plugin that failed under EMBER_STRICT_PLUGINS=1: every later load re-raises.
        self._fatal: PluginStatus | None = None
        self.pm = pluggy.PluginManager(_hookspec.PROJECT_NAME)
        self.pm.add_hookspecs(_hookspec)
        self.statuses: dict[str, PluginStatus] = {}
        self.device_types: dict[str, DeviceTypeInfo] = {}
        # ember.distributed's engines from plugins, by name, with the plugin's name.
        self.collective_backends: dict[str, tuple[CollectiveBackend, str]] = {}

    # -- loading -------------------------------------------------------------------------

    def ensure_loaded(self) -> None:
        """Discover and load the entry-point plugins, once per process."""
        if self._loaded or self._loading == threading.get_ident():
            return
        with self._lock:
            if self._loaded or self._loading == threading.get_ident():
                return
            if self._fatal is None:
                self._loading = threading.get_ident()
                try:
                    self._load_entry_points()
                finally:
                    self._loading = None
            if self._fatal is not None:
                raise _strict_error(self._fatal)
            self._loaded = True

    def _load_entry_points(self) -> None:
        allow = _env_list("EMBER_PLUGINS")
        deny = _env_list("EMBER_DISABLE_PLUGINS") or set()
        strict = _strict()
        # In name order, so that discovery (and which of two kernels for one op and device
        # wins) does not depend on how the environment lists its distributions.
        found = sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
        for entry_point in found:
            if entry_point.name in self.statuses:
                continue  # the same plugin seen through two entries of sys.path
            dist = entry_point.dist
            status = PluginStatus(
                entry_point.name,
                dist.metadata["Name"] if dist else None,
                dist.version if dist else None,
                "loaded",
            )
            self.statuses[status.name] = status
            if entry_point.name in deny or (allow is not None and entry_point.name not in allow):
                status.status = "disabled"
                continue
            try:
                plugin = entry_point.load()
            except Exception as exc:  # any import failure quarantines only this plugin
                self._fail(status, exc)
            else:
                self._add(plugin, status)
            if strict and status.error is not None:
                self._fatal = status
                break
        REGISTRY.freeze()

    def register(self, plugin: ModuleType | object, name: str | None = None) -> PluginStatus:
        """Register a plugin object directly (no entry point), then refresh dispatch."""
        self.ensure_loaded()
        with self._lock:
            plugin_name = name or getattr(plugin, "__name__", None) or type(plugin).__name__
            if plugin_name in self.statuses:
                raise ValueError(f"a plugin named {plugin_name!r} is already known")
            status = PluginStatus(plugin_name, None, None, "loaded")
            self.statuses[plugin_name] = status
            self._add(plugin, status)
            REGISTRY.freeze()
            if status.error is not None and _strict():
                raise _strict_error(status)
            return status

    def unregister(self, name: str) -> list[str]:
        """Remove a plugin with its kernels and device types; return those device types."""
        with self._lock:
            plugin = self.pm.get_plugin(name)
            if plugin is not None:
                self.pm.unregister(plugin)
            status = self.statuses.pop(name, None)
            removed = [] if status is None else list(status.device_types)
            for device_type in removed:
                self.device_types.pop(device_type, None)
            for engine, owner in list(self.collective_backends.values()):
                if owner == name:
                    del self.collective_backends[engine.name]
            REGISTRY.remove_plugin(name)
            REGISTRY.freeze()
            return removed

    # -- one plugin ----------------------------------------------------------------------

    def _add(self, plugin: object, status: PluginStatus) -> None:
        try:
            self.pm.register(plugin, name=status.name)
            infos = self._call_devices(status.name)
            engines = self._call_collectives(status.name)
            REGISTRY.begin(status.name)
            self._call_kernels(status.name)
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
        for engine in engines:
            self.collective_backends[engine.name] = (engine, status.name)

    def _call_devices(self, plugin_name: str) -> list[DeviceTypeInfo]:
        infos: list[DeviceTypeInfo] = []
        for impl in self.pm.hook.ember_devices.get_hookimpls():
            if impl.plugin_name != plugin_name:
                continue
            returned = impl.function()
            if not isinstance(returned, (list, tuple, type(None))):
                raise TypeError(f"ember_devices must return a list of backends, not {returned!r}")
            for candidate in returned or ():
                backend = self._check_backend(candidate, infos)
                reason = backend.unavailable_reason()
                count = backend.device_count() if reason is None else 0
                if reason is None and count == 0:
                    reason = "the plugin found no devices"
                infos.append(DeviceTypeInfo(backend, plugin_name, count, reason))
        return infos

    def _call_collectives(self, plugin_name: str) -> list[CollectiveBackend]:
        engines: list[CollectiveBackend] = []
        for impl in self.pm.hook.ember_collective_backends.get_hookimpls():
            if impl.plugin_name != plugin_name:
                continue
            returned = impl.function()
            if not isinstance(returned, (list, tuple, type(None))):
                raise TypeError(
                    f"ember_collective_backends must return a list of backends, not {returned!r}"
                )
            for engine in returned or ():
                if not isinstance(engine, CollectiveBackend):
                    raise TypeError(
                        f"ember_collective_backends returned {engine!r}, not a CollectiveBackend"
                    )
                name = engine.name
                if not isinstance(name, str) or not _DEVICE_TYPE_NAME.fullmatch(name):
                    raise ValueError(
                        f"{type(engine).__name__}.name is {name!r}; a collective backend name "
                        "is lower-case letters, digits and underscores"
                    )
                taken = name in self.collective_backends or any(e.name == name for e in engines)
                if taken or name == "mpi":
                    raise RuntimeError(f"collective backend {name!r} is already provided")
                engines.append(engine)
        return engines

    def _check_backend(self, backend: object, pending: list[DeviceTypeInfo]) -> DeviceBackend:
        if not isinstance(backend, DeviceBackend):
            raise TypeError(f"ember_devices returned {backend!r}, not a DeviceBackend")
        type_name = backend.type
        if not isinstance(type_name, str) or not _DEVICE_TYPE_NAME.fullmatch(type_name):
            raise ValueError(
                f"{type(backend).__name__}.type is {type_name!r}; a device type name is "
                "lower-case letters, digits and underscores"
            )
        if type_name in self.device_types:
            owner = self.device_types[type_name].plugin
            raise RuntimeError(f"device type {type_name!r} is already provided by {owner}")
        if any(info.backend.type == type_name for info in pending):
            raise RuntimeError(f"ember_devices returned device type {type_name!r} twice")
        return backend

    def _call_kernels(self, plugin_name: str) -> None:
        # pluggy lets an implementation take fewer arguments than the spec names.
        arguments = {"registry": REGISTRY}
        for impl in self.pm.hook.ember_kernels.get_hookimpls():
            if impl.plugin_name == plugin_name:
                impl.function(*[arguments[name] for name in impl.argnames])

    def _fail(self, status: PluginStatus, exc: BaseException) -> None:
        status.status = "failed"
        status.error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        status.exception = exc


def _strict() -> bool:
    return os.environ.get("EMBER_STRICT_PLUGINS") == "1"


def _strict_error(status: PluginStatus) -> PluginError:
    error = PluginError(f"plugin {status.name!r} failed to load: {status.error}")
    error.__cause__ = status.exception
    return error


def _env_list(name: str) -> set[str] | None:
    value = os.environ.get(name)
    if value is None or not value.strip():
        return None  # unset or empty: no list (an empty allow-list would disable even cpu)
    return {item.strip() for item in value.split(",") if item.strip()}


MANAGER: Final = PluginManager()
