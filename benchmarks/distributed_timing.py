"""Timing across ranks, for the distributed suite's workers (run under `mpiexec`).

Every timed repetition starts with a barrier, so that all ranks enter it together, and
lasts until the slowest rank is done: a repetition's time is the maximum over the ranks
(gathered after the loop, so no collective of the harness falls inside a timed span).
Imported by the workers only: it needs mpi4py.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from mpi4py import MPI

__all__ = ["Samples", "interleaved"]


@dataclass
class Samples:
    """One statement's repetitions, in seconds (each the slowest rank's), after warm-up."""

    seconds: list[float]
    calls: int = 1  # calls of the statement per repetition

    def per_call(self, *, best: bool = False) -> float:
        """The median (or the fastest) repetition's time per call."""
        value = min(self.seconds) if best else statistics.median(self.seconds)
        return value / self.calls

    def as_json(self) -> dict[str, Any]:
        ordered = sorted(self.seconds)
        return {
            "median_s": self.per_call(),
            "min_s": self.per_call(best=True),
            "max_s": ordered[-1] / self.calls,
            "repetitions": len(ordered),
            "calls_per_repetition": self.calls,
        }


def interleaved(
    comm: Any,
    statements: dict[str, Callable[[], object]],
    *,
    repetitions: int,
    warmup: int,
    calls: int = 1,
    prepare: dict[str, Callable[[], object]] | None = None,
    finish: Callable[[], object] | None = None,
) -> dict[str, Samples]:
    """Time each statement `repetitions` times, alternating between them (the order flips
    every repetition, so neither side always runs on the caches the other left), each
    repetition after a barrier; the first `warmup` rounds are run and dropped. A statement's
    `prepare` runs before its barrier, `finish` after its span: neither is timed."""
    prepare = prepare or {}
    names = list(statements)
    spans: dict[str, list[float]] = {name: [] for name in names}
    for round_index in range(warmup + repetitions):
        order = names if round_index % 2 == 0 else names[::-1]
        for name in order:
            statement = statements[name]
            if name in prepare:
                prepare[name]()
            comm.Barrier()
            start = time.perf_counter()
            for _ in range(calls):
                statement()
            elapsed = time.perf_counter() - start
            if finish is not None:
                finish()
            if round_index >= warmup:
                spans[name].append(elapsed)
    return {name: Samples(_slowest(comm, spans[name]), calls) for name in names}


def _slowest(comm: Any, seconds: Sequence[float]) -> list[float]:
    """Each repetition's time on the slowest rank."""
    mine = np.asarray(seconds, dtype=np.float64)
    slowest = np.empty_like(mine)
    comm.Allreduce(mine, slowest, op=MPI.MAX)
    return [float(value) for value in slowest]
