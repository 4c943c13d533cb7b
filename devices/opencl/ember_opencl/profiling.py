"""A timeline of host dispatch against device execution, from OpenCL profiling events.

    with ember_opencl.profiling.timeline() as tl:
        run_a_few_training_steps()
    for span in tl.spans():   # after the block: every recorded command has completed
        ...

While the block runs, every kernel launch and host copy records its name, the host
interval of its enqueue call (`time.perf_counter_ns`) and its cl.Event. On exit the
recorder waits for those events, then puts each command's device interval
(PROFILING_COMMAND_START / END) on the host clock.

Alignment: for each device, a marker is enqueued on an idle queue between two host
timestamps taken around `enqueue + wait`; the marker's END lies between them, so the
offset is taken at their midpoint and is off by at most half their distance. The
tightest of several tries is kept; `Timeline.alignment_error_ns` reports that bound
(tens of µs on PoCL, where waking the host after a wait dominates).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

__all__ = ["ACTIVE", "Span", "Timeline", "timeline"]

_ALIGNMENT_TRIES = 5


class Span(NamedTuple):
    """One command: host enqueue interval and device execution interval, host-clock ns."""

    name: str
    host_start_ns: int
    host_end_ns: int
    device_start_ns: int
    device_end_ns: int


class Timeline:
    """Records of the commands enqueued while a `timeline()` block was active."""

    def __init__(self) -> None:
        self.records: list[tuple[str, int, int, Any]] = []
        self.offsets_ns: dict[Any, int] = {}
        self.alignment_error_ns = 0

    def add(self, name: str, host_start_ns: int, host_end_ns: int, event: Any) -> None:
        """Record one enqueued command (called by launches and copies)."""
        self.records.append((name, host_start_ns, host_end_ns, event))

    def _align(self) -> None:
        """Measure each device's profiling-clock offset to perf_counter_ns."""
        import pyopencl as cl  # only needed once a timeline is taken

        for _, _, _, event in self.records:
            queue = event.command_queue
            device = queue.device
            if device in self.offsets_ns:
                continue
            probe = cl.CommandQueue(
                queue.context, device, properties=cl.command_queue_properties.PROFILING_ENABLE
            )
            best: tuple[int, int] | None = None
            for _ in range(_ALIGNMENT_TRIES):
                before = time.perf_counter_ns()
                marker = cl.enqueue_marker(probe)
                marker.wait()
                after = time.perf_counter_ns()
                width = after - before
                offset = (before + after) // 2 - marker.profile.end
                if best is None or width < best[0]:
                    best = (width, offset)
            assert best is not None
            self.offsets_ns[device] = best[1]
            self.alignment_error_ns = max(self.alignment_error_ns, best[0] // 2)

    def finish(self) -> None:
        """Wait for every recorded command, then align the clocks."""
        for _, _, _, event in self.records:
            event.wait()
        self._align()

    def spans(self) -> list[Span]:
        """Each recorded command's host and device interval on the host clock (ns)."""
        result = []
        for name, host_start, host_end, event in self.records:
            offset = self.offsets_ns[event.command_queue.device]
            result.append(
                Span(
                    name,
                    host_start,
                    host_end,
                    event.profile.start + offset,
                    event.profile.end + offset,
                )
            )
        return result


#: The recorder of the innermost active `timeline()` block, None when off (the hot path
#: of `launch` reads this one module attribute).
ACTIVE: Timeline | None = None


@contextmanager
def timeline() -> Iterator[Timeline]:
    """Record every OpenCL launch and host copy made inside the block."""
    global ACTIVE
    previous = ACTIVE
    recorder = ACTIVE = Timeline()
    try:
        yield recorder
    finally:
        ACTIVE = previous
        recorder.finish()
