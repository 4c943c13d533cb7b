"""The ratio table on stdout and the JSON results file."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

from benchmarks import table
from benchmarks.runner import CaseResult, Section

__all__ = ["format_sections", "section_as_json", "write_results"]

_LIBRARIES: Final = ("ember", "torch", "numpy")
_COLUMNS: Final = (
    ("benchmark", 26, "<"),
    ("unit", 7, "<"),
    ("ember", 9, ">"),
    ("torch", 9, ">"),
    ("numpy", 9, ">"),
    ("vs torch", 9, ">"),
    ("vs numpy", 9, ">"),
    ("target", 14, ">"),
    ("on mins", 8, ">"),
    ("verdict", 7, "<"),
)
LEGEND: Final = "\n".join(
    (
        "vs torch / vs numpy = Ember's speed over the reference's at the same thread count",
        "  (>1: Ember faster); on us/op rows that is their time over Ember's, so 0.50x = twice",
        "  PyTorch's time. best = the faster of PyTorch and NumPy. Figures are medians; GB/s",
        "  counts bytes read + written, GFLOP/s 2*n^3 per matmul; steps/s are training steps",
        "  (forward, loss, backward, optimizer); s rows are whole runs (median over seeds).",
        "on mins = the target's ratio from each library's fastest sample. A verdict marked *",
        "  would differ on minima: load from other processes inflates medians, so trust a",
        "  verdict only when both agree.",
    )
)


def format_sections(sections: Sequence[Section]) -> str:
    """Every section as a fixed-width table, errors in the row they belong to."""
    blocks = []
    for section in sections:
        title = f"== {section.threads} thread{'s' if section.threads > 1 else ''}"
        if section.headline:
            title += " (headline)"
        if section.noisy:
            title += " (NOISY: a shared vCPU; multi-thread figures swing by up to 40x here)"
        lines = [title + " ==", _row(name for name, _, _ in _COLUMNS)]
        lines.extend(_case_line(result) for result in section.results)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _case_line(result: CaseResult) -> str:
    target = result.case.target
    cells = [result.case.label, result.case.unit]
    cells += [_format_value(result, name) for name in _LIBRARIES]
    cells += [table.format_ratio(result.ratio("torch")), table.format_ratio(result.ratio("numpy"))]
    cells += [target.describe() if target else ""]
    cells += [table.format_ratio(result.ratio(target.reference, best=True)) if target else ""]
    cells += [_format_verdict(result)]
    errors = [
        f"{name}: {outcome.error}" for name, outcome in result.outcomes.items() if outcome.error
    ]
    line = _row(cells)
    if errors:
        line += "  " + table.shorten("; ".join(errors))
    return line.rstrip()


def _row(cells: Iterable[str]) -> str:
    return table.row(cells, _COLUMNS)


def _format_value(result: CaseResult, library: str) -> str:
    if library not in result.outcomes:
        return "-"
    return table.format_number(result.value(library))


def _format_verdict(result: CaseResult) -> str:
    verdict = result.verdict()
    if verdict is None:
        return ""
    return verdict if verdict == result.verdict(best=True) else verdict + "*"


def section_as_json(section: Section) -> dict[str, Any]:
    """A section for the results file: every library's timing or error, ratios, verdicts."""
    return {
        "threads": section.threads,
        "headline": section.headline,
        "noisy": section.noisy,
        "thread_counts": section.thread_report,
        "results": [_result_as_json(result) for result in section.results],
    }


def _result_as_json(result: CaseResult) -> dict[str, Any]:
    case = result.case
    libraries: dict[str, Any] = {}
    for name, outcome in result.outcomes.items():
        entry: dict[str, Any] = {"statement": case.statements[name], "error": outcome.error}
        if outcome.timing is not None:
            entry["value"] = result.value(name)
            entry["value_from_min"] = result.value(name, best=True)
            entry.update(outcome.timing.as_json())
        libraries[name] = entry
    target = case.target
    return {
        "benchmark": case.name,
        "label": case.label,
        "unit": case.unit,
        "work_per_call": case.work or None,
        "check": case.check,
        "libraries": libraries,
        "ratios": {ref: result.ratio(ref) for ref in ("torch", "numpy", "best")},
        "target": (
            None
            if target is None
            else {"reference": target.reference, "min_ratio": target.min_ratio}
        ),
        "ratios_from_min": {
            ref: result.ratio(ref, best=True) for ref in ("torch", "numpy", "best")
        },
        "verdict": result.verdict(),
        "verdict_from_min": result.verdict(best=True),
    }


def write_results(document: dict[str, Any], directory: Path, stem: str) -> Path:
    """Write `<stem>.json` and `latest.json` (each atomically); return the first's path."""
    directory.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document, indent=1, sort_keys=False) + "\n"
    path = directory / f"{stem}.json"
    for destination in (path, directory / "latest.json"):
        temporary = destination.with_suffix(".json.tmp")
        temporary.write_text(text)
        os.replace(temporary, destination)
    return path
