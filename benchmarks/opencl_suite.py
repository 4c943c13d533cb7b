"""The opencl suite: Ember's opencl rows against pyopencl and the CPU device, then figures.

Skipped, with the reason, when Ember's opencl device (or pyopencl) is unavailable. A
figure that fails is reported with its error; the rows and the other figure still run.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Final

from benchmarks.bench_opencl import GROUPS
from benchmarks.figures import plot_allocator, plot_timeline
from benchmarks.harness import Budget, describe_error
from benchmarks.opencl_runner import OpenCLTarget, RowResult, opencl_target, run_groups
from benchmarks.opencl_training import compare_allocator, record_timeline

__all__ = ["FIGURE_FILES", "FigureResult", "OpenCLSuite", "case_names", "run_opencl_suite"]

FIGURE_FILES: Final = {"timeline": "opencl-timeline.png", "allocator": "opencl-allocator.png"}
_TIMELINE_STEPS: Final = 3
_ALLOCATOR_ITERATIONS: Final = 10
_ALLOCATOR_ROUNDS: Final = 3


@dataclass
class FigureResult:
    """One figure: its PNG (None when not written), its numbers, or why it failed."""

    name: str
    path: Path | None = None
    summary: Any = None
    error: str | None = None


@dataclass
class OpenCLSuite:
    """The suite's outcome: the device, or why it was skipped; rows; figures."""

    device: str | None
    skipped: str | None
    rows: list[RowResult] = field(default_factory=list)
    figures: list[FigureResult] = field(default_factory=list)


def case_names() -> tuple[str, ...]:
    """Every name `--only` accepts for this suite: the rows and the figures."""
    return (*(row.name for group in GROUPS for row in group.rows), *FIGURE_FILES)


def run_opencl_suite(
    ember: ModuleType | None,
    budget: Budget,
    *,
    only: Collection[str],
    quick: bool,
    figures_directory: Path | None,
) -> OpenCLSuite:
    """Run the rows and figures that `only` selects (all when empty); PNGs when a directory."""
    target, reason = opencl_target(ember)
    if target is None:
        print(f"opencl suite skipped: {reason}", file=sys.stderr)
        return OpenCLSuite(None, reason)
    print(f"running the opencl suite on {target.describe()}...", file=sys.stderr)
    suite = OpenCLSuite(target.describe(), None, run_groups(target, GROUPS, only, budget))
    rounds = 1 if quick else _ALLOCATOR_ROUNDS
    makers: dict[str, Callable[[], FigureResult]] = {
        "timeline": lambda: _timeline(target, figures_directory),
        "allocator": lambda: _allocator(target, rounds, figures_directory),
    }
    for name, make in makers.items():
        if only and name not in only:
            continue
        try:
            figure = make()
        except Exception as error:  # a figure's failure is reported, never the run's
            traceback.print_exc(file=sys.stderr)
            figure = FigureResult(name, error=describe_error(error))
        print(f"  [opencl] figure {name}: {figure.error or 'done'}", file=sys.stderr)
        suite.figures.append(figure)
    return suite


def _timeline(target: OpenCLTarget, directory: Path | None) -> FigureResult:
    record = record_timeline(target.ember, target.device, _TIMELINE_STEPS)
    path = None
    if directory is not None:
        path = plot_timeline(record, str(target.device), directory / FIGURE_FILES["timeline"])
    return FigureResult("timeline", path, record.summary())


def _allocator(target: OpenCLTarget, rounds: int, directory: Path | None) -> FigureResult:
    runs = compare_allocator(target.ember, target.device, _ALLOCATOR_ITERATIONS, rounds)
    path = None
    if directory is not None:
        path = plot_allocator(runs, str(target.device), directory / FIGURE_FILES["allocator"])
    return FigureResult("allocator", path, [run.summary() for run in runs])
