"""Anomaly detection: forward stack traces on nodes, NaN checks on backward outputs.

Global, not thread-local, as in PyTorch: the flag is read once per node created and once
per node run, so leaving it off costs one attribute read.
"""

from __future__ import annotations

import functools
import traceback
import warnings
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, TypeVar

from ember import _upper
from ember._tensor import Tensor

__all__ = [
    "detect_anomaly",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "set_detect_anomaly",
]

F = TypeVar("F", bound=Callable[..., Any])


class _Anomaly:
    """The process-wide anomaly-mode flags."""

    __slots__ = ("check_nan", "enabled")

    def __init__(self) -> None:
        self.enabled = False
        self.check_nan = True


ANOMALY = _Anomaly()


def forward_trace() -> list[str]:
    """The stack of the op being recorded, without autograd's own frames."""
    frames = traceback.format_stack()
    while frames and "/ember/autograd/" in frames[-1]:
        frames.pop()
    return frames


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return ANOMALY.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks backward outputs for NaN."""
    return ANOMALY.check_nan


class detect_anomaly:
    """Context manager (or decorator) that turns anomaly detection on for its block."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self._saved: list[tuple[bool, bool]] = []
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self._saved.append((ANOMALY.enabled, ANOMALY.check_nan))
        ANOMALY.enabled, ANOMALY.check_nan = True, self.check_nan

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        ANOMALY.enabled, ANOMALY.check_nan = self._saved.pop()

    def __call__(self, fn: F) -> F:
        check_nan = self.check_nan

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            previous = (ANOMALY.enabled, ANOMALY.check_nan)
            ANOMALY.enabled, ANOMALY.check_nan = True, check_nan
            try:
                return fn(*args, **kwargs)
            finally:
                ANOMALY.enabled, ANOMALY.check_nan = previous

        return wrapper  # type: ignore[return-value]


class set_detect_anomaly:
    """Turn anomaly detection on or off: at once as a call, or for a `with` block."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._previous = (ANOMALY.enabled, ANOMALY.check_nan)
        ANOMALY.enabled, ANOMALY.check_nan = bool(mode), check_nan

    def __enter__(self) -> None:
        pass

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        ANOMALY.enabled, ANOMALY.check_nan = self._previous


def report_error(node: Any) -> None:
    """Warn with the forward trace of `node`, whose backward just raised (anomaly mode)."""
    trace = "".join(
        node.trace or ["  (no forward trace: the node was created outside anomaly mode)\n"]
    )
    warnings.warn(
        f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
        f"{trace}",
        stacklevel=3,
    )


def check_nan(node: Any, grads: Sequence[Any]) -> None:
    """Raise if a floating-point gradient that `node` returned holds a NaN."""
    ops = _upper.ops
    for i, grad in enumerate(grads):
        floating = isinstance(grad, Tensor) and grad._dtype.is_floating_point and grad.numel()
        if floating and ops.reduction.any(ops.elementwise.ne(grad, grad)).item():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
