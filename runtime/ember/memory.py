"""The memory API: what each device's caching allocator holds, and control over its cache.

Names and meanings follow PyTorch's `torch.cuda` memory functions, for any device;
`device=None` means the default device. docs/memory.md describes the allocator.
"""

from __future__ import annotations

from typing import Any

from ember._allocator import CachingAllocator
from ember._device import device as _device_type
from ember._device import get_default_device

__all__ = [
    "empty_cache",
    "is_caching_enabled",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
    "set_caching_enabled",
]


def _allocator(device: Any) -> CachingAllocator:
    dev = get_default_device() if device is None else _device_type(device).placement
    return dev._allocator


def memory_allocated(device: Any = None) -> int:
    """Bytes in blocks that tensors of `device` hold now (block sizes, rounded up)."""
    return memory_stats(device)["allocated_bytes.all.current"]


def max_memory_allocated(device: Any = None) -> int:
    """The peak of `memory_allocated` since the start or `reset_peak_memory_stats`."""
    return memory_stats(device)["allocated_bytes.all.peak"]


def memory_reserved(device: Any = None) -> int:
    """Bytes the allocator holds from the device: in use plus cached."""
    return memory_stats(device)["reserved_bytes.all.current"]


def max_memory_reserved(device: Any = None) -> int:
    """The peak of `memory_reserved` since the start or `reset_peak_memory_stats`."""
    return memory_stats(device)["reserved_bytes.all.peak"]


def memory_stats(device: Any = None) -> dict[str, int]:
    """Every counter of the device's allocator, by PyTorch's names where it has them.

    Beyond PyTorch's: `num_raw_alloc` / `num_raw_free` count the backend's own allocate
    and free calls, `pending_free_bytes.all.current` the freed bytes waiting for other
    streams (record_stream). A backend may add counters of its own.
    """
    dev = get_default_device() if device is None else _device_type(device).placement
    stats = dev._allocator.stats()
    for name, value in dev._backend.memory_stats(dev._ordinal).items():
        stats.setdefault(name, value)
    return stats


def reset_peak_memory_stats(device: Any = None) -> None:
    """Start every `.peak` counter again from its current value."""
    _allocator(device).reset_peaks()


def empty_cache(device: Any = None) -> None:
    """Give every cached, unused block back to the device.

    Segments that still hold a tensor's block stay, and so do blocks freed after use on
    another stream whose events have not completed yet.
    """
    _allocator(device).empty_cache()


def set_caching_enabled(enabled: bool, device: Any = None) -> None:
    """Cache freed blocks (the default) or give each one back at once.

    Turning caching off empties the cache. `EMBER_NO_MEMORY_CACHING=1` starts every
    device with caching off.
    """
    _allocator(device).set_caching(enabled)


def is_caching_enabled(device: Any = None) -> bool:
    """Whether the device's allocator keeps freed blocks for reuse."""
    return _allocator(device).caching
