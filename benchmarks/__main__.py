"""`python -m benchmarks`: Ember, PyTorch and NumPy side by side; JSON under benchmarks/results/.

Five suites run by default: `core` (ops), `training` (autograd, training steps, the
digits demo) and `kernels` (custom-op overhead, plugins/ember-fused's fused kernels), one
table per thread count, then `opencl` (Ember's opencl device next to plain
pyopencl on the same device, and the runtime figures), skipped when that device is missing,
and `distributed` (2-rank MPI jobs: all-reduce bandwidth against raw mpi4py, DDP steps),
skipped when mpi4py or mpiexec is missing.
"""

from __future__ import annotations

import argparse
import faulthandler
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final

from benchmarks.bench_core import CASES, Case
from benchmarks.bench_distributed import CASE_NAMES as DISTRIBUTED_CASES
from benchmarks.bench_distributed import run_distributed_suite
from benchmarks.bench_kernels import KERNEL_CASES, custom_op_overhead
from benchmarks.bench_training import TRAINING_CASES
from benchmarks.bench_transformer import TRANSFORMER_CASES
from benchmarks.distributed_report import (
    DISTRIBUTED_LEGEND,
    distributed_as_json,
    distributed_failures,
    distributed_summary,
    format_distributed,
)
from benchmarks.environment import collect_environment, environment_notes, load_average
from benchmarks.harness import Budget
from benchmarks.libraries import LIBRARY_NAMES, Library, load_libraries, set_threads
from benchmarks.opencl_report import (
    OPENCL_LEGEND,
    format_opencl,
    opencl_as_json,
    opencl_failures,
    opencl_summary,
)
from benchmarks.opencl_suite import OpenCLSuite, case_names, run_opencl_suite
from benchmarks.report import LEGEND, format_sections, section_as_json, write_results
from benchmarks.runner import Section, run_section

RESULTS_DIRECTORY: Final = Path(__file__).resolve().parent / "results"
_SCHEMA_VERSION: Final = 1
SUITES: Final[dict[str, tuple[Case, ...]]] = {
    "core": CASES,
    "training": TRAINING_CASES + TRANSFORMER_CASES,
    "kernels": KERNEL_CASES,
}
# Not a table of `Case`s: its own rows against pyopencl, and figures (opencl_suite.py).
OPENCL: Final = "opencl"
# 2-rank jobs under mpiexec, their own rows against raw mpi4py (bench_distributed.py).
DISTRIBUTED: Final = "distributed"
ALL_SUITES: Final = (*SUITES, OPENCL, DISTRIBUTED)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite, print the table, save the results; 0 unless `--strict` finds a miss."""
    arguments = _parser().parse_args(argv)
    faulthandler.enable()  # a crashing kernel takes the process down; say where it was
    suites = _suites(arguments.suite)
    cases, opencl_only = _select(arguments.only, suites)
    distributed_only = _select_distributed(arguments.only, suites)
    budget = Budget(target_s=arguments.budget)
    if arguments.quick:
        budget = replace(budget, target_s=0.05, min_samples=3, hard_cap_s=1.0)
    started = datetime.now(timezone.utc)
    clock = time.perf_counter()

    libraries = load_libraries(tuple(arguments.libraries.split(",")))
    environment = collect_environment(libraries)
    sections: list[Section] = []
    for threads in arguments.threads if cases else ():
        print(f"running {len(cases)} cases at {threads} thread(s)...", file=sys.stderr)
        sections.append(run_section(threads, cases, libraries, budget, headline=threads == 1))
    opencl = None
    if opencl_only is not None:
        output = None if arguments.no_save else arguments.output_dir
        opencl = _run_opencl(libraries, budget, opencl_only, arguments.quick, output)
    distributed = None
    if distributed_only is not None:
        distributed = run_distributed_suite(quick=arguments.quick, only=distributed_only)

    notes = environment_notes(environment, libraries)
    if sections:
        print(format_sections(sections))
        print("\n" + LEGEND)
    if opencl is not None:
        print(("\n" if sections else "") + format_opencl(opencl))
        if opencl.skipped is None:
            print("\n" + OPENCL_LEGEND)
    if distributed is not None:
        print(("\n" if sections or opencl is not None else "") + format_distributed(distributed))
        if distributed.skipped is None:
            print("\n" + DISTRIBUTED_LEGEND)
    if sections:
        print(_summary(sections))
        for section in sections:
            for line in custom_op_overhead(section.results):
                print(f"{line} at {section.threads} thread(s)")
    if opencl is not None:
        print(opencl_summary(opencl))
    if distributed is not None:
        print(distributed_summary(distributed))
    for note in notes:
        print(f"note: {note}")

    document: dict[str, Any] = {
        "schema": _SCHEMA_VERSION,
        "suite": "+".join(suites),
        "date": started.isoformat(timespec="seconds"),
        "duration_s": round(time.perf_counter() - clock, 1),
        "budget": {"target_s": budget.target_s, "quick": arguments.quick},
        "environment": environment,
        "load_average_end": load_average(),
        "notes": notes,
        "sections": [section_as_json(section) for section in sections],
    }
    if opencl is not None:
        document[OPENCL] = opencl_as_json(opencl)
    if distributed is not None:
        document[DISTRIBUTED] = distributed_as_json(distributed)
    if not arguments.no_save:
        stem = "-".join(suites) + "-" + started.astimezone().strftime("%Y%m%d-%H%M%S")
        path = write_results(document, arguments.output_dir, stem)
        print(f"results: {_display(path)} (and latest.json beside it)")
    if arguments.strict and (
        _headline_failures(sections)
        or (opencl is not None and opencl_failures(opencl))
        or (distributed is not None and distributed_failures(distributed))
    ):
        return 1
    return 0


def _run_opencl(
    libraries: dict[str, Library],
    budget: Budget,
    only: set[str],
    quick: bool,
    output: Path | None,
) -> OpenCLSuite:
    """The opencl suite, with Ember's CPU threads back at one (its small-op reference)."""
    ember = libraries.get("ember")
    set_threads(1, libraries)
    module = ember.module if ember is not None else None
    return run_opencl_suite(module, budget, only=only, quick=quick, figures_directory=output)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--threads",
        type=_thread_counts,
        default=(1, 2),
        help="comma-separated thread counts, one section each (default: 1,2; 1 is the headline)",
    )
    parser.add_argument(
        "--suite",
        default=",".join(ALL_SUITES),
        help=f"comma-separated suites (default: {','.join(ALL_SUITES)})",
    )
    parser.add_argument("--only", default="", help="comma-separated case names (default: all)")
    parser.add_argument(
        "--libraries",
        default=",".join(LIBRARY_NAMES),
        help="comma-separated subset of ember,torch,numpy (default: all three)",
    )
    parser.add_argument(
        "--budget", type=float, default=0.3, help="seconds per measurement (default: 0.3)"
    )
    parser.add_argument("--quick", action="store_true", help="short measurements (smoke run)")
    parser.add_argument("--output-dir", type=Path, default=RESULTS_DIRECTORY)
    parser.add_argument("--no-save", action="store_true", help="print only, write no JSON")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 if a headline target misses or Ember errors",
    )
    return parser


