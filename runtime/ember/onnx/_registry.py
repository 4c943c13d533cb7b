"""Converters by the Ember function they stand for, found again from a running frame.

A frame shows its code object, not its function, and several Ember functions share one
code object (the unary ops come from one factory; autocast wraps ops in one wrapper), so a
function is known by its code plus the values of its closure cells. Wrapped functions are
registered as what they wrap: the wrapper is looked through and the inner call recorded.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import CodeType, FrameType
from typing import Any

__all__ = ["CONVERTERS", "Converter", "converter_of", "converts"]

Converter = Callable[..., None]
#: code object -> [(ids of the closure cells' values, converter)]
CONVERTERS: dict[CodeType, list[tuple[tuple[int, ...], Converter]]] = {}


def converts(*functions: Any) -> Callable[[Converter], Converter]:
    """Register the decorated converter for `functions`."""

    def decorate(convert: Converter) -> Converter:
        for fn in functions:
            target = inspect.unwrap(fn)
            cells = tuple(id(c.cell_contents) for c in target.__closure__ or ())
            CONVERTERS.setdefault(target.__code__, []).append((cells, convert))
        return convert

    return decorate


def converter_of(frame: FrameType) -> Converter | None:
    """The converter of the function running in `frame`, if it has one."""
    entries = CONVERTERS.get(frame.f_code)
    if entries is None:
        return None
    if len(entries) == 1 and not entries[0][0]:
        return entries[0][1]
    local = frame.f_locals
    cells = tuple(id(local.get(name)) for name in frame.f_code.co_freevars)
    for key, convert in entries:
        if key == cells:
            return convert
    return None
