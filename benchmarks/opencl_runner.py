"""Runs the opencl groups: Ember on `opencl:0` and pyopencl on the same device, one run.

Every statement is run once and its result checked against NumPy before anything is timed
(a wrong kernel is an error in its row, never a figure); then the group's statements are
sampled in alternating rounds, each sample starting with every queue of the group idle.
"""

from __future__ import annotations

import functools
import gc
import sys
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final

import numpy as np

from benchmarks.bench_opencl import Group, Row, Side, Timed
from benchmarks.harness import Budget, Sampler, describe_error
from benchmarks.opencl_baselines import make_baselines
from benchmarks.runner import Outcome

__all__ = ["OpenCLTarget", "RowResult", "opencl_target", "run_groups"]

_SEED: Final = 20240601
_ROUNDS: Final = 5


@dataclass(frozen=True)
class OpenCLTarget:
    """The device under test: Ember's `opencl:0` and the pyopencl device behind it."""

    ember: ModuleType
    device: Any  # ember.device
    cl_device: Any  # pyopencl.Device

    def describe(self) -> str:
        """E.g. `opencl:0 = pthread-AMD EPYC 7763 (Portable Computing Language)`."""
        return f"{self.device} = {self.cl_device.name} ({self.cl_device.platform.name})"


def opencl_target(ember: ModuleType | None) -> tuple[OpenCLTarget | None, str | None]:
    """The opencl device, or None and why the suite cannot run."""
    if ember is None:
        return None, "Ember failed to import"
    try:
        import pyopencl  # noqa: F401  # the baselines need it; say so before anything runs
    except ImportError as error:
        return None, f"pyopencl is not installed ({error})"
    try:
        device = ember.device("opencl:0")
        ember.empty(1, device=device)  # raises, with the plugin's reason, when unavailable
    except Exception as error:  # any failure means the device cannot be benchmarked
        hint = "" if "opencl" in ember.devices() else " (pip install -e 'devices/opencl[pocl]')"
        return None, f"Ember's opencl device is unavailable: {describe_error(error)}{hint}"
    return OpenCLTarget(ember, device, device._backend.cl_device(device.index)), None


@dataclass(frozen=True)
class RowResult:
    """One row: Ember's outcome and the reference's, in the group's unit."""

    row: Row
    group: Group
    measured: Timed
    reference: Timed
    outcomes: tuple[Outcome, Outcome]

    def sides(self) -> tuple[tuple[Timed, Outcome], tuple[Timed, Outcome]]:
        """(Ember's statement, its outcome), (the reference's, its outcome)."""
        return (self.measured, self.outcomes[0]), (self.reference, self.outcomes[1])

    def value(self, which: int, *, best: bool = False) -> float | None:
        """Ember's (0) or the reference's (1) figure, from the median or the fastest sample."""
        ns = self._ns(which, best)
        if ns is None:
            return None
        return ns / 1000 if self.group.unit == "us/op" else self.group.work / ns

    def ratio(self, *, best: bool = False) -> float | None:
        """Ember's speed over the reference's (> 1: Ember is faster)."""
        measured, reference = self._ns(0, best), self._ns(1, best)
        if measured is None or reference is None:
            return None
        return reference / measured

    def verdict(self, *, best: bool = False) -> str | None:
        """PASS/MISS against the row's target, ERROR or NO-REF; None without a target."""
        if self.row.min_ratio is None:
            return None
        if self._ns(0, best) is None:
            return "ERROR"
        ratio = self.ratio(best=best)
        if ratio is None:
            return "NO-REF"
        return "PASS" if ratio >= self.row.min_ratio else "MISS"

    def _ns(self, which: int, best: bool) -> float | None:
        timing = self.outcomes[which].timing
        if timing is None:
            return None
        return timing.min_ns if best else timing.median_ns


def run_groups(
    target: OpenCLTarget, groups: Collection[Group], only: Collection[str], budget: Budget
) -> list[RowResult]:
    """Run every selected row's statements; a failure stays in its rows."""
    rows: list[RowResult] = []
    for group in groups:
        selected = [row for row in group.rows if not only or row.name in only]
        if not selected:
            continue
        keys = {key for row in selected for key in (row.measured, row.reference)}
        outcomes = _run_group(target, group, keys, budget)
        timed = {entry.key: entry for entry in group.timed}
        for row in selected:
            pair = (outcomes[row.measured], outcomes[row.reference])
            result = RowResult(row, group, timed[row.measured], timed[row.reference], pair)
            rows.append(result)
            _progress(result)
        gc.collect()
        _quietly(functools.partial(target.ember.synchronize, target.device))
    return rows