def _thread_counts(text: str) -> tuple[int, ...]:
    counts = tuple(int(part) for part in text.split(",") if part.strip())
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return counts


def _suites(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in ALL_SUITES]
    if unknown or not names:
        raise SystemExit(f"unknown suite(s) {', '.join(unknown)}; known: {', '.join(ALL_SUITES)}")
    return names


def _select(only: str, suites: tuple[str, ...]) -> tuple[tuple[Case, ...], set[str] | None]:
    """The `Case`s to run, and the opencl suite's selection (None: do not run it)."""
    available = tuple(case for suite in suites for case in SUITES.get(suite, ()))
    opencl_names = set(case_names()) if OPENCL in suites else set()
    names = {name.strip() for name in only.split(",") if name.strip()}
    distributed_names = set(DISTRIBUTED_CASES) if DISTRIBUTED in suites else set()
    unknown = names - {case.name for case in available} - opencl_names - distributed_names
    if unknown:
        known = ", ".join(
            [case.name for case in available] + sorted(opencl_names) + sorted(distributed_names)
        )
        raise SystemExit(f"unknown case(s) {', '.join(sorted(unknown))}; known: {known}")
    cases = tuple(case for case in available if not names or case.name in names)
    opencl_only = names & opencl_names
    run_opencl = OPENCL in suites and (not names or bool(opencl_only))
    return cases, (opencl_only if run_opencl else None)


def _select_distributed(only: str, suites: tuple[str, ...]) -> set[str] | None:
    """The distributed suite's selection (empty: all of it; None: do not run it)."""
    if DISTRIBUTED not in suites:
        return None
    names = {name.strip() for name in only.split(",") if name.strip()}
    selected = names & set(DISTRIBUTED_CASES)
    return selected if not names or selected else None


def _summary(sections: Sequence[Section]) -> str:
    lines = []
    for section in sections:
        judged = [result for result in section.results if result.verdict()]
        verdicts = [result.verdict() for result in judged]
        counts = ", ".join(
            f"{verdicts.count(kind)} {kind}"
            for kind in ("PASS", "MISS", "ERROR", "NO-REF")
            if kind in verdicts
        )
        unsure = sum(result.verdict() != result.verdict(best=True) for result in judged)
        if unsure:
            counts += f" ({unsure} would differ on minima)"
        scope = "headline" if section.headline else "noisy, informational"
        lines.append(f"targets at {section.threads} thread(s) ({scope}): {counts or 'none run'}")
    return "\n".join(lines)


def _headline_failures(sections: Sequence[Section]) -> bool:
    return any(
        result.verdict() not in (None, "PASS")
        for section in sections
        if section.headline
        for result in section.results
    )


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


if __name__ == "__main__":
    raise SystemExit(main())
