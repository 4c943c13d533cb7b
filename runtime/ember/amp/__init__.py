"""`ember.amp`: automatic mixed precision — `autocast` regions and `GradScaler`."""

from __future__ import annotations

from ember.amp.autocast_mode import (
    autocast,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_enabled,
)
from ember.amp.grad_scaler import GradScaler

__all__ = [
    "GradScaler",
    "autocast",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_enabled",
]
