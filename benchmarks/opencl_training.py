"""The two runtime experiments behind the paper's figures, on Ember's opencl device.

- `record_timeline`: a few training steps under `ember_opencl.profiling.timeline()`: when
  the host enqueued each kernel against when the device ran it, on the host's clock.
- `compare_allocator`: the same training steps with the caching allocator on and off:
  time per iteration (device work included) and raw device allocations per iteration.

The model is an MLP 784-256-256-10 with ReLU, cross-entropy and SGD, batch 64, on random
inputs (the `mlp_step` case of the training suite, on opencl).
"""

from __future__ import annotations

import importlib
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final

import numpy as np

__all__ = ["AllocatorRun", "TimelineRecord", "compare_allocator", "record_timeline"]

_BATCH: Final = 64
_SEED: Final = 7
_RAW_ALLOCATIONS: Final = "num_raw_alloc"
# The names the timeline gives host copies (every other record is a kernel launch).
HOST_READ: Final = "copy_to_host"
HOST_COPIES: Final = (HOST_READ, "copy_from_host")
MODEL: Final = "MLP 784-256-256-10, batch 64, SGD"


@dataclass(frozen=True)
class TimelineRecord:
    """Kernels of `steps` training steps: names, host and device intervals (ms from start).

    `step_starts_ms`: when the host began each step; `host_done_ms`: when it had enqueued
    the last step; `alignment_error_ms`: the bound on the device-to-host clock offset.
    """

    names: list[str]
    host: list[tuple[float, float]]
    device: list[tuple[float, float]]
    step_of: list[int]
    step_starts_ms: list[float]
    host_done_ms: float
    alignment_error_ms: float

    def summary(self) -> dict[str, Any]:
        """The figures the plot shows, for the results file."""
        device_end = max(end for _, end in self.device)
        steps = len(self.step_starts_ms)
        reads = [i for i, name in enumerate(self.names) if name == HOST_READ]
        return {
            "model": MODEL,
            "steps": steps,
            "kernels": sum(name not in HOST_COPIES for name in self.names),
            "host_copies": sum(name in HOST_COPIES for name in self.names),
            # A blocking read waits for the device: the host cannot run ahead past it.
            "host_reads": len(reads),
            "host_read_wait_ms": round(sum(self.host[i][1] - self.host[i][0] for i in reads), 3),
            "host_enqueue_done_ms": round(self.host_done_ms, 3),
            "device_start_ms": round(min(start for start, _ in self.device), 3),
            "device_done_ms": round(device_end, 3),
            "host_ahead_ms": round(device_end - self.host_done_ms, 3),
            "device_busy_ms": round(sum(end - start for start, end in self.device), 3),
            "max_in_flight": self.max_in_flight(),
            "alignment_error_ms": round(self.alignment_error_ms, 3),
        }

    def max_in_flight(self) -> int:
        """The most commands enqueued but not yet finished at once: how far the host ran ahead."""
        changes = sorted(
            [(host_end, 1) for _, host_end in self.host]
            + [(device_end, -1) for _, device_end in self.device]
        )
        depth = deepest = 0
        for _, change in changes:
            depth += change
            deepest = max(deepest, depth)
        return deepest


@dataclass(frozen=True)
class AllocatorRun:
    """Per-iteration times (ms, synchronized) and raw allocations, caching on or off.

    One list per round: the rounds alternate between the modes, so that load from other
    processes reaches both; a figure per iteration is the median over the rounds.
    """

    caching: bool
    rounds_ms: list[list[float]]
    rounds_raw: list[list[int]]

    @property
    def times_ms(self) -> list[float]:
        """Each iteration's median time over the rounds."""
        return [statistics.median(times) for times in zip(*self.rounds_ms, strict=True)]

    @property
    def spread_ms(self) -> list[tuple[float, float]]:
        """Each iteration's fastest and slowest time over the rounds."""
        return [(min(times), max(times)) for times in zip(*self.rounds_ms, strict=True)]

    @property
    def raw_allocations(self) -> list[int]:
        """Each iteration's raw allocations (the most of any round)."""
        return [max(counts) for counts in zip(*self.rounds_raw, strict=True)]

    def summary(self) -> dict[str, Any]:
        """Per-iteration figures; the first iteration, then the median of the rest."""
        rest = [t for times in self.rounds_ms for t in times[1:]] or self.times_ms
        raw = self.raw_allocations
        return {
            "caching": self.caching,
            "rounds": len(self.rounds_ms),
            "times_ms": [round(t, 3) for t in self.times_ms],
            "rounds_ms": [[round(t, 3) for t in times] for times in self.rounds_ms],
            "raw_allocations": raw,
            "first_ms": round(self.times_ms[0], 3),
            "median_after_first_ms": round(statistics.median(rest), 3),
            "raw_allocations_first": raw[0],
            "raw_allocations_after_first": sum(raw[1:]),
        }


