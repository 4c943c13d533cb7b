"""Device names ("type:index"), canonicalised in one place, and the default device."""

from __future__ import annotations

import os
import threading
from typing import Any, ClassVar, Final

from ember._allocator import CachingAllocator
from ember._backend import DeviceBackend
from ember.plugins._manager import MANAGER

__all__ = [
    "current_index",
    "device",
    "device_count",
    "device_index",
    "devices",
    "get_default_device",
    "is_available",
    "set_current_index",
    "set_default_device",
]


class device:
    """A device: `ember.device("cpu")`, `ember.device("opencl:0")`, `ember.device("opencl", 1)`.

    As in PyTorch, the index is None when the string names none: `device("opencl")` means
    "the current opencl device" and prints as `opencl`. Tensors hold a *placement*: the
    concrete device their memory is on, `opencl:0` for an indexed type, and `cpu` (index
    None, as PyTorch's cpu tensors report) for a type whose backend is `unindexed`. So
    `device("cpu:0") != device("cpu")`, as in PyTorch, while both place tensors on `cpu`.

    Instances are interned, so `a.device is b.device` holds for tensors on one device; the
    type must belong to an installed plugin.
    """

    __slots__ = ("_allocator", "_backend", "_default_stream", "_ordinal", "index", "type")

    type: str
    index: int | None
    #: the backend's index of the memory this device names (0 for an unindexed type; for
    #: a device without an index, the index its placement had when it was made)
    _ordinal: int
    _backend: DeviceBackend
    _allocator: CachingAllocator
    _default_stream: Any  # the ember.Stream, created on first use (ember._stream)

    _interned: ClassVar[dict[tuple[str, int | None], device]] = {}

    def __new__(cls, spec: DeviceLike, index: int | None = None) -> device:
        if isinstance(spec, device):
            if index is not None and index != spec.index:
                raise ValueError(f"device: {spec} already has an index; got index={index}")
            return spec
        type_name, parsed_index = _parse(spec)
        if index is not None:
            if parsed_index is not None:
                raise ValueError(f"device: {spec!r} already names index {parsed_index}")
            if not isinstance(index, int) or index < 0:
                raise RuntimeError(f"device: index must be a non-negative int, got {index!r}")
            parsed_index = index
        key = (type_name, parsed_index)
        found = cls._interned.get(key)
        if found is not None:
            return found
        info = MANAGER.device_types.get(type_name) if _loaded() else _load_and_get(type_name)
        if info is None:
            raise RuntimeError(f"unknown device type {type_name!r}. {_inventory()}")
        self = object.__new__(cls)
        self.type = type_name
        self.index = parsed_index
        self._backend = info.backend
        self._default_stream = None
        place = self._placement_key()
        if place == key:
            self._ordinal = parsed_index or 0
            self._allocator = CachingAllocator(self, info.backend, self._ordinal)
        else:
            # Another name for a placement: memory goes through the placement's allocator,
            # so what it allocates belongs to (and reports) the placement.
            canonical = device(place[0], place[1])
            self._ordinal = canonical._ordinal
            self._allocator = canonical._allocator
        cls._interned[key] = self
        return self

    def _placement_key(self) -> tuple[str, int | None]:
        if self._backend.unindexed:
            return (self.type, None)
        if self.index is None:
            return (self.type, current_index(self.type))
        return (self.type, self.index)

    @property
    def placement(self) -> device:
        """The device tensors made on this one live on (resolves a missing index now)."""
        key = self._placement_key()
        if key == (self.type, self.index):
            return self
        return device(key[0], key[1])

    @property
    def backend(self) -> DeviceBackend:
        """The plugin backend that owns this device."""
        return self._backend

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (device, (str(self),))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, ValueError):
                return False
        return self is other

    def __hash__(self) -> int:
        return hash((self.type, self.index))


class _CurrentIndices(threading.local):
    """The current device of each indexed type, per thread (torch.cuda.set_device's state)."""

    def __init__(self) -> None:
        self.by_type: dict[str, int] = {}


