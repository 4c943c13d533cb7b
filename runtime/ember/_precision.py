"""Process-wide numeric policy flags: float32 matmul precision and deterministic algorithms.

These are PyTorch's global switches. Ember's cpu, opencl and numpy kernels compute float32
matmuls in full float32 and are deterministic already, so on them the flags change nothing;
they are stored so that scripts can set and read them, and a device that has reduced-precision
or nondeterministic kernels (cuda: TF32, atomics) is the one that reads them.
"""

from __future__ import annotations

__all__ = [
    "are_deterministic_algorithms_enabled",
    "get_deterministic_debug_mode",
    "get_float32_matmul_precision",
    "is_deterministic_algorithms_warn_only_enabled",
    "is_warn_always_enabled",
    "set_deterministic_debug_mode",
    "set_float32_matmul_precision",
    "set_warn_always",
    "use_deterministic_algorithms",
]

_PRECISIONS = ("highest", "high", "medium")
_matmul_precision = "highest"
_deterministic = False
_deterministic_warn_only = False


def set_float32_matmul_precision(precision: str) -> None:
    """'highest' (full float32, the default), 'high' (TF32 allowed) or 'medium' (bf16 allowed)."""
    global _matmul_precision
    if precision not in _PRECISIONS:
        raise RuntimeError(
            f"set_float32_matmul_precision: expected one of {', '.join(_PRECISIONS)}, "
            f"got {precision!r}"
        )
    _matmul_precision = precision


def get_float32_matmul_precision() -> str:
    """The precision set by `set_float32_matmul_precision` ('highest' unless changed)."""
    return _matmul_precision


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic kernels; every kernel Ember ships on cpu/opencl/numpy already is."""
    global _deterministic, _deterministic_warn_only
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms: expected a bool, got {type(mode).__name__}")
    _deterministic = mode
    _deterministic_warn_only = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether `use_deterministic_algorithms(True)` is in force."""
    return _deterministic


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether deterministic mode only warns (`warn_only=True`)."""
    return _deterministic_warn_only


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """0/'default': off; 1/'warn'; 2/'error' — the same switch as use_deterministic_algorithms."""
    mode = _DEBUG_MODES.get(debug_mode, debug_mode) if isinstance(debug_mode, str) else debug_mode
    if mode not in (0, 1, 2):
        raise RuntimeError(
            "invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
            f"0, 1, 2, but got {debug_mode!r}"
        )
    use_deterministic_algorithms(mode != 0, warn_only=mode == 1)


def get_deterministic_debug_mode() -> int:
    """2 when deterministic algorithms are required, 1 when they only warn, else 0."""
    if not _deterministic:
        return 0
    return 1 if _deterministic_warn_only else 2


_warn_always = False


def set_warn_always(b: bool) -> None:
    """Warn every time rather than once (stored; Ember's warnings use Python's filters)."""
    global _warn_always
    _warn_always = bool(b)


def is_warn_always_enabled() -> bool:
    """Whether `set_warn_always(True)` is in force."""
    return _warn_always
