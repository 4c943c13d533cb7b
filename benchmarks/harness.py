"""Timing: adaptive repetition of one statement, reported as median and min per call."""

from __future__ import annotations

import statistics
import time
import timeit
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["Budget", "Sampler", "Timing", "describe_error", "measure"]

_NS_PER_S: Final = 1_000_000_000
_MAX_NUMBER: Final = 1 << 22


@dataclass(frozen=True)
class Budget:
    """How long one measurement may take; every figure is in seconds."""

    target_s: float = 0.3
    min_sample_s: float = 0.002
    min_samples: int = 5
    max_samples: int = 400
    hard_cap_s: float = 3.0


@dataclass(frozen=True)
class Timing:
    """Per-call times of one measurement, in nanoseconds."""

    median_ns: float
    min_ns: float
    p25_ns: float
    p75_ns: float
    number: int
    samples: int
    total_s: float

    def as_json(self) -> dict[str, float | int]:
        """The timing as a plain dict for the results file."""
        return {
            "median_ns": self.median_ns,
            "min_ns": self.min_ns,
            "p25_ns": self.p25_ns,
            "p75_ns": self.p75_ns,
            "number": self.number,
            "samples": self.samples,
            "total_s": round(self.total_s, 4),
        }


class Sampler:
    """Repeated timings of one statement, taken in rounds that can interleave with others.

    Construction calibrates the calls per sample (`number`) until a sample lasts
    `min_sample_s`, so that sub-microsecond ops are not dominated by the clock. `run` then
    samples for a slice of wall time; the runner alternates libraries slice by slice, so a
    burst of load from another process lands on all of them rather than on one column.
    The caller has already run the statement once (warm-up and result check).

    `before` runs ahead of every sample, outside the timed span; `clock` reads the time at
    a sample's start and end. An asynchronous device passes its synchronize to `before`
    (each sample starts with an idle device) and, to count the device's work, a clock that
    synchronizes before reading the time.
    """

    __slots__ = ("_budget", "_per_call", "_spent_ns", "_timer", "number")

    def __init__(
        self,
        statement: str,
        namespace: dict[str, Any],
        budget: Budget,
        *,
        before: Callable[[], object] | None = None,
        clock: Callable[[], int] = time.perf_counter_ns,
    ) -> None:
        self._budget = budget
        self._timer = timeit.Timer(
            statement, setup=before or "pass", globals=namespace, timer=clock
        )
        start = time.perf_counter_ns()
        self.number, first = _calibrate(self._timer, budget.min_sample_s * _NS_PER_S)
        self._per_call = [first]
        self._spent_ns: float = time.perf_counter_ns() - start

    def run(self, seconds: float) -> None:
        """Sample for about `seconds` of wall time, within the budget's caps."""
        end = time.perf_counter_ns() + seconds * _NS_PER_S
        while self._may_sample() and time.perf_counter_ns() < end:
            self._sample()

    def finish(self) -> Timing:
        """Top up to `min_samples` (unless over the hard cap) and summarise per call."""
        while len(self._per_call) < self._budget.min_samples and self._may_sample():
            self._sample()
        per_call = self._per_call
        quartiles = statistics.quantiles(per_call, n=4) if len(per_call) > 1 else per_call * 3
        return Timing(
            median_ns=statistics.median(per_call),
            min_ns=min(per_call),
            p25_ns=quartiles[0],
            p75_ns=quartiles[2],
            number=self.number,
            samples=len(per_call),
            total_s=self._spent_ns / _NS_PER_S,
        )

    def _may_sample(self) -> bool:
        budget = self._budget
        return (
            len(self._per_call) < budget.max_samples
            and self._spent_ns < budget.hard_cap_s * _NS_PER_S
        )

    def _sample(self) -> None:
        elapsed = self._timer.timeit(self.number)
        self._spent_ns += elapsed
        self._per_call.append(elapsed / self.number)


def measure(statement: str, namespace: dict[str, Any], budget: Budget) -> Timing:
    """Time `statement` alone for `budget.target_s` (no interleaving); gc is off while timing."""
    sampler = Sampler(statement, namespace, budget)
    sampler.run(budget.target_s)
    return sampler.finish()


def _calibrate(timer: timeit.Timer, min_sample_ns: float) -> tuple[int, float]:
    """Calls per sample so that a sample lasts `min_sample_ns`, and that last sample per call.

    Judged on the fastest call seen, so that a sample slowed by another process does not
    end the calibration with too few calls per sample. The final sample counts as the
    measurement's first: a kernel that takes seconds is then run only twice in all.
    """
    number = 1
    fastest = float("inf")
    while True:
        per_call = max(float(timer.timeit(number)), 1.0) / number
        fastest = min(fastest, per_call)
        if fastest * number >= min_sample_ns or number >= _MAX_NUMBER:
            return number, per_call
        grow = min_sample_ns / (fastest * number) * 1.25
        number = min(_MAX_NUMBER, max(number * 2, int(number * grow)))


def describe_error(error: BaseException) -> str:
    """`Type: message` on one line, for a table row and the results file."""
    kind = type(error)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    message = " ".join(str(error).split())
    return f"{name}: {message}" if message else name
