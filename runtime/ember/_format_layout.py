"""PyTorch's tensor printer (torch/_tensor_str.py), on a NumPy array of the values: one
element width for the whole tensor, torch's choice of int/fixed/scientific notation, line
wrapping at `linewidth` and summarising with `...` past `threshold` elements. Options come
from `ember.set_printoptions`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember._printoptions import PRINT_OPTIONS

__all__ = ["add_suffixes", "tensor_body"]


class _Formatter:
    """torch's _Formatter: the notation and width, chosen from (summarised) values."""

    def __init__(self, values: np.ndarray) -> None:
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not self.floating:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(f"{value}"))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if finite.size == 0:
            return
        magnitude = np.abs(finite)
        smallest, largest = float(magnitude.min()), float(magnitude.max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        chosen = PRINT_OPTIONS.sci_mode
        self.sci_mode = (
            largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
            if chosen is None
            else bool(chosen)
        )
        precision = PRINT_OPTIONS.precision
        for value in finite.tolist():
            if self.sci_mode:
                width = len(f"{value:.{precision}e}")
            elif self.int_mode:
                width = len(f"{value:.0f}") + 1
            else:
                width = len(f"{value:.{precision}f}")
            self.max_width = max(self.max_width, width)

    def format(self, value: Any) -> str:
        precision = PRINT_OPTIONS.precision
        if self.floating:
            value = float(value)
            if self.sci_mode:
                text = f"{value:{self.max_width}.{precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{precision}f}"
        else:
            text = f"{value}"
        return (self.max_width - len(text)) * " " + text


def _summarized(values: np.ndarray) -> np.ndarray:
    edge = PRINT_OPTIONS.edgeitems
    if values.ndim == 0:
        return values
    if values.ndim == 1:
        if values.shape[0] > 2 * edge:
            return np.concatenate((values[:edge], values[-edge:]))
        return values
    if not edge:
        return np.empty([0] * values.ndim, dtype=values.dtype)
    rows = range(values.shape[0])
    if values.shape[0] > 2 * edge:
        rows = [*range(edge), *range(values.shape[0] - edge, values.shape[0])]  # type: ignore[assignment]
    return np.stack([_summarized(values[i]) for i in rows])


def _vector(values: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    per_line = max(1, math.floor((PRINT_OPTIONS.linewidth - indent) / (formatter.max_width + 2)))
    edge = PRINT_OPTIONS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and values.shape[0] > 2 * edge:
        data = [formatter.format(v) for v in values[:edge].tolist()]
        data += [" ..."] + [formatter.format(v) for v in values[-edge:].tolist()]
    else:
        data = [formatter.format(v) for v in values.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(values: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    if values.ndim == 0:
        return formatter.format(values.item())
    if values.ndim == 1:
        return _vector(values, indent, summarize, formatter)
    edge = PRINT_OPTIONS.edgeitems
    count = values.shape[0]
    if summarize and count > 2 * edge:
        slices = [_nested(values[i], indent + 1, summarize, formatter) for i in range(edge)]
        slices.append("...")
        slices += [
            _nested(values[i], indent + 1, summarize, formatter) for i in range(count - edge, count)
        ]
    else:
        slices = [_nested(values[i], indent + 1, summarize, formatter) for i in range(count)]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def tensor_body(values: np.ndarray, indent: int) -> str:
    """The bracketed values, laid out as torch's _tensor_str(indent)."""
    if values.size == 0:
        return "[]"
    summarize = values.size > PRINT_OPTIONS.threshold
    formatter = _Formatter(_summarized(values) if summarize else values)
    return _nested(values, indent, summarize, formatter)


def add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """torch's _add_suffixes: each suffix after ', ', or on a new line when it would pass
    the line width."""
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > PRINT_OPTIONS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    parts.append(")")
    return "".join(parts)
