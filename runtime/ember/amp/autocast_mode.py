"""`ember.autocast`: mixed precision regions (context manager and decorator), as torch.autocast.

The casting itself happens at the ops (ember._autocast); this class opens and closes regions.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar, cast

from ember import _autocast, _device
from ember import _dtype as dtypes
from ember.plugins._manager import MANAGER

__all__ = [
    "autocast",
    "get_autocast_cpu_dtype",
    "get_autocast_dtype",
    "get_autocast_gpu_dtype",
    "is_autocast_available",
    "is_autocast_cpu_enabled",
    "is_autocast_enabled",
]

F = TypeVar("F", bound=Callable[..., Any])

_LOWER_DTYPES = (dtypes.float16, dtypes.bfloat16)


def is_autocast_available(device_type: str) -> bool:
    """Whether `device_type` names an installed Ember device type."""
    MANAGER.ensure_loaded()
    return device_type in MANAGER.device_types


def _reason(device_type: str) -> str:
    info = MANAGER.device_types[device_type]
    return info.reason or "no device found"


class autocast:
    """Run the ops inside in mixed precision: `with ember.autocast("cpu"): ...`.

    matmul/linear/conv/bmm run in `dtype` (default: bfloat16 on cpu, float16 elsewhere),
    the float32-list ops (losses, and on
    non-cpu devices softmax/log_softmax/layer_norm/group_norm) in float32.
    `enabled=False` opens a region that turns autocast off for that device type.
    """

    def __init__(
        self,
        device_type: str,
        dtype: dtypes.dtype | None = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        if not isinstance(device_type, str):
            raise ValueError(
                f"Expected `device_type` of type `str`, got: `{type(device_type).__name__}`"
            )
        if not is_autocast_available(device_type):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'"
            )
        if enabled and _device.device_count(device_type) == 0:
            warnings.warn(
                f"{device_type} is not available ({_reason(device_type)}). Disabling autocast.",
                stacklevel=2,
            )
            enabled = False
        chosen = _autocast.default_dtype(device_type) if dtype is None else dtype
        if enabled and chosen not in _LOWER_DTYPES:
            raise RuntimeError(
                f"In {device_type} autocast, but the target dtype {chosen} is not supported; "
                f"use one of {', '.join(map(str, sorted(set(_LOWER_DTYPES), key=str)))}"
            )
        self.device = device_type
        self.fast_dtype = chosen
        self._enabled = bool(enabled)
        self._cache_enabled = True if cache_enabled is None else bool(cache_enabled)
        self._saved: list[Any] = []

    def __enter__(self) -> autocast:
        self._saved.append(
            _autocast.enter(self.device, self._enabled, self.fast_dtype, self._cache_enabled)
        )
        return self

    def __exit__(self, *exc: object) -> None:
        _autocast.leave(self.device, self._enabled, self._saved.pop())

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return fn(*args, **kwargs)

        return cast(F, run)


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether an enabled autocast region for `device_type` (default 'cuda') is open."""
    region = _autocast.STATE.regions.get("cuda" if device_type is None else device_type)
    return region is not None and region[0]


def get_autocast_dtype(device_type: str) -> dtypes.dtype:
    """The dtype of the open region for `device_type`, else its default."""
    region = _autocast.STATE.regions.get(device_type)
    return region[1] if region is not None else _autocast.default_dtype(device_type)


def is_autocast_cpu_enabled() -> bool:
    """torch's older name for `is_autocast_enabled("cpu")`."""
    _deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def get_autocast_cpu_dtype() -> dtypes.dtype:
    """torch's older name for `get_autocast_dtype("cpu")`."""
    _deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def get_autocast_gpu_dtype() -> dtypes.dtype:
    """torch's older name for `get_autocast_dtype("cuda")`."""
    _deprecated("get_autocast_gpu_dtype", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def _deprecated(name: str, replacement: str) -> None:
    warnings.warn(
        f"ember.{name}() is deprecated. Please use ember.{replacement} instead.",
        DeprecationWarning,
        stacklevel=3,
    )
