"""The device-named aliases (`ember.cuda.amp.autocast`, `ember.cpu.amp.autocast`, ...),
which torch keeps with a FutureWarning pointing at `torch.amp`."""

from __future__ import annotations

import warnings
from typing import Any

from ember.amp.autocast_mode import autocast as _autocast
from ember.amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["autocast_for", "grad_scaler_for"]


def _warn(name: str, device_type: str) -> None:
    warnings.warn(
        f"`ember.{device_type}.amp.{name}(args...)` is deprecated. "
        f"Please use `ember.amp.{name}('{device_type}', args...)` instead.",
        FutureWarning,
        stacklevel=3,
    )


def autocast_for(device_type: str) -> type[_autocast]:
    """An autocast subclass bound to `device_type` that warns as torch's alias does."""

    class autocast(_autocast):
        def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True):
            _warn("autocast", device_type)
            super().__init__(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    autocast.__qualname__ = f"{device_type}.amp.autocast"
    return autocast


def grad_scaler_for(device_type: str) -> type[_GradScaler]:
    """A GradScaler subclass bound to `device_type` that warns as torch's alias does."""

    class GradScaler(_GradScaler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            _warn("GradScaler", device_type)
            super().__init__(device_type, *args, **kwargs)

    GradScaler.__qualname__ = f"{device_type}.amp.GradScaler"
    return GradScaler