_current = _CurrentIndices()


def device_index(dev: device) -> int:
    """The backend's index of the memory `dev` names: what a plugin passes its backend.

    A tensor's device has an index on an indexed type; on an unindexed one (the cpu) its
    `index` is None, as in PyTorch, and this is 0.
    """
    return dev._ordinal


def current_index(device_type: str) -> int:
    """The index a device of `device_type` without one stands for on this thread (0 unset)."""
    return _current.by_type.get(device_type, 0)


def set_current_index(device_type: str, index: int) -> None:
    """Make `index` the current device of `device_type` on this thread."""
    _current.by_type[device_type] = index


DeviceLike = device | str


def _parse(spec: object) -> tuple[str, int | None]:
    if not isinstance(spec, str):
        raise TypeError(f"device: expected a string like 'cpu' or 'opencl:0', got {spec!r}")
    text = spec.strip().lower()
    type_name, sep, index_text = text.partition(":")
    if not type_name or not type_name.replace("_", "").isalnum():
        raise RuntimeError(f"invalid device string {spec!r}; expected 'type' or 'type:index'")
    if not sep:
        return type_name, None
    if not index_text.isdigit():
        raise RuntimeError(f"invalid device index in {spec!r}; expected a non-negative integer")
    return type_name, int(index_text)


def _loaded() -> bool:
    return MANAGER._loaded


def _load_and_get(type_name: str):  # type: ignore[no-untyped-def]
    MANAGER.ensure_loaded()
    return MANAGER.device_types.get(type_name)


def _inventory() -> str:
    """A sentence listing what is available and why the rest is not."""
    available = [name for name, info in MANAGER.device_types.items() if info.reason is None]
    unavailable = [
        f"{name} ({info.reason})" for name, info in MANAGER.device_types.items() if info.reason
    ]
    failed = [f"plugin {s.name} failed: {s.error}" for s in MANAGER.statuses.values() if s.error]
    parts = [f"Available device types: {', '.join(available) or 'none'}."]
    if unavailable:
        parts.append(f"Unavailable: {'; '.join(unavailable)}.")
    if failed:
        parts.append(f"{'; '.join(failed)}.")
    return " ".join(parts)


def check_usable(dev: device) -> None:
    """Raise RuntimeError unless `dev` exists and is available."""
    info = MANAGER.device_types.get(dev.type)
    if info is None:
        raise RuntimeError(f"device {dev} is no longer registered. {_inventory()}")
    if info.reason is not None:
        raise RuntimeError(f"device {dev} is unavailable: {info.reason}. {_inventory()}")
    if (dev._ordinal if dev.index is None else dev.index) >= info.count:
        raise RuntimeError(
            f"device {dev} does not exist: {dev.type} has {info.count} device(s). {_inventory()}"
        )


def devices() -> list[str]:
    """Names of the device types that are installed and available."""
    MANAGER.ensure_loaded()
    return [name for name, info in MANAGER.device_types.items() if info.reason is None]


def device_count(device_type: str) -> int:
    """How many devices of `device_type` are usable (0 if none or unknown)."""
    MANAGER.ensure_loaded()
    info = MANAGER.device_types.get(device_type)
    return 0 if info is None or info.reason is not None else info.count


def is_available(device_type: str) -> bool:
    """Whether at least one device of that type is usable."""
    return device_count(device_type) > 0


_default: device | None = None
_DEFAULT_TYPE: Final = "cpu"


def get_default_device() -> device:
    """The device of factories called without `device=` (EMBER_DEVICE, else cpu)."""
    global _default
    if _default is None:
        chosen = device(os.environ.get("EMBER_DEVICE") or _DEFAULT_TYPE)
        check_usable(chosen)
        _default = chosen.placement
    return _default


def set_default_device(dev: DeviceLike | None) -> None:
    """Set the default device; None restores EMBER_DEVICE or cpu."""
    global _default
    if dev is None:
        _default = None
        return
    chosen = device(dev)
    check_usable(chosen)
    _default = chosen.placement
