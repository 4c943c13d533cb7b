"""`ember.set_printoptions`: how tensors print (precision, summarising, line width, notation),
with torch's profiles; `ember._format` reads these options on every repr."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["PRINT_OPTIONS", "set_printoptions"]


@dataclass
class PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTIONS = PrintOptions()

_PROFILES = {
    "default": (4, 1000.0, 3, 80),
    "short": (2, 1000.0, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set printing options, as torch.set_printoptions: a profile ('default', 'short',
    'full') first, then the options given; `sci_mode` None lets the printer choose."""
    options = PRINT_OPTIONS
    if profile is not None and profile in _PROFILES:
        options.precision, options.threshold, options.edgeitems, options.linewidth = _PROFILES[
            profile
        ]
    if precision is not None:
        options.precision = precision
    if threshold is not None:
        options.threshold = threshold
    if edgeitems is not None:
        options.edgeitems = edgeitems
    if linewidth is not None:
        options.linewidth = linewidth
    options.sci_mode = sci_mode
