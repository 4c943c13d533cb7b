"""Streams and events, generic over devices (the native objects come from the backend).

A stream is an ordered queue of device work. Every kernel and copy is enqueued on the
current stream of its device, which is per thread: `ember.stream(s)` makes `s` current
for its device inside a `with` block. A device that computes synchronously (the CPU)
has trivially complete streams and events, so code written for an asynchronous device
runs unchanged there.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ember._device import device, get_default_device

__all__ = [
    "Event",
    "Stream",
    "current_stream",
    "default_stream",
    "set_stream",
    "stream",
    "synchronize",
]


def _device_of(dev: Any) -> device:
    if dev is None:
        return get_default_device()
    return device(dev).placement


class Stream:
    """An in-order queue of work on one device (PyTorch's torch.cuda.Stream, for any device).

    `ember.Stream(device=None, priority=0)` creates a new stream on `device` (the default
    device when None). Work on different streams may run concurrently; order them with
    `wait_stream`, `wait_event` or events.
    """

    __slots__ = ("__weakref__", "device", "native", "priority")

    def __init__(self, device: Any = None, priority: int = 0) -> None:
        dev = _device_of(device)
        self.device = dev
        self.priority = int(priority)
        self.native = dev._backend.stream_create(dev._ordinal, self.priority, False)

    @classmethod
    def _wrap(cls, dev: device, native: Any) -> Stream:
        self = object.__new__(cls)
        self.device, self.priority, self.native = dev, 0, native
        return self

    def query(self) -> bool:
        """True when every piece of work enqueued on this stream has completed."""
        return self.device._backend.stream_query(self.native)

    def synchronize(self) -> None:
        """Block the host until every piece of work enqueued on this stream has completed."""
        self.device._backend.stream_synchronize(self.native)

    def wait_event(self, event: Event) -> None:
        """Make all future work on this stream wait until `event` has completed."""
        if event._marker is None:
            return  # never recorded: nothing to wait for, as in PyTorch
        if event.device is not self.device:
            raise RuntimeError(
                f"Stream.wait_event: the event was recorded on {event.device}, "
                f"the stream is on {self.device}"
            )
        self.device._backend.stream_wait_marker(self.native, event._marker)

    def wait_stream(self, stream: Stream) -> None:
        """Make all future work on this stream wait for the work already on `stream`."""
        if stream is not self:
            self.wait_event(stream.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        """Record `event` (a new one when None) at this point of the stream; return it."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Stream):
            return NotImplemented
        # A synchronous device's natives are all None: only identity tells its streams apart.
        return self is other or (
            self.native is not None and self.device is other.device and self.native is other.native
        )

    def __hash__(self) -> int:
        return hash((self.device, id(self) if self.native is None else id(self.native)))

    def __repr__(self) -> str:
        kind = "default " if self is self.device._default_stream else ""
        return f"<ember.Stream {kind}device={self.device} priority={self.priority}>"


class Event:
    """A point in a stream's work: record it, then query, wait on or time it.

    `ember.Event(device=None, enable_timing=False)`: the device is taken from the stream
    of the first `record` when not given.
    """

    __slots__ = ("_marker", "device", "enable_timing")

    def __init__(self, device: Any = None, enable_timing: bool = False) -> None:
        self.device: device | None = None if device is None else _device_of(device)
        self.enable_timing = bool(enable_timing)
        self._marker: Any = None

    def record(self, stream: Stream | None = None) -> None:
        """Capture the work enqueued on `stream` (the current stream when None) so far."""
        if stream is None:
            stream = current_stream(self.device)
        if self.device is None:
            self.device = stream.device
        elif stream.device is not self.device:
            raise RuntimeError(
                f"Event.record: the event belongs to {self.device}, the stream to {stream.device}"
            )
        dev = stream.device
        self._marker = dev._backend.event_record(stream.native, dev._ordinal, self.enable_timing)

    def wait(self, stream: Stream | None = None) -> None:
        """Make future work on `stream` (the current stream when None) wait for this event."""
        if stream is None:
            stream = current_stream(self.device)
        stream.wait_event(self)

    def query(self) -> bool:
        """True when the recorded work has completed (or the event was never recorded)."""
        if self._marker is None or self.device is None:
            return True
        return self.device._backend.event_query(self._marker)

    def synchronize(self) -> None:
        """Block the host until the recorded work has completed."""
        if self._marker is not None and self.device is not None:
            self.device._backend.event_synchronize(self._marker)

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds from this event to `end_event`, both recorded and completed."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError(
                "Event.elapsed_time: both events must be created with enable_timing=True"
            )
        if self._marker is None or end_event._marker is None:
            raise RuntimeError(
                "Event.elapsed_time: both events must be recorded before calling elapsed_time"
            )
        if self.device is not end_event.device:
            raise RuntimeError(
                f"Event.elapsed_time: the events are on {self.device} and {end_event.device}"
            )
        if not (self.query() and end_event.query()):
            raise RuntimeError(
                "Event.elapsed_time: both events must have completed "
                "(call end_event.synchronize() first)"
            )
        assert self.device is not None
        return self.device._backend.event_elapsed_ms(self._marker, end_event._marker)

    def __repr__(self) -> str:
        state = "unrecorded" if self._marker is None else "recorded"
        return f"<ember.Event device={self.device} {state} enable_timing={self.enable_timing}>"


# -- the default and current streams -----------------------------------------------------
# Devices are interned and never freed, so the default stream lives on the device object
# and the thread's current streams are keyed by id(device): both avoid hashing a device
# (a Python-level __hash__) on the kernels' hot path.

_defaults_lock = threading.Lock()


class _Current(threading.local):
    def __init__(self) -> None:
        self.streams: dict[int, Stream] = {}


_current = _Current()


def default_stream(device: Any = None) -> Stream:
    """The default stream of `device` (the default device when None); one per device."""
    dev = _device_of(device)
    s: Stream | None = dev._default_stream
    if s is None:
        with _defaults_lock:
            s = dev._default_stream
            if s is None:
                native = dev._backend.stream_create(dev._ordinal, 0, True)
                s = dev._default_stream = Stream._wrap(dev, native)
    return s


def current_stream(device: Any = None) -> Stream:
    """The stream that new work on `device` goes to in this thread."""
    dev = _device_of(device)
    s = _current.streams.get(id(dev))
    return s if s is not None else default_stream(dev)


def current_native(dev: device) -> Any:
    """The native object of `dev`'s current stream: the kernels' fast path."""
    streams = _current.streams
    if streams:
        s = streams.get(id(dev))
        if s is not None:
            return s.native
    s = dev._default_stream or default_stream(dev)
    return s.native


def set_stream(s: Stream) -> None:
    """Make `s` the current stream of its device in this thread (prefer `ember.stream`)."""
    if s is default_stream(s.device):
        _current.streams.pop(id(s.device), None)
    else:
        _current.streams[id(s.device)] = s


@contextmanager
def stream(s: Stream | None) -> Iterator[Stream | None]:
    """Within the block, work on `s.device` goes to `s` (a no-op when `s` is None)."""
    if s is None:
        yield None
        return
    previous = current_stream(s.device)
    set_stream(s)
    try:
        yield s
    finally:
        set_stream(previous)


def synchronize(device: Any = None) -> None:
    """Block the host until all work on every stream of `device` has completed."""
    dev = _device_of(device)
    dev._backend.synchronize(dev._ordinal)
