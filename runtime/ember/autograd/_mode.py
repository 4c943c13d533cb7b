"""Grad mode: whether ops record the graph (thread-local, like PyTorch)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

__all__ = [
    "enable_grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
]

F = TypeVar("F", bound=Callable[..., Any])


class _State(threading.local):
    enabled = True
    inference = False


STATE = _State()


def is_grad_enabled() -> bool:
    """Whether ops on tensors that require grad record the graph in this thread."""
    return STATE.enabled


def is_inference_mode_enabled() -> bool:
    return STATE.inference


class _GradModeContext:
    """A context manager that is also a decorator, like torch.no_grad."""

    _target: bool = True

    def __init__(self) -> None:
        self._saved: list[tuple[bool, bool]] = []

    def _enter_state(self) -> None:
        STATE.enabled = self._target

    def __enter__(self) -> None:
        self._saved.append((STATE.enabled, STATE.inference))
        self._enter_state()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        STATE.enabled, STATE.inference = self._saved.pop()

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with type(self)():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class no_grad(_GradModeContext):
    """Disable graph recording (context manager or decorator)."""

    _target = False


class enable_grad(_GradModeContext):
    """Enable graph recording inside a no_grad region."""

    _target = True


class inference_mode(_GradModeContext):
    """no_grad for inference; `inference_mode(False)` is a no-op region."""

    def __init__(self, mode: bool = True) -> None:
        super().__init__()
        self._mode = mode

    def _enter_state(self) -> None:
        if self._mode:
            STATE.enabled = False
            STATE.inference = True

    def __call__(self, fn: F) -> F:
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(mode):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class set_grad_enabled(_GradModeContext):
    """Set grad mode: as a function call, or for a `with` block."""

    def __init__(self, mode: bool) -> None:
        super().__init__()
        self._previous = STATE.enabled
        self._target = bool(mode)
        STATE.enabled = self._target  # the function form takes effect immediately

    def __enter__(self) -> None:
        self._saved.append((self._previous, STATE.inference))
        STATE.enabled = self._target
