"""The opencl suite's table, figure lines and JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from benchmarks import table
from benchmarks.opencl_runner import RowResult
from benchmarks.opencl_suite import FigureResult, OpenCLSuite

__all__ = ["OPENCL_LEGEND", "format_opencl", "opencl_as_json", "opencl_failures", "opencl_summary"]

_COLUMNS: Final = (
    ("benchmark", 18, "<"),
    ("ember runs", 20, "<"),
    ("unit", 6, "<"),
    ("ember", 8, ">"),
    ("reference", 22, "<"),
    ("ref", 8, ">"),
    ("ratio", 8, ">"),
    ("target", 8, ">"),
    ("on mins", 8, ">"),
    ("verdict", 7, "<"),
)
OPENCL_LEGEND: Final = "\n".join(
    (
        "opencl: ratio = Ember's speed over the reference's on the same device, in one run",
        "  (>1: Ember faster; on us/op rows the reference's time over Ember's). Device work is",
        "  synchronized around each timed loop, except 'enqueue': the host's time per op while",
        "  it runs ahead of the device. PASS/MISS compare the median ratio with the target;",
        "  * = the verdict on the fastest samples would be the other one (a busy machine).",
    )
)


def format_opencl(suite: OpenCLSuite) -> str:
    """The rows as a table, then one block per figure; or the reason for the skip."""
    if suite.skipped is not None:
        return f"== opencl: skipped ==\n{suite.skipped}"
    lines = [
        f"== opencl: {suite.device}; Ember vs plain pyopencl ==",
        _row(c for c, _, _ in _COLUMNS),
    ]
    lines.extend(_row_line(result) for result in suite.rows)
    for figure in suite.figures:
        lines.append("")
        lines.extend(_figure_lines(figure))
    return "\n".join(lines)


def opencl_summary(suite: OpenCLSuite) -> str:
    """One line: the verdict counts (or the skip)."""
    if suite.skipped is not None:
        return "targets on opencl: skipped (device unavailable)"
    verdicts = [result.verdict() for result in suite.rows if result.verdict()]
    counts = ", ".join(
        f"{verdicts.count(kind)} {kind}"
        for kind in ("PASS", "MISS", "ERROR", "NO-REF")
        if kind in verdicts
    )
    unsure = sum(r.verdict() != r.verdict(best=True) for r in suite.rows if r.verdict())
    if unsure:
        counts += f" ({unsure} would differ on minima)"
    failed = [figure.name for figure in suite.figures if figure.error]
    figures = f"; figure(s) failed: {', '.join(failed)}" if failed else ""
    return f"targets on opencl: {counts or 'none run'}{figures}"


def opencl_failures(suite: OpenCLSuite) -> bool:
    """Whether a target missed, Ember errored or a figure failed (for `--strict`)."""
    return any(r.verdict() not in (None, "PASS") for r in suite.rows) or any(
        figure.error for figure in suite.figures
    )


def _row_line(result: RowResult) -> str:
    minimum = result.row.min_ratio
    cells = [
        result.row.label,
        result.measured.label,
        result.group.unit,
        table.format_number(result.value(0)),
        result.reference.label,
        table.format_number(result.value(1)),
        table.format_ratio(result.ratio()),
        "" if minimum is None else f">={minimum:.2f}x",
        "" if minimum is None else table.format_ratio(result.ratio(best=True)),
        _format_verdict(result),
    ]
    line = _row(cells).rstrip()
    errors = [
        f"{entry.label}: {outcome.error}" for entry, outcome in result.sides() if outcome.error
    ]
    if errors:
        text = "; ".join(errors)
        line += "  " + table.shorten(text)
    return line


def _figure_lines(figure: FigureResult) -> list[str]:
    where = f" -> {_display(figure.path)}" if figure.path else ""
    if figure.error:
        return [f"figure {figure.name}: ERROR {figure.error}"]
    if figure.name == "timeline":
        s = figure.summary
        return [
            f"figure timeline{where}",
            f"  {s['steps']} steps of an {s['model']}: {s['kernels']} kernels and "
            f"{s['host_copies']} host copies ({s['host_reads']} blocking reads, "
            f"{s['host_read_wait_ms']:.1f} ms waiting); the host's last enqueue at "
            f"{s['host_enqueue_done_ms']:.1f} ms, the device done at {s['device_done_ms']:.1f} ms "
            f"(host ahead by {s['host_ahead_ms']:.1f} ms, up to {s['max_in_flight']} commands in "
            f"flight; clocks aligned within {s['alignment_error_ms']:.3f} ms)",
        ]
    lines = [
        f"figure allocator{where} (median of {figure.summary[0]['rounds']} round(s))",
        f"  {'caching':<8} {'iter 1 ms':>10} {'median ms, iters 2+':>20} "
        f"{'raw allocs iter 1':>18} {'raw allocs iters 2+':>20}",
    ]
    for run in figure.summary:
        lines.append(
            f"  {'on' if run['caching'] else 'off':<8} {run['first_ms']:>10.2f} "
            f"{run['median_after_first_ms']:>20.2f} {run['raw_allocations_first']:>18} "
            f"{run['raw_allocations_after_first']:>20}"
        )
    return lines


def opencl_as_json(suite: OpenCLSuite) -> dict[str, Any]:
    """The suite for the results file."""
    return {
        "device": suite.device,
        "skipped": suite.skipped,
        "results": [_row_as_json(result) for result in suite.rows],
        "figures": {
            figure.name: {
                "png": _display(figure.path) if figure.path else None,
                "error": figure.error,
                "data": figure.summary,
            }
            for figure in suite.figures
        },
    }


def _row_as_json(result: RowResult) -> dict[str, Any]:
    sides = {}
    for which, (entry, outcome) in enumerate(result.sides()):
        side: dict[str, Any] = {
            "label": entry.label,
            "side": entry.side,
            "statement": entry.statement,
            "synchronized": entry.synchronized,
            "error": outcome.error,
        }
        if outcome.timing is not None:
            side["value"] = result.value(which)
            side["value_from_min"] = result.value(which, best=True)
            side.update(outcome.timing.as_json())
        sides["ember" if which == 0 else "reference"] = side
    return {
        "benchmark": result.row.name,
        "label": result.row.label,
        "group": result.group.name,
        "unit": result.group.unit,
        "work_per_call": result.group.work or None,
        **sides,
        "ratio": result.ratio(),
        "ratio_from_min": result.ratio(best=True),
        "target_min_ratio": result.row.min_ratio,
        "verdict": result.verdict(),
        "verdict_from_min": result.verdict(best=True),
    }


def _row(cells: Any) -> str:
    return table.row(cells, _COLUMNS)


def _format_verdict(result: RowResult) -> str:
    verdict = result.verdict()
    if verdict is None:
        return ""
    return verdict if verdict == result.verdict(best=True) else verdict + "*"


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
