"""`ember.accelerator`: PyTorch 2.13's device-agnostic accelerator API.

The accelerator is the first installed, usable device type whose device 0 does not compute on
the host's own cores (`DeviceBackend.runs_on_host`): cuda with a GPU, or an OpenCL GPU. The
cpu device, the numpy reference device and PoCL's CPU OpenCL device are not accelerators,
just as torch does not count the cpu. Without one, `current_accelerator()` is None and the
functions that need a device raise RuntimeError with torch's message.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import ember._stream as _streams
from ember import memory as _memory
from ember._device import current_index, device, set_current_index
from ember.plugins._manager import MANAGER

__all__ = [
    "current_accelerator",
    "current_device_index",
    "current_stream",
    "device_count",
    "device_index",
    "empty_cache",
    "is_available",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
    "set_device_index",
    "set_stream",
    "synchronize",
]

_NONE = "Cannot access accelerator device when none is available."


def current_accelerator(check_available: bool = False) -> device | None:
    """The accelerator's device type as an `ember.device` (index 0), or None.

    With `check_available=True` a found type must also be usable, which is all this
    function ever returns: types that are installed but unusable are not accelerators.
    """
    del check_available
    MANAGER.ensure_loaded()
    for name, info in MANAGER.device_types.items():
        if info.reason is None and info.count > 0 and not info.backend.runs_on_host(0):
            return device(name)
    return None


def is_available() -> bool:
    """Whether an accelerator is usable here."""
    return current_accelerator() is not None


def device_count() -> int:
    """How many devices the accelerator has (0 without one)."""
    found = current_accelerator()
    return 0 if found is None else MANAGER.device_types[found.type].count


def _current() -> device:
    found = current_accelerator()
    if found is None:
        raise RuntimeError(_NONE)
    return device(found.type, current_index(found.type))


def _of(dev: Any) -> device:
    if dev is None:
        return _current()
    if isinstance(dev, int):
        return device(_current().type, dev)
    return device(dev).placement


def current_device_index() -> int:
    """The index of the current accelerator device."""
    return _current()._ordinal


def set_device_index(index: Any) -> None:
    """Make `index` (an int or device) the current accelerator device."""
    chosen = _of(index)
    if not 0 <= chosen._ordinal < device_count():
        raise RuntimeError(f"set_device_index: invalid device index {chosen._ordinal}")
    set_current_index(chosen.type, chosen._ordinal)


@contextmanager
def device_index(index: int | None) -> Iterator[None]:
    """Within the block, `index` is the current accelerator device (None: a no-op)."""
    if index is None:
        yield
        return
    previous = _current()
    set_device_index(index)
    try:
        yield
    finally:
        set_current_index(previous.type, previous._ordinal)


def synchronize(dev: Any = None) -> None:
    """Wait for all work on the accelerator device."""
    _streams.synchronize(_of(dev))


def current_stream(dev: Any = None) -> _streams.Stream:
    """The current stream of the accelerator device."""
    return _streams.current_stream(_of(dev))


def set_stream(s: _streams.Stream) -> None:
    """Make `s` the current stream of its device."""
    _streams.set_stream(s)


def empty_cache() -> None:
    """Return the accelerator allocator's cached blocks."""
    _memory.empty_cache(_current())


def memory_stats(dev: Any = None) -> dict[str, int]:
    """The accelerator allocator's counters."""
    return _memory.memory_stats(_of(dev))


def memory_allocated(dev: Any = None) -> int:
    """Bytes held by tensors on the accelerator device."""
    return _memory.memory_allocated(_of(dev))


def max_memory_allocated(dev: Any = None) -> int:
    """Peak of `memory_allocated`."""
    return _memory.max_memory_allocated(_of(dev))


def memory_reserved(dev: Any = None) -> int:
    """Bytes the allocator holds from the accelerator device."""
    return _memory.memory_reserved(_of(dev))


def max_memory_reserved(dev: Any = None) -> int:
    """Peak of `memory_reserved`."""
    return _memory.max_memory_reserved(_of(dev))


def reset_peak_memory_stats(dev: Any = None) -> None:
    """Restart the peak counters."""
    _memory.reset_peak_memory_stats(_of(dev))
