"""The distributed suite's tables, summary line and JSON."""

from __future__ import annotations

from typing import Any, Final

from benchmarks import table
from benchmarks.bench_distributed import (
    TARGET_RATIO,
    DistributedSuite,
    bandwidth_ratio,
    bandwidth_verdict,
)

__all__ = [
    "DISTRIBUTED_LEGEND",
    "distributed_as_json",
    "distributed_failures",
    "distributed_summary",
    "format_distributed",
]

_BANDWIDTH_COLUMNS: Final = (
    ("size", 8, "<"),
    ("ember ms", 9, ">"),
    ("raw ms", 9, ">"),
    ("ember busbw", 12, ">"),
    ("raw busbw", 10, ">"),
    ("ratio", 7, ">"),
    ("target", 8, ">"),
    ("on mins", 8, ">"),
    ("verdict", 7, "<"),
)
_TRAINING_COLUMNS: Final = (
    ("model", 6, "<"),
    ("setup", 12, "<"),
    ("ember steps/s", 14, ">"),
    ("rank samples/s", 15, ">"),
    ("torch steps/s", 14, ">"),
    ("rank samples/s", 15, ">"),
    ("vs torch", 9, ">"),
)
_LIBRARIES: Final = ("ember", "torch")
DISTRIBUTED_LEGEND: Final = "\n".join(
    (
        "distributed: busbw = bytes / time * 2(n-1)/n in GB/s (NCCL-tests' bus bandwidth); ratio =",
        "  Ember's over raw mpi4py's on the same buffer, each repetition after a barrier and timed",
        "  on the slowest rank, Ember and raw interleaved. Training: the global batch stays 64;",
        "  steps/s of whole steps; rank samples/s = steps/s * rows per rank; torch runs its DDP",
        "  on gloo. hidden = 1 - ((a) - (b)) / (c), clipped to [0, 1]. The ranks share 2 cores.",
    )
)


def format_distributed(suite: DistributedSuite) -> str:
    """The bandwidth table, the overhead breakdown, the training table and overlap lines."""
    if suite.skipped is not None:
        return f"== distributed: skipped ==\n{suite.skipped}"
    lines = [f"== distributed: {suite.ranks} ranks on {_mpi_name(suite.mpi)}, 1 thread per rank =="]
    if suite.bandwidth:
        lines.append(
            "all-reduce, float32 SUM in place: ember.distributed.all_reduce vs "
            "comm.Allreduce(MPI.IN_PLACE, array)"
        )
        lines.append(_row(c for c, _, _ in _BANDWIDTH_COLUMNS))
        lines.extend(_bandwidth_line(entry) for entry in suite.bandwidth)
    if suite.profile:
        lines.append(_profile_line(suite.profile))
    if suite.training:
        lines.append("")
        lines.append("DDP training steps (global batch 64, split across the ranks)")
        lines.append(table.row((c for c, _, _ in _TRAINING_COLUMNS), _TRAINING_COLUMNS))
        lines.extend(_training_lines(suite))
        lines.extend(_overlap_lines(suite))
    for error in suite.errors:
        lines.append(f"ERROR {table.shorten(error)}")
    return "\n".join(lines)


def distributed_summary(suite: DistributedSuite) -> str:
    """One line: the verdict counts (or the skip), and the failed jobs."""
    if suite.skipped is not None:
        return f"targets on distributed: skipped ({suite.skipped})"
    verdicts = [bandwidth_verdict(entry) for entry in suite.bandwidth]
    counts = ", ".join(
        f"{verdicts.count(kind)} {kind}"
        for kind in ("PASS", "MISS", "ERROR", "NO-REF")
        if kind in verdicts
    )
    unsure = sum(bandwidth_verdict(e) != bandwidth_verdict(e, best=True) for e in suite.bandwidth)
    if unsure:
        counts += f" ({unsure} would differ on minima)"
    failed = f"; {len(suite.errors)} job(s) failed" if suite.errors else ""
    return f"targets on distributed: {counts or 'none run'}{failed}"


def distributed_failures(suite: DistributedSuite) -> bool:
    """Whether a target missed or a job failed (for `--strict`)."""
    if suite.skipped is not None:
        return False
    return bool(suite.errors) or any(
        bandwidth_verdict(entry) != "PASS" for entry in suite.bandwidth
    )


def distributed_as_json(suite: DistributedSuite) -> dict[str, Any]:
    """The suite for the results file: the workers' measurements as they reported them."""
    return {
        "skipped": suite.skipped,
        "ranks": suite.ranks,
        "mpi": suite.mpi,
        "duration_s": round(suite.duration_s, 1),
        "target_min_ratio": TARGET_RATIO,
        "bandwidth": [
            {
                **entry,
                "ratio": bandwidth_ratio(entry),
                "ratio_from_min": bandwidth_ratio(entry, best=True),
                "verdict": bandwidth_verdict(entry),
                "verdict_from_min": bandwidth_verdict(entry, best=True),
            }
            for entry in suite.bandwidth
        ],
        "overhead_profile": suite.profile,
        "training": {str(ranks): part for ranks, part in suite.training.items()},
        "errors": suite.errors,
    }