def _run_group(
    target: OpenCLTarget, group: Group, keys: Collection[str], budget: Budget
) -> dict[str, Outcome]:
    inputs = group.make_inputs(np.random.default_rng(_SEED))
    expected = group.expected(inputs)
    entries = [entry for entry in group.timed if entry.key in keys]
    samplers: dict[str, Sampler] = {}
    namespace, syncs, failed = _namespace(target, inputs, {entry.side for entry in entries})
    errors = {entry.key: failed[entry.side] for entry in entries if entry.side in failed}
    idle = _all(syncs.values())
    for entry in entries:
        if entry.key in errors:
            continue
        try:
            _check(entry, namespace, expected, group)
            samplers[entry.key] = _sampler(entry, namespace, syncs, idle, budget)
        except Exception as error:  # any failure is this statement's, never the run's
            errors[entry.key] = describe_error(error)
    for _ in range(_ROUNDS):
        for key, sampler in list(samplers.items()):
            try:
                sampler.run(budget.target_s / _ROUNDS)
            except Exception as error:  # a kernel may fail only on a later call
                errors[key] = describe_error(error)
                del samplers[key]
    _quietly(idle)
    return {
        entry.key: Outcome(entry.key, error=errors[entry.key])
        if entry.key in errors
        else Outcome(entry.key, timing=samplers[entry.key].finish())
        for entry in entries
    }


def _namespace(
    target: OpenCLTarget, inputs: dict[str, np.ndarray], sides: Collection[Side]
) -> tuple[dict[str, Any], dict[Side, Callable[[], None]], dict[Side, str]]:
    """Each side's copy of the inputs, how to wait for its device, and the failed sides.

    One side's failure (with why) leaves the others running.
    """
    namespace: dict[str, Any] = {"ember": target.ember, "np": np}
    syncs: dict[Side, Callable[[], None]] = {}
    failed: dict[Side, str] = {}
    for side in sides:
        try:
            names, sync = _SETUPS[side](target, inputs)
        except Exception as error:  # e.g. a kernel missing or a baseline that does not build
            failed[side] = describe_error(error)
            continue
        namespace.update(names)
        if sync is not None:
            syncs[side] = sync
    return namespace, syncs, failed


_SideSetup = tuple[dict[str, Any], "Callable[[], None] | None"]


def _ember_side(target: OpenCLTarget, inputs: dict[str, np.ndarray]) -> _SideSetup:
    ember = target.ember
    names = {name: ember.from_numpy(a.copy()).to(target.device) for name, a in inputs.items()}
    names["c"] = ember.zeros_like(names["a"])
    return names, functools.partial(ember.synchronize, target.device)


def _cpu_side(target: OpenCLTarget, inputs: dict[str, np.ndarray]) -> _SideSetup:
    # The CPU device computes synchronously: nothing to wait for.
    return {f"{name}_cpu": target.ember.from_numpy(a.copy()) for name, a in inputs.items()}, None


def _pyopencl_side(target: OpenCLTarget, inputs: dict[str, np.ndarray]) -> _SideSetup:
    baselines = make_baselines(target.cl_device, inputs["a"], inputs["b"])
    return baselines.namespace, baselines.finish


_SETUPS: Final[dict[Side, Callable[[OpenCLTarget, dict[str, np.ndarray]], _SideSetup]]] = {
    "ember": _ember_side,
    "cpu": _cpu_side,
    "pyopencl": _pyopencl_side,
}


def _quietly(call: Callable[[], None]) -> None:
    """Wait for a device between groups; a failure there is already in the rows."""
    try:
        call()
    except Exception:  # the statement that broke the device has its error recorded
        return


def _all(calls: Collection[Callable[[], None]]) -> Callable[[], None]:
    def call_all() -> None:
        for call in calls:
            call()

    return call_all


def _check(entry: Timed, namespace: dict[str, Any], expected: np.ndarray, group: Group) -> None:
    """Run the statement once (warm-up, kernel builds) and compare its result with NumPy's."""
    namespace["_"] = eval(compile(entry.statement, entry.key, "eval"), namespace)
    actual = np.asarray(eval(compile(entry.result, entry.key, "eval"), namespace))
    del namespace["_"]
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        raise ValueError(
            f"wrong result: {actual.dtype}{list(actual.shape)}, "
            f"NumPy gives {expected.dtype}{list(expected.shape)}"
        )
    if not np.allclose(actual, expected, rtol=group.rtol, atol=group.atol):
        error = np.max(np.abs(actual.astype(np.float64) - expected.astype(np.float64)))
        raise ValueError(f"wrong result: max abs error {error:.3g} against NumPy")


def _sampler(
    entry: Timed,
    namespace: dict[str, Any],
    syncs: dict[Side, Callable[[], None]],
    idle: Callable[[], None],
    budget: Budget,
) -> Sampler:
    """Samples start with every queue idle; a synchronized clock waits for its side."""
    sync = syncs.get(entry.side)
    clock = time.perf_counter_ns
    if entry.synchronized and sync is not None:
        clock = _synchronizing_clock(sync)
    return Sampler(entry.statement, namespace, budget, before=idle, clock=clock)


def _synchronizing_clock(sync: Callable[[], None]) -> Callable[[], int]:
    def clock() -> int:
        sync()
        return time.perf_counter_ns()

    return clock


def _progress(result: RowResult) -> None:
    parts = []
    for which, entry in enumerate((result.measured, result.reference)):
        value = result.value(which)
        side = "ember" if which == 0 else entry.label
        parts.append(f"{side} {value:.4g}" if value is not None else f"{side} error")
    line = f"  [opencl] {result.row.name:<18} {result.group.unit:<6} " + ", ".join(parts)
    print(line, file=sys.stderr, flush=True)
