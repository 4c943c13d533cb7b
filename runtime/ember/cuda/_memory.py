"""`ember.cuda`'s memory functions: the device-generic `ember.memory` API on a cuda device.

Without a usable cuda device the counters answer 0 and `memory_stats()` {} (nothing was
ever allocated), `empty_cache`/`reset_peak_memory_stats` do nothing, as torch's do;
`mem_get_info` raises, because it must ask a device.
"""

from __future__ import annotations

from typing import Any

from ember import memory as _memory
from ember.cuda._state import count, require, resolve

__all__ = [
    "empty_cache",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
]


def memory_stats(device: Any = None) -> dict[str, int]:
    """The cuda device's allocator counters ({} without a device)."""
    if count() == 0:
        return {}
    return _memory.memory_stats(resolve("ember.cuda.memory_stats", device))


def _counter(name: str, device: Any) -> int:
    return memory_stats(device).get(name, 0)


def memory_allocated(device: Any = None) -> int:
    """Bytes held by tensors on the cuda device (0 without one)."""
    return _counter("allocated_bytes.all.current", device)


def max_memory_allocated(device: Any = None) -> int:
    """Peak of `memory_allocated` (0 without a device)."""
    return _counter("allocated_bytes.all.peak", device)


def memory_reserved(device: Any = None) -> int:
    """Bytes the allocator holds from the cuda device (0 without one)."""
    return _counter("reserved_bytes.all.current", device)


def max_memory_reserved(device: Any = None) -> int:
    """Peak of `memory_reserved` (0 without a device)."""
    return _counter("reserved_bytes.all.peak", device)


def reset_peak_memory_stats(device: Any = None) -> None:
    """Restart the peaks; nothing to do without a device."""
    if count() > 0:
        _memory.reset_peak_memory_stats(resolve("ember.cuda.reset_peak_memory_stats", device))


def empty_cache() -> None:
    """Return cached blocks of every cuda device; nothing to do without one."""
    for index in range(count()):
        _memory.empty_cache(resolve("ember.cuda.empty_cache", index))


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """(free, total) bytes on the cuda device, as the plugin reports them."""
    chosen = resolve("ember.cuda.mem_get_info", device)
    require("ember.cuda.mem_get_info")
    info = getattr(chosen.backend, "mem_get_info", None)
    if info is None:
        raise RuntimeError("mem_get_info: the cuda plugin does not report free memory")
    free, total = info(chosen._ordinal)
    return int(free), int(total)
