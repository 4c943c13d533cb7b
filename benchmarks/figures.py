"""The paper's two runtime figures as PNGs (matplotlib, Agg: no display needed).

- `plot_timeline`: host enqueue intervals above device execution intervals on one time
  axis, coloured by training step, with when the host finished enqueueing.
- `plot_allocator`: time per iteration and raw device allocations per iteration, caching
  allocator on against off.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, Final

from benchmarks.opencl_training import HOST_COPIES, MODEL, AllocatorRun, TimelineRecord

__all__ = ["plot_allocator", "plot_timeline"]

_STEP_COLOURS: Final = ("tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown")
_LANE_HEIGHT: Final = 0.6
_DPI: Final = 120


def _pyplot() -> ModuleType:
    import matplotlib

    matplotlib.use("Agg")  # files only, never a window
    import matplotlib.pyplot as plt

    return plt


def plot_timeline(record: TimelineRecord, device: str, path: Path) -> Path:
    """Two lanes, host enqueue calls over device execution; write `path` and return it."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(12, 3.4))
    lanes = ((1.0, record.host, "host: enqueue calls"), (0.0, record.device, "device: execution"))
    for y, intervals, _ in lanes:
        for index, (start, end) in enumerate(intervals):
            _bar(axes, y, start, end, _colour(record.step_of[index]), record.names[index])
    _marks(axes, record)
    axes.set_yticks([1.0, 0.0], [label for _, _, label in lanes])
    axes.set_ylim(-0.62, 1.58)
    axes.set_xlim(right=max(record.host_done_ms, max(end for _, end in record.device)) * 1.2)
    axes.set_xlabel("time since the first step began (ms, host clock)")
    summary = record.summary()
    axes.set_title(
        f"Ember on {device}: {summary['steps']} training steps of an {MODEL}: "
        f"{summary['kernels']} kernels, {summary['host_copies']} host copies (hatched: "
        f"a read waits for the device)\nup to {summary['max_in_flight']} commands in flight; "
        f"the device finished {summary['host_ahead_ms']:.1f} ms after the host's last enqueue",
        fontsize=9,
    )
    figure.tight_layout()
    return _save(figure, path)


def _bar(axes: Any, y: float, start: float, end: float, colour: str, name: str) -> None:
    """One command; copies hatched. The edge keeps a microsecond enqueue visible."""
    copy = name in HOST_COPIES
    axes.broken_barh(
        [(start, max(end - start, 0.0))],
        (y - _LANE_HEIGHT / 2, _LANE_HEIGHT),
        facecolors="white" if copy else colour,
        edgecolors="black" if copy else colour,
        hatch="////" if copy else None,
        linewidth=0.4,
    )


def _marks(axes: Any, record: TimelineRecord) -> None:
    """Step starts, the host's last enqueue and the device's last command."""
    device_done = max(end for _, end in record.device)
    axes.axvline(record.host_done_ms, color="black", linestyle="--", linewidth=1)
    axes.axvline(device_done, color="grey", linestyle=":", linewidth=1)
    axes.annotate(
        f" host done enqueueing: {record.host_done_ms:.1f} ms",
        (record.host_done_ms, 0.5),
        fontsize=8,
        va="center",
    )
    axes.annotate(
        f"device done: {device_done:.1f} ms ",
        (device_done, -0.48),
        fontsize=8,
        ha="right",
        va="center",
    )
    for step, start in enumerate(record.step_starts_ms):
        axes.annotate(
            f"step {step + 1}", (start, 1.42), fontsize=8, color=_colour(step), va="center"
        )


def plot_allocator(runs: Sequence[AllocatorRun], device: str, path: Path) -> Path:
    """Per-iteration time and raw allocations, one line per allocator mode."""
    plt = _pyplot()
    figure, (time_axes, raw_axes) = plt.subplots(1, 2, figsize=(11, 3.6))
    for run in runs:
        label = "caching allocator on" if run.caching else "caching allocator off"
        style = "-o" if run.caching else "--s"
        iterations = range(1, len(run.times_ms) + 1)
        lines = time_axes.plot(iterations, run.times_ms, style, label=label, markersize=4)
        low, high = zip(*run.spread_ms, strict=True)
        time_axes.fill_between(iterations, low, high, color=lines[0].get_color(), alpha=0.15)
        raw_axes.plot(iterations, run.raw_allocations, style, label=label, markersize=4)
    time_axes.set_xlabel("iteration")
    rounds = len(runs[0].rounds_ms)
    time_axes.set_ylabel("ms per iteration (synchronized)")
    time_axes.set_title(f"median of {rounds} rounds; band: fastest to slowest", fontsize=8)
    time_axes.set_ylim(bottom=0)
    raw_axes.set_xlabel("iteration")
    raw_axes.set_ylabel("raw device allocations")
    raw_axes.set_ylim(bottom=0)
    raw_axes.legend(fontsize=8)
    figure.suptitle(f"Ember on {device}: {MODEL}, caching allocator on vs off", fontsize=10)
    figure.tight_layout()
    return _save(figure, path)


def _colour(step: int) -> str:
    return _STEP_COLOURS[step % len(_STEP_COLOURS)]


def _save(figure: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=_DPI)
    _pyplot().close(figure)
    return path
