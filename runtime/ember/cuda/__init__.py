"""`ember.cuda`: PyTorch's torch.cuda namespace, answered truthfully from the cuda plugin.

Everything here forwards to the device-generic runtime (`ember.device("cuda", i)`, streams,
the caching allocator, the random generators). Where no cuda device is usable (plugin
missing, or installed without a GPU/driver) `is_available()` is False,
`unavailable_reason()` says why, and the functions that need a device raise as torch does
without CUDA: AssertionError from those torch initialises lazily, RuntimeError from
`device()`/`Stream()`; the memory counters answer 0 / {} and the seeding functions do
nothing, as torch's do. docs/accelerators.md lists each answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import ember._stream as _streams
from ember._device import device as _device
from ember._ops import random as _random
from ember.cuda import amp
from ember.cuda._memory import (
    empty_cache,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_peak_memory_stats,
)
from ember.cuda._state import count, current_index, require, resolve, set_current_index
from ember.cuda._state import unavailable_reason as unavailable_reason

__all__ = [
    "Event",
    "Stream",
    "amp",
    "current_device",
    "current_stream",
    "default_stream",
    "device",
    "device_count",
    "empty_cache",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_rng_state",
    "init",
    "initial_seed",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
    "seed",
    "seed_all",
    "set_device",
    "set_rng_state",
    "stream",
    "synchronize",
    "unavailable_reason",
]

_initialized = False


def is_available() -> bool:
    """Whether a cuda device is usable; when not, `unavailable_reason()` says why."""
    return count() > 0


def device_count() -> int:
    """How many cuda devices are usable (0 without a GPU or plugin)."""
    return count()


def is_initialized() -> bool:
    """Whether `init()` (or a first use of a cuda device through ember.cuda) has run."""
    return _initialized


def init() -> None:
    """Initialise cuda now; AssertionError with the reason when no device is usable."""
    global _initialized
    require("ember.cuda.init")
    _initialized = True


def current_device() -> int:
    """The index of the current cuda device in this thread."""
    require("ember.cuda.current_device")
    return current_index()


def set_device(dev: Any) -> None:
    """Make `dev` (an index, 'cuda:i' or an ember.device) this thread's current cuda device."""
    set_current_index(resolve("ember.cuda.set_device", dev)._ordinal)


@contextmanager
def device(dev: Any) -> Iterator[None]:
    """Within the block, `dev` is the current cuda device; RuntimeError without one."""
    chosen = resolve("ember.cuda.device", dev, RuntimeError)
    previous = current_index()
    set_current_index(chosen._ordinal)
    try:
        yield
    finally:
        set_current_index(previous)


def synchronize(dev: Any = None) -> None:
    """Wait for all work on the cuda device."""
    _streams.synchronize(resolve("ember.cuda.synchronize", dev))


class Stream(_streams.Stream):
    """`ember.Stream` on a cuda device (the current one when `device` is None)."""

    __slots__ = ()

    def __init__(self, device: Any = None, priority: int = 0) -> None:
        super().__init__(resolve("ember.cuda.Stream", device, RuntimeError), priority)


class Event(_streams.Event):
    """`ember.Event` on a cuda device (the current one when `device` is None)."""

    __slots__ = ()

    def __init__(self, enable_timing: bool = False, device: Any = None) -> None:
        super().__init__(resolve("ember.cuda.Event", device, RuntimeError), enable_timing)


def current_stream(dev: Any = None) -> _streams.Stream:
    """The current stream of the cuda device in this thread."""
    return _streams.current_stream(resolve("ember.cuda.current_stream", dev))


def default_stream(dev: Any = None) -> _streams.Stream:
    """The default stream of the cuda device."""
    return _streams.default_stream(resolve("ember.cuda.default_stream", dev))


stream = _streams.stream


# -- random numbers: the runtime's per-device generators ----------------------------------


def manual_seed(seed: int) -> None:
    """Seed the current cuda device's generator; does nothing without one, as torch."""
    if is_available():
        _random.default_generator(resolve("ember.cuda.manual_seed")).manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """Seed every cuda device's generator; does nothing without one, as torch."""
    for index in range(count()):
        _random.default_generator(_device("cuda", index)).manual_seed(int(seed))


def seed() -> None:
    """Seed the current cuda generator randomly; does nothing without one."""
    if is_available():
        _random.default_generator(resolve("ember.cuda.seed")).seed()


def seed_all() -> None:
    """Seed every cuda generator with one random seed; does nothing without a device."""
    if is_available():
        manual_seed_all(_random.default_generator(resolve("ember.cuda.seed_all")).seed())


def initial_seed() -> int:
    """The seed of the current cuda device's generator."""
    return _random.default_generator(resolve("ember.cuda.initial_seed")).initial_seed()


def get_rng_state(dev: Any = None) -> Any:
    """The generator state of a cuda device, as a cpu int64 tensor [seed, offset]."""
    return _random.default_generator(resolve("ember.cuda.get_rng_state", dev)).get_state()


def set_rng_state(new_state: Any, dev: Any = None) -> None:
    """Restore a state from `get_rng_state`."""
    _random.default_generator(resolve("ember.cuda.set_rng_state", dev)).set_state(new_state)


# -- device facts ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceProperties:
    """What Ember knows about a cuda device (the plugin's probe)."""

    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int


def get_device_properties(dev: Any = None) -> DeviceProperties:
    """Name, compute capability, memory and SM count of a cuda device, from the plugin."""
    chosen = resolve("ember.cuda.get_device_properties", dev)
    facts = getattr(chosen.backend, "device_properties", None)
    if facts is None:
        raise RuntimeError("get_device_properties: the cuda plugin does not report properties")
    return DeviceProperties(**facts(chosen._ordinal))


def get_device_name(dev: Any = None) -> str:
    """The device's name."""
    return get_device_properties(dev).name


def get_device_capability(dev: Any = None) -> tuple[int, int]:
    """The compute capability (major, minor)."""
    props = get_device_properties(dev)
    return props.major, props.minor


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether a cuda device can hold bfloat16 tensors (False without one, as torch).

    Ember's cuda kernels store bfloat16 and compute it in float on every GPU, which is
    emulation in torch's sense below compute capability 8.0 (Ampere)."""
    if not is_available():
        return False
    return including_emulation or get_device_capability()[0] >= 8