def _bandwidth_line(entry: dict[str, Any]) -> str:
    verdict = bandwidth_verdict(entry)
    if verdict != bandwidth_verdict(entry, best=True):
        verdict = f"{verdict}*"
    cells = [
        f"{entry['bytes'] >> 20} MiB",
        table.format_number(entry["ember"]["median_s"] * 1e3),
        table.format_number(entry["raw"]["median_s"] * 1e3),
        table.format_number(entry["ember"]["busbw_gbs"]),
        table.format_number(entry["raw"]["busbw_gbs"]),
        table.format_ratio(bandwidth_ratio(entry)),
        f">={TARGET_RATIO:.2f}x",
        table.format_ratio(bandwidth_ratio(entry, best=True)),
        verdict or "",
    ]
    line = _row(cells).rstrip()
    errors = [
        f"{side}: {entry[side]['error']}" for side in ("ember", "raw") if entry[side]["error"]
    ]
    return line + ("  " + "; ".join(errors) if errors else "")


def _profile_line(profile: dict[str, Any]) -> str:
    if "error" in profile:
        return f"ember's overhead: not profiled ({profile['error']})"
    us = profile["median_us"]
    asynchronous = profile["async_unchecked_overhead_us"]
    return (
        f"ember's overhead at {profile['bytes'] >> 20} MiB (median us, slowest rank): raw "
        f"Allreduce {us['raw_allreduce']:.0f}, all_reduce {us['all_reduce_checked']:.0f} "
        f"({profile['total_overhead_us']:+.0f}: the agreement check {profile['check_us']:+.0f}, "
        f"of which its raw all-gather {profile['check_collective_us']:+.0f}; the blocking call "
        f"without it {profile['unchecked_blocking_overhead_us']:+.0f}); asynchronous "
        f"group.allreduce {us['group_allreduce_unchecked']:.0f} ({asynchronous:+.0f}; "
        f"a raw Allreduce through a communication thread {profile['thread_handoff_us']:+.0f}, "
        f"a no-op hand-off {us['thread_noop']:.0f})"
    )


def _setups(suite: DistributedSuite) -> list[tuple[int, str, str]]:
    """(world size, label, measurement) per table row under each model."""
    setups = [(1, "1 process", "single"), (1, "DDP 1 rank", "ddp")]
    setups.extend((r, f"DDP {r} ranks", "ddp") for r in sorted(suite.training) if r > 1)
    return setups


def _training_lines(suite: DistributedSuite) -> list[str]:
    lines = []
    for model in ("mlp", "cnn"):
        for ranks, setup, name in _setups(suite):
            cells = [model.upper(), setup]
            rates = []
            for library in _LIBRARIES:
                rate, rows = _rate(suite, ranks, library, model, name)
                rates.append(rate)
                if rate is None:
                    cells.extend((_library_error(suite, ranks, library), ""))
                else:
                    cells.extend((table.format_number(rate), table.format_number(rate * rows)))
            ember_rate, torch_rate = rates
            both = ember_rate is not None and torch_rate is not None
            cells.append(table.format_ratio(ember_rate / torch_rate) if both else "")
            if any(rate is not None for rate in rates):
                lines.append(table.row(cells, _TRAINING_COLUMNS).rstrip())
    return lines


def _rate(
    suite: DistributedSuite, ranks: int, library: str, model: str, name: str
) -> tuple[float | None, int]:
    for row in suite.training.get(ranks, {}).get(library, {}).get("rows", []):
        if row["model"] == model and name in row["steps_per_s"]:
            return float(row["steps_per_s"][name]), int(row["rows_per_rank"])
    return None, 0


def _library_error(suite: DistributedSuite, ranks: int, library: str) -> str:
    error = suite.training.get(ranks, {}).get(library, {}).get("error")
    return "n/a" if error is None else "unavailable"


def _overlap_lines(suite: DistributedSuite) -> list[str]:
    errors = {
        library: part[library]["error"]
        for part in suite.training.values()
        for library in _LIBRARIES
        if "error" in part.get(library, {})
    }
    lines = [f"{name} DDP unavailable: {table.shorten(text)}" for name, text in errors.items()]
    overlaps = [
        _overlap_line(ranks, library, row)
        for ranks, part in sorted(suite.training.items())
        for library in _LIBRARIES
        for row in part.get(library, {}).get("rows", [])
        if "overlap" in row
    ]
    if overlaps:
        lines.append(
            "communication hidden behind backward, ms per step: (a) backward with DDP's "
            "all-reduces, (b) under no_sync(), (c) the same buckets' all-reduces alone"
        )
    return lines + overlaps


def _overlap_line(ranks: int, library: str, row: dict[str, Any]) -> str:
    overlap = row["overlap"]
    ms = overlap["median_ms"]
    buckets = overlap["bucket_elements"]
    return (
        f"  {row['model'].upper()} {library} at {ranks} ranks: (a) {ms['with_allreduce']:.2f}, "
        f"(b) {ms['no_sync']:.2f}, (c) {ms['allreduce_alone']:.2f} -> hidden "
        f"{overlap['hidden_share']:.0%} ({len(buckets)} bucket(s) of "
        f"{', '.join(str(b) for b in buckets)} elements)"
    )


def _mpi_name(version: str | None) -> str:
    if not version:
        return "MPI"
    return " ".join(version.split()[:3])  # "MPICH Version: 5.0.2"


def _row(cells: Any) -> str:
    return table.row(cells, _BANDWIDTH_COLUMNS)
