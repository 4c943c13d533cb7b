"""The ledger's coverage figures per namespace."""

from __future__ import annotations

from dataclasses import dataclass

from .ledger import IMPLEMENTED, OUT_OF_SCOPE, PLANNED, Ledger


@dataclass(frozen=True)
class Coverage:
    """One namespace's counts (stale names left out)."""

    section: str
    total: int
    implemented: int
    planned: int
    out_of_scope: int

    @property
    def percent(self) -> float:
        """Implemented over the names in scope, in percent (100 when none is in scope)."""
        in_scope = self.total - self.out_of_scope
        return 100.0 * self.implemented / in_scope if in_scope else 100.0


def coverage(ledger: Ledger) -> list[Coverage]:
    """A Coverage per section, then the total over all of them."""
    rows = []
    for section, entries in ledger.items():
        statuses = [entry.status for entry in entries.values() if not entry.stale]
        rows.append(
            Coverage(
                section,
                len(statuses),
                statuses.count(IMPLEMENTED),
                statuses.count(PLANNED),
                statuses.count(OUT_OF_SCOPE),
            )
        )
    total = Coverage(
        "all",
        sum(row.total for row in rows),
        sum(row.implemented for row in rows),
        sum(row.planned for row in rows),
        sum(row.out_of_scope for row in rows),
    )
    return [*rows, total]


def table(rows: list[Coverage]) -> str:
    """The rows as a Markdown table (docs/api-coverage.md carries a copy)."""
    lines = [
        "| namespace | total | implemented | planned | out of scope | coverage in scope |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row.section} | {row.total} | {row.implemented} | {row.planned} | "
            f"{row.out_of_scope} | {row.percent:.1f}% |"
        )
    return "\n".join(lines)