def _training_step(ember: ModuleType, device: Any) -> Callable[[], Any]:
    """One SGD step of the MLP on a fixed random batch; returns the loss (not read)."""
    rng = np.random.default_rng(_SEED)
    nn = ember.nn
    ember.manual_seed(_SEED)
    model = nn.Sequential(
        nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)
    ).to(device)
    optimizer = ember.optim.SGD(model.parameters(), lr=0.01)
    loss_function = nn.CrossEntropyLoss()
    x = ember.from_numpy(rng.uniform(0, 1, (_BATCH, 784)).astype(np.float32)).to(device)
    y = ember.from_numpy(rng.integers(0, 10, _BATCH).astype(np.int64)).to(device)

    def step() -> Any:
        optimizer.zero_grad()
        loss = loss_function(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    return step


def record_timeline(ember: ModuleType, device: Any, steps: int, warmup: int = 2) -> TimelineRecord:
    """Train `warmup` steps (kernel builds, allocator cache), then record `steps` steps."""
    # The plugin is optional: imported only when this suite runs on its device.
    profiling = importlib.import_module("ember_opencl.profiling")
    step = _training_step(ember, device)
    for _ in range(warmup):
        step()
    ember.synchronize(device)
    starts: list[int] = []
    with profiling.timeline() as recorder:
        for _ in range(steps):
            starts.append(time.perf_counter_ns())
            step()
        host_done = time.perf_counter_ns()
    spans = sorted(recorder.spans(), key=lambda span: span.host_start_ns)
    origin = starts[0]

    def ms(ns: int) -> float:
        return (ns - origin) / 1e6

    return TimelineRecord(
        names=[span.name for span in spans],
        host=[(ms(span.host_start_ns), ms(span.host_end_ns)) for span in spans],
        device=[(ms(span.device_start_ns), ms(span.device_end_ns)) for span in spans],
        step_of=[sum(start <= span.host_start_ns for start in starts) - 1 for span in spans],
        step_starts_ms=[ms(start) for start in starts],
        host_done_ms=ms(host_done),
        alignment_error_ms=recorder.alignment_error_ns / 1e6,
    )


def compare_allocator(
    ember: ModuleType, device: Any, iterations: int, rounds: int
) -> list[AllocatorRun]:
    """`rounds` times caching on, then off: `iterations` steps of a fresh model each time.

    One warm-up step first builds every kernel, so that no first iteration pays for it;
    each run starts from an emptied cache.
    """
    memory = importlib.import_module("ember.memory")
    _training_step(ember, device)()
    ember.synchronize(device)
    times: dict[bool, list[list[float]]] = {True: [], False: []}
    raw: dict[bool, list[list[int]]] = {True: [], False: []}
    for _ in range(rounds):
        for caching in (True, False):
            with _caching(memory, device, caching):
                run_times, run_raw = _iterations(ember, memory, device, iterations)
            times[caching].append(run_times)
            raw[caching].append(run_raw)
    return [AllocatorRun(caching, times[caching], raw[caching]) for caching in (True, False)]


def _iterations(
    ember: ModuleType, memory: ModuleType, device: Any, iterations: int
) -> tuple[list[float], list[int]]:
    memory.empty_cache(device)
    step = _training_step(ember, device)
    ember.synchronize(device)
    times: list[float] = []
    raw: list[int] = []
    for _ in range(iterations):
        before = _raw_allocations(memory, device)
        start = time.perf_counter_ns()
        step()
        ember.synchronize(device)
        times.append((time.perf_counter_ns() - start) / 1e6)
        raw.append(_raw_allocations(memory, device) - before)
    return times, raw


def _raw_allocations(memory: ModuleType, device: Any) -> int:
    return int(memory.memory_stats(device)[_RAW_ALLOCATIONS])


@contextmanager
def _caching(memory: ModuleType, device: Any, enabled: bool) -> Iterator[None]:
    """The caching allocator on or off for `device` within the block, then as it was."""
    previous = memory.is_caching_enabled(device)
    memory.set_caching_enabled(enabled, device)
    try:
        yield
    finally:
        memory.set_caching_enabled(previous, device)
