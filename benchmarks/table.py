"""Plain-text table cells shared by every suite's report: columns, numbers, ratios."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

__all__ = ["Column", "format_number", "format_ratio", "row", "shorten"]

#: (heading, width, alignment: "<" or ">")
Column = tuple[str, int, str]
ERROR_WIDTH: Final = 100


def row(cells: Iterable[str], columns: Sequence[Column]) -> str:
    """One line of cells padded to their columns."""
    return " ".join(
        f"{cell:{align}{width}}" for cell, (_, width, align) in zip(cells, columns, strict=True)
    )


def format_number(value: float | None) -> str:
    """A measurement with three significant figures or so; "error" when there is none."""
    if value is None:
        return "error"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}" if value >= 1 else f"{value:.3f}"


def format_ratio(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.2f}x"


def shorten(text: str, width: int = ERROR_WIDTH) -> str:
    """`text` cut to `width` characters, with an ellipsis when cut."""
    return text if len(text) <= width else text[: width - 3] + "..."
