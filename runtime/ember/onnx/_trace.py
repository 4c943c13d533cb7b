"""Tracing one forward pass: which Ember ops ran, on what, giving what.

The trace watches Python calls (`sys.setprofile`, for the duration of the forward only):
every call of a function that has an ONNX converter is recorded with its bound arguments
and its result, and what it calls inside is not (the converter stands for all of it). A
function without a converter is looked through, so a composite such as
`multi_head_attention_forward` is exported as the converted ops it is made of. A tensor
returned by an Ember op that is neither converted nor made of converted ops is marked, and
exporting a graph that uses it raises `UnsupportedOperatorError` naming the op.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

from ember._tensor import Tensor

__all__ = ["Record", "Trace", "trace"]

_OP_MODULES = ("ember._ops", "ember.nn.functional")


@dataclass
class Record:
    """One converted call: its converter, its bound arguments and its result."""

    convert: Callable[..., None]
    name: str
    args: dict[str, Any]
    result: Any


@dataclass
class Trace:
    records: list[Record]
    #: id(tensor) -> the op (module.function) that made it without a converter
    unconverted: dict[int, str]
    #: id(tensor) -> (how many records came before, the op) for an unconverted op that
    #: wrote into the tensor: a converted op after that point cannot use it
    mutated: dict[int, tuple[int, str]]
    #: the tensors of both, kept alive so that no id is reused during the export
    keep: list[Any]


def _tensors(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    return []


def _parameters(frame: FrameType) -> list[Any]:
    """The values of the running function's parameters (not its other locals)."""
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    local = frame.f_locals
    return [local.get(name) for name in code.co_varnames[:count]]


def trace(
    run: Callable[[], Any], converter_of: Callable[[FrameType], Any], known: list[Tensor]
) -> tuple[Any, Trace]:
    """Run `run()` recording the converted calls; return its result and the trace.

    `known`: the inputs, parameters and buffers, which ops may hand back unchanged.
    """
    records: list[Record] = []
    unconverted: dict[int, str] = {}
    keep: list[Any] = []
    produced: set[int] = {id(t) for t in known}
    open_frame: list[tuple[FrameType, Callable[..., None], dict[str, Any]]] = []
    mutated: dict[int, tuple[int, str]] = {}
    versions: dict[FrameType, list[tuple[Tensor, int]]] = {}

    def watch(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            if not open_frame:
                convert = converter_of(frame)
                if convert is not None:
                    open_frame.append((frame, convert, dict(frame.f_locals)))
                elif str(frame.f_globals.get("__name__", "")).startswith(_OP_MODULES):
                    # An op without a converter may write into its arguments: watch them.
                    seen = _tensors(_parameters(frame))
                    if seen:
                        versions[frame] = [(t, t._storage.version) for t in seen]
        elif event == "return":
            if open_frame:
                if frame is open_frame[-1][0]:
                    _, convert, args = open_frame.pop()
                    records.append(Record(convert, frame.f_code.co_name, args, arg))
                    made = _tensors(arg)
                    produced.update(id(t) for t in made)
                    keep.append((args, arg))
                return
            module = frame.f_globals.get("__name__", "")
            for t, version in versions.pop(frame, ()):
                if t._storage.version != version:
                    mutated[id(t)] = (len(records), f"{module}.{frame.f_code.co_name}")
                    keep.append(t)
            if isinstance(module, str) and module.startswith(_OP_MODULES):
                passed = {id(t) for t in _tensors(_parameters(frame))}
                for t in _tensors(arg):
                    if id(t) not in produced and id(t) not in unconverted and id(t) not in passed:
                        unconverted[id(t)] = f"{module}.{frame.f_code.co_name}"
                        keep.append(t)

    previous = sys.getprofile()
    sys.setprofile(watch)
    try:
        result = run()
    finally:
        sys.setprofile(previous)
    return result, Trace(records, unconverted, mutated, keep)
