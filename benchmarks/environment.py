"""What the figures depend on: versions, CPU, thread pools and the variables that steer them."""

from __future__ import annotations

import functools
import os
import platform
import sys
from pathlib import Path
from typing import Any, Final

from benchmarks.libraries import Library

__all__ = ["collect_environment", "environment_notes", "load_average"]

# Variables that change which kernels or how many threads the libraries use.
_VARIABLE_PREFIXES: Final = ("OPENBLAS_", "GOTO", "OMP_", "GOMP_", "KMP_", "MKL_", "EMBER_")
_VARIABLE_NAMES: Final = ("NUMPY_MADVISE_HUGEPAGE", "ATEN_CPU_CAPABILITY", "MALLOC_ARENA_MAX")
_SLOWING_VARIABLES: Final = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
_BUSY_LOAD: Final = 0.5
_FLAGS_OF_INTEREST: Final = ("avx2", "fma", "avx512f", "avx512_bf16", "amx_tile", "neon")


def collect_environment(libraries: dict[str, Library]) -> dict[str, Any]:
    """A JSON-ready description of the machine and the libraries as this run saw them."""
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_model": _cpu_field("model name") or platform.processor() or "unknown",
        "cpu_flags": _cpu_flags(),
        "logical_cpus": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "load_average": load_average(),
        "transparent_hugepage": _read_first_line("/sys/kernel/mm/transparent_hugepage/enabled"),
        "versions": {name: library.version for name, library in libraries.items()},
        "import_errors": {
            name: library.error for name, library in libraries.items() if library.error
        },
        "ember_plugins": _ember_plugins(libraries.get("ember")),
        "variables": {
            key: value
            for key, value in sorted(os.environ.items())
            if key.startswith(_VARIABLE_PREFIXES) or key in _VARIABLE_NAMES
        },
    }


def environment_notes(environment: dict[str, Any], libraries: dict[str, Library]) -> list[str]:
    """Caveats worth printing under the table."""
    notes = []
    variables = environment["variables"]
    for key in _SLOWING_VARIABLES:
        if key in variables:
            notes.append(
                f"{key}={variables[key]} is set: it overrides OpenBLAS's tuning for this CPU "
                "and can slow NumPy's (and Ember's) BLAS; left as found."
            )
    load = environment["load_average"]
    if load is not None and load[0] >= _BUSY_LOAD:
        notes.append(
            f"load average {load[0]:.2f} at the start: other processes compete for the CPUs, "
            "so every figure is noisier than usual (compare the medians with 'on mins')."
        )
    for library in libraries.values():
        notes.extend(f"{library.name}: {note}" for note in library.notes)
        if library.error:
            notes.append(f"{library.name} failed to import: {library.error}")
    return notes


def _ember_plugins(library: Library | None) -> list[dict[str, Any]]:
    if library is None or library.module is None:
        return []
    try:
        statuses = library.module.plugins.status()
    except Exception:  # the import notes already say why
        return []
    fields = ("name", "distribution", "version", "status", "error", "device_types")
    return [{key: getattr(status, key, None) for key in fields} for status in statuses]


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where the OS has none)."""
    try:
        return [round(load, 2) for load in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _cpu_field(name: str) -> str | None:
    for line in _cpuinfo_lines():
        key, _, value = line.partition(":")
        if key.strip() == name:
            return value.strip()
    return None


def _cpu_flags() -> list[str]:
    flags = set((_cpu_field("flags") or _cpu_field("Features") or "").split())
    return [flag for flag in _FLAGS_OF_INTEREST if flag in flags]


@functools.cache
def _cpuinfo_lines() -> tuple[str, ...]:
    try:
        return tuple(Path("/proc/cpuinfo").read_text().splitlines())
    except OSError:
        return ()


def _read_first_line(path: str) -> str | None:
    try:
        return Path(path).read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
