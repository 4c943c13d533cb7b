"""Runs the cases for every library at one thread count; a failure stays in its own row."""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from benchmarks.bench_core import Case
from benchmarks.harness import Budget, Sampler, Timing, describe_error
from benchmarks.libraries import Library, set_threads

__all__ = ["CaseResult", "Outcome", "Section", "run_section"]

_SEED: Final = 20240601
_REFERENCES: Final = ("torch", "numpy")
_ROUNDS: Final = 5
# NumPy runs first: its result is the reference the others are checked against; a case
# without a NumPy statement (training) is checked against PyTorch.
_RUN_ORDER: Final = ("numpy", "torch", "ember")
_REFERENCE_ORDER: Final = ("numpy", "torch")


@dataclass(frozen=True)
class Outcome:
    """One library on one case: a timing, or the error that prevented it."""

    library: str
    timing: Timing | None = None
    error: str | None = None


@dataclass
class CaseResult:
    """Every library's outcome on one case, with Ember's ratios and verdict."""

    case: Case
    outcomes: dict[str, Outcome]

    def value(self, library: str, *, best: bool = False) -> float | None:
        """The figure in the case's unit, from the median (or the fastest sample)."""
        outcome = self.outcomes.get(library)
        if outcome is None or outcome.timing is None:
            return None
        ns = outcome.timing.min_ns if best else outcome.timing.median_ns
        unit = self.case.unit
        if unit == "us/op":
            return ns / 1000
        if unit == "s":
            return ns / 1e9
        if unit == "steps/s":
            return self.case.work * 1e9 / ns
        return self.case.work / ns

    def ratio(self, reference: str, *, best: bool = False) -> float | None:
        """Ember's speed over `reference`'s (> 1: Ember is faster); "best" = faster reference.

        From the medians, or from the fastest samples when `best`.
        """
        ember = self._time_ns("ember", best)
        if reference == "best":
            times = [t for t in (self._time_ns(name, best) for name in _REFERENCES) if t]
            other = min(times) if times else None
        else:
            other = self._time_ns(reference, best)
        if ember is None or other is None:
            return None
        return other / ember

    def verdict(self, *, best: bool = False) -> str | None:
        """PASS or MISS against the case's target, ERROR if Ember failed, None without one."""
        target = self.case.target
        if target is None:
            return None
        if self._time_ns("ember", best) is None:
            return "ERROR"
        ratio = self.ratio(target.reference, best=best)
        if ratio is None:
            return "NO-REF"
        return "PASS" if ratio >= target.min_ratio else "MISS"

    def _time_ns(self, library: str, best: bool) -> float | None:
        outcome = self.outcomes.get(library)
        if outcome is None or outcome.timing is None:
            return None
        return outcome.timing.min_ns if best else outcome.timing.median_ns


@dataclass
class Section:
    """All cases at one thread count."""

    threads: int
    headline: bool
    noisy: bool
    thread_report: dict[str, Any]
    results: list[CaseResult] = field(default_factory=list)


def run_section(
    threads: int,
    cases: Sequence[Case],
    libraries: dict[str, Library],
    budget: Budget,
    *,
    headline: bool,
) -> Section:
    """Set every library to `threads` threads, then run each case for each library."""
    section = Section(threads, headline, threads > 1, set_threads(threads, libraries))
    for case in cases:
        present = [libraries[name] for name in _RUN_ORDER if name in libraries]
        result = _run_case(case, present, budget)
        section.results.append(result)
        gc.collect()
        _progress(threads, result)
    return section


def _run_case(case: Case, libraries: list[Library], budget: Budget) -> CaseResult:
    """Prepare and check every library, then sample them in alternating rounds."""
    inputs = case.make_inputs(np.random.default_rng(_SEED))
    libraries = [library for library in libraries if library.name in case.statements]
    reference = next(name for name in _REFERENCE_ORDER if name in case.statements)
    errors: dict[str, str] = {}
    samplers: dict[str, Sampler] = {}
    expected: np.ndarray | None = None
    for library in libraries:
        try:
            samplers[library.name], result = _prepare(case, library, inputs, expected, budget)
        except Exception as error:  # any failure is this row's, never the run's
            errors[library.name] = describe_error(error)
            continue
        if library.name == reference:
            expected = result
    for _ in range(_ROUNDS):
        for name, sampler in list(samplers.items()):
            try:
                sampler.run(budget.target_s / _ROUNDS)
            except Exception as error:  # a kernel may fail only on a later call
                errors[name] = describe_error(error)
                del samplers[name]
    outcomes = {
        library.name: Outcome(library.name, error=errors[library.name])
        if library.name in errors
        else Outcome(library.name, timing=samplers[library.name].finish())
        for library in libraries
    }
    return CaseResult(case, outcomes)


def _prepare(
    case: Case,
    library: Library,
    inputs: dict[str, np.ndarray],
    expected: np.ndarray | None,
    budget: Budget,
) -> tuple[Sampler, np.ndarray]:
    """Wrap the inputs, run once (warm-up), check against the reference's result, calibrate."""
    if library.module is None:
        raise ImportError(f"import failed: {library.error}")
    statement = case.statements[library.name]
    namespace: dict[str, Any] = {key: library.wrap(array) for key, array in inputs.items()}
    namespace[library.alias] = library.module
    if case.setup is not None:
        namespace.update(case.setup(library.module, namespace))
    value = eval(compile(case.check or statement, case.name, "eval"), namespace)
    result = np.array(library.to_numpy(value), copy=True)
    if expected is not None:
        _check(result, expected, case)
    return Sampler(statement, namespace, budget), result


def _check(actual: np.ndarray, expected: np.ndarray, case: Case) -> None:
    """Raise if a result differs from the reference's: a wrong kernel is not a fast one."""
    name = "NumPy" if "numpy" in case.statements else "PyTorch"
    if actual.shape != expected.shape:
        raise ValueError(f"wrong result: shape {actual.shape}, {name} gives {expected.shape}")
    if actual.dtype != expected.dtype:
        raise ValueError(f"wrong result: dtype {actual.dtype}, {name} gives {expected.dtype}")
    if not np.allclose(actual, expected, rtol=case.rtol, atol=case.atol):
        error = np.max(np.abs(actual.astype(np.float64) - expected.astype(np.float64)))
        raise ValueError(f"wrong result: max abs error {error:.3g} against {name}")


def _progress(threads: int, result: CaseResult) -> None:
    """One line per case on stderr while the run goes."""
    parts = []
    for name in result.outcomes:
        value = result.value(name)
        parts.append(f"{name} {value:.4g}" if value is not None else f"{name} error")
    line = f"  [{threads}t] {result.case.name:<15} {result.case.unit:<8} " + ", ".join(parts)
    print(line, file=sys.stderr, flush=True)
